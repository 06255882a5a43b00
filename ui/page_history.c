/* The History page (`3`, full screen; Esc back). Left: past and present sessions, newest
 * first, from GET /v1/sessions?all=1 (filters: state, image, creation date), or the results
 * of a full-text search over commands and outputs (GET /v1/history?q=). Right: one session:
 * its actions, the tail of its log (the stored one once the container is gone) and graphs
 * of its stored resource samples; Enter on an action shows its whole observation.
 *
 * Lists are paged lazily with the engine's keyset cursors (next_before): a page is fetched
 * when the selection nears the end of what is loaded, never more than one per list at a
 * time, and nothing is loaded beyond that. A new selection cancels the requests made for the
 * previous one, so holding `j` costs one answer, not one per row. Everything shown came from
 * the engine (and so from sandboxes): it reaches the screen through draw_text only. The
 * right side's views sit in the dashboard's tab bar (draw_tabs), its texts in the shared text
 * viewer (ui/textview.c) and its graphs are ui/graph.c's, as on the Resources tab. */
#include "client/action_detail.h"
#include "client/client.h"
#include "common/sanitize.h"
#include "ui/graph.h"
#include "ui/history_query.h"
#include "ui/textview.h"
#include "ui/ui_internal.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HIST_PAGE_DEFAULT 100
#define HIST_LOG_TAIL 2000 /* log lines asked for */
#define HIST_SAMPLES 3600  /* the newest stored samples, for the graphs */

enum hist_tab { HIST_TAB_ACTIONS, HIST_TAB_LOG, HIST_TAB_GRAPHS, HIST_NTABS };
static const char *const hist_tab_names[HIST_NTABS] = {"Actions", "Log", "Graphs"};

/* A lazily paged list: the rows the engine sent, in order, and the next page's cursor. */
struct hist_list {
    json_t *rows; /* array of objects */
    char *next;   /* before= of the next page; NULL: no more (once loaded) */
    bool pending; /* a page is on its way */
    bool loaded;  /* the first answer came */
    char *error;
    char tok; /* the requests' token (its address) */
};

/* Text to read (a log tail, an observation), in the shared text viewer. */
struct hist_text {
    struct textview_text text;
    struct textview tv;
    bool pending, loaded;
    char *error;
    char tok;
};

struct hist {
    struct ui *ui;
    int page; /* rows a page */
    /* filters of the sessions list */
    const char *state; /* from history_state_next (static), NULL: any */
    char image[256];
    char range[96]; /* as typed */
    double since, until;
    char query[256]; /* full-text search; not empty: the left list shows its results */
    bool right;      /* the keyboard is on the session's side */
    enum hist_tab tab;
    struct hist_list sessions, results, actions;
    json_t *cur; /* the session on the right (NULL while it is fetched) */
    char cur_id[80];
    char tok_cur;
    long long actions_from; /* the actions start at this one (a search result), 0: newest */
    struct hist_text log;
    char log_source[16];
    json_t *samples;
    bool samples_pending, samples_loaded;
    char *samples_error;
    char tok_samples;
    long long obs_id; /* the action shown whole over the right side, 0: none */
    struct hist_text obs;
};

#define HIST_OF(ud, member) ((struct hist *)((char *)(ud)-offsetof(struct hist, member)))

/* The page's state from a const ui (the list callbacks). */
static struct hist *hist_find(const struct ui *ui)
{
    for (size_t i = 0; i < sizeof(ui->slots) / sizeof(ui->slots[0]); i++)
        if (ui->slots[i].page == &page_history)
            return ui->slots[i].state;
    return NULL;
}

static const char *hist_str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static double hist_num(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : 0;
}

/* ---- lists and texts ---- */

static void hist_list_reset(struct ui *ui, struct hist_list *l)
{
    ui_cancel(ui, &l->tok);
    json_decref(l->rows);
    l->rows = json_array();
    free(l->next);
    free(l->error);
    l->next = l->error = NULL;
    l->pending = l->loaded = false;
}

static bool hist_list_more(const struct hist_list *l)
{
    return !l->loaded || l->next != NULL;
}

/* A page arrived: append its rows (under key), keep its cursor. */
static void hist_list_got(struct hist *h, struct hist_list *l, int status, json_t *reply,
                          const char *err, const char *key, const char *what)
{
    l->pending = false;
    json_t *rows = json_object_get(reply, key);
    if (status != 200 || !json_is_array(rows)) {
        char msg[400];
        snprintf(msg, sizeof(msg), "%s: %s", what,
                 status < 0      ? (err ? err : "no answer")
                 : status != 200 ? client_error_message(reply, "refused")
                                 : "the engine's answer has no list");
        free(l->error);
        l->error = strdup(msg);
        ui_set_error(h->ui, "%s", msg);
        return;
    }
    json_array_extend(l->rows, rows);
    free(l->next);
    l->next = NULL;
    json_t *next = json_object_get(reply, "next_before");
    char buf[80];
    if (json_is_string(next))
        l->next = strdup(json_string_value(next));
    else if (json_is_integer(next) &&
             snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(next)) > 0)
        l->next = strdup(buf);
    l->loaded = true;
}

static void hist_text_clear(struct ui *ui, struct hist_text *t)
{
    ui_cancel(ui, &t->tok);
    textview_text_free(&t->text);
    textview_free(&t->tv);
    free(t->error);
    memset(t, 0, sizeof(*t));
    textview_init(&t->tv, &textview_text_source, &t->text, ui->utf8 ? 0 : SANITIZE_ASCII);
    t->tv.words = true;
}

/* The text arrived: shown from the top, or from the end (a log's newest lines). */
static void hist_text_set(struct hist_text *t, const char *text, size_t len, bool at_end)
{
    if (textview_text_set(&t->text, text, len) < 0) {
        free(t->error);
        t->error = strdup("out of memory");
    }
    textview_reset(&t->tv);
    t->tv.follow = at_end;
    t->loaded = true;
}

static void hist_text_draw(struct ui *ui, struct hist_text *t, WINDOW *w, int y0, int x0,
                           int height, int width, const char *empty)
{
    if (t->error) {
        draw_text(ui, w, y0, x0, width, t->error, theme_attr(UI_C_BAD));
        return;
    }
    if (!t->loaded) {
        draw_text(ui, w, y0, x0, width, "loading…", theme_attr(UI_C_DIM));
        return;
    }
    if (t->text.nlines == 0 || (t->text.nlines == 1 && t->text.lens[0] == 0)) {
        t->tv.height = height;
        draw_text(ui, w, y0, x0, width, empty, theme_attr(UI_C_DIM));
        return;
    }
    textview_draw(ui, &t->tv, w, y0, x0, height, width);
}

/* ---- requests ---- */

static void hist_sessions_got(int status, json_t *reply, const char *err, void *ud);
static void hist_results_got(int status, json_t *reply, const char *err, void *ud);
static void hist_actions_got(int status, json_t *reply, const char *err, void *ud);
static void hist_obs_got(int status, json_t *reply, const char *err, void *ud);

static void hist_fetch_sessions(struct hist *h)
{
    char path[1024] = "/v1/sessions?all=1", num[32];
    snprintf(num, sizeof(num), "%d", h->page);
    history_query_add(path, sizeof(path), "limit", num);
    history_query_add(path, sizeof(path), "state", h->state);
    history_query_add(path, sizeof(path), "image", h->image);
    if (h->since > 0 && snprintf(num, sizeof(num), "%.0f", h->since) > 0)
        history_query_add(path, sizeof(path), "since", num);
    if (h->until > 0 && snprintf(num, sizeof(num), "%.0f", h->until) > 0)
        history_query_add(path, sizeof(path), "until", num);
    history_query_add(path, sizeof(path), "before", h->sessions.next);
    ui_cancel(h->ui, &h->sessions.tok);
    h->sessions.pending = true;
    ui_request(h->ui, "GET", path, NULL, hist_sessions_got, &h->sessions.tok);
}

static void hist_fetch_results(struct hist *h)
{
    char path[1400] = "/v1/history", num[32];
    history_query_add(path, sizeof(path), "q", h->query);
    snprintf(num, sizeof(num), "%d", h->page);
    history_query_add(path, sizeof(path), "limit", num);
    history_query_add(path, sizeof(path), "before", h->results.next);
    ui_cancel(h->ui, &h->results.tok);
    h->results.pending = true;
    ui_request(h->ui, "GET", path, NULL, hist_results_got, &h->results.tok);
}

static void hist_fetch_actions(struct hist *h)
{
    if (!h->cur_id[0])
        return;
    char path[512], num[32];
    snprintf(path, sizeof(path), "/v1/sessions/%s/actions", h->cur_id);
    snprintf(num, sizeof(num), "%d", h->page);
    history_query_add(path, sizeof(path), "limit", num);
    if (h->actions.loaded)
        history_query_add(path, sizeof(path), "before", h->actions.next);
    else if (h->actions_from > 0 && snprintf(num, sizeof(num), "%lld", h->actions_from + 1) > 0)
        history_query_add(path, sizeof(path), "before", num);
    ui_cancel(h->ui, &h->actions.tok);
    h->actions.pending = true;
    ui_request(h->ui, "GET", path, NULL, hist_actions_got, &h->actions.tok);
}

/* The list the keyboard moves on the left. */
static enum ui_list_id hist_left_list(const struct hist *h)
{
    return h->query[0] ? UI_LIST_HISTORY_SEARCH : UI_LIST_HISTORY;
}

static struct hist_list *hist_list_of(struct hist *h, enum ui_list_id id)
{
    return id == UI_LIST_HISTORY_SEARCH    ? &h->results
           : id == UI_LIST_HISTORY_ACTIONS ? &h->actions
                                           : &h->sessions;
}

/* Near the end of what a list has loaded: its next page. */
static void hist_maybe_more(struct hist *h, enum ui_list_id id)
{
    struct hist_list *l = hist_list_of(h, id);
    size_t margin = history_margin(h->page, h->ui->list[id].rows);
    if (!history_want_more(json_array_size(l->rows), h->ui->list[id].sel, margin, hist_list_more(l),
                           l->pending) ||
        l->error)
        return;
    if (id == UI_LIST_HISTORY)
        hist_fetch_sessions(h);
    else if (id == UI_LIST_HISTORY_SEARCH)
        hist_fetch_results(h);
    else
        hist_fetch_actions(h);
}

static void hist_log_got(int status, json_t *reply, const char *err, void *ud)
{
    struct hist *h = HIST_OF(ud, log.tok);
    h->log.pending = false;
    h->log.loaded = true;
    const char *text = json_string_value(json_object_get(reply, "text"));
    if (status == 200 && text) {
        snprintf(h->log_source, sizeof(h->log_source), "%s", hist_str(reply, "source"));
        hist_text_set(&h->log, text, strlen(text), true);
    } else if (status == 404) {
        h->log.error = strdup("no log kept for this session");
    } else {
        char msg[400];
        snprintf(msg, sizeof(msg), "log: %s",
                 status < 0 ? (err ? err : "no answer") : client_error_message(reply, "refused"));
        h->log.error = strdup(msg);
    }
    h->ui->dirty |= UI_DIRTY_DETAIL;
}

static void hist_samples_got(int status, json_t *reply, const char *err, void *ud)
{
    struct hist *h = HIST_OF(ud, tok_samples);
    h->samples_pending = false;
    h->samples_loaded = true;
    json_t *s = json_object_get(reply, "samples");
    if (status == 200 && json_is_array(s)) {
        json_decref(h->samples);
        h->samples = json_incref(s);
    } else {
        char msg[400];
        snprintf(msg, sizeof(msg), "samples: %s",
                 status < 0 ? (err ? err : "no answer") : client_error_message(reply, "refused"));
        free(h->samples_error);
        h->samples_error = strdup(msg);
    }
    h->ui->dirty |= UI_DIRTY_DETAIL;
}

/* Fetch what the right side shows now, when it is not there yet. */
static void hist_fetch_visible(struct hist *h)
{
    if (!h->cur_id[0])
        return;
    char path[256];
    switch (h->tab) {
    case HIST_TAB_ACTIONS:
        if (!h->actions.loaded && !h->actions.pending)
            hist_fetch_actions(h);
        break;
    case HIST_TAB_LOG:
        if (!h->log.loaded && !h->log.pending) {
            snprintf(path, sizeof(path), "/v1/sessions/%s/logs?tail=%d", h->cur_id, HIST_LOG_TAIL);
            h->log.pending = true;
            ui_request(h->ui, "GET", path, NULL, hist_log_got, &h->log.tok);
        }
        break;
    case HIST_TAB_GRAPHS:
        if (!h->samples_loaded && !h->samples_pending) {
            snprintf(path, sizeof(path), "/v1/sessions/%s/stats?limit=%d", h->cur_id, HIST_SAMPLES);
            h->samples_pending = true;
            ui_request(h->ui, "GET", path, NULL, hist_samples_got, &h->tok_samples);
        }
        break;
    default:
        break;
    }
}

static void hist_obs_close(struct hist *h)
{
    hist_text_clear(h->ui, &h->obs);
    h->obs_id = 0;
}

/* Forget what the right side held (a new session): stale requests are cancelled. */
static void hist_right_reset(struct hist *h)
{
    hist_list_reset(h->ui, &h->actions);
    h->ui->list[UI_LIST_HISTORY_ACTIONS].sel = h->ui->list[UI_LIST_HISTORY_ACTIONS].top = 0;
    hist_text_clear(h->ui, &h->log);
    h->log_source[0] = '\0';
    ui_cancel(h->ui, &h->tok_samples);
    json_decref(h->samples);
    h->samples = NULL;
    free(h->samples_error);
    h->samples_error = NULL;
    h->samples_pending = h->samples_loaded = false;
    ui_cancel(h->ui, &h->tok_cur);
    h->actions_from = 0;
}

/* Show this session (a row of the sessions list) on the right. */
static unsigned hist_show_session(struct hist *h, json_t *s)
{
    const char *id = hist_str(s, "id");
    if (!model_id_valid(id) || (h->cur && strcmp(h->cur_id, id) == 0 && !h->actions_from))
        return 0;
    hist_right_reset(h);
    hist_obs_close(h);
    json_decref(h->cur);
    h->cur = json_incref(s);
    snprintf(h->cur_id, sizeof(h->cur_id), "%s", id);
    hist_fetch_visible(h);
    return UI_DIRTY_DETAIL;
}

static void hist_sessions_got(int status, json_t *reply, const char *err, void *ud)
{
    struct hist *h = HIST_OF(ud, sessions.tok);
    bool first = !h->sessions.loaded;
    hist_list_got(h, &h->sessions, status, reply, err, "sessions", "sessions");
    list_clamp(h->ui, UI_LIST_HISTORY);
    if (first && !h->query[0] && json_array_size(h->sessions.rows))
        h->ui->dirty |= hist_show_session(
            h, json_array_get(h->sessions.rows, h->ui->list[UI_LIST_HISTORY].sel));
    else if (first && !h->query[0]) { /* nothing matches: nothing on the right */
        hist_right_reset(h);
        json_decref(h->cur);
        h->cur = NULL;
        h->cur_id[0] = '\0';
    }
    hist_maybe_more(h, UI_LIST_HISTORY);
    h->ui->dirty |= UI_DIRTY_DETAIL;
}

static void hist_obs_open(struct hist *h, long long id)
{
    if (id <= 0 || id == h->obs_id)
        return;
    hist_obs_close(h);
    h->obs_id = id;
    h->obs.pending = true;
    char path[64];
    snprintf(path, sizeof(path), "/v1/actions/%lld", id);
    ui_request(h->ui, "GET", path, NULL, hist_obs_got, &h->obs.tok);
}

static void hist_results_got(int status, json_t *reply, const char *err, void *ud)
{
    struct hist *h = HIST_OF(ud, results.tok);
    bool first = !h->results.loaded;
    hist_list_got(h, &h->results, status, reply, err, "actions", "search");
    list_clamp(h->ui, UI_LIST_HISTORY_SEARCH);
    if (first && json_array_size(h->results.rows)) { /* preview the first result */
        json_t *a = json_array_get(h->results.rows, h->ui->list[UI_LIST_HISTORY_SEARCH].sel);
        hist_obs_open(h, (long long)json_integer_value(json_object_get(a, "id")));
    }
    hist_maybe_more(h, UI_LIST_HISTORY_SEARCH);
    h->ui->dirty |= UI_DIRTY_DETAIL;
}

static void hist_actions_got(int status, json_t *reply, const char *err, void *ud)
{
    struct hist *h = HIST_OF(ud, actions.tok);
    hist_list_got(h, &h->actions, status, reply, err, "actions", "actions");
    list_clamp(h->ui, UI_LIST_HISTORY_ACTIONS);
    hist_maybe_more(h, UI_LIST_HISTORY_ACTIONS);
    h->ui->dirty |= UI_DIRTY_DETAIL;
}

static void hist_cur_got(int status, json_t *reply, const char *err, void *ud)
{
    struct hist *h = HIST_OF(ud, tok_cur);
    if (status == 200 && json_is_object(reply) && strcmp(hist_str(reply, "id"), h->cur_id) == 0) {
        json_decref(h->cur);
        h->cur = json_incref(reply);
    } else {
        ui_set_error(h->ui, "session %s: %s", h->cur_id,
                     status < 0 ? (err ? err : "no answer")
                                : client_error_message(reply, "refused"));
    }
    h->ui->dirty |= UI_DIRTY_DETAIL;
}

/* The observation: what ran and what came back, as text to read (as the Actions tab's Enter
 * shows it: client/action_detail.c). */
static void hist_obs_got(int status, json_t *reply, const char *err, void *ud)
{
    struct hist *h = HIST_OF(ud, obs.tok);
    h->obs.pending = false;
    h->ui->dirty |= UI_DIRTY_DETAIL;
    if (status != 200 || !json_is_object(reply)) {
        char msg[400];
        snprintf(msg, sizeof(msg), "action %lld: %s", h->obs_id,
                 status < 0 ? (err ? err : "no answer") : client_error_message(reply, "refused"));
        h->obs.error = strdup(msg);
        h->obs.loaded = true;
        return;
    }
    struct action_detail d;
    if (action_detail_build(reply, &d) < 0) {
        h->obs.error = strdup("out of memory");
        h->obs.loaded = true;
        return;
    }
    hist_text_set(&h->obs, d.text, d.len, false);
    action_detail_free(&d);
}

/* Jump to an action of a search result: its session on the right, from that action down. */
static unsigned hist_jump(struct hist *h, json_t *action)
{
    const char *sid = hist_str(action, "session_id");
    long long id = (long long)json_integer_value(json_object_get(action, "id"));
    if (!model_id_valid(sid) || id <= 0)
        return 0;
    hist_right_reset(h);
    hist_obs_close(h);
    json_decref(h->cur);
    h->cur = NULL;
    snprintf(h->cur_id, sizeof(h->cur_id), "%s", sid);
    char path[160];
    snprintf(path, sizeof(path), "/v1/sessions/%s", sid);
    ui_request(h->ui, "GET", path, NULL, hist_cur_got, &h->tok_cur);
    h->actions_from = id;
    h->tab = HIST_TAB_ACTIONS;
    h->right = true;
    hist_fetch_visible(h);
    return UI_DIRTY_DETAIL;
}

/* ---- the three lists (struct ui_view) ---- */

static json_t *hist_row(const struct ui *ui, enum ui_list_id id, size_t row)
{
    struct hist *h = hist_find(ui);
    return h ? json_array_get(hist_list_of(h, id)->rows, row) : NULL;
}

static size_t hist_count(const struct ui *ui, enum ui_list_id id)
{
    struct hist *h = hist_find(ui);
    return h ? json_array_size(hist_list_of(h, id)->rows) : 0;
}

static const char *hist_list_empty(const struct ui *ui, enum ui_list_id id, const char *none)
{
    struct hist *h = hist_find(ui);
    struct hist_list *l = h ? hist_list_of(h, id) : NULL;
    if (!l || !l->loaded)
        return l && l->error ? l->error : "loading…";
    return l->error ? l->error : none;
}

static void hist_more_mark(const struct hist_list *l, char *buf, size_t sz)
{
    snprintf(buf, sz, "%zu%s", json_array_size(l->rows),
             l->pending          ? "+, loading"
             : hist_list_more(l) ? "+"
                                 : "");
}

/* sessions */

enum { SC_ID, SC_NAME, SC_STATE, SC_IMAGE, SC_CREATED, SC_ACTS };

static const struct list_column hist_sessions_columns[] = {
    [SC_ID] = {.title = "ID", .width = 8, .prio = 60},
    [SC_NAME] = {.title = "NAME", .width = 8, .prio = 100, .flex = true},
    [SC_STATE] = {.title = "STATE", .width = 10, .prio = 95},
    [SC_IMAGE] = {.title = "IMAGE", .width = 18, .prio = 40},
    [SC_CREATED] = {.title = "CREATED", .width = 16, .prio = 80},
    [SC_ACTS] = {.title = "ACTS", .width = 6, .prio = 70, .right = true},
};

static size_t hist_sessions_count(const struct ui *ui)
{
    return hist_count(ui, UI_LIST_HISTORY);
}

static void hist_sessions_title(const struct ui *ui, char *buf, size_t sz)
{
    struct hist *h = hist_find(ui);
    if (!h) {
        snprintf(buf, sz, "Sessions");
        return;
    }
    char n[48];
    hist_more_mark(&h->sessions, n, sizeof(n));
    const char *dot = draw_glyph(ui, " \xC2\xB7 ", " - ");
    snprintf(buf, sz, "Sessions (%s)%s%s%s%s%s%s%s%s", n, h->state ? dot : "",
             h->state ? "state " : "", h->state ? h->state : "", h->image[0] ? dot : "",
             h->image[0] ? "image ~" : "", h->image, h->range[0] ? dot : "", h->range);
}

static void hist_sessions_cell(const struct ui *ui, size_t row, int column, char *buf, size_t sz,
                               enum ui_color *color)
{
    json_t *s = hist_row(ui, UI_LIST_HISTORY, row);
    switch (column) {
    case SC_ID:
        snprintf(buf, sz, "%.8s", hist_str(s, "id"));
        *color = UI_C_DIM;
        break;
    case SC_NAME:
        snprintf(buf, sz, "%s", *hist_str(s, "name") ? hist_str(s, "name") : "-");
        break;
    case SC_STATE:
        snprintf(buf, sz, "%s", hist_str(s, "state"));
        *color = theme_state_color(hist_str(s, "state"));
        break;
    case SC_IMAGE:
        snprintf(buf, sz, "%s", hist_str(s, "image"));
        *color = UI_C_DIM;
        break;
    case SC_CREATED:
        history_format_time(hist_num(s, "created_at"), buf, sz);
        *color = UI_C_DIM;
        break;
    case SC_ACTS:
        snprintf(buf, sz, "%lld",
                 (long long)json_integer_value(json_object_get(s, "action_count")));
        break;
    default:
        break;
    }
}

static const char *hist_sessions_empty(const struct ui *ui)
{
    struct hist *h = hist_find(ui);
    bool filtered = h && (h->state || h->image[0] || h->range[0]);
    return hist_list_empty(ui, UI_LIST_HISTORY,
                           filtered ? "no session matches the filters (c clears them)"
                                    : "no sessions yet");
}

static unsigned hist_sessions_select(struct ui *ui, size_t row)
{
    struct hist *h = hist_find(ui);
    if (!h)
        return 0;
    unsigned dirty = hist_show_session(h, json_array_get(h->sessions.rows, row));
    hist_maybe_more(h, UI_LIST_HISTORY);
    return dirty | UI_DIRTY_DETAIL;
}

static void hist_sync(struct ui *ui)
{
    list_clamp(ui, UI_LIST_HISTORY);
}

const struct ui_view view_history = {
    .name = "history",
    .columns = hist_sessions_columns,
    .ncolumns = sizeof(hist_sessions_columns) / sizeof(hist_sessions_columns[0]),
    .count = hist_sessions_count,
    .title = hist_sessions_title,
    .cell = hist_sessions_cell,
    .empty = hist_sessions_empty,
    .on_select = hist_sessions_select,
    .sync = hist_sync,
    .dirty = UI_DIRTY_DETAIL,
};

/* search results */

enum { RC_TIME, RC_SESSION, RC_KIND, RC_COMMAND, RC_STATE };

static const struct list_column hist_results_columns[] = {
    [RC_TIME] = {.title = "TIME", .width = 16, .prio = 70},
    [RC_SESSION] = {.title = "SESSION", .width = 8, .prio = 90},
    [RC_KIND] = {.title = "KIND", .width = 5, .prio = 30},
    [RC_COMMAND] = {.title = "COMMAND", .width = 12, .prio = 100, .flex = true},
    [RC_STATE] = {.title = "STATE", .width = 8, .prio = 50},
};

static size_t hist_results_count(const struct ui *ui)
{
    return hist_count(ui, UI_LIST_HISTORY_SEARCH);
}

static void hist_results_title(const struct ui *ui, char *buf, size_t sz)
{
    struct hist *h = hist_find(ui);
    char n[48] = "";
    if (h)
        hist_more_mark(&h->results, n, sizeof(n));
    snprintf(buf, sz, "Search \"%s\" (%s found)", h ? h->query : "", n);
}

static void hist_results_cell(const struct ui *ui, size_t row, int column, char *buf, size_t sz,
                              enum ui_color *color)
{
    json_t *a = hist_row(ui, UI_LIST_HISTORY_SEARCH, row);
    switch (column) {
    case RC_TIME:
        history_format_time(hist_num(a, "created_at"), buf, sz);
        *color = UI_C_DIM;
        break;
    case RC_SESSION:
        snprintf(buf, sz, "%.8s", hist_str(a, "session_id"));
        *color = UI_C_DIM;
        break;
    case RC_KIND:
        snprintf(buf, sz, "%s", hist_str(a, "kind"));
        *color = UI_C_INFO;
        break;
    case RC_COMMAND:
        snprintf(buf, sz, "%s", hist_str(a, "summary"));
        break;
    case RC_STATE:
        snprintf(buf, sz, "%s", hist_str(a, "state"));
        *color = theme_state_color(hist_str(a, "state"));
        break;
    default:
        break;
    }
}

static const char *hist_results_empty(const struct ui *ui)
{
    return hist_list_empty(ui, UI_LIST_HISTORY_SEARCH, "nothing found (Esc: back to the sessions)");
}

static unsigned hist_results_select(struct ui *ui, size_t row)
{
    struct hist *h = hist_find(ui);
    if (!h)
        return 0;
    json_t *a = json_array_get(h->results.rows, row);
    hist_obs_open(h, (long long)json_integer_value(json_object_get(a, "id")));
    hist_maybe_more(h, UI_LIST_HISTORY_SEARCH);
    return UI_DIRTY_DETAIL;
}

static void hist_results_sync(struct ui *ui)
{
    list_clamp(ui, UI_LIST_HISTORY_SEARCH);
}

const struct ui_view view_history_search = {
    .name = "search",
    .columns = hist_results_columns,
    .ncolumns = sizeof(hist_results_columns) / sizeof(hist_results_columns[0]),
    .count = hist_results_count,
    .title = hist_results_title,
    .cell = hist_results_cell,
    .empty = hist_results_empty,
    .on_select = hist_results_select,
    .sync = hist_results_sync,
    .dirty = UI_DIRTY_DETAIL,
};

/* one session's actions */

enum { AC_ID, AC_TIME, AC_KIND, AC_SUMMARY, AC_STATE, AC_EXIT, AC_MS, AC_RISK };

static const struct list_column hist_actions_columns[] = {
    [AC_ID] = {.title = "ID", .width = 6, .prio = 50, .right = true},
    [AC_TIME] = {.title = "TIME", .width = 8, .prio = 60},
    [AC_KIND] = {.title = "KIND", .width = 5, .prio = 20},
    [AC_SUMMARY] = {.title = "SUMMARY", .width = 12, .prio = 100, .flex = true},
    [AC_STATE] = {.title = "STATE", .width = 8, .prio = 90},
    [AC_EXIT] = {.title = "EXIT", .width = 4, .prio = 80, .right = true},
    [AC_MS] = {.title = "MS", .width = 7, .prio = 40, .right = true},
    [AC_RISK] = {.title = "RISK", .width = 6, .prio = 30},
};

static size_t hist_actions_count(const struct ui *ui)
{
    return hist_count(ui, UI_LIST_HISTORY_ACTIONS);
}

static void hist_actions_title(const struct ui *ui, char *buf, size_t sz)
{
    (void)ui;
    snprintf(buf, sz, "Actions");
}

static void hist_actions_cell(const struct ui *ui, size_t row, int column, char *buf, size_t sz,
                              enum ui_color *color)
{
    json_t *a = hist_row(ui, UI_LIST_HISTORY_ACTIONS, row);
    json_t *v;
    switch (column) {
    case AC_ID:
        snprintf(buf, sz, "%lld", (long long)json_integer_value(json_object_get(a, "id")));
        *color = UI_C_DIM;
        break;
    case AC_TIME: {
        double t =
            hist_num(a, "started_at") > 0 ? hist_num(a, "started_at") : hist_num(a, "created_at");
        time_t sec = (time_t)t;
        struct tm tm;
        if (t <= 0 || !localtime_r(&sec, &tm) || !strftime(buf, sz, "%H:%M:%S", &tm))
            snprintf(buf, sz, "-");
        *color = UI_C_DIM;
        break;
    }
    case AC_KIND:
        snprintf(buf, sz, "%s", hist_str(a, "kind"));
        *color = UI_C_INFO;
        break;
    case AC_SUMMARY:
        snprintf(buf, sz, "%s", hist_str(a, "summary"));
        break;
    case AC_STATE:
        snprintf(buf, sz, "%s", hist_str(a, "state"));
        *color = theme_state_color(hist_str(a, "state"));
        break;
    case AC_EXIT:
        v = json_object_get(a, "exit_code");
        if (json_is_integer(v)) {
            snprintf(buf, sz, "%lld", (long long)json_integer_value(v));
            *color = json_integer_value(v) == 0 ? UI_C_OK : UI_C_BAD;
        } else {
            snprintf(buf, sz, "-");
            *color = UI_C_DIM;
        }
        break;
    case AC_MS: {
        v = json_object_get(a, "duration_ms");
        double ms = json_number_value(v);
        if (!json_is_number(v))
            snprintf(buf, sz, "-");
        else if (ms < 100)
            snprintf(buf, sz, "%.2f", ms);
        else if (ms < 100000)
            snprintf(buf, sz, "%.0f", ms);
        else
            snprintf(buf, sz, "%.0fs", ms / 1000);
        *color = UI_C_DIM;
        break;
    }
    case AC_RISK: {
        const char *r = hist_str(a, "risk");
        snprintf(buf, sz, "%s", r);
        *color = strcmp(r, "high") == 0     ? UI_C_BAD
                 : strcmp(r, "medium") == 0 ? UI_C_WARN
                                            : UI_C_DIM;
        break;
    }
    default:
        break;
    }
}

static const char *hist_actions_empty(const struct ui *ui)
{
    return hist_list_empty(ui, UI_LIST_HISTORY_ACTIONS, "no actions recorded");
}

static unsigned hist_actions_select(struct ui *ui, size_t row)
{
    (void)row;
    struct hist *h = hist_find(ui);
    if (h)
        hist_maybe_more(h, UI_LIST_HISTORY_ACTIONS);
    return UI_DIRTY_DETAIL;
}

static void hist_actions_sync(struct ui *ui)
{
    list_clamp(ui, UI_LIST_HISTORY_ACTIONS);
}

const struct ui_view view_history_actions = {
    .name = "history actions",
    .columns = hist_actions_columns,
    .ncolumns = sizeof(hist_actions_columns) / sizeof(hist_actions_columns[0]),
    .count = hist_actions_count,
    .title = hist_actions_title,
    .cell = hist_actions_cell,
    .empty = hist_actions_empty,
    .on_select = hist_actions_select,
    .sync = hist_actions_sync,
    .dirty = UI_DIRTY_DETAIL,
};

/* ---- drawing ---- */

/* Graph one metric of the samples into rows y..y+height of w: a label line, then the graph;
 * the samples are averaged (or their maximum taken) into the columns there are. */
struct hist_metric {
    const char *name, *key;
    double scale; /* shown value = raw / scale */
    const char *unit;
    double at_least; /* the scale's smallest top */
    bool peak;       /* the maximum of a column's samples, not their average */
};

static const struct hist_metric hist_metrics[] = {
    {.name = "CPU", .key = "cpu", .scale = 1, .unit = "%", .at_least = 1},
    {.name = "Memory", .key = "mem", .scale = 1048576.0, .unit = "MiB", .at_least = 1},
    {.name = "PIDs", .key = "pids", .scale = 1, .unit = "", .at_least = 1, .peak = true},
};

static void hist_draw_metric(struct ui *ui, WINDOW *w, json_t *samples, const struct hist_metric *m,
                             int y, int x, int width, int height)
{
    size_t n = json_array_size(samples);
    enum graph_mode mode = ui->utf8 ? GRAPH_BRAILLE : GRAPH_ASCII;
    size_t slots = (size_t)width * (mode == GRAPH_BRAILLE ? 2 : 1);
    size_t cols = n ? slots : 0; /* the whole session spans the width: few samples stretch */
    double *raw = malloc((n ? n : 1) * sizeof(double));
    double *v = calloc(cols ? cols : 1, sizeof(double));
    if (!raw || !v) {
        free(raw);
        free(v);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *val = json_object_get(json_array_get(samples, i), m->key);
        raw[i] = json_is_number(val) ? json_number_value(val) / m->scale : NAN;
    }
    graph_bucket(raw, n, cols, m->peak, v);
    double peak = 0, last = NAN;
    for (size_t c = 0; c < cols; c++) {
        if (!isnan(v[c])) {
            last = v[c];
            if (v[c] > peak)
                peak = v[c];
        }
    }
    double top = graph_nice_max(v, cols, m->at_least);
    char label[256], lastbuf[32] = "-";
    if (!isnan(last))
        snprintf(lastbuf, sizeof(lastbuf), "%.1f", last);
    snprintf(label, sizeof(label), "%s %s last %s, peak %.1f, scale %g%s%s", m->name,
             draw_glyph(ui, "\xC2\xB7", "-"), lastbuf, peak, top, *m->unit ? " " : "", m->unit);
    draw_text(ui, w, y, x, width, label, theme_attr(UI_C_TITLE));
    draw_graph(ui, w, y + 1, x, width, height, v, cols, top, mode, theme_attr(UI_C_INFO));
    free(raw);
    free(v);
}

static void hist_draw_graphs(struct ui *ui, struct hist *h, WINDOW *w, int y, int x, int height,
                             int width)
{
    if (h->samples_error) {
        draw_text(ui, w, y, x, width, h->samples_error, theme_attr(UI_C_BAD));
        return;
    }
    if (!h->samples_loaded) {
        draw_text(ui, w, y, x, width, "loading…", theme_attr(UI_C_DIM));
        return;
    }
    size_t n = json_array_size(h->samples);
    if (n == 0) {
        draw_text(ui, w, y, x, width, "no resource samples stored for this session",
                  theme_attr(UI_C_DIM));
        return;
    }
    char t0[32], t1[32], span[32], line[160];
    double first = hist_num(json_array_get(h->samples, 0), "at");
    double lastat = hist_num(json_array_get(h->samples, n - 1), "at");
    history_format_time(first, t0, sizeof(t0));
    history_format_time(lastat, t1, sizeof(t1));
    history_format_span(lastat - first, span, sizeof(span));
    snprintf(line, sizeof(line), "%zu samples, %s %s %s (%s)", n, t0,
             draw_glyph(ui, "\xE2\x86\x92", "->"), t1, span);
    draw_text(ui, w, y, x, width, line, theme_attr(UI_C_DIM));
    int nm = (int)(sizeof(hist_metrics) / sizeof(hist_metrics[0]));
    int avail = height - 1;
    while (nm > 1 && avail / nm < 3) /* a label and two rows at least */
        nm--;
    int each = avail / nm;
    for (int i = 0; i < nm; i++)
        hist_draw_metric(ui, w, h->samples, &hist_metrics[i], y + 1 + i * each, x, width, each - 1);
}

/* The session's line on the right: state, image, when, how long, how many actions. */
static void hist_draw_info(struct ui *ui, struct hist *h, WINDOW *w, int y, int x, int width)
{
    if (!h->cur) {
        draw_text(ui, w, y, x, width, h->cur_id[0] ? "loading…" : "", theme_attr(UI_C_DIM));
        return;
    }
    const char *state = hist_str(h->cur, "state");
    int used = draw_text(ui, w, y, x, width, state, theme_attr(theme_state_color(state)));
    char created[32], span[32], line[700];
    double c = hist_num(h->cur, "created_at"), u = hist_num(h->cur, "updated_at");
    history_format_time(c, created, sizeof(created));
    const char *dot = draw_glyph(ui, " \xC2\xB7 ", " - ");
    /* deleted and error sessions have ended: updated_at is when */
    bool ended = strcmp(state, "deleted") == 0 || strcmp(state, "error") == 0;
    history_format_span((ended ? u : (double)time(NULL)) - c, span, sizeof(span));
    snprintf(line, sizeof(line), "%s%s%screated %s%s%s %s%s%lld actions", dot,
             hist_str(h->cur, "image"), dot, created, dot, ended ? "ended after" : "up", span, dot,
             (long long)json_integer_value(json_object_get(h->cur, "action_count")));
    draw_text(ui, w, y, x + used, width - used, line, theme_attr(UI_C_DIM));
    const char *why =
        *hist_str(h->cur, "error") ? hist_str(h->cur, "error") : hist_str(h->cur, "reason");
    if (*why)
        draw_text(ui, w, y + 1, x, width, why, theme_attr(UI_C_DIM));
}

static void hist_draw_right(struct ui *ui, struct hist *h, WINDOW *w, bool focused)
{
    int H = getmaxy(w), W = getmaxx(w);
    char title[200];
    const char *name = h->cur ? hist_str(h->cur, "name") : "";
    if (h->obs_id)
        snprintf(title, sizeof(title), "Action %lld", h->obs_id);
    else if (h->cur_id[0])
        snprintf(title, sizeof(title), "%s%s%.8s%s", name, *name ? " (" : "", h->cur_id,
                 *name ? ")" : "");
    else
        snprintf(title, sizeof(title), "Session");
    draw_frame(ui, w, title, focused);
    int x = 2, width = W - 4, y = 1, bottom = H - 1;
    if (width < 1 || bottom - y < 1)
        return;
    if (h->obs_id) { /* the whole observation over the right side */
        hist_text_draw(ui, &h->obs, w, y, x, bottom - y, width, "(empty)");
        size_t first, last, total;
        if (h->obs.loaded && !h->obs.error)
            textview_position(&h->obs.tv, &first, &last, &total);
        if (h->obs.loaded && !h->obs.error && total > (size_t)h->obs.tv.height) {
            char more[64];
            snprintf(more, sizeof(more), " %zu-%zu of %zu ", first, last, total);
            int mw = (int)strlen(more);
            if (mw < W - 4)
                draw_text(ui, w, H - 1, W - 2 - mw, mw, more,
                          theme_attr(focused ? UI_C_BORDER_FOCUS : UI_C_BORDER));
        }
        return;
    }
    if (!h->cur_id[0]) {
        draw_text(ui, w, y, x, width, "no session selected", theme_attr(UI_C_DIM));
        return;
    }
    hist_draw_info(ui, h, w, y, x, width);
    y += 2;
    /* the views of the session ([ and ]) in the dashboard's tab bar */
    int tx =
        draw_tabs(ui, w, y, x, x + width, hist_tab_names, HIST_NTABS, h->tab, focused, false, NULL);
    if (h->tab == HIST_TAB_LOG && h->log_source[0] && tx < x + width - 12)
        draw_text(ui, w, y, tx + 1, x + width - tx - 1,
                  strcmp(h->log_source, "stored") == 0 ? "(kept when the container went)"
                                                       : "(from the container)",
                  theme_attr(UI_C_DIM));
    y += 1;
    if (bottom - y < 1)
        return;
    switch (h->tab) {
    case HIST_TAB_ACTIONS: {
        WINDOW *lw = derwin(w, bottom - y, W - 2, y, 1);
        if (lw) {
            list_draw(ui, UI_LIST_HISTORY_ACTIONS, lw, focused, false);
            delwin(lw);
        }
        break;
    }
    case HIST_TAB_LOG:
        hist_text_draw(ui, &h->log, w, y, x, bottom - y, width, "the log is empty");
        break;
    case HIST_TAB_GRAPHS:
        hist_draw_graphs(ui, h, w, y, x, bottom - y, width);
        break;
    default:
        break;
    }
}

static void hist_draw(struct ui *ui, WINDOW *w, bool focused)
{
    struct hist *h = hist_find(ui);
    if (!h)
        return;
    int H = getmaxy(w), W = getmaxx(w);
    int left = W < 80 ? W / 2 : W * 9 / 20;
    WINDOW *lw = derwin(w, H, left, 0, 0);
    WINDOW *rw = derwin(w, H, W - left, 0, left);
    if (lw)
        list_draw(ui, hist_left_list(h), lw, focused && !h->right, true);
    if (rw)
        hist_draw_right(ui, h, rw, focused && h->right);
    if (lw)
        delwin(lw);
    if (rw)
        delwin(rw);
    touchwin(w); /* what the subwindows drew goes out with w */
}

/* ---- keys ---- */

/* What the keyboard moves: a list, or a text (observation, log); NULL text for a list. */
static int hist_target(struct hist *h, struct hist_text **text)
{
    *text = NULL;
    if (!h->right)
        return (int)hist_left_list(h);
    if (h->obs_id) {
        *text = &h->obs;
        return -1;
    }
    if (h->tab == HIST_TAB_LOG) {
        *text = &h->log;
        return -1;
    }
    return h->tab == HIST_TAB_ACTIONS ? UI_LIST_HISTORY_ACTIONS : -1;
}

static unsigned hist_move(struct ui *ui, long delta, bool page)
{
    struct hist *h = hist_find(ui);
    if (!h)
        return 0;
    struct hist_text *t;
    int id = hist_target(h, &t);
    if (t) {
        textview_scroll(&t->tv, page ? delta * textview_page(&t->tv) : delta);
        return UI_DIRTY_DETAIL;
    }
    if (id < 0)
        return 0;
    long rows = ui->list[id].rows > 1 ? ui->list[id].rows - 1 : 1;
    return list_move(ui, (enum ui_list_id)id, page ? delta * rows : delta) | UI_DIRTY_DETAIL;
}

static unsigned hist_down(struct ui *ui)
{
    return hist_move(ui, 1, false);
}

static unsigned hist_up(struct ui *ui)
{
    return hist_move(ui, -1, false);
}

static unsigned hist_page_down(struct ui *ui)
{
    return hist_move(ui, 1, true);
}

static unsigned hist_page_up(struct ui *ui)
{
    return hist_move(ui, -1, true);
}

static unsigned hist_edge(struct ui *ui, bool bottom)
{
    struct hist *h = hist_find(ui);
    if (!h)
        return 0;
    struct hist_text *t;
    int id = hist_target(h, &t);
    if (t) {
        if (bottom)
            textview_end(&t->tv);
        else
            textview_home(&t->tv);
        return UI_DIRTY_DETAIL;
    }
    if (id == UI_LIST_HISTORY_ACTIONS && !bottom && h->actions_from) {
        /* the list began at a search result: from the newest now */
        h->actions_from = 0;
        hist_list_reset(ui, &h->actions);
        ui->list[id].sel = ui->list[id].top = 0;
        hist_fetch_actions(h);
        return UI_DIRTY_DETAIL;
    }
    return id < 0 ? 0 : list_jump(ui, (enum ui_list_id)id, bottom) | UI_DIRTY_DETAIL;
}

static unsigned hist_top(struct ui *ui)
{
    return hist_edge(ui, false);
}

static unsigned hist_bottom(struct ui *ui)
{
    return hist_edge(ui, true);
}

static unsigned hist_side(struct ui *ui, int to) /* 0 left, 1 right, -1 the other */
{
    struct hist *h = hist_find(ui);
    if (!h)
        return 0;
    bool right = to < 0 ? !h->right : to == 1;
    if (right && !h->cur_id[0])
        return 0;
    h->right = right;
    return UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
}

static unsigned hist_switch(struct ui *ui)
{
    return hist_side(ui, -1);
}

static unsigned hist_go_left(struct ui *ui)
{
    return hist_side(ui, 0);
}

static unsigned hist_go_right(struct ui *ui)
{
    return hist_side(ui, 1);
}

static unsigned hist_enter(struct ui *ui)
{
    struct hist *h = hist_find(ui);
    if (!h)
        return 0;
    if (!h->right && h->query[0]) {
        json_t *a = json_array_get(h->results.rows, ui->list[UI_LIST_HISTORY_SEARCH].sel);
        return a ? hist_jump(h, a) : 0;
    }
    if (!h->right)
        return hist_side(ui, 1);
    if (h->tab == HIST_TAB_ACTIONS && !h->obs_id) {
        json_t *a = json_array_get(h->actions.rows, ui->list[UI_LIST_HISTORY_ACTIONS].sel);
        if (a)
            hist_obs_open(h, (long long)json_integer_value(json_object_get(a, "id")));
        return UI_DIRTY_DETAIL;
    }
    return 0;
}

static unsigned hist_tab_step(struct ui *ui, int step)
{
    struct hist *h = hist_find(ui);
    if (!h)
        return 0;
    hist_obs_close(h);
    h->tab = (enum hist_tab)(((int)h->tab + step + HIST_NTABS) % HIST_NTABS);
    hist_fetch_visible(h);
    return UI_DIRTY_DETAIL;
}

static unsigned hist_tab_next(struct ui *ui)
{
    return hist_tab_step(ui, 1);
}

static unsigned hist_tab_prev(struct ui *ui)
{
    return hist_tab_step(ui, -1);
}

/* The sessions list again from its first page, with the filters as they are now. */
static unsigned hist_reload(struct hist *h)
{
    struct ui *ui = h->ui;
    h->query[0] = '\0';
    hist_list_reset(ui, &h->results);
    hist_list_reset(ui, &h->sessions);
    ui->list[UI_LIST_HISTORY].sel = ui->list[UI_LIST_HISTORY].top = 0;
    hist_obs_close(h);
    h->right = false;
    hist_fetch_sessions(h);
    return UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
}

static unsigned hist_refresh(struct ui *ui)
{
    struct hist *h = hist_find(ui);
    if (!h)
        return 0;
    if (h->query[0]) { /* the same search again */
        hist_list_reset(ui, &h->results);
        ui->list[UI_LIST_HISTORY_SEARCH].sel = ui->list[UI_LIST_HISTORY_SEARCH].top = 0;
        hist_obs_close(h);
        hist_fetch_results(h);
        return UI_DIRTY_DETAIL;
    }
    return hist_reload(h);
}

static unsigned hist_state(struct ui *ui)
{
    struct hist *h = hist_find(ui);
    if (!h)
        return 0;
    h->state = history_state_next(h->state);
    ui_set_status(ui, "state: %s", h->state ? h->state : "any");
    return hist_reload(h);
}

static unsigned hist_image_done(struct ui *ui, const char *text, void *ud)
{
    (void)ud;
    struct hist *h = hist_find(ui); /* the page may have been reopened meanwhile */
    if (!h || !text)
        return UI_DIRTY_FOOTER;
    snprintf(h->image, sizeof(h->image), "%s", text);
    return hist_reload(h);
}

static unsigned hist_image(struct ui *ui)
{
    struct hist *h = hist_find(ui);
    if (!h)
        return 0;
    prompt_open(ui, "image contains (empty: any): ", h->image, hist_image_done, NULL);
    return UI_DIRTY_FOOTER;
}

static unsigned hist_date_done(struct ui *ui, const char *text, void *ud)
{
    (void)ud;
    struct hist *h = hist_find(ui);
    if (!h || !text)
        return UI_DIRTY_FOOTER;
    char err[200];
    double since, until;
    if (history_parse_range(text, time(NULL), &since, &until, err, sizeof(err)) < 0) {
        ui_set_error(ui, "%s", err);
        return UI_DIRTY_FOOTER;
    }
    h->since = since;
    h->until = until;
    while (*text == ' ')
        text++;
    snprintf(h->range, sizeof(h->range), "%s", text);
    return hist_reload(h);
}

static unsigned hist_date(struct ui *ui)
{
    struct hist *h = hist_find(ui);
    if (!h)
        return 0;
    prompt_open(ui, "created since (7d, 2026-11-01, A..B; empty: any): ", h->range, hist_date_done,
                NULL);
    return UI_DIRTY_FOOTER;
}

static unsigned hist_search_done(struct ui *ui, const char *text, void *ud)
{
    (void)ud;
    struct hist *h = hist_find(ui);
    if (!h || !text)
        return UI_DIRTY_FOOTER;
    while (*text == ' ')
        text++;
    if (!*text) { /* an empty search: back to the sessions */
        h->query[0] = '\0';
        hist_list_reset(ui, &h->results);
        hist_obs_close(h);
        return UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
    }
    snprintf(h->query, sizeof(h->query), "%s", text);
    hist_list_reset(ui, &h->results);
    ui->list[UI_LIST_HISTORY_SEARCH].sel = ui->list[UI_LIST_HISTORY_SEARCH].top = 0;
    hist_obs_close(h);
    h->right = false;
    hist_fetch_results(h);
    return UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
}

static unsigned hist_search(struct ui *ui)
{
    struct hist *h = hist_find(ui);
    if (!h)
        return 0;
    prompt_open(ui, "search commands and outputs: ", h->query, hist_search_done, NULL);
    return UI_DIRTY_FOOTER;
}

static unsigned hist_clear(struct ui *ui)
{
    struct hist *h = hist_find(ui);
    if (!h)
        return 0;
    h->state = NULL;
    h->image[0] = h->range[0] = '\0';
    h->since = h->until = 0;
    ui_set_status(ui, "filters cleared");
    return hist_reload(h);
}

/* Esc: close the observation, leave the right side, end the search, leave the page. */
static unsigned hist_back(struct ui *ui)
{
    struct hist *h = hist_find(ui);
    if (!h)
        return ui_show_page(ui, NULL);
    if (h->right && h->obs_id) {
        hist_obs_close(h);
        return UI_DIRTY_DETAIL;
    }
    if (h->right)
        return hist_side(ui, 0);
    if (h->query[0]) {
        h->query[0] = '\0';
        hist_list_reset(ui, &h->results);
        hist_obs_close(h);
        return UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
    }
    return ui_show_page(ui, NULL);
}

static const struct ui_key hist_keys[] = {
    {.key = 'j',
     .name = "j",
     .help = "move down (the next page loads as the end nears)",
     .fn = hist_down,
     .hint = "j/k move"},
    {.key = KEY_DOWN, .name = "Down", .help = "move down", .fn = hist_down},
    {.key = 'k', .name = "k", .help = "move up", .fn = hist_up},
    {.key = KEY_UP, .name = "Up", .help = "move up", .fn = hist_up},
    {.key = KEY_NPAGE, .name = "PgDn", .help = "page down", .fn = hist_page_down},
    {.key = KEY_CTRL('f'), .name = "^F", .help = "page down", .fn = hist_page_down},
    {.key = KEY_PPAGE, .name = "PgUp", .help = "page up", .fn = hist_page_up},
    {.key = KEY_CTRL('b'), .name = "^B", .help = "page up", .fn = hist_page_up},
    {.key = 'g', .name = "g", .help = "the first row (the newest)", .fn = hist_top},
    {.key = KEY_HOME, .name = "Home", .help = "the first row (the newest)", .fn = hist_top},
    {.key = 'G',
     .name = "G",
     .help = "the last row loaded (the next page follows)",
     .fn = hist_bottom},
    {.key = KEY_END, .name = "End", .help = "the last row loaded", .fn = hist_bottom},
    {.key = '\t',
     .name = "Tab",
     .help = "the list or the session",
     .fn = hist_switch,
     .hint = "Tab side"},
    {.key = 'h', .name = "h", .help = "the list (left)", .fn = hist_go_left},
    {.key = KEY_LEFT, .name = "Left", .help = "the list (left)", .fn = hist_go_left},
    {.key = 'l', .name = "l", .help = "the session (right)", .fn = hist_go_right},
    {.key = KEY_RIGHT, .name = "Right", .help = "the session (right)", .fn = hist_go_right},
    {.key = '\n',
     .name = "Enter",
     .help = "open: the session, an action's observation, a result's session",
     .fn = hist_enter,
     .hint = "Enter open"},
    {.key = KEY_ENTER, .name = "Enter", .help = "open", .fn = hist_enter},
    {.key = ']',
     .name = "]",
     .help = "the session's next view: actions, log, graphs",
     .fn = hist_tab_next,
     .hint = "[/] view"},
    {.key = '[', .name = "[", .help = "the session's previous view", .fn = hist_tab_prev},
    {.key = '/',
     .name = "/",
     .help = "search commands and outputs (every word must appear)",
     .fn = hist_search,
     .hint = "/ search"},
    {.key = 's',
     .name = "s",
     .help = "filter by state (cycles: any, deleted, ready, paused ...)",
     .fn = hist_state,
     .hint = "s state"},
    {.key = 'i',
     .name = "i",
     .help = "filter by image (text the image contains)",
     .fn = hist_image,
     .hint = "i image"},
    {.key = 'd',
     .name = "d",
     .help = "filter by creation date: 7d, 2026-11-01, 2026-11-01..2026-11-15",
     .fn = hist_date,
     .hint = "d date"},
    {.key = 'c',
     .name = "c",
     .help = "clear the filters and the search",
     .fn = hist_clear,
     .hint = "c clear"},
    {.key = 'r', .name = "r", .help = "reload with the same filters", .fn = hist_refresh},
    {.key = 27,
     .name = "Esc",
     .help = "back: the observation, the list, the sessions, the main screen",
     .fn = hist_back,
     .hint = "Esc back"},
    {0},
};

/* ---- the page ---- */

static int hist_page_size(void)
{
    const char *e = getenv("PADDOCK_HISTORY_PAGE"); /* small pages for tests */
    char *end = NULL;
    long n = e && *e ? strtol(e, &end, 10) : 0;
    return end && !*end && n >= 1 && n <= 1000 ? (int)n : HIST_PAGE_DEFAULT;
}

static void hist_close(struct ui *ui);

static unsigned hist_open(struct ui *ui)
{
    void **slot = ui_page_slot(ui, &page_history);
    if (!slot)
        return 0;
    if (*slot)
        hist_close(ui);
    struct hist *h = calloc(1, sizeof(*h));
    if (!h) {
        ui_set_error(ui, "history: out of memory");
        return UI_DIRTY_FOOTER;
    }
    *slot = h;
    h->ui = ui;
    h->page = hist_page_size();
    hist_text_clear(ui, &h->log);
    hist_text_clear(ui, &h->obs);
    h->sessions.rows = json_array();
    h->results.rows = json_array();
    h->actions.rows = json_array();
    static const enum ui_list_id lists[] = {UI_LIST_HISTORY, UI_LIST_HISTORY_ACTIONS,
                                            UI_LIST_HISTORY_SEARCH};
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
        ui->list[lists[i]].sel = ui->list[lists[i]].top = 0;
    hist_fetch_sessions(h);
    return UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
}

static void hist_list_free(struct ui *ui, struct hist_list *l)
{
    ui_cancel(ui, &l->tok);
    json_decref(l->rows);
    free(l->next);
    free(l->error);
}

static void hist_close(struct ui *ui)
{
    void **slot = ui_page_slot(ui, &page_history);
    struct hist *h = slot ? *slot : NULL;
    if (!h)
        return;
    hist_list_free(ui, &h->sessions);
    hist_list_free(ui, &h->results);
    hist_list_free(ui, &h->actions);
    hist_text_clear(ui, &h->log);
    hist_text_clear(ui, &h->obs);
    ui_cancel(ui, &h->tok_samples);
    ui_cancel(ui, &h->tok_cur);
    json_decref(h->samples);
    free(h->samples_error);
    json_decref(h->cur);
    free(h);
    *slot = NULL;
}

/* Live sessions change while the page is open: their rows follow (new sessions wait for r). */
static unsigned hist_on_event(struct ui *ui, const char *type, json_t *data)
{
    struct hist *h = hist_find(ui);
    if (!h || !json_is_object(data))
        return 0;
    if (strcmp(type, "session") == 0) {
        const char *id = hist_str(data, "id");
        size_t i;
        json_t *row;
        unsigned dirty = 0;
        json_array_foreach(h->sessions.rows, i, row)
        {
            if (strcmp(hist_str(row, "id"), id) == 0) {
                json_array_set(h->sessions.rows, i, data);
                dirty = UI_DIRTY_DETAIL;
                break;
            }
        }
        if (h->cur && strcmp(h->cur_id, id) == 0) {
            json_decref(h->cur);
            h->cur = json_incref(data);
            dirty = UI_DIRTY_DETAIL;
        }
        return dirty;
    }
    if (strcmp(type, "action") == 0 && strcmp(hist_str(data, "session_id"), h->cur_id) == 0 &&
        h->actions.loaded && !h->actions_from) {
        long long id = (long long)json_integer_value(json_object_get(data, "id"));
        size_t i;
        json_t *row;
        json_array_foreach(h->actions.rows, i, row)
        {
            if (json_integer_value(json_object_get(row, "id")) == id) {
                json_array_set(h->actions.rows, i, data);
                return UI_DIRTY_DETAIL;
            }
        }
        json_t *first = json_array_get(h->actions.rows, 0);
        if (!first || id > json_integer_value(json_object_get(first, "id"))) {
            json_array_insert(h->actions.rows, 0, data);
            if (first) /* the selection stays on the action it was on */
                ui->list[UI_LIST_HISTORY_ACTIONS].sel++;
            list_clamp(ui, UI_LIST_HISTORY_ACTIONS);
            return UI_DIRTY_DETAIL;
        }
    }
    return 0;
}

static const char *hist_hint(const struct ui *ui)
{
    (void)ui;
    return "Esc back";
}

const struct ui_page page_history = {
    .name = "History",
    .key = '3',
    .keys = hist_keys,
    .list = -1, /* two sides: its own keys move the one with the keyboard */
    .open = hist_open,
    .close = hist_close,
    .draw = hist_draw,
    .on_event = hist_on_event,
    .hint = hist_hint,
};

unsigned page_history_show(struct ui *ui)
{
    return ui_show_page(ui, &page_history);
}
