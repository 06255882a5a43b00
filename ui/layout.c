/* Window geometry: header line; left the sessions with the approvals queue under them (when
 * not empty), right the selected session's tabs (or one full-screen page); footer line; or
 * the "terminal too small" screen. Drawing a frame: each dirty window is drawn and
 * wnoutrefresh'd, then one doupdate. */
#include "ui/ui_internal.h"

#include <stdio.h>
#include <string.h>

static void layout_delwin(WINDOW **w)
{
    if (*w)
        delwin(*w);
    *w = NULL;
}

void layout_free(struct ui *ui)
{
    layout_delwin(&ui->win_body); /* a derwin: before its parent */
    layout_delwin(&ui->win_header);
    layout_delwin(&ui->win_footer);
    for (int i = 0; i < UI_PANE_COUNT; i++)
        layout_delwin(&ui->win_pane[i]);
    layout_delwin(&ui->win_help);
    layout_delwin(&ui->win_modal);
}

/* Width of the left column: 45% of the screen, within [40, 64]; at 80 columns 40 is what
 * ID, NAME, STATE and WAIT need side by side (view_sessions.c). Under 80 columns, half. */
static int layout_left_width(int cols)
{
    int w = cols * 9 / 20;
    if (w < 40)
        w = cols >= 80 ? 40 : cols / 2;
    if (w > 64)
        w = 64;
    return w;
}

/* What the geometry depends on besides the size: a change re-applies the layout. */
static unsigned layout_shape(const struct ui *ui)
{
    return (ui->page ? 1u : 0u) | (json_array_size(ui->model.approvals) ? 2u : 0u);
}

static WINDOW *layout_newwin(int h, int w, int y, int x)
{
    WINDOW *win = h > 0 && w > 0 ? newwin(h, w, y, x) : NULL;
    if (win) {
        leaveok(win, TRUE);
        wbkgdset(win, ' ' | theme_attr(UI_C_NORMAL)); /* a theme's own background */
    }
    return win;
}

void layout_apply(struct ui *ui)
{
    layout_free(ui);
    wbkgdset(stdscr, ' ' | theme_attr(UI_C_NORMAL));
    werase(stdscr);
    wnoutrefresh(stdscr);
    ui->shape = layout_shape(ui);
    ui->too_small = COLS < UI_MIN_COLS || LINES < UI_MIN_LINES;
    if (ui->too_small)
        return;
    int body = LINES - 2;
    ui->win_header = layout_newwin(1, COLS, 0, 0);
    ui->win_footer = layout_newwin(1, COLS, LINES - 1, 0);
    if (ui->page) { /* a full-screen page */
        ui->win_pane[UI_PANE_DETAIL] = layout_newwin(body, COLS, 1, 0);
    } else {
        int left = layout_left_width(COLS);
        int queue = 0;
        size_t waiting = json_array_size(ui->model.approvals);
        if (waiting) { /* the queue under the sessions: its rows + frame, up to half */
            queue = (int)waiting + 3;
            if (queue < 5)
                queue = 5;
            if (queue > body / 2)
                queue = body / 2;
        }
        ui->win_pane[UI_PANE_SESSIONS] = layout_newwin(body - queue, left, 1, 0);
        if (queue)
            ui->win_pane[UI_PANE_APPROVALS] = layout_newwin(queue, left, 1 + body - queue, 0);
        ui->win_pane[UI_PANE_DETAIL] = layout_newwin(body, COLS - left, 1, left);
    }
    WINDOW *d = ui->win_pane[UI_PANE_DETAIL];
    if (d && getmaxy(d) > 2 && getmaxx(d) > 2) {
        ui->win_body = derwin(d, getmaxy(d) - 2, getmaxx(d) - 2, 1, 1);
        if (ui->win_body) {
            leaveok(ui->win_body, TRUE);
            wbkgdset(ui->win_body, ' ' | theme_attr(UI_C_NORMAL));
        }
    }
    if (!keys_pane_usable(ui, ui->focus))
        ui->focus = UI_PANE_SESSIONS;
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

/* The tab bar on the detail pane's top border, in columns x..end: the session's name then
 * the tabs' names when they fit; else the tabs alone; else the tabs not on show by their
 * short names; else those without padding, running up to the corner; else every tab by its
 * short name (under 80 columns; the one on show is still highlighted). The tab on show keeps
 * its full name down to the last of these. */
static void layout_draw_tab_bar(struct ui *ui, WINDOW *w, int x, int end, bool focused)
{
    const struct model_session *s = ui_session(ui);
    char who[96];
    snprintf(who, sizeof(who), " %s ", s ? (s->name && *s->name ? s->name : s->id) : "-");
    memset(ui->tab_x, 0, sizeof(ui->tab_x));
    const char *full[sizeof(ui->tab_x) / sizeof(ui->tab_x[0])];
    const char *brief[sizeof(ui->tab_x) / sizeof(ui->tab_x[0])];
    size_t n =
        ui_ntabs < sizeof(full) / sizeof(full[0]) ? ui_ntabs : sizeof(full) / sizeof(full[0]);
    for (size_t t = 0; t < n; t++) {
        full[t] = ui_tabs[t]->name;
        brief[t] = t != ui->tab && ui_tabs[t]->short_name ? ui_tabs[t]->short_name : full[t];
    }
    int room = end - x, whow = draw_text_width(ui, who);
    const char *const *names = full;
    bool tight = false;
    if (draw_tabs_width(ui, full, n, false) + whow <= room) {
        x += draw_text(ui, w, 0, x, whow, who, theme_attr(UI_C_TITLE));
    } else if (draw_tabs_width(ui, full, n, false) > room) {
        names = brief;
        tight = draw_tabs_width(ui, brief, n, false) > room;
        /* without padding the bar may take the border's last column before the corner */
        end += tight;
        if (tight && draw_tabs_width(ui, brief, n, true) > room + 1 && ui->tab < n &&
            ui_tabs[ui->tab]->short_name)
            brief[ui->tab] = ui_tabs[ui->tab]->short_name;
    }
    /* the columns each tab took: for clicks (mouse.c) */
    draw_tabs(ui, w, 0, x, end, names, n, ui->tab, focused, tight, ui->tab_x);
}

/* The detail pane's frame: the tab bar on the top border (the current tab highlighted), the
 * page's hint on the bottom one; a full-screen page has its name instead of tabs. */
static void layout_draw_detail_frame(struct ui *ui, WINDOW *w, bool focused)
{
    draw_frame(ui, w, NULL, focused);
    int width = getmaxx(w), x = 2;
    if (ui->page) {
        x += draw_text(ui, w, 0, x, width - 4, " ", theme_attr(UI_C_TITLE));
        x += draw_text(ui, w, 0, x, width - 2 - x, ui->page->name, theme_attr(UI_C_TITLE));
        draw_text(ui, w, 0, x, width - 2 - x, " ", theme_attr(UI_C_TITLE));
    } else {
        layout_draw_tab_bar(ui, w, x, width - 2, focused);
    }
    const struct ui_page *p = ui_current_page(ui);
    const char *hint = p && p->hint ? p->hint(ui) : NULL;
    if (hint && *hint) {
        int hw = draw_text_width(ui, hint) + 2;
        if (hw < width - 4) {
            draw_text(ui, w, getmaxy(w) - 1, width - 2 - hw, 1, " ",
                      theme_attr(focused ? UI_C_BORDER_FOCUS : UI_C_BORDER));
            draw_text(ui, w, getmaxy(w) - 1, width - 1 - hw, hw - 1, hint,
                      theme_attr(focused ? UI_C_BORDER_FOCUS : UI_C_BORDER));
        }
    }
}

static void layout_draw_detail(struct ui *ui)
{
    WINDOW *w = ui->win_pane[UI_PANE_DETAIL];
    if (!w)
        return;
    bool focused = ui->page || ui->focus == UI_PANE_DETAIL;
    werase(w);
    layout_draw_detail_frame(ui, w, focused);
    const struct ui_page *p = ui_current_page(ui);
    if (ui->win_body) {
        werase(ui->win_body);
        if (p && p->draw)
            p->draw(ui, ui->win_body, focused);
        else if (!ui_session(ui))
            draw_text(ui, ui->win_body, 0, 1, getmaxx(ui->win_body) - 2, "no session selected",
                      theme_attr(UI_C_DIM));
    }
    wnoutrefresh(w);
    if (ui->win_body)
        wnoutrefresh(ui->win_body);
}

void layout_draw(struct ui *ui, unsigned dirty)
{
    if (!(dirty & UI_DIRTY_LAYOUT) && layout_shape(ui) != ui->shape)
        dirty |= UI_DIRTY_LAYOUT;
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
    if ((dirty & UI_DIRTY_SESSIONS) && ui->win_pane[UI_PANE_SESSIONS]) {
        list_draw(ui, UI_LIST_SESSIONS, ui->win_pane[UI_PANE_SESSIONS],
                  ui->focus == UI_PANE_SESSIONS, true);
        wnoutrefresh(ui->win_pane[UI_PANE_SESSIONS]);
    }
    if ((dirty & UI_DIRTY_APPROVALS) && ui->win_pane[UI_PANE_APPROVALS]) {
        list_draw(ui, UI_LIST_APPROVALS, ui->win_pane[UI_PANE_APPROVALS],
                  ui->focus == UI_PANE_APPROVALS, true);
        wnoutrefresh(ui->win_pane[UI_PANE_APPROVALS]);
    }
    if (dirty & UI_DIRTY_DETAIL)
        layout_draw_detail(ui);
    if (dirty & UI_DIRTY_FOOTER)
        view_status_draw_footer(ui);
    if (ui->help_visible) {
        view_help_draw(ui); /* on top of whatever was redrawn under it */
    } else if (ui->win_help) {
        layout_delwin(&ui->win_help);
    }
    if (ui->modal && ui->modal->draw)
        ui->modal->draw(ui);
    doupdate();
}
