/* The Files tab: the session's workspace as a tree, read as the operator (GET
 * /v1/sessions/{id}/files and .../files/content: engine/browse.h records each read as the
 * operator's, never as the agent's). A directory is listed when it is opened (Enter, l or
 * Right; h or Left folds), at most TAB_FILES_LIMIT entries, and a row says how many more there
 * are. The Changes tab's marks (A added, C changed, D deleted) stand before the names; a deleted
 * file is shown in its directory, dim. Enter on a file opens it read-only in the text viewer
 * (ui/textview.c: line numbers, / n N search); a binary file is described, never dumped; Esc
 * goes back to the tree. Names and contents are the sandbox's bytes: draw_text and the
 * viewer sanitize them. */
#include "client/client.h"
#include "common/base64.h"
#include "common/sanitize.h"
#include "ui/changeset.h"
#include "ui/history_query.h"
#include "ui/textview.h"
#include "ui/ui_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAB_FILES_LIMIT 500
#define TAB_FILES_ROOT "/workspace"
#define TAB_FILES_URL 8192

enum tab_files_row { TF_DIR, TF_FILE, TF_OTHER, TF_DELETED, TF_MORE };

struct tab_files_node {
    char *name, *path; /* raw; path is absolute */
    enum tab_files_row kind;
    const char *type; /* the engine's type (static copy of a few names) */
    long long size;
    int depth;
    bool open, loading;
    int mark; /* enum changeset_kind, or -1 */
};

struct tab_files {
    struct ui *ui;
    char *sid;
    struct tab_files_node *v;
    size_t n, cap;
    char error[300];
    struct changeset changes;
    bool changes_loaded;
    /* the viewer */
    bool viewing, view_loading;
    bool view_lines; /* the file's own lines (numbered), not a description */
    int view_digits; /* of the last line's number */
    char *view_path;
    char view_head[400];
    struct textview_text text;
    struct textview tv;
    char tok_list, tok_file, tok_changes;
    /* The directory whose listing is being fetched (by path: rows move while it comes), or
     * the root; both clear once it is in. */
    char *pending_path;
    bool pending_root;
};

static struct tab_files *tab_files_find(const struct ui *ui)
{
    for (size_t i = 0; i < sizeof(ui->slots) / sizeof(ui->slots[0]); i++)
        if (ui->slots[i].page == &tab_files)
            return ui->slots[i].state;
    return NULL;
}

static void tab_files_node_free(struct tab_files_node *n)
{
    free(n->name);
    free(n->path);
}

/* The mark of path: its change's kind; a directory holding changes gets "changed". */
static int tab_files_mark(const struct tab_files *st, const char *path, bool dir)
{
    size_t len = strlen(path);
    for (size_t i = 0; i < st->changes.n; i++) {
        const char *p = st->changes.v[i].path;
        if (strcmp(p, path) == 0)
            return (int)st->changes.v[i].kind;
        if (dir && strncmp(p, path, len) == 0 && p[len] == '/')
            return CHANGESET_CHANGED;
    }
    return -1;
}

/* ---- the tree: a flat array in display order; a folded directory has no rows after it ---- */

static int tab_files_insert(struct tab_files *st, size_t at, const struct tab_files_node *add,
                            size_t n)
{
    if (n == 0) /* an empty directory: nothing to place (and st->v may still be NULL) */
        return 0;
    if (st->n + n > st->cap) {
        size_t cap = (st->n + n) * 2;
        struct tab_files_node *v = realloc(st->v, cap * sizeof(*v));
        if (!v)
            return -1;
        st->v = v;
        st->cap = cap;
    }
    memmove(st->v + at + n, st->v + at, (st->n - at) * sizeof(*st->v));
    memcpy(st->v + at, add, n * sizeof(*add));
    st->n += n;
    return 0;
}

/* Remove the rows under directory row i. */
static void tab_files_fold(struct tab_files *st, size_t i)
{
    size_t end = i + 1;
    while (end < st->n && st->v[end].depth > st->v[i].depth)
        tab_files_node_free(&st->v[end++]);
    memmove(st->v + i + 1, st->v + end, (st->n - end) * sizeof(*st->v));
    st->n -= end - i - 1;
    st->v[i].open = false;
}

static const char *const tab_files_types[] = {
    "directory", "file", "link", "fifo", "socket", "character device", "block device", "gone",
};

static const char *tab_files_type(const char *t)
{
    for (size_t i = 0; t && i < sizeof(tab_files_types) / sizeof(tab_files_types[0]); i++)
        if (strcmp(t, tab_files_types[i]) == 0)
            return tab_files_types[i];
    return "other";
}

static char *tab_files_join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (p)
        snprintf(p, a + b + 2, "%s%s%s", dir, a && dir[a - 1] == '/' ? "" : "/", name);
    return p;
}

/* A listing of row i's directory (i == (size_t)-1: the root) goes in under it. */
static void tab_files_take_list(struct tab_files *st, size_t i, json_t *reply)
{
    const char *dir = i == (size_t)-1 ? TAB_FILES_ROOT : st->v[i].path;
    int depth = i == (size_t)-1 ? 0 : st->v[i].depth + 1;
    json_t *entries = json_object_get(reply, "entries");
    size_t cap = json_array_size(entries) + st->changes.n + 1, n = 0;
    struct tab_files_node *add = calloc(cap, sizeof(*add));
    if (!add)
        return;
    size_t k;
    json_t *e;
    json_array_foreach(entries, k, e)
    {
        const char *name = json_string_value(json_object_get(e, "name"));
        if (!name)
            continue;
        struct tab_files_node *nd = &add[n];
        nd->type = tab_files_type(json_string_value(json_object_get(e, "type")));
        nd->kind = nd->type == tab_files_types[0]   ? TF_DIR
                   : nd->type == tab_files_types[1] ? TF_FILE
                                                    : TF_OTHER;
        nd->name = strdup(name);
        nd->path = tab_files_join(dir, name);
        nd->size = (long long)json_integer_value(json_object_get(e, "size"));
        nd->depth = depth;
        nd->mark = nd->path ? tab_files_mark(st, nd->path, nd->kind == TF_DIR) : -1;
        if (nd->name && nd->path)
            n++;
        else
            tab_files_node_free(nd);
    }
    /* Deleted files of this directory: in the change list, no longer on disk. */
    size_t dlen = strlen(dir);
    for (size_t c = 0; c < st->changes.n; c++) {
        const struct changeset_entry *ce = &st->changes.v[c];
        const char *p = ce->path;
        if (ce->kind != CHANGESET_DELETED || strncmp(p, dir, dlen) != 0 || p[dlen] != '/' ||
            strchr(p + dlen + 1, '/') || !p[dlen + 1])
            continue;
        struct tab_files_node *nd = &add[n];
        nd->name = strdup(p + dlen + 1);
        nd->path = strdup(p);
        nd->kind = TF_DELETED;
        nd->type = "deleted";
        nd->depth = depth;
        nd->mark = CHANGESET_DELETED;
        if (nd->name && nd->path)
            n++;
        else
            tab_files_node_free(nd);
    }
    long long omitted = (long long)json_integer_value(json_object_get(reply, "omitted"));
    if (omitted > 0) {
        char more[96];
        snprintf(more, sizeof(more), "… %lld more not shown (paddock files shows up to 5000)",
                 omitted);
        add[n] = (struct tab_files_node){
            .name = strdup(more), .path = strdup(dir), .kind = TF_MORE, .depth = depth, .mark = -1};
        if (add[n].name && add[n].path)
            n++;
        else
            tab_files_node_free(&add[n]);
    }
    size_t at = i == (size_t)-1 ? 0 : i + 1;
    if (tab_files_insert(st, at, add, n) < 0) {
        for (size_t j = 0; j < n; j++)
            tab_files_node_free(&add[j]);
        snprintf(st->error, sizeof(st->error), "Files: out of memory");
    } else if (i != (size_t)-1) {
        st->v[i].open = true;
    }
    free(add);
}

/* The folded directory row of path, or (size_t)-1. */
static size_t tab_files_row_of(const struct tab_files *st, const char *path)
{
    for (size_t i = 0; path && i < st->n; i++)
        if (st->v[i].kind == TF_DIR && !st->v[i].open && strcmp(st->v[i].path, path) == 0)
            return i;
    return (size_t)-1;
}

static void tab_files_unpend(struct tab_files *st)
{
    for (size_t i = 0; i < st->n; i++)
        st->v[i].loading = false;
    free(st->pending_path);
    st->pending_path = NULL;
    st->pending_root = false;
}

static void tab_files_listed(int status, json_t *reply, const char *err, void *ud)
{
    struct tab_files *st = (struct tab_files *)((char *)ud - offsetof(struct tab_files, tok_list));
    bool root = st->pending_root;
    size_t i = root ? (size_t)-1 : tab_files_row_of(st, st->pending_path);
    tab_files_unpend(st);
    st->ui->dirty |= UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
    if (status != 200 || !json_is_object(reply)) {
        const char *why =
            status < 0 ? (err ? err : "no answer") : client_error_message(reply, "refused");
        if (root)
            snprintf(st->error, sizeof(st->error), "%s", why);
        else
            ui_set_error(st->ui, "Files: %s", why);
        return;
    }
    if (root) {
        for (size_t j = 0; j < st->n; j++)
            tab_files_node_free(&st->v[j]);
        st->n = 0;
        st->error[0] = '\0';
    } else if (i == (size_t)-1) {
        return; /* the directory went from the tree (refolded above) meanwhile */
    }
    tab_files_take_list(st, i, reply);
    list_clamp(st->ui, UI_LIST_FILES);
}

void tab_files_take(struct ui *ui, int status, json_t *reply, const char *err)
{
    struct tab_files *st = tab_files_find(ui);
    if (!st)
        return;
    ui_cancel(ui, &st->tok_list);
    tab_files_unpend(st);
    st->pending_root = true;
    tab_files_listed(status, reply, err, &st->tok_list);
}

/* List row i's directory ((size_t)-1: the root); a listing still coming is dropped. */
static void tab_files_list(struct ui *ui, struct tab_files *st, size_t i)
{
    char url[TAB_FILES_URL];
    snprintf(url, sizeof(url), "/v1/sessions/%s/files", st->sid);
    if (!history_query_add(url, sizeof(url), "path", i == (size_t)-1 ? NULL : st->v[i].path)) {
        ui_set_error(ui, "Files: the path is too long to ask for");
        return;
    }
    history_query_add(url, sizeof(url), "limit", "500");
    ui_cancel(ui, &st->tok_list);
    tab_files_unpend(st);
    if (i == (size_t)-1) {
        st->pending_root = true;
    } else {
        st->pending_path = strdup(st->v[i].path);
        st->v[i].loading = true;
    }
    ui_request(ui, "GET", url, NULL, tab_files_listed, &st->tok_list);
}

static void tab_files_changes_fetched(int status, json_t *reply, const char *err, void *ud)
{
    struct tab_files *st =
        (struct tab_files *)((char *)ud - offsetof(struct tab_files, tok_changes));
    (void)err;
    const char *why = NULL;
    if (status == 200 && changeset_parse(reply, &st->changes, &why) == 0)
        st->changes_loaded = true;
    /* The tree after the marks: a directory's deleted files go in with its listing. */
    tab_files_list(st->ui, st, (size_t)-1);
}

/* ---- the list ---- */

enum { FC_MARK, FC_NAME, FC_SIZE };

static const struct list_column tab_files_columns[] = {
    [FC_MARK] = {.title = "", .width = 1, .prio = 100},
    [FC_NAME] = {.title = "NAME", .width = 20, .prio = 90, .flex = true},
    [FC_SIZE] = {.title = "SIZE", .width = 9, .prio = 50, .right = true},
};

static size_t tab_files_count(const struct ui *ui)
{
    const struct tab_files *st = tab_files_find(ui);
    return st ? st->n : 0;
}

static void tab_files_title(const struct ui *ui, char *buf, size_t sz)
{
    (void)ui;
    snprintf(buf, sz, "Files");
}

static const enum ui_color tab_files_colors[CHANGESET_NKINDS] = {
    [CHANGESET_ADDED] = UI_C_OK,
    [CHANGESET_CHANGED] = UI_C_WARN,
    [CHANGESET_DELETED] = UI_C_BAD,
};

static void tab_files_size(long long n, char *buf, size_t sz)
{
    static const char *const units[] = {"B", "K", "M", "G", "T"};
    double v = (double)n;
    size_t u = 0;
    while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, sz, "%lld", n);
    else
        snprintf(buf, sz, "%.1f%s", v, units[u]);
}

static void tab_files_cell(const struct ui *ui, size_t row, int column, char *buf, size_t sz,
                           enum ui_color *color)
{
    const struct tab_files *st = tab_files_find(ui);
    if (!st || row >= st->n)
        return;
    const struct tab_files_node *nd = &st->v[row];
    switch (column) {
    case FC_MARK:
        if (nd->mark >= 0) {
            snprintf(buf, sz, "%c", changeset_marker((enum changeset_kind)nd->mark));
            *color = tab_files_colors[nd->mark];
        }
        break;
    case FC_NAME: {
        const char *fold = nd->kind != TF_DIR ? "  "
                           : nd->loading      ? "… "
                           : nd->open         ? draw_glyph(ui, "▾ ", "- ")
                                              : draw_glyph(ui, "▸ ", "+ ");
        snprintf(buf, sz, "%*s%s%s%s", 2 * nd->depth, "", nd->kind == TF_MORE ? "" : fold, nd->name,
                 nd->kind == TF_DIR ? "/" : "");
        *color = nd->kind == TF_DIR                              ? UI_C_INFO
                 : nd->kind == TF_DELETED || nd->kind == TF_MORE ? UI_C_DIM
                 : nd->kind == TF_OTHER                          ? UI_C_WARN
                                                                 : UI_C_NORMAL;
        break;
    }
    case FC_SIZE:
        if (nd->kind == TF_FILE)
            tab_files_size(nd->size, buf, sz);
        else if (nd->kind == TF_OTHER)
            snprintf(buf, sz, "%s", nd->type);
        *color = UI_C_DIM;
        break;
    default:
        break;
    }
}

static const char *tab_files_empty(const struct ui *ui)
{
    const struct tab_files *st = tab_files_find(ui);
    if (!st || !st->sid)
        return "no session selected";
    if (st->error[0])
        return st->error;
    return st->pending_root ? "loading…" : "the workspace is empty";
}

static unsigned tab_files_select(struct ui *ui, size_t row)
{
    (void)ui;
    (void)row;
    return UI_DIRTY_DETAIL;
}

static void tab_files_sync(struct ui *ui)
{
    list_clamp(ui, UI_LIST_FILES);
}

const struct ui_view view_files = {
    .name = "files",
    .columns = tab_files_columns,
    .ncolumns = sizeof(tab_files_columns) / sizeof(tab_files_columns[0]),
    .count = tab_files_count,
    .title = tab_files_title,
    .cell = tab_files_cell,
    .empty = tab_files_empty,
    .on_select = tab_files_select,
    .sync = tab_files_sync,
    .dirty = UI_DIRTY_DETAIL,
};

/* ---- the viewer ---- */

static void tab_files_gutter(const void *ud, size_t i, char *buf, size_t size)
{
    const struct tab_files *st = ud;
    if (!st->view_lines)
        buf[0] = '\0';
    else
        snprintf(buf, size, "%*zu", st->view_digits, i + 1);
}

static size_t tab_files_text_count(const void *ud)
{
    return textview_text_source.count(&((const struct tab_files *)ud)->text);
}

static const char *tab_files_text_line(const void *ud, size_t i, size_t *len)
{
    return textview_text_source.line(&((const struct tab_files *)ud)->text, i, len);
}

static const struct textview_source tab_files_source = {
    .count = tab_files_text_count,
    .line = tab_files_text_line,
    .gutter = tab_files_gutter,
};

static void tab_files_show(struct tab_files *st, bool lines, const char *head, const char *text,
                           size_t len)
{
    st->view_lines = lines;
    snprintf(st->view_head, sizeof(st->view_head), "%s", head);
    if (textview_text_set(&st->text, text, len) < 0)
        snprintf(st->view_head, sizeof(st->view_head), "out of memory");
    textview_reset(&st->tv);
    size_t rest = st->text.nlines, digits = 1;
    while (rest >= 10) {
        rest /= 10;
        digits++;
    }
    st->view_digits = (int)digits;
    st->tv.gutter_cols = lines ? (int)digits + 1 : 0;
}

static void tab_files_read(int status, json_t *reply, const char *err, void *ud)
{
    struct tab_files *st = (struct tab_files *)((char *)ud - offsetof(struct tab_files, tok_file));
    st->view_loading = false;
    st->ui->dirty |= UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
    if (status != 200 || !json_is_object(reply)) {
        const char *why =
            status < 0 ? (err ? err : "no answer") : client_error_message(reply, "refused");
        char head[400];
        snprintf(head, sizeof(head), "bad: %s", why);
        tab_files_show(st, false, head, why, strlen(why));
        return;
    }
    const char *kind = json_string_value(json_object_get(reply, "kind"));
    long long size = (long long)json_integer_value(json_object_get(reply, "size"));
    const char *b64 = json_string_value(json_object_get(reply, "content_base64"));
    char head[400];
    if (!b64) {
        char desc[600];
        int n = snprintf(desc, sizeof(desc),
                         "binary file: %s, %lld bytes\n\nNot shown: it is not text. "
                         "`paddock cat --raw SESSION PATH > FILE` copies its bytes.",
                         kind ? kind : "unknown", size);
        snprintf(head, sizeof(head), "binary · %s · %lld bytes", kind ? kind : "?", size);
        tab_files_show(st, false, head, desc, (size_t)n);
        return;
    }
    struct buf data = BUF_INIT;
    if (base64_decode(&data, b64, strlen(b64)) < 0) {
        tab_files_show(st, false, "bad reply", "the engine's reply is not base64", 31);
        return;
    }
    snprintf(head, sizeof(head), "%s · %lld bytes%s", kind ? kind : "?", size,
             json_is_true(json_object_get(reply, "truncated")) ? " · only the first 4 MiB" : "");
    tab_files_show(st, true, head, data.data ? data.data : "", data.len);
    buf_free(&data);
}

static unsigned tab_files_view(struct ui *ui, struct tab_files *st, const char *path)
{
    char url[TAB_FILES_URL];
    snprintf(url, sizeof(url), "/v1/sessions/%s/files/content", st->sid);
    if (!history_query_add(url, sizeof(url), "path", path)) {
        ui_set_error(ui, "Files: the path is too long to ask for");
        return UI_DIRTY_FOOTER;
    }
    free(st->view_path);
    st->view_path = strdup(path);
    st->viewing = true;
    st->view_loading = true;
    tab_files_show(st, false, "loading", "", 0);
    ui_cancel(ui, &st->tok_file);
    ui_request(ui, "GET", url, NULL, tab_files_read, &st->tok_file);
    return UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
}

static struct textview *tab_files_text(const struct ui *ui)
{
    struct tab_files *st = tab_files_find(ui);
    return st && st->viewing ? &st->tv : NULL;
}

/* ---- open, close, draw ---- */

static void tab_files_close(struct ui *ui)
{
    void **slot = ui_page_slot(ui, &tab_files);
    struct tab_files *st = slot ? *slot : NULL;
    if (!st)
        return;
    ui_cancel(ui, &st->tok_list);
    ui_cancel(ui, &st->tok_file);
    ui_cancel(ui, &st->tok_changes);
    for (size_t i = 0; i < st->n; i++)
        tab_files_node_free(&st->v[i]);
    free(st->v);
    changeset_free(&st->changes);
    textview_text_free(&st->text);
    textview_free(&st->tv);
    free(st->view_path);
    free(st->pending_path);
    free(st->sid);
    free(st);
    *slot = NULL;
}

static void tab_files_fetch(struct ui *ui, struct tab_files *st)
{
    char url[160];
    snprintf(url, sizeof(url), "/v1/sessions/%s/changes", st->sid);
    ui_cancel(ui, &st->tok_changes);
    if (ui_request(ui, "GET", url, NULL, tab_files_changes_fetched, &st->tok_changes) < 0)
        tab_files_list(ui, st, (size_t)-1);
}

static unsigned tab_files_open(struct ui *ui)
{
    void **slot = ui_page_slot(ui, &tab_files);
    if (!slot)
        return 0;
    if (*slot)
        tab_files_close(ui);
    struct tab_files *st = calloc(1, sizeof(*st));
    if (!st) {
        ui_set_error(ui, "Files: out of memory");
        return UI_DIRTY_FOOTER;
    }
    *slot = st;
    st->ui = ui;
    st->pending_root = true; /* the changes come first, then the root's listing */
    textview_init(&st->tv, &tab_files_source, st, ui->utf8 ? 0 : SANITIZE_ASCII);
    if (ui->sel_session && model_id_valid(ui->sel_session)) {
        st->sid = strdup(ui->sel_session);
        if (st->sid)
            tab_files_fetch(ui, st);
    }
    ui->list[UI_LIST_FILES].sel = ui->list[UI_LIST_FILES].top = 0;
    return UI_DIRTY_DETAIL;
}

static void tab_files_draw(struct ui *ui, WINDOW *w, bool focused)
{
    struct tab_files *st = tab_files_find(ui);
    int h = getmaxy(w), width = getmaxx(w);
    if (!st || !st->sid) {
        draw_text(ui, w, 0, 1, width - 2, "no session selected", theme_attr(UI_C_DIM));
        return;
    }
    if (st->viewing) {
        int x = 1 + draw_text(ui, w, 0, 1, width - 2, st->view_path, theme_attr(UI_C_TITLE));
        if (x < width - 4)
            draw_text(ui, w, 0, x + 2, width - x - 3, st->view_loading ? "loading…" : st->view_head,
                      theme_attr(UI_C_DIM));
        if (h > 1)
            textview_draw(ui, &st->tv, w, 1, 1, h - 1, width - 2);
        return;
    }
    draw_text(ui, w, 0, 1, width - 2,
              st->changes_loaded ? TAB_FILES_ROOT "  (A added, C changed, D deleted: the Changes "
                                                  "tab's marks)"
                                 : TAB_FILES_ROOT,
              theme_attr(UI_C_DIM));
    if (h < 3)
        return;
    WINDOW *lw = derwin(w, h - 1, width, 1, 0);
    if (lw) {
        list_draw(ui, UI_LIST_FILES, lw, focused, false);
        delwin(lw);
    }
}

static const char *tab_files_hint(const struct ui *ui)
{
    const struct tab_files *st = tab_files_find(ui);
    if (st && st->viewing)
        return "Esc back to the tree";
    return "Enter opens · h folds";
}

/* ---- keys ---- */

static unsigned tab_files_key_open(struct ui *ui)
{
    struct tab_files *st = tab_files_find(ui);
    size_t sel = ui->list[UI_LIST_FILES].sel;
    if (!st || st->viewing || sel >= st->n)
        return 0;
    struct tab_files_node *nd = &st->v[sel];
    switch (nd->kind) {
    case TF_DIR:
        if (nd->open) {
            tab_files_fold(st, sel);
            return UI_DIRTY_DETAIL;
        }
        tab_files_list(ui, st, sel);
        return UI_DIRTY_DETAIL;
    case TF_FILE:
    case TF_OTHER:
        return tab_files_view(ui, st, nd->path);
    case TF_DELETED:
        ui_set_status(ui, "deleted in the sandbox: the Changes tab shows the action that did");
        return UI_DIRTY_FOOTER;
    case TF_MORE:
        ui_set_status(ui,
                      "the tab lists %d entries of a directory; `paddock files --limit "
                      "5000 SESSION PATH` lists more",
                      TAB_FILES_LIMIT);
        return UI_DIRTY_FOOTER;
    }
    return 0;
}

/* h / Left: fold the directory, or go to the one holding the row. */
static unsigned tab_files_key_fold(struct ui *ui)
{
    struct tab_files *st = tab_files_find(ui);
    size_t sel = ui->list[UI_LIST_FILES].sel;
    if (!st || st->viewing || sel >= st->n)
        return 0;
    if (st->v[sel].kind == TF_DIR && st->v[sel].open) {
        tab_files_fold(st, sel);
        return UI_DIRTY_DETAIL;
    }
    for (size_t i = sel; i-- > 0;)
        if (st->v[i].depth < st->v[sel].depth) {
            ui->list[UI_LIST_FILES].sel = i;
            list_clamp(ui, UI_LIST_FILES);
            return UI_DIRTY_DETAIL;
        }
    return 0;
}

/* l / Right: open a folded directory (not a file: Enter does that). */
static unsigned tab_files_key_unfold(struct ui *ui)
{
    struct tab_files *st = tab_files_find(ui);
    size_t sel = ui->list[UI_LIST_FILES].sel;
    if (!st || st->viewing || sel >= st->n || st->v[sel].kind != TF_DIR || st->v[sel].open)
        return 0;
    tab_files_list(ui, st, sel);
    return UI_DIRTY_DETAIL;
}

static unsigned tab_files_key_escape(struct ui *ui)
{
    struct tab_files *st = tab_files_find(ui);
    if (!st || !st->viewing)
        return keys_back(ui);
    ui_cancel(ui, &st->tok_file);
    st->viewing = false;
    st->view_loading = false;
    return UI_DIRTY_DETAIL | UI_DIRTY_FOOTER;
}

static const struct ui_key tab_files_keys[] = {
    {.key = '\n',
     .name = "Enter",
     .help = "open the directory (again: fold it) or view the file read-only",
     .fn = tab_files_key_open,
     .hint = "Enter open"},
    {.key = KEY_ENTER, .name = "Enter", .help = "open or view", .fn = tab_files_key_open},
    {.key = 'l', .name = "l", .help = "open the directory", .fn = tab_files_key_unfold},
    {.key = KEY_RIGHT, .name = "Right", .help = "open the directory", .fn = tab_files_key_unfold},
    {.key = 'h',
     .name = "h",
     .help = "fold the directory, or go to its parent",
     .fn = tab_files_key_fold,
     .hint = "h fold"},
    {.key = KEY_LEFT,
     .name = "Left",
     .help = "fold, or go to the parent",
     .fn = tab_files_key_fold},
    {.key = 27,
     .name = "Esc",
     .help = "close the file (in the tree: back to the sessions)",
     .fn = tab_files_key_escape},
    {0},
};

const struct ui_page tab_files = {
    .name = "Files",
    .short_name = "Fil",
    .keys = tab_files_keys,
    .list = UI_LIST_FILES,
    .text = tab_files_text,
    .open = tab_files_open,
    .close = tab_files_close,
    .draw = tab_files_draw,
    .hint = tab_files_hint,
};
