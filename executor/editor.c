/* OHEditor's commands and checks. The order of checks and the texts follow openhands-aci
 * 0.3.2 (editor.py, exceptions.py, prompts.py); docs/protocol.md lists where this differs. */
#include "editor.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "lint.h"
#include "pathname.h"
#include "pytext.h"

#define REVIEW                                                                                     \
    "Review the changes and make sure they are as expected. Edit the file again if necessary."
#define REVIEW_INSERT                                                                              \
    "Review the changes and make sure they are as expected (correct indentation, no duplicate "    \
    "lines, etc). Edit the file again if necessary."

/* OpenHands' enable_linting: the lint of the change between the snippet and the review line,
 * set off by blank lines. */
static int editor_lint(const struct editor_env *env, const char *path, const char *old,
                       size_t old_len, const char *new_text, size_t new_len,
                       struct editor_result *res)
{
    if (!env->lint)
        return 0;
    if (buf_append_str(&res->output, "\n") < 0 ||
        lint_changes(&res->output, env->lint_path, path, old, old_len, new_text, new_len) < 0 ||
        buf_append_str(&res->output, "\n") < 0)
        return -1;
    return 0;
}

void editor_result_free(struct editor_result *res)
{
    buf_free(&res->output);
    buf_free(&res->old_content);
    buf_free(&res->new_content);
    buf_free(&res->history_path);
    buf_free(&res->history_text);
}

int editor_fail(struct editor_result *res, const char *fmt, ...)
{
    va_list ap;
    buf_reset(&res->output);
    res->failed = true;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || buf_reserve(&res->output, (size_t)n) < 0)
        return -1;
    va_start(ap, fmt);
    vsnprintf(res->output.data, (size_t)n + 1, fmt, ap);
    va_end(ap);
    res->output.len = (size_t)n;
    return 0;
}

bool editor_is_supported_binary(const char *path)
{
    static const char *const exts[] = {".docx", ".xlsx", ".pptx", ".pdf",
                                       ".mp3",  ".wav",  ".m4a",  ".flac"};
    const char *suffix = pathname_suffix(path);
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++)
        if (strcasecmp(suffix, exts[i]) == 0)
            return true;
    return false;
}

size_t editor_count_lines(const char *text, size_t n)
{
    size_t lines = 0;
    for (size_t i = 0; i < n; i++)
        lines += text[i] == '\n';
    return lines + (n > 0 && text[n - 1] != '\n');
}

/* Offset where the 1-based line `line` starts (n when there are fewer lines). */
static size_t line_offset(const char *text, size_t n, size_t line)
{
    size_t off = 0;
    for (size_t l = 1; l < line && off < n; l++) {
        const char *nl = memchr(text + off, '\n', n - off);
        off = nl ? (size_t)(nl - text) + 1 : n;
    }
    return off;
}

/* read_file(path, start_line, end_line) on text already read: lines first..last (1-based),
 * each with its newline. */
static int slice_lines(struct buf *out, const char *text, size_t n, long first, long last)
{
    if (last < first || last < 1)
        return 0;
    if (first < 1)
        first = 1;
    size_t from = line_offset(text, n, (size_t)first);
    size_t to = line_offset(text, n, (size_t)last + 1);
    return buf_append(out, text + from, to - from);
}

int editor_make_output(struct buf *out, const char *content, size_t n, const char *desc,
                       long start_line)
{
    struct buf c = BUF_INIT;
    int rc = -1;
    if (buf_append(&c, content, n) < 0 ||
        pytext_truncate(&c, EDITOR_MAX_RESPONSE_CHARS, EDITOR_TEXT_CLIPPED) < 0)
        goto out;
    if (buf_printf(out, "Here's the result of running `cat -n` on %s:\n", desc) < 0)
        goto out;
    const char *s = c.data ? c.data : "";
    size_t pos = 0;
    for (long line = start_line;; line++) {
        const char *nl = memchr(s + pos, '\n', c.len - pos);
        size_t end = nl ? (size_t)(nl - s) : c.len;
        if (buf_printf(out, "%6ld\t", line) < 0 || buf_append(out, s + pos, end - pos) < 0 ||
            buf_append(out, "\n", 1) < 0)
            goto out;
        if (!nl)
            break;
        pos = end + 1;
    }
    rc = 0;
out:
    buf_free(&c);
    return rc;
}

/* validate_file: size and binary content of an existing regular file. */
static int validate_file(const char *path, struct editor_result *res)
{
    struct stat st;
    if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
        return 0;
    if ((unsigned long long)st.st_size > EDITOR_MAX_FILE_SIZE) {
        double mb = (double)st.st_size / 1024 / 1024;
        return editor_fail(res,
                           "File validation failed for %s: File is too large (%.1fMB). Maximum "
                           "allowed size is %uMB.",
                           path, mb, EDITOR_MAX_FILE_SIZE / 1024 / 1024) < 0
                   ? -1
                   : 1;
    }
    if (editor_is_supported_binary(path))
        return 0;
    char head[FILEIO_SNIFF_BYTES];
    int n = fileio_sniff(path, head);
    if (n > 0 && fileio_is_binary(head, (size_t)n))
        return editor_fail(res,
                           "File validation failed for %s: File appears to be binary and this "
                           "file type cannot be read or edited by this tool.",
                           path) < 0
                   ? -1
                   : 1;
    return 0;
}

/* "Ran into <error> while trying to <verb> <path>" for an errno. */
static int fail_os(struct editor_result *res, int err, const char *path, const char *verb)
{
    struct buf msg = BUF_INIT;
    int rc = fileio_oserror(&msg, err, path);
    rc = rc < 0 ? -1 : editor_fail(res, "Ran into %s while trying to %s %s", msg.data, verb, path);
    buf_free(&msg);
    return rc < 0 ? -1 : 1;
}

static int fail_special(struct editor_result *res, const struct stat *st, const char *path,
                        const char *verb)
{
    return editor_fail(res, "Ran into %s being a %s (not a regular file) while trying to %s %s",
                       path, fileio_kind(st->st_mode), verb, path) < 0
               ? -1
               : 1;
}

int editor_read_text(const char *path, struct editor_text *t, struct editor_result *res)
{
    int rc = validate_file(path, res);
    if (rc)
        return rc;
    struct stat st;
    int fd = fileio_open_read(path, &st);
    if (fd == -FILEIO_ESPECIAL)
        return fail_special(res, &st, path, "read");
    if (fd < 0)
        return fail_os(res, -fd, path, "read");
    struct buf raw = BUF_INIT;
    rc = fileio_read_all(fd, EDITOR_MAX_FILE_SIZE, &raw);
    close(fd);
    if (rc == -ENOMEM) {
        buf_free(&raw);
        return -1;
    }
    if (rc < 0) {
        buf_free(&raw);
        return fail_os(res, -rc, path, "read");
    }
    struct buf decoded = BUF_INIT;
    t->enc = editor_encoding_detect(raw.data ? raw.data : "", raw.len);
    rc = editor_encoding_decode(t->enc, raw.data ? raw.data : "", raw.len, &decoded);
    buf_free(&raw);
    if (rc == 0)
        rc = pytext_universal_newlines(&t->text, decoded.data ? decoded.data : "", decoded.len);
    buf_free(&decoded);
    return rc < 0 ? -1 : 0;
}

/* write_file: validate, encode, replace the content (creating the file when missing). A
 * text the encoding cannot hold is refused before the file is touched. */
static int write_text(const char *path, const char *text, size_t n, enum editor_encoding enc,
                      struct editor_result *res)
{
    int rc = validate_file(path, res);
    if (rc)
        return rc;
    struct buf bytes = BUF_INIT, err = BUF_INIT;
    rc = editor_encoding_encode(enc, text, n, &bytes, &err);
    if (rc == 1)
        rc = editor_fail(res, "Ran into %s while trying to write to %s", err.data, path) < 0 ? -1
                                                                                             : 1;
    buf_free(&err);
    if (rc) {
        buf_free(&bytes);
        return rc;
    }
    struct stat st;
    bool existed = lstat(path, &st) == 0;
    int fd = fileio_open(path, O_WRONLY | O_CREAT, &st);
    if (fd == -FILEIO_ESPECIAL)
        rc = fail_special(res, &st, path, "write to");
    else if (fd < 0)
        rc = fail_os(res, -fd, path, "write to");
    else {
        int w = fileio_replace(fd, bytes.data ? bytes.data : "", bytes.len);
        if (close(fd) < 0 && w == 0)
            w = -errno;
        if (w < 0 && !existed)
            unlink(path); /* a create that failed (a full disk) leaves no empty file */
        rc = w < 0 ? fail_os(res, -w, path, "write to") : 0;
    }
    buf_free(&bytes);
    return rc;
}

static int fail_param(struct editor_result *res, const char *param, const char *value,
                      const char *hint_fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail_param(struct editor_result *res, const char *param, const char *value,
                      const char *hint_fmt, ...)
{
    struct buf hint = BUF_INIT;
    va_list ap;
    va_start(ap, hint_fmt);
    int n = vsnprintf(NULL, 0, hint_fmt, ap);
    va_end(ap);
    int rc = -1;
    if (n >= 0 && buf_reserve(&hint, (size_t)n) == 0) {
        va_start(ap, hint_fmt);
        vsnprintf(hint.data, (size_t)n + 1, hint_fmt, ap);
        va_end(ap);
        rc = editor_fail(res, "Invalid `%s` parameter: %s. %s", param, value, hint.data);
    }
    buf_free(&hint);
    return rc < 0 ? -1 : 1;
}

/* validate_path, in OHEditor's order; then (not in OHEditor, whose reads would block)
 * FIFOs, sockets and devices are refused. */
static int validate_path(const struct editor_env *env, const char *command, const char *path,
                         struct editor_result *res)
{
    struct stat st;
    if (!pathname_is_absolute(path)) {
        struct buf hint = BUF_INIT, suggested = BUF_INIT;
        int rc = buf_append_str(&hint, "The path should be an absolute path, starting with `/`.");
        if (rc == 0 && env->workspace_root) {
            rc = pathname_join(&suggested, env->workspace_root, path);
            if (rc == 0 && stat(suggested.data, &st) == 0)
                rc = buf_printf(&hint, " Maybe you meant %s?", suggested.data);
        }
        rc = rc < 0 ? -1 : fail_param(res, "path", path, "%s", hint.data);
        buf_free(&hint);
        buf_free(&suggested);
        return rc;
    }
    bool exists = stat(path, &st) == 0;
    bool create = strcmp(command, "create") == 0;
    if (create && exists)
        return fail_param(res, "path", path,
                          "File already exists at: %s. Cannot overwrite files using command "
                          "`create`.",
                          path);
    if (!create && !exists)
        return fail_param(res, "path", path,
                          "The path %s does not exist. Please provide a valid path.", path);
    if (strcmp(command, "view") != 0) {
        if (exists && S_ISDIR(st.st_mode))
            return fail_param(res, "path", path,
                              "The path %s is a directory and only the `view` command can be "
                              "used on directories.",
                              path);
        if (editor_is_supported_binary(path))
            return fail_param(res, "path", path,
                              "The path %s points to a binary file (%s) and only the `view` "
                              "command can be used on supported binary files.",
                              path, pathname_suffix(path));
    }
    if (exists && !S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
        return fail_param(res, "path", path,
                          "The path %s is a %s, not a regular file or a directory, and cannot be "
                          "used with this tool.",
                          path, fileio_kind(st.st_mode));
    return 0;
}

static int set_history(struct editor_result *res, enum editor_history_op op, const char *path,
                       const char *text, size_t n)
{
    res->history_op = op;
    if (buf_append_str(&res->history_path, path) < 0)
        return -1;
    return op == EDITOR_HISTORY_PUSH ? buf_append(&res->history_text, text, n) : 0;
}

static int cmd_create(const struct editor_env *env, const struct editor_args *a, const char *path,
                      struct editor_result *res)
{
    if (!a->file_text)
        return editor_fail(res, "Parameter `file_text` is required for command: create.");
    int rc = write_text(path, a->file_text, a->file_text_len, EDITOR_ENC_UTF8, res);
    if (rc)
        return rc < 0 ? -1 : 0;
    if (set_history(res, EDITOR_HISTORY_PUSH, path, a->file_text, a->file_text_len) < 0 ||
        buf_append(&res->new_content, a->file_text, a->file_text_len) < 0)
        return -1;
    res->has_new = true;
    if (buf_printf(&res->output, "File created successfully at: %s", path) < 0)
        return -1;
    /* Linted as a change from the empty text, set off like an edit's (after a blank line). */
    if (env->lint && (buf_append_str(&res->output, "\n") < 0 ||
                      editor_lint(env, path, "", 0, a->file_text, a->file_text_len, res) < 0))
        return -1;
    return 0;
}

/* Matches of pat in text, left to right without overlaps (re.finditer); an empty pattern
 * matches at every position. Collects the 1-based lines they start on, deduplicated (they
 * come in order), and where the first one is. */
struct matches {
    size_t count;
    size_t first;
    long *lines;
    size_t nlines, cap;
};

static int find_matches(const char *text, size_t n, const char *pat, size_t m, struct matches *out)
{
    size_t pos = 0;
    long line = 1;
    size_t counted = 0; /* newlines before `counted` are in `line` */
    out->count = out->nlines = 0;
    while (pos <= n) {
        const char *hit = m ? memmem(text + pos, n - pos, pat, m) : text + pos;
        if (!hit)
            break;
        size_t at = (size_t)(hit - text);
        for (; counted < at; counted++)
            line += text[counted] == '\n';
        if (out->count++ == 0)
            out->first = at;
        if (!out->nlines || out->lines[out->nlines - 1] != line) {
            if (out->nlines == out->cap) {
                size_t cap = out->cap ? out->cap * 2 : 16;
                long *p = realloc(out->lines, cap * sizeof *p);
                if (!p)
                    return -1;
                out->lines = p;
                out->cap = cap;
            }
            out->lines[out->nlines++] = line;
        }
        pos = at + (m ? m : 1);
    }
    return 0;
}

static int cmd_str_replace(const struct editor_env *env, const struct editor_args *a,
                           const char *path, struct editor_result *res)
{
    if (!a->old_str)
        return editor_fail(res, "Parameter `old_str` is required for command: str_replace.");
    if (a->new_str && a->new_str_len == a->old_str_len &&
        memcmp(a->new_str, a->old_str, a->old_str_len) == 0) {
        struct buf v = BUF_INIT;
        int rc = buf_append(&v, a->new_str, a->new_str_len);
        rc = rc < 0 ? -1
                    : fail_param(res, "new_str", v.data ? v.data : "",
                                 "No replacement was performed. `new_str` and `old_str` must be "
                                 "different.");
        buf_free(&v);
        return rc < 0 ? -1 : 0;
    }
    struct editor_text t = {BUF_INIT, EDITOR_ENC_UTF8};
    struct matches mt = {0};
    struct buf old = BUF_INIT, repl = BUF_INIT, next = BUF_INIT, readback = BUF_INIT,
               snippet = BUF_INIT, msg = BUF_INIT;
    int rc = editor_read_text(path, &t, res);
    if (rc)
        goto out;
    rc = -1;
    const char *text = t.text.data ? t.text.data : "";
    if (buf_append(&old, a->old_str, a->old_str_len) < 0 ||
        buf_append(&repl, a->new_str ? a->new_str : "", a->new_str ? a->new_str_len : 0) < 0 ||
        find_matches(text, t.text.len, old.data, old.len, &mt) < 0)
        goto out;
    if (mt.count == 0) {
        /* Perhaps only surrounding whitespace differs: retry with both stripped. */
        size_t ls = pytext_lstrip(old.data, old.len), rs = pytext_rstrip(old.data, old.len);
        size_t len = rs > ls ? rs - ls : 0;
        memmove(old.data, old.data + (rs > ls ? ls : 0), len);
        old.len = len;
        old.data[len] = '\0';
        if (repl.data) {
            ls = pytext_lstrip(repl.data, repl.len);
            rs = pytext_rstrip(repl.data, repl.len);
            len = rs > ls ? rs - ls : 0;
            memmove(repl.data, repl.data + (rs > ls ? ls : 0), len);
            repl.len = len;
            repl.data[len] = '\0';
        }
        if (find_matches(text, t.text.len, old.data, old.len, &mt) < 0)
            goto out;
        if (mt.count == 0) {
            rc = buf_append_str(&msg, "No replacement was performed, old_str `") < 0 ||
                         buf_append(&msg, old.data, old.len) < 0 ||
                         buf_printf(&msg, "` did not appear verbatim in %s.", path) < 0
                     ? -1
                     : 0;
            goto fail_msg;
        }
    }
    if (mt.count > 1) {
        rc = buf_append_str(
                 &msg, "No replacement was performed. Multiple occurrences of old_str `") < 0 ||
                     buf_append(&msg, old.data, old.len) < 0 ||
                     buf_append_str(&msg, "` in lines ") < 0 ||
                     pytext_repr_longs(&msg, mt.lines, mt.nlines) < 0 ||
                     buf_append_str(&msg, ". Please ensure it is unique.") < 0
                 ? -1
                 : 0;
        goto fail_msg;
    }
    if (buf_append(&next, text, mt.first) < 0 ||
        buf_append(&next, repl.data ? repl.data : "", repl.len) < 0 ||
        buf_append(&next, text + mt.first + old.len, t.text.len - mt.first - old.len) < 0)
        goto out;
    rc = write_text(path, next.data, next.len, t.enc, res);
    if (rc) {
        rc = rc < 0 ? -1 : 0;
        goto out;
    }
    rc = -1;
    if (set_history(res, EDITOR_HISTORY_PUSH, path, text, t.text.len) < 0)
        goto out;
    long line = mt.lines[0];
    long start = line - EDITOR_SNIPPET_CONTEXT > 0 ? line - EDITOR_SNIPPET_CONTEXT : 0;
    long newlines = 0;
    for (size_t i = 0; i < repl.len; i++)
        newlines += repl.data[i] == '\n';
    long end = line + EDITOR_SNIPPET_CONTEXT + newlines;
    struct buf desc = BUF_INIT;
    /* The snippet is read back from the file, so with universal newlines. */
    if (pytext_universal_newlines(&readback, next.data, next.len) < 0 ||
        slice_lines(&snippet, readback.data, readback.len, start + 1, end) < 0 ||
        buf_printf(&desc, "a snippet of %s", path) < 0 ||
        buf_printf(&res->output, "The file %s has been edited. ", path) < 0 ||
        editor_make_output(&res->output, snippet.data ? snippet.data : "", snippet.len, desc.data,
                           start + 1) < 0 ||
        editor_lint(env, path, text, t.text.len, next.data, next.len, res) < 0 ||
        buf_append_str(&res->output, REVIEW) < 0) {
        buf_free(&desc);
        goto out;
    }
    buf_free(&desc);
    res->has_old = res->has_new = true;
    if (buf_append(&res->old_content, text, t.text.len) < 0 ||
        buf_append(&res->new_content, next.data, next.len) < 0)
        goto out;
    rc = 0;
    goto out;
fail_msg:
    if (rc == 0) {
        buf_free(&res->output);
        res->output = msg;
        res->failed = true;
        msg = (struct buf)BUF_INIT;
    }
out:
    buf_free(&t.text);
    free(mt.lines);
    buf_free(&old);
    buf_free(&repl);
    buf_free(&next);
    buf_free(&readback);
    buf_free(&snippet);
    buf_free(&msg);
    return rc < 0 ? -1 : 0;
}

static int cmd_insert(const struct editor_env *env, const struct editor_args *a, const char *path,
                      struct editor_result *res)
{
    if (!a->has_insert_line)
        return editor_fail(res, "Parameter `insert_line` is required for command: insert.");
    if (!a->new_str)
        return editor_fail(res, "Parameter `new_str` is required for command: insert.");
    struct editor_text t = {BUF_INIT, EDITOR_ENC_UTF8};
    struct buf next = BUF_INIT, readback = BUF_INIT, snippet = BUF_INIT;
    int rc = editor_read_text(path, &t, res);
    if (rc)
        goto out;
    rc = -1;
    const char *text = t.text.data ? t.text.data : "";
    long num_lines = (long)editor_count_lines(text, t.text.len);
    long at = a->insert_line;
    if (at < 0 || at > num_lines) {
        char v[32];
        snprintf(v, sizeof v, "%ld", at);
        rc = fail_param(res, "insert_line", v,
                        "It should be within the range of allowed values: [0, %ld]", num_lines);
        rc = rc < 0 ? -1 : 0;
        goto out;
    }
    /* Lines before the point, each piece of new_str plus "\n", the rest. A last line without
     * its newline gets the new text glued on, as in OHEditor. */
    size_t split = line_offset(text, t.text.len, (size_t)at + 1);
    long new_lines = 1;
    if (buf_append(&next, text, split) < 0)
        goto out;
    for (size_t i = 0, start = 0; i <= a->new_str_len; i++) {
        if (i < a->new_str_len && a->new_str[i] != '\n')
            continue;
        if (buf_append(&next, a->new_str + start, i - start) < 0 || buf_append(&next, "\n", 1) < 0)
            goto out;
        new_lines += i < a->new_str_len;
        start = i + 1;
    }
    if (buf_append(&next, text + split, t.text.len - split) < 0)
        goto out;
    rc = write_text(path, next.data, next.len, t.enc, res);
    if (rc) {
        rc = rc < 0 ? -1 : 0;
        goto out;
    }
    rc = -1;
    if (set_history(res, EDITOR_HISTORY_PUSH, path, text, t.text.len) < 0 ||
        pytext_universal_newlines(&readback, next.data, next.len) < 0)
        goto out;
    long start = at - EDITOR_SNIPPET_CONTEXT > 0 ? at - EDITOR_SNIPPET_CONTEXT : 0;
    long end = at + EDITOR_SNIPPET_CONTEXT + new_lines;
    if (num_lines + new_lines < end)
        end = num_lines + new_lines;
    long first_shown = at - EDITOR_SNIPPET_CONTEXT + 1 > 1 ? at - EDITOR_SNIPPET_CONTEXT + 1 : 1;
    if (slice_lines(&snippet, readback.data, readback.len, start + 1, end) < 0 ||
        buf_printf(&res->output, "The file %s has been edited. ", path) < 0 ||
        editor_make_output(&res->output, snippet.data ? snippet.data : "", snippet.len,
                           "a snippet of the edited file", first_shown) < 0 ||
        editor_lint(env, path, text, t.text.len, readback.data, readback.len, res) < 0 ||
        buf_append_str(&res->output, REVIEW_INSERT) < 0)
        goto out;
    res->has_old = res->has_new = true;
    if (buf_append(&res->old_content, text, t.text.len) < 0 ||
        buf_append(&res->new_content, readback.data, readback.len) < 0)
        goto out;
    rc = 0;
out:
    buf_free(&t.text);
    buf_free(&next);
    buf_free(&readback);
    buf_free(&snippet);
    return rc < 0 ? -1 : 0;
}

static int cmd_undo(const struct editor_env *env, const char *path, struct editor_result *res)
{
    struct editor_text t = {BUF_INIT, EDITOR_ENC_UTF8};
    int rc = editor_read_text(path, &t, res);
    if (rc) {
        buf_free(&t.text);
        return rc < 0 ? -1 : 0;
    }
    size_t n = 0;
    const char *old = env->history ? editor_history_last(env->history, path, &n) : NULL;
    if (!old) {
        buf_free(&t.text);
        return editor_fail(res, "No edit history found for %s.", path);
    }
    rc = write_text(path, old, n, t.enc, res);
    if (rc == 0) {
        res->has_old = res->has_new = true;
        rc =
            set_history(res, EDITOR_HISTORY_POP, path, NULL, 0) < 0 ||
                    buf_printf(&res->output, "Last edit to %s undone successfully. ", path) < 0 ||
                    editor_make_output(&res->output, old, n, path, 1) < 0 ||
                    buf_append(&res->old_content, t.text.data ? t.text.data : "", t.text.len) < 0 ||
                    buf_append(&res->new_content, old, n) < 0
                ? -1
                : 0;
    }
    buf_free(&t.text);
    return rc < 0 ? -1 : 0;
}

int editor_run(const struct editor_env *env, const struct editor_args *a, struct editor_result *res)
{
    struct buf path = BUF_INIT;
    const char *command = a->command ? a->command : "";
    int rc = -1;
    if (pathname_normalize(&path, a->path) < 0)
        goto out;
    rc = validate_path(env, command, path.data, res);
    if (rc) {
        rc = rc < 0 ? -1 : 0;
        goto out;
    }
    if (strcmp(command, "view") == 0)
        rc = editor_view(path.data, a->view_range, res);
    else if (strcmp(command, "create") == 0)
        rc = cmd_create(env, a, path.data, res);
    else if (strcmp(command, "str_replace") == 0)
        rc = cmd_str_replace(env, a, path.data, res);
    else if (strcmp(command, "insert") == 0)
        rc = cmd_insert(env, a, path.data, res);
    else if (strcmp(command, "undo_edit") == 0)
        rc = cmd_undo(env, path.data, res);
    else
        rc = editor_fail(res,
                         "Unrecognized command %s. The allowed commands for the oh_editor tool "
                         "are: view, create, str_replace, insert, undo_edit",
                         command);
out:
    buf_free(&path);
    return rc < 0 ? -1 : 0;
}
