/* Left pane: the engine's sessions, newest first; the selection is pinned by session id. */
#include "ui/graph.h"
#include "ui/history_query.h"
#include "ui/ui_internal.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    COL_ID,
    COL_ENGINE,
    COL_NAME,
    COL_STATE,
    COL_AGE,
    COL_COUNT,
    COL_WAIT,
    COL_IMAGE,
    COL_CPU,
    COL_MEM
};

static const struct list_column view_sessions_columns[] = {
    [COL_ID] = {.title = "ID", .width = 8, .prio = 90},
    [COL_ENGINE] = {.title = "ENGINE", .width = 8, .prio = 75},
    [COL_NAME] = {.title = "NAME", .width = 8, .prio = 100, .flex = true},
    [COL_STATE] = {.title = "STATE", .width = 12, .prio = 80},
    [COL_AGE] = {.title = "AGE", .width = 6, .prio = 60, .right = true},
    [COL_COUNT] = {.title = "ACTS", .width = 4, .prio = 70, .right = true},
    [COL_WAIT] = {.title = "WAIT", .width = 4, .prio = 85, .right = true},
    [COL_IMAGE] = {.title = "IMAGE", .width = 18, .prio = 10},
    [COL_CPU] = {.title = "CPU", .width = 8, .prio = 50},
    [COL_MEM] = {.title = "MEM", .width = 8, .prio = 40},
};

/* States in which the engine samples the container (its sparklines mean "now"). */
static bool view_sessions_sampled(const struct model_session *s)
{
    static const char *const states[] = {"ready", "paused", "started", "disconnected"};
    for (size_t i = 0; s->state && i < sizeof(states) / sizeof(states[0]); i++)
        if (strcmp(s->state, states[i]) == 0)
            return true;
    return false;
}

/* The sparkline of the last samples: CPU against the session's CPU limit (100% a CPU),
 * memory against its limit. */
static void view_sessions_spark(const struct ui *ui, const struct model_session *s, bool mem,
                                int width, char *buf, size_t sz)
{
    double v[SAMPLES_SPARK_N];
    size_t n = samples_spark_values(&s->spark, mem, v);
    json_t *limits = json_object_get(json_object_get(s->raw, "options"), "limits");
    double max;
    if (mem) {
        max = s->spark.mem_limit > 0 ? s->spark.mem_limit
                                     : json_number_value(json_object_get(limits, "memory"));
        if (!(max > 0))
            max = graph_nice_max(v, n, 1);
    } else {
        double cpus = json_number_value(json_object_get(limits, "cpus"));
        max = 100.0 * (cpus > 0 ? cpus : 1);
    }
    graph_sparkline(v, n, max, width, ui->utf8, buf, sz);
}

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

/* ENGINE only when there are several: one engine's layout stays as it was. */
static bool view_sessions_column_shown(const struct ui *ui, int column)
{
    return column != COL_ENGINE || ui->nengines > 1;
}

static void view_sessions_cell_of(const struct ui *ui, const struct model_session *s, int column,
                                  char *buf, size_t sz, enum ui_color *color);

/* A session of an engine that is down is kept, drawn stale: every cell dim, ENGINE in the
 * error colour, until the engine answers and its list comes again. */
static void view_sessions_cell(const struct ui *ui, size_t row, int column, char *buf, size_t sz,
                               enum ui_color *color)
{
    size_t at = view_sessions_row_index(ui, row);
    if (at == SIZE_MAX)
        return;
    const struct model_session *s = &ui->model.sessions[at];
    bool up = s->engine < ui->nengines && ui->engines[s->engine].connected;
    view_sessions_cell_of(ui, s, column, buf, sz, color);
    if (!up)
        *color = column == COL_ENGINE ? UI_C_BAD : UI_C_DIM;
}

static void view_sessions_cell_of(const struct ui *ui, const struct model_session *s, int column,
                                  char *buf, size_t sz, enum ui_color *color)
{
    switch (column) {
    case COL_ENGINE:
        snprintf(buf, sz, "%s", s->engine < ui->nengines ? ui->engines[s->engine].name : "?");
        break;
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
    case COL_AGE: /* since created, as docker ps and k9s count it */
        if (s->created_at > 0)
            history_format_span((double)time(NULL) - s->created_at, buf, sz);
        *color = UI_C_DIM;
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
    case COL_CPU:
    case COL_MEM:
        if (view_sessions_sampled(s) && s->spark.n)
            view_sessions_spark(ui, s, column == COL_MEM, view_sessions_columns[column].width, buf,
                                sz);
        *color = UI_C_INFO;
        break;
    default:
        break;
    }
}

static const char *view_sessions_empty(const struct ui *ui)
{
    if (ui->sessions_filter && ui->model.nsessions)
        return "no session matches the filter (/ then Esc clears it)";
    return ui_any_engine_up(ui) ? "no sessions yet: press c to create one (agents create theirs "
                                  "through the API)"
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

#define VIEW_SESSIONS_SEED_LIMIT 30 /* samples asked for: the sparkline's width and some */

static void view_sessions_seeded(int status, json_t *reply, const char *err, void *ud)
{
    (void)err;
    struct ui *ui = (struct ui *)((char *)ud - offsetof(struct ui, tok_spark));
    if (status == 200 && model_seed_samples(&ui->model, ui->spark_for, reply))
        ui->dirty |= UI_DIRTY_SESSIONS;
    ui->spark_for[0] = '\0';
    if (status >= 0) /* no engine: the next sessions fetch goes on */
        view_sessions_seed(ui);
}

void view_sessions_seed(struct ui *ui)
{
    if (ui->spark_for[0])
        return;
    for (size_t i = 0; i < ui->model.nsessions; i++) {
        struct model_session *s = &ui->model.sessions[i];
        if (s->spark.seeded || !view_sessions_sampled(s) || !ui->engines[s->engine].connected)
            continue;
        s->spark.seeded = true; /* asked once: a failure is not retried in a loop */
        char path[160];
        snprintf(ui->spark_for, sizeof(ui->spark_for), "%s", s->id);
        snprintf(path, sizeof(path), "/v1/sessions/%s/stats?limit=%d", s->id,
                 VIEW_SESSIONS_SEED_LIMIT);
        if (ui_request(ui, "GET", path, NULL, view_sessions_seeded, &ui->tok_spark) < 0)
            ui->spark_for[0] = '\0';
        return;
    }
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
    .column_shown = view_sessions_column_shown,
};
