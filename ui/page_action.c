/* One action shown whole (full screen; Enter on the Actions or Changes tab, Esc back): what
 * ran, its risk, the approval (who, when, why), exit code, duration, an edit's diff with +
 * lines green and - lines red, and the whole observation, from GET /v1/actions/{id}
 * (client/action_detail.c builds the text). Wrapped to the width; j/k/PgUp/PgDn/g/G scroll. An
 * action still running is fetched again when its event says it changed. */
#include "client/action_detail.h"
#include "client/client.h"
#include "ui/history_query.h"
#include "ui/ui_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_ACT_ROW_BYTES 2048 /* a row's bytes at most (history_wrap cuts longer ones) */
#define PAGE_ACT_REFETCH_MS 100

struct page_act_row {
    size_t off, len;
    enum action_line cls;
};

struct page_act {
    struct ui *ui;
    long long id;
    struct action_detail d;
    bool loaded, loading;
    char error[300];
    struct page_act_row *rows;
    size_t nrows, cap;
    int width;  /* what the rows were cut for (0: cut again) */
    int height; /* rows shown at the last draw */
    size_t top;
    size_t line_start; /* while cutting: where the current line began */
    int64_t refetch_at;
    char hint[96];
    char tok;
};

static struct page_act *page_act_find(const struct ui *ui)
{
    for (size_t i = 0; i < sizeof(ui->slots) / sizeof(ui->slots[0]); i++)
        if (ui->slots[i].page == &page_action)
            return ui->slots[i].state;
    return NULL;
}

/* ---- rows: the text cut for the width, each with its line's class ---- */

static bool page_act_row(void *ud, size_t off, size_t len)
{
    struct page_act *st = ud;
    if (st->nrows == st->cap) {
        size_t cap = st->cap ? st->cap * 2 : 256;
        struct page_act_row *r = realloc(st->rows, cap * sizeof(*r));
        if (!r)
            return false;
        st->rows = r;
        st->cap = cap;
    }
    /* a row that starts a line classifies it; the rest of a wrapped line keep its class */
    if (off == 0 || st->d.text[off - 1] == '\n')
        st->line_start = off;
    st->rows[st->nrows++] =
        (struct page_act_row){off, len, action_detail_line(&st->d, st->line_start)};
    return true;
}

static void page_act_cut(struct page_act *st, int width)
{
    st->nrows = 0;
    st->width = width;
    st->line_start = 0;
    history_wrap(st->d.text, st->d.len, width, PAGE_ACT_ROW_BYTES - 8, page_act_row, st);
}

static size_t page_act_max_top(const struct page_act *st)
{
    size_t h = st->height > 0 ? (size_t)st->height : 1;
    return st->nrows > h ? st->nrows - h : 0;
}

/* ---- fetching ---- */

static void page_act_fetched(int status, json_t *reply, const char *err, void *ud)
{
    struct page_act *st = (struct page_act *)((char *)ud - offsetof(struct page_act, tok));
    st->loading = false;
    st->ui->dirty |= UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
    if (status != 200 || !json_is_object(reply)) {
        snprintf(st->error, sizeof(st->error), "action %lld: %s", st->id,
                 status < 0 ? (err ? err : "no answer") : client_error_message(reply, "refused"));
        return;
    }
    struct action_detail d;
    if (action_detail_build(reply, &d) < 0) {
        snprintf(st->error, sizeof(st->error), "action %lld: out of memory", st->id);
        return;
    }
    action_detail_free(&st->d);
    st->d = d;
    st->error[0] = '\0';
    st->loaded = true;
    st->width = 0;          /* the position stays (a refetch) */
    if (st->ui->win_body) { /* cut now: the border's position hint is drawn before the body */
        st->height = getmaxy(st->ui->win_body);
        page_act_cut(st, getmaxx(st->ui->win_body) - 2);
    }
}

static void page_act_fetch(struct ui *ui, struct page_act *st)
{
    st->refetch_at = 0;
    ui_cancel(ui, &st->tok);
    char path[64];
    snprintf(path, sizeof(path), "/v1/actions/%lld", st->id);
    st->loading = ui_request(ui, "GET", path, NULL, page_act_fetched, &st->tok) == 0;
}

static void page_act_free(struct ui *ui, struct page_act *st)
{
    ui_cancel(ui, &st->tok);
    action_detail_free(&st->d);
    free(st->rows);
    free(st);
}

unsigned page_action_show(struct ui *ui, long long id)
{
    void **slot = ui_page_slot(ui, &page_action);
    if (!slot || id <= 0)
        return 0;
    if (*slot)
        page_act_free(ui, *slot);
    struct page_act *st = calloc(1, sizeof(*st));
    *slot = st;
    if (!st) {
        ui_set_error(ui, "action %lld: out of memory", id);
        return UI_DIRTY_FOOTER;
    }
    st->ui = ui;
    st->id = id;
    if (ui->page == &page_action) { /* already shown: show this one instead */
        page_act_fetch(ui, st);
        return UI_DIRTY_DETAIL;
    }
    return ui_show_page(ui, &page_action);
}

static unsigned page_act_open(struct ui *ui)
{
    struct page_act *st = page_act_find(ui);
    if (st && !st->loaded && !st->loading)
        page_act_fetch(ui, st);
    return UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
}

/* Leaving the page frees what page_action_show made. */
static void page_act_close(struct ui *ui)
{
    void **slot = ui_page_slot(ui, &page_action);
    if (slot && *slot) {
        page_act_free(ui, *slot);
        *slot = NULL;
    }
}

/* `r` or a reconnect: the same action again, where it was. */
static unsigned page_act_refresh(struct ui *ui)
{
    struct page_act *st = page_act_find(ui);
    if (st)
        page_act_fetch(ui, st);
    return UI_DIRTY_DETAIL;
}

static unsigned page_act_on_event(struct ui *ui, const char *type, json_t *data)
{
    struct page_act *st = page_act_find(ui);
    if (!st || strcmp(type, "action") != 0 ||
        json_integer_value(json_object_get(data, "id")) != st->id)
        return 0;
    if (!st->refetch_at)
        st->refetch_at = ui_now_ms() + PAGE_ACT_REFETCH_MS;
    return 0;
}

static int64_t page_act_next_tick(const struct ui *ui)
{
    const struct page_act *st = page_act_find(ui);
    return st ? st->refetch_at : 0;
}

static unsigned page_act_on_tick(struct ui *ui)
{
    struct page_act *st = page_act_find(ui);
    if (st && st->refetch_at)
        page_act_fetch(ui, st);
    return 0;
}

/* ---- drawing ---- */

static const enum ui_color page_act_colors[] = {
    [ACTION_LINE_PLAIN] = UI_C_NORMAL, [ACTION_LINE_TITLE] = UI_C_TITLE,
    [ACTION_LINE_FILE] = UI_C_DIM,     [ACTION_LINE_HUNK] = UI_C_INFO,
    [ACTION_LINE_ADD] = UI_C_OK,       [ACTION_LINE_DEL] = UI_C_BAD,
};

static void page_act_draw(struct ui *ui, WINDOW *w, bool focused)
{
    (void)focused;
    struct page_act *st = page_act_find(ui);
    int h = getmaxy(w), width = getmaxx(w) - 2;
    if (!st || width < 1) {
        draw_text(ui, w, 0, 1, width, "no action", theme_attr(UI_C_DIM));
        return;
    }
    if (st->error[0]) {
        draw_text(ui, w, 0, 1, width, st->error, theme_attr(UI_C_BAD));
        return;
    }
    if (!st->loaded) {
        draw_text(ui, w, 0, 1, width, "loading…", theme_attr(UI_C_DIM));
        return;
    }
    if (st->width != width)
        page_act_cut(st, width);
    st->height = h;
    if (st->top > page_act_max_top(st))
        st->top = page_act_max_top(st);
    static char row[PAGE_ACT_ROW_BYTES];
    for (int r = 0; r < h && st->top + (size_t)r < st->nrows; r++) {
        const struct page_act_row *pr = &st->rows[st->top + (size_t)r];
        size_t n = pr->len < sizeof(row) - 1 ? pr->len : sizeof(row) - 1;
        memcpy(row, st->d.text + pr->off, n);
        row[n] = '\0';
        draw_text(ui, w, r, 1, width, row, theme_attr(page_act_colors[pr->cls]));
    }
}

static const char *page_act_hint(const struct ui *ui)
{
    struct page_act *st = page_act_find(ui);
    if (!st)
        return NULL;
    if (!st->loaded || st->nrows == 0)
        snprintf(st->hint, sizeof(st->hint), "Esc back");
    else
        snprintf(st->hint, sizeof(st->hint), "#%lld  %zu-%zu of %zu  Esc back", st->id, st->top + 1,
                 st->top + (size_t)st->height < st->nrows ? st->top + (size_t)st->height
                                                          : st->nrows,
                 st->nrows);
    return st->hint;
}

/* ---- keys: scrolling ---- */

static unsigned page_act_scroll(struct ui *ui, long delta)
{
    struct page_act *st = page_act_find(ui);
    if (!st)
        return 0;
    long top = (long)st->top + delta;
    long most = (long)page_act_max_top(st);
    top = top < 0 ? 0 : top > most ? most : top;
    if ((size_t)top == st->top)
        return 0;
    st->top = (size_t)top;
    return UI_DIRTY_DETAIL;
}

static long page_act_page(const struct ui *ui)
{
    const struct page_act *st = page_act_find(ui);
    return st && st->height > 2 ? st->height - 1 : 1;
}

static unsigned page_act_down(struct ui *ui)
{
    return page_act_scroll(ui, 1);
}

static unsigned page_act_up(struct ui *ui)
{
    return page_act_scroll(ui, -1);
}

static unsigned page_act_page_down(struct ui *ui)
{
    return page_act_scroll(ui, page_act_page(ui));
}

static unsigned page_act_page_up(struct ui *ui)
{
    return page_act_scroll(ui, -page_act_page(ui));
}

static unsigned page_act_top(struct ui *ui)
{
    return page_act_scroll(ui, -(long)1e9);
}

static unsigned page_act_bottom(struct ui *ui)
{
    return page_act_scroll(ui, (long)1e9);
}

static const struct ui_key page_act_keys[] = {
    {.key = 'j', .name = "j", .help = "scroll down", .fn = page_act_down, .hint = "j/k scroll"},
    {.key = KEY_DOWN, .name = "Down", .help = "scroll down", .fn = page_act_down},
    {.key = 'k', .name = "k", .help = "scroll up", .fn = page_act_up},
    {.key = KEY_UP, .name = "Up", .help = "scroll up", .fn = page_act_up},
    {.key = KEY_NPAGE, .name = "PgDn", .help = "page down", .fn = page_act_page_down},
    {.key = KEY_PPAGE, .name = "PgUp", .help = "page up", .fn = page_act_page_up},
    {.key = 'g', .name = "g", .help = "go to the top", .fn = page_act_top},
    {.key = KEY_HOME, .name = "Home", .help = "go to the top", .fn = page_act_top},
    {.key = 'G',
     .name = "G",
     .help = "go to the end (of the observation)",
     .fn = page_act_bottom,
     .hint = "g/G ends"},
    {.key = KEY_END, .name = "End", .help = "go to the end", .fn = page_act_bottom},
    {0},
};

const struct ui_page page_action = {
    .name = "Action",
    .keys = page_act_keys,
    .list = -1,
    .open = page_act_open,
    .close = page_act_close,
    .draw = page_act_draw,
    .on_event = page_act_on_event,
    .hint = page_act_hint,
    .next_tick = page_act_next_tick,
    .on_tick = page_act_on_tick,
    .on_refresh = page_act_refresh,
};
