/* Window geometry: header line, two panes (sessions left, actions right), footer line; or the
 * "terminal too small" screen. Drawing a frame: each dirty window is drawn and
 * wnoutrefresh'd, then one doupdate. */
#include "ui/ui_internal.h"

#include <stdio.h>

static void layout_delwin(WINDOW **w)
{
    if (*w)
        delwin(*w);
    *w = NULL;
}

void layout_free(struct ui *ui)
{
    layout_delwin(&ui->win_header);
    layout_delwin(&ui->win_footer);
    for (int i = 0; i < UI_PANE_COUNT; i++)
        layout_delwin(&ui->win_pane[i]);
    layout_delwin(&ui->win_help);
}

/* Width of the sessions pane: 45% of the screen, within [30, 64]. */
static int layout_left_width(int cols)
{
    int w = cols * 9 / 20;
    if (w < 30)
        w = 30;
    if (w > 64)
        w = 64;
    return w;
}

void layout_apply(struct ui *ui)
{
    layout_free(ui);
    werase(stdscr);
    wnoutrefresh(stdscr);
    ui->too_small = COLS < UI_MIN_COLS || LINES < UI_MIN_LINES;
    if (ui->too_small)
        return;
    int left = layout_left_width(COLS);
    int body = LINES - 2;
    ui->win_header = newwin(1, COLS, 0, 0);
    ui->win_footer = newwin(1, COLS, LINES - 1, 0);
    ui->win_pane[UI_PANE_SESSIONS] = newwin(body, left, 1, 0);
    ui->win_pane[UI_PANE_ACTIONS] = newwin(body, COLS - left, 1, left);
    for (int i = 0; i < UI_PANE_COUNT; i++) {
        if (ui->win_pane[i]) {
            leaveok(ui->win_pane[i], TRUE);
            ui->list[i].rows = body - 3;
        }
    }
    if (ui->win_header)
        leaveok(ui->win_header, TRUE);
    if (ui->win_footer)
        leaveok(ui->win_footer, TRUE);
}

static void layout_draw_too_small(struct ui *ui)
{
    char msg[128];
    snprintf(msg, sizeof(msg), "terminal too small: have %dx%d, need %dx%d", COLS, LINES,
             UI_MIN_COLS, UI_MIN_LINES);
    werase(stdscr);
    int w = draw_text_width(ui, msg);
    int x = w < COLS ? (COLS - w) / 2 : 0;
    draw_text(ui, stdscr, LINES / 2, x, COLS - x, msg, theme_attr(UI_C_BAD));
    if (LINES / 2 + 1 < LINES)
        draw_text(ui, stdscr, LINES / 2 + 1, x, COLS - x, "q quits", theme_attr(UI_C_DIM));
    wnoutrefresh(stdscr);
}

void layout_draw(struct ui *ui, unsigned dirty)
{
    if (dirty & UI_DIRTY_LAYOUT)
        layout_apply(ui);
    if (ui->too_small) {
        layout_draw_too_small(ui);
        doupdate();
        return;
    }
    /* After a layout change every window is new: draw them all. */
    if (dirty & UI_DIRTY_LAYOUT)
        dirty |= UI_DIRTY_ALL;
    if (dirty & UI_DIRTY_HEADER)
        view_status_draw_header(ui);
    for (int i = 0; i < UI_PANE_COUNT; i++) {
        unsigned bit = i == UI_PANE_SESSIONS ? UI_DIRTY_SESSIONS : UI_DIRTY_ACTIONS;
        if ((dirty & bit) && ui->win_pane[i]) {
            list_draw(ui, (enum ui_pane)i);
            wnoutrefresh(ui->win_pane[i]);
        }
    }
    if (dirty & UI_DIRTY_FOOTER)
        view_status_draw_footer(ui);
    if (ui->help_visible) {
        view_help_draw(ui); /* on top of whatever was redrawn under it */
    } else if (ui->win_help) {
        layout_delwin(&ui->win_help);
    }
    doupdate();
}
