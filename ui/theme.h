/* Colours: the slots every view draws with, the built-in theme and theme files. The parsing
 * and the state → colour mapping are pure (no ncurses: tests/tui/test_theme.c); theme_apply
 * turns a theme into curses colour pairs and theme_attr (ui_internal.h) hands them out. */
#ifndef PADDOCK_UI_THEME_H
#define PADDOCK_UI_THEME_H

#include <stdbool.h>
#include <stddef.h>

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

/* A slot's attributes (theme_apply turns them into curses' A_*). */
enum theme_attr_bit {
    THEME_A_NORMAL = 0,
    THEME_A_BOLD = 1u << 0,
    THEME_A_DIM = 1u << 1,
    THEME_A_UNDERLINE = 1u << 2,
    THEME_A_REVERSE = 1u << 3,
    THEME_A_BLINK = 1u << 4,
    THEME_A_ITALIC = 1u << 5,
    THEME_A_STANDOUT = 1u << 6,
};

/* The eight base colours: the terminal's numbers (curses' COLOR_* have the same values). */
enum theme_color {
    THEME_BLACK,
    THEME_RED,
    THEME_GREEN,
    THEME_YELLOW,
    THEME_BLUE,
    THEME_MAGENTA,
    THEME_CYAN,
    THEME_WHITE,
};

struct ui_theme_slot {
    short fg, bg;  /* 0-255 (enum theme_color for the first eight); -1 = terminal default */
    unsigned attr; /* THEME_A_* added in colour mode */
    unsigned mono; /* THEME_A_*: the whole look in monochrome mode */
};

struct ui_theme {
    char name[64];
    struct ui_theme_slot slot[UI_C_COUNT];
};

/* The built-in theme: "dark" (or NULL); NULL for any other name (those are files). */
const struct ui_theme *theme_find(const char *name);
/* A slot's name in theme files ("header_alert"). */
const char *theme_slot_name(enum ui_color c);
/* Parse a theme file's text (file names it in errors and gives the theme its name) over the
 * built-in dark: slots it leaves out keep dark's look. 0, or -1 with *err (malloc'd)
 * "FILE:LINE: why". */
int theme_parse(const char *text, size_t len, const char *file, struct ui_theme *out, char **err);
/* Load a theme: NAME.theme from the first of dirs (NULL-terminated) that has one, a file when
 * name holds a '/', else the built-in for "dark". 0, or -1 with *err (malloc'd): a bad file
 * names the file and the line; an unknown name lists the themes there are. */
int theme_load(const char *name, const char *const *dirs, struct ui_theme *out, char **err);
/* The names of the themes in dirs and the built-in one, sorted, ", "-separated (malloc'd). */
char *theme_list(const char *const *dirs);
/* Set up colour pairs (after start_color) or monochrome; again to switch themes live. */
void theme_apply(const struct ui_theme *t, bool color);
/* Colour of a risk: high bad, medium warn, low or unknown dim. */
enum ui_color theme_risk_color(const char *risk);
/* Colour of a session or action state name. */
enum ui_color theme_state_color(const char *state);

#endif
