/* The Egress tab (and its shortcut E): the selected "network": "egress" session's connections
 * through the engine's proxy (GET /v1/sessions/{id}/egress, docs/egress.md): the totals per
 * destination, then the newest connections with their decision, the rule or person behind it, bytes
 * and end. Fetched on open and again shortly after an "egress" event of the session (a burst costs
 * one fetch), so it is live while connections come and go. Hosts and reasons come from the
 * sandbox's requests: draw_text sanitizes. */
#include "client/client.h"
#include "common/timeconv.h"
#include "ui/samples.h"
#include "ui/ui_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TAB_EG_REFETCH_MS 300

struct tab_eg {
    struct ui *ui;
    char *sid;
    json_t *reply; /* the last answer, NULL before it */
    char error[300];
    int64_t refetch_at;
    char tok; /* the fetch's token (its address) */
};

static struct tab_eg *tab_eg_find(const struct ui *ui)
{
    for (size_t i = 0; i < sizeof(ui->slots) / sizeof(ui->slots[0]); i++)
        if (ui->slots[i].page == &tab_egress)
            return ui->slots[i].state;
    return NULL;
}

static void tab_eg_fetched(int status, json_t *reply, const char *err, void *ud)
{
    struct tab_eg *st = (struct tab_eg *)((char *)ud - offsetof(struct tab_eg, tok));
    if (status != 200) {
        snprintf(st->error, sizeof(st->error), "%s",
                 err ? err : client_error_message(reply, "the engine did not answer"));
    } else {
        st->error[0] = '\0';
        json_decref(st->reply);
        st->reply = json_incref(reply);
    }
    st->ui->dirty |= UI_DIRTY_DETAIL;
}

static void tab_eg_fetch(struct ui *ui, struct tab_eg *st)
{
    st->refetch_at = 0;
    ui_cancel(ui, &st->tok);
    char path[160];
    snprintf(path, sizeof(path), "/v1/sessions/%s/egress?limit=200", st->sid);
    ui_request(ui, "GET", path, NULL, tab_eg_fetched, &st->tok);
}

static void tab_eg_close(struct ui *ui)
{
    void **slot = ui_page_slot(ui, &tab_egress);
    struct tab_eg *st = slot ? *slot : NULL;
    if (!st)
        return;
    ui_cancel(ui, &st->tok);
    json_decref(st->reply);
    free(st->sid);
    free(st);
    *slot = NULL;
}

static unsigned tab_eg_open(struct ui *ui)
{
    tab_eg_close(ui);
    void **slot = ui_page_slot(ui, &tab_egress);
    struct tab_eg *st = slot ? calloc(1, sizeof(*st)) : NULL;
    if (!st) {
        ui_set_error(ui, "Egress: out of memory");
        return UI_DIRTY_FOOTER;
    }
    *slot = st;
    st->ui = ui;
    if (ui->sel_session && model_id_valid(ui->sel_session)) {
        st->sid = strdup(ui->sel_session);
        if (st->sid)
            tab_eg_fetch(ui, st);
    }
    return UI_DIRTY_DETAIL;
}

static unsigned tab_eg_on_event(struct ui *ui, const char *type, json_t *data)
{
    struct tab_eg *st = tab_eg_find(ui);
    if (!st || !st->sid || strcmp(type, "egress") != 0)
        return 0;
    const char *sid = json_string_value(json_object_get(data, "session"));
    if (sid && strcmp(sid, st->sid) == 0 && !st->refetch_at)
        st->refetch_at = ui_now_ms() + TAB_EG_REFETCH_MS;
    return 0;
}

static int64_t tab_eg_next_tick(const struct ui *ui)
{
    const struct tab_eg *st = tab_eg_find(ui);
    return st ? st->refetch_at : 0;
}

static unsigned tab_eg_on_tick(struct ui *ui)
{
    struct tab_eg *st = tab_eg_find(ui);
    if (st && st->refetch_at && st->sid && ui_now_ms() >= st->refetch_at)
        tab_eg_fetch(ui, st);
    return 0;
}

static enum ui_color tab_eg_color(const char *decision)
{
    if (!decision)
        return UI_C_DIM;
    if (strcmp(decision, "allowed") == 0 || strcmp(decision, "approved") == 0)
        return UI_C_OK;
    if (strcmp(decision, "pending") == 0)
        return UI_C_WARN;
    return UI_C_BAD;
}

static void tab_eg_draw(struct ui *ui, WINDOW *w, bool focused)
{
    (void)focused;
    struct tab_eg *st = tab_eg_find(ui);
    int h = getmaxy(w), width = getmaxx(w), y = 0;
    if (!st || !st->sid) {
        draw_text(ui, w, 0, 1, width - 2, "no session selected", theme_attr(UI_C_DIM));
        return;
    }
    if (st->error[0])
        draw_text(ui, w, y++, 1, width - 2, st->error, theme_attr(UI_C_BAD));
    if (!st->reply) {
        draw_text(ui, w, y, 1, width - 2, "loading…", theme_attr(UI_C_DIM));
        return;
    }
    json_t *conns = json_object_get(st->reply, "connections");
    json_t *hosts = json_object_get(st->reply, "hosts");
    if (!json_array_size(conns)) {
        draw_text(ui, w, y, 1, width - 2,
                  "no connection yet (only sessions with \"network\": \"egress\" have any)",
                  theme_attr(UI_C_DIM));
        return;
    }
    char line[512], up[32], down[32];
    snprintf(line, sizeof(line),
             "%zu connections, %lld open; per destination:", json_array_size(conns),
             (long long)json_integer_value(json_object_get(st->reply, "open")));
    draw_text(ui, w, y++, 1, width - 2, line, theme_attr(UI_C_TITLE));
    snprintf(line, sizeof(line), "%-36s %6s %7s %10s %10s", "HOST", "CONNS", "ALLOWED", "UP",
             "DOWN");
    draw_text(ui, w, y++, 1, width - 2, line, theme_attr(UI_C_COLUMNS));
    size_t i;
    json_t *x;
    json_array_foreach(hosts, i, x)
    {
        if (y >= h / 2)
            break;
        char dest[300];
        snprintf(dest, sizeof(dest), "%s:%lld", json_string_value(json_object_get(x, "host")),
                 (long long)json_integer_value(json_object_get(x, "port")));
        samples_format_bytes((double)json_integer_value(json_object_get(x, "bytes_up")), up,
                             sizeof(up));
        samples_format_bytes((double)json_integer_value(json_object_get(x, "bytes_down")), down,
                             sizeof(down));
        long long n = json_integer_value(json_object_get(x, "connections")),
                  ok = json_integer_value(json_object_get(x, "allowed"));
        snprintf(line, sizeof(line), "%-36.36s %6lld %7lld %10s %10s", dest, n, ok, up, down);
        draw_text(ui, w, y++, 1, width - 2, line,
                  theme_attr(ok == n ? UI_C_NORMAL
                             : ok    ? UI_C_WARN
                                     : UI_C_BAD));
    }
    y++;
    snprintf(line, sizeof(line), "%-8s %-7s %-30s %-9s %s", "TIME", "METHOD", "DESTINATION",
             "DECISION", "RULE / BY · BYTES · END");
    if (y < h)
        draw_text(ui, w, y++, 1, width - 2, line, theme_attr(UI_C_COLUMNS));
    json_array_foreach(conns, i, x)
    {
        if (y >= h)
            break;
        char when[16] = "", dest[300];
        struct tm tm;
        if (timeconv_to_local(json_number_value(json_object_get(x, "started_at")), &tm) == 0)
            strftime(when, sizeof(when), "%H:%M:%S", &tm);
        snprintf(dest, sizeof(dest), "%s:%lld", json_string_value(json_object_get(x, "host")),
                 (long long)json_integer_value(json_object_get(x, "port")));
        const char *decision = json_string_value(json_object_get(x, "decision"));
        const char *rule = json_string_value(json_object_get(x, "rule"));
        const char *by = json_string_value(json_object_get(x, "decided_by"));
        const char *end = json_string_value(json_object_get(x, "end_reason"));
        samples_format_bytes((double)json_integer_value(json_object_get(x, "bytes_up")), up,
                             sizeof(up));
        samples_format_bytes((double)json_integer_value(json_object_get(x, "bytes_down")), down,
                             sizeof(down));
        snprintf(line, sizeof(line), "%-8s %-7s %-30.30s %-9s %s%s%s · ↑%s ↓%s · %s", when,
                 json_string_value(json_object_get(x, "method")), dest, decision ? decision : "-",
                 rule ? rule : "", rule && by ? " / " : "", by ? by : "", up, down,
                 end ? end : "open");
        draw_text(ui, w, y++, 1, width - 2, line, theme_attr(tab_eg_color(decision)));
    }
}

const struct ui_page tab_egress = {
    .name = "Egress",
    .short_name = "Egr",
    .list = -1,
    .open = tab_eg_open,
    .close = tab_eg_close,
    .draw = tab_eg_draw,
    .on_event = tab_eg_on_event,
    .next_tick = tab_eg_next_tick,
    .on_tick = tab_eg_on_tick,
};

unsigned tab_egress_show(struct ui *ui)
{
    if (!ui->sel_session) {
        ui_set_error(ui, "Egress: select a session first");
        return UI_DIRTY_FOOTER;
    }
    for (size_t t = 0; t < ui_ntabs; t++)
        if (ui_tabs[t] == &tab_egress)
            return ui_show_tab(ui, t);
    return 0;
}
