/* The Changes tab: what the sandbox added (A), changed (C) and deleted (D), from
 * GET /v1/sessions/{id}/changes (ui/changeset.c parses it), sorted by path with the count of
 * each kind on the first row. Fetched on open, on `r`, and again shortly after an action of
 * the session finishes (a burst of them costs one fetch). `/` narrows the list; a git
 * repository's internals (.git/...) are hidden until `.` shows them; Enter shows the action
 * that last wrote the path. The filter and `.` outlive a visit to that action (and any other
 * page) as long as the session is the same. Paths are the sandbox's bytes: draw_text
 * sanitizes. */
#include "client/client.h"
#include "ui/changeset.h"
#include "ui/ui_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TAB_CHG_REFETCH_MS 150 /* one fetch per burst of finished actions */
#define TAB_CHG_NOTES 2        /* rows of the engine's notes shown under the counts */

struct tab_chg {
    struct ui *ui;
    char *sid;
    struct changeset set;
    bool loaded, loading;
    char error[300];
    int64_t refetch_at; /* ms; 0 = none due */
    char *filter;       /* `/`: only paths containing it (NULL: all) */
    bool show_git;      /* `.`: .git internals listed too */
    size_t *rows;       /* row → entry index (the filter and .git applied) */
    size_t nrows;
    size_t git_hidden; /* entries in .git not listed */
    char tok;          /* the fetch's token (its address) */
};

static struct tab_chg *tab_chg_find(const struct ui *ui)
{
    for (size_t i = 0; i < sizeof(ui->slots) / sizeof(ui->slots[0]); i++)
        if (ui->slots[i].page == &tab_changes)
            return ui->slots[i].state;
    return NULL;
}

/* ---- the list ---- */

enum { CC_KIND, CC_PATH, CC_WHERE, CC_ACTION };

static const struct list_column tab_chg_columns[] = {
    [CC_KIND] = {.title = "", .width = 1, .prio = 100},
    [CC_PATH] = {.title = "PATH", .width = 20, .prio = 90, .flex = true},
    [CC_WHERE] = {.title = "WHERE", .width = 9, .prio = 40},
    [CC_ACTION] = {.title = "ACTION", .width = 6, .prio = 60, .right = true},
};

static void tab_chg_refilter(struct tab_chg *st)
{
    free(st->rows);
    st->rows = NULL;
    st->nrows = st->git_hidden = 0;
    st->rows = malloc((st->set.n + 1) * sizeof(*st->rows));
    for (size_t i = 0; st->rows && i < st->set.n; i++) {
        if (!st->show_git && changeset_in_git(&st->set.v[i]))
            st->git_hidden++;
        else if (changeset_matches(&st->set.v[i], st->filter))
            st->rows[st->nrows++] = i;
    }
}

static size_t tab_chg_count(const struct ui *ui)
{
    const struct tab_chg *st = tab_chg_find(ui);
    if (!st || !st->loaded)
        return 0;
    return st->rows ? st->nrows : 0;
}

static const struct changeset_entry *tab_chg_entry(const struct ui *ui, size_t row)
{
    const struct tab_chg *st = tab_chg_find(ui);
    if (!st || row >= tab_chg_count(ui))
        return NULL;
    return &st->set.v[st->rows[row]];
}

static void tab_chg_title(const struct ui *ui, char *buf, size_t sz)
{
    (void)ui;
    snprintf(buf, sz, "Changes");
}

static const enum ui_color tab_chg_colors[CHANGESET_NKINDS] = {
    [CHANGESET_ADDED] = UI_C_OK,
    [CHANGESET_CHANGED] = UI_C_WARN,
    [CHANGESET_DELETED] = UI_C_BAD,
};

static void tab_chg_cell(const struct ui *ui, size_t row, int column, char *buf, size_t sz,
                         enum ui_color *color)
{
    const struct changeset_entry *e = tab_chg_entry(ui, row);
    if (!e)
        return;
    switch (column) {
    case CC_KIND:
        snprintf(buf, sz, "%c", changeset_marker(e->kind));
        *color = tab_chg_colors[e->kind];
        break;
    case CC_PATH:
        snprintf(buf, sz, "%s", e->path);
        *color = e->kind == CHANGESET_DELETED ? UI_C_DIM : UI_C_NORMAL;
        break;
    case CC_WHERE:
        snprintf(buf, sz, "%s", e->workspace ? "workspace" : "container");
        *color = UI_C_DIM;
        break;
    case CC_ACTION:
        if (e->action_id > 0)
            snprintf(buf, sz, "#%lld", e->action_id);
        *color = UI_C_INFO;
        break;
    default:
        break;
    }
}

static const char *tab_chg_empty(const struct ui *ui)
{
    const struct tab_chg *st = tab_chg_find(ui);
    if (!st || !st->sid)
        return "no session selected";
    if (st->error[0])
        return st->error;
    if (!st->loaded)
        return "loading…";
    if (st->filter && st->set.n)
        return "no path matches the filter";
    if (st->git_hidden)
        return "only .git internals changed (. shows them)";
    return "no files added, changed or deleted";
}

static unsigned tab_chg_select(struct ui *ui, size_t row)
{
    (void)ui;
    (void)row;
    return UI_DIRTY_DETAIL;
}

static void tab_chg_sync(struct ui *ui)
{
    list_clamp(ui, UI_LIST_CHANGES);
}

const struct ui_view view_changes = {
    .name = "changes",
    .columns = tab_chg_columns,
    .ncolumns = sizeof(tab_chg_columns) / sizeof(tab_chg_columns[0]),
    .count = tab_chg_count,
    .title = tab_chg_title,
    .cell = tab_chg_cell,
    .empty = tab_chg_empty,
    .on_select = tab_chg_select,
    .sync = tab_chg_sync,
    .dirty = UI_DIRTY_DETAIL,
};

/* ---- fetching ---- */

static void tab_chg_take(struct tab_chg *st, int status, json_t *reply, const char *err)
{
    st->loading = false;
    st->ui->dirty |= UI_DIRTY_DETAIL;
    const char *why = NULL;
    if (status != 200 || changeset_parse(reply, &st->set, &why) < 0) {
        snprintf(st->error, sizeof(st->error), "%s",
                 status < 0      ? (err ? err : "no answer")
                 : status != 200 ? client_error_message(reply, "refused")
                                 : why);
        return;
    }
    st->error[0] = '\0';
    st->loaded = true;
    tab_chg_refilter(st);
    tab_chg_sync(st->ui);
}

static void tab_chg_fetched(int status, json_t *reply, const char *err, void *ud)
{
    tab_chg_take((struct tab_chg *)((char *)ud - offsetof(struct tab_chg, tok)), status, reply,
                 err);
}

void tab_changes_take(struct ui *ui, int status, json_t *reply, const char *err)
{
    struct tab_chg *st = tab_chg_find(ui);
    if (st) {
        ui_cancel(ui, &st->tok);
        tab_chg_take(st, status, reply, err);
    }
}

static void tab_chg_fetch(struct ui *ui, struct tab_chg *st)
{
    st->refetch_at = 0;
    ui_cancel(ui, &st->tok);
    char path[160];
    snprintf(path, sizeof(path), "/v1/sessions/%s/changes", st->sid);
    st->loading = ui_request(ui, "GET", path, NULL, tab_chg_fetched, &st->tok) == 0;
}

/* Hidden: the list goes; the session, the filter and `.` stay for the next opening. */
static void tab_chg_close(struct ui *ui)
{
    struct tab_chg *st = tab_chg_find(ui);
    if (!st)
        return;
    ui_cancel(ui, &st->tok);
    changeset_free(&st->set);
    free(st->rows);
    st->rows = NULL;
    st->nrows = st->git_hidden = 0;
    st->loaded = st->loading = false;
    st->error[0] = '\0';
    st->refetch_at = 0;
}

static void tab_chg_end(struct ui *ui)
{
    void **slot = ui_page_slot(ui, &tab_changes);
    struct tab_chg *st = slot ? *slot : NULL;
    if (!st)
        return;
    tab_chg_close(ui);
    free(st->sid);
    free(st->filter);
    free(st);
    *slot = NULL;
}

static unsigned tab_chg_open(struct ui *ui)
{
    void **slot = ui_page_slot(ui, &tab_changes);
    if (!slot)
        return 0;
    struct tab_chg *st = *slot;
    if (st && !(st->sid && ui->sel_session && strcmp(st->sid, ui->sel_session) == 0)) {
        tab_chg_end(ui); /* another session: its filter is not this one's */
        st = NULL;
    }
    if (!st) {
        if (!(st = calloc(1, sizeof(*st)))) {
            ui_set_error(ui, "Changes: out of memory");
            return UI_DIRTY_FOOTER;
        }
        *slot = st;
        st->ui = ui;
        if (ui->sel_session && model_id_valid(ui->sel_session))
            st->sid = strdup(ui->sel_session);
    }
    tab_chg_close(ui);
    if (st->sid)
        tab_chg_fetch(ui, st);
    return UI_DIRTY_DETAIL;
}

/* An action of the session that finished may have changed files: fetch again, once a burst.
 * A session event (stopped, deleted: the list is then the kept one) does the same. */
static unsigned tab_chg_on_event(struct ui *ui, const char *type, json_t *data)
{
    struct tab_chg *st = tab_chg_find(ui);
    if (!st || !st->sid)
        return 0;
    const char *sid = NULL;
    if (strcmp(type, "action") == 0) {
        static const char *const running[] = {"received", "pending", "running"};
        const char *state = json_string_value(json_object_get(data, "state"));
        for (size_t i = 0; state && i < sizeof(running) / sizeof(running[0]); i++)
            if (strcmp(state, running[i]) == 0)
                return 0;
        sid = json_string_value(json_object_get(data, "session_id"));
    } else if (strcmp(type, "session") == 0) {
        sid = json_string_value(json_object_get(data, "id"));
    }
    if (!sid || strcmp(sid, st->sid) != 0)
        return 0;
    if (!st->refetch_at)
        st->refetch_at = ui_now_ms() + TAB_CHG_REFETCH_MS;
    return 0;
}

static int64_t tab_chg_next_tick(const struct ui *ui)
{
    const struct tab_chg *st = tab_chg_find(ui);
    return st ? st->refetch_at : 0;
}

static unsigned tab_chg_on_tick(struct ui *ui)
{
    struct tab_chg *st = tab_chg_find(ui);
    if (st && st->refetch_at && st->sid)
        tab_chg_fetch(ui, st);
    return 0;
}

/* ---- drawing: the counts, the engine's notes, then the list ---- */

static void tab_chg_draw(struct ui *ui, WINDOW *w, bool focused)
{
    struct tab_chg *st = tab_chg_find(ui);
    int h = getmaxy(w), width = getmaxx(w);
    if (!st || !st->sid) {
        draw_text(ui, w, 0, 1, width - 2, "no session selected", theme_attr(UI_C_DIM));
        return;
    }
    int y = 0;
    if (st->loaded) {
        int x = 1;
        for (int k = 0; k < CHANGESET_NKINDS; k++) {
            char part[48];
            snprintf(part, sizeof(part), "%c %zu %s", changeset_marker((enum changeset_kind)k),
                     st->set.count[k],
                     k == CHANGESET_ADDED     ? "added"
                     : k == CHANGESET_CHANGED ? "changed"
                                              : "deleted");
            x += draw_text(ui, w, y, x, width - x, part, theme_attr(tab_chg_colors[k])) + 2;
        }
        char more[200], when[16] = "";
        time_t t = (time_t)st->set.at;
        struct tm tm;
        if (st->set.at > 0 && localtime_r(&t, &tm))
            strftime(when, sizeof(when), "%H:%M:%S", &tm);
        char git[48] = "";
        if (st->git_hidden)
            snprintf(git, sizeof(git), ", %zu in .git hidden", st->git_hidden);
        snprintf(more, sizeof(more), "%s%s%s%s%s%s",
                 st->set.stored ? "kept when the container went" : "compared at ",
                 st->set.stored ? "" : when, st->set.truncated ? ", the engine cut the list" : "",
                 git, st->filter ? ", /" : "", st->filter ? st->filter : "");
        if (x < width - 4)
            draw_text(ui, w, y, x, width - x - 1, more, theme_attr(UI_C_DIM));
        y++;
        size_t i;
        json_t *note;
        json_array_foreach(st->set.notes, i, note)
        {
            if (i >= TAB_CHG_NOTES || y >= h - 2)
                break;
            if (json_is_string(note))
                draw_text(ui, w, y++, 1, width - 2, json_string_value(note), theme_attr(UI_C_DIM));
        }
    }
    if (h - y < 2)
        return;
    WINDOW *lw = derwin(w, h - y, width, y, 0);
    if (lw) {
        list_draw(ui, UI_LIST_CHANGES, lw, focused, false);
        delwin(lw);
    }
}

static const char *tab_chg_hint(const struct ui *ui)
{
    const struct tab_chg *st = tab_chg_find(ui);
    return st && st->loading ? "loading…" : "r refresh";
}

/* ---- keys ---- */

static unsigned tab_chg_filter_set(struct ui *ui, const char *text)
{
    struct tab_chg *st = tab_chg_find(ui);
    if (!st)
        return 0;
    free(st->filter);
    st->filter = text && *text ? strdup(text) : NULL;
    tab_chg_refilter(st);
    ui->list[UI_LIST_CHANGES].sel = ui->list[UI_LIST_CHANGES].top = 0;
    tab_chg_sync(ui);
    return UI_DIRTY_DETAIL;
}

static unsigned tab_chg_filter_done(struct ui *ui, const char *text, void *ud)
{
    (void)ud;
    return tab_chg_filter_set(ui, text) | UI_DIRTY_FOOTER; /* Esc (NULL): no filter */
}

static unsigned tab_chg_filter_changed(struct ui *ui, const char *text, void *ud)
{
    (void)ud;
    return tab_chg_filter_set(ui, text);
}

static unsigned tab_chg_key_filter(struct ui *ui)
{
    const struct tab_chg *st = tab_chg_find(ui);
    prompt_open_live(ui, "/", st ? st->filter : NULL, tab_chg_filter_done, tab_chg_filter_changed,
                     NULL);
    return UI_DIRTY_FOOTER;
}

/* Esc: clear the filter first, as in the sessions list; without one, back as everywhere. */
static unsigned tab_chg_key_escape(struct ui *ui)
{
    const struct tab_chg *st = tab_chg_find(ui);
    if (!st || !st->filter)
        return keys_back(ui);
    ui_set_status(ui, "no filter");
    return tab_chg_filter_set(ui, NULL) | UI_DIRTY_FOOTER;
}

static unsigned tab_chg_key_git(struct ui *ui)
{
    struct tab_chg *st = tab_chg_find(ui);
    if (!st)
        return 0;
    st->show_git = !st->show_git;
    tab_chg_refilter(st);
    tab_chg_sync(ui);
    ui_set_status(ui, st->show_git ? ".git internals shown (. hides them)"
                                   : ".git internals hidden (. shows them)");
    return UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
}

static unsigned tab_chg_key_action(struct ui *ui)
{
    const struct changeset_entry *e = tab_chg_entry(ui, ui->list[UI_LIST_CHANGES].sel);
    if (!e)
        return 0;
    if (e->action_id <= 0) {
        ui_set_status(ui, "no write, edit or upload action recorded for this path (a command "
                          "changed it)");
        return UI_DIRTY_FOOTER;
    }
    return page_action_show(ui, e->action_id);
}

static const struct ui_key tab_chg_keys[] = {
    {.key = '\n',
     .name = "Enter",
     .help = "show the action that last wrote the path (its diff)",
     .fn = tab_chg_key_action,
     .hint = "Enter action"},
    {.key = KEY_ENTER,
     .name = "Enter",
     .help = "show the action that last wrote the path",
     .fn = tab_chg_key_action},
    {.key = '/',
     .name = "/",
     .help = "filter the paths (Esc at the prompt clears)",
     .fn = tab_chg_key_filter,
     .hint = "/ filter"},
    {.key = '.',
     .name = ".",
     .help = "show or hide a git repository's internals (.git/...)",
     .fn = tab_chg_key_git,
     .hint = ". .git"},
    {.key = 27,
     .name = "Esc",
     .help = "clear the filter (without one: back to the sessions)",
     .fn = tab_chg_key_escape},
    {0},
};

const struct ui_page tab_changes = {
    .name = "Changes",
    .short_name = "Chg",
    .keys = tab_chg_keys,
    .list = UI_LIST_CHANGES,
    .open = tab_chg_open,
    .close = tab_chg_close,
    .end = tab_chg_end,
    .draw = tab_chg_draw,
    .on_event = tab_chg_on_event,
    .hint = tab_chg_hint,
    .next_tick = tab_chg_next_tick,
    .on_tick = tab_chg_on_tick,
};
