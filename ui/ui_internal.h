/* Shared by the files of ui/ only. Ownership: struct ui owns the model, the windows and the
 * events stream; views own nothing. Every string from the engine is raw in the model and goes
 * to the screen through draw_text() (ui/draw.c), which runs the sanitizer. */
#ifndef PADDOCK_UI_INTERNAL_H
#define PADDOCK_UI_INTERNAL_H

#include "ui/cmdline.h"
#include "ui/graph.h"
#include "ui/model.h"
#include "ui/theme.h"
#include "ui/ui.h"

#include <curses.h>
#include <jansson.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct client;
struct client_events;

/* A slot's look on this terminal, after theme_apply (theme.c). */
attr_t theme_attr(enum ui_color c);

/* ---- the dashboard state ---- */

/* Where the keyboard goes on the main screen. */
enum ui_pane { UI_PANE_SESSIONS, UI_PANE_APPROVALS, UI_PANE_DETAIL, UI_PANE_COUNT };

/* The list widgets (list.c) and their state; one struct ui_view each. */
enum ui_list_id {
    UI_LIST_SESSIONS,
    UI_LIST_APPROVALS,
    UI_LIST_ACTIONS,
    UI_LIST_HISTORY,         /* page_history.c: past and present sessions */
    UI_LIST_HISTORY_ACTIONS, /* page_history.c: one session's actions */
    UI_LIST_HISTORY_SEARCH,  /* page_history.c: full-text search results */
    UI_LIST_CHANGES,         /* tab_changes.c: the files a session changed */
    UI_LIST_FILES,           /* tab_files.c: the workspace's tree */
    UI_LIST_COUNT
};

/* Dirty bits: what the next frame redraws; handlers return them (plus UI_QUIT). */
enum {
    UI_DIRTY_HEADER = 1u << 0,
    UI_DIRTY_FOOTER = 1u << 1,
    UI_DIRTY_SESSIONS = 1u << 2,
    UI_DIRTY_APPROVALS = 1u << 3,
    UI_DIRTY_DETAIL = 1u << 4, /* the right pane: tab bar and the current tab (or a page) */
    UI_DIRTY_HELP = 1u << 5,
    UI_DIRTY_LAYOUT = 1u << 6, /* windows re-created: everything */
    UI_DIRTY_ALL = 0x3Fu,      /* every window; not a new layout */
    UI_QUIT = 1u << 8,
};
#define UI_DIRTY_ACTIONS UI_DIRTY_DETAIL

struct ui_list {
    size_t sel; /* selected row */
    size_t top; /* first row shown */
    int rows;   /* rows the list shows (set when drawn) */
};

/* ---- keys.c: key tables ---- */

struct ui;
typedef unsigned (*ui_key_fn)(struct ui *ui);

struct ui_key {
    int key;          /* a character or a KEY_* code */
    const char *name; /* as shown in help */
    const char *help;
    ui_key_fn fn;
    const char *hint; /* footer hint "KEYS label", or NULL */
    bool mutates;     /* changes the engine's state: refused with --read-only */
    bool main_only;   /* works on the main screen only (not on a full-screen page) */
    bool kept;        /* its hint is always in the footer, whatever else gives way */
};

#define KEY_CTRL(c) ((c)&0x1f)
/* Leaves a tab that takes every key (the terminal): shown on its border. */
#define UI_KEY_LEAVE KEY_CTRL(']')
#define UI_KEY_LEAVE_NAME "^]"

/* Navigation and the rest that works everywhere. */
extern const struct ui_key ui_keys[];
/* Moving in a list (j/k, PgUp/PgDn, g/G ...): the list panes and list tabs use it. */
extern const struct ui_key ui_list_keys[];
/* Scrolling and searching a text (textview.c): the pages whose text hook gives one. The end
 * (G, End) is the page's own entry, in its words (a log's end is followed), calling
 * textview_key_end. */
extern const struct ui_key textview_keys[];
unsigned textview_key_end(struct ui *ui);
/* The text the keyboard scrolls now (the current page's text hook), or NULL. */
struct textview *keys_text(const struct ui *ui);
/* Dispatch one key: help overlay, modal, the focused page's table, the list keys, then the
 * global table. Returns dirty bits, maybe UI_QUIT. */
unsigned keys_dispatch(struct ui *ui, int key, bool code);
/* Run one table's entry for key (code: a KEY_* code, else a character): 1 handled (*dirty
 * set), 0 not in the table. */
int keys_run(struct ui *ui, const struct ui_key *table, int key, bool code, unsigned *dirty);
/* The tables that apply now, most specific first, with a title each (help, footer). */
size_t keys_tables(const struct ui *ui, const struct ui_key **out, const char **titles, size_t max);
/* Whether key k of tables[t] (from keys_tables) does something now: not a main-screen key on
 * a full-screen page, not shadowed by the same key in a more specific table. The help and
 * the footer show only those. */
bool keys_applies(const struct ui *ui, const struct ui_key *const *tables, size_t t,
                  const struct ui_key *k);
/* Whether the page on screen takes every key now (a terminal being typed into). */
bool keys_page_takes_all(const struct ui *ui);
/* What Esc does when a view has nothing of its own to undo: leave a page, else focus the
 * sessions. */
unsigned keys_back(struct ui *ui);

/* ---- a page: a tab of the detail pane (tab_*.c) or a full-screen page (history) ---- */

struct ui_page {
    const char *name; /* tab bar and help title */
    /* Optional, tabs only: its name in a narrow tab bar, at most 3 columns (8 tabs fit at 80). */
    const char *short_name;
    char key; /* its digit or letter in the tab bar, or 0 */
    /* Its own keys (a NULL-terminated table, before the global one), or NULL. */
    const struct ui_key *keys;
    /* The list it shows (UI_LIST_*), or -1: the list keys then move that list. */
    int list;
    /* Optional: the text it shows now (ui/textview.h), or NULL: the text keys
     * (textview_keys: scrolling and search) then work on it, after the page's own. */
    struct textview *(*text)(const struct ui *ui);
    /* Became visible, or the selected session changed while visible: (re)start fetches or
     * streams for ui->sel_session (which may be NULL). Returns dirty bits. */
    unsigned (*open)(struct ui *ui);
    /* Hidden, the session changed (before open) or the dashboard ends: stop streams, free. */
    void (*close)(struct ui *ui);
    /* Optional, tabs only: the dashboard ends (after close); free what the page keeps from
     * one opening to the next (the Terminal tab's shells). */
    void (*end)(struct ui *ui);
    /* Optional, tabs only, open or not: descriptors of what the page keeps running when it is
     * not shown (the shells of other sessions, which must keep reading), at most max into
     * fds; how many. bg_ready gets them back with their revents; returns dirty bits. */
    int (*bg_poll)(struct ui *ui, struct pollfd *fds, int max);
    unsigned (*bg_ready)(struct ui *ui, const struct pollfd *fds, int n);
    /* Draw into w (the pane's inside, already erased); focused: the pane has the keyboard. */
    void (*draw)(struct ui *ui, WINDOW *w, bool focused);
    /* Optional: an engine event (type, data) while open. Returns dirty bits. */
    unsigned (*on_event)(struct ui *ui, const char *type, json_t *data);
    /* Optional: a descriptor to wait on while open (-1: none) and what to wait for. */
    int (*poll_fd)(struct ui *ui, short *events);
    /* Optional: that descriptor is ready. Returns dirty bits. */
    unsigned (*on_ready)(struct ui *ui, short revents);
    /* Optional: true while every key should go to on_key (a terminal) except UI_KEY_LEAVE. */
    bool (*takes_keys)(const struct ui *ui);
    /* UI_KEY_LEAVE comes too, just before the keyboard goes back to the sessions. */
    unsigned (*on_key)(struct ui *ui, int key, bool code);
    /* Optional: the border hint ("^] leaves"). */
    const char *(*hint)(const struct ui *ui);
    /* Optional: the next time (ms, ui_now_ms) it wants a tick, or 0; and the tick. */
    int64_t (*next_tick)(const struct ui *ui);
    unsigned (*on_tick)(struct ui *ui);
    /* Optional: `r` or a reconnect while open. Without it the page is closed and opened
     * again; a page with something live of its own (a shell) keeps it. Returns dirty bits. */
    unsigned (*on_refresh)(struct ui *ui);
};

/* Bounds of the loop's poll: descriptors of pages not shown (bg_poll, all tabs together),
 * and tabs in the table. */
#define UI_BG_FDS 16
#define UI_TABS_MAX 16

/* The detail pane's tabs, in tab-bar order ([ and ] move, Enter on a session opens): ui.c's
 * table. A tab no other file names is declared there only (a new tab: its file, its line in
 * the table, its line in meson.build). */
extern const struct ui_page *const ui_tabs[];
extern const size_t ui_ntabs;
extern const struct ui_page tab_actions;
/* The History page (full screen, `3`): past sessions, search, stored logs and samples. */
extern const struct ui_page page_history;
unsigned page_history_show(struct ui *ui);
extern const struct ui_page tab_logs;
extern const struct ui_page tab_changes;
extern const struct ui_page tab_files;
extern const struct ui_page tab_egress;
/* E: the Egress tab (the selected session's connections through its egress proxy), focused. */
unsigned tab_egress_show(struct ui *ui);
/* One action shown whole (full screen): Enter on the Actions or Changes tab. */
extern const struct ui_page page_action;
unsigned page_action_show(struct ui *ui, long long id);
/* The open Logs tab's buffer (the frame bench fills it), or NULL. */
struct logbuf *tab_logs_buffer(struct ui *ui);
/* What the open Changes tab does with an answer of GET /v1/sessions/{id}/changes (its fetch's
 * callback; the frame bench feeds it a list without an engine). */
void tab_changes_take(struct ui *ui, int status, json_t *reply, const char *err);
/* What the open Files tab does with an answer of GET /v1/sessions/{id}/files for the workspace
 * (its fetch's callback; the frame bench feeds it a listing without an engine). */
void tab_files_take(struct ui *ui, int status, json_t *reply, const char *err);

/* ---- a modal (prompt, confirm, form): takes every key while set ---- */

struct ui_modal {
    unsigned (*on_key)(struct ui *ui, int key, bool code);
    void (*draw)(struct ui *ui); /* on top of the frame, in its own window */
    /* frees what modal_state holds; NULL: modal_state is one malloc'd block, freed */
    void (*close)(struct ui *ui);
};

/* ---- rules.c: the operator's rules, a window over the frame (R) ---- */

/* Open the window: the rules in force, fetched now; e edits a pattern, d removes, a adds an
 * engine-wide rule, Esc closes. */
unsigned rules_window_open(struct ui *ui);
/* Save an allow rule for a session (pattern as the operator left it, kind: the action's); the
 * footer says what the engine answered. */
void rules_save_session(struct ui *ui, const char *session_id, const char *kind,
                        const char *pattern);

/* ---- prompt.c: the text prompt and the yes/no question (modals) ---- */

/* text: what was typed, or NULL when cancelled (Esc, ^C). Returns dirty bits. */
typedef unsigned (*prompt_done_fn)(struct ui *ui, const char *text, void *ud);
typedef unsigned (*confirm_fn)(struct ui *ui, void *ud);
/* A one-line prompt on the bottom row: "label text_"; Enter accepts, Esc cancels, Backspace,
 * ^U and ^W edit. */
void prompt_open(struct ui *ui, const char *label, const char *initial, prompt_done_fn done,
                 void *ud);
/* A centred question; only y confirms (n, Esc, Enter and any other key say no). */
void confirm_open(struct ui *ui, const char *question, confirm_fn yes, void *ud);
/* The prompt that tells as it is typed: changed runs after every edit (a live filter). */
typedef unsigned (*prompt_change_fn)(struct ui *ui, const char *text, void *ud);
void prompt_open_live(struct ui *ui, const char *label, const char *initial, prompt_done_fn done,
                      prompt_change_fn changed, void *ud);
/* One line editor's keys on text (cap bytes with the NUL): Backspace, ^U, ^W, printable
 * characters (UTF-8). True when the key was one of them. */
bool prompt_edit(char *text, size_t *len, size_t cap, int key, bool code);

/* ---- form.c: a small form (a modal): labelled fields, Tab/S-Tab (or Up/Down) move between
 * them, Left/Right/Space pick a choice, Enter submits, Esc cancels ---- */

enum form_kind { FORM_TEXT, FORM_CHOICE };

struct form_field {
    const char *label;
    enum form_kind kind;
    const char *value;          /* the initial text, or the initial choice */
    const char *const *choices; /* FORM_CHOICE: NULL-terminated */
    const char *help;           /* shown under the fields while the field has the cursor */
};

#define FORM_MAX_FIELDS 12
/* values[i]: field i's text or choice. Return 0 to close the form; -1 to keep it open with
 * err shown (a value to correct) and *bad the field it is about (or -1), the values kept as
 * typed; or 1 when the values went to the engine: the form stays, saying so, until
 * form_answer. */
typedef int (*form_submit_fn)(struct ui *ui, const char *const *values, void *ud, char *err,
                              size_t errsz, int *bad);
void form_open(struct ui *ui, const char *title, const struct form_field *fields, size_t n,
               form_submit_fn submit, void *ud);
/* Whether a form waits for the engine's answer to what it sent (submit returned 1). */
bool form_waiting(const struct ui *ui);
/* The engine's answer to the waiting form: err NULL closes it; else it stays with what was
 * typed, field bad marked (-1: none) and the cursor on it, err saying why. */
void form_answer(struct ui *ui, int bad, const char *err);

/* ---- ops.c: operations on sessions (the sessions list's keys and the : commands) ---- */

enum ops_kind { OPS_PAUSE, OPS_RESUME, OPS_STOP, OPS_DELETE, OPS_CREATE, OPS_COUNT };

/* The sessions list's keys: p u S D c t e / (view_sessions.keys). */
extern const struct ui_key ops_session_keys[];
/* Pause, resume, stop (at once) or delete (after a y/n question) session id (NULL: the
 * selected one). Returns dirty bits; errors go to the footer. */
unsigned ops_session(struct ui *ui, enum ops_kind op, const char *id);
/* The create form (image, name, memory, cpus, network, approval policy). */
unsigned ops_create_open(struct ui *ui);
/* Export session id (NULL: the selected one) into dir (NULL: ask, the current directory
 * offered). */
unsigned ops_export(struct ui *ui, const char *id, const char *dir);
/* Show the Terminal tab, focused. */
unsigned ops_terminal(struct ui *ui);
/* A session the operator named: its id, a unique start of it, or its name. Its model index,
 * or -1 with why (the candidates of an ambiguous start named) in why[size]. */
ssize_t ops_find_session(const struct ui *ui, const char *ref, char *why, size_t size);
/* Switch the theme live (the loaded theme is kept in ui->theme_cur). Returns dirty bits. */
unsigned ops_theme(struct ui *ui, const char *name);
void ops_free(struct ui *ui);

/* ---- view_sessions.c: the filter (`/`) ---- */

/* Show only the sessions whose id, name, image or state contains text (case-insensitive;
 * NULL or "": all). Returns dirty bits. */
unsigned view_sessions_set_filter(struct ui *ui, const char *text);
/* The same, saying in the status line how many sessions match (`/` and `:filter`). */
unsigned ops_filter_apply(struct ui *ui, const char *text);
/* The model index of a row on screen, or (size_t)-1. */
size_t view_sessions_row_index(const struct ui *ui, size_t row);

/* ---- mouse.c (--mouse): clicks and the wheel ---- */

/* Turn mouse reporting on (after the terminal started). */
void mouse_start(struct ui *ui);
/* A KEY_MOUSE from the keyboard queue. Returns dirty bits. */
unsigned mouse_dispatch(struct ui *ui);

/* ---- the engines: one client, event stream and share of the model each (ui.c) ---- */

#define UI_ENGINES_MAX 8

struct ui_engine {
    struct ui *ui;
    const char *name;      /* "local", or the config file's [engines.NAME] */
    struct client *client; /* the caller's (ui_run), valid throughout */
    struct client_events *events;
    bool connected;
    int64_t reconnect_at; /* ms, monotonic; 0 = none pending */
    int backoff_ms;       /* the wait before the next try: doubles up to a bound */
    int64_t sessions_refetch_at, approvals_refetch_at; /* ms; 0 = none pending */
    char tok_sessions, tok_approvals;                  /* async tokens (their addresses) */
};

/* The engine of session sid (its index in ui->engines): the engine that listed it; a session
 * the model does not hold (a past one, on History) and NULL go to the selected session's
 * engine, and with none selected to the first. */
size_t ui_engine_index(const struct ui *ui, const char *sid);
struct client *ui_client_of(const struct ui *ui, const char *sid);
/* Whether session sid's engine (as ui_engine_index picks it) is connected. */
bool ui_engine_up(const struct ui *ui, const char *sid);
/* Whether any engine is. */
bool ui_any_engine_up(const struct ui *ui);

/* ---- the dashboard ---- */

struct client_async;

struct ui {
    struct ui_engine engines[UI_ENGINES_MAX];
    size_t nengines;            /* at least 1: the first is the engine ui_run was given */
    struct client_async *async; /* every request of the loop goes through it, to any engine */
    const struct ui_options *opt;
    const struct ui_theme *theme;
    bool color, utf8;
    struct model model;

    /* windows (layout.c) */
    WINDOW *win_header, *win_footer, *win_pane[UI_PANE_COUNT], *win_help, *win_modal;
    WINDOW *win_body; /* inside of the detail pane (a derwin of win_pane[UI_PANE_DETAIL]) */
    WINDOW *input;    /* a 1x1 pad: wget_wch on a pad never refreshes anything */
    bool too_small;
    unsigned shape; /* what the layout was made for (layout.c) */

    enum ui_pane focus;
    struct ui_list list[UI_LIST_COUNT];
    size_t tab;                 /* index into ui_tabs */
    const struct ui_page *page; /* a full-screen page (history), or NULL for the main screen */
    const struct ui_modal *modal;
    void *modal_state;
    const struct ui_page *page_open; /* the page whose open() ran last (its close() is due) */
    struct {
        const struct ui_page *page;
        void *state;
    } slots[16];          /* pages' own state (ui_page_slot) */
    char *sel_session;    /* selection pinned by id, not index */
    long long sel_action; /* 0 = none */
    long long sel_approval;
    long long guard_id;         /* the action selected by itself last (view_approvals_arm_guard) */
    int64_t guard_until;        /* ms; until then guard_id cannot be decided (0 = none) */
    long long decided_id;       /* the last action a decision was sent for */
    size_t decided_engine;      /* and its engine */
    size_t sel_approval_engine; /* the engine of sel_approval (ids are per engine) */
    bool actions_follow;        /* the newest action stays selected as new ones arrive */
    bool help_visible;
    bool bell;

    char tok_actions, tok_op; /* async tokens (their addresses) */
    char status[512];         /* last message (raw, drawn sanitized) */
    bool status_error;
    unsigned dirty;
    char tok_spark;     /* the sparklines' history request (view_sessions_seed), one at a time */
    char spark_for[72]; /* the session it is for, or "" */

    /* operations, filter, themes, mouse (ops.c, view_sessions.c, cmdline.c, mouse.c) */
    struct ui_theme theme_cur;   /* the theme in use (ui->theme points here) */
    char tok_ops[OPS_COUNT];     /* a token per operation; each holds its own index */
    char tok_info;               /* GET /v1/info for the create form's default image */
    char tok_rules, tok_rule_op; /* the rules window's fetch, a rule's change (rules.c) */
    char ops_id[80];             /* the session a question or prompt is about */
    char cmd_pending[256];       /* a `:` line asked about (cmdline.c), its command named whole */
    char *sessions_filter;       /* `/`: the sessions shown contain it (NULL: all) */
    size_t *sessions_rows;       /* with a filter: row on screen → model index */
    size_t sessions_nrows;
    short tab_x[16][2]; /* the tab bar: each tab's first and last column (layout.c), for clicks */
    struct ui_job *job; /* a blocking operation running in a child process (job.c), or NULL */
};

int64_t ui_now_ms(void);
/* Set the footer's message (raw engine text is fine: it is drawn sanitized). */
void ui_set_status(struct ui *ui, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ui_set_error(struct ui *ui, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The selected session changed (or was re-pinned): fetch its actions, reopen the tab. */
unsigned ui_select_session(struct ui *ui, const char *id);
unsigned ui_refresh_all(struct ui *ui);
/* The approval queue of engine index engine again, at the next turn (after a decision). */
void ui_approvals_refetch(struct ui *ui, size_t engine);
/* The selected session's model entry, or NULL. */
const struct model_session *ui_session(const struct ui *ui);
/* A page's own state slot (allocated and freed by the page). */
void **ui_page_slot(struct ui *ui, const struct ui_page *p);
/* Close the open page or tab (its close hook frees its state). */
void ui_page_close(struct ui *ui);
/* At the dashboard's end: close the open page, then let every tab free what outlives its
 * pages (its end hook: the Terminal tab's kept shells). */
void ui_pages_end(struct ui *ui);
/* Switch the detail tab (index) / open or leave a full-screen page. Return dirty bits. */
unsigned ui_show_tab(struct ui *ui, size_t tab);
unsigned ui_show_page(struct ui *ui, const struct ui_page *p);
/* The page the keyboard and the detail pane show: the full-screen page, else the tab. */
const struct ui_page *ui_current_page(const struct ui *ui);
/* An asynchronous request (10 s timeout). fn may be NULL: errors then go to the footer. ud
 * identifies the request for client_async_cancel. 0, or -1 (out of memory: said in the
 * footer). It goes to the engine of the session its path names (/v1/sessions/ID...), else to
 * the selected session's (ui_engine_index). */
int ui_request(struct ui *ui, const char *method, const char *path, json_t *body,
               void (*fn)(int status, json_t *reply, const char *err, void *ud), void *ud);
/* The same to engine index engine. */
int ui_request_on(struct ui *ui, size_t engine, const char *method, const char *path, json_t *body,
                  void (*fn)(int status, json_t *reply, const char *err, void *ud), void *ud);
void ui_cancel(struct ui *ui, void *ud);
/* Open and close a modal. */
void ui_modal_open(struct ui *ui, const struct ui_modal *m, void *state);
void ui_modal_close(struct ui *ui);

/* ---- job.c: a blocking operation in a child process ---- */

/* Runs in the child: report progress through progress(progress_ctx, done, total); 0 with
 * *msg saying what was done, or -1 with *msg saying why (malloc'd, may be NULL). */
typedef int (*ui_job_fn)(void *arg, ui_progress_fn progress, void *progress_ctx, char **msg);
/* Fork a child that runs fn(arg) (arg is read in the child's copy of memory). The footer
 * then shows "WHAT ...", "WHAT: DONE of TOTAL UNIT" once the child counts, and at the end
 * fn's message, or "NAME: why" when it failed. -1 with *err (malloc'd, a whole sentence starting
 * with NAME) when a job is already running or the child cannot start. */
int job_start(struct ui *ui, const char *name, const char *what, const char *unit, ui_job_fn fn,
              void *arg, char **err);
/* The descriptor the loop polls for the running job, or -1. */
int job_poll_fd(const struct ui *ui);
/* It is readable: take progress, or the result once the child is done. Dirty bits. */
unsigned job_on_ready(struct ui *ui);
/* End a running job's child (SIGTERM by its PID) and reap it: the dashboard is closing. */
void job_stop(struct ui *ui);

/* ---- draw.c: the one way text reaches the screen ---- */

/* Draw s (untrusted, NUL-terminated) at y,x in at most width columns, sanitized for one
 * line; a cut is marked with `…`. Returns the columns drawn. */
int draw_text(struct ui *ui, WINDOW *w, int y, int x, int width, const char *s, attr_t attr);
/* Right-aligned variant: the text ends at column x + width. */
int draw_text_right(struct ui *ui, WINDOW *w, int y, int x, int width, const char *s, attr_t attr);
/* Columns the sanitized s takes. */
int draw_text_width(struct ui *ui, const char *s);
/* A trusted symbol: utf8 on UTF-8 terminals, else the ASCII stand-in. */
const char *draw_glyph(const struct ui *ui, const char *utf8, const char *ascii);
/* Fill columns x..x+width of row y with spaces in attr. */
void draw_fill(WINDOW *w, int y, int x, int width, attr_t attr);
/* A box around w with " title " on the top border (raw text, sanitized). */
void draw_frame(struct ui *ui, WINDOW *w, const char *title, bool focused);
/* A tab bar on row y from column x, before column end: " name " each (tight: "name"), one
 * column apart, the current one highlighted (in the selection's colour when focused, else its
 * blurred one). Each tab's first and last column go to cols (n entries; NULL: not kept).
 * Returns the column after the last tab drawn. Dashboard's detail pane and the History page
 * draw it. */
int draw_tabs(struct ui *ui, WINDOW *w, int y, int x, int end, const char *const *names, size_t n,
              size_t cur, bool focused, bool tight, short (*cols)[2]);
/* The columns draw_tabs takes for names. */
int draw_tabs_width(struct ui *ui, const char *const *names, size_t n, bool tight);
/* A graph of the newest values (ui/graph.c) in rows y..y+height of width columns. */
void draw_graph(struct ui *ui, WINDOW *w, int y, int x, int width, int height, const double *values,
                size_t n, double max, enum graph_mode mode, attr_t attr);

/* ---- textview.c: drawing a text view (ui/textview.h) ---- */

struct textview;
/* Draw the view's rows into height rows of width columns of w from y, x (the gutter, then
 * the text: each line in its colour, the search's matches highlighted, the current one
 * apart). Sets the view's width and height. */
void textview_draw(struct ui *ui, struct textview *tv, WINDOW *w, int y, int x, int height,
                   int width);
/* n/N: the next (dir > 0) or previous match (first: a new search, from what is shown), said
 * in the footer ("no match for ..."). Returns dirty bits. */
unsigned textview_search(struct ui *ui, struct textview *tv, int dir, bool first);
/* The `/` prompt's answer: search for text ("" clears the search). Returns dirty bits. */
unsigned textview_search_set(struct ui *ui, struct textview *tv, const char *text);

/* ---- list.c: a list with columns, used by the list panes and the list tabs ---- */

struct list_column {
    const char *title;
    int width;  /* fixed width, or the minimum of the flex column */
    int prio;   /* columns with the lowest prio are dropped first when narrow */
    bool right; /* right-aligned */
    bool flex;  /* takes the remaining width (one per view) */
};

#define LIST_MAX_COLUMNS 10

struct list_layout {
    int n;
    int idx[LIST_MAX_COLUMNS]; /* which column */
    int x[LIST_MAX_COLUMNS];
    int w[LIST_MAX_COLUMNS];
};

/* A list: one per file (view_sessions.c, view_approvals.c, tab_actions.c). */
struct ui_view {
    const char *name;
    const struct list_column *columns;
    int ncolumns;
    size_t (*count)(const struct ui *ui);
    /* the pane title (raw text, drawn sanitized) */
    void (*title)(const struct ui *ui, char *buf, size_t sz);
    /* Text and colour of one cell. */
    void (*cell)(const struct ui *ui, size_t row, int column, char *buf, size_t sz,
                 enum ui_color *color);
    const char *(*empty)(const struct ui *ui); /* text when the list is empty */
    /* The selection moved to row (or the list changed under it): return dirty bits. */
    unsigned (*on_select)(struct ui *ui, size_t row);
    /* Re-find the pinned selection after the model changed. */
    void (*sync)(struct ui *ui);
    /* Its own keys while focused (before the list keys), or NULL. */
    const struct ui_key *keys;
    unsigned dirty; /* the dirty bit of where it is drawn */
    /* Optional: whether column is shown now (the ENGINE columns only with several engines);
     * NULL: all are. */
    bool (*column_shown)(const struct ui *ui, int column);
};

extern const struct ui_view view_sessions;
extern const struct ui_view view_approvals;
extern const struct ui_view view_actions;
extern const struct ui_view view_history, view_history_actions, view_history_search;
extern const struct ui_view view_changes;
extern const struct ui_view view_files;
extern const struct ui_view *const ui_lists[UI_LIST_COUNT];
/* Approve or reject the selected approval / action ID on engine index engine (reason may be
 * NULL). Dirty bits. */
unsigned view_approvals_decide(struct ui *ui, bool approve, const char *reason);
unsigned view_approvals_decide_id(struct ui *ui, size_t engine, long long id, bool approve,
                                  const char *reason);
/* The y and n keys on action ID of engine index engine (the queue's and the Actions tab's):
 * refused while the guard holds it or once it was decided; n asks for the reason first. */
unsigned view_approvals_key_approve(struct ui *ui, size_t engine, long long id);
unsigned view_approvals_key_reject(struct ui *ui, size_t engine, long long id);
/* ID was selected by itself (not by the operator): it cannot be decided for a moment. */
void view_approvals_arm_guard(struct ui *ui, long long id);
bool view_approvals_guard_holds(const struct ui *ui, long long id);
/* Fill the sparklines of running sessions that have none yet from their stored samples
 * (one request at a time; after each sessions fetch). */
void view_sessions_seed(struct ui *ui);

void list_fit_columns(const struct list_column *cols, int ncols, int avail,
                      struct list_layout *out);
/* The same with only the columns whose shown[i] is true (shown NULL: all). */
void list_fit_columns_shown(const struct list_column *cols, int ncols, const bool *shown, int avail,
                            struct list_layout *out);
/* Draw list id into w: framed (a pane: border and title) or bare (inside a tab). */
void list_draw(struct ui *ui, enum ui_list_id id, WINDOW *w, bool focused, bool framed);
/* Move the selection by delta rows (clamped), or to the top/bottom. Returns dirty bits. */
unsigned list_move(struct ui *ui, enum ui_list_id id, long delta);
unsigned list_jump(struct ui *ui, enum ui_list_id id, bool bottom);
/* Keep sel within the list and visible. */
void list_clamp(struct ui *ui, enum ui_list_id id);
/* Whether the pane can take the focus now (the approvals pane only when not empty). */
bool keys_pane_usable(const struct ui *ui, enum ui_pane p);
/* The list the keyboard moves now, or -1. */
int list_focused(const struct ui *ui);

/* ---- view_status.c: header and footer; view_help.c: the help overlay ---- */

void view_status_draw_header(struct ui *ui);
void view_status_draw_footer(struct ui *ui);
void view_help_draw(struct ui *ui);

/* ---- layout.c ---- */

#define UI_MIN_COLS 60
#define UI_MIN_LINES 15

/* (Re)create the windows for the current terminal size. */
void layout_apply(struct ui *ui);
void layout_free(struct ui *ui);
/* Draw what is dirty (wnoutrefresh each) and doupdate once. */
void layout_draw(struct ui *ui, unsigned dirty);

/* ---- term.c: terminal setup, restore, signals ---- */

/* Start curses on the controlling terminal. Returns 0 or -1 with *err. */
int term_start(char **err);
void term_stop(void);
/* Self-pipe for SIGINT/SIGTERM/SIGHUP/SIGWINCH; crash handlers restore the terminal. */
int term_signals_install(char **err);
void term_signals_remove(void);
int term_signal_fd(void);
/* Read the pending signals: returns a bit set of (1 << signo). */
unsigned long term_signals_read(void);
/* Resize curses to the terminal's size (after SIGWINCH). */
void term_resize(void);
/* Raw keys while a page takes every key (^C, ^Z, ^\ and ^S reach it as keys, not as
 * signals or flow control), else cbreak. Only a change touches the terminal. */
void term_keys_raw(bool on);

#endif
