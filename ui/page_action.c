/* One action shown whole (full screen; Enter on the Actions or Changes tab, Esc back): what
 * ran, its risk, the approval (who, when, why), exit code, duration, an edit's diff with +
 * lines green and - lines red, and the whole observation, from GET /v1/actions/{id}
 * (client/action_detail.c builds the text). The shared text viewer (ui/textview.c) shows it,
 * wrapped at words; its keys scroll and search (j/k/PgUp/PgDn/g/G, / n N). An action still running
 * is fetched again when its event says it changed, and shows its output so far in place of the
 * observation: what it printed before the page opened (GET /v1/actions/{id}/output), then
 * the engine's `action_output` events as they come; the view follows the end meanwhile. */
#include "client/action_detail.h"
#include "client/client.h"
#include "client/live_output.h"
#include "common/buf.h"
#include "common/sanitize.h"
#include "ui/textview.h"
#include "ui/ui_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_ACT_REFETCH_MS 100
#define PAGE_ACT_LIVE_MAX (256 * 1024) /* a running action's output: its newest bytes */

struct page_act {
    struct ui *ui;
    long long id;
    struct action_detail d;
    struct textview_text text; /* d's text in lines */
    struct textview tv;
    bool loaded, loading;
    char error[300];
    int64_t refetch_at;
    char hint[96];
    char tok;
    json_t *reply; /* the action as last fetched */
    /* Its output while it runs (the newest PAGE_ACT_LIVE_MAX bytes; missed: bytes before). */
    struct live_output lo;
    struct buf live;
    unsigned long long missed;
    bool live_any;
    char tok_out;
};

static struct page_act *page_act_find(const struct ui *ui)
{
    for (size_t i = 0; i < sizeof(ui->slots) / sizeof(ui->slots[0]); i++)
        if (ui->slots[i].page == &page_action)
            return ui->slots[i].state;
    return NULL;
}

/* ---- the lines, each in its class's colour ---- */

static const enum ui_color page_act_colors[] = {
    [ACTION_LINE_PLAIN] = UI_C_NORMAL, [ACTION_LINE_TITLE] = UI_C_TITLE,
    [ACTION_LINE_FILE] = UI_C_DIM,     [ACTION_LINE_HUNK] = UI_C_INFO,
    [ACTION_LINE_ADD] = UI_C_OK,       [ACTION_LINE_DEL] = UI_C_BAD,
};

static size_t page_act_count(const void *ud)
{
    return textview_text_source.count(&((const struct page_act *)ud)->text);
}

static const char *page_act_line(const void *ud, size_t i, size_t *len)
{
    return textview_text_source.line(&((const struct page_act *)ud)->text, i, len);
}

static enum ui_color page_act_color(const void *ud, size_t i)
{
    const struct page_act *st = ud;
    return i < st->text.nlines ? page_act_colors[action_detail_line(&st->d, st->text.off[i])]
                               : UI_C_NORMAL;
}

static const struct textview_source page_act_source = {
    .count = page_act_count,
    .line = page_act_line,
    .color = page_act_color,
};

/* ---- fetching ---- */

/* The text again from the last reply, with the output so far while it runs. */
static void page_act_rebuild(struct page_act *st)
{
    json_t *reply = st->reply;
    const char *state = json_string_value(json_object_get(reply, "state"));
    bool running = state && strcmp(state, "running") == 0;
    json_t *shown = json_incref(reply);
    if (running && st->live_any) {
        json_decref(shown);
        shown = json_copy(reply);
        struct buf text = BUF_INIT;
        if (st->missed)
            buf_printf(&text, "[%llu bytes of output before this not shown]\n", st->missed);
        buf_append(&text, st->live.data ? st->live.data : "", st->live.len);
        json_object_set_new(shown, "observation",
                            json_pack("{s:s,s:s%}", "observation", "output so far, still running",
                                      "content", text.data ? text.data : "", text.len));
        buf_free(&text);
    }
    struct action_detail d;
    if (!shown || action_detail_build(shown, &d) < 0) {
        json_decref(shown);
        snprintf(st->error, sizeof(st->error), "action %lld: out of memory", st->id);
        return;
    }
    json_decref(shown);
    if (textview_text_set(&st->text, d.text, d.len) < 0) {
        action_detail_free(&d);
        snprintf(st->error, sizeof(st->error), "action %lld: out of memory", st->id);
        return;
    }
    action_detail_free(&st->d);
    st->d = d;
    st->error[0] = '\0';
    if (!st->loaded && running)
        st->tv.follow = true; /* its output comes at the end */
    st->loaded = true;
    /* the position stays (a refetch); the rows are cut again */
    textview_changed(&st->tv);
    if (st->ui->win_body) { /* the border's position hint is drawn before the body */
        st->tv.height = getmaxy(st->ui->win_body);
        st->tv.width = getmaxx(st->ui->win_body) - 2;
    }
}

/* A piece of what it printed, at offset in its output. */
static void page_act_take_output(struct page_act *st, unsigned long long offset, const char *text,
                                 size_t len)
{
    size_t skip;
    uint64_t missed;
    size_t n = live_output_place(&st->lo, offset, len, &skip, &missed);
    st->missed += missed;
    st->live_any = true;
    if (n && buf_append(&st->live, text + skip, n) < 0)
        st->missed += n;
    if (st->live.len > PAGE_ACT_LIVE_MAX) {
        size_t cut = st->live.len - PAGE_ACT_LIVE_MAX;
        while (cut < st->live.len && ((unsigned char)st->live.data[cut] & 0xC0) == 0x80)
            cut++;
        buf_consume(&st->live, cut);
        st->missed += cut;
    }
}

static void page_act_output_fetched(int status, json_t *reply, const char *err, void *ud)
{
    struct page_act *st = (struct page_act *)((char *)ud - offsetof(struct page_act, tok_out));
    (void)err;
    json_t *text = json_object_get(reply, "text");
    if (status != 200 || !json_is_true(json_object_get(reply, "running")) || !json_is_string(text))
        return;
    page_act_take_output(st,
                         (unsigned long long)json_integer_value(json_object_get(reply, "offset")),
                         json_string_value(text), json_string_length(text));
    if (st->reply) {
        page_act_rebuild(st);
        st->ui->dirty |= UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
    }
}

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
    bool first = !st->reply;
    json_decref(st->reply);
    st->reply = json_incref(reply);
    const char *state = json_string_value(json_object_get(reply, "state"));
    if (first && state && strcmp(state, "running") == 0) {
        char path[64];
        snprintf(path, sizeof(path), "/v1/actions/%lld/output", st->id);
        ui_request(st->ui, "GET", path, NULL, page_act_output_fetched, &st->tok_out);
    }
    page_act_rebuild(st);
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
    ui_cancel(ui, &st->tok_out);
    json_decref(st->reply);
    buf_free(&st->live);
    action_detail_free(&st->d);
    textview_text_free(&st->text);
    textview_free(&st->tv);
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
    textview_init(&st->tv, &page_act_source, st, ui->utf8 ? 0 : SANITIZE_ASCII);
    st->tv.words = true;
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
    if (st && strcmp(type, "action_output") == 0 &&
        json_integer_value(json_object_get(data, "action")) == st->id) {
        json_t *text = json_object_get(data, "text");
        if (!json_is_string(text))
            return 0;
        page_act_take_output(
            st, (unsigned long long)json_integer_value(json_object_get(data, "offset")),
            json_string_value(text), json_string_length(text));
        if (!st->reply)
            return 0;
        page_act_rebuild(st);
        return UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
    }
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
    textview_draw(ui, &st->tv, w, 0, 1, h, width);
}

static const char *page_act_hint(const struct ui *ui)
{
    struct page_act *st = page_act_find(ui);
    if (!st)
        return NULL;
    size_t first, last, total;
    if (st->loaded)
        textview_position(&st->tv, &first, &last, &total);
    if (!st->loaded || total == 0)
        snprintf(st->hint, sizeof(st->hint), "Esc back");
    else
        snprintf(st->hint, sizeof(st->hint), "#%lld  %zu-%zu of %zu  Esc back", st->id, first, last,
                 total);
    return st->hint;
}

/* The end is the observation's (an action still running keeps it in view). */
static const struct ui_key page_act_keys[] = {
    {.key = 'G',
     .name = "G",
     .help = "go to the end (of the observation)",
     .fn = textview_key_end,
     .hint = "g/G ends"},
    {.key = KEY_END, .name = "End", .help = "go to the end", .fn = textview_key_end},
    {0},
};

/* Scrolling and search: the text keys (textview_keys), once the text is there. */
static struct textview *page_act_text(const struct ui *ui)
{
    struct page_act *st = page_act_find(ui);
    return st && st->loaded ? &st->tv : NULL;
}

const struct ui_page page_action = {
    .name = "Action",
    .keys = page_act_keys,
    .list = -1,
    .text = page_act_text,
    .open = page_act_open,
    .close = page_act_close,
    .draw = page_act_draw,
    .on_event = page_act_on_event,
    .hint = page_act_hint,
    .next_tick = page_act_next_tick,
    .on_tick = page_act_on_tick,
    .on_refresh = page_act_refresh,
};
