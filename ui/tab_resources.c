/* The Resources tab: the selected session's CPU, memory, pids, network and block I/O over
 * time. On open it fetches the stored samples (GET /v1/sessions/{id}/stats), then adds the
 * live `stats` events. The top line is the newest sample as `docker stats` prints it; the
 * graphs (ui/graph.c) cover a time window (+/-) in braille, blocks or ASCII (b). */
#include "client/client.h"
#include "ui/graph.h"
#include "ui/ui_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* This tab (ui.c's table lists it; no other file names it). */
extern const struct ui_page tab_resources;

#define TAB_RES_FETCH 3600 /* an hour of per-second samples */
#define TAB_RES_KEEP 4096  /* the history kept while the tab is open */
#define TAB_RES_AXIS 8     /* columns right of a graph for its scale */

struct tab_res {
    struct ui *ui; /* for the fetch's callback: a reply redraws the pane */
    char *sid;
    struct samples hist;
    bool loading;
    char error[256];
    char tok; /* the fetch's token (its address) */
};

/* Time windows (+ zooms in, - out); the graph style. Kept while the dashboard runs, across
 * sessions and tab changes. */
static const double tab_res_windows[] = {30, 60, 120, 300, 900, 1800, 3600};
#define TAB_RES_NWINDOWS (sizeof(tab_res_windows) / sizeof(tab_res_windows[0]))
static size_t tab_res_window = 2; /* 2 minutes */
static enum graph_mode tab_res_mode = GRAPH_BRAILLE;

static const char *const tab_res_mode_names[] = {
    [GRAPH_BRAILLE] = "braille",
    [GRAPH_BLOCK] = "blocks",
    [GRAPH_ASCII] = "ASCII",
};

static struct tab_res *tab_res_state(struct ui *ui)
{
    void **slot = ui_page_slot(ui, &tab_resources);
    return slot ? *slot : NULL;
}

static enum graph_mode tab_res_mode_now(const struct ui *ui)
{
    return ui->utf8 ? tab_res_mode : GRAPH_ASCII; /* no UTF-8: no braille or blocks */
}

static void tab_res_fetched(int status, json_t *reply, const char *err, void *ud)
{
    struct tab_res *st = (struct tab_res *)((char *)ud - offsetof(struct tab_res, tok));
    st->loading = false;
    st->ui->dirty |= UI_DIRTY_DETAIL;
    json_t *arr = json_object_get(reply, "samples");
    if (status != 200 || !json_is_array(arr)) {
        snprintf(st->error, sizeof(st->error), "fetching samples: %s",
                 status < 0 ? (err ? err : "no answer")
                            : client_error_message(reply, "the reply has no samples"));
        return;
    }
    /* Live samples that came before the reply are newer than it: put them back after. */
    size_t nlive = st->hist.n;
    struct sample *live = nlive ? malloc(nlive * sizeof(*live)) : NULL;
    for (size_t i = 0; live && i < nlive; i++)
        live[i] = *samples_get(&st->hist, i);
    samples_clear(&st->hist);
    size_t i;
    json_t *j;
    json_array_foreach(arr, i, j)
    {
        struct sample x;
        if (sample_parse(j, &x))
            samples_push(&st->hist, &x);
    }
    for (size_t k = 0; live && k < nlive; k++)
        samples_push(&st->hist, &live[k]);
    free(live);
}

static unsigned tab_res_open(struct ui *ui)
{
    void **slot = ui_page_slot(ui, &tab_resources);
    if (!slot)
        return 0;
    struct tab_res *st = calloc(1, sizeof(*st));
    if (!st || samples_init(&st->hist, TAB_RES_KEEP) < 0) {
        free(st);
        ui_set_error(ui, "Resources: out of memory");
        return UI_DIRTY_FOOTER;
    }
    *slot = st;
    st->ui = ui;
    if (!ui->sel_session || !model_id_valid(ui->sel_session))
        return UI_DIRTY_DETAIL;
    st->sid = strdup(ui->sel_session);
    char path[160];
    snprintf(path, sizeof(path), "/v1/sessions/%s/stats?limit=%d", ui->sel_session, TAB_RES_FETCH);
    st->loading = ui_request(ui, "GET", path, NULL, tab_res_fetched, &st->tok) == 0;
    return UI_DIRTY_DETAIL;
}

static void tab_res_close(struct ui *ui)
{
    void **slot = ui_page_slot(ui, &tab_resources);
    struct tab_res *st = slot ? *slot : NULL;
    if (!st)
        return;
    ui_cancel(ui, &st->tok);
    samples_free(&st->hist);
    free(st->sid);
    free(st);
    *slot = NULL;
}

static unsigned tab_res_on_event(struct ui *ui, const char *type, json_t *data)
{
    struct tab_res *st = tab_res_state(ui);
    if (!st || !st->sid || strcmp(type, "stats") != 0)
        return 0;
    const char *sid = json_string_value(json_object_get(data, "session"));
    struct sample x;
    if (!sid || strcmp(sid, st->sid) != 0 || !sample_parse(data, &x))
        return 0;
    return samples_push(&st->hist, &x) ? UI_DIRTY_DETAIL : 0;
}

/* ---- drawing ---- */

/* How a graph's numbers read. */
struct tab_res_graph {
    enum sample_field field;
    const char *title;
    enum ui_color color;
    void (*format)(double v, char *buf, size_t sz);
    double (*scale)(double max);
};

static void tab_res_format_count(double v, char *buf, size_t sz)
{
    if (isnan(v))
        snprintf(buf, sz, "-");
    else
        snprintf(buf, sz, "%.0f", v);
}

static double tab_res_scale_cpu(double max)
{
    return graph_nice_max(&max, 1, 100); /* at least one CPU */
}

static double tab_res_scale_count(double max)
{
    return graph_nice_max(&max, 1, 10);
}

static double tab_res_scale_rate(double max)
{
    return graph_nice_max(&max, 1, 1000);
}

static const struct tab_res_graph tab_res_graphs[SAMPLE_FIELD_COUNT] = {
    [SAMPLE_CPU] = {SAMPLE_CPU, "CPU", UI_C_INFO, samples_format_percent, tab_res_scale_cpu},
    [SAMPLE_MEM] = {SAMPLE_MEM, "MEM", UI_C_OK, samples_format_bytes, samples_nice_bytes},
    [SAMPLE_PIDS] = {SAMPLE_PIDS, "PIDS", UI_C_NORMAL, tab_res_format_count, tab_res_scale_count},
    [SAMPLE_NET_RX] = {SAMPLE_NET_RX, "NET rx", UI_C_INFO, samples_format_rate, tab_res_scale_rate},
    [SAMPLE_NET_TX] = {SAMPLE_NET_TX, "NET tx", UI_C_INFO, samples_format_rate, tab_res_scale_rate},
    [SAMPLE_BLK_READ] = {SAMPLE_BLK_READ, "BLOCK read", UI_C_WARN, samples_format_rate,
                         tab_res_scale_rate},
    [SAMPLE_BLK_WRITE] = {SAMPLE_BLK_WRITE, "BLOCK write", UI_C_WARN, samples_format_rate,
                          tab_res_scale_rate},
};

/* The rows of the tab: one or two graphs side by side. */
static const enum sample_field tab_res_rows[][2] = {
    {SAMPLE_CPU, SAMPLE_FIELD_COUNT},    {SAMPLE_MEM, SAMPLE_FIELD_COUNT},
    {SAMPLE_PIDS, SAMPLE_FIELD_COUNT},   {SAMPLE_NET_RX, SAMPLE_NET_TX},
    {SAMPLE_BLK_READ, SAMPLE_BLK_WRITE},
};
#define TAB_RES_NROWS (sizeof(tab_res_rows) / sizeof(tab_res_rows[0]))

/* A limit from the session's options (options.limits.KEY), or NAN. */
static double tab_res_limit(const struct ui *ui, const char *key)
{
    const struct model_session *s = ui_session(ui);
    json_t *v =
        s ? json_object_get(json_object_get(json_object_get(s->raw, "options"), "limits"), key)
          : NULL;
    return json_is_number(v) && json_number_value(v) > 0 ? json_number_value(v) : NAN;
}

/* One graph: its title line at y, then `height` rows of graph with the scale on the right. */
static void tab_res_draw_graph(struct ui *ui, WINDOW *w, const struct tab_res *st, int y, int x,
                               int width, int height, const struct tab_res_graph *g)
{
    const struct sample *last = samples_last(&st->hist);
    const struct sample *prev = st->hist.n > 1 ? samples_get(&st->hist, st->hist.n - 2) : NULL;
    enum graph_mode mode = tab_res_mode_now(ui);
    int gw = width - TAB_RES_AXIS;
    if (gw < 4 || height < 1)
        return;
    size_t nslots = (size_t)gw * (mode == GRAPH_BRAILLE ? 2 : 1);
    double *v = malloc(nslots * sizeof(*v));
    if (!v)
        return;
    double max = 0;
    samples_series(&st->hist, g->field, last->at, tab_res_windows[tab_res_window], nslots, v, &max);
    double scale = g->scale(max);

    char now[32], top[32], title[160], extra[64] = "";
    g->format(sample_value(last, prev, g->field), now, sizeof(now));
    g->format(max, top, sizeof(top));
    if (g->field == SAMPLE_MEM && last->mem_limit > 0) {
        char lim[32];
        samples_format_bytes(last->mem_limit, lim, sizeof(lim));
        snprintf(extra, sizeof(extra), "  limit %s", lim);
    } else if (g->field == SAMPLE_PIDS && !isnan(tab_res_limit(ui, "pids"))) {
        snprintf(extra, sizeof(extra), "  limit %.0f", tab_res_limit(ui, "pids"));
    } else if (g->field == SAMPLE_CPU && !isnan(tab_res_limit(ui, "cpus"))) {
        snprintf(extra, sizeof(extra), "  limit %g CPUs", tab_res_limit(ui, "cpus"));
    }
    snprintf(title, sizeof(title), "%s %s  max %s%s", g->title, now, top, extra);
    draw_text(ui, w, y, x, width, title, theme_attr(g->color) | A_BOLD);

    draw_graph(ui, w, y + 1, x, gw, height, v, nslots, scale, mode, theme_attr(g->color));
    char label[32];
    if (g->field == SAMPLE_CPU)
        snprintf(label, sizeof(label), "%.0f%%", scale); /* the axis: short */
    else
        g->format(scale, label, sizeof(label));
    draw_text(ui, w, y + 1, x + gw + 1, TAB_RES_AXIS - 1, label, theme_attr(UI_C_DIM));
    if (height > 1)
        draw_text(ui, w, y + height, x + gw + 1, TAB_RES_AXIS - 1, "0", theme_attr(UI_C_DIM));
    free(v);
}

/* The newest sample as docker stats prints it: CPU %, MEM USAGE / LIMIT, MEM %, NET I/O,
 * BLOCK I/O, PIDS. */
static void tab_res_draw_now(struct ui *ui, WINDOW *w, const struct sample *s, int width)
{
    char cpu[32], mem[32], lim[32], pct[32], rx[32], tx[32], br[32], bw[32], pids[32], line[400];
    samples_format_percent(s->cpu, cpu, sizeof(cpu));
    samples_format_bytes(s->mem, mem, sizeof(mem));
    samples_format_bytes(s->mem_limit, lim, sizeof(lim));
    samples_format_percent(s->mem_limit > 0 ? s->mem / s->mem_limit * 100 : NAN, pct, sizeof(pct));
    samples_format_decimal(s->net_rx, rx, sizeof(rx));
    samples_format_decimal(s->net_tx, tx, sizeof(tx));
    samples_format_decimal(s->blk_read, br, sizeof(br));
    samples_format_decimal(s->blk_write, bw, sizeof(bw));
    tab_res_format_count(s->pids, pids, sizeof(pids));
    snprintf(line, sizeof(line),
             "CPU %s  MEM %s / %s (%s)  NET I/O %s / %s  BLOCK I/O %s / %s  PIDS %s", cpu, mem, lim,
             pct, rx, tx, br, bw, pids);
    draw_text(ui, w, 0, 1, width - 2, line, theme_attr(UI_C_TITLE));
}

static void tab_res_draw(struct ui *ui, WINDOW *w, bool focused)
{
    (void)focused;
    struct tab_res *st = tab_res_state(ui);
    const struct model_session *s = ui_session(ui);
    int h = getmaxy(w), width = getmaxx(w);
    if (!st || !s) {
        draw_text(ui, w, 0, 1, width - 2, "no session selected", theme_attr(UI_C_DIM));
        return;
    }
    const struct sample *last = samples_last(&st->hist);
    if (!last) {
        char msg[400];
        if (st->loading)
            snprintf(msg, sizeof(msg), "loading samples%s", draw_glyph(ui, "\xE2\x80\xA6", "..."));
        else if (st->error[0])
            snprintf(msg, sizeof(msg), "%s", st->error);
        else
            snprintf(msg, sizeof(msg),
                     "no samples yet: the engine samples the container once a second while it "
                     "runs (session %s)",
                     s->state ? s->state : "?");
        draw_text(ui, w, 0, 1, width - 2, msg, theme_attr(st->error[0] ? UI_C_BAD : UI_C_DIM));
        return;
    }
    tab_res_draw_now(ui, w, last, width);

    char win[16], when[16] = "", info[256];
    samples_format_window(tab_res_windows[tab_res_window], win, sizeof(win));
    time_t t = (time_t)last->at;
    struct tm tm;
    if (localtime_r(&t, &tm))
        strftime(when, sizeof(when), "%H:%M:%S", &tm);
    const char *dot = draw_glyph(ui, "\xC2\xB7", "-");
    snprintf(info, sizeof(info),
             "last %s %s %s %s CPU in %% of one CPU (100%% = one busy core, as docker stats) %s %s",
             win, dot, tab_res_mode_names[tab_res_mode_now(ui)], dot, dot, when);
    draw_text(ui, w, 1, 1, width - 2, info, theme_attr(UI_C_DIM));

    /* What is left is shared by the rows: a title line and at least one graph line each. */
    int avail = h - 3, nrows = (int)TAB_RES_NROWS;
    if (avail < nrows * 2)
        nrows = avail / 2;
    if (nrows <= 0)
        return;
    int per = avail / nrows, spare = avail % nrows, y = 3, inner = width - 2;
    for (int r = 0; r < nrows; r++) {
        int rows = per + (r < spare ? 1 : 0); /* the first rows take what does not divide */
        const enum sample_field *row = tab_res_rows[r];
        bool pair = row[1] != SAMPLE_FIELD_COUNT;
        int cw = pair ? (inner - 2) / 2 : inner;
        tab_res_draw_graph(ui, w, st, y, 1, cw, rows - 1, &tab_res_graphs[row[0]]);
        if (pair)
            tab_res_draw_graph(ui, w, st, y, 1 + cw + 2, inner - cw - 2, rows - 1,
                               &tab_res_graphs[row[1]]);
        y += rows;
    }
}

/* ---- keys ---- */

static unsigned tab_res_style(struct ui *ui)
{
    if (!ui->utf8) {
        ui_set_status(ui, "graphs are ASCII: the terminal is not UTF-8");
        return UI_DIRTY_FOOTER;
    }
    tab_res_mode = tab_res_mode == GRAPH_BRAILLE ? GRAPH_BLOCK
                   : tab_res_mode == GRAPH_BLOCK ? GRAPH_ASCII
                                                 : GRAPH_BRAILLE;
    ui_set_status(ui, "graphs: %s", tab_res_mode_names[tab_res_mode]);
    return UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
}

static unsigned tab_res_zoom(struct ui *ui, int step)
{
    if ((step < 0 && tab_res_window == 0) || (step > 0 && tab_res_window + 1 >= TAB_RES_NWINDOWS))
        return 0;
    tab_res_window = (size_t)((int)tab_res_window + step);
    char win[16];
    samples_format_window(tab_res_windows[tab_res_window], win, sizeof(win));
    ui_set_status(ui, "window: the last %s", win);
    return UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
}

static unsigned tab_res_zoom_in(struct ui *ui)
{
    return tab_res_zoom(ui, -1);
}

static unsigned tab_res_zoom_out(struct ui *ui)
{
    return tab_res_zoom(ui, 1);
}

static const struct ui_key tab_res_keys[] = {
    {.key = 'b',
     .name = "b",
     .help = "graph style: braille, blocks, ASCII",
     .fn = tab_res_style,
     .hint = "b style"},
    {.key = '+',
     .name = "+",
     .help = "shorter time window (zoom in)",
     .fn = tab_res_zoom_in,
     .hint = "+/- window"},
    {.key = '=', .name = "=", .help = "shorter time window (zoom in)", .fn = tab_res_zoom_in},
    {.key = '-', .name = "-", .help = "longer time window (zoom out)", .fn = tab_res_zoom_out},
    {0},
};

const struct ui_page tab_resources = {
    .name = "Resources",
    .short_name = "Res",
    .keys = tab_res_keys,
    .list = -1,
    .open = tab_res_open,
    .close = tab_res_close,
    .draw = tab_res_draw,
    .on_event = tab_res_on_event,
};
