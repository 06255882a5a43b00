/* Left pane: the engine's sessions, newest first; the selection is pinned by session id. */
#include "ui/ui_internal.h"

#include <stdio.h>
#include <string.h>

enum { COL_ID, COL_NAME, COL_STATE, COL_COUNT, COL_WAIT, COL_IMAGE };

static const struct list_column view_sessions_columns[] = {
    [COL_ID] = {"ID", 8, 90, false, false},        [COL_NAME] = {"NAME", 8, 100, false, true},
    [COL_STATE] = {"STATE", 12, 80, false, false}, [COL_COUNT] = {"ACTS", 4, 70, true, false},
    [COL_WAIT] = {"WAIT", 4, 85, true, false},     [COL_IMAGE] = {"IMAGE", 18, 10, false, false},
};

static size_t view_sessions_count(const struct ui *ui)
{
    return ui->model.nsessions;
}

static void view_sessions_title(const struct ui *ui, char *buf, size_t sz)
{
    snprintf(buf, sz, "Sessions (%zu)", ui->model.nsessions);
}

static void view_sessions_cell(const struct ui *ui, size_t row, int column, char *buf, size_t sz,
                               enum ui_color *color)
{
    const struct model_session *s = &ui->model.sessions[row];
    switch (column) {
    case COL_ID:
        snprintf(buf, sz, "%.8s", s->id);
        *color = UI_C_DIM;
        break;
    case COL_NAME:
        snprintf(buf, sz, "%s", s->name && *s->name ? s->name : "-");
        break;
    case COL_STATE:
        snprintf(buf, sz, "%s", s->state ? s->state : "?");
        *color = theme_state_color(s->state);
        break;
    case COL_COUNT:
        snprintf(buf, sz, "%lld", s->action_count);
        break;
    case COL_WAIT: {
        size_t n = model_count_approvals(&ui->model, s->id);
        if (n) {
            snprintf(buf, sz, "%zu", n);
            *color = UI_C_WARN;
        }
        break;
    }
    case COL_IMAGE:
        snprintf(buf, sz, "%s", s->image ? s->image : "");
        *color = UI_C_DIM;
        break;
    default:
        break;
    }
}

static const char *view_sessions_empty(const struct ui *ui)
{
    return ui->connected ? "no sessions yet: agents create them (POST /v1/sessions) or "
                           "`paddock run -- CMD`"
                         : "not connected to the engine";
}

static unsigned view_sessions_on_select(struct ui *ui, size_t row)
{
    if (row >= ui->model.nsessions)
        return 0;
    return ui_select_session(ui, ui->model.sessions[row].id);
}

static void view_sessions_sync(struct ui *ui)
{
    struct ui_list *l = &ui->list[UI_LIST_SESSIONS];
    ssize_t at = model_find_session(&ui->model, ui->sel_session);
    if (at >= 0) {
        l->sel = (size_t)at;
        list_clamp(ui, UI_LIST_SESSIONS);
        return;
    }
    /* The pinned session is gone (or none was chosen): the row at the same place. */
    list_clamp(ui, UI_LIST_SESSIONS);
    if (ui->model.nsessions)
        ui->dirty |= ui_select_session(ui, ui->model.sessions[l->sel].id);
    else
        ui->dirty |= ui_select_session(ui, NULL);
}

const struct ui_view view_sessions = {
    .name = "sessions",
    .columns = view_sessions_columns,
    .ncolumns = sizeof(view_sessions_columns) / sizeof(view_sessions_columns[0]),
    .count = view_sessions_count,
    .title = view_sessions_title,
    .cell = view_sessions_cell,
    .empty = view_sessions_empty,
    .on_select = view_sessions_on_select,
    .sync = view_sessions_sync,
    .dirty = UI_DIRTY_SESSIONS,
};
