/* Key tables and dispatch. A key goes to the help overlay (closes it), then a modal, then the
 * page that takes every key (the terminal; UI_KEY_LEAVE leaves it), then the focused page's
 * or list's own table, the list keys, and last the global table. The help overlay and the
 * footer hints are generated from the same tables. */
#include "ui/ui_internal.h"

#include <string.h>

int keys_run(struct ui *ui, const struct ui_key *table, int key, bool code, unsigned *dirty)
{
    for (const struct ui_key *k = table; k && k->fn; k++) {
        bool k_code = k->key >= KEY_MIN;
        if (k->key != key || k_code != code)
            continue;
        if (k->mutates && ui->opt->read_only) {
            ui_set_error(ui, "read-only dashboard: %s (%s) is disabled", k->name, k->help);
            *dirty = UI_DIRTY_FOOTER;
            return 1;
        }
        *dirty = k->fn(ui);
        return 1;
    }
    return 0;
}

/* ---- moving in the focused list ---- */

static unsigned keys_list_move(struct ui *ui, long delta)
{
    int id = list_focused(ui);
    return id < 0 ? 0 : list_move(ui, (enum ui_list_id)id, delta);
}

static long keys_list_page(const struct ui *ui)
{
    int id = list_focused(ui);
    int rows = id < 0 ? 1 : ui->list[id].rows;
    return rows > 1 ? rows - 1 : 1;
}

static unsigned keys_down(struct ui *ui)
{
    return keys_list_move(ui, 1);
}

static unsigned keys_up(struct ui *ui)
{
    return keys_list_move(ui, -1);
}

static unsigned keys_page_down(struct ui *ui)
{
    return keys_list_move(ui, keys_list_page(ui));
}

static unsigned keys_page_up(struct ui *ui)
{
    return keys_list_move(ui, -keys_list_page(ui));
}

static unsigned keys_top(struct ui *ui)
{
    int id = list_focused(ui);
    return id < 0 ? 0 : list_jump(ui, (enum ui_list_id)id, false);
}

static unsigned keys_bottom(struct ui *ui)
{
    int id = list_focused(ui);
    return id < 0 ? 0 : list_jump(ui, (enum ui_list_id)id, true);
}

const struct ui_key ui_list_keys[] = {
    {.key = 'j', .name = "j", .help = "move down", .fn = keys_down, .hint = "j/k move"},
    {.key = KEY_DOWN, .name = "Down", .help = "move down", .fn = keys_down},
    {.key = 'k', .name = "k", .help = "move up", .fn = keys_up},
    {.key = KEY_UP, .name = "Up", .help = "move up", .fn = keys_up},
    {.key = KEY_NPAGE, .name = "PgDn", .help = "page down", .fn = keys_page_down},
    {.key = KEY_CTRL('f'), .name = "^F", .help = "page down", .fn = keys_page_down},
    {.key = KEY_PPAGE, .name = "PgUp", .help = "page up", .fn = keys_page_up},
    {.key = KEY_CTRL('b'), .name = "^B", .help = "page up", .fn = keys_page_up},
    {.key = 'g', .name = "g", .help = "go to the first row", .fn = keys_top},
    {.key = KEY_HOME, .name = "Home", .help = "go to the first row", .fn = keys_top},
    {.key = 'G', .name = "G", .help = "go to the last row", .fn = keys_bottom},
    {.key = KEY_END, .name = "End", .help = "go to the last row", .fn = keys_bottom},
    {0},
};

/* ---- global ---- */

static unsigned keys_quit(struct ui *ui)
{
    (void)ui;
    return UI_QUIT;
}

static unsigned keys_help(struct ui *ui)
{
    ui->help_visible = !ui->help_visible;
    return ui->help_visible ? UI_DIRTY_HELP : UI_DIRTY_ALL;
}

bool keys_pane_usable(const struct ui *ui, enum ui_pane p)
{
    return p != UI_PANE_APPROVALS || json_array_size(ui->model.approvals) > 0;
}

static unsigned keys_focus(struct ui *ui, enum ui_pane pane)
{
    unsigned dirty = 0;
    if (ui->page)
        dirty |= ui_show_page(ui, NULL);
    if (ui->focus == pane || !keys_pane_usable(ui, pane))
        return dirty;
    ui->focus = pane;
    return dirty | UI_DIRTY_SESSIONS | UI_DIRTY_APPROVALS | UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
}

static unsigned keys_focus_step(struct ui *ui, int step)
{
    if (ui->page)
        return 0;
    int p = (int)ui->focus;
    for (int i = 0; i < UI_PANE_COUNT; i++) {
        p = (p + step + UI_PANE_COUNT) % UI_PANE_COUNT;
        if (keys_pane_usable(ui, (enum ui_pane)p))
            break;
    }
    return keys_focus(ui, (enum ui_pane)p);
}

static unsigned keys_focus_next(struct ui *ui)
{
    return keys_focus_step(ui, 1);
}

static unsigned keys_focus_prev(struct ui *ui)
{
    return keys_focus_step(ui, -1);
}

static unsigned keys_focus_sessions(struct ui *ui)
{
    return keys_focus(ui, UI_PANE_SESSIONS);
}

static unsigned keys_focus_approvals(struct ui *ui)
{
    if (!keys_pane_usable(ui, UI_PANE_APPROVALS)) {
        ui_set_status(ui, "nothing waits for approval");
        return UI_DIRTY_FOOTER;
    }
    return keys_focus(ui, UI_PANE_APPROVALS);
}

static unsigned keys_focus_detail(struct ui *ui)
{
    return keys_focus(ui, UI_PANE_DETAIL);
}

/* Esc: leave a full-screen page, else go back to the sessions. */
unsigned keys_back(struct ui *ui)
{
    if (ui->page)
        return ui_show_page(ui, NULL);
    return keys_focus(ui, UI_PANE_SESSIONS);
}

static unsigned keys_tab_step(struct ui *ui, int step)
{
    if (ui->page || !ui_ntabs)
        return 0;
    return ui_show_tab(ui, (ui->tab + ui_ntabs + (size_t)(step + (int)ui_ntabs)) % ui_ntabs);
}

static unsigned keys_tab_next(struct ui *ui)
{
    return keys_tab_step(ui, 1);
}

static unsigned keys_tab_prev(struct ui *ui)
{
    return keys_tab_step(ui, -1);
}

static unsigned keys_refresh(struct ui *ui)
{
    return ui_refresh_all(ui);
}

static unsigned keys_redraw(struct ui *ui)
{
    (void)ui;
    clearok(curscr, TRUE);
    return UI_DIRTY_ALL;
}

const struct ui_key ui_keys[] = {
    {.key = 'q',
     .name = "q",
     .help = "quit (the engine and its sessions keep running)",
     .fn = keys_quit,
     .hint = "q quit",
     .kept = true},
    {.key = '?',
     .name = "?",
     .help = "show or hide this help",
     .fn = keys_help,
     .hint = "? help",
     .kept = true},
    {.key = '\t',
     .name = "Tab",
     .help = "next pane",
     .fn = keys_focus_next,
     .hint = "Tab pane",
     .main_only = true},
    {.key = KEY_BTAB,
     .name = "S-Tab",
     .help = "previous pane",
     .fn = keys_focus_prev,
     .main_only = true},
    {.key = 'h', .name = "h", .help = "focus the sessions", .fn = keys_focus_sessions},
    {.key = KEY_LEFT, .name = "Left", .help = "focus the sessions", .fn = keys_focus_sessions},
    {.key = 'l', .name = "l", .help = "focus the session's tabs", .fn = keys_focus_detail},
    {.key = KEY_RIGHT,
     .name = "Right",
     .help = "focus the session's tabs",
     .fn = keys_focus_detail},
    {.key = '\n',
     .name = "Enter",
     .help = "open the selected session's tabs",
     .fn = keys_focus_detail},
    {.key = KEY_ENTER,
     .name = "Enter",
     .help = "open the selected session's tabs",
     .fn = keys_focus_detail},
    {.key = 27, .name = "Esc", .help = "back (to the sessions)", .fn = keys_back},
    {.key = ']',
     .name = "]",
     .help = "next tab",
     .fn = keys_tab_next,
     .hint = "[/] tab",
     .main_only = true},
    {.key = '[', .name = "[", .help = "previous tab", .fn = keys_tab_prev, .main_only = true},
    {.key = '1', .name = "1", .help = "jump to the sessions", .fn = keys_focus_sessions},
    {.key = '2', .name = "2", .help = "jump to the approvals queue", .fn = keys_focus_approvals},
    {.key = '3',
     .name = "3",
     .help = "History: past sessions and search (full screen)",
     .fn = page_history_show},
    {.key = 'E',
     .name = "E",
     .help = "the Egress tab: the session's connections through its proxy",
     .fn = tab_egress_show},
    {.key = 'r', .name = "r", .help = "refetch everything from the engine", .fn = keys_refresh},
    {.key = 'R',
     .name = "R",
     .help = "the operator's rules: list, edit, remove, add",
     .fn = rules_window_open},
    {.key = KEY_CTRL('l'), .name = "^L", .help = "redraw the screen", .fn = keys_redraw},
    {.key = ':',
     .name = ":",
     .help = "command line (:help lists the commands)",
     .fn = cmdline_open,
     .hint = ": command"},
    {0},
};

unsigned keys_dispatch(struct ui *ui, int key, bool code)
{
    if (code && key == KEY_MOUSE) /* only with --mouse: clicks and the wheel */
        return mouse_dispatch(ui);
    if (ui->help_visible) { /* any key closes the overlay */
        ui->help_visible = false;
        return UI_DIRTY_ALL;
    }
    if (ui->modal)
        return ui->modal->on_key(ui, key, code);
    const struct ui_page *p = ui_current_page(ui);
    bool in_page = p && (ui->page || ui->focus == UI_PANE_DETAIL);
    unsigned dirty = 0;
    if (in_page && p->takes_keys && p->takes_keys(ui)) {
        if (key == UI_KEY_LEAVE && !code) {
            unsigned told = p->on_key(ui, key, code); /* it learns the keyboard leaves */
            return told | keys_back(ui);
        }
        return p->on_key(ui, key, code);
    }
    if (in_page && keys_run(ui, p->keys, key, code, &dirty))
        return dirty;
    if (keys_text(ui) && keys_run(ui, textview_keys, key, code, &dirty))
        return dirty;
    if (!in_page && list_focused(ui) >= 0 &&
        keys_run(ui, ui_lists[list_focused(ui)]->keys, key, code, &dirty))
        return dirty;
    if (list_focused(ui) >= 0 && keys_run(ui, ui_list_keys, key, code, &dirty))
        return dirty;
    if (keys_run(ui, ui_keys, key, code, &dirty))
        return dirty;
    return 0;
}

/* The tables that apply now, most specific first (help and footer). */
size_t keys_tables(const struct ui *ui, const struct ui_key **out, const char **titles, size_t max)
{
    size_t n = 0;
    const struct ui_page *p = ui_current_page(ui);
    bool in_page = p && (ui->page || ui->focus == UI_PANE_DETAIL);
    if (in_page && p->keys && n < max) {
        titles[n] = p->name;
        out[n++] = p->keys;
    }
    if (keys_text(ui) && n < max) {
        titles[n] = "text";
        out[n++] = textview_keys;
    }
    int l = list_focused(ui);
    if (!in_page && l >= 0 && ui_lists[l]->keys && n < max) {
        titles[n] = ui_lists[l]->name;
        out[n++] = ui_lists[l]->keys;
    }
    if (l >= 0 && n < max) {
        titles[n] = "lists";
        out[n++] = ui_list_keys;
    }
    if (n < max) {
        titles[n] = "everywhere";
        out[n++] = ui_keys;
    }
    return n;
}

bool keys_applies(const struct ui *ui, const struct ui_key *const *tables, size_t t,
                  const struct ui_key *k)
{
    if (k->main_only && ui->page)
        return false;
    bool k_code = k->key >= KEY_MIN;
    for (size_t i = 0; i < t; i++)
        for (const struct ui_key *o = tables[i]; o->fn; o++)
            if (o->key == k->key && (o->key >= KEY_MIN) == k_code)
                return false;
    return true;
}

struct textview *keys_text(const struct ui *ui)
{
    const struct ui_page *p = ui_current_page(ui);
    bool in_page = p && (ui->page || ui->focus == UI_PANE_DETAIL);
    return in_page && p->text ? p->text(ui) : NULL;
}

bool keys_page_takes_all(const struct ui *ui)
{
    const struct ui_page *p = ui_current_page(ui);
    bool in_page = p && (ui->page || ui->focus == UI_PANE_DETAIL);
    return !ui->help_visible && !ui->modal && in_page && p->takes_keys && p->takes_keys(ui);
}
