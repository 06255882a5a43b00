/* Left pane, under the sessions whenever the queue is not empty: actions waiting for the
 * operator, oldest first, each with its exact command or file, risk, reason and the time left
 * before it expires. `y` approves, `n` rejects; Enter does nothing destructive (it shows the
 * session's Actions tab). The selection is pinned by action id. An item the selection lands
 * on by itself (the one above was decided, or it just arrived) cannot be decided for a moment,
 * so a second quick `y` never decides it unseen; the Actions tab's y/n go through here too. */
#include "client/client.h"
#include "common/timeconv.h"
#include "ui/ui_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

enum { COL_ID, COL_ENGINE, COL_SESSION, COL_RISK, COL_LEFT, COL_WHAT, COL_WHY };

/* How long a newly selected item cannot be decided (PADDOCK_DECIDE_GUARD_MS: tests on a loaded
 * machine lengthen it so that their key surely lands inside it). */
#define VIEW_APPROVALS_GUARD_MS 500

static const struct list_column view_approvals_columns[] = {
    [COL_ID] = {.title = "ID", .width = 5, .prio = 60, .right = true},
    [COL_ENGINE] = {.title = "ENGINE", .width = 8, .prio = 70},
    [COL_SESSION] = {.title = "SESSION", .width = 10, .prio = 50},
    [COL_RISK] = {.title = "RISK", .width = 6, .prio = 90},
    [COL_LEFT] = {.title = "LEFT", .width = 7, .prio = 80, .right = true},
    /* 15: at 80 columns ID, RISK, LEFT and ACTION fit the left column (layout.c) */
    [COL_WHAT] = {.title = "ACTION", .width = 15, .prio = 100, .flex = true},
    [COL_WHY] = {.title = "WHY", .width = 24, .prio = 30},
};

static json_t *view_approvals_at(const struct ui *ui, size_t row)
{
    return json_array_get(ui->model.approvals, row);
}

static long long view_approvals_id(const struct ui *ui, size_t row)
{
    return (long long)json_integer_value(json_object_get(view_approvals_at(ui, row), "id"));
}

static size_t view_approvals_engine(const struct ui *ui, size_t row)
{
    return model_approval_engine(view_approvals_at(ui, row));
}

/* ENGINE only when there are several. */
static bool view_approvals_column_shown(const struct ui *ui, int column)
{
    return column != COL_ENGINE || ui->nengines > 1;
}

static size_t view_approvals_count(const struct ui *ui)
{
    return json_array_size(ui->model.approvals);
}

/* The selected item's reason in the title: the WHY column gives way to the command when the
 * pane is narrow, and the reason must be seen before a decision (the keys are on the footer). */
static void view_approvals_title(const struct ui *ui, char *buf, size_t sz)
{
    size_t n = view_approvals_count(ui);
    json_t *a = n ? view_approvals_at(ui, ui->list[UI_LIST_APPROVALS].sel) : NULL;
    const char *why = json_string_value(json_object_get(a, "risk_reason"));
    if (why && *why)
        snprintf(buf, sz, "Approvals (%zu waiting) %s why: %s", n, draw_glyph(ui, "\xC2\xB7", "-"),
                 why);
    else
        snprintf(buf, sz, "Approvals (%zu waiting)  y approve %s n reject", n,
                 draw_glyph(ui, "\xC2\xB7", "-"));
}

static const char *view_approvals_str(json_t *a, const char *key)
{
    const char *s = json_string_value(json_object_get(a, key));
    return s ? s : "";
}

static void view_approvals_cell(const struct ui *ui, size_t row, int column, char *buf, size_t sz,
                                enum ui_color *color)
{
    json_t *a = view_approvals_at(ui, row);
    switch (column) {
    case COL_ID:
        snprintf(buf, sz, "%lld", view_approvals_id(ui, row));
        *color = UI_C_DIM;
        break;
    case COL_ENGINE: {
        size_t e = view_approvals_engine(ui, row);
        snprintf(buf, sz, "%s", e < ui->nengines ? ui->engines[e].name : "?");
        *color = ui->engines[e < ui->nengines ? e : 0].connected ? UI_C_NORMAL : UI_C_BAD;
        break;
    }
    case COL_SESSION: {
        const char *sid = view_approvals_str(a, "session_id");
        ssize_t at = model_find_session(&ui->model, sid);
        const struct model_session *s = at >= 0 ? &ui->model.sessions[at] : NULL;
        snprintf(buf, sz, "%s", s && s->name && *s->name ? s->name : sid);
        break;
    }
    case COL_RISK: {
        const char *risk = view_approvals_str(a, "risk");
        snprintf(buf, sz, "%s", risk);
        *color = theme_risk_color(risk);
        break;
    }
    case COL_LEFT: {
        /* the deadline is wall-clock time (the engine's); whole seconds, rounded down */
        json_t *d = json_object_get(a, "deadline");
        if (!json_is_number(d)) {
            snprintf(buf, sz, "-");
            break;
        }
        /* a deadline past what a time_t holds shows as the most a row has room for */
        time_t secs;
        if (timeconv_to_time(json_number_value(d) - (double)time(NULL), &secs) < 0 ||
            secs > 99 * 3600)
            secs = 99 * 3600;
        long left = secs < 0 ? 0 : (long)secs;
        if (left >= 3600)
            snprintf(buf, sz, "%ld:%02ld:%02ld", left / 3600, left / 60 % 60, left % 60);
        else
            snprintf(buf, sz, "%ld:%02ld", left / 60, left % 60);
        *color = left < 60 ? UI_C_WARN : UI_C_NORMAL;
        break;
    }
    case COL_WHAT:
        snprintf(buf, sz, "%s: %s", view_approvals_str(a, "kind"),
                 view_approvals_str(a, "summary"));
        break;
    case COL_WHY:
        snprintf(buf, sz, "%s", view_approvals_str(a, "risk_reason"));
        *color = UI_C_DIM;
        break;
    default:
        break;
    }
}

static const char *view_approvals_empty(const struct ui *ui)
{
    (void)ui;
    return "nothing waits for approval";
}

static int64_t view_approvals_guard_ms(void)
{
    const char *e = getenv("PADDOCK_DECIDE_GUARD_MS");
    long v = e && *e ? strtol(e, NULL, 10) : VIEW_APPROVALS_GUARD_MS;
    return v > 0 ? v : VIEW_APPROVALS_GUARD_MS;
}

void view_approvals_arm_guard(struct ui *ui, long long id)
{
    if (id <= 0)
        return;
    ui->guard_id = id;
    ui->guard_until = ui_now_ms() + view_approvals_guard_ms();
    ui->dirty |= UI_DIRTY_FOOTER;
}

bool view_approvals_guard_holds(const struct ui *ui, long long id)
{
    return id > 0 && id == ui->guard_id && ui->guard_until > ui_now_ms();
}

static unsigned view_approvals_on_select(struct ui *ui, size_t row)
{
    /* the operator moved here: it is seen */
    ui->sel_approval = view_approvals_id(ui, row);
    ui->sel_approval_engine = view_approvals_engine(ui, row);
    ui->guard_until = 0;
    return UI_DIRTY_APPROVALS | UI_DIRTY_FOOTER;
}

static void view_approvals_sync(struct ui *ui)
{
    struct ui_list *l = &ui->list[UI_LIST_APPROVALS];
    size_t n = view_approvals_count(ui);
    long long was = ui->sel_approval;
    for (size_t i = 0; i < n; i++) {
        if (view_approvals_id(ui, i) == ui->sel_approval &&
            view_approvals_engine(ui, i) == ui->sel_approval_engine) {
            l->sel = i;
            break;
        }
    }
    list_clamp(ui, UI_LIST_APPROVALS);
    ui->sel_approval = n ? view_approvals_id(ui, l->sel) : 0;
    ui->sel_approval_engine = n ? view_approvals_engine(ui, l->sel) : 0;
    if (ui->sel_approval != was)
        view_approvals_arm_guard(ui, ui->sel_approval);
}

/* The decision's answer: the event stream refreshes the queue; errors go to the footer. */
static void view_approvals_decided(int status, json_t *reply, const char *err, void *ud)
{
    struct ui *ui = (struct ui *)((char *)ud - offsetof(struct ui, tok_op));
    if (status != 200)
        ui->decided_id = 0; /* not decided: the operator may try again (after resuming, say) */
    if (status < 0)
        ui_set_error(ui, "%s", err ? err : "the engine did not answer");
    else if (status != 200)
        ui_set_error(ui, "%s", client_error_message(reply, "the engine refused"));
    else
        ui_set_status(
            ui, "%s action %lld",
            json_is_string(json_object_get(reply, "approval")) &&
                    strcmp(json_string_value(json_object_get(reply, "approval")), "rejected") == 0
                ? "rejected"
                : "approved",
            (long long)json_integer_value(json_object_get(reply, "id")));
    ui_approvals_refetch(ui, ui->decided_engine);
}

unsigned view_approvals_decide_id(struct ui *ui, size_t engine, long long id, bool approve,
                                  const char *reason)
{
    json_t *body = json_object();
    const char *user = getenv("USER");
    char by[128];
    snprintf(by, sizeof(by), "%s (dashboard)", user && *user ? user : "operator");
    json_object_set_new(body, "by", json_string(by));
    if (reason && *reason)
        json_object_set_new(body, "reason", json_string(reason));
    char path[96];
    snprintf(path, sizeof(path), "/v1/actions/%lld/%s", id, approve ? "approve" : "reject");
    ui_request_on(ui, engine, "POST", path, body, view_approvals_decided, &ui->tok_op);
    json_decref(body);
    ui->decided_id = id;
    ui->decided_engine = engine;
    ui_set_status(ui, "%s action %lld ...", approve ? "approving" : "rejecting", id);
    return UI_DIRTY_FOOTER;
}

/* Decide the selected action (approve or reject, with an optional reason). */
unsigned view_approvals_decide(struct ui *ui, bool approve, const char *reason)
{
    if (!view_approvals_count(ui))
        return 0;
    size_t row = ui->list[UI_LIST_APPROVALS].sel;
    return view_approvals_decide_id(ui, view_approvals_engine(ui, row), view_approvals_id(ui, row),
                                    approve, reason);
}

/* A key may decide this action now: not one just selected by itself, not one already sent. */
static bool view_approvals_may_decide(struct ui *ui, size_t engine, long long id)
{
    if (view_approvals_guard_holds(ui, id)) {
        /* the footer says "wait" while the guard holds; this once it is over */
        ui_set_status(ui, "action %lld was just selected: not decided", id);
        return false;
    }
    if (id == ui->decided_id && engine == ui->decided_engine) {
        ui_set_status(ui, "action %lld is already decided", id);
        return false;
    }
    return true;
}

unsigned view_approvals_key_approve(struct ui *ui, size_t engine, long long id)
{
    if (!view_approvals_may_decide(ui, engine, id))
        return UI_DIRTY_FOOTER;
    return view_approvals_decide_id(ui, engine, id, true, NULL);
}

static unsigned view_approvals_approve(struct ui *ui)
{
    if (!view_approvals_count(ui))
        return 0;
    size_t row = ui->list[UI_LIST_APPROVALS].sel;
    return view_approvals_key_approve(ui, view_approvals_engine(ui, row),
                                      view_approvals_id(ui, row));
}

/* The action a reason prompt is about (one prompt at a time: the modal holds the keyboard). */
struct view_approvals_asked {
    size_t engine;
    long long id;
};

static unsigned view_approvals_rejected(struct ui *ui, const char *reason, void *ud)
{
    const struct view_approvals_asked *asked = ud;
    long long id = asked->id;
    if (!reason) {
        ui_set_status(ui, "not rejected");
        return UI_DIRTY_FOOTER;
    }
    /* the queue may have moved while the operator typed: decide the action asked about */
    size_t n = json_array_size(ui->model.approvals);
    for (size_t i = 0; i < n; i++)
        if (view_approvals_id(ui, i) == id && view_approvals_engine(ui, i) == asked->engine)
            return view_approvals_decide_id(ui, asked->engine, id, false, *reason ? reason : NULL);
    ui_set_error(ui, "action %lld no longer waits", id);
    return UI_DIRTY_FOOTER;
}

unsigned view_approvals_key_reject(struct ui *ui, size_t engine, long long id)
{
    static struct view_approvals_asked asked;
    if (!view_approvals_may_decide(ui, engine, id))
        return UI_DIRTY_FOOTER;
    asked = (struct view_approvals_asked){.engine = engine, .id = id};
    char label[96];
    snprintf(label, sizeof(label), "reject action %lld, reason (optional, Esc cancels): ", id);
    prompt_open(ui, label, NULL, view_approvals_rejected, &asked);
    return UI_DIRTY_FOOTER;
}

/* n: reject, with an optional reason the agent sees (Enter alone: none; Esc: no decision). */
static unsigned view_approvals_reject(struct ui *ui)
{
    if (!view_approvals_count(ui))
        return 0;
    size_t row = ui->list[UI_LIST_APPROVALS].sel;
    return view_approvals_key_reject(ui, view_approvals_engine(ui, row),
                                     view_approvals_id(ui, row));
}

/* What the rule prompt of `a` is about (one prompt at a time: the modal holds the keyboard). */
static struct {
    long long id;
    char session[80], kind[32];
} view_approvals_proposal;

static unsigned view_approvals_rule_done(struct ui *ui, const char *text, void *ud)
{
    (void)ud;
    if (!text) {
        ui_set_status(ui, "approved action %lld; no rule saved", view_approvals_proposal.id);
        return UI_DIRTY_FOOTER;
    }
    if (!*text) {
        ui_set_error(ui, "an empty pattern matches nothing: no rule saved");
        return UI_DIRTY_FOOTER;
    }
    rules_save_session(ui, view_approvals_proposal.session, view_approvals_proposal.kind, text);
    return UI_DIRTY_FOOTER;
}

/* a: approve the selected action now, and propose "allow commands like this in this session":
 * the pattern the engine derived (program and subcommand, never broader) is shown and may be
 * edited; Enter saves it as the session's rule, Esc saves nothing more than the approval. */
static unsigned view_approvals_approve_rule(struct ui *ui)
{
    if (!view_approvals_count(ui))
        return 0;
    json_t *a = view_approvals_at(ui, ui->list[UI_LIST_APPROVALS].sel);
    long long id = view_approvals_id(ui, ui->list[UI_LIST_APPROVALS].sel);
    size_t engine = view_approvals_engine(ui, ui->list[UI_LIST_APPROVALS].sel);
    if (!view_approvals_may_decide(ui, engine, id))
        return UI_DIRTY_FOOTER;
    view_approvals_proposal.id = id;
    snprintf(view_approvals_proposal.session, sizeof(view_approvals_proposal.session), "%s",
             view_approvals_str(a, "session_id"));
    snprintf(view_approvals_proposal.kind, sizeof(view_approvals_proposal.kind), "%s",
             view_approvals_str(a, "kind"));
    const char *proposed = json_string_value(json_object_get(a, "proposed_rule"));
    char *initial = strdup(proposed ? proposed : view_approvals_str(a, "summary"));
    bool above = json_is_true(json_object_get(a, "above_ceiling"));
    unsigned dirty = view_approvals_decide_id(ui, engine, id, true, NULL);
    /* short: the prompt gives its label half the footer */
    char label[128];
    if (above)
        snprintf(label, sizeof(label),
                 "approved; rule (never for %s ones; Esc: none): ", view_approvals_str(a, "risk"));
    else
        snprintf(label, sizeof(label), "approved; rule (Esc: none): ");
    prompt_open(ui, label, initial, view_approvals_rule_done, NULL);
    free(initial);
    return dirty | UI_DIRTY_ALL;
}

/* Enter: look at the action in its session's Actions tab; never a decision. */
static unsigned view_approvals_show(struct ui *ui)
{
    json_t *a = view_approvals_at(ui, ui->list[UI_LIST_APPROVALS].sel);
    const char *sid = json_string_value(json_object_get(a, "session_id"));
    if (!sid)
        return 0;
    unsigned dirty = ui_select_session(ui, sid);
    view_sessions.sync(ui);
    for (size_t t = 0; t < ui_ntabs; t++)
        if (ui_tabs[t] == &tab_actions)
            dirty |= ui_show_tab(ui, t);
    ui->focus = UI_PANE_DETAIL;
    return dirty | UI_DIRTY_ALL;
}

static const struct ui_key view_approvals_keys[] = {
    {.key = 'y',
     .name = "y",
     .help = "approve the selected action (it runs now)",
     .fn = view_approvals_approve,
     .hint = "y approve",
     .mutates = true},
    {.key = 'a',
     .name = "a",
     .help = "approve, and allow commands like this in this session (the pattern is shown, "
             "editable; Esc: no rule)",
     .fn = view_approvals_approve_rule,
     .hint = "a approve+rule",
     .mutates = true},
    {.key = 'n',
     .name = "n",
     .help = "reject the selected action (with an optional reason)",
     .fn = view_approvals_reject,
     .hint = "n reject",
     .mutates = true},
    {.key = '\n',
     .name = "Enter",
     .help = "show the action in its session (no decision)",
     .fn = view_approvals_show},
    {.key = KEY_ENTER,
     .name = "Enter",
     .help = "show the action in its session (no decision)",
     .fn = view_approvals_show},
    {0},
};

const struct ui_view view_approvals = {
    .name = "approvals",
    .columns = view_approvals_columns,
    .ncolumns = sizeof(view_approvals_columns) / sizeof(view_approvals_columns[0]),
    .count = view_approvals_count,
    .title = view_approvals_title,
    .cell = view_approvals_cell,
    .empty = view_approvals_empty,
    .on_select = view_approvals_on_select,
    .sync = view_approvals_sync,
    .keys = view_approvals_keys,
    .dirty = UI_DIRTY_APPROVALS,
    .column_shown = view_approvals_column_shown,
};
