/* Left pane: the engine's sessions, newest first; the selection is pinned by session id. */
#include "ui/ui_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { COL_ID, COL_NAME, COL_STATE, COL_COUNT, COL_WAIT, COL_IMAGE };

static const struct list_column view_sessions_columns[] = {
    [COL_ID] = {"ID", 8, 90, false, false},        [COL_NAME] = {"NAME", 8, 100, false, true},
    [COL_STATE] = {"STATE", 12, 80, false, false}, [COL_COUNT] = {"ACTS", 4, 70, true, false},
    [COL_WAIT] = {"WAIT", 4, 85, true, false},     [COL_IMAGE] = {"IMAGE", 18, 10, false, false},
};

/* With a filter (`/`) the rows are a subset of the model: sessions_rows maps them. */
static size_t view_sessions_count(const struct ui *ui)
{
    return ui->sessions_filter ? ui->sessions_nrows : ui->model.nsessions;
}

size_t view_sessions_row_index(const struct ui *ui, size_t row)
{
    size_t at =
        ui->sessions_filter ? (row < ui->sessions_nrows ? ui->sessions_rows[row] : SIZE_MAX) : row;
    return at < ui->model.nsessions ? at : SIZE_MAX;
}

/* The rows that match the filter, again (after the model or the filter changed). */
static void view_sessions_refilter(struct ui *ui)
{
    if (!ui->sessions_filter)
        return;
    size_t *rows = realloc(ui->sessions_rows, (ui->model.nsessions + 1) * sizeof(*rows));
    if (!rows) {
        ui->sessions_nrows = 0;
        return;
    }
    ui->sessions_rows = rows;
    size_t n = 0;
    for (size_t i = 0; i < ui->model.nsessions; i++)
        if (model_session_matches(&ui->model.sessions[i], ui->sessions_filter))
            rows[n++] = i;
    ui->sessions_nrows = n;
}

static void view_sessions_title(const struct ui *ui, char *buf, size_t sz)
{
    if (ui->sessions_filter)
        snprintf(buf, sz, "Sessions (%zu of %zu) /%s", ui->sessions_nrows, ui->model.nsessions,
                 ui->sessions_filter);
    else
        snprintf(buf, sz, "Sessions (%zu)", ui->model.nsessions);
}

static void view_sessions_cell(const struct ui *ui, size_t row, int column, char *buf, size_t sz,
                               enum ui_color *color)
{
    size_t at = view_sessions_row_index(ui, row);
    if (at == SIZE_MAX)
        return;
    const struct model_session *s = &ui->model.sessions[at];
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
    if (ui->sessions_filter && ui->model.nsessions)
        return "no session matches the filter (/ then Esc clears it)";
    return ui->connected ? "no sessions yet: agents create them (POST /v1/sessions) or "
                           "`paddock run -- CMD`"
                         : "not connected to the engine";
}

static unsigned view_sessions_on_select(struct ui *ui, size_t row)
{
    size_t at = view_sessions_row_index(ui, row);
    if (at == SIZE_MAX)
        return 0;
    return ui_select_session(ui, ui->model.sessions[at].id);
}

static void view_sessions_sync(struct ui *ui)
{
    struct ui_list *l = &ui->list[UI_LIST_SESSIONS];
    view_sessions_refilter(ui);
    ssize_t at = model_find_session(&ui->model, ui->sel_session);
    for (size_t r = 0; at >= 0 && r < view_sessions_count(ui); r++) {
        if (view_sessions_row_index(ui, r) == (size_t)at) {
            l->sel = r;
            list_clamp(ui, UI_LIST_SESSIONS);
            return;
        }
    }
    /* The pinned session is gone or filtered out (or none was chosen): the row at the same
     * place. */
    list_clamp(ui, UI_LIST_SESSIONS);
    size_t row = view_sessions_row_index(ui, l->sel);
    if (view_sessions_count(ui) && row != SIZE_MAX)
        ui->dirty |= ui_select_session(ui, ui->model.sessions[row].id);
    else
        ui->dirty |= ui_select_session(ui, NULL);
}

unsigned view_sessions_set_filter(struct ui *ui, const char *text)
{
    free(ui->sessions_filter);
    ui->sessions_filter = text && *text ? strdup(text) : NULL;
    if (!ui->sessions_filter) {
        free(ui->sessions_rows);
        ui->sessions_rows = NULL;
        ui->sessions_nrows = 0;
    }
    view_sessions_sync(ui);
    return UI_DIRTY_SESSIONS | UI_DIRTY_DETAIL | UI_DIRTY_HEADER;
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
    .keys = ops_session_keys,
    .dirty = UI_DIRTY_SESSIONS,
};
