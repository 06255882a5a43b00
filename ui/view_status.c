/* Header (name, version, engine socket, counts, link state) and footer (key hints from the key
 * table, last error). */
#include "client/client.h"
#include "ui/ui_internal.h"

#include <stdio.h>
#include <string.h>

#ifndef PADDOCK_VERSION
#define PADDOCK_VERSION "dev"
#endif

void view_status_draw_header(struct ui *ui)
{
    WINDOW *w = ui->win_header;
    if (!w)
        return;
    int width = getmaxx(w);
    attr_t base = theme_attr(UI_C_HEADER);
    werase(w);
    draw_fill(w, 0, 0, width, base);

    size_t waiting = model_count_approvals(&ui->model, NULL);
    bool any = ui_any_engine_up(ui), several = ui->nengines > 1;
    char link[96];
    if (any && waiting)
        snprintf(link, sizeof(link), " %zu action%s wait%s for approval: press 2 %s live ", waiting,
                 waiting == 1 ? "" : "s", waiting == 1 ? "s" : "",
                 draw_glyph(ui, "\xE2\x97\x8F", "*"));
    else if (any)
        snprintf(link, sizeof(link), " %s live ", draw_glyph(ui, "\xE2\x97\x8F", "*"));
    else
        snprintf(link, sizeof(link), " %s disconnected, retrying ", several ? "engines" : "engine");
    attr_t link_attr = theme_attr(any && !waiting ? UI_C_HEADER : UI_C_HEADER_ALERT);
    /* what the operator must act on gets the room before the socket's path */
    int lw = draw_text_width(ui, link);
    if (lw > width * 2 / 3)
        lw = width * 2 / 3;

    char left[1024];
    const struct model *m = &ui->model;
    const char *sep = draw_glyph(ui, " \xE2\x94\x82 ", " | ");
    long long nact = model_count_actions(m);
    int room = width - lw - 1, x = 0;
    snprintf(left, sizeof(left), " paddock %s%s%s", PADDOCK_VERSION,
             ui->opt->read_only ? " [read-only]" : "", sep);
    x += draw_text(ui, w, 0, x, room - x, left, base | A_BOLD);
    if (!several) { /* one engine: where it is */
        x += draw_text(ui, w, 0, x, room - x, client_socket(ui->engines[0].client), base | A_BOLD);
    } else { /* several: each one's state, a down one in the alert colour */
        for (size_t i = 0; i < ui->nengines && x < room; i++) {
            const struct ui_engine *e = &ui->engines[i];
            snprintf(left, sizeof(left), "%s%s %s", i ? "  " : "", e->name,
                     e->connected ? "up" : "down");
            x += draw_text(ui, w, 0, x, room - x, left,
                           e->connected ? base | A_BOLD : theme_attr(UI_C_HEADER_ALERT));
        }
    }
    snprintf(left, sizeof(left), "%s%zu session%s (%zu ready)%s%lld action%s", sep, m->nsessions,
             m->nsessions == 1 ? "" : "s", model_count_sessions_in(m, "ready"), sep, nact,
             nact == 1 ? "" : "s");
    if (x < room)
        draw_text(ui, w, 0, x, room - x, left, base | A_BOLD);
    draw_text_right(ui, w, 0, width - lw, lw, link, link_attr);
    wnoutrefresh(w);
}

/* A hint is "KEYS label": the first word in the key colour. Returns the columns taken. */
static int view_status_draw_hint(struct ui *ui, WINDOW *w, int x, const char *hint)
{
    int x0 = x, width = getmaxx(w);
    char keys[32];
    const char *sp = strchr(hint, ' ');
    size_t kn = sp ? (size_t)(sp - hint) : strlen(hint);
    snprintf(keys, sizeof(keys), "%.*s", (int)kn, hint);
    x += draw_text(ui, w, 0, x, width - x, keys, theme_attr(UI_C_FOOTER_KEY));
    x += draw_text(ui, w, 0, x, width - x, sp ? sp : "", theme_attr(UI_C_FOOTER));
    return x - x0 + 2;
}

void view_status_draw_footer(struct ui *ui)
{
    WINDOW *w = ui->win_footer;
    if (!w)
        return;
    int width = getmaxx(w);
    werase(w);
    draw_fill(w, 0, 0, width, theme_attr(UI_C_FOOTER));
    int x = 1;
    /* a newly selected action cannot be decided yet: that says why y or n does nothing */
    bool guard = ui->guard_until > ui_now_ms();
    const char *status = guard ? "wait: a new item is selected" : ui->status;
    bool error = guard || ui->status_error;
    /* the last message keeps up to two thirds of the row: hints give way to it */
    int sw = status[0] ? draw_text_width(ui, status) + 2 : 0;
    if (sw > width * 2 / 3)
        sw = width * 2 / 3;
    const struct ui_key *tables[8];
    const char *titles[8];
    size_t nt = keys_tables(ui, tables, titles, 8);
    /* ? and q (the kept hints) end the row whatever else gives way, unless a page takes every
     * key (they then type into it) */
    bool typing = keys_page_takes_all(ui);
    int kept = 0;
    for (size_t t = 0; t < nt && !typing; t++)
        for (const struct ui_key *k = tables[t]; k->fn; k++)
            if (k->hint && k->kept && keys_applies(ui, tables, t, k))
                kept += draw_text_width(ui, k->hint) + 2;
    if (sw > width - 2 - kept)
        sw = width - 2 - kept > 0 ? width - 2 - kept : 0;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t t = 0; t < nt; t++) {
            for (const struct ui_key *k = tables[t]; k->fn; k++) {
                if (!k->hint || (k->mutates && ui->opt->read_only) || k->kept != (pass == 1) ||
                    (k->kept && typing) || !keys_applies(ui, tables, t, k))
                    continue;
                int need = draw_text_width(ui, k->hint) + 2;
                if (x + need > width - 1 - sw - (pass == 0 ? kept : 0)) {
                    t = nt; /* the footer is full */
                    break;
                }
                x += view_status_draw_hint(ui, w, x, k->hint);
            }
        }
    }
    if (status[0] && width - x > 8)
        draw_text_right(ui, w, 0, x, width - x - 1, status,
                        theme_attr(error ? UI_C_FOOTER_ERROR : UI_C_FOOTER));
    wnoutrefresh(w);
}
