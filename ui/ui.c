/* ui_run: the dashboard's one event loop. poll() on the terminal, the signal self-pipe and the
 * engine's event stream; events update the model, keys go through the key table, and each
 * turn ends with at most one frame (only dirty windows, one doupdate). Event-driven frames
 * are coalesced to UI_FRAME_MS; keys and resizes draw at once. */
#include "app/client.h"
#include "ui/ui_internal.h"

#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define UI_FRAME_MS 16             /* at most ~60 event-driven frames a second */
#define UI_RECONNECT_MS 1000       /* retry the engine once a second, not faster */
#define UI_SESSIONS_REFETCH_MS 200 /* action counters: one refetch per burst of actions */

const struct ui_view *const ui_views[UI_PANE_COUNT] = {
    [UI_PANE_SESSIONS] = &view_sessions,
    [UI_PANE_ACTIONS] = &view_actions,
};

int64_t ui_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void ui_set_status(struct ui *ui, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ui->status, sizeof(ui->status), fmt, ap);
    va_end(ap);
    ui->dirty |= UI_DIRTY_FOOTER;
}

/* Fetch the actions of the selected session into the model. */
static void ui_fetch_actions(struct ui *ui)
{
    model_clear_actions(&ui->model);
    if (ui->sel_session && ui->connected) {
        char *err = NULL;
        if (model_fetch_actions(&ui->model, ui->client, ui->sel_session, &err) < 0)
            ui_set_status(ui, "%s", err ? err : "cannot fetch actions");
        free(err);
    }
    view_actions.sync(ui);
}

unsigned ui_select_session(struct ui *ui, const char *id)
{
    bool same = id && ui->sel_session && strcmp(id, ui->sel_session) == 0;
    bool loaded = same && ui->model.actions_for && strcmp(id, ui->model.actions_for) == 0;
    if (same && loaded)
        return 0;
    if (!same) {
        char *dup = id ? strdup(id) : NULL;
        free(ui->sel_session);
        ui->sel_session = dup;
        ui->list[UI_PANE_ACTIONS].sel = ui->list[UI_PANE_ACTIONS].top = 0;
        ui->sel_action = 0;
        ui->actions_follow = true;
    }
    ui_fetch_actions(ui);
    return UI_DIRTY_ACTIONS | UI_DIRTY_HEADER;
}

/* Everything from the engine again. Returns -1 when the sessions cannot be fetched. */
static int ui_fetch_all(struct ui *ui)
{
    char *err = NULL;
    if (model_fetch_sessions(&ui->model, ui->client, &err) < 0) {
        ui_set_status(ui, "%s", err ? err : "cannot fetch sessions");
        free(err);
        return -1;
    }
    ui->status[0] = '\0';
    ui->sessions_refetch_at = 0;
    model_clear_actions(&ui->model);
    view_sessions.sync(ui); /* may select another session, which fetches its actions */
    if (!ui->model.actions_for)
        ui_fetch_actions(ui);
    ui->dirty |= UI_DIRTY_ALL;
    return 0;
}

static void ui_engine_lost(struct ui *ui, const char *why)
{
    client_events_close(ui->events);
    ui->events = NULL;
    ui->connected = false;
    ui->reconnect_at = ui_now_ms() + UI_RECONNECT_MS;
    if (why)
        ui_set_status(ui, "%s", why);
    ui->dirty |= UI_DIRTY_ALL;
}

/* Subscribe first, then fetch: nothing that happens in between is missed. */
static void ui_engine_connect(struct ui *ui)
{
    char *err = NULL;
    ui->reconnect_at = 0;
    ui->events = client_events_open(ui->client, &err);
    if (!ui->events) {
        ui_engine_lost(ui, err ? err : "cannot reach the engine");
        free(err);
        return;
    }
    ui->connected = true;
    if (ui_fetch_all(ui) < 0) {
        char why[sizeof(ui->status)];
        snprintf(why, sizeof(why), "%s", ui->status);
        ui_engine_lost(ui, why);
    }
}

unsigned ui_refresh_all(struct ui *ui)
{
    if (!ui->connected) {
        ui_engine_connect(ui);
        return UI_DIRTY_ALL;
    }
    ui_fetch_all(ui);
    return UI_DIRTY_ALL;
}

static void ui_on_event(const char *type, json_t *data, void *ud)
{
    struct ui *ui = ud;
    if (strcmp(type, "session") == 0) {
        if (model_upsert_session(&ui->model, data)) {
            view_sessions.sync(ui);
            ui->dirty |= UI_DIRTY_SESSIONS | UI_DIRTY_ACTIONS | UI_DIRTY_HEADER;
        }
    } else if (strcmp(type, "action") == 0) {
        const char *sid = json_string_value(json_object_get(data, "session_id"));
        if (model_upsert_action(&ui->model, sid, data)) {
            view_actions.sync(ui);
            ui->dirty |= UI_DIRTY_ACTIONS;
        }
        /* Session objects carry the action counter: refetch once per burst. */
        if (!ui->sessions_refetch_at)
            ui->sessions_refetch_at = ui_now_ms() + UI_SESSIONS_REFETCH_MS;
    }
}

static void ui_refetch_sessions(struct ui *ui)
{
    char *err = NULL;
    ui->sessions_refetch_at = 0;
    if (model_fetch_sessions(&ui->model, ui->client, &err) < 0) {
        ui_set_status(ui, "%s", err ? err : "cannot fetch sessions");
        free(err);
        return;
    }
    view_sessions.sync(ui);
    ui->dirty |= UI_DIRTY_SESSIONS | UI_DIRTY_HEADER | UI_DIRTY_ACTIONS;
}

/* Read every pending key. Returns dirty bits (and UI_QUIT). */
static unsigned ui_read_keys(struct ui *ui)
{
    unsigned dirty = 0;
    wint_t ch;
    int r;
    while ((r = wget_wch(ui->input, &ch)) != ERR) {
        int key;
        if (r == KEY_CODE_YES)
            key = (int)ch;
        else if (ch < 0x80)
            key = (int)ch;
        else
            continue; /* no bindings outside ASCII */
        if (key == KEY_RESIZE) {
            dirty |= UI_DIRTY_LAYOUT;
            continue;
        }
        dirty |= keys_dispatch(ui, key);
        if (dirty & UI_QUIT)
            break;
    }
    return dirty;
}

static int ui_timeout(const struct ui *ui, int64_t now, int64_t last_draw)
{
    int64_t next = -1;
    if (ui->dirty)
        next = last_draw + UI_FRAME_MS;
    if (ui->reconnect_at && (next < 0 || ui->reconnect_at < next))
        next = ui->reconnect_at;
    if (ui->sessions_refetch_at && (next < 0 || ui->sessions_refetch_at < next))
        next = ui->sessions_refetch_at;
    if (next < 0)
        return -1;
    return next <= now ? 0 : (int)(next - now);
}

static int ui_loop(struct ui *ui)
{
    int64_t last_draw = 0;
    bool urgent = true;
    for (;;) {
        int64_t now = ui_now_ms();
        if (!ui->connected && ui->reconnect_at && now >= ui->reconnect_at)
            ui_engine_connect(ui);
        if (ui->connected && ui->sessions_refetch_at && now >= ui->sessions_refetch_at)
            ui_refetch_sessions(ui);
        now = ui_now_ms();
        if (ui->dirty && (urgent || now - last_draw >= UI_FRAME_MS)) {
            layout_draw(ui, ui->dirty);
            ui->dirty = 0;
            last_draw = now;
            urgent = false;
        }

        struct pollfd p[3] = {
            {.fd = STDIN_FILENO, .events = POLLIN},
            {.fd = term_signal_fd(), .events = POLLIN},
            {.fd = client_events_fd(ui->events), .events = POLLIN},
        };
        int n = poll(p, 3, ui_timeout(ui, now, last_draw));
        if (n < 0 && errno != EINTR) {
            ui_set_status(ui, "poll: %s", strerror(errno));
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
        if (p[2].revents && ui->events) {
            if (client_events_pump(ui->events, ui_on_event, ui) < 0)
                ui_engine_lost(ui, "the engine closed the event stream");
        }
    }
}

static bool ui_locale_is_utf8(void)
{
    const char *cs = nl_langinfo(CODESET);
    return cs && (strcasecmp(cs, "UTF-8") == 0 || strcasecmp(cs, "utf8") == 0);
}

int ui_run(struct client *c, const struct ui_options *opt, char **err)
{
    static const struct ui_options defaults = {0};
    struct ui ui = {
        .client = c,
        .opt = opt ? opt : &defaults,
        .focus = UI_PANE_SESSIONS,
        .actions_follow = true,
    };
    *err = NULL;
    ui.theme = theme_find(ui.opt->theme);
    if (!ui.theme) {
        if (asprintf(err, "unknown theme '%s' (have: %s)", ui.opt->theme, theme_names()) < 0)
            *err = NULL;
        return 2;
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

    ui.dirty = UI_DIRTY_LAYOUT | UI_DIRTY_ALL;
    int rc = 1;
    if (!ui.input) {
        *err = strdup("cannot create the input window");
    } else {
        ui_engine_connect(&ui);
        rc = ui_loop(&ui);
        if (rc == 1 && ui.status[0])
            *err = strdup(ui.status);
    }

    client_events_close(ui.events);
    model_free(&ui.model);
    free(ui.sel_session);
    layout_free(&ui);
    if (ui.input)
        delwin(ui.input);
    term_stop();
    term_signals_remove();
    sigaction(SIGPIPE, &old_pipe, NULL);
    return rc;
}
