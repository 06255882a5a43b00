/* Right pane: the selected session's actions, NEWEST AT THE TOP (the engine's order; older
 * ones are further down, as `paddock ls` and the API page them). When the newest row is
 * selected the selection follows new actions; otherwise it stays pinned on its action id. */
#include "common/timeconv.h"
#include "ui/ui_internal.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

enum {
    COL_ID,
    COL_TIME,
    COL_KIND,
    COL_SUMMARY,
    COL_RISK,
    COL_APPROVAL,
    COL_STATE,
    COL_EXIT,
    COL_MS
};

static const struct list_column view_actions_columns[] = {
    /* the id `:approve`, `paddock show` and the approvals queue name an action by */
    [COL_ID] = {.title = "ID", .width = 5, .prio = 85, .right = true},
    [COL_TIME] = {.title = "TIME", .width = 8, .prio = 60},
    [COL_KIND] = {.title = "KIND", .width = 5, .prio = 20},
    [COL_SUMMARY] = {.title = "SUMMARY", .width = 12, .prio = 100, .flex = true},
    [COL_RISK] = {.title = "RISK", .width = 6, .prio = 75},
    [COL_APPROVAL] = {.title = "APPROVAL", .width = 8, .prio = 70},
    [COL_STATE] = {.title = "STATE", .width = 8, .prio = 90},
    [COL_EXIT] = {.title = "EXIT", .width = 4, .prio = 80, .right = true},
    [COL_MS] = {.title = "MS", .width = 8, .prio = 40, .right = true},
};

static const struct model_session *view_actions_session(const struct ui *ui)
{
    ssize_t at = model_find_session_of(&ui->model, ui->sel_engine, ui->sel_session);
    return at >= 0 ? &ui->model.sessions[at] : NULL;
}

static size_t view_actions_count(const struct ui *ui)
{
    /* Only the actions of the session shown (a fetch may have failed). */
    if (!ui->sel_session || !ui->model.actions_for ||
        strcmp(ui->sel_session, ui->model.actions_for) != 0)
        return 0;
    return ui->model.nactions;
}

static void view_actions_title(const struct ui *ui, char *buf, size_t sz)
{
    const struct model_session *s = view_actions_session(ui);
    if (!s) {
        snprintf(buf, sz, "Actions");
        return;
    }
    size_t n = view_actions_count(ui);
    snprintf(buf, sz, "Actions %s %s (%zu%s, newest first)", draw_glyph(ui, "\xC2\xB7", "-"),
             s->name && *s->name ? s->name : s->id, n, n >= MODEL_ACTIONS_LIMIT ? "+" : "");
}

static void view_actions_time(double t, char *buf, size_t sz)
{
    struct tm tm;
    if (timeconv_to_local(t, &tm) < 0 || strftime(buf, sz, "%H:%M:%S", &tm) == 0)
        snprintf(buf, sz, "-");
}

static void view_actions_cell(const struct ui *ui, size_t row, int column, char *buf, size_t sz,
                              enum ui_color *color)
{
    const struct model_action *a = &ui->model.actions[row];
    switch (column) {
    case COL_ID:
        snprintf(buf, sz, "%lld", a->id);
        *color = UI_C_DIM;
        break;
    case COL_TIME:
        view_actions_time(a->started_at > 0 ? a->started_at : a->created_at, buf, sz);
        *color = UI_C_DIM;
        break;
    case COL_KIND:
        snprintf(buf, sz, "%s", a->kind ? a->kind : "?");
        *color = UI_C_INFO;
        break;
    case COL_SUMMARY:
        snprintf(buf, sz, "%s", a->summary ? a->summary : "");
        break;
    case COL_RISK:
        snprintf(buf, sz, "%s", a->risk ? a->risk : "-");
        *color = theme_risk_color(a->risk);
        break;
    case COL_APPROVAL: /* "none": nobody was asked; a rule's decision names the rule */
        if (a->rule_id > 0)
            snprintf(buf, sz, "rule %lld", a->rule_id);
        else
            snprintf(buf, sz, "%s",
                     a->approval && strcmp(a->approval, "none") != 0 ? a->approval : "-");
        *color = theme_state_color(a->approval);
        break;
    case COL_STATE:
        snprintf(buf, sz, "%s", a->state ? a->state : "?");
        *color = theme_state_color(a->state);
        break;
    case COL_EXIT:
        if (a->has_exit) {
            snprintf(buf, sz, "%d", a->exit_code);
            *color = a->exit_code == 0 ? UI_C_OK : UI_C_BAD;
        } else {
            snprintf(buf, sz, "-");
            *color = UI_C_DIM;
        }
        break;
    case COL_MS:
        if (!a->has_duration)
            snprintf(buf, sz, "-");
        else if (a->duration_ms < 100)
            snprintf(buf, sz, "%.2f", a->duration_ms);
        else if (a->duration_ms < 100000)
            snprintf(buf, sz, "%.0f", a->duration_ms);
        else
            snprintf(buf, sz, "%.0fs", a->duration_ms / 1000);
        *color = UI_C_DIM;
        break;
    default:
        break;
    }
}

static const char *view_actions_empty(const struct ui *ui)
{
    static char text[600];
    const struct model_session *s = view_actions_session(ui);
    if (!s)
        return "no session selected";
    if (s->state && strcmp(s->state, "error") == 0 && s->error) {
        snprintf(text, sizeof(text), "session error: %s", s->error);
        return text;
    }
    /* Why it is paused, stopped, oom-killed or disconnected. */
    if (s->state && strcmp(s->state, "ready") != 0 && s->reason) {
        snprintf(text, sizeof(text), "session %s: %s", s->state, s->reason);
        return text;
    }
    return "no actions yet";
}

static unsigned view_actions_on_select(struct ui *ui, size_t row)
{
    if (row >= ui->model.nactions)
        return 0;
    ui->sel_action = ui->model.actions[row].id;
    ui->actions_follow = row == 0;
    ui->guard_until = 0; /* the operator moved here: it is seen */
    return UI_DIRTY_ACTIONS | UI_DIRTY_FOOTER;
}

static void view_actions_sync(struct ui *ui)
{
    struct ui_list *l = &ui->list[UI_LIST_ACTIONS];
    size_t n = view_actions_count(ui);
    if (n == 0) {
        l->sel = l->top = 0;
        ui->sel_action = 0;
        return;
    }
    long long was = ui->sel_action;
    ssize_t at = ui->actions_follow ? 0 : model_find_action(&ui->model, ui->sel_action);
    if (at >= 0)
        l->sel = (size_t)at;
    list_clamp(ui, UI_LIST_ACTIONS);
    const struct model_action *a = &ui->model.actions[l->sel];
    ui->sel_action = a->id;
    /* a pending action the selection landed on by itself: y/n wait a moment (view_approvals) */
    if (a->id != was && a->approval && strcmp(a->approval, "pending") == 0)
        view_approvals_arm_guard(ui, a->id);
}

const struct ui_view view_actions = {
    .name = "actions",
    .columns = view_actions_columns,
    .ncolumns = sizeof(view_actions_columns) / sizeof(view_actions_columns[0]),
    .count = view_actions_count,
    .title = view_actions_title,
    .cell = view_actions_cell,
    .empty = view_actions_empty,
    .on_select = view_actions_on_select,
    .sync = view_actions_sync,
    .dirty = UI_DIRTY_DETAIL,
};
