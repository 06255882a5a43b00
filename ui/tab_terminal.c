/* The Terminal tab: a shell in the sandbox inside the pane (client/client_term.c's connection to
 * POST /v1/sessions/{id}/terminal, drawn through ui/vt.c), and the agent's own shell as a
 * read-only transcript (ui/agentlog.c); `a` switches between them.
 *
 * A shell opens only on Enter (or o), never on a mere tab switch. While it is open and the
 * pane has the keyboard ("typing"), every key goes to the shell but ^] (keys.c), which hands
 * the keyboard back to the sessions; coming back shows the shell and Enter types again. The
 * remote tty follows the pane's size; Shift-PgUp/PgDn scroll back while typing, PgUp/PgDn
 * otherwise. A shell belongs to its session, not to the pane: leaving the tab or the session
 * leaves it running (its output still read into its screen), and coming back shows the same
 * shell. It ends when the operator hangs it up (x), when it exits, or when its session
 * ends. */
#include "client/client.h"
#include "client/client_term.h"
#include "ui/agentlog.h"
#include "ui/paircache.h"
#include "ui/ui_internal.h"
#include "ui/vt.h"

#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* This tab (ui.c's table lists it; no other file names it). */
extern const struct ui_page tab_terminal;

#define TERM_SCROLLBACK 5000
#define TERM_PAIRS_MAX 4096 /* colour pairs the pane may hold at once */

enum term_state { TERM_IDLE, TERM_CONNECTING, TERM_OPEN, TERM_ENDED };

struct term_tab;

/* The operator's shell in one session: it outlives the pane that shows it. */
struct term_shell {
    struct term_shell *next;
    struct term_tab *tab;
    char sid[72];
    enum term_state st;
    struct client_term *conn;
    struct vt *vt; /* NULL until the first shell */
    char tid[CLIENT_TERM_ID_MAX];
    char note[300];           /* why it failed or how it ended (raw) */
    int sent_rows, sent_cols; /* the remote tty's size (asked for) */
    bool resizing;            /* a resize request is in flight */
    /* On a remote engine (TLS) the engine's close of the shell may not reach us: while open,
     * it is asked each second whether the command ended (term_on_tick). */
    int64_t check_at;
    char tok_resize, tok_end, tok_alive; /* async tokens */
};

/* Kept from the first opening of the tab to the dashboard's end (term_end), for its shells;
 * the rest is the view, reset at each opening. */
struct term_tab {
    struct ui *ui;
    struct term_shell *shells; /* every session's shell, open or ended */
    struct term_shell *sh;     /* the shown session's, or NULL before its first */
    char sid[72];
    bool typing; /* the pane takes every key */
    bool agent;  /* showing the agent's shell */
    struct agentlog *log;
    int scroll;     /* lines scrolled back in the view shown */
    int rows, cols; /* the pane's inside */
    struct paircache *pairs;
    bool default_colors;
};

static struct term_tab *term_tab(struct ui *ui)
{
    void **slot = ui_page_slot(ui, &tab_terminal);
    return slot ? *slot : NULL;
}

static const struct term_tab *term_tab_c(const struct ui *ui)
{
    return term_tab((struct ui *)ui);
}

#define TERM_FROM_TOKEN(ud, field)                                                                 \
    ((struct term_shell *)((char *)(ud)-offsetof(struct term_shell, field)))

/* The view shown now (yours or the agent's), or NULL. */
static struct vt *term_view(const struct term_tab *t)
{
    if (t->agent)
        return t->log ? agentlog_vt(t->log) : NULL;
    return t->sh ? t->sh->vt : NULL;
}

static bool term_live(const struct term_shell *s)
{
    return s && (s->st == TERM_CONNECTING || s->st == TERM_OPEN);
}

/* ---- the connection ---- */

/* What libvterm produced for the sandbox (keys, answers to queries) goes to the socket. */
static void term_send_output(struct term_shell *s)
{
    size_t len;
    const char *out = vt_output(s->vt, &len);
    if (!len)
        return;
    if (!s->conn || s->st == TERM_ENDED) {
        vt_output_consume(s->vt, len);
        return;
    }
    if (client_term_send(s->conn, out, len) < 0)
        ui_set_error(s->tab->ui, "the shell is not reading its input: %zu bytes dropped", len);
    vt_output_consume(s->vt, len);
}

static void term_on_resized(int status, json_t *reply, const char *err, void *ud);

/* Tell the remote tty the pane's size; one request at a time, the newest size wins. */
static void term_resize_remote(struct term_shell *s)
{
    const struct term_tab *t = s->tab;
    if (s->st != TERM_OPEN || s->resizing || !s->tid[0] || t->sh != s || t->rows <= 0 ||
        (t->rows == s->sent_rows && t->cols == s->sent_cols))
        return;
    char path[160];
    snprintf(path, sizeof(path), "/v1/sessions/%s/terminal/resize", s->sid);
    json_t *body = json_pack("{s:s,s:i,s:i}", "terminal", s->tid, "rows", t->rows, "cols", t->cols);
    if (body && ui_request(t->ui, "POST", path, body, term_on_resized, &s->tok_resize) == 0) {
        s->resizing = true;
        s->sent_rows = t->rows;
        s->sent_cols = t->cols;
    }
    json_decref(body);
}

static void term_on_resized(int status, json_t *reply, const char *err, void *ud)
{
    struct term_shell *s = TERM_FROM_TOKEN(ud, tok_resize);
    s->resizing = false;
    if (status < 0)
        ui_set_error(s->tab->ui, "resizing the shell: %s", err ? err : "no answer");
    else if (status != 200 && status != 409) /* 409: it ended meanwhile */
        ui_set_error(s->tab->ui, "resizing the shell: %s", client_error_message(reply, "refused"));
    term_resize_remote(s);
}

/* A line of ours in the shell's view (a dim note between shells); only printable bytes. */
static void term_note(struct term_shell *s, const char *text)
{
    if (!s->vt)
        return;
    char line[400];
    size_t n = 0;
    for (const char *p = text; *p && n < sizeof(line) - 1; p++)
        line[n++] = (unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p;
    line[n] = '\0';
    /* leave an alternate screen (a full-screen program that died) and reset colours first */
    vt_write(s->vt, "\x1b[?1047l\x1b[0m\r\n\x1b[7m", 19);
    vt_write(s->vt, line, n);
    vt_write(s->vt, "\x1b[0m\r\n", 6);
    size_t len;
    vt_output(s->vt, &len);
    vt_output_consume(s->vt, len);
}

static void term_on_end(int status, json_t *reply, const char *err, void *ud)
{
    struct term_shell *s = TERM_FROM_TOKEN(ud, tok_end);
    json_t *code = json_object_get(reply, "exit_code");
    const char *why = json_string_value(json_object_get(reply, "error"));
    if (status == 200 && json_is_integer(code))
        snprintf(s->note, sizeof(s->note), "the shell exited with code %lld",
                 (long long)json_integer_value(code));
    else if (status == 200 && why)
        snprintf(s->note, sizeof(s->note), "the shell ended: %.200s", why);
    else
        snprintf(s->note, sizeof(s->note), "the shell ended (%.200s)",
                 status < 0 ? (err ? err : "no answer") : client_error_message(reply, "unknown"));
    char line[400];
    snprintf(line, sizeof(line), "[%s. Enter opens a new one.]", s->note);
    term_note(s, line);
    if (s->tab->sh == s) {
        ui_set_status(s->tab->ui, "%s", s->note);
        s->tab->ui->dirty |= UI_DIRTY_DETAIL;
    }
}

static void term_hangup(struct term_shell *s)
{
    ui_cancel(s->tab->ui, &s->tok_resize);
    ui_cancel(s->tab->ui, &s->tok_alive);
    s->check_at = 0;
    s->resizing = false;
    client_term_close(s->conn);
    s->conn = NULL;
}

/* Why the engine refused the shell, for the operator: a paused or stopped session (known by
 * the error's code) is told with its key; anything else is the engine's message. */
static const char *term_refusal(const struct client_term *conn)
{
    const char *code = client_term_error_code(conn);
    if (code && strcmp(code, "session_paused") == 0)
        return "the session is paused: press u to resume it, then Enter";
    if (code && strcmp(code, "session_stopped") == 0)
        return "the session is stopped: press u to start it again (a restart), then Enter";
    return client_term_error(conn);
}

/* The connection is over: say how (the engine keeps an ended terminal a minute). */
static void term_ended(struct term_shell *s, const char *failure)
{
    if (failure) /* before the hang-up: failure may be the connection's own text */
        snprintf(s->note, sizeof(s->note), "cannot open a shell: %.250s", failure);
    term_hangup(s);
    s->st = TERM_ENDED;
    if (s->tab->sh == s)
        s->tab->typing = false;
    if (failure) {
        ui_set_error(s->tab->ui, "%s", s->note);
        char line[400];
        snprintf(line, sizeof(line), "[%s]", s->note);
        term_note(s, line);
        return;
    }
    snprintf(s->note, sizeof(s->note), "the shell ended");
    char path[200];
    snprintf(path, sizeof(path), "/v1/sessions/%s/terminal/%s", s->sid, s->tid);
    if (!s->tid[0] || ui_request(s->tab->ui, "GET", path, NULL, term_on_end, &s->tok_end) < 0)
        term_note(s, "[the shell ended. Enter opens a new one.]");
}

static void term_on_data(const char *data, size_t len, void *ud)
{
    struct term_shell *s = ud;
    struct term_tab *t = s->tab;
    size_t before = vt_scrollback(s->vt);
    vt_write(s->vt, data, len);
    /* scrolled back: the lines in view stay where they are as output arrives */
    if (t->sh == s && t->scroll && !t->agent)
        t->scroll += (int)(vt_scrollback(s->vt) - before);
}

/* The session's shell (open or ended), or NULL; with create, a new idle one when it has none
 * (NULL without memory). */
static struct term_shell *term_shell_of(struct term_tab *t, const char *sid, bool create)
{
    for (struct term_shell *s = t->shells; s; s = s->next)
        if (strcmp(s->sid, sid) == 0)
            return s;
    if (!create)
        return NULL;
    struct term_shell *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->tab = t;
    snprintf(s->sid, sizeof(s->sid), "%s", sid);
    s->next = t->shells;
    t->shells = s;
    return s;
}

static unsigned term_open_shell(struct term_tab *t)
{
    struct ui *ui = t->ui;
    t->agent = false;
    t->scroll = 0;
    if (term_live(t->sh)) {
        t->typing = true;
        return UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
    }
    if (!t->sid[0]) {
        ui_set_error(ui, "no session selected");
        return UI_DIRTY_FOOTER;
    }
    struct term_shell *s = t->sh ? t->sh : term_shell_of(t, t->sid, true);
    int rows = t->rows > 0 ? t->rows : 24, cols = t->cols > 0 ? t->cols : 80;
    if (!s || (!s->vt && !(s->vt = vt_new(rows, cols, TERM_SCROLLBACK)))) {
        ui_set_error(ui, "out of memory");
        return UI_DIRTY_FOOTER;
    }
    t->sh = s;
    vt_resize(s->vt, rows, cols);
    ui_cancel(ui, &s->tok_end); /* the last shell's ending is old news */
    char path[200], *err = NULL;
    snprintf(path, sizeof(path), "/v1/sessions/%s/terminal?rows=%d&cols=%d", s->sid, rows, cols);
    s->tid[0] = '\0';
    s->note[0] = '\0';
    s->conn = client_term_open_on(ui_client_of(ui, s->sid), path, &err);
    if (!s->conn) {
        term_ended(s, err ? err : "out of memory");
        free(err);
        return UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
    }
    s->st = TERM_CONNECTING;
    t->typing = true;
    s->sent_rows = rows;
    s->sent_cols = cols;
    ui_set_status(ui, "opening a shell in the sandbox (^] gives the keys back)");
    return UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
}

/* ---- keys (not typing) ---- */

static unsigned term_key_open(struct ui *ui)
{
    struct term_tab *t = term_tab(ui);
    return t ? term_open_shell(t) : 0;
}

static unsigned term_key_agent(struct ui *ui)
{
    struct term_tab *t = term_tab(ui);
    if (!t)
        return 0;
    if (!t->sid[0]) {
        ui_set_error(ui, "no session selected");
        return UI_DIRTY_FOOTER;
    }
    t->agent = !t->agent;
    t->scroll = 0;
    if (t->agent && !t->log) {
        t->log = agentlog_new(ui, t->sid, t->rows > 0 ? t->rows : 24, t->cols > 0 ? t->cols : 80);
        if (!t->log) {
            t->agent = false;
            ui_set_error(ui, "out of memory");
        }
    }
    if (t->agent)
        t->typing = false;
    return UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
}

static unsigned term_key_hangup(struct ui *ui)
{
    struct term_tab *t = term_tab(ui);
    if (!t || !term_live(t->sh))
        return 0;
    struct term_shell *s = t->sh;
    term_hangup(s);
    s->st = TERM_ENDED;
    snprintf(s->note, sizeof(s->note), "hung up");
    term_note(s, "[hung up. Enter opens a new shell.]");
    return UI_DIRTY_DETAIL;
}

static unsigned term_scroll(struct term_tab *t, long delta)
{
    struct vt *v = term_view(t);
    if (!v)
        return 0;
    long s = (long)t->scroll + delta, max = (long)vt_scrollback(v);
    if (s < 0)
        s = 0;
    if (s > max)
        s = max;
    if (s == t->scroll)
        return 0;
    t->scroll = (int)s;
    return UI_DIRTY_DETAIL;
}

static long term_page(const struct term_tab *t)
{
    return t->rows > 2 ? t->rows - 1 : 1;
}

static unsigned term_key_page_up(struct ui *ui)
{
    struct term_tab *t = term_tab(ui);
    return t ? term_scroll(t, term_page(t)) : 0;
}

static unsigned term_key_page_down(struct ui *ui)
{
    struct term_tab *t = term_tab(ui);
    return t ? term_scroll(t, -term_page(t)) : 0;
}

static unsigned term_key_top(struct ui *ui)
{
    struct term_tab *t = term_tab(ui);
    return t ? term_scroll(t, 1L << 30) : 0;
}

static unsigned term_key_bottom(struct ui *ui)
{
    struct term_tab *t = term_tab(ui);
    return t ? term_scroll(t, -(1L << 30)) : 0;
}

/* A refused shell says "press u": the sessions list's resume, on the session shown here. */
static unsigned term_key_resume(struct ui *ui)
{
    for (const struct ui_key *k = ops_session_keys; k->fn; k++)
        if (k->key == 'u')
            return k->fn(ui);
    return 0;
}

static const struct ui_key term_keys[] = {
    {.key = '\n',
     .name = "Enter",
     .help = "open a shell in the sandbox (or type into the open one)",
     .fn = term_key_open,
     .hint = "Enter shell",
     .mutates = true},
    {.key = KEY_ENTER,
     .name = "Enter",
     .help = "open a shell in the sandbox (or type into the open one)",
     .fn = term_key_open,
     .mutates = true},
    {.key = 'o',
     .name = "o",
     .help = "open a shell in the sandbox (or type into the open one)",
     .fn = term_key_open,
     .mutates = true},
    {.key = 'a',
     .name = "a",
     .help = "switch between your shell and the agent's (read-only)",
     .fn = term_key_agent,
     .hint = "a agent/yours"},
    {.key = 'x', .name = "x", .help = "hang up the shell", .fn = term_key_hangup},
    {.key = 'u',
     .name = "u",
     .help = "resume the session (paused or stopped), as u in the sessions list",
     .fn = term_key_resume,
     .mutates = true},
    {.key = KEY_PPAGE,
     .name = "PgUp",
     .help = "scroll back",
     .fn = term_key_page_up,
     .hint = "PgUp/PgDn scroll"},
    {.key = KEY_SPREVIOUS, .name = "S-PgUp", .help = "scroll back", .fn = term_key_page_up},
    {.key = KEY_NPAGE, .name = "PgDn", .help = "scroll forward", .fn = term_key_page_down},
    {.key = KEY_SNEXT, .name = "S-PgDn", .help = "scroll forward", .fn = term_key_page_down},
    {.key = 'g', .name = "g", .help = "the oldest line kept", .fn = term_key_top},
    {.key = 'G', .name = "G", .help = "the newest lines", .fn = term_key_bottom},
    {0},
};

/* ---- typing ---- */

/* Typing: the shell has the keyboard, until ^] (on_key sees it) or the pane loses the focus
 * otherwise (seen here at once, and for good at the next draw). */
static bool term_takes_keys(const struct ui *ui)
{
    const struct term_tab *t = term_tab_c(ui);
    return t && t->typing && !t->agent && term_live(t->sh) &&
           (ui->page || ui->focus == UI_PANE_DETAIL);
}

static unsigned term_on_key(struct ui *ui, int key, bool code)
{
    struct term_tab *t = term_tab(ui);
    if (!t || !t->sh || !t->sh->vt)
        return 0;
    if (key == UI_KEY_LEAVE && !code) { /* the keyboard goes back to the dashboard */
        t->typing = false;
        ui_set_status(ui, "the shell keeps running: Enter in its pane types into it again");
        return UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
    }
    /* the terminal's own scrollback keys, as in xterm */
    if (code && (key == KEY_SPREVIOUS || key == KEY_SNEXT))
        return term_scroll(t, key == KEY_SPREVIOUS ? term_page(t) : -term_page(t));
    unsigned dirty = t->scroll ? UI_DIRTY_DETAIL : 0;
    t->scroll = 0;
    vt_key(t->sh->vt, key, code, false);
    term_send_output(t->sh);
    return dirty;
}

/* ---- the loop's descriptor ---- */

static int term_poll_fd(struct ui *ui, short *events)
{
    struct term_tab *t = term_tab(ui);
    if (!t || !t->sh || !t->sh->conn)
        return -1;
    *events = client_term_events(t->sh->conn);
    return client_term_fd(t->sh->conn);
}

/* Bytes in or out on a shell's connection, shown or not. */
static void term_pump(struct term_shell *s, short revents)
{
    struct term_tab *t = s->tab;
    enum client_term_state cs = client_term_pump(s->conn, revents, term_on_data, s);
    if (s->st == TERM_CONNECTING && cs == CLIENT_TERM_OPEN) {
        s->st = TERM_OPEN;
        snprintf(s->tid, sizeof(s->tid), "%s", client_term_id(s->conn));
        if (client_is_remote(ui_client_of(t->ui, s->sid)))
            s->check_at = ui_now_ms() + 1000;
        if (t->sh == s)
            ui_set_status(t->ui, "shell open: every key goes to it, ^] gives the keys back");
        term_resize_remote(s); /* the pane may have changed while it connected */
    }
    if (cs == CLIENT_TERM_FAILED)
        term_ended(s, term_refusal(s->conn));
    else if (cs == CLIENT_TERM_CLOSED)
        term_ended(s, NULL);
    else
        term_send_output(s); /* answers to the shell's terminal queries */
}

static unsigned term_on_ready(struct ui *ui, short revents)
{
    struct term_tab *t = term_tab(ui);
    if (!t || !t->sh || !t->sh->conn)
        return 0;
    term_pump(t->sh, revents);
    return UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
}

/* The shells not shown keep reading, so their programs are not held up by a full pipe and
 * their end is seen when it comes. */
static int term_bg_poll(struct ui *ui, struct pollfd *fds, int max)
{
    struct term_tab *t = term_tab(ui);
    int n = 0;
    for (struct term_shell *s = t ? t->shells : NULL; s && n < max; s = s->next) {
        if (!s->conn || s == t->sh)
            continue;
        fds[n].fd = client_term_fd(s->conn);
        fds[n].events = client_term_events(s->conn);
        fds[n++].revents = 0;
    }
    return n;
}

static unsigned term_bg_ready(struct ui *ui, const struct pollfd *fds, int n)
{
    struct term_tab *t = term_tab(ui);
    /* by descriptor: a key handled before this may have hung one up */
    for (struct term_shell *s = t ? t->shells : NULL; s; s = s->next) {
        if (!s->conn || s == t->sh)
            continue;
        for (int i = 0; i < n; i++)
            if (fds[i].fd == client_term_fd(s->conn) && fds[i].revents) {
                term_pump(s, fds[i].revents);
                break;
            }
    }
    return 0;
}

/* ---- a remote shell's end ---- */

static void term_on_alive(int status, json_t *reply, const char *err, void *ud)
{
    struct term_shell *s = TERM_FROM_TOKEN(ud, tok_alive);
    (void)err;
    if (status != 200 || !json_is_false(json_object_get(reply, "running")) || s->st != TERM_OPEN ||
        !s->conn)
        return;
    term_pump(s, POLLIN); /* what came before the end */
    if (s->st == TERM_OPEN)
        term_ended(s, NULL);
    s->tab->ui->dirty |= UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
}

static int64_t term_next_tick(const struct ui *ui)
{
    const struct term_tab *t = term_tab_c(ui);
    if (t && t->sh && t->sh->st == TERM_CONNECTING && t->sh->conn) {
        /* a remote connect's timeouts pass with nothing ready */
        int ms = client_term_timeout(t->sh->conn);
        return ms < 0 ? 0 : ms ? ui_now_ms() + ms : 1; /* 1: long past, due now */
    }
    return t && t->sh && t->sh->st == TERM_OPEN ? t->sh->check_at : 0;
}

static unsigned term_on_tick(struct ui *ui)
{
    struct term_tab *t = term_tab(ui);
    struct term_shell *s = t ? t->sh : NULL;
    if (s && s->st == TERM_CONNECTING && s->conn) {
        term_pump(s, 0);
        return UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
    }
    if (!s || s->st != TERM_OPEN || !s->check_at || ui_now_ms() < s->check_at)
        return 0;
    s->check_at = ui_now_ms() + 1000;
    char path[200];
    snprintf(path, sizeof(path), "/v1/sessions/%s/terminal/%s", s->sid, s->tid);
    ui_cancel(ui, &s->tok_alive);
    ui_request(ui, "GET", path, NULL, term_on_alive, &s->tok_alive);
    return 0;
}

/* ---- events ---- */

static unsigned term_on_event(struct ui *ui, const char *type, json_t *data)
{
    struct term_tab *t = term_tab(ui);
    if (!t || !t->log)
        return 0;
    unsigned dirty = strcmp(type, "action") == 0          ? agentlog_on_action(t->log, data)
                     : strcmp(type, "action_output") == 0 ? agentlog_on_output(t->log, data)
                                                          : 0;
    return t->agent ? dirty : 0;
}

/* ---- drawing ---- */

/* The colour pair and attributes of a cell. */
static attr_t term_cell_attr(struct term_tab *t, const struct vt_cell *c, int *pair)
{
    attr_t a = A_NORMAL;
    bool bold = c->bold;
    *pair = 0;
    if (t->ui->color && t->pairs && (c->fg >= 0 || c->bg >= 0)) {
        int fg = vt_color_fold(c->fg, COLORS, &bold), bg = vt_color_fold(c->bg, COLORS, NULL);
        if (!t->default_colors) { /* -1 is not a colour there */
            fg = fg < 0 ? COLOR_WHITE : fg;
            bg = bg < 0 ? COLOR_BLACK : bg;
        }
        if (fg < COLORS && bg < COLORS) {
            bool fresh;
            int p = paircache_get(t->pairs, fg, bg, &fresh);
            if (p > 0 && (!fresh || init_extended_pair(p, fg, bg) == OK))
                *pair = p;
        }
    }
    if (bold)
        a |= A_BOLD;
    if (c->underline)
        a |= A_UNDERLINE;
    if (c->reverse)
        a |= A_REVERSE;
    if (c->italic)
        a |= A_ITALIC;
    if (c->blink)
        a |= A_BLINK;
    if (c->suspicious)
        a |= A_STANDOUT;
    return a;
}

static void term_draw_cell(struct term_tab *t, WINDOW *w, int y, int x, const struct vt_cell *c,
                           bool cursor)
{
    wchar_t wc[VT_MAX_CHARS + 1];
    int n = 0;
    for (int i = 0; i < VT_MAX_CHARS && c->ch[i]; i++) {
        uint32_t cp = c->ch[i];
        if (!t->ui->utf8 && cp > 0x7e)
            cp = i ? 0 : '?';
        if (!cp)
            continue;
        /* the locale must agree on the width, else the row would shift */
        int cw = wcwidth((wchar_t)cp);
        if (i == 0 && (cw < 0 || cw > c->width))
            cp = '?';
        else if (i > 0 && cw != 0)
            continue;
        wc[n++] = (wchar_t)cp;
    }
    if (!n)
        wc[n++] = L' ';
    wc[n] = L'\0';
    int pair;
    attr_t a = term_cell_attr(t, c, &pair);
    if (cursor)
        a ^= A_REVERSE;
    cchar_t cc;
    if (setcchar(&cc, wc, a, 0, &pair) == OK)
        mvwadd_wch(w, y, x, &cc);
}

static void term_draw_vt(struct term_tab *t, WINDOW *w, struct vt *v, bool cursor)
{
    int rows, cols, cr = -1, cc = -1;
    bool visible = false;
    vt_size(v, &rows, &cols);
    if (cursor)
        vt_cursor(v, &cr, &cc, &visible);
    for (int y = 0; y < rows && y < getmaxy(w); y++) {
        int row = y - t->scroll; /* negative: the scrollback */
        for (int x = 0; x < cols && x < getmaxx(w); x++) {
            struct vt_cell c;
            vt_cell(v, row, x, &c);
            if (c.width == 0)
                continue; /* the right half of a wide character */
            if (c.width == 2 && x + 1 >= getmaxx(w))
                break;
            term_draw_cell(t, w, y, x, &c, visible && !t->scroll && row == cr && x == cc);
        }
    }
    if (t->scroll) {
        char where[64];
        snprintf(where, sizeof(where), " scrolled back %d/%zu ", t->scroll, vt_scrollback(v));
        draw_text_right(t->ui, w, 0, 0, getmaxx(w), where, theme_attr(UI_C_INFO) | A_REVERSE);
    }
}

static void term_draw_idle(struct term_tab *t, WINDOW *w)
{
    struct ui *ui = t->ui;
    int width = getmaxx(w) - 2;
    if (!ui_session(ui)) {
        draw_text(ui, w, 0, 1, width, "no session selected", theme_attr(UI_C_DIM));
        return;
    }
    static const char *const lines[] = {
        "Enter (or o) opens a shell in the sandbox, as the agent's user, in /workspace.",
        "While it has the keyboard every key goes to it (Tab, Esc, Ctrl-C too);",
        "^] gives the keyboard back to the dashboard.",
        "",
        "a shows the agent's own shell: its commands and their output, live (read-only).",
    };
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]) && (int)i + 1 < getmaxy(w); i++)
        draw_text(ui, w, (int)i + 1, 1, width, lines[i],
                  theme_attr(i < 3 ? UI_C_NORMAL : UI_C_DIM));
}

static void term_draw(struct ui *ui, WINDOW *w, bool focused)
{
    struct term_tab *t = term_tab(ui);
    if (!t)
        return;
    if (!focused)
        t->typing = false; /* the keyboard went elsewhere (^]): Enter types again */
    int rows = getmaxy(w), cols = getmaxx(w);
    if (rows != t->rows || cols != t->cols) {
        t->rows = rows;
        t->cols = cols;
        if (t->sh && t->sh->vt)
            vt_resize(t->sh->vt, rows, cols);
        if (t->log)
            vt_resize(agentlog_vt(t->log), rows, cols);
        if (t->sh)
            term_resize_remote(t->sh);
    }
    struct vt *v = term_view(t);
    if (t->agent) {
        const char *status = t->log ? agentlog_status(t->log) : NULL;
        if (v)
            term_draw_vt(t, w, v, false);
        if (status)
            draw_text(ui, w, rows - 1, 0, cols, status, theme_attr(UI_C_DIM));
        return;
    }
    if (!v) {
        term_draw_idle(t, w);
        return;
    }
    term_draw_vt(t, w, v, focused && t->typing && t->sh && t->sh->st == TERM_OPEN);
}

static const char *term_hint(const struct ui *ui)
{
    const struct term_tab *t = term_tab_c(ui);
    if (!t)
        return NULL;
    if (t->agent)
        return "agent's shell, read-only · a yours";
    if (term_takes_keys(ui))
        return t->sh->st == TERM_CONNECTING ? "connecting · " UI_KEY_LEAVE_NAME " leaves"
                                            : UI_KEY_LEAVE_NAME " leaves";
    if (t->sh && t->sh->st == TERM_OPEN)
        return "Enter types · a agent";
    if (ui->opt->read_only)
        return "read-only: no shell · a agent";
    return "Enter opens a shell · a agent";
}

/* ---- open and close ---- */

static unsigned term_open(struct ui *ui)
{
    void **slot = ui_page_slot(ui, &tab_terminal);
    if (!slot)
        return 0;
    struct term_tab *t = *slot;
    if (!t) { /* the first opening: what outlives the view */
        if (!(t = calloc(1, sizeof(*t)))) {
            ui_set_error(ui, "out of memory");
            return UI_DIRTY_FOOTER;
        }
        *slot = t;
        t->ui = ui;
        if (ui->color) {
            /* pairs the themes do not use; COLOR_PAIRS is 64 on an 8-colour terminal */
            int last = COLOR_PAIRS - 1 < UI_C_COUNT + TERM_PAIRS_MAX ? COLOR_PAIRS - 1
                                                                     : UI_C_COUNT + TERM_PAIRS_MAX;
            t->pairs = paircache_new(UI_C_COUNT + 1, last);
            t->default_colors = use_default_colors() == OK;
        }
        /* Shift-PgUp/PgDn as xterm sends them, for terminals whose terminfo lacks kPRV/kNXT */
        if (!key_defined("\x1b[5;2~"))
            define_key("\x1b[5;2~", KEY_SPREVIOUS);
        if (!key_defined("\x1b[6;2~"))
            define_key("\x1b[6;2~", KEY_SNEXT);
    }
    t->sid[0] = '\0';
    if (ui->sel_session && model_id_valid(ui->sel_session))
        snprintf(t->sid, sizeof(t->sid), "%s", ui->sel_session);
    /* the session's shell again, as it was left; the pane's size is taken at the next draw */
    t->sh = t->sid[0] ? term_shell_of(t, t->sid, false) : NULL;
    t->typing = t->agent = false;
    t->scroll = t->rows = t->cols = 0;
    return UI_DIRTY_DETAIL;
}

/* The view goes; the shells stay (term_end frees them). */
static void term_close(struct ui *ui)
{
    struct term_tab *t = term_tab(ui);
    if (!t)
        return;
    agentlog_free(t->log);
    t->log = NULL;
    t->sh = NULL;
    t->typing = false;
}

/* The dashboard ends: every shell is hung up (the engine ends a shell whose client went). */
static void term_end(struct ui *ui)
{
    void **slot = ui_page_slot(ui, &tab_terminal);
    struct term_tab *t = slot ? *slot : NULL;
    if (!t)
        return;
    term_close(ui);
    while (t->shells) {
        struct term_shell *s = t->shells;
        t->shells = s->next;
        term_hangup(s);
        ui_cancel(ui, &s->tok_end);
        vt_free(s->vt);
        free(s);
    }
    paircache_free(t->pairs);
    free(t);
    *slot = NULL;
}

/* `r` or a reconnect: an open shell stays open (its connection is its own, not the event
 * stream's); otherwise the view starts again. */
static unsigned term_refresh(struct ui *ui)
{
    struct term_tab *t = term_tab(ui);
    if (t && term_live(t->sh))
        return UI_DIRTY_DETAIL;
    term_close(ui);
    return term_open(ui);
}

const struct ui_page tab_terminal = {
    .name = "Terminal",
    .short_name = "Trm",
    .keys = term_keys,
    .list = -1,
    .open = term_open,
    .close = term_close,
    .end = term_end,
    .bg_poll = term_bg_poll,
    .bg_ready = term_bg_ready,
    .draw = term_draw,
    .on_event = term_on_event,
    .next_tick = term_next_tick,
    .on_tick = term_on_tick,
    .poll_fd = term_poll_fd,
    .on_ready = term_on_ready,
    .takes_keys = term_takes_keys,
    .on_key = term_on_key,
    .hint = term_hint,
    .on_refresh = term_refresh,
};
