/* The operator's rules in a window over the frame (R anywhere): every rule in force, engine-wide
 * (the config file's and the API's) and per session, with what it allows or denies. e edits a
 * pattern, d removes a rule (after a yes), a adds an engine-wide allow rule; the config file's
 * rules change only in the file (the engine says so). The queue's `a` saves a session's rule
 * through rules_save_session. */
#include "client/client.h"
#include "ui/history_query.h"
#include "ui/ui_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rules_window {
    json_t *rules; /* GET /v1/rules's "rules", or NULL while it is fetched */
    char ceiling[16];
    size_t sel;
    char err[256];
};

static const struct ui_modal rules_modal;

static struct ui *rules_ui(void *ud)
{
    return (struct ui *)((char *)ud - offsetof(struct ui, tok_rules));
}

static struct rules_window *rules_state(struct ui *ui)
{
    return ui->modal == &rules_modal ? ui->modal_state : NULL;
}

static void rules_fetched(int status, json_t *reply, const char *err, void *ud)
{
    struct ui *ui = rules_ui(ud);
    struct rules_window *w = rules_state(ui);
    if (!w)
        return;
    if (status != 200) {
        snprintf(w->err, sizeof(w->err), "%s",
                 status < 0 ? (err ? err : "the engine did not answer")
                            : client_error_message(reply, "the engine refused"));
    } else {
        json_decref(w->rules);
        w->rules = json_incref(json_object_get(reply, "rules"));
        snprintf(w->ceiling, sizeof(w->ceiling), "%s",
                 json_string_value(json_object_get(reply, "ceiling")) ?: "?");
        size_t n = json_array_size(w->rules);
        if (w->sel >= n)
            w->sel = n ? n - 1 : 0;
        w->err[0] = '\0';
    }
    ui->dirty |= UI_DIRTY_ALL;
}

/* A change's answer: the footer says it, and the window (when open) fetches again. */
static void rules_changed(int status, json_t *reply, const char *err, void *ud)
{
    struct ui *ui = (struct ui *)((char *)ud - offsetof(struct ui, tok_rule_op));
    if (status < 0) {
        ui_set_error(ui, "%s", err ? err : "the engine did not answer");
    } else if (status >= 300) {
        ui_set_error(ui, "%s", client_error_message(reply, "the engine refused"));
    } else {
        json_t *r = json_object_get(reply, "removed");
        bool removed = r != NULL;
        if (!r)
            r = reply;
        json_t *rules = json_object_get(reply, "rules");
        if (json_is_array(rules)) /* a session's rules: the newest is the one added */
            r = json_array_get(rules, json_array_size(rules) - 1);
        ui_set_status(
            ui, "rule %lld %s: %s %s", (long long)json_integer_value(json_object_get(r, "id")),
            removed ? "removed" : "saved", json_string_value(json_object_get(r, "decision")) ?: "?",
            json_string_value(json_object_get(r, "pattern")) ?: "?");
    }
    if (rules_state(ui))
        ui_request(ui, "GET", "/v1/rules", NULL, rules_fetched, &ui->tok_rules);
    ui->dirty |= UI_DIRTY_ALL;
}

static json_t *rules_by(void)
{
    const char *user = getenv("USER");
    char by[128];
    snprintf(by, sizeof(by), "%s (dashboard)", user && *user ? user : "operator");
    return json_string(by);
}

void rules_save_session(struct ui *ui, const char *session_id, const char *kind,
                        const char *pattern)
{
    json_t *body =
        json_pack("{s:s,s:s,s:o}", "pattern", pattern, "decision", "allow", "by", rules_by());
    if (kind && *kind)
        json_object_set_new(body, "kind", json_string(kind));
    char path[160];
    snprintf(path, sizeof(path), "/v1/sessions/%s/rules", session_id);
    ui_request(ui, "POST", path, body, rules_changed, &ui->tok_rule_op);
    json_decref(body);
    ui_set_status(ui, "saving the rule ...");
}

static json_t *rules_selected(struct rules_window *w)
{
    return json_array_get(w->rules, w->sel);
}

/* The rule a prompt or question is about (one at a time: the modal holds the keyboard). */
static long long rules_target;

static unsigned rules_edit_done(struct ui *ui, const char *text, void *ud)
{
    (void)ud;
    unsigned dirty = rules_window_open(ui);
    if (!text) {
        ui_set_status(ui, "rule %lld not changed", rules_target);
        return dirty;
    }
    if (!*text) {
        ui_set_error(ui, "an empty pattern matches nothing: rule %lld not changed (d removes)",
                     rules_target);
        return dirty;
    }
    json_t *body = json_pack("{s:s,s:o}", "pattern", text, "by", rules_by());
    char path[64];
    snprintf(path, sizeof(path), "/v1/rules/%lld", rules_target);
    ui_request(ui, "PATCH", path, body, rules_changed, &ui->tok_rule_op);
    json_decref(body);
    return dirty;
}

static unsigned rules_remove_yes(struct ui *ui, void *ud)
{
    (void)ud;
    char path[200];
    snprintf(path, sizeof(path), "/v1/rules/%lld", rules_target);
    json_t *by = rules_by();
    history_query_add(path, sizeof(path), "by", json_string_value(by));
    json_decref(by);
    ui_request(ui, "DELETE", path, NULL, rules_changed, &ui->tok_rule_op);
    return rules_window_open(ui);
}

static unsigned rules_add_done(struct ui *ui, const char *text, void *ud)
{
    (void)ud;
    unsigned dirty = rules_window_open(ui);
    if (!text || !*text) {
        ui_set_status(ui, "no rule added");
        return dirty;
    }
    json_t *body =
        json_pack("{s:s,s:s,s:o}", "pattern", text, "decision", "allow", "by", rules_by());
    ui_request(ui, "POST", "/v1/rules", body, rules_changed, &ui->tok_rule_op);
    json_decref(body);
    return dirty;
}

static unsigned rules_on_key(struct ui *ui, int key, bool code)
{
    struct rules_window *w = ui->modal_state;
    size_t n = json_array_size(w->rules);
    json_t *r = rules_selected(w);
    bool mutate = !code && (key == 'e' || key == 'd' || key == 'a');
    if (code && key == KEY_DC)
        mutate = true;
    if (mutate && ui->opt->read_only) {
        ui_set_status(ui, "read-only: rules are not changed");
        return UI_DIRTY_FOOTER;
    }
    if ((code && key == KEY_UP) || (!code && key == 'k')) {
        if (w->sel > 0)
            w->sel--;
        return UI_DIRTY_ALL;
    }
    if ((code && key == KEY_DOWN) || (!code && key == 'j')) {
        if (w->sel + 1 < n)
            w->sel++;
        return UI_DIRTY_ALL;
    }
    if (!code && key == 'a') {
        prompt_open(ui, "allow engine-wide (Esc cancels): ", NULL, rules_add_done, NULL);
        return UI_DIRTY_ALL;
    }
    if (r &&
        ((!code && (key == 'e' || key == '\n' || key == '\r')) || (code && key == KEY_ENTER))) {
        rules_target = (long long)json_integer_value(json_object_get(r, "id"));
        char label[96];
        snprintf(label, sizeof(label), "rule %lld pattern (Esc keeps it): ", rules_target);
        prompt_open(ui, label, json_string_value(json_object_get(r, "pattern")), rules_edit_done,
                    NULL);
        return UI_DIRTY_ALL;
    }
    if (r && ((!code && key == 'd') || (code && key == KEY_DC))) {
        rules_target = (long long)json_integer_value(json_object_get(r, "id"));
        char q[600];
        snprintf(q, sizeof(q), "Remove rule %lld (%s %s)?", rules_target,
                 json_string_value(json_object_get(r, "decision")) ?: "?",
                 json_string_value(json_object_get(r, "pattern")) ?: "?");
        confirm_open(ui, q, rules_remove_yes, NULL);
        return UI_DIRTY_ALL;
    }
    if (!code && (key == 27 || key == 'q' || key == 'R')) {
        ui_modal_close(ui);
        return UI_DIRTY_ALL;
    }
    return 0;
}

static void rules_draw(struct ui *ui)
{
    struct rules_window *st = ui->modal_state;
    size_t n = json_array_size(st->rules);
    int w = COLS - 4 > 110 ? 110 : COLS - 4;
    int h = (int)n + 6;
    if (h < 8)
        h = 8;
    if (h > LINES - 2)
        h = LINES - 2;
    if (w < 30 || h < 6)
        return;
    if (ui->win_modal) {
        int ch, cw;
        getmaxyx(ui->win_modal, ch, cw);
        if (ch != h || cw != w) {
            delwin(ui->win_modal);
            ui->win_modal = NULL;
        }
    }
    if (!ui->win_modal)
        ui->win_modal = newwin(h, w, (LINES - h) / 2, (COLS - w) / 2);
    WINDOW *win = ui->win_modal;
    if (!win)
        return;
    attr_t base = theme_attr(UI_C_HELP);
    wbkgdset(win, ' ' | base);
    werase(win);
    wattrset(win, theme_attr(UI_C_BORDER_FOCUS));
    box(win, 0, 0);
    wattrset(win, A_NORMAL);
    char title[96];
    snprintf(title, sizeof(title), " Rules (%zu) %s none approves above %s ", n,
             draw_glyph(ui, "\xC2\xB7", "-"), st->ceiling[0] ? st->ceiling : "?");
    draw_text(ui, win, 0, 2, w - 4, title, theme_attr(UI_C_TITLE) | A_BOLD);
    char head[128];
    snprintf(head, sizeof(head), "%-5s %-5s %-12s %-6s %s", "ID", "RULE", "SCOPE", "KIND",
             "PATTERN");
    draw_text(ui, win, 1, 2, w - 4, head, theme_attr(UI_C_COLUMNS));
    int rows = h - 4;
    size_t first = st->sel >= (size_t)rows ? st->sel - (size_t)rows + 1 : 0;
    if (st->err[0])
        draw_text(ui, win, 2, 2, w - 4, st->err, theme_attr(UI_C_BAD));
    else if (!st->rules)
        draw_text(ui, win, 2, 2, w - 4, "fetching ...", base);
    else if (!n)
        draw_text(ui, win, 2, 2, w - 4, "no rules: every action is decided by its policy", base);
    for (size_t i = first; !st->err[0] && i < n && (int)(i - first) < rows; i++) {
        json_t *r = json_array_get(st->rules, i);
        const char *sid = json_string_value(json_object_get(r, "session_id"));
        const char *origin = json_string_value(json_object_get(r, "origin"));
        const char *kind = json_string_value(json_object_get(r, "kind"));
        char line[4400];
        snprintf(line, sizeof(line), "%-5lld %-5s %-12.12s %-6.6s %s",
                 (long long)json_integer_value(json_object_get(r, "id")),
                 json_string_value(json_object_get(r, "decision")) ?: "?",
                 sid ? sid : (origin && strcmp(origin, "config") == 0 ? "config file" : "engine"),
                 kind ? kind : "any", json_string_value(json_object_get(r, "pattern")) ?: "");
        attr_t a = i == st->sel ? theme_attr(UI_C_SELECTED) : base;
        draw_fill(win, 2 + (int)(i - first), 1, w - 2, a);
        draw_text(ui, win, 2 + (int)(i - first), 2, w - 4, line, a);
    }
    draw_text(ui, win, h - 1, 2, w - 4,
              " j/k move  e edit  d remove  a add (engine-wide)  Esc close ",
              theme_attr(UI_C_HELP_KEY));
    wnoutrefresh(win);
}

static void rules_close(struct ui *ui)
{
    struct rules_window *w = ui->modal_state;
    ui_cancel(ui, &ui->tok_rules);
    if (w)
        json_decref(w->rules);
    free(w);
}

static const struct ui_modal rules_modal = {
    .on_key = rules_on_key,
    .draw = rules_draw,
    .close = rules_close,
};

unsigned rules_window_open(struct ui *ui)
{
    struct rules_window *w = calloc(1, sizeof(*w));
    if (!w) {
        ui_set_error(ui, "out of memory");
        return UI_DIRTY_FOOTER;
    }
    ui_modal_open(ui, &rules_modal, w);
    ui_request(ui, "GET", "/v1/rules", NULL, rules_fetched, &ui->tok_rules);
    return UI_DIRTY_ALL;
}
