/* Colours: the built-in dark theme, theme files (themes/NAME.theme), and the state → colour
 * mapping. The only place colours are chosen. A theme file starts from the built-in dark, so a
 * file that leaves a slot out (an older file after a slot was added) still has a look for it.
 *
 *   SLOT = FOREGROUND BACKGROUND [ATTRIBUTE ...]
 *   SLOT.mono = ATTRIBUTE ...          (the look without colours: NO_COLOR, a mono terminal)
 *
 * Colours: default, black, red, green, yellow, blue, magenta, cyan, white, bright-black ...
 * bright-white, 0-255, #rrggbb (the nearest of xterm's 256). Attributes: bold, dim, underline,
 * reverse, blink, italic, standout, none. A line whose first character is # is a comment, so
 * is the rest of a line from "# " on. */
#include "ui/theme.h"

#include "ui/ui_internal.h"
#include "ui/vt.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MONO_NONE THEME_A_NORMAL
#define THEME_FILE_MAX (64 * 1024) /* a theme is ~40 lines; anything bigger is not one */
#define THEME_EXT ".theme"

static const struct ui_theme theme_dark = {
    .name = "dark",
    .slot =
        {
            [UI_C_NORMAL] = {-1, -1, THEME_A_NORMAL, MONO_NONE},
            [UI_C_HEADER] = {THEME_BLACK, THEME_CYAN, THEME_A_NORMAL, THEME_A_REVERSE},
            [UI_C_HEADER_ALERT] = {THEME_WHITE, THEME_RED, THEME_A_BOLD,
                                   THEME_A_REVERSE | THEME_A_BOLD},
            [UI_C_FOOTER] = {THEME_WHITE, -1, THEME_A_NORMAL, MONO_NONE},
            [UI_C_FOOTER_KEY] = {THEME_CYAN, -1, THEME_A_BOLD, THEME_A_BOLD},
            [UI_C_FOOTER_ERROR] = {THEME_RED, -1, THEME_A_BOLD, THEME_A_BOLD | THEME_A_UNDERLINE},
            [UI_C_BORDER] = {THEME_WHITE, -1, THEME_A_DIM, MONO_NONE},
            [UI_C_BORDER_FOCUS] = {THEME_CYAN, -1, THEME_A_BOLD, THEME_A_BOLD},
            [UI_C_TITLE] = {THEME_WHITE, -1, THEME_A_BOLD, THEME_A_BOLD},
            [UI_C_COLUMNS] = {THEME_YELLOW, -1, THEME_A_NORMAL, THEME_A_UNDERLINE},
            [UI_C_SELECTED] = {THEME_BLACK, THEME_CYAN, THEME_A_NORMAL, THEME_A_REVERSE},
            [UI_C_SELECTED_BLUR] = {THEME_WHITE, THEME_BLUE, THEME_A_NORMAL, THEME_A_UNDERLINE},
            [UI_C_DIM] = {THEME_WHITE, -1, THEME_A_DIM, THEME_A_DIM},
            [UI_C_OK] = {THEME_GREEN, -1, THEME_A_NORMAL, MONO_NONE},
            [UI_C_WARN] = {THEME_YELLOW, -1, THEME_A_NORMAL, THEME_A_BOLD},
            [UI_C_BAD] = {THEME_RED, -1, THEME_A_BOLD, THEME_A_BOLD | THEME_A_UNDERLINE},
            [UI_C_INFO] = {THEME_CYAN, -1, THEME_A_NORMAL, MONO_NONE},
            [UI_C_HELP] = {THEME_WHITE, THEME_BLACK, THEME_A_NORMAL, MONO_NONE},
            [UI_C_HELP_KEY] = {THEME_YELLOW, THEME_BLACK, THEME_A_BOLD, THEME_A_BOLD},
        },
};

/* Slot names in theme files: the enum's names in lower case. */
static const char *const theme_slot_names[UI_C_COUNT] = {
    [UI_C_NORMAL] = "normal",
    [UI_C_HEADER] = "header",
    [UI_C_HEADER_ALERT] = "header_alert",
    [UI_C_FOOTER] = "footer",
    [UI_C_FOOTER_KEY] = "footer_key",
    [UI_C_FOOTER_ERROR] = "footer_error",
    [UI_C_BORDER] = "border",
    [UI_C_BORDER_FOCUS] = "border_focus",
    [UI_C_TITLE] = "title",
    [UI_C_COLUMNS] = "columns",
    [UI_C_SELECTED] = "selected",
    [UI_C_SELECTED_BLUR] = "selected_blur",
    [UI_C_DIM] = "dim",
    [UI_C_OK] = "ok",
    [UI_C_WARN] = "warn",
    [UI_C_BAD] = "bad",
    [UI_C_INFO] = "info",
    [UI_C_HELP] = "help",
    [UI_C_HELP_KEY] = "help_key",
};

static const char *const theme_color_names[16] = {
    "black",        "red",           "green",       "yellow",         "blue",
    "magenta",      "cyan",          "white",       "bright-black",   "bright-red",
    "bright-green", "bright-yellow", "bright-blue", "bright-magenta", "bright-cyan",
    "bright-white",
};

static const struct {
    const char *name;
    unsigned attr;
} theme_attr_names[] = {
    {"none", THEME_A_NORMAL}, {"normal", THEME_A_NORMAL},       {"bold", THEME_A_BOLD},
    {"dim", THEME_A_DIM},     {"underline", THEME_A_UNDERLINE}, {"reverse", THEME_A_REVERSE},
    {"blink", THEME_A_BLINK}, {"italic", THEME_A_ITALIC},       {"standout", THEME_A_STANDOUT},
};

/* THEME_A_* bits as curses attributes. */
static const attr_t theme_curses_attrs[] = {A_BOLD,  A_DIM,    A_UNDERLINE, A_REVERSE,
                                            A_BLINK, A_ITALIC, A_STANDOUT};

static attr_t theme_attrs[UI_C_COUNT];

const struct ui_theme *theme_find(const char *name)
{
    if (!name || !*name || strcmp(name, theme_dark.name) == 0)
        return &theme_dark;
    return NULL;
}

const char *theme_slot_name(enum ui_color c)
{
    return c >= 0 && c < UI_C_COUNT ? theme_slot_names[c] : NULL;
}

/* ---- the file format ---- */

struct theme_parser {
    const char *file;
    int line;
    char **err;
};

static int theme_fail(struct theme_parser *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int theme_fail(struct theme_parser *p, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (asprintf(p->err, "%s:%d: %s", p->file, p->line, msg) < 0)
        *p->err = NULL;
    return -1;
}

static int theme_hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = (char)tolower((unsigned char)c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A colour word: -1 (default), 0..255; -2 when it is none. */
static int theme_color(const char *w)
{
    if (strcmp(w, "default") == 0)
        return -1;
    for (int i = 0; i < 16; i++)
        if (strcmp(w, theme_color_names[i]) == 0)
            return i;
    if (w[0] == '#') {
        int v[6];
        for (int i = 0; i < 6; i++)
            if ((v[i] = theme_hex(w[1 + i])) < 0)
                return -2;
        if (w[7])
            return -2;
        return vt_rgb_to_256((uint8_t)(v[0] * 16 + v[1]), (uint8_t)(v[2] * 16 + v[3]),
                             (uint8_t)(v[4] * 16 + v[5]));
    }
    if (isdigit((unsigned char)w[0])) {
        char *end;
        long n = strtol(w, &end, 10);
        if (!*end && n >= 0 && n <= 255)
            return (int)n;
    }
    return -2;
}

static int theme_attr_word(struct theme_parser *p, const char *w, unsigned *out)
{
    for (size_t i = 0; i < sizeof(theme_attr_names) / sizeof(theme_attr_names[0]); i++) {
        if (strcmp(w, theme_attr_names[i].name) == 0) {
            *out |= theme_attr_names[i].attr;
            return 0;
        }
    }
    return theme_fail(p,
                      "unknown attribute '%.40s' (bold, dim, underline, reverse, blink, italic, "
                      "standout or none)",
                      w);
}

static int theme_slot_find(const char *name, size_t len)
{
    for (int i = 0; i < UI_C_COUNT; i++)
        if (theme_slot_names[i] && strlen(theme_slot_names[i]) == len &&
            strncmp(theme_slot_names[i], name, len) == 0)
            return i;
    return -1;
}

/* Split s into words (spaces, tabs, commas) in place; up to max. */
static int theme_words(char *s, char **w, int max)
{
    int n = 0;
    for (char *t = strtok(s, " \t,"); t; t = strtok(NULL, " \t,")) {
        if (n == max)
            return max + 1;
        w[n++] = t;
    }
    return n;
}

/* One "key = value" line (comments already cut). seen: lines that set each slot, and .mono. */
static int theme_line(struct theme_parser *p, char *s, struct ui_theme *t, int seen[][2])
{
    char *eq = strchr(s, '=');
    if (!eq)
        return theme_fail(p, "expected 'SLOT = FOREGROUND BACKGROUND [ATTRIBUTES]' or "
                             "'SLOT.mono = ATTRIBUTES'");
    char *key = s, *kend = eq;
    while (key < kend && (*key == ' ' || *key == '\t'))
        key++;
    while (kend > key && (kend[-1] == ' ' || kend[-1] == '\t'))
        kend--;
    bool mono = kend - key > 5 && strncmp(kend - 5, ".mono", 5) == 0;
    size_t klen = (size_t)(kend - key) - (mono ? 5 : 0);
    int slot = theme_slot_find(key, klen);
    if (slot < 0) {
        char names[600];
        size_t used = 0;
        names[0] = '\0';
        for (int i = 0; i < UI_C_COUNT && used < sizeof(names); i++)
            used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s", i ? ", " : "",
                                     theme_slot_names[i]);
        return theme_fail(p, "unknown slot '%.*s' (slots: %s)",
                          (int)(kend - key > 40 ? 40 : kend - key), key, names);
    }
    if (seen[slot][mono])
        return theme_fail(p, "%s%s is set twice (line %d first)", theme_slot_names[slot],
                          mono ? ".mono" : "", seen[slot][mono]);
    seen[slot][mono] = p->line;
    char *w[12];
    int n = theme_words(eq + 1, w, 11);
    if (n > 11)
        return theme_fail(p, "too many words for %s", theme_slot_names[slot]);
    struct ui_theme_slot *sl = &t->slot[slot];
    if (mono) {
        if (n == 0)
            return theme_fail(p, "%s.mono needs attributes (or none)", theme_slot_names[slot]);
        unsigned a = THEME_A_NORMAL;
        for (int i = 0; i < n; i++)
            if (theme_attr_word(p, w[i], &a) < 0)
                return -1;
        sl->mono = a;
        return 0;
    }
    if (n < 2)
        return theme_fail(p,
                          "%s needs a foreground and a background colour (default for the "
                          "terminal's own)",
                          theme_slot_names[slot]);
    int fg = theme_color(w[0]), bg = theme_color(w[1]);
    for (int i = 0; i < 2; i++)
        if ((i ? bg : fg) == -2)
            return theme_fail(p,
                              "unknown colour '%.40s' (default, black, red, green, yellow, blue, "
                              "magenta, cyan, white, bright-NAME, 0-255 or #rrggbb)",
                              w[i]);
    unsigned a = THEME_A_NORMAL;
    for (int i = 2; i < n; i++)
        if (theme_attr_word(p, w[i], &a) < 0)
            return -1;
    sl->fg = (short)fg;
    sl->bg = (short)bg;
    sl->attr = a;
    return 0;
}

int theme_parse(const char *text, size_t len, const char *file, struct ui_theme *out, char **err)
{
    struct theme_parser p = {.file = file ? file : "theme", .err = err};
    int seen[UI_C_COUNT][2];
    memset(seen, 0, sizeof(seen));
    *err = NULL;
    struct ui_theme t = theme_dark;
    /* the name: the file's base name without .theme */
    const char *base = strrchr(p.file, '/');
    base = base ? base + 1 : p.file;
    size_t blen = strlen(base);
    if (blen > strlen(THEME_EXT) && strcmp(base + blen - strlen(THEME_EXT), THEME_EXT) == 0)
        blen -= strlen(THEME_EXT);
    snprintf(t.name, sizeof(t.name), "%.*s", (int)blen, base);
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        for (const char *c = text; c <= nul; c++)
            p.line += c == nul || *c == '\n';
        return theme_fail(&p, "not a text file (a NUL byte)");
    }
    char *copy = strndup(text, len);
    if (!copy) {
        *err = strdup("out of memory");
        return -1;
    }
    int rc = 0;
    char *line = copy;
    for (char *nl; line && rc == 0; line = nl) {
        nl = strchr(line, '\n');
        if (nl)
            *nl++ = '\0';
        p.line++;
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '#')
            continue;
        /* "# " (or a # ending the line) starts a comment; #rrggbb does not */
        for (char *h = strchr(s, '#'); h; h = strchr(h + 1, '#'))
            if (h[1] == '\0' || h[1] == ' ' || h[1] == '\t' || h[1] == '\r') {
                *h = '\0';
                break;
            }
        size_t n = strlen(s);
        while (n && (s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
            s[--n] = '\0';
        if (!*s)
            continue;
        rc = theme_line(&p, s, &t, seen);
    }
    free(copy);
    if (rc == 0)
        *out = t;
    return rc;
}

/* ---- finding theme files ---- */

static bool theme_name_ok(const char *name)
{
    if (!name[0] || name[0] == '.' || strlen(name) > 48)
        return false;
    for (const char *c = name; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_' && *c != '.')
            return false;
    return true;
}

/* Read and parse one file. 1 parsed, 0 no such file, -1 error (*err). */
static int theme_read(const char *path, struct ui_theme *out, char **err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT || errno == ENOTDIR)
            return 0;
        if (asprintf(err, "%s: %s", path, strerror(errno)) < 0)
            *err = NULL;
        return -1;
    }
    char *buf = malloc(THEME_FILE_MAX + 1);
    size_t n = buf ? fread(buf, 1, THEME_FILE_MAX + 1, f) : 0;
    bool bad = ferror(f);
    fclose(f);
    int rc = -1;
    if (!buf) {
        *err = strdup("out of memory");
    } else if (bad) {
        if (asprintf(err, "%s: cannot read it", path) < 0)
            *err = NULL;
    } else if (n > THEME_FILE_MAX) {
        if (asprintf(err, "%s: larger than %d KiB: not a theme", path, THEME_FILE_MAX / 1024) < 0)
            *err = NULL;
    } else {
        rc = theme_parse(buf, n, path, out, err) == 0 ? 1 : -1;
    }
    free(buf);
    return rc;
}

int theme_load(const char *name, const char *const *dirs, struct ui_theme *out, char **err)
{
    *err = NULL;
    if (!name || !*name)
        name = theme_dark.name;
    if (strchr(name, '/')) /* a path to a file */
        switch (theme_read(name, out, err)) {
        case 1:
            return 0;
        case 0:
            if (asprintf(err, "%s: no such theme file", name) < 0)
                *err = NULL;
            return -1;
        default:
            return -1;
        }
    if (!theme_name_ok(name)) {
        if (asprintf(err, "'%.60s' is not a theme name (letters, digits, '-', '_' and '.')", name) <
            0)
            *err = NULL;
        return -1;
    }
    for (size_t i = 0; dirs && dirs[i]; i++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s" THEME_EXT, dirs[i], name);
        int r = theme_read(path, out, err);
        if (r == 1)
            return 0;
        if (r < 0)
            return -1;
    }
    if (strcmp(name, theme_dark.name) == 0) {
        *out = theme_dark;
        return 0;
    }
    char *have = theme_list(dirs);
    char where[1024];
    size_t used = 0;
    where[0] = '\0';
    for (size_t i = 0; dirs && dirs[i] && used < sizeof(where); i++)
        used +=
            (size_t)snprintf(where + used, sizeof(where) - used, "%s%s", i ? ", " : "", dirs[i]);
    if (asprintf(err, "no theme '%s' (have: %s; looked for %s" THEME_EXT " in %s)", name,
                 have ? have : "dark", name, where[0] ? where : "no directory") < 0)
        *err = NULL;
    free(have);
    return -1;
}

static int theme_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char *theme_list(const char *const *dirs)
{
    char *names[128];
    size_t n = 0;
    names[n++] = strdup(theme_dark.name);
    for (size_t i = 0; dirs && dirs[i]; i++) {
        DIR *d = opendir(dirs[i]);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d)) && n < sizeof(names) / sizeof(names[0])) {
            size_t len = strlen(e->d_name);
            if (len <= strlen(THEME_EXT) || strcmp(e->d_name + len - strlen(THEME_EXT), THEME_EXT))
                continue;
            char *nm = strndup(e->d_name, len - strlen(THEME_EXT));
            if (!nm || !theme_name_ok(nm)) {
                free(nm);
                continue;
            }
            bool dup = false;
            for (size_t k = 0; k < n && !dup; k++)
                dup = names[k] && strcmp(names[k], nm) == 0;
            if (dup)
                free(nm);
            else
                names[n++] = nm;
        }
        closedir(d);
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) /* drop a failed strdup */
        if (names[i])
            names[k++] = names[i];
    n = k;
    qsort(names, n, sizeof(names[0]), theme_cmp);
    size_t total = 1;
    for (size_t i = 0; i < n; i++)
        total += strlen(names[i]) + 2;
    char *out = malloc(total);
    if (out) {
        out[0] = '\0';
        for (size_t i = 0; i < n; i++) {
            if (i)
                strcat(out, ", ");
            strcat(out, names[i]);
        }
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    return out;
}

/* ---- curses ---- */

static attr_t theme_curses(unsigned bits)
{
    attr_t a = A_NORMAL;
    for (size_t i = 0; i < sizeof(theme_curses_attrs) / sizeof(theme_curses_attrs[0]); i++)
        if (bits & (1u << i))
            a |= theme_curses_attrs[i];
    return a;
}

void theme_apply(const struct ui_theme *t, bool color)
{
    bool defaults = color && use_default_colors() == OK;
    for (int i = 0; i < UI_C_COUNT; i++) {
        const struct ui_theme_slot *s = &t->slot[i];
        if (!color) {
            theme_attrs[i] = theme_curses(s->mono);
            continue;
        }
        /* 256-colour and bright values on a terminal with fewer: the nearest it has (a
         * bright foreground on 8 colours: the base colour, bold) */
        bool bold = false;
        short fg = (short)vt_color_fold(s->fg, COLORS, &bold);
        short bg = (short)vt_color_fold(s->bg, COLORS, NULL);
        /* Without default-colour support, -1 means white on black. */
        if (fg < 0 && !defaults)
            fg = COLOR_WHITE;
        if (bg < 0 && !defaults)
            bg = COLOR_BLACK;
        init_pair((short)(i + 1), fg, bg);
        theme_attrs[i] = COLOR_PAIR(i + 1) | theme_curses(s->attr) | (bold ? A_BOLD : A_NORMAL);
    }
}

attr_t theme_attr(enum ui_color c)
{
    return (c >= 0 && c < UI_C_COUNT) ? theme_attrs[c] : A_NORMAL;
}

enum ui_color theme_risk_color(const char *risk)
{
    if (risk && strcasecmp(risk, "high") == 0)
        return UI_C_BAD;
    if (risk && strcasecmp(risk, "medium") == 0)
        return UI_C_WARN;
    return UI_C_DIM;
}

enum ui_color theme_state_color(const char *state)
{
    static const struct {
        const char *state;
        enum ui_color color;
    } map[] = {
        /* sessions (engine/base/session_state.c) */
        {"building", UI_C_WARN},
        {"starting", UI_C_WARN},
        {"started", UI_C_WARN},
        {"ready", UI_C_OK},
        {"paused", UI_C_INFO},
        {"stopped", UI_C_DIM},
        {"error", UI_C_BAD},
        {"disconnected", UI_C_BAD},
        {"oom-killed", UI_C_BAD},
        {"deleted", UI_C_DIM},
        /* actions */
        {"received", UI_C_INFO},
        {"running", UI_C_WARN},
        {"done", UI_C_OK},
        {"failed", UI_C_BAD},
        {"interrupted", UI_C_BAD},
        /* approvals */
        {"pending", UI_C_WARN},
        {"approved", UI_C_OK},
        {"auto", UI_C_DIM},
        {"rejected", UI_C_BAD},
        {"expired", UI_C_BAD},
    };
    for (size_t i = 0; state && i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(map[i].state, state) == 0)
            return map[i].color;
    return UI_C_NORMAL;
}
