/* A bordered list pane with a title, column headings and a scrolling selection; the views
 * (view_sessions.c, view_actions.c) supply rows and cells through struct ui_view. */
#include "ui/ui_internal.h"

#include <stdio.h>
#include <string.h>

void list_fit_columns(const struct list_column *cols, int ncols, int avail, struct list_layout *out)
{
    bool keep[LIST_MAX_COLUMNS];
    int flex = -1;
    for (int i = 0; i < ncols && i < LIST_MAX_COLUMNS; i++) {
        keep[i] = true;
        if (cols[i].flex)
            flex = i;
    }
    for (;;) {
        int need = -1; /* one space between columns */
        for (int i = 0; i < ncols; i++)
            if (keep[i])
                need += cols[i].width + 1;
        if (need <= avail)
            break;
        /* drop the lowest-priority column that is not the flex one */
        int drop = -1;
        for (int i = 0; i < ncols; i++)
            if (keep[i] && i != flex && (drop < 0 || cols[i].prio < cols[drop].prio))
                drop = i;
        if (drop < 0)
            break; /* only the flex column is left: it gets what there is */
        keep[drop] = false;
    }
    int used = -1;
    for (int i = 0; i < ncols; i++)
        if (keep[i])
            used += cols[i].width + 1;
    int extra = avail - used > 0 ? avail - used : 0;
    out->n = 0;
    int x = 0;
    for (int i = 0; i < ncols; i++) {
        if (!keep[i])
            continue;
        int w = cols[i].width + (i == flex ? extra : 0);
        if (x + w > avail)
            w = avail - x;
        if (w <= 0)
            break;
        out->idx[out->n] = i;
        out->x[out->n] = x;
        out->w[out->n] = w;
        out->n++;
        x += w + 1;
    }
}

void list_clamp(struct ui *ui, enum ui_pane pane)
{
    struct ui_list *l = &ui->list[pane];
    size_t n = ui_views[pane]->count(ui);
    if (n == 0) {
        l->sel = l->top = 0;
        return;
    }
    if (l->sel >= n)
        l->sel = n - 1;
    size_t rows = l->rows > 0 ? (size_t)l->rows : 1;
    if (l->sel < l->top)
        l->top = l->sel;
    if (l->sel >= l->top + rows)
        l->top = l->sel - rows + 1;
    if (l->top + rows > n) /* no empty space below when the list could fill it */
        l->top = n > rows ? n - rows : 0;
}

static unsigned list_dirty_bit(enum ui_pane pane)
{
    return pane == UI_PANE_SESSIONS ? UI_DIRTY_SESSIONS : UI_DIRTY_ACTIONS;
}

static unsigned list_select(struct ui *ui, enum ui_pane pane, size_t row)
{
    size_t n = ui_views[pane]->count(ui);
    if (n == 0)
        return 0;
    if (row >= n)
        row = n - 1;
    unsigned dirty = list_dirty_bit(pane);
    ui->list[pane].sel = row;
    list_clamp(ui, pane);
    if (ui_views[pane]->on_select)
        dirty |= ui_views[pane]->on_select(ui, row);
    return dirty;
}

unsigned list_move(struct ui *ui, enum ui_pane pane, long delta)
{
    size_t n = ui_views[pane]->count(ui);
    if (n == 0)
        return 0;
    long row = (long)ui->list[pane].sel + delta;
    if (row < 0)
        row = 0;
    if (row >= (long)n)
        row = (long)n - 1;
    if ((size_t)row == ui->list[pane].sel)
        return 0;
    return list_select(ui, pane, (size_t)row);
}

unsigned list_jump(struct ui *ui, enum ui_pane pane, bool bottom)
{
    size_t n = ui_views[pane]->count(ui);
    if (n == 0)
        return 0;
    return list_select(ui, pane, bottom ? n - 1 : 0);
}

static void list_draw_frame(struct ui *ui, WINDOW *w, enum ui_pane pane)
{
    const struct ui_view *v = ui_views[pane];
    bool focused = ui->focus == pane;
    attr_t border = theme_attr(focused ? UI_C_BORDER_FOCUS : UI_C_BORDER);
    wattrset(w, border);
    box(w, 0, 0);
    wattrset(w, A_NORMAL);
    char title[256];
    v->title(ui, title, sizeof(title));
    int width = getmaxx(w);
    int x = 2;
    x += draw_text(ui, w, 0, x, width - 4, " ", theme_attr(UI_C_TITLE));
    x += draw_text(ui, w, 0, x, width - 2 - x, title, theme_attr(UI_C_TITLE));
    draw_text(ui, w, 0, x, width - 2 - x, " ", theme_attr(UI_C_TITLE));
}

void list_draw(struct ui *ui, enum ui_pane pane)
{
    WINDOW *w = ui->win_pane[pane];
    if (!w)
        return;
    const struct ui_view *v = ui_views[pane];
    struct ui_list *l = &ui->list[pane];
    int h = getmaxy(w), width = getmaxx(w);
    int inner = width - 2;
    werase(w);
    list_draw_frame(ui, w, pane);
    l->rows = h - 3 > 0 ? h - 3 : 0; /* border top, column headings, border bottom */
    list_clamp(ui, pane);

    struct list_layout lay;
    list_fit_columns(v->columns, v->ncolumns, inner - 2, &lay);
    for (int c = 0; c < lay.n; c++) {
        const struct list_column *col = &v->columns[lay.idx[c]];
        if (col->right)
            draw_text_right(ui, w, 1, 2 + lay.x[c], lay.w[c], col->title, theme_attr(UI_C_COLUMNS));
        else
            draw_text(ui, w, 1, 2 + lay.x[c], lay.w[c], col->title, theme_attr(UI_C_COLUMNS));
    }

    size_t n = v->count(ui);
    if (n == 0) {
        draw_text(ui, w, 2, 2, inner - 2, v->empty(ui), theme_attr(UI_C_DIM));
        return;
    }
    bool focused = ui->focus == pane;
    for (int r = 0; r < l->rows; r++) {
        size_t row = l->top + (size_t)r;
        if (row >= n)
            break;
        bool sel = row == l->sel;
        attr_t row_attr = sel ? theme_attr(focused ? UI_C_SELECTED : UI_C_SELECTED_BLUR) : 0;
        if (sel)
            draw_fill(w, 2 + r, 1, inner, row_attr);
        for (int c = 0; c < lay.n; c++) {
            char buf[1024];
            enum ui_color color = UI_C_NORMAL;
            buf[0] = '\0';
            v->cell(ui, row, lay.idx[c], buf, sizeof(buf), &color);
            attr_t a = sel ? row_attr : theme_attr(color);
            if (v->columns[lay.idx[c]].right)
                draw_text_right(ui, w, 2 + r, 2 + lay.x[c], lay.w[c], buf, a);
            else
                draw_text(ui, w, 2 + r, 2 + lay.x[c], lay.w[c], buf, a);
        }
    }
    /* more rows than shown: say so on the bottom border */
    if (n > (size_t)l->rows && l->rows > 0) {
        char more[64];
        snprintf(more, sizeof(more), " %zu-%zu of %zu ", l->top + 1,
                 l->top + (size_t)l->rows < n ? l->top + (size_t)l->rows : n, n);
        int mw = (int)strlen(more);
        if (mw < inner - 2)
            draw_text(ui, w, h - 1, width - 2 - mw, mw, more,
                      theme_attr(focused ? UI_C_BORDER_FOCUS : UI_C_BORDER));
    }
}
