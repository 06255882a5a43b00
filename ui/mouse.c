/* The mouse (--mouse, or mouse = true in the config file): a click selects the row under it
 * and focuses its pane, a click on the tab bar picks the tab, the wheel scrolls the list
 * under the pointer. Only button presses are asked for (no motion), and only when the
 * operator turned the mouse on: otherwise the terminal keeps its own text selection, and
 * with it on most terminals still select text with Shift held. */
#include "ui/ui_internal.h"

#define MOUSE_WHEEL_ROWS 3

void mouse_start(struct ui *ui)
{
    (void)ui;
    mousemask(BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
    mouseinterval(0); /* presses at once: no waiting to tell a click from a double click */
}

/* Where (y, x) is inside w, when it is. */
static bool mouse_in(WINDOW *w, int y, int x, int *wy, int *wx)
{
    if (!w || !wenclose(w, y, x))
        return false;
    *wy = y - getbegy(w);
    *wx = x - getbegx(w);
    return true;
}

static unsigned mouse_focus(struct ui *ui, enum ui_pane p)
{
    if (ui->focus == p || !keys_pane_usable(ui, p))
        return 0;
    ui->focus = p;
    return UI_DIRTY_SESSIONS | UI_DIRTY_APPROVALS | UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
}

/* A click on a list's row (first row at y0 inside its window), or the wheel over it. */
static unsigned mouse_list(struct ui *ui, enum ui_list_id id, int row_y, bool wheel, int step)
{
    if (wheel)
        return list_move(ui, id, step * MOUSE_WHEEL_ROWS);
    if (row_y < 0 || row_y >= ui->list[id].rows)
        return 0;
    size_t row = ui->list[id].top + (size_t)row_y;
    if (row >= ui_lists[id]->count(ui))
        return 0;
    return list_move(ui, id, (long)row - (long)ui->list[id].sel);
}

/* The tab bar on the detail pane's top border. */
static unsigned mouse_tab(struct ui *ui, int x)
{
    size_t n = ui_ntabs < 16 ? ui_ntabs : 16;
    for (size_t t = 0; t < n; t++)
        if (ui->tab_x[t][1] > ui->tab_x[t][0] && x >= ui->tab_x[t][0] && x < ui->tab_x[t][1])
            return ui_show_tab(ui, t) | mouse_focus(ui, UI_PANE_DETAIL) | UI_DIRTY_ALL;
    return 0;
}

unsigned mouse_dispatch(struct ui *ui)
{
    MEVENT ev;
    if (getmouse(&ev) != OK)
        return 0;
    bool wheel = ev.bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED);
    int step = ev.bstate & BUTTON4_PRESSED ? -1 : 1;
    if (!wheel && !(ev.bstate & BUTTON1_PRESSED))
        return 0;
    if (ui->modal || ui->too_small)
        return 0;
    if (ui->help_visible) { /* a click closes it, as a key does */
        if (wheel)
            return 0;
        ui->help_visible = false;
        return UI_DIRTY_ALL;
    }
    int y, x;
    if (!ui->page && mouse_in(ui->win_pane[UI_PANE_SESSIONS], ev.y, ev.x, &y, &x)) {
        unsigned d = wheel ? 0 : mouse_focus(ui, UI_PANE_SESSIONS);
        return d | mouse_list(ui, UI_LIST_SESSIONS, y - 2, wheel, step); /* border, headings */
    }
    if (!ui->page && mouse_in(ui->win_pane[UI_PANE_APPROVALS], ev.y, ev.x, &y, &x)) {
        unsigned d = wheel ? 0 : mouse_focus(ui, UI_PANE_APPROVALS);
        return d | mouse_list(ui, UI_LIST_APPROVALS, y - 2, wheel, step);
    }
    if (mouse_in(ui->win_pane[UI_PANE_DETAIL], ev.y, ev.x, &y, &x)) {
        if (y == 0 && !ui->page && !wheel)
            return mouse_tab(ui, x);
        const struct ui_page *p = ui_current_page(ui);
        if (p && p->takes_keys && p->takes_keys(ui))
            return wheel ? 0 : mouse_focus(ui, UI_PANE_DETAIL);
        unsigned d = wheel || ui->page ? 0 : mouse_focus(ui, UI_PANE_DETAIL);
        if (p && p->list >= 0) /* a bare list: its headings on the body's first row */
            return d | mouse_list(ui, (enum ui_list_id)p->list, y - 2, wheel, step);
        if (wheel) { /* a page without a list scrolls with its own keys */
            unsigned dirty = 0, one = 0;
            int key = step < 0 ? KEY_UP : KEY_DOWN;
            for (int i = 0; i < MOUSE_WHEEL_ROWS; i++)
                if (keys_run(ui, p ? p->keys : NULL, key, true, &one) ||
                    (keys_text(ui) && keys_run(ui, textview_keys, key, true, &one)))
                    dirty |= one;
            return d | dirty;
        }
        return d;
    }
    return 0;
}
