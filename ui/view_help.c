/* The `?` overlay, generated from the key table: keys that share a handler are one line. */
#include "ui/ui_internal.h"

#include <stdio.h>
#include <string.h>

#define HELP_MAX_LINES 128

struct help_line {
    char keys[64];
    const char *help;
    ui_key_fn fn;
};

/* Is name one of the ", "-separated names in list? */
static bool view_help_has(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *end = strstr(p, ", ");
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        p = end ? end + 2 : NULL;
    }
    return false;
}

/* The keys of tables[t] from out[n]: one line per handler, its keys joined ("j, Down"); with
 * ui, only those that do something there (keys_applies). The new n. */
static int view_help_group(const struct ui *ui, const struct ui_key *const *tables, size_t t,
                           struct help_line *out, int n, int max)
{
    int first = n;
    for (const struct ui_key *k = tables[t]; k->fn && n < max; k++) {
        if (ui && !keys_applies(ui, tables, t, k))
            continue;
        int at = -1;
        for (int i = first; i < n; i++)
            if (out[i].fn == k->fn)
                at = i;
        if (at >= 0) {
            if (view_help_has(out[at].keys, k->name))
                continue;
            size_t used = strlen(out[at].keys);
            snprintf(out[at].keys + used, sizeof(out[at].keys) - used, ", %s", k->name);
            continue;
        }
        snprintf(out[n].keys, sizeof(out[n].keys), "%s", k->name);
        out[n].help = k->help;
        out[n].fn = k->fn;
        n++;
    }
    return n;
}

/* The `:` commands, from their table, from out[n]. The new n. */
static int view_help_commands(struct help_line *out, int n, int max)
{
    for (const struct ui_command *c = ui_commands; c->name && n < max; c++) {
        snprintf(out[n].keys, sizeof(out[n].keys), ":%s%s%s%s%s", c->name, c->args[0] ? " " : "",
                 c->args, c->alias ? ", :" : "", c->alias ? c->alias : "");
        out[n].help = c->help;
        out[n].fn = NULL;
        n++;
    }
    return n;
}

/* One line per handler in a table; a "title" line before each table. */
static int view_help_lines(const struct ui *ui, struct help_line *out, int max)
{
    const struct ui_key *tables[8];
    const char *titles[8];
    size_t nt = keys_tables(ui, tables, titles, 8);
    int n = 0;
    for (size_t t = 0; t < nt && n < max; t++) {
        snprintf(out[n].keys, sizeof(out[n].keys), "%s", titles[t]);
        out[n].help = NULL;
        out[n].fn = NULL;
        n++;
        n = view_help_group(ui, tables, t, out, n, max);
    }
    if (n < max) {
        snprintf(out[n].keys, sizeof(out[n].keys), "commands (: then Enter)");
        out[n].help = NULL;
        out[n].fn = NULL;
        n++;
    }
    return view_help_commands(out, n, max);
}

void ui_keys_print(FILE *f)
{
    /* every table once: where it works, then its keys as the ? overlay groups them */
    const struct ui_key *tables[32];
    const char *titles[32];
    size_t nt = 0;
    tables[nt] = ui_keys, titles[nt++] = "everywhere";
    tables[nt] = ui_list_keys, titles[nt++] = "lists";
    for (size_t i = 0; i < UI_LIST_COUNT; i++)
        if (ui_lists[i]->keys)
            tables[nt] = ui_lists[i]->keys, titles[nt++] = ui_lists[i]->name;
    for (size_t i = 0; i < ui_ntabs; i++)
        if (ui_tabs[i]->keys)
            tables[nt] = ui_tabs[i]->keys, titles[nt++] = ui_tabs[i]->name;
    tables[nt] = page_history.keys, titles[nt++] = page_history.name;
    tables[nt] = page_action.keys, titles[nt++] = page_action.name;
    tables[nt] = textview_keys, titles[nt++] = "text";
    struct help_line lines[48];
    for (size_t t = 0; t < nt; t++) {
        bool seen = false;
        for (size_t u = 0; u < t; u++)
            seen = seen || tables[u] == tables[t];
        if (seen)
            continue;
        int n = view_help_group(NULL, tables, t, lines, 0, 48);
        for (int i = 0; i < n; i++)
            fprintf(f, "%s\t%s\t%s\n", titles[t], lines[i].keys, lines[i].help);
    }
    int n = view_help_commands(lines, 0, 48);
    for (int i = 0; i < n; i++)
        fprintf(f, "commands\t%s\t%s\n", lines[i].keys, lines[i].help);
}

void view_help_draw(struct ui *ui)
{
    struct help_line lines[HELP_MAX_LINES];
    int n = view_help_lines(ui, lines, HELP_MAX_LINES);
    int keyw = 0, helpw = 0;
    for (int i = 0; i < n; i++) {
        if (!lines[i].help)
            continue;
        int kw = draw_text_width(ui, lines[i].keys), hw = draw_text_width(ui, lines[i].help);
        keyw = kw > keyw ? kw : keyw;
        helpw = hw > helpw ? hw : helpw;
    }
    int colw = keyw + helpw + 3;
    int w = colw + 4, h = n + 4;
    /* too tall for the screen: two columns when they fit side by side */
    int percol = n;
    if (h > LINES - 2) {
        int half = (COLS - 8) / 2; /* long help texts are cut rather than rows lost */
        if (colw > half)
            colw = half;
        if (colw >= keyw + 20) {
            percol = (n + 1) / 2;
            w = 2 * colw + 6;
            h = percol + 4;
        }
    }
    if (w > COLS - 2)
        w = COLS - 2;
    if (h > LINES - 2)
        h = LINES - 2;
    if (w < 20 || h < 5)
        return;
    if (ui->win_help)
        delwin(ui->win_help);
    ui->win_help = newwin(h, w, (LINES - h) / 2, (COLS - w) / 2);
    WINDOW *win = ui->win_help;
    if (!win)
        return;
    attr_t base = theme_attr(UI_C_HELP);
    wbkgdset(win, ' ' | base);
    werase(win);
    wattrset(win, base | A_BOLD);
    box(win, 0, 0);
    wattrset(win, A_NORMAL);
    draw_text(ui, win, 0, 2, w - 4, " Keys ", base | A_BOLD);
    for (int i = 0; i < n; i++) {
        int col = i / percol, y = 1 + i % percol;
        int x = 2 + col * (colw + 2), cw = percol < n ? colw : w - 4;
        if (y > h - 4 || x + 4 + keyw >= w)
            continue;
        if (!lines[i].help) { /* a table's title */
            draw_text(ui, win, y, x, cw, lines[i].keys, base | A_BOLD | A_UNDERLINE);
            continue;
        }
        draw_text(ui, win, y, x, keyw, lines[i].keys, theme_attr(UI_C_HELP_KEY));
        draw_text(ui, win, y, x + 2 + keyw, (x + cw < w - 2 ? x + cw : w - 2) - x - 2 - keyw,
                  lines[i].help, base);
    }
    draw_text(ui, win, h - 2, 2, w - 4, "press any key to close", base | A_DIM);
    wnoutrefresh(win);
}
