/* ui_run: the dashboard's one event loop. poll() on the terminal, the signal self-pipe and the
 * engine's event stream; events update the model, keys go through the key table, and each
 * turn ends with at most one frame (only dirty windows, one doupdate). Event-driven frames
 * are coalesced to UI_FRAME_MS; keys and resizes draw at once. */
#include "client/client.h"
#include "client/client_async.h"
#include "ui/ui_internal.h"

#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define UI_FRAME_MS 16             /* at most ~60 event-driven frames a second */
#define UI_RECONNECT_MS 1000       /* the first retry of an engine that went away */
#define UI_RECONNECT_MAX_MS 8000   /* the longest wait between retries (doubling up to it) */
#define UI_SESSIONS_REFETCH_MS 200 /* a session's lifecycle event the list cannot apply */

/* The detail pane's tabs, in order: one entry per tab file. */
extern const struct ui_page tab_overview, tab_resources, tab_terminal;
const struct ui_page *const ui_tabs[] = {
    &tab_overview, &tab_logs,    &tab_actions, &tab_resources,
    &tab_terminal, &tab_changes, &tab_files,   &tab_egress,
};
const size_t ui_ntabs = sizeof(ui_tabs) / sizeof(ui_tabs[0]);

const struct ui_view *const ui_lists[UI_LIST_COUNT] = {
    [UI_LIST_SESSIONS] = &view_sessions,
    [UI_LIST_APPROVALS] = &view_approvals,
    [UI_LIST_ACTIONS] = &view_actions,
    [UI_LIST_HISTORY] = &view_history,
    [UI_LIST_HISTORY_ACTIONS] = &view_history_actions,
    [UI_LIST_HISTORY_SEARCH] = &view_history_search,
    [UI_LIST_CHANGES] = &view_changes,
    [UI_LIST_FILES] = &view_files,
};

#define UI_REQUEST_MS 10000 /* a fetch that takes longer is reported, not waited for */
#define UI_APPROVALS_REFETCH_MS 50

int64_t ui_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void ui_vstatus(struct ui *ui, bool error, const char *fmt, va_list ap)
{
    vsnprintf(ui->status, sizeof(ui->status), fmt, ap);
    ui->status_error = error;
    ui->dirty |= UI_DIRTY_FOOTER;
}

void ui_set_status(struct ui *ui, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ui_vstatus(ui, false, fmt, ap);
    va_end(ap);
}

void ui_set_error(struct ui *ui, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ui_vstatus(ui, true, fmt, ap);
    va_end(ap);
}

/* Recover the ui from the address of one of its token fields. */
#define UI_FROM_TOKEN(ud, field) ((struct ui *)((char *)(ud)-offsetof(struct ui, field)))

static void ui_request_failed(int status, json_t *reply, const char *err, void *ud)
{
    (void)ud;
    (void)status;
    (void)reply;
    (void)err;
}

size_t ui_engine_index(const struct ui *ui, const char *sid)
{
    ssize_t at = model_find_session(&ui->model, sid);
    if (at < 0 && sid != ui->sel_session)
        at = model_find_session(&ui->model, ui->sel_session);
    size_t e = at >= 0 ? ui->model.sessions[at].engine : 0;
    return e < ui->nengines ? e : 0;
}

struct client *ui_client_of(const struct ui *ui, const char *sid)
{
    return ui->engines[ui_engine_index(ui, sid)].client;
}

bool ui_engine_up(const struct ui *ui, const char *sid)
{
    return ui->engines[ui_engine_index(ui, sid)].connected;
}

bool ui_any_engine_up(const struct ui *ui)
{
    for (size_t i = 0; i < ui->nengines; i++)
        if (ui->engines[i].connected)
            return true;
    return false;
}

int ui_request_on(struct ui *ui, size_t engine, const char *method, const char *path, json_t *body,
                  void (*fn)(int status, json_t *reply, const char *err, void *ud), void *ud)
{
    struct client *c = ui->engines[engine < ui->nengines ? engine : 0].client;
    if (client_async_request_on(ui->async, c, method, path, body, UI_REQUEST_MS,
                                fn ? fn : ui_request_failed, ud) < 0) {
        ui_set_error(ui, "%s %s: out of memory", method, path);
        return -1;
    }
    return 0;
}

int ui_request(struct ui *ui, const char *method, const char *path, json_t *body,
               void (*fn)(int status, json_t *reply, const char *err, void *ud), void *ud)
{
    /* a session's own routes go to its engine, whatever is selected */
    static const char prefix[] = "/v1/sessions/";
    char sid[72] = "";
    if (strncmp(path, prefix, sizeof(prefix) - 1) == 0) {
        const char *p = path + sizeof(prefix) - 1;
        size_t n = strcspn(p, "/?");
        if (n < sizeof(sid))
            snprintf(sid, sizeof(sid), "%.*s", (int)n, p);
    }
    return ui_request_on(ui, ui_engine_index(ui, sid[0] ? sid : ui->sel_session), method, path,
                         body, fn, ud);
}

void ui_cancel(struct ui *ui, void *ud)
{
    client_async_cancel(ui->async, ud);
}

void ui_modal_open(struct ui *ui, const struct ui_modal *m, void *state)
{
    ui_modal_close(ui);
    ui->modal = m;
    ui->modal_state = state;
    ui->dirty |= UI_DIRTY_ALL;
}

void ui_modal_close(struct ui *ui)
{
    const struct ui_modal *m = ui->modal;
    if (!m)
        return;
    ui->modal = NULL;
    if (m->close)
        m->close(ui);
    else
        free(ui->modal_state);
    ui->modal_state = NULL;
    if (ui->win_modal) {
        delwin(ui->win_modal);
        ui->win_modal = NULL;
    }
    ui->dirty |= UI_DIRTY_ALL;
}

const struct model_session *ui_session(const struct ui *ui)
{
    ssize_t at = model_find_session(&ui->model, ui->sel_session);
    return at >= 0 ? &ui->model.sessions[at] : NULL;
}

void **ui_page_slot(struct ui *ui, const struct ui_page *p)
{
    size_t n = sizeof(ui->slots) / sizeof(ui->slots[0]);
    for (size_t i = 0; i < n; i++)
        if (ui->slots[i].page == p)
            return &ui->slots[i].state;
    for (size_t i = 0; i < n; i++) {
        if (!ui->slots[i].page) {
            ui->slots[i].page = p;
            return &ui->slots[i].state;
        }
    }
    return NULL; /* more pages than slots: a programming error, seen at once */
}

const struct ui_page *ui_current_page(const struct ui *ui)
{
    if (ui->page)
        return ui->page;
    return ui_ntabs ? ui_tabs[ui->tab < ui_ntabs ? ui->tab : 0] : NULL;
}

void ui_page_close(struct ui *ui)
{
    const struct ui_page *p = ui->page_open;
    ui->page_open = NULL;
    if (p && p->close)
        p->close(ui);
}

void ui_pages_end(struct ui *ui)
{
    ui_page_close(ui);
    for (size_t i = 0; i < ui_ntabs; i++)
        if (ui_tabs[i]->end)
            ui_tabs[i]->end(ui);
}

/* Close what is open and open what is current (after a tab, page or session change). */
static unsigned ui_page_reopen(struct ui *ui)
{
    ui_page_close(ui);
    const struct ui_page *p = ui_current_page(ui);
    ui->page_open = p;
    unsigned dirty = UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
    if (p && p->open)
        dirty |= p->open(ui);
    return dirty;
}

unsigned ui_show_tab(struct ui *ui, size_t tab)
{
    if (tab >= ui_ntabs || (tab == ui->tab && !ui->page))
        return 0;
    ui->tab = tab;
    ui->page = NULL;
    ui_set_status(ui, "%s", ""); /* a message about the page left would be stale */
    return ui_page_reopen(ui) | UI_DIRTY_LAYOUT;
}

unsigned ui_show_page(struct ui *ui, const struct ui_page *p)
{
    if (ui->page == p)
        return 0;
    ui->page = p;
    ui_set_status(ui, "%s", "");
    return ui_page_reopen(ui) | UI_DIRTY_LAYOUT;
}

static void ui_actions_fetched(int status, json_t *reply, const char *err, void *ud)
{
    struct ui *ui = UI_FROM_TOKEN(ud, tok_actions);
    const char *why = NULL;
    if (status < 0)
        ui_set_error(ui, "fetching actions: %s", err ? err : "no answer");
    else if (status != 200)
        ui_set_error(ui, "fetching actions: %s", client_error_message(reply, "refused"));
    else if (!ui->sel_session || model_set_actions(&ui->model, ui->sel_session, reply, &why) < 0)
        ui_set_error(ui, "fetching actions: %s", why ? why : "no session");
    view_actions.sync(ui);
    ui->dirty |= UI_DIRTY_DETAIL;
}

/* Fetch the actions of the selected session into the model. */
static void ui_fetch_actions(struct ui *ui)
{
    ui_cancel(ui, &ui->tok_actions);
    model_clear_actions(&ui->model);
    view_actions.sync(ui);
    if (!ui->sel_session || !ui_engine_up(ui, ui->sel_session) || !model_id_valid(ui->sel_session))
        return;
    char path[160];
    snprintf(path, sizeof(path), "/v1/sessions/%s/actions?limit=%d", ui->sel_session,
             MODEL_ACTIONS_LIMIT);
    ui_request(ui, "GET", path, NULL, ui_actions_fetched, &ui->tok_actions);
}

unsigned ui_select_session(struct ui *ui, const char *id)
{
    bool same = id && ui->sel_session && strcmp(id, ui->sel_session) == 0;
    bool was_none = !id && !ui->sel_session;
    if (same || was_none)
        return 0;
    char *dup = id ? strdup(id) : NULL;
    free(ui->sel_session);
    ui->sel_session = dup;
    ui->list[UI_LIST_ACTIONS].sel = ui->list[UI_LIST_ACTIONS].top = 0;
    ui->sel_action = 0;
    ui->actions_follow = true;
    ui_fetch_actions(ui);
    unsigned dirty = UI_DIRTY_DETAIL | UI_DIRTY_HEADER;
    if (!ui->page)
        dirty |= ui_page_reopen(ui);
    return dirty;
}

static void ui_engine_lost(struct ui_engine *e, const char *why);

#define ENGINE_FROM_TOKEN(ud, field)                                                               \
    ((struct ui_engine *)((char *)(ud)-offsetof(struct ui_engine, field)))

static size_t ui_engine_no(const struct ui_engine *e)
{
    return (size_t)(e - e->ui->engines);
}

/* A message about engine e: named when there are several. */
static void ui_engine_error(struct ui_engine *e, const char *msg)
{
    if (e->ui->nengines > 1)
        ui_set_error(e->ui, "%s: %s", e->name, msg);
    else
        ui_set_error(e->ui, "%s", msg);
}

static void ui_sessions_fetched(int status, json_t *reply, const char *err, void *ud)
{
    struct ui_engine *e = ENGINE_FROM_TOKEN(ud, tok_sessions);
    struct ui *ui = e->ui;
    const char *why = NULL;
    if (status < 0 || status != 200 ||
        model_set_sessions_of(&ui->model, ui_engine_no(e), reply, &why) < 0) {
        char msg[400];
        snprintf(msg, sizeof(msg), "fetching sessions: %s",
                 status < 0 ? (err ? err : "no answer")
                 : why      ? why
                            : client_error_message(reply, "refused"));
        if (status < 0)
            ui_engine_lost(e, msg);
        else
            ui_engine_error(e, msg);
        return;
    }
    view_sessions.sync(ui); /* may select another session, which fetches its actions */
    view_sessions_seed(ui);
    ui->dirty |= UI_DIRTY_ALL;
}

static void ui_approvals_fetched(int status, json_t *reply, const char *err, void *ud)
{
    struct ui_engine *e = ENGINE_FROM_TOKEN(ud, tok_approvals);
    struct ui *ui = e->ui;
    const char *why = NULL;
    char msg[400];
    if (status < 0) {
        snprintf(msg, sizeof(msg), "fetching approvals: %s", err ? err : "no answer");
        ui_engine_error(e, msg);
    } else if (status != 200) {
        snprintf(msg, sizeof(msg), "fetching approvals: %s",
                 client_error_message(reply, "refused"));
        ui_engine_error(e, msg);
    } else {
        size_t before = json_array_size(ui->model.approvals);
        if (model_set_approvals_of(&ui->model, ui_engine_no(e), reply, &why) < 0)
            ui_set_error(ui, "fetching approvals: %s", why);
        size_t now = json_array_size(ui->model.approvals);
        if (now > before && ui->opt->bell)
            beep();
    }
    view_approvals.sync(ui);
    ui->dirty |= UI_DIRTY_APPROVALS | UI_DIRTY_SESSIONS | UI_DIRTY_HEADER;
}

static void ui_fetch_sessions(struct ui_engine *e)
{
    e->sessions_refetch_at = 0;
    ui_cancel(e->ui, &e->tok_sessions);
    ui_request_on(e->ui, ui_engine_no(e), "GET", "/v1/sessions", NULL, ui_sessions_fetched,
                  &e->tok_sessions);
}

static void ui_fetch_approvals(struct ui_engine *e)
{
    e->approvals_refetch_at = 0;
    ui_cancel(e->ui, &e->tok_approvals);
    ui_request_on(e->ui, ui_engine_no(e), "GET", "/v1/approvals", NULL, ui_approvals_fetched,
                  &e->tok_approvals);
}

void ui_approvals_refetch(struct ui *ui, size_t engine)
{
    if (engine < ui->nengines)
        ui->engines[engine].approvals_refetch_at = ui_now_ms();
}

/* Everything from engine e again; the open page too when it shows one of e's sessions. */
static void ui_fetch_all(struct ui_engine *e)
{
    struct ui *ui = e->ui;
    ui->status[0] = '\0';
    ui_fetch_sessions(e);
    ui_fetch_approvals(e);
    if (ui_engine_index(ui, ui->sel_session) != ui_engine_no(e))
        return;
    ui_fetch_actions(ui);
    if (ui->page_open && ui->page_open->on_refresh)
        ui->dirty |= ui->page_open->on_refresh(ui);
    else if (ui->page_open)
        ui->dirty |= ui_page_reopen(ui);
    ui->dirty |= UI_DIRTY_ALL;
}

/* The engine went away: its sessions stay, drawn stale, until it answers again; tries come
 * after 1 s, then twice as long each time up to UI_RECONNECT_MAX_MS (on the loop's timer). */
static void ui_engine_lost(struct ui_engine *e, const char *why)
{
    if (!e->connected && e->reconnect_at) { /* a late failure of a request: retry as planned */
        e->ui->dirty |= UI_DIRTY_ALL;
        return;
    }
    client_events_close(e->events);
    e->events = NULL;
    e->connected = false;
    e->reconnect_at = ui_now_ms() + e->backoff_ms;
    e->backoff_ms =
        e->backoff_ms * 2 > UI_RECONNECT_MAX_MS ? UI_RECONNECT_MAX_MS : e->backoff_ms * 2;
    if (why)
        ui_engine_error(e, why);
    e->ui->dirty |= UI_DIRTY_ALL;
}

/* Subscribe first, then fetch: nothing that happens in between is missed. */
static void ui_engine_connect(struct ui_engine *e)
{
    struct ui *ui = e->ui;
    char *err = NULL;
    e->reconnect_at = 0;
    e->events = client_events_open(e->client, &err);
    bool local = ui_engine_no(e) == 0 && ui->opt->state_dir;
    if (!e->events && local && !client_ping(e->client)) {
        /* what is wrong and what to do, not the socket's errno */
        char *why = client_engine_diagnose(client_socket(e->client), ui->opt->state_dir);
        bool held = client_engine_holder(ui->opt->state_dir) > 0;
        ui_engine_lost(e, why ? why : "no engine answers");
        if (why && !held)
            ui_set_error(ui, "%s; start one with `paddock serve` (retrying)", why);
        free(why);
        free(err);
        return;
    }
    if (!e->events) {
        ui_engine_lost(e, err ? err : "cannot reach the engine");
        free(err);
        return;
    }
    e->connected = true;
    e->backoff_ms = UI_RECONNECT_MS;
    ui_fetch_all(e);
}

unsigned ui_refresh_all(struct ui *ui)
{
    for (size_t i = 0; i < ui->nengines; i++) {
        if (!ui->engines[i].connected)
            ui_engine_connect(&ui->engines[i]);
        else
            ui_fetch_all(&ui->engines[i]);
    }
    return UI_DIRTY_ALL;
}

/* An event of engine e. */
static void ui_on_event(const char *type, json_t *data, void *ud)
{
    struct ui_engine *e = ud;
    struct ui *ui = e->ui;
    if (strcmp(type, "session") == 0) {
        if (model_upsert_session_of(&ui->model, ui_engine_no(e), data)) {
            view_sessions.sync(ui);
            ui->dirty |= UI_DIRTY_SESSIONS | UI_DIRTY_DETAIL | UI_DIRTY_HEADER;
        } else if (!e->sessions_refetch_at) {
            /* one the list cannot apply (not parsed): the list again, once per burst */
            e->sessions_refetch_at = ui_now_ms() + UI_SESSIONS_REFETCH_MS;
        }
    } else if (strcmp(type, "action") == 0) {
        const char *sid = json_string_value(json_object_get(data, "session_id"));
        bool mine = ui_engine_index(ui, sid) == ui_engine_no(e);
        if (mine && model_upsert_action(&ui->model, sid, data)) {
            view_actions.sync(ui);
            ui->dirty |= UI_DIRTY_DETAIL;
        }
        /* the counters follow the stream: a new action is counted, nothing is fetched */
        if (mine && model_count_action(&ui->model, data))
            ui->dirty |= UI_DIRTY_SESSIONS | UI_DIRTY_HEADER;
    } else if (strcmp(type, "approval") == 0) {
        /* the queue loses it at the refetch: say why rather than let it vanish */
        const char *ap = json_string_value(json_object_get(data, "approval"));
        if (ap && strcmp(ap, "expired") == 0)
            ui_set_error(ui, "action %lld expired without a decision and was rejected: %s",
                         (long long)json_integer_value(json_object_get(data, "id")),
                         json_string_value(json_object_get(data, "summary"))
                             ? json_string_value(json_object_get(data, "summary"))
                             : "");
        if (!e->approvals_refetch_at)
            e->approvals_refetch_at = ui_now_ms() + UI_APPROVALS_REFETCH_MS;
    } else if (strcmp(type, "stats") == 0) {
        if (model_add_sample(&ui->model, data))
            ui->dirty |= UI_DIRTY_SESSIONS;
    }
    /* the open page hears only the engine of the session it shows */
    const struct ui_page *p = ui->page_open;
    if (p && p->on_event && ui_engine_index(ui, ui->sel_session) == ui_engine_no(e))
        ui->dirty |= p->on_event(ui, type, data);
}

/* Read every pending key. Returns dirty bits (and UI_QUIT). */
static unsigned ui_read_keys(struct ui *ui)
{
    unsigned dirty = 0;
    wint_t ch;
    int r;
    while ((r = wget_wch(ui->input, &ch)) != ERR) {
        bool code = r == KEY_CODE_YES;
        if (code && (int)ch == KEY_RESIZE) {
            dirty |= UI_DIRTY_LAYOUT;
            continue;
        }
        dirty |= keys_dispatch(ui, (int)ch, code);
        if (dirty & UI_QUIT)
            break;
    }
    return dirty;
}

static void ui_timeout_min(int64_t *next, int64_t at)
{
    if (at > 0 && (*next < 0 || at < *next))
        *next = at;
}

static int ui_timeout(const struct ui *ui, int64_t now, int64_t last_draw)
{
    int64_t next = -1;
    if (ui->dirty)
        next = last_draw + UI_FRAME_MS;
    for (size_t i = 0; i < ui->nengines; i++) {
        ui_timeout_min(&next, ui->engines[i].reconnect_at);
        ui_timeout_min(&next, ui->engines[i].sessions_refetch_at);
        ui_timeout_min(&next, ui->engines[i].approvals_refetch_at);
    }
    ui_timeout_min(&next, ui->guard_until);
    if (ui->page_open && ui->page_open->next_tick)
        ui_timeout_min(&next, ui->page_open->next_tick(ui));
    if (next < 0)
        return 1000; /* the queue's WAITED column and the clock move on */
    return next <= now ? 0 : (int)(next - now);
}

static void ui_run_timers(struct ui *ui)
{
    int64_t now = ui_now_ms();
    for (size_t i = 0; i < ui->nengines; i++) {
        struct ui_engine *e = &ui->engines[i];
        if (!e->connected && e->reconnect_at && now >= e->reconnect_at)
            ui_engine_connect(e);
        if (e->connected && e->sessions_refetch_at && now >= e->sessions_refetch_at)
            ui_fetch_sessions(e);
        if (e->connected && e->approvals_refetch_at && now >= e->approvals_refetch_at)
            ui_fetch_approvals(e);
    }
    if (ui->guard_until && now >= ui->guard_until) { /* the footer's "wait" goes */
        ui->guard_until = 0;
        ui->dirty |= UI_DIRTY_FOOTER;
    }
    const struct ui_page *p = ui->page_open;
    if (p && p->next_tick && p->on_tick) {
        int64_t at = p->next_tick(ui);
        if (at > 0 && now >= at)
            ui->dirty |= p->on_tick(ui);
    }
}

static int ui_loop(struct ui *ui)
{
    int64_t last_draw = 0, last_second = 0;
    bool urgent = true;
    for (;;) {
        ui_run_timers(ui);
        int64_t now = ui_now_ms();
        if (now - last_second >= 1000) { /* ages and waiting times */
            last_second = now;
            if (json_array_size(ui->model.approvals))
                ui->dirty |= UI_DIRTY_APPROVALS;
        }
        if (ui->dirty && (urgent || now - last_draw >= UI_FRAME_MS)) {
            layout_draw(ui, ui->dirty);
            ui->dirty = 0;
            last_draw = now;
            urgent = false;
        }

        term_keys_raw(keys_page_takes_all(ui));
        short page_events = 0;
        int page_fd =
            ui->page_open && ui->page_open->poll_fd ? ui->page_open->poll_fd(ui, &page_events) : -1;
        /* fixed ones, then each engine's event stream, then what tabs keep running */
        enum { FIXED = 4 + UI_ENGINES_MAX };
        struct pollfd p[FIXED + UI_BG_FDS] = {
            {.fd = STDIN_FILENO, .events = POLLIN},
            {.fd = term_signal_fd(), .events = POLLIN},
            {.fd = page_fd, .events = page_events},
            {.fd = job_poll_fd(ui), .events = POLLIN},
        };
        for (size_t i = 0; i < UI_ENGINES_MAX; i++)
            p[4 + i] = (struct pollfd){
                .fd = i < ui->nengines ? client_events_fd(ui->engines[i].events) : -1,
                .events = POLLIN};
        int nfds = FIXED, bg_n[UI_TABS_MAX] = {0};
        for (size_t i = 0; i < ui_ntabs && i < UI_TABS_MAX; i++)
            if (ui_tabs[i]->bg_poll)
                nfds += bg_n[i] = ui_tabs[i]->bg_poll(ui, p + nfds, FIXED + UI_BG_FDS - nfds);
        int n = client_async_poll(ui->async, p, nfds, ui_timeout(ui, now, last_draw));
        if (n < 0 && errno != EINTR) {
            ui_set_error(ui, "poll: %s", strerror(errno));
            return 1;
        }
        if (n <= 0)
            continue;
        if (p[1].revents & POLLIN) {
            unsigned long sigs = term_signals_read();
            static const int quit[] = {SIGTERM, SIGINT, SIGHUP};
            for (size_t i = 0; i < sizeof(quit) / sizeof(quit[0]); i++)
                if (sigs & (1ul << quit[i]))
                    return 128 + quit[i];
            if (sigs & (1ul << SIGWINCH)) {
                term_resize();
                ui->dirty |= UI_DIRTY_LAYOUT | ui_read_keys(ui); /* takes its KEY_RESIZE */
                urgent = true;
            }
        }
        if (p[0].revents & (POLLHUP | POLLERR | POLLNVAL))
            return 128 + SIGHUP; /* the terminal is gone */
        if (p[0].revents & POLLIN) {
            unsigned d = ui_read_keys(ui);
            if (d & UI_QUIT)
                return 0;
            ui->dirty |= d;
            urgent = true;
        }
        for (size_t i = 0; i < ui->nengines; i++) {
            struct ui_engine *e = &ui->engines[i];
            if (p[4 + i].fd >= 0 && p[4 + i].revents && e->events &&
                client_events_pump(e->events, ui_on_event, e) < 0)
                ui_engine_lost(e, "the engine closed the event stream");
        }
        if (page_fd >= 0 && p[2].revents && ui->page_open && ui->page_open->on_ready)
            ui->dirty |= ui->page_open->on_ready(ui, p[2].revents);
        if (p[3].fd >= 0 && p[3].revents)
            ui->dirty |= job_on_ready(ui);
        for (size_t i = 0, at = FIXED; i < ui_ntabs && i < UI_TABS_MAX; at += (size_t)bg_n[i++])
            if (bg_n[i])
                ui->dirty |= ui_tabs[i]->bg_ready(ui, p + at, bg_n[i]);
    }
}

static bool ui_locale_is_utf8(void)
{
    const char *cs = nl_langinfo(CODESET);
    return cs && (strcasecmp(cs, "UTF-8") == 0 || strcasecmp(cs, "utf8") == 0);
}

int ui_check_options(const struct ui_options *opt, char **err)
{
    struct ui_theme t;
    *err = NULL;
    return theme_load(opt ? opt->theme : NULL, opt ? opt->theme_dirs : NULL, &t, err);
}

int ui_run(struct client *c, const struct ui_options *opt, char **err)
{
    static const struct ui_options defaults = {0};
    struct ui ui = {
        .opt = opt ? opt : &defaults,
        .focus = UI_PANE_SESSIONS,
        .actions_follow = true,
    };
    ui.engines[0] = (struct ui_engine){.name = ui.opt->engine_name ? ui.opt->engine_name : "local",
                                       .client = c};
    ui.nengines = 1;
    for (size_t i = 0; i < ui.opt->nengines && ui.nengines < UI_ENGINES_MAX; i++)
        ui.engines[ui.nengines++] = (struct ui_engine){.name = ui.opt->engines[i].name,
                                                       .client = ui.opt->engines[i].client};
    for (size_t i = 0; i < ui.nengines; i++) {
        ui.engines[i].ui = &ui;
        ui.engines[i].backoff_ms = UI_RECONNECT_MS;
    }

    *err = NULL;
    if (theme_load(ui.opt->theme, ui.opt->theme_dirs, &ui.theme_cur, err) < 0)
        return 2;
    ui.theme = &ui.theme_cur;
    ui.async = client_async_new(c);
    if (!ui.async) {
        *err = strdup("out of memory");
        return 1;
    }
    /* The caller normally did setlocale(LC_ALL, ""); wide characters need at least CTYPE. */
    const char *ctype = setlocale(LC_CTYPE, NULL);
    if (!ctype || strcmp(ctype, "C") == 0 || strcmp(ctype, "POSIX") == 0)
        setlocale(LC_CTYPE, "");
    ui.utf8 = ui_locale_is_utf8();
    const char *nc = getenv("NO_COLOR");
    bool no_color = ui.opt->no_color || (nc && *nc);

    struct sigaction ign, old_pipe;
    memset(&ign, 0, sizeof(ign));
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &old_pipe);

    if (term_start(err) < 0) {
        sigaction(SIGPIPE, &old_pipe, NULL);
        return 1;
    }
    if (term_signals_install(err) < 0) {
        term_stop();
        sigaction(SIGPIPE, &old_pipe, NULL);
        return 1;
    }
    ui.color = !no_color && has_colors() && start_color() == OK;
    theme_apply(ui.theme, ui.color);
    ui.input = newpad(1, 1);
    if (ui.input) {
        keypad(ui.input, TRUE);
        nodelay(ui.input, TRUE);
    }
    if (ui.opt->mouse)
        mouse_start(&ui);

    ui.dirty = UI_DIRTY_LAYOUT | UI_DIRTY_ALL;
    int rc = 1;
    if (!ui.input) {
        *err = strdup("cannot create the input window");
    } else {
        for (size_t i = 0; i < ui.nengines; i++)
            ui_engine_connect(&ui.engines[i]);
        ui.dirty |= ui_page_reopen(&ui);
        rc = ui_loop(&ui);
        if (rc == 1 && ui.status[0])
            *err = strdup(ui.status);
    }

    job_stop(&ui);
    ui_modal_close(&ui);
    ui_pages_end(&ui);
    client_async_free(ui.async);
    for (size_t i = 0; i < ui.nengines; i++)
        client_events_close(ui.engines[i].events);
    model_free(&ui.model);
    ops_free(&ui);
    free(ui.sel_session);
    layout_free(&ui);
    if (ui.input)
        delwin(ui.input);
    term_stop();
    term_signals_remove();
    sigaction(SIGPIPE, &old_pipe, NULL);
    return rc;
}
