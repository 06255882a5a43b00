/* A list with column headings and a scrolling selection, framed as a pane or bare inside a
 * tab; the views (view_sessions.c, view_approvals.c, view_actions.c) supply rows and cells
 * through struct ui_view. */
#include "ui/ui_internal.h"

#include <stdio.h>
#include <string.h>

void list_fit_columns(const struct list_column *cols, int ncols, int avail, struct list_layout *out)
{
    list_fit_columns_shown(cols, ncols, NULL, avail, out);
}

void list_fit_columns_shown(const struct list_column *cols, int ncols, const bool *shown, int avail,
                            struct list_layout *out)
{
    bool keep[LIST_MAX_COLUMNS];
    int flex = -1;
    for (int i = 0; i < ncols && i < LIST_MAX_COLUMNS; i++) {
        keep[i] = !shown || shown[i];
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

void list_clamp(struct ui *ui, enum ui_list_id id)
{
    struct ui_list *l = &ui->list[id];
    size_t n = ui_lists[id]->count(ui);
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

int list_focused(const struct ui *ui)
{
    if (ui->page)
        return ui->page->list;
    switch (ui->focus) {
    case UI_PANE_SESSIONS:
        return UI_LIST_SESSIONS;
    case UI_PANE_APPROVALS:
        return UI_LIST_APPROVALS;
    default:
        return ui_current_page(ui) ? ui_current_page(ui)->list : -1;
    }
}

static unsigned list_select(struct ui *ui, enum ui_list_id id, size_t row)
{
    const struct ui_view *v = ui_lists[id];
    size_t n = v->count(ui);
    if (n == 0)
        return 0;
    if (row >= n)
        row = n - 1;
    unsigned dirty = v->dirty;
    ui->list[id].sel = row;
    list_clamp(ui, id);
    if (v->on_select)
        dirty |= v->on_select(ui, row);
    return dirty;
}

unsigned list_move(struct ui *ui, enum ui_list_id id, long delta)
{
    size_t n = ui_lists[id]->count(ui);
    if (n == 0)
        return 0;
    long row = (long)ui->list[id].sel + delta;
    if (row < 0)
        row = 0;
    if (row >= (long)n)
        row = (long)n - 1;
    if ((size_t)row == ui->list[id].sel)
        return 0;
    return list_select(ui, id, (size_t)row);
}

unsigned list_jump(struct ui *ui, enum ui_list_id id, bool bottom)
{
    size_t n = ui_lists[id]->count(ui);
    if (n == 0)
        return 0;
    return list_select(ui, id, bottom ? n - 1 : 0);
}

void list_draw(struct ui *ui, enum ui_list_id id, WINDOW *w, bool focused, bool framed)
{
    if (!w)
        return;
    const struct ui_view *v = ui_lists[id];
    struct ui_list *l = &ui->list[id];
    int h = getmaxy(w), width = getmaxx(w);
    /* framed: border, title, columns from row 1 and column 2; bare: columns at row 0 */
    int x0 = framed ? 2 : 1, y0 = framed ? 1 : 0;
    int inner = framed ? width - 2 : width;
    werase(w);
    if (framed) {
        char title[256];
        v->title(ui, title, sizeof(title));
        draw_frame(ui, w, title, focused);
    }
    l->rows = h - y0 - 1 - (framed ? 1 : 0);
    if (l->rows < 0)
        l->rows = 0;
    list_clamp(ui, id);

    struct list_layout lay;
    bool shown[LIST_MAX_COLUMNS];
    for (int c = 0; c < v->ncolumns && c < LIST_MAX_COLUMNS; c++)
        shown[c] = !v->column_shown || v->column_shown(ui, c);
    list_fit_columns_shown(v->columns, v->ncolumns, shown, inner - 2, &lay);
    for (int c = 0; c < lay.n; c++) {
        const struct list_column *col = &v->columns[lay.idx[c]];
        if (col->right)
            draw_text_right(ui, w, y0, x0 + lay.x[c], lay.w[c], col->title,
                            theme_attr(UI_C_COLUMNS));
        else
            draw_text(ui, w, y0, x0 + lay.x[c], lay.w[c], col->title, theme_attr(UI_C_COLUMNS));
    }

    size_t n = v->count(ui);
    if (n == 0) {
        draw_text(ui, w, y0 + 1, x0, inner - 2, v->empty(ui), theme_attr(UI_C_DIM));
        return;
    }
    for (int r = 0; r < l->rows; r++) {
        size_t row = l->top + (size_t)r;
        if (row >= n)
            break;
        bool sel = row == l->sel;
        attr_t row_attr = sel ? theme_attr(focused ? UI_C_SELECTED : UI_C_SELECTED_BLUR) : 0;
        if (sel)
            draw_fill(w, y0 + 1 + r, x0 - 1, inner, row_attr);
        for (int c = 0; c < lay.n; c++) {
            char buf[1024];
            enum ui_color color = UI_C_NORMAL;
            buf[0] = '\0';
            v->cell(ui, row, lay.idx[c], buf, sizeof(buf), &color);
            attr_t a = sel ? row_attr : theme_attr(color);
            if (v->columns[lay.idx[c]].right)
                draw_text_right(ui, w, y0 + 1 + r, x0 + lay.x[c], lay.w[c], buf, a);
            else
                draw_text(ui, w, y0 + 1 + r, x0 + lay.x[c], lay.w[c], buf, a);
        }
    }
    /* more rows than shown: say so (on the bottom border, or the last row's right end) */
    if (n > (size_t)l->rows && l->rows > 0) {
        char more[64];
        snprintf(more, sizeof(more), " %zu-%zu of %zu ", l->top + 1,
                 l->top + (size_t)l->rows < n ? l->top + (size_t)l->rows : n, n);
        int mw = (int)strlen(more);
        if (framed && mw < inner - 2)
            draw_text(ui, w, h - 1, width - 2 - mw, mw, more,
                      theme_attr(focused ? UI_C_BORDER_FOCUS : UI_C_BORDER));
        else if (!framed && mw < inner - 2)
            draw_text(ui, w, 0, width - mw, mw, more, theme_attr(UI_C_DIM));
    }
}
