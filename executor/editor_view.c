/* The editor's `view`: a directory two levels deep, a file or a range of its lines.
 *
 * OHEditor lists a directory with `find -L <p> -maxdepth 2` minus the paths matching
 * "<p>/.*" or "<p>/<anything>/.*", piped to sort, and counts the hidden entries of <p> with
 * a second find. This file walks the same entries itself: symlinks followed, hidden entries
 * (and everything under a hidden first-level directory) left out, sorted bytewise (the
 * C.UTF-8 collation of OpenHands' image), and a directory find cannot read is reported the
 * way find's stderr reaches the agent: the whole result becomes
 * "ERROR:\nfind: ‘<dir>’: Permission denied". */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/utf8.h"
#include "editor.h"
#include "fileio.h"
#include "pytext.h"
#include "text.h"

struct listing {
    char **paths;
    size_t n, cap;
    struct buf errors; /* find's stderr */
    long hidden;       /* hidden entries directly in the directory */
};

static int listing_add(struct listing *l, const char *base, const char *name)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        char **p = realloc(l->paths, cap * sizeof *p);
        if (!p)
            return -1;
        l->paths = p;
        l->cap = cap;
    }
    struct buf path = BUF_INIT;
    /* find joins with "/" unless the start point already ends in one ("/"). */
    bool slash = name && base[0] && base[strlen(base) - 1] != '/';
    if (buf_append_str(&path, base) < 0 || (slash && buf_append(&path, "/", 1) < 0) ||
        (name && utf8_repair(&path, name, strlen(name), 0, NULL) < 0)) {
        buf_free(&path);
        return -1;
    }
    l->paths[l->n++] = buf_steal(&path);
    return l->paths[l->n - 1] ? 0 : -1;
}

static int find_error(struct listing *l, const char *path, int err)
{
    return buf_printf(&l->errors, "find: \xE2\x80\x98%s\xE2\x80\x99: %s\n", path,
                      fileio_strerror(err));
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Depth 2: the entries of one first-level directory. `listed` is false for a hidden one:
 * find still walks into it (the -path test only hides what it prints), so its errors count. */
static int walk_child(struct listing *l, const char *dir, bool listed, bool exclude_hidden)
{
    DIR *d = opendir(dir);
    if (!d)
        return find_error(l, dir, errno);
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (!listed || (exclude_hidden && e->d_name[0] == '.'))
            continue;
        rc = listing_add(l, dir, e->d_name);
    }
    closedir(d);
    return rc;
}

static int walk(struct listing *l, const char *root)
{
    /* With "/" as start point the patterns ("//.*") match nothing: nothing is hidden. */
    bool exclude_hidden = root[strlen(root) - 1] != '/';
    if (listing_add(l, root, NULL) < 0)
        return -1;
    DIR *d = opendir(root);
    if (!d)
        return find_error(l, root, errno);
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        bool hidden = e->d_name[0] == '.';
        l->hidden += hidden;
        bool listed = !(hidden && exclude_hidden);
        struct buf child = BUF_INIT;
        bool slash = root[strlen(root) - 1] != '/';
        if (buf_append_str(&child, root) < 0 || (slash && buf_append(&child, "/", 1) < 0) ||
            buf_append_str(&child, e->d_name) < 0) {
            buf_free(&child);
            rc = -1;
            break;
        }
        if (listed)
            rc = listing_add(l, root, e->d_name);
        if (rc == 0 && is_dir(child.data))
            rc = walk_child(l, child.data, listed, exclude_hidden);
        buf_free(&child);
    }
    closedir(d);
    return rc;
}

static int cmp_paths(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Python truthiness of a JSON value: null, false, 0, "", [] and {} are false. */
static bool truthy(const json_t *v)
{
    if (!v)
        return false;
    switch (json_typeof(v)) {
    case JSON_NULL:
    case JSON_FALSE:
        return false;
    case JSON_INTEGER:
        return json_integer_value(v) != 0;
    case JSON_REAL:
        return json_real_value(v) != 0;
    case JSON_STRING:
        return json_string_length(v) > 0;
    case JSON_ARRAY:
        return json_array_size(v) > 0;
    case JSON_OBJECT:
        return json_object_size(v) > 0;
    default:
        return true;
    }
}

static int fail_view_range(struct editor_result *res, const json_t *view_range, const char *hint)
{
    struct buf v = BUF_INIT;
    int rc = pytext_str_json(&v, view_range) < 0
                 ? -1
                 : editor_fail(res, "Invalid `view_range` parameter: %s. %s", v.data ? v.data : "",
                               hint);
    buf_free(&v);
    return rc < 0 ? -1 : 1;
}

static int view_dir(const char *path, const json_t *view_range, struct editor_result *res)
{
    if (truthy(view_range))
        return fail_view_range(res, view_range,
                               "The `view_range` parameter is not allowed when `path` points to a "
                               "directory.");
    struct listing l = {0};
    struct buf out = BUF_INIT;
    int rc = walk(&l, path);
    if (rc < 0)
        goto out;
    if (l.errors.len) {
        /* find wrote to stderr: OHEditor reports that instead of the listing. */
        buf_free(&res->output);
        res->output = l.errors;
        l.errors = (struct buf)BUF_INIT;
        res->failed = true;
        rc = pytext_truncate(&res->output, EDITOR_MAX_RESPONSE_CHARS, EDITOR_OUTPUT_CLIPPED);
        goto out;
    }
    qsort(l.paths, l.n, sizeof *l.paths, cmp_paths);
    rc = -1;
    for (size_t i = 0; i < l.n; i++)
        if (buf_append_str(&out, l.paths[i]) < 0 || buf_append(&out, "\n", 1) < 0)
            goto out;
    /* Clipped before the slashes are added, then stripped and split as OHEditor does. */
    if (pytext_truncate(&out, EDITOR_MAX_RESPONSE_CHARS, EDITOR_DIR_CLIPPED) < 0)
        goto out;
    size_t from = pytext_lstrip(out.data, out.len), to = pytext_rstrip(out.data, out.len);
    if (buf_printf(&res->output,
                   "Here's the files and directories up to 2 levels deep in %s, excluding hidden "
                   "items:\n",
                   path) < 0)
        goto out;
    for (size_t pos = from; pos < to;) {
        const char *nl = memchr(out.data + pos, '\n', to - pos);
        size_t end = nl ? (size_t)(nl - out.data) : to;
        char *line = strndup(out.data + pos, end - pos);
        if (!line || (pos > from && buf_append(&res->output, "\n", 1) < 0) ||
            buf_append_str(&res->output, line) < 0 ||
            (is_dir(line) && buf_append(&res->output, "/", 1) < 0)) {
            free(line);
            goto out;
        }
        free(line);
        pos = end + 1;
    }
    if (l.hidden > 0 &&
        buf_printf(&res->output,
                   "\n\n%ld hidden files/directories in this directory are excluded. You can use "
                   "'ls -la %s' to see them.",
                   l.hidden, path) < 0)
        goto out;
    rc = 0;
out:
    for (size_t i = 0; i < l.n; i++)
        free(l.paths[i]);
    free(l.paths);
    buf_free(&l.errors);
    buf_free(&out);
    return rc;
}

/* An element of view_range as Python holds it: an int, or a bool (which is an int too). */
static bool range_element(const json_t *v, long *out)
{
    if (json_is_integer(v)) {
        *out = (long)json_integer_value(v);
        return true;
    }
    if (json_is_boolean(v)) {
        *out = json_is_true(v);
        return true;
    }
    return false;
}

static int view_range_checked(const char *path, const json_t *view_range, const char *text,
                              size_t n, struct editor_result *res)
{
    long num_lines = (long)editor_count_lines(text, n);
    if (!json_is_array(view_range) && !json_is_string(view_range) && !json_is_object(view_range)) {
        /* len() of a number: Python raises TypeError, which OpenHands reports as it is. */
        const char *type = json_is_integer(view_range) ? "int"
                           : json_is_real(view_range)  ? "float"
                                                       : "bool";
        return editor_fail(res, "object of type '%s' has no len()", type) < 0 ? -1 : 1;
    }
    long start, end;
    if (!json_is_array(view_range) || json_array_size(view_range) != 2 ||
        !range_element(json_array_get(view_range, 0), &start) ||
        !range_element(json_array_get(view_range, 1), &end))
        return fail_view_range(res, view_range, "It should be a list of two integers.");
    struct buf first = BUF_INIT, second = BUF_INIT, hint = BUF_INIT, joined = BUF_INIT;
    int rc = -1;
    if (pytext_repr_json(&first, json_array_get(view_range, 0)) < 0 ||
        pytext_repr_json(&second, json_array_get(view_range, 1)) < 0)
        goto out;
    if (start < 1 || start > num_lines) {
        rc = buf_printf(&hint,
                        "Its first element `%s` should be within the range of lines of the "
                        "file: [1, %ld].",
                        first.data, num_lines) < 0
                 ? -1
                 : fail_view_range(res, view_range, hint.data);
        goto out;
    }
    bool clamped = false;
    if (end == -1 || end > num_lines) {
        clamped = end != -1;
        end = num_lines;
        buf_reset(&second);
        if (buf_printf(&second, "%ld", end) < 0)
            goto out;
    }
    if (end < start) {
        rc = buf_printf(&hint,
                        "Its second element `%s` should be greater than or equal to the first "
                        "element `%s`.",
                        second.data, first.data) < 0
                 ? -1
                 : fail_view_range(res, view_range, hint.data);
        goto out;
    }
    /* Lines start..end, then '\n'.join(text.splitlines()): the range's last newline goes,
     * and any other line break Python knows (\v, \f, U+2028...) splits a line. */
    size_t from = 0;
    for (long l = 1; l < start && from < n; l++) {
        const char *nl = memchr(text + from, '\n', n - from);
        from = nl ? (size_t)(nl - text) + 1 : n;
    }
    size_t to = from;
    for (long l = start; l <= end && to < n; l++) {
        const char *nl = memchr(text + to, '\n', n - to);
        to = nl ? (size_t)(nl - text) + 1 : n;
    }
    for (size_t pos = from; pos < to;) {
        size_t next, stop = pytext_line_end(text, to, pos, &next);
        if ((pos > from && buf_append(&joined, "\n", 1) < 0) ||
            buf_append(&joined, text + pos, stop - pos) < 0)
            goto out;
        pos = next;
    }
    if (clamped && buf_printf(&res->output,
                              "NOTE: We only show up to %ld since there're only %ld lines in "
                              "this file.\n",
                              num_lines, num_lines) < 0)
        goto out;
    rc = editor_make_output(&res->output, joined.data ? joined.data : "", joined.len, path, start);
out:
    buf_free(&first);
    buf_free(&second);
    buf_free(&hint);
    buf_free(&joined);
    return rc;
}

int editor_view(const char *path, const json_t *view_range, struct editor_result *res)
{
    if (is_dir(path))
        return view_dir(path, view_range, res) < 0 ? -1 : 0;
    struct editor_text t = {BUF_INIT, EDITOR_ENC_UTF8};
    int rc;
    if (editor_is_supported_binary(path)) {
        /* OHEditor converts these to Markdown (markitdown); there is no converter here. The
         * size check comes first, as in OHEditor. */
        struct stat st;
        if (stat(path, &st) == 0 && (unsigned long long)st.st_size > EDITOR_MAX_FILE_SIZE)
            rc = editor_read_text(path, &t, res);
        else
            rc = editor_fail(res,
                             "Error in converting file to Markdown: this runtime has no "
                             "Markdown converter. Please use Python code to read %s",
                             path) < 0
                     ? -1
                     : 1;
        buf_free(&t.text);
        return rc < 0 ? -1 : 0;
    }
    rc = editor_read_text(path, &t, res);
    if (rc == 0) {
        const char *text = t.text.data ? t.text.data : "";
        if (!truthy(view_range))
            rc = editor_make_output(&res->output, text, t.text.len, path, 1);
        else
            rc = view_range_checked(path, view_range, text, t.text.len, res);
    }
    buf_free(&t.text);
    return rc < 0 ? -1 : 0;
}
