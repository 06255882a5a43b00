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
    {'j', "j", "move down", keys_down, "j/k move", false},
    {KEY_DOWN, "Down", "move down", keys_down, NULL, false},
    {'k', "k", "move up", keys_up, NULL, false},
    {KEY_UP, "Up", "move up", keys_up, NULL, false},
    {KEY_NPAGE, "PgDn", "page down", keys_page_down, NULL, false},
    {KEY_CTRL('f'), "^F", "page down", keys_page_down, NULL, false},
    {KEY_PPAGE, "PgUp", "page up", keys_page_up, NULL, false},
    {KEY_CTRL('b'), "^B", "page up", keys_page_up, NULL, false},
    {'g', "g", "go to the first row", keys_top, NULL, false},
    {KEY_HOME, "Home", "go to the first row", keys_top, NULL, false},
    {'G', "G", "go to the last row", keys_bottom, NULL, false},
    {KEY_END, "End", "go to the last row", keys_bottom, NULL, false},
    {0, NULL, NULL, NULL, NULL, false},
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
    {'q', "q", "quit (the engine and its sessions keep running)", keys_quit, "q quit", false},
    {'?', "?", "show or hide this help", keys_help, "? help", false},
    {'\t', "Tab", "next pane", keys_focus_next, "Tab pane", false},
    {KEY_BTAB, "S-Tab", "previous pane", keys_focus_prev, NULL, false},
    {'h', "h", "focus the sessions", keys_focus_sessions, NULL, false},
    {KEY_LEFT, "Left", "focus the sessions", keys_focus_sessions, NULL, false},
    {'l', "l", "focus the session's tabs", keys_focus_detail, NULL, false},
    {KEY_RIGHT, "Right", "focus the session's tabs", keys_focus_detail, NULL, false},
    {'\n', "Enter", "open the selected session's tabs", keys_focus_detail, NULL, false},
    {KEY_ENTER, "Enter", "open the selected session's tabs", keys_focus_detail, NULL, false},
    {27, "Esc", "back (to the sessions)", keys_back, NULL, false},
    {']', "]", "next tab", keys_tab_next, "[/] tab", false},
    {'[', "[", "previous tab", keys_tab_prev, NULL, false},
    {'1', "1", "jump to the sessions", keys_focus_sessions, NULL, false},
    {'2', "2", "jump to the approvals queue", keys_focus_approvals, NULL, false},
    {'3', "3", "History: past sessions and search (full screen)", page_history_show, NULL, false},
    {'r', "r", "refetch everything from the engine", keys_refresh, NULL, false},
    {KEY_CTRL('l'), "^L", "redraw the screen", keys_redraw, NULL, false},
    {':', ":", "command line (:help lists the commands)", cmdline_open, ": command", false},
    {0, NULL, NULL, NULL, NULL, false},
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

bool keys_page_takes_all(const struct ui *ui)
{
    const struct ui_page *p = ui_current_page(ui);
    bool in_page = p && (ui->page || ui->focus == UI_PANE_DETAIL);
    return !ui->help_visible && !ui->modal && in_page && p->takes_keys && p->takes_keys(ui);
}
