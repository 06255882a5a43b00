/* Shared by the files of ui/ only. Ownership: struct ui owns the model, the windows and the
 * events stream; views own nothing. Every string from the engine is raw in the model and goes
 * to the screen through draw_text() (ui/draw.c), which runs the sanitizer. */
#ifndef PADDOCK_UI_INTERNAL_H
#define PADDOCK_UI_INTERNAL_H

#include "ui/ui.h"

#include <curses.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct client;
struct client_events;

/* ---- model.c: what the engine told us (no ncurses here) ---- */

#define MODEL_ACTIONS_LIMIT 200

struct model_session {
    char *id, *name, *image, *state, *error, *reason;
    double created_at;
    long long action_count;
};

struct model_action {
    long long id;
    char *kind, *summary, *state;
    bool has_exit;
    int exit_code;
    double created_at, started_at;
    bool has_duration;
    double duration_ms;
};

struct model {
    struct model_session *sessions; /* newest first, as the engine lists them */
    size_t nsessions;
    struct model_action *actions; /* of actions_for; newest first (largest id first) */
    size_t nactions;
    char *actions_for; /* session id the actions belong to, or NULL */
};

void model_free(struct model *m);
int model_fetch_sessions(struct model *m, struct client *c, char **err);
int model_fetch_actions(struct model *m, struct client *c, const char *session_id, char **err);
/* Apply an event's data. Return true when the model changed. */
bool model_upsert_session(struct model *m, json_t *j);
bool model_upsert_action(struct model *m, const char *session_id, json_t *j);
void model_clear_actions(struct model *m);
ssize_t model_find_session(const struct model *m, const char *id);
ssize_t model_find_action(const struct model *m, long long id);
long long model_count_actions(const struct model *m);
size_t model_count_sessions_in(const struct model *m, const char *state);
/* Session ids go into URL paths: only [A-Za-z0-9_-], 1..64 bytes. */
bool model_id_valid(const char *id);

/* ---- theme.c: every colour lives here ---- */

enum ui_color {
    UI_C_NORMAL,
    UI_C_HEADER,
    UI_C_HEADER_ALERT, /* "engine disconnected" */
    UI_C_FOOTER,
    UI_C_FOOTER_KEY,
    UI_C_FOOTER_ERROR,
    UI_C_BORDER,
    UI_C_BORDER_FOCUS,
    UI_C_TITLE,
    UI_C_COLUMNS, /* column headings */
    UI_C_SELECTED,
    UI_C_SELECTED_BLUR, /* selection of the pane without focus */
    UI_C_DIM,
    UI_C_OK,
    UI_C_WARN,
    UI_C_BAD,
    UI_C_INFO,
    UI_C_HELP,
    UI_C_HELP_KEY,
    UI_C_COUNT
};

struct ui_theme_slot {
    short fg, bg; /* curses colours; -1 = terminal default */
    attr_t attr;  /* added in colour mode */
    attr_t mono;  /* the whole look in monochrome mode */
};

struct ui_theme {
    const char *name;
    struct ui_theme_slot slot[UI_C_COUNT];
};

const struct ui_theme *theme_find(const char *name);
const char *theme_names(void); /* "dark, light" */
/* Set up colour pairs (after start_color) or monochrome. */
void theme_apply(const struct ui_theme *t, bool color);
attr_t theme_attr(enum ui_color c);
/* Colour of a session or action state name. */
enum ui_color theme_state_color(const char *state);

/* ---- the dashboard state ---- */

enum ui_pane { UI_PANE_SESSIONS, UI_PANE_ACTIONS, UI_PANE_COUNT };

/* Dirty bits: what the next frame redraws; handlers return them (plus UI_QUIT). */
enum {
    UI_DIRTY_HEADER = 1u << 0,
    UI_DIRTY_FOOTER = 1u << 1,
    UI_DIRTY_SESSIONS = 1u << 2,
    UI_DIRTY_ACTIONS = 1u << 3,
    UI_DIRTY_HELP = 1u << 4,
    UI_DIRTY_LAYOUT = 1u << 5, /* windows re-created: everything */
    UI_DIRTY_ALL = 0x1Fu,      /* every window; not a new layout */
    UI_QUIT = 1u << 8,
};

struct ui_list {
    size_t sel; /* selected row */
    size_t top; /* first row shown */
    int rows;   /* rows the pane shows (set when drawn) */
};

struct ui {
    struct client *client;
    const struct ui_options *opt;
    const struct ui_theme *theme;
    bool color, utf8;
    struct model model;

    /* windows (layout.c) */
    WINDOW *win_header, *win_footer, *win_pane[UI_PANE_COUNT], *win_help;
    WINDOW *input; /* a 1x1 pad: wget_wch on a pad never refreshes anything */
    bool too_small;

    enum ui_pane focus;
    struct ui_list list[UI_PANE_COUNT];
    char *sel_session;    /* selection pinned by id, not index */
    long long sel_action; /* 0 = none */
    bool actions_follow;  /* the newest action stays selected as new ones arrive */
    bool help_visible;

    /* engine link */
    struct client_events *events;
    bool connected;
    int64_t reconnect_at;        /* ms, monotonic; 0 = none pending */
    int64_t sessions_refetch_at; /* ms; 0 = none pending */
    char status[512];            /* last error (raw, drawn sanitized) */
    unsigned dirty;
};

int64_t ui_now_ms(void);
/* Set/clear the footer's error text (raw engine text is fine: it is drawn sanitized). */
void ui_set_status(struct ui *ui, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The selected session changed (or was re-pinned): fetch its actions. */
unsigned ui_select_session(struct ui *ui, const char *id);
unsigned ui_refresh_all(struct ui *ui);

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

/* ---- list.c: a bordered list pane with columns, used by the list views ---- */

struct list_column {
    const char *title;
    int width;  /* fixed width, or the minimum of the flex column */
    int prio;   /* columns with the lowest prio are dropped first when narrow */
    bool right; /* right-aligned */
    bool flex;  /* takes the remaining width (one per view) */
};

#define LIST_MAX_COLUMNS 8

struct list_layout {
    int n;
    int idx[LIST_MAX_COLUMNS]; /* which column */
    int x[LIST_MAX_COLUMNS];
    int w[LIST_MAX_COLUMNS];
};

/* A list view: one per file (view_sessions.c, view_actions.c). */
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
};

extern const struct ui_view view_sessions;
extern const struct ui_view view_actions;
extern const struct ui_view *const ui_views[UI_PANE_COUNT];

void list_fit_columns(const struct list_column *cols, int ncols, int avail,
                      struct list_layout *out);
void list_draw(struct ui *ui, enum ui_pane pane);
/* Move the selection by delta rows (clamped), or to the top/bottom. Returns dirty bits. */
unsigned list_move(struct ui *ui, enum ui_pane pane, long delta);
unsigned list_jump(struct ui *ui, enum ui_pane pane, bool bottom);
/* Keep sel within the list and visible. */
void list_clamp(struct ui *ui, enum ui_pane pane);

/* ---- view_status.c: header and footer; view_help.c: the help overlay ---- */

void view_status_draw_header(struct ui *ui);
void view_status_draw_footer(struct ui *ui);
void view_help_draw(struct ui *ui);

/* ---- keys.c: the one key table ---- */

typedef unsigned (*ui_key_fn)(struct ui *ui);

struct ui_key {
    int key;          /* a character or a KEY_* code */
    const char *name; /* as shown in help */
    const char *help;
    ui_key_fn fn;
    const char *hint; /* footer hint "KEYS label", or NULL */
    bool mutates;     /* changes the engine's state: refused with --read-only */
};

extern const struct ui_key ui_keys[];
/* Dispatch one key (help overlay first). Returns dirty bits, maybe UI_QUIT. */
unsigned keys_dispatch(struct ui *ui, int key);

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

#endif
