/* The one key table: dispatch, the help overlay and the footer hints all come from it. */
#include "ui/ui_internal.h"

#include <string.h>

#define KEY_CTRL(c) ((c)&0x1f)

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

static unsigned keys_down(struct ui *ui)
{
    return list_move(ui, ui->focus, 1);
}

static unsigned keys_up(struct ui *ui)
{
    return list_move(ui, ui->focus, -1);
}

static unsigned keys_page_down(struct ui *ui)
{
    int rows = ui->list[ui->focus].rows;
    return list_move(ui, ui->focus, rows > 1 ? rows - 1 : 1);
}

static unsigned keys_page_up(struct ui *ui)
{
    int rows = ui->list[ui->focus].rows;
    return list_move(ui, ui->focus, -(rows > 1 ? rows - 1 : 1));
}

static unsigned keys_top(struct ui *ui)
{
    return list_jump(ui, ui->focus, false);
}

static unsigned keys_bottom(struct ui *ui)
{
    return list_jump(ui, ui->focus, true);
}

static unsigned keys_focus(struct ui *ui, enum ui_pane pane)
{
    if (ui->focus == pane)
        return 0;
    ui->focus = pane;
    return UI_DIRTY_SESSIONS | UI_DIRTY_ACTIONS;
}

static unsigned keys_focus_next(struct ui *ui)
{
    return keys_focus(ui, (enum ui_pane)((ui->focus + 1) % UI_PANE_COUNT));
}

static unsigned keys_focus_sessions(struct ui *ui)
{
    return keys_focus(ui, UI_PANE_SESSIONS);
}

static unsigned keys_focus_actions(struct ui *ui)
{
    return keys_focus(ui, UI_PANE_ACTIONS);
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
    {'q', "q", "quit (the engine keeps running)", keys_quit, "q quit", false},
    {'?', "?", "show or hide this help", keys_help, "? help", false},
    {'j', "j", "move down", keys_down, "j/k move", false},
    {KEY_DOWN, "Down", "move down", keys_down, NULL, false},
    {'k', "k", "move up", keys_up, NULL, false},
    {KEY_UP, "Up", "move up", keys_up, NULL, false},
    {KEY_NPAGE, "PgDn", "page down", keys_page_down, NULL, false},
    {KEY_CTRL('f'), "^F", "page down", keys_page_down, NULL, false},
    {KEY_PPAGE, "PgUp", "page up", keys_page_up, NULL, false},
    {KEY_CTRL('b'), "^B", "page up", keys_page_up, NULL, false},
    {'g', "g", "go to the top (newest)", keys_top, "g/G top/bottom", false},
    {KEY_HOME, "Home", "go to the top (newest)", keys_top, NULL, false},
    {'G', "G", "go to the bottom (oldest)", keys_bottom, NULL, false},
    {KEY_END, "End", "go to the bottom (oldest)", keys_bottom, NULL, false},
    {'\t', "Tab", "switch pane", keys_focus_next, "Tab pane", false},
    {KEY_BTAB, "S-Tab", "switch pane", keys_focus_next, NULL, false},
    {'h', "h", "focus the sessions pane", keys_focus_sessions, NULL, false},
    {KEY_LEFT, "Left", "focus the sessions pane", keys_focus_sessions, NULL, false},
    {'l', "l", "focus the actions pane", keys_focus_actions, NULL, false},
    {KEY_RIGHT, "Right", "focus the actions pane", keys_focus_actions, NULL, false},
    {'\n', "Enter", "focus the actions pane", keys_focus_actions, NULL, false},
    {KEY_ENTER, "Enter", "focus the actions pane", keys_focus_actions, NULL, false},
    {'r', "r", "refetch everything from the engine", keys_refresh, "r refresh", false},
    {KEY_CTRL('l'), "^L", "redraw the screen", keys_redraw, NULL, false},
    {0, NULL, NULL, NULL, NULL, false},
};

unsigned keys_dispatch(struct ui *ui, int key)
{
    if (ui->help_visible) { /* any key closes the overlay */
        ui->help_visible = false;
        return UI_DIRTY_ALL;
    }
    for (const struct ui_key *k = ui_keys; k->fn; k++) {
        if (k->key != key)
            continue;
        if (k->mutates && ui->opt->read_only) {
            ui_set_status(ui, "read-only dashboard: %s is disabled", k->name);
            return UI_DIRTY_FOOTER;
        }
        return k->fn(ui);
    }
    return 0;
}
