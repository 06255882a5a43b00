/* The Logs tab: the selected session's container log, live (GET .../logs?follow=1 as
 * server-sent events on the page's descriptor), or the tail the engine kept when there is no
 * container any more. Lines go into a bounded ring (ui/logbuf.c; the lines it dropped are
 * counted on the border); the view over them (scrolling, wrapping, search, highlight) is
 * the shared text viewer (ui/textview.c), which draws the sanitized text through draw_text
 * like every untrusted string. */
#include "client/client.h"
#include "common/sanitize.h"
#include "common/timeconv.h"
#include "ui/logview.h"
#include "ui/textview.h"
#include "ui/ui_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define LOGS_TAIL 2000                     /* lines asked for when the stream starts */
#define LOGS_DEFAULT_LINES 100000          /* the buffer's bound (PADDOCK_LOG_LINES changes it) */
#define LOGS_MAX_BYTES (32u * 1024 * 1024) /* and its bytes: one line is cut at a quarter */

enum logs_phase {
    LOGS_NONE,        /* no session */
    LOGS_LIVE,        /* following the container's log */
    LOGS_ENDED,       /* the stream ended (the container stopped or went) */
    LOGS_STORED_WAIT, /* asking for the tail (no container to follow) */
    LOGS_STORED,      /* showing a tail: the stored one, or the container's without follow */
    LOGS_FAILED,
};

/* The operator's choices outlive a session change (the tab's state does not). */
static struct {
    bool wrap, stamps;
} logs_prefs;

struct logs {
    struct ui *ui;
    char *sid;
    char state[24]; /* the session's last known state (a restart follows again) */
    struct logbuf buf;
    struct client_events *sse;
    enum logs_phase phase;
    char note[320];     /* what the phase line says: an end reason, an error, the tail's origin */
    bool got_lines;     /* the stream sent a line (an end without any asks for a stored tail) */
    struct textview tv; /* the view over buf; tv.follow: it sticks to the last line */
    int width;          /* the tab's width when last drawn */
    char save_path[PATH_MAX];
    char hint[192];
    char tok; /* its address identifies the tail request */
};

static struct logs *logs_get(struct ui *ui)
{
    void **slot = ui_page_slot(ui, &tab_logs);
    return slot ? *slot : NULL;
}

/* The state without claiming a slot (hint takes a const ui). */
static struct logs *logs_peek(const struct ui *ui)
{
    for (size_t i = 0; i < sizeof(ui->slots) / sizeof(ui->slots[0]); i++)
        if (ui->slots[i].page == &tab_logs)
            return ui->slots[i].state;
    return NULL;
}

static double logs_wall_now(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

static size_t logs_bound(void)
{
    const char *v = getenv("PADDOCK_LOG_LINES");
    char *end = NULL;
    long n = v && *v ? strtol(v, &end, 10) : 0;
    return n >= 1 && end && !*end ? (size_t)n : LOGS_DEFAULT_LINES;
}

/* ---- the lines, as the text viewer sees them ---- */

static size_t logs_src_count(const void *ud)
{
    return ((const struct logs *)ud)->buf.count;
}

static const char *logs_src_line(const void *ud, size_t i, size_t *len)
{
    const struct logbuf_line *l = logbuf_get(&((const struct logs *)ud)->buf, i);
    *len = l ? l->len : 0;
    return l ? l->text : NULL;
}

static enum ui_color logs_src_color(const void *ud, size_t i)
{
    const struct logbuf_line *l = logbuf_get(&((const struct logs *)ud)->buf, i);
    return l && l->fd == 2 ? UI_C_WARN : UI_C_NORMAL;
}

static uint64_t logs_src_first(const void *ud)
{
    return ((const struct logs *)ud)->buf.dropped;
}

static void logs_src_gutter(const void *ud, size_t i, char *buf, size_t size)
{
    const struct logbuf_line *l = logbuf_get(&((const struct logs *)ud)->buf, i);
    logview_stamp_format(l ? l->at : 0, buf, size);
}

static const struct textview_source logs_source = {
    .count = logs_src_count,
    .line = logs_src_line,
    .color = logs_src_color,
    .first = logs_src_first,
    .gutter = logs_src_gutter,
};

/* Empty the buffer (line numbers start again: so does the view). */
static void logs_clear(struct logs *L)
{
    logbuf_clear(&L->buf);
    textview_reset(&L->tv);
}

/* ---- the stream and the stored tail ---- */

static void logs_stop_stream(struct logs *L)
{
    client_events_close(L->sse);
    L->sse = NULL;
}

static void logs_on_sse(const char *type, json_t *data, void *ud)
{
    struct logs *L = ud;
    if (strcmp(type, "log") == 0) {
        json_t *text = json_object_get(data, "text");
        json_int_t fd = json_integer_value(json_object_get(data, "fd"));
        L->got_lines = true;
        if (json_is_string(text))
            logview_append(&L->buf, fd == 2 ? 2 : 1, json_string_value(text),
                           json_string_length(text), true, logs_wall_now());
    } else if (strcmp(type, "end") == 0) {
        const char *why = json_string_value(json_object_get(data, "reason"));
        L->phase = LOGS_ENDED;
        snprintf(L->note, sizeof(L->note), "ended: %s", why && *why ? why : "the stream ended");
    }
}

static void logs_on_tail(int status, json_t *reply, const char *err, void *ud)
{
    struct logs *L = (struct logs *)((char *)ud - offsetof(struct logs, tok));
    bool after_end = L->phase == LOGS_ENDED;
    if (status == 200) {
        json_t *text = json_object_get(reply, "text");
        const char *source = json_string_value(json_object_get(reply, "source"));
        bool stored = source && strcmp(source, "stored") == 0;
        size_t len = json_string_length(text);
        if (!stored && after_end && !len) {
            L->ui->dirty |= UI_DIRTY_DETAIL; /* ended with nothing written: say only that */
            return;
        }
        logs_clear(L);
        const char *t = json_string_value(text);
        logview_append(&L->buf, 1, t, len, false, 0);
        if (len && t[len - 1] != '\n')
            logbuf_append(&L->buf, 1, "\n", 1, 0); /* a last line without its newline */
        L->phase = LOGS_STORED;
        L->tv.follow = true;
        if (stored) {
            char when[64] = "";
            json_t *at = json_object_get(reply, "at");
            if (json_is_number(at)) {
                struct tm tm;
                if (timeconv_to_local(json_number_value(at), &tm) == 0)
                    strftime(when, sizeof(when), ", kept %Y-%m-%d %H:%M:%S", &tm);
            }
            snprintf(L->note, sizeof(L->note), "stored log tail: the container is gone%s", when);
        } else {
            snprintf(L->note, sizeof(L->note), "the container's log (not followed)");
        }
    } else if (status == 404 && after_end) {
        size_t n = strlen(L->note);
        snprintf(L->note + n, sizeof(L->note) - n, "; the engine kept no log tail");
    } else if (status == 404) { /* not created yet, or removed before anything was kept */
        L->phase = LOGS_STORED;
        snprintf(L->note, sizeof(L->note), "%s", client_error_message(reply, "no log"));
    } else {
        L->phase = LOGS_FAILED;
        snprintf(L->note, sizeof(L->note), "%s",
                 status < 0 ? (err ? err : "the engine does not answer")
                            : client_error_message(reply, "the engine refused the log tail"));
    }
    L->ui->dirty |= UI_DIRTY_DETAIL;
}

static void logs_fetch_tail(struct logs *L)
{
    char path[160];
    snprintf(path, sizeof(path), "/v1/sessions/%s/logs?tail=%d", L->sid, LOGS_TAIL);
    if (L->phase != LOGS_ENDED) {
        L->phase = LOGS_STORED_WAIT;
        snprintf(L->note, sizeof(L->note), "no container to follow: loading the stored log tail");
    }
    ui_cancel(L->ui, &L->tok);
    ui_request(L->ui, "GET", path, NULL, logs_on_tail, &L->tok);
}

static void logs_follow(struct logs *L)
{
    char path[160];
    snprintf(path, sizeof(path), "/v1/sessions/%s/logs?follow=1&tail=%d&timestamps=1", L->sid,
             LOGS_TAIL);
    logs_stop_stream(L);
    logs_clear(L);
    L->tv.follow = true;
    L->got_lines = false;
    char *err = NULL;
    /* Started, not opened: a remote engine's connect and handshake go on in the loop (poll_fd,
     * next_tick), so a slow engine never freezes the dashboard. */
    L->sse = client_sse_start(ui_client_of(L->ui, L->sid), path, &err);
    if (!L->sse) {
        L->phase = LOGS_FAILED;
        snprintf(L->note, sizeof(L->note), "%s", err ? err : "cannot reach the engine");
        free(err);
        return;
    }
    L->phase = LOGS_LIVE;
    L->note[0] = '\0';
}

static int tab_logs_poll_fd(struct ui *ui, short *events)
{
    struct logs *L = logs_get(ui);
    *events = L && L->sse ? client_events_want(L->sse) : 0;
    return L && L->sse ? client_events_fd(L->sse) : -1;
}

/* While the stream connects, its connect's timeouts pass with nothing ready. */
static int64_t tab_logs_next_tick(const struct ui *ui)
{
    const struct logs *L = logs_get((struct ui *)ui);
    if (!L || !L->sse || !client_events_connecting(L->sse))
        return 0;
    int ms = client_events_timeout(L->sse);
    return ms < 0 ? 0 : ui_now_ms() + ms;
}

static unsigned tab_logs_on_ready(struct ui *ui, short revents);

static unsigned tab_logs_on_tick(struct ui *ui)
{
    return tab_logs_on_ready(ui, 0);
}

static unsigned tab_logs_on_ready(struct ui *ui, short revents)
{
    (void)revents;
    struct logs *L = logs_get(ui);
    if (!L || !L->sse)
        return 0;
    if (client_events_pump(L->sse, logs_on_sse, L) == 0)
        return UI_DIRTY_DETAIL;
    int status = client_events_status(L->sse);
    if (status == 409) { /* no container (any more): what the engine kept */
        logs_stop_stream(L);
        logs_fetch_tail(L);
        return UI_DIRTY_DETAIL;
    }
    if (L->phase == LOGS_LIVE) {
        const char *e = client_events_error(L->sse);
        L->phase = status == 200 ? LOGS_ENDED : LOGS_FAILED;
        snprintf(L->note, sizeof(L->note), "%s",
                 e               ? e
                 : status == 200 ? "ended: the engine closed the log stream"
                                 : "the engine closed the log stream");
    }
    logs_stop_stream(L);
    if (L->phase == LOGS_ENDED && !L->got_lines)
        logs_fetch_tail(L); /* nothing came: maybe the engine kept a tail */
    return UI_DIRTY_DETAIL;
}

/* A session's container runs in these states: its log can be followed. */
static bool logs_state_runs(const char *state)
{
    static const char *const running[] = {"started", "ready", "paused"};
    for (size_t i = 0; state && i < sizeof(running) / sizeof(running[0]); i++)
        if (strcmp(state, running[i]) == 0)
            return true;
    return false;
}

static unsigned tab_logs_on_event(struct ui *ui, const char *type, json_t *data)
{
    struct logs *L = logs_get(ui);
    if (!L || !L->sid || strcmp(type, "session") != 0)
        return 0;
    const char *id = json_string_value(json_object_get(data, "id"));
    const char *state = json_string_value(json_object_get(data, "state"));
    if (!id || !state || strcmp(id, L->sid) != 0)
        return 0;
    bool was = logs_state_runs(L->state);
    snprintf(L->state, sizeof(L->state), "%s", state);
    /* Started again (after a stop): a new stream from the start of the kept log. */
    if (!L->sse && !was && logs_state_runs(state) && L->phase != LOGS_STORED_WAIT) {
        logs_follow(L);
        return UI_DIRTY_DETAIL;
    }
    return 0;
}

/* ---- open / close ---- */

static void tab_logs_close(struct ui *ui)
{
    void **slot = ui_page_slot(ui, &tab_logs);
    struct logs *L = slot ? *slot : NULL;
    if (!L)
        return;
    ui_cancel(ui, &L->tok);
    logs_stop_stream(L);
    logbuf_free(&L->buf);
    textview_free(&L->tv);
    free(L->sid);
    free(L);
    *slot = NULL;
}

static unsigned tab_logs_open(struct ui *ui)
{
    void **slot = ui_page_slot(ui, &tab_logs);
    if (!slot)
        return 0;
    if (*slot)
        tab_logs_close(ui);
    struct logs *L = calloc(1, sizeof(*L));
    if (!L || logbuf_init(&L->buf, logs_bound(), LOGS_MAX_BYTES) < 0) {
        free(L);
        ui_set_error(ui, "logs: out of memory");
        return UI_DIRTY_FOOTER;
    }
    *slot = L;
    L->ui = ui;
    textview_init(&L->tv, &logs_source, L, ui->utf8 ? 0 : SANITIZE_ASCII);
    L->tv.follow = true;
    L->tv.wrap = logs_prefs.wrap;
    L->tv.gutter_cols = logs_prefs.stamps ? LOGVIEW_STAMP_COLS : 0;
    if (!ui->sel_session) {
        L->phase = LOGS_NONE;
        return UI_DIRTY_DETAIL;
    }
    L->sid = strdup(ui->sel_session);
    const struct model_session *s = ui_session(ui);
    snprintf(L->state, sizeof(L->state), "%s", s && s->state ? s->state : "");
    if (!L->sid || !model_id_valid(L->sid)) {
        L->phase = LOGS_FAILED;
        snprintf(L->note, sizeof(L->note), "not a session id");
    } else if (!ui_engine_up(ui, L->sid)) {
        L->phase = LOGS_FAILED;
        snprintf(L->note, sizeof(L->note), "the engine is not connected");
    } else if (!s || strcmp(L->state, "deleted") == 0) {
        logs_fetch_tail(L); /* a past session: only its kept tail */
    } else {
        logs_follow(L);
    }
    return UI_DIRTY_DETAIL;
}

/* ---- drawing ---- */

static const char *logs_phase_text(const struct ui *ui, const struct logs *L, enum ui_color *color)
{
    static char buf[400];
    switch (L->phase) {
    case LOGS_NONE:
        *color = UI_C_DIM;
        return "no session selected";
    case LOGS_LIVE:
        *color = UI_C_OK;
        snprintf(buf, sizeof(buf), "%s live, %s", draw_glyph(ui, "\u25cf", "*"),
                 L->tv.follow ? "following the end" : "follow off (f or G follows)");
        return buf;
    case LOGS_ENDED:
        *color = UI_C_WARN;
        return L->note;
    case LOGS_STORED_WAIT:
    case LOGS_STORED:
        *color = UI_C_INFO;
        return L->note;
    case LOGS_FAILED:
        break;
    }
    *color = UI_C_BAD;
    return L->note;
}

static void tab_logs_draw(struct ui *ui, WINDOW *w, bool focused)
{
    (void)focused;
    struct logs *L = logs_get(ui);
    int width = getmaxx(w), height = getmaxy(w);
    if (!L || width < 4 || height < 1)
        return;
    /* the first row: where the lines come from; the search on the right */
    enum ui_color pc;
    const char *phase = logs_phase_text(ui, L, &pc);
    char search[320] = "";
    if (L->tv.needle[0])
        snprintf(search, sizeof(search), " /%s ", L->tv.needle);
    int sw = L->tv.needle[0] ? draw_text_width(ui, search) : 0;
    if (sw > width / 2)
        sw = width / 2;
    draw_text(ui, w, 0, 0, width - sw - 1, phase, theme_attr(pc));
    if (sw)
        draw_text_right(ui, w, 0, width - sw, sw, search, theme_attr(UI_C_INFO));

    L->width = width;
    L->tv.height = height > 1 ? height - 1 : 1;
    if (height < 2)
        return;
    if (!L->buf.count) {
        bool connecting = L->sse && client_events_connecting(L->sse);
        const char *empty = connecting                     ? "connecting to the engine…"
                            : L->phase == LOGS_LIVE        ? "no log lines yet"
                            : L->phase == LOGS_STORED_WAIT ? "loading…"
                            : L->phase == LOGS_NONE        ? ""
                                                           : "no log lines";
        draw_text(ui, w, 1, 1, width - 2, empty, theme_attr(UI_C_DIM));
        return;
    }
    textview_draw(ui, &L->tv, w, 1, 0, height - 1, width);
}

static const char *tab_logs_hint(const struct ui *ui)
{
    struct logs *L = logs_peek(ui);
    if (!L)
        return NULL;
    char flags[64];
    snprintf(flags, sizeof(flags), "%s%s%s", L->tv.follow ? "[follow] " : "",
             logs_prefs.wrap ? "[wrap] " : "", logs_prefs.stamps ? "[time] " : "");
    char counts[96];
    int n = snprintf(counts, sizeof(counts), "%zu lines", L->buf.count);
    if (L->buf.dropped && n > 0 && (size_t)n < sizeof(counts))
        snprintf(counts + n, sizeof(counts) - (size_t)n, ", %llu dropped",
                 (unsigned long long)L->buf.dropped);
    /* the counts matter most: the flags go first when the pane is narrow */
    int room = L->width - 6;
    snprintf(L->hint, sizeof(L->hint), "%s%s", flags, counts);
    if ((int)strlen(L->hint) > room)
        snprintf(L->hint, sizeof(L->hint), "%s", counts);
    return L->hint;
}

/* ---- keys ---- */

static unsigned logs_key_follow(struct ui *ui)
{
    struct logs *L = logs_get(ui);
    if (!L)
        return 0;
    if (L->tv.follow)
        textview_set_top(&L->tv, textview_top(&L->tv)); /* stay where the view is */
    L->tv.follow = !L->tv.follow;
    ui_set_status(ui, "%s", L->tv.follow ? "following the end" : "follow off");
    return UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
}

static unsigned logs_key_wrap(struct ui *ui)
{
    struct logs *L = logs_get(ui);
    logs_prefs.wrap = !logs_prefs.wrap;
    if (L)
        textview_set_wrap(&L->tv, logs_prefs.wrap);
    ui_set_status(ui, "%s", logs_prefs.wrap ? "long lines wrap" : "long lines are cut (…)");
    return UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
}

static unsigned logs_key_stamps(struct ui *ui)
{
    struct logs *L = logs_get(ui);
    logs_prefs.stamps = !logs_prefs.stamps;
    if (L)
        L->tv.gutter_cols = logs_prefs.stamps ? LOGVIEW_STAMP_COLS : 0;
    if (L && L->phase == LOGS_STORED && logs_prefs.stamps)
        ui_set_status(ui, "times shown (a stored tail has none)");
    else
        ui_set_status(ui, "%s", logs_prefs.stamps ? "times shown" : "times hidden");
    return UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
}

static unsigned logs_key_clear(struct ui *ui)
{
    struct logs *L = logs_get(ui);
    if (!L)
        return 0;
    logs_clear(L);
    L->tv.follow = true;
    ui_set_status(ui, "view cleared; new lines still come");
    return UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
}

/* Write the buffer to path (truncate: the operator said so). */
static unsigned logs_write(struct ui *ui, struct logs *L, int oflags)
{
    int fd = open(L->save_path, O_WRONLY | O_CREAT | O_CLOEXEC | oflags, 0644);
    if (fd < 0) {
        if (errno == EEXIST)
            return UI_DIRTY_ALL; /* asked first (logs_save_done) */
        ui_set_error(ui, "cannot save to %s: %s", L->save_path, strerror(errno));
        return UI_DIRTY_FOOTER;
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        ui_set_error(ui, "cannot save to %s: %s", L->save_path, strerror(errno));
        close(fd);
        return UI_DIRTY_FOOTER;
    }
    errno = 0;
    int rc = logview_save(&L->buf, f, logs_prefs.stamps);
    int saved = errno;
    if (fclose(f) != 0 && rc == 0) {
        rc = -1;
        saved = errno;
    }
    if (rc < 0) {
        ui_set_error(ui, "cannot save to %s: %s", L->save_path, strerror(saved ? saved : EIO));
        return UI_DIRTY_FOOTER;
    }
    char real[PATH_MAX];
    ui_set_status(ui, "saved %zu lines to %s", L->buf.count,
                  realpath(L->save_path, real) ? real : L->save_path);
    return UI_DIRTY_FOOTER;
}

static unsigned logs_overwrite(struct ui *ui, void *ud)
{
    (void)ud;
    struct logs *L = ui->page_open == &tab_logs ? logs_get(ui) : NULL;
    return L ? logs_write(ui, L, O_TRUNC) : 0;
}

static unsigned logs_save_done(struct ui *ui, const char *text, void *ud)
{
    (void)ud;
    struct logs *L = ui->page_open == &tab_logs ? logs_get(ui) : NULL;
    if (!L || !text || !*text)
        return UI_DIRTY_FOOTER;
    const char *home = getenv("HOME");
    if (text[0] == '~' && text[1] == '/' && home && *home)
        snprintf(L->save_path, sizeof(L->save_path), "%s%s", home, text + 1);
    else
        snprintf(L->save_path, sizeof(L->save_path), "%s", text);
    if (access(L->save_path, F_OK) == 0) {
        char q[PATH_MAX + 32];
        snprintf(q, sizeof(q), "%s exists: overwrite it?", L->save_path);
        confirm_open(ui, q, logs_overwrite, NULL);
        return UI_DIRTY_ALL;
    }
    return logs_write(ui, L, O_EXCL);
}

static unsigned logs_key_save(struct ui *ui)
{
    struct logs *L = logs_get(ui);
    if (!L || !L->sid)
        return 0;
    const struct model_session *s = ui_session(ui);
    const char *name = s && s->name && *s->name ? s->name : L->sid;
    char safe[80];
    size_t k = 0;
    for (const char *p = name; *p && k + 1 < sizeof(safe); p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_' || c == '.';
        safe[k++] = ok ? c : '_';
    }
    safe[k] = '\0';
    char path[128];
    snprintf(path, sizeof(path), "./paddock-%s-logs.txt", safe);
    prompt_open(ui, "save the lines to: ", path, logs_save_done, NULL);
    return UI_DIRTY_FOOTER;
}

static const struct ui_key logs_keys[] = {
    {.key = 'f',
     .name = "f",
     .help = "follow the end on/off (scrolling up stops following)",
     .fn = logs_key_follow,
     .hint = "f follow"},
    {.key = 'w',
     .name = "w",
     .help = "wrap long lines on/off (off: cut, marked with …)",
     .fn = logs_key_wrap,
     .hint = "w wrap"},
    {.key = 't',
     .name = "t",
     .help = "show the times on/off",
     .fn = logs_key_stamps,
     .hint = "t time"},
    {.key = 's',
     .name = "s",
     .help = "save the lines to a file",
     .fn = logs_key_save,
     .hint = "s save"},
    {.key = 'c',
     .name = "c",
     .help = "clear the view (new lines keep coming)",
     .fn = logs_key_clear,
     .hint = "c clear"},
    {.key = 'G', .name = "G", .help = "go to the end and follow it", .fn = textview_key_end},
    {.key = KEY_END, .name = "End", .help = "go to the end and follow it", .fn = textview_key_end},
    {0},
};

/* Scrolling and search: the text keys (textview_keys) on the view. */
static struct textview *tab_logs_text(const struct ui *ui)
{
    struct logs *L = logs_peek(ui);
    return L ? &L->tv : NULL;
}

struct logbuf *tab_logs_buffer(struct ui *ui)
{
    struct logs *L = logs_get(ui);
    return L ? &L->buf : NULL;
}

const struct ui_page tab_logs = {
    .name = "Logs",
    .short_name = "Log",
    .keys = logs_keys,
    .list = -1,
    .text = tab_logs_text,
    .open = tab_logs_open,
    .close = tab_logs_close,
    .draw = tab_logs_draw,
    .on_event = tab_logs_on_event,
    .poll_fd = tab_logs_poll_fd,
    .on_ready = tab_logs_on_ready,
    .next_tick = tab_logs_next_tick,
    .on_tick = tab_logs_on_tick,
    .hint = tab_logs_hint,
};
