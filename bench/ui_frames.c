/* paddock-bench-ui: the dashboard's frame time and memory, through its real code (the key
 * tables, the views, layout_draw and ncurses' doupdate) on a pseudo-terminal whose other end
 * a thread drains, as a terminal emulator would. The model holds 200 sessions (--sessions), 200
 * actions of the selected one and 5 approvals, filled through the parsers the engine's replies go
 * through; a log view holds 100,000 lines in the Logs view's buffer (ui/logbuf.c). There is
 * no engine: the requests the views start stay queued and are never sent. Issue 6's budget
 * is 10 ms a frame; this measures it, tests do not assert it.
 *
 *   paddock-bench-ui [--size COLSxROWS]... [--frames N] [--lines N] [--sessions N] [--engines E]
 *
 * --engines E: E engines (1..8) of N sessions each, as the dashboard holds them over many
 * engines (issue 20: 3 x 200): one list with the ENGINE column, each engine up in the header.
 *
 * A frame is timed from the key (or the event) to doupdate's return: the handler, the
 * drawing of what it made dirty and the write to the terminal.
 */
#include "bench.h"
#include "client/client.h"
#include "client/client_async.h"
#include "ui/logbuf.h"
#include "ui/ui_internal.h"

#include <errno.h>
#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <malloc.h>
#include <pthread.h>
#include <pty.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

/* Sessions in the model (--sessions; issue 20 asks for 500), each engine's (--engines). */
static int bench_sessions = 200;
static int bench_engines = 1;
#define BENCH_APPROVALS 5
#define BENCH_LOG_MAX_BYTES (64u << 20) /* the log view's byte bound: far above 100,000 lines */

/* ---- the terminal: a pty whose master a thread reads and counts ---- */

struct bench_tty {
    int master, slave;
    FILE *out, *in;
    SCREEN *screen;
    pthread_t reader;
    atomic_ullong bytes; /* what the dashboard wrote to the terminal */
};

static void *bench_tty_drain(void *arg)
{
    struct bench_tty *t = arg;
    char buf[65536];
    for (;;) {
        ssize_t n = read(t->master, buf, sizeof(buf));
        if (n > 0)
            atomic_fetch_add(&t->bytes, (unsigned long long)n);
        else if (n < 0 && errno == EINTR)
            continue;
        else
            return NULL; /* EIO: the slave side is closed */
    }
}

/* Wait until the reader has everything written so far: nothing left unread in the pty and
 * no new count for 5 ms. A quiet spell alone was not enough: on a loaded machine the reader
 * may not run for longer than that with a frame still waiting in the pty (a full redraw
 * counted 0 bytes once in CI). */
static unsigned long long bench_tty_settle(struct bench_tty *t)
{
    unsigned long long last = atomic_load(&t->bytes);
    for (;;) {
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
        int pending = 0;
        if (ioctl(t->master, FIONREAD, &pending) < 0)
            pending = 0;
        unsigned long long now = atomic_load(&t->bytes);
        if (now == last && pending == 0)
            return now;
        last = now;
    }
}

static int bench_tty_open(struct bench_tty *t, int cols, int rows)
{
    memset(t, 0, sizeof(*t));
    struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
    if (openpty(&t->master, &t->slave, NULL, NULL, &ws) < 0) {
        perror("openpty");
        return -1;
    }
    atomic_init(&t->bytes, 0);
    if (pthread_create(&t->reader, NULL, bench_tty_drain, t) != 0)
        return -1;
    t->out = fdopen(t->slave, "w");
    t->in = fdopen(dup(t->slave), "r");
    if (!t->out || !t->in)
        return -1;
    t->screen = newterm("xterm-256color", t->out, t->in);
    if (!t->screen) {
        fprintf(stderr, "paddock-bench-ui: no terminfo entry for xterm-256color\n");
        return -1;
    }
    set_term(t->screen);
    cbreak();
    noecho();
    curs_set(0);
    return 0;
}

static void bench_tty_close(struct bench_tty *t)
{
    endwin();
    delscreen(t->screen);
    fclose(t->out); /* the slave: the reader then sees EIO */
    fclose(t->in);
    pthread_join(t->reader, NULL);
    close(t->master);
}

/* ---- memory ---- */

/* The heap in use (MB): what one step allocated, where VmRSS would hide it behind memory an
 * earlier step freed (a closed tab's list) and malloc kept. */
static double bench_heap_mb(void)
{
    struct mallinfo2 mi = mallinfo2();
    return (double)(mi.uordblks + mi.hblkhd) / 1048576.0;
}

static double bench_rss_mb(const char *field)
{
    long kb = proc_status_kb(getpid(), field);
    return kb > 0 ? (double)kb / 1024.0 : -1.0;
}

/* ---- the model: what the engine's replies would hold ---- */

static const char *const bench_states[] = {"ready", "ready", "ready", "paused",      "stopped",
                                           "ready", "error", "ready", "disconnected"};
static const char *const bench_commands[] = {
    "pytest -q tests/test_parser.py",
    "git diff --stat HEAD~1",
    "python3 -m pip install --user -r requirements.txt",
    "sed -n '1,80p' src/server/handlers.py",
    "make -j2 && ./build/app --selftest",
    "grep -rn 'TODO' src | head -50",
    "npm test -- --watch=false",
    "cat /workspace/README.md",
};

static json_t *bench_session_json(int i, double now)
{
    char id[17], name[32];
    snprintf(id, sizeof(id), "%016x", 0x5e550000u + (unsigned)i * 2654435761u);
    snprintf(name, sizeof(name), "agent-%03d", i);
    const char *state = bench_states[(size_t)i % (sizeof(bench_states) / sizeof(*bench_states))];
    return json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:f, s:f, s:I, s:n, s:o, s:i, s:b, s:{s:{s:f, s:I, s:i}, "
        "s:s, s:b, s:b}, s:[]}",
        "id", id, "name", name, "image", i % 3 ? "paddock/base:local" : "python:3.12-slim", "state",
        state, "container_id", "c0ffee", "created_at", now - 60.0 * i, "updated_at", now,
        "action_count", (json_int_t)(i * 7 % 400), "error", "reason",
        strcmp(state, "ready") ? json_string("by request") : json_null(), "oom_kills", 0,
        "keep_alive", 1, "options", "limits", "cpus", 2.0, "memory", (json_int_t)2147483648LL,
        "pids", 512, "network", "none", "read_only", 0, "keep_alive", 1, "ports");
}

static json_t *bench_action_json(long long id, const char *sid, double now)
{
    const char *cmd = bench_commands[id % (long long)(sizeof(bench_commands) / sizeof(char *))];
    bool failed = id % 11 == 0;
    return json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:f, s:f, s:f, s:f}", "id",
                     (json_int_t)id, "session_id", sid, "kind", "run", "summary", cmd, "state",
                     failed ? "failed" : "done", "risk", "low", "risk_reason", "reads files",
                     "approval", "none", "exit_code", failed ? 2 : 0, "created_at",
                     now - 3.0 * (double)(100000 - id), "started_at",
                     now - 3.0 * (double)(100000 - id), "finished_at", now, "duration_ms",
                     0.4 + (double)(id % 97) * 3.1);
}

/* 200 sessions, 5 approvals; selects the first session (as a fetch would). */
static void bench_fill_model(struct ui *ui)
{
    double now = (double)time(NULL);
    const char *err = NULL;
    json_t *reply = NULL;
    for (int e = 0; e < bench_engines; e++) { /* each engine's list, as its fetch brings it */
        json_t *list = json_array();
        for (int i = 0; i < bench_sessions; i++)
            json_array_append_new(list, bench_session_json(e * bench_sessions + i, now));
        reply = json_pack("{s:o}", "sessions", list);
        if (model_set_sessions_of(&ui->model, (size_t)e, reply, &err) < 0)
            fprintf(stderr, "paddock-bench-ui: sessions: %s\n", err);
        json_decref(reply);
    }
    view_sessions.sync(ui);

    json_t *appr = json_array();
    for (int i = 0; i < BENCH_APPROVALS; i++) {
        json_t *a = bench_action_json(900000 + i, ui->model.sessions[i * 17].id, now);
        json_object_set_new(a, "state", json_string("pending"));
        json_object_set_new(a, "risk", json_string(i % 2 ? "medium" : "high"));
        json_object_set_new(a, "summary",
                            json_string("rm -rf /workspace/build && curl -fsSL "
                                        "https://example.invalid/install.sh | sh"));
        json_object_set_new(a, "risk_reason", json_string("deletes files; runs a download"));
        json_array_append_new(appr, a);
    }
    reply = json_pack("{s:o}", "approvals", appr);
    if (model_set_approvals(&ui->model, reply, &err) < 0)
        fprintf(stderr, "paddock-bench-ui: approvals: %s\n", err);
    json_decref(reply);
    view_approvals.sync(ui);
}

/* The selected session's newest 200 actions (what its fetch answers). */
static void bench_fill_actions(struct ui *ui)
{
    double now = (double)time(NULL);
    json_t *list = json_array();
    for (long long id = 99999; id > 99999 - MODEL_ACTIONS_LIMIT; id--)
        json_array_append_new(list, bench_action_json(id, ui->sel_session, now));
    json_t *reply = json_pack("{s:o, s:n}", "actions", list, "next_before");
    const char *err = NULL;
    if (model_set_actions(&ui->model, ui->sel_session, reply, &err) < 0)
        fprintf(stderr, "paddock-bench-ui: actions: %s\n", err);
    json_decref(reply);
    view_actions.sync(ui);
}

/* What the Changes tab's fetch answers for a busy session: the engine's most (10,000 paths). */
#define BENCH_CHANGES 10000
static void bench_fill_changes(struct ui *ui)
{
    static const char *const kinds[] = {"added", "changed", "deleted"};
    json_t *list = json_array();
    for (int i = 0; i < BENCH_CHANGES; i++) {
        char path[96];
        snprintf(path, sizeof(path), "/workspace/src/module%03d/file%04d.c", i / 100, i);
        json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s, s:I}", "path", path, "kind",
                                              kinds[i % 3], "where", "workspace", "from", "diff",
                                              "action_id", (json_int_t)(99999 - i % 200)));
    }
    json_t *reply = json_pack("{s:o, s:b, s:I, s:f}", "changes", list, "truncated", 0, "total",
                              (json_int_t)BENCH_CHANGES, "at", (double)time(NULL));
    tab_changes_take(ui, 200, reply, NULL);
    json_decref(reply);
}

/* The Files tab's tree: a workspace listing as long as the tab takes (500), directories first. */
static void bench_fill_files(struct ui *ui)
{
    json_t *list = json_array();
    for (int i = 0; i < 500; i++) {
        char name[64];
        snprintf(name, sizeof(name), i < 40 ? "module%03d" : "file%04d.c", i);
        json_array_append_new(list, json_pack("{s:s, s:s, s:I, s:I}", "name", name, "type",
                                              i < 40 ? "directory" : "file", "size",
                                              (json_int_t)(i * 37), "mtime", (json_int_t)0));
    }
    json_t *reply =
        json_pack("{s:s, s:s, s:o, s:I, s:I}", "path", "/workspace", "type", "directory", "entries",
                  list, "total", (json_int_t)1500, "omitted", (json_int_t)1000);
    tab_files_take(ui, 200, reply, NULL);
    json_decref(reply);
}

/* ---- a log view: the Logs view's buffer drawn as a Logs tab would, until one is on main:
 * timestamps, stderr in another colour, every search match highlighted, a status line ---- */

static const char *const bench_log_words[] = {
    "GET",       "POST",    "/execute_action",
    "200",       "404",     "worker",
    "started",   "request", "latency",
    "ms",        "INFO",    "WARN",
    "ERROR",     "cache",   "miss",
    "user=1000", "é",       "日本",
    "retry",     "timeout", "\x1b[31mred\x1b[0m",
};
#define BENCH_NWORDS (sizeof(bench_log_words) / sizeof(bench_log_words[0]))

static size_t bench_log_line(unsigned long long i, char *out, size_t sz)
{
    unsigned long long x = i * 6364136223846793005ULL + 1442695040888963407ULL;
    int n = snprintf(out, sz, "%06llu", i);
    int words = 6 + (int)(x >> 59); /* 6..37 words: 40 to 250 bytes */
    for (int k = 0; k < words && (size_t)n < sz - 16; k++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        n += snprintf(out + n, sz - (size_t)n, " %s", bench_log_words[(x >> 33) % BENCH_NWORDS]);
    }
    out[n++] = '\n';
    return (size_t)n;
}

struct bench_logs {
    struct logbuf buf;
    size_t top;  /* first line shown when not following */
    bool follow; /* the newest line stays at the bottom */
    const char *needle;
};
static struct bench_logs bench_logs;

static int bench_logs_rows(WINDOW *w)
{
    return getmaxy(w) > 1 ? getmaxy(w) - 1 : 1; /* the last row is the status line */
}

static void bench_logs_draw(struct ui *ui, WINDOW *w, bool focused)
{
    (void)focused;
    struct bench_logs *l = &bench_logs;
    int rows = bench_logs_rows(w), cols = getmaxx(w);
    size_t n = l->buf.count;
    size_t first = l->follow ? (n > (size_t)rows ? n - (size_t)rows : 0) : l->top;
    for (int r = 0; r < rows; r++) {
        const struct logbuf_line *line = logbuf_get(&l->buf, first + (size_t)r);
        if (!line)
            break;
        char ts[16];
        time_t sec = (time_t)line->at;
        struct tm tm;
        if (!localtime_r(&sec, &tm) || !strftime(ts, sizeof(ts), "%H:%M:%S ", &tm))
            snprintf(ts, sizeof(ts), "-        ");
        int x = draw_text(ui, w, r, 0, cols, ts, theme_attr(UI_C_DIM));
        draw_text(ui, w, r, x, cols - x, line->text,
                  theme_attr(line->fd == 2 ? UI_C_WARN : UI_C_NORMAL));
        size_t starts[8];
        size_t nm = l->needle ? logbuf_matches(line->text, line->len, l->needle, starts, 8) : 0;
        for (size_t m = 0; m < nm; m++) { /* the match's column: the width of what is before */
            char before[512], hit[64];
            size_t bl = starts[m] < sizeof(before) - 1 ? starts[m] : sizeof(before) - 1;
            memcpy(before, line->text, bl);
            before[bl] = '\0';
            snprintf(hit, sizeof(hit), "%.*s", (int)strlen(l->needle), line->text + starts[m]);
            int hx = x + draw_text_width(ui, before);
            if (hx < cols)
                draw_text(ui, w, r, hx, cols - hx, hit, theme_attr(UI_C_SELECTED));
        }
    }
    char status[160];
    snprintf(status, sizeof(status), "%zu lines  %llu dropped  %s  /%s", n,
             (unsigned long long)l->buf.dropped, l->follow ? "follow" : "paused",
             l->needle ? l->needle : "");
    draw_text(ui, w, rows, 0, cols, status, theme_attr(UI_C_DIM));
}

static unsigned bench_logs_scroll(struct ui *ui, long delta)
{
    struct bench_logs *l = &bench_logs;
    int rows = ui->win_body ? bench_logs_rows(ui->win_body) : 1;
    size_t last = l->buf.count > (size_t)rows ? l->buf.count - (size_t)rows : 0;
    if (l->follow)
        l->top = last;
    long top = (long)l->top + delta;
    l->top = top < 0 ? 0 : (size_t)top > last ? last : (size_t)top;
    l->follow = l->top == last;
    return UI_DIRTY_DETAIL;
}

static unsigned bench_logs_down(struct ui *ui)
{
    return bench_logs_scroll(ui, 1);
}

static unsigned bench_logs_up(struct ui *ui)
{
    return bench_logs_scroll(ui, -1);
}

static const struct ui_key bench_logs_keys[] = {
    {.key = 'j', .name = "j", .help = "scroll down", .fn = bench_logs_down, .hint = "j/k scroll"},
    {.key = 'k', .name = "k", .help = "scroll up", .fn = bench_logs_up},
    {0},
};

static const struct ui_page bench_logs_page = {
    .name = "Logs (bench reference)",
    .keys = bench_logs_keys,
    .list = -1,
    .draw = bench_logs_draw,
};

static struct logbuf *bench_logs_buffer(struct ui *ui)
{
    (void)ui;
    return &bench_logs.buf;
}

/* ---- what is measured ---- */

/* A view measured with a log buffer full of lines: the Logs tab itself, and a reference page
 * that draws the same lines the simplest way (what the tab's extras cost). */
struct bench_view {
    const char *name;
    const struct ui_page *page; /* one of ui_tabs[], or a full-screen page */
    struct logbuf *(*logbuf)(struct ui *ui);
};

static const struct bench_view bench_log_views[] = {
    {"Logs tab", &tab_logs, tab_logs_buffer},
    {"logs (reference page)", &bench_logs_page, bench_logs_buffer},
};
#define BENCH_NLOG_VIEWS (sizeof(bench_log_views) / sizeof(bench_log_views[0]))

struct bench_row {
    char what[80];
    size_t n;
    double p50, p95, max, bytes;
};

struct bench_run {
    struct ui *ui;
    struct bench_tty *tty;
    int frames;
    struct bench_row rows[64];
    size_t nrows;
};

typedef unsigned (*bench_step_fn)(struct bench_run *r, int i);

/* Time n frames of step (each returns the dirty bits its change made) into one row. */
static void bench_measure(struct bench_run *r, const char *what, int n, bench_step_fn step)
{
    struct timings s = {0};
    unsigned long long b0 = bench_tty_settle(r->tty);
    for (int i = 0; i < n; i++) {
        double t0 = now_ms();
        unsigned dirty = step(r, i);
        layout_draw(r->ui, dirty);
        timings_add(&s, now_ms() - t0);
    }
    unsigned long long b1 = bench_tty_settle(r->tty);
    if (r->nrows < sizeof(r->rows) / sizeof(r->rows[0])) {
        struct bench_row *row = &r->rows[r->nrows++];
        snprintf(row->what, sizeof(row->what), "%s", what);
        row->n = s.n;
        row->p50 = timings_pct(&s, 0.5);
        row->p95 = timings_pct(&s, 0.95);
        row->max = timings_pct(&s, 1.0);
        row->bytes = s.n ? (double)(b1 - b0) / (double)s.n : 0;
    }
    free(s.v);
}

/* The whole screen: new windows and every cell sent again (a resize, ^L). */
static unsigned bench_full(struct bench_run *r, int i)
{
    (void)r;
    (void)i;
    clearok(curscr, TRUE);
    return UI_DIRTY_LAYOUT | UI_DIRTY_ALL;
}

static unsigned bench_key(struct bench_run *r, int key)
{
    return keys_dispatch(r->ui, key, false);
}

/* j to the bottom of the list, then k back up, and again. */
static unsigned bench_jk(struct bench_run *r, int i)
{
    int id = list_focused(r->ui);
    size_t n = id >= 0 ? ui_lists[id]->count(r->ui) : 0;
    size_t span = n > 1 ? n - 1 : 1;
    return bench_key(r, (size_t)i / span % 2 ? 'k' : 'j');
}

/* A log view: j/k scroll by one line (a hundred lines down, a hundred up). */
static unsigned bench_scroll(struct bench_run *r, int i)
{
    return bench_key(r, i / 100 % 2 ? 'j' : 'k');
}

/* What ui.c's event handler does with an `action` event for the session shown: a new
 * action ("new": true) is counted in its session's row too. */
static unsigned bench_event_action(struct bench_run *r, int i)
{
    struct ui *ui = r->ui;
    json_t *a = bench_action_json(100000 + i, ui->sel_session, (double)time(NULL));
    json_object_set_new(a, "new", json_true());
    unsigned dirty = 0;
    if (model_upsert_action(&ui->model, ui->sel_session, a)) {
        view_actions.sync(ui);
        dirty |= UI_DIRTY_DETAIL;
    }
    if (model_count_action(&ui->model, a))
        dirty |= UI_DIRTY_SESSIONS | UI_DIRTY_HEADER;
    if (ui->page_open && ui->page_open->on_event)
        dirty |= ui->page_open->on_event(ui, "action", a);
    json_decref(a);
    return dirty;
}

/* ... and with a `session` event: a session on screen changes state. */
static unsigned bench_event_session(struct bench_run *r, int i)
{
    struct ui *ui = r->ui;
    json_t *s = bench_session_json(5, (double)time(NULL));
    json_object_set_new(s, "state", json_string(i % 2 ? "ready" : "paused"));
    unsigned dirty = 0;
    if (model_upsert_session(&ui->model, s)) {
        view_sessions.sync(ui);
        dirty |= UI_DIRTY_SESSIONS | UI_DIRTY_DETAIL | UI_DIRTY_HEADER;
    }
    if (ui->page_open && ui->page_open->on_event)
        dirty |= ui->page_open->on_event(ui, "session", s);
    json_decref(s);
    return dirty;
}

static unsigned bench_help(struct bench_run *r, int i)
{
    (void)i;
    return bench_key(r, '?'); /* opens, then any key (this one) closes */
}

static struct logbuf *bench_cur_logbuf;
static unsigned long long bench_log_seq;

/* A log view following: one new line arrives. */
static unsigned bench_log_line_arrives(struct bench_run *r, int i)
{
    (void)r;
    (void)i;
    char line[600];
    size_t n = bench_log_line(bench_log_seq++, line, sizeof(line));
    logbuf_append(bench_cur_logbuf, bench_log_seq % 7 ? 1 : 2, line, n, (double)time(NULL));
    return UI_DIRTY_DETAIL;
}

static void bench_fill_log(struct logbuf *b, unsigned long long lines)
{
    char line[600];
    double now = (double)time(NULL);
    for (unsigned long long i = 0; i < lines; i++) {
        size_t n = bench_log_line(bench_log_seq++, line, sizeof(line));
        logbuf_append(b, bench_log_seq % 7 ? 1 : 2, line, n, now - (double)(lines - i) * 0.01);
    }
}

/* Show a page: a tab of the detail pane when it is one of ui_tabs[], else full screen. */
static unsigned bench_show(struct ui *ui, const struct ui_page *p)
{
    for (size_t t = 0; t < ui_ntabs; t++) {
        if (ui_tabs[t] == p) {
            if (ui->page) /* ui_show_tab: nothing to do when the tab is current already */
                return ui_show_tab(ui, t);
            unsigned d = ui_show_page(ui, &bench_logs_page); /* reopen the tab */
            return d | ui_show_tab(ui, t);
        }
    }
    return ui_show_page(ui, p);
}

struct bench_mem {
    double base, model, logs /* added by the lines */, overflow, end, hwm;
    size_t log_count, log_bytes;
    unsigned long long log_dropped;
};

/* Returns how many of the bench's own checks failed (frames that wrote nothing, a log buffer
 * that did not stay at its bound): a broken bench must not print numbers quietly. */
static int bench_size(int cols, int rows, int frames, unsigned long long lines,
                      struct bench_mem *mem, bool print_mem)
{
    struct bench_tty tty;
    if (bench_tty_open(&tty, cols, rows) < 0)
        exit(1);
    mem->base = bench_rss_mb("VmRSS");

    static const struct ui_options opt = {0};
    struct client *c = client_new("/nonexistent/paddock-bench-ui.sock");
    static const char *const names[UI_ENGINES_MAX] = {"local", "build", "gpu", "edge",
                                                      "batch", "eu",    "us",  "lab"};
    struct ui ui = {
        .nengines = (size_t)bench_engines,
        .async = client_async_new(c),
        .opt = &opt,
        .theme = theme_find("dark"),
        .focus = UI_PANE_SESSIONS,
        .actions_follow = true,
    };
    for (size_t e = 0; e < ui.nengines; e++) /* the header says up; requests stay queued */
        ui.engines[e] =
            (struct ui_engine){.ui = &ui, .name = names[e], .client = c, .connected = true};
    const char *cs = nl_langinfo(CODESET);
    ui.utf8 = cs && strcasecmp(cs, "UTF-8") == 0;
    ui.color = has_colors() && start_color() == OK;
    theme_apply(ui.theme, ui.color);

    bench_fill_model(&ui);
    bench_fill_actions(&ui);
    layout_draw(&ui, UI_DIRTY_LAYOUT | UI_DIRTY_ALL | bench_show(&ui, ui_tabs[0]));
    mem->model = bench_rss_mb("VmRSS");

    struct bench_run r = {.ui = &ui, .tty = &tty, .frames = frames};
    int n = frames, many = frames * 4;

    /* The main screen: sessions, the approvals queue, the first tab. */
    bench_measure(&r, "main screen, full redraw", n, bench_full);
    ui.focus = UI_PANE_SESSIONS;
    char jk[80];
    snprintf(jk, sizeof(jk), "sessions: j/k through %d (tab reopens)",
             bench_sessions * bench_engines);
    bench_measure(&r, jk, many, bench_jk);
    bench_show(&ui, ui_tabs[0]);
    bench_fill_actions(&ui);
    bench_measure(&r, "event: a session changes state", many, bench_event_session);
    bench_measure(&r, "event: a new action", many, bench_event_action);
    bench_measure(&r, "help overlay open / close", n, bench_help);

    /* Every tab on main, focused. */
    for (size_t t = 0; t < ui_ntabs; t++) {
        char what[80];
        if (ui_tabs[t] == &tab_logs)
            continue; /* measured below, with its buffer full */
        layout_draw(&ui, bench_show(&ui, ui_tabs[t]));
        bench_fill_actions(&ui);
        if (ui_tabs[t] == &tab_changes)
            bench_fill_changes(&ui);
        if (ui_tabs[t] == &tab_files)
            bench_fill_files(&ui);
        ui.focus = UI_PANE_DETAIL;
        snprintf(what, sizeof(what), "%s tab: full redraw", ui_tabs[t]->name);
        bench_measure(&r, what, n, bench_full);
        if (ui_tabs[t]->list >= 0) {
            snprintf(what, sizeof(what), "%s tab: j/k through %zu rows", ui_tabs[t]->name,
                     ui_lists[ui_tabs[t]->list]->count(&ui));
            bench_measure(&r, what, many, bench_jk);
        }
    }

    /* Log views with a full buffer. */
    logbuf_init(&bench_logs.buf, (size_t)lines, BENCH_LOG_MAX_BYTES);
    bench_logs.follow = true;
    bench_logs.needle = "error";
    for (size_t v = 0; v < BENCH_NLOG_VIEWS; v++) {
        const struct bench_view *bv = &bench_log_views[v];
        char what[80];
        layout_draw(&ui, bench_show(&ui, bv->page));
        ui.focus = UI_PANE_DETAIL;
        bench_cur_logbuf = bv->logbuf(&ui);
        if (!bench_cur_logbuf)
            continue;
        double before = bench_heap_mb();
        bench_fill_log(bench_cur_logbuf, lines);
        mem->logs = bench_heap_mb() - before; /* what the lines alone added */
        snprintf(what, sizeof(what), "%s: full redraw", bv->name);
        bench_measure(&r, what, n, bench_full);
        snprintf(what, sizeof(what), "%s: a new line (following)", bv->name);
        bench_measure(&r, what, many, bench_log_line_arrives);
        snprintf(what, sizeof(what), "%s: j/k scroll by a line", bv->name);
        bench_measure(&r, what, many, bench_scroll);
        /* Bounded: ten times its capacity more lines leave it (and the process) the same. */
        bench_fill_log(bench_cur_logbuf, lines * 10);
        mem->overflow = bench_rss_mb("VmRSS");
        mem->log_count = bench_cur_logbuf->count;
        mem->log_bytes = bench_cur_logbuf->bytes;
        mem->log_dropped = bench_cur_logbuf->dropped;
    }
    mem->end = bench_rss_mb("VmRSS");
    mem->hwm = bench_rss_mb("VmHWM");

    printf("\ndashboard frames, %dx%d xterm-256color on a pty: %d engine%s x %d sessions, %zu "
           "actions, %d approvals, %llu log lines; ms from the key or event to the frame on the "
           "terminal (budget 10 ms)\n\n",
           cols, rows, bench_engines, bench_engines == 1 ? "" : "s", bench_sessions,
           (size_t)MODEL_ACTIONS_LIMIT, BENCH_APPROVALS, lines);
    printf("| %-56s | %6s | %7s | %7s | %7s | %11s |\n", "frame", "n", "p50", "p95", "max",
           "bytes/frame");
    printf("|%s|%s|%s|%s|%s|%s|\n", "----------------------------------------------------------",
           "--------", "---------", "---------", "---------", "-------------");
    double worst = 0;
    for (size_t i = 0; i < r.nrows; i++) {
        const struct bench_row *row = &r.rows[i];
        printf("| %-56s | %6zu | %7.3f | %7.3f | %7.3f | %11.0f |\n", row->what, row->n, row->p50,
               row->p95, row->max, row->bytes);
        if (row->p95 > worst)
            worst = row->p95;
    }
    printf("\nworst p95 %.3f ms: %s the 10 ms budget\n", worst, worst <= 10.0 ? "within" : "OVER");
    fflush(stdout);
    int bad = 0;
    for (size_t i = 0; i < r.nrows; i++) {
        if (r.rows[i].n == 0 || (strstr(r.rows[i].what, "full redraw") && r.rows[i].bytes < 1)) {
            fprintf(stderr, "paddock-bench-ui: '%s' drew nothing\n", r.rows[i].what);
            bad++;
        }
    }
    if (mem->log_count != lines || mem->log_dropped < lines * 10) {
        fprintf(stderr,
                "paddock-bench-ui: the log buffer holds %zu lines (%llu dropped), not %llu\n",
                mem->log_count, mem->log_dropped, lines);
        bad++;
    }
    if (print_mem)
        printf(
            "memory (VmRSS): %.1f MB with curses up; %.1f MB with %d sessions, %zu actions, "
            "%d approvals and the windows; +%.1f MB of heap for %llu log lines; %.1f MB after %llu "
            "more lines (the buffer holds %zu lines, %.1f MB of text, %llu dropped: "
            "bounded); %.1f MB at the end, peak %.1f MB\n",
            mem->base, mem->model, bench_sessions * bench_engines, (size_t)MODEL_ACTIONS_LIMIT,
            BENCH_APPROVALS, mem->logs, lines, mem->overflow, lines * 10, mem->log_count,
            (double)mem->log_bytes / 1048576.0, mem->log_dropped, mem->end, mem->hwm);

    ui_pages_end(&ui);
    logbuf_free(&bench_logs.buf);
    client_async_free(ui.async);
    model_free(&ui.model);
    free(ui.sel_session);
    layout_free(&ui);
    client_free(c);
    bench_tty_close(&tty);
    return bad;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"size", required_argument, NULL, 's'},    {"frames", required_argument, NULL, 'f'},
        {"lines", required_argument, NULL, 'l'},   {"sessions", required_argument, NULL, 'n'},
        {"engines", required_argument, NULL, 'e'}, {NULL, 0, NULL, 0}};
    int sizes[8][2], nsizes = 0, frames = 300, c;
    unsigned long long lines = 100000;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            if (nsizes < 8 && sscanf(optarg, "%dx%d", &sizes[nsizes][0], &sizes[nsizes][1]) == 2 &&
                sizes[nsizes][0] > 0 && sizes[nsizes][1] > 0)
                nsizes++;
            else
                return 2;
            break;
        case 'f':
            frames = atoi(optarg);
            break;
        case 'l':
            lines = strtoull(optarg, NULL, 10);
            break;
        case 'n':
            bench_sessions = atoi(optarg);
            break;
        case 'e':
            bench_engines = atoi(optarg);
            break;
        default:
            fprintf(stderr,
                    "usage: %s [--size COLSxROWS]... [--frames N] [--lines N] [--sessions N] "
                    "[--engines E]\n",
                    argv[0]);
            return 2;
        }
    }
    if (frames < 1 || lines < 1 || bench_sessions < BENCH_APPROVALS * 17 + 1 || bench_engines < 1 ||
        bench_engines > UI_ENGINES_MAX)
        return 2;
    /* The Logs tab keeps as many lines as the reference page: the same bound for both. */
    char bound[32];
    snprintf(bound, sizeof(bound), "%llu", lines);
    setenv("PADDOCK_LOG_LINES", bound, 1);
    if (!nsizes) { /* a common terminal and a large one */
        sizes[0][0] = 160, sizes[0][1] = 45;
        sizes[1][0] = 320, sizes[1][1] = 90;
        nsizes = 2;
    }
    setlocale(LC_ALL, "");
    const char *cs = nl_langinfo(CODESET);
    if (!cs || strcasecmp(cs, "UTF-8") != 0)
        setlocale(LC_ALL, "C.UTF-8");
    int bad = 0;
    for (int i = 0; i < nsizes; i++) {
        struct bench_mem mem = {0};
        bad += bench_size(sizes[i][0], sizes[i][1], frames, lines, &mem, i == 0);
    }
    return bad ? 1 : 0;
}
