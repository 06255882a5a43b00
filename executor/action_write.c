/* The `write` action (FileWriteAction).
 *
 * The path is taken relative to the shell's current directory; missing parent directories
 * are created. The content is split on "\n" and every piece written with a "\n" after it,
 * so the file always ends with a newline and content ending in "\n" gets an empty line more
 * (as in OpenHands). A new file gets mode 0664; an existing one is rewritten in place
 * (inode, mode and owner stay), with lines [start:end] replaced (Python slice rules; the
 * defaults 0/-1 replace everything). The work runs as the agent user (fsjob.c), so new
 * files and directories are the agent's. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "action.h"
#include "diff.h"
#include "editor.h"
#include "editor_encoding.h"
#include "executor.h"
#include "fileio.h"
#include "fsjob.h"
#include "lint.h"
#include "observation.h"
#include "pathname.h"
#include "pytext.h"

#define WRITE_MAX_EXISTING (64u * 1024 * 1024) /* an existing file read for line replacement */
/* paddock_diff: texts up to this size are compared (difflib's matching is quadratic at
 * worst); the diff itself is cut at a line end past DIFF_MAX_TEXT. */
#define DIFF_MAX_INPUT (2u * 1024 * 1024)
#define DIFF_MAX_TEXT (256u * 1024)

struct write_args {
    char *path;
    char *content;
    size_t content_len;
    long start, end;
    double timeout;
    bool want_diff; /* action_req.want_diff */
    bool lint;      /* --auto-lint: the observation tells the lint errors the write made */
};

void action_write_free(void *p)
{
    struct write_args *a = p;
    free(a->path);
    free(a->content);
    free(a);
}

int action_write_parse(const json_t *action, void **out, struct buf *err)
{
    const json_t *args = action_get_args(action, err);
    if (!args)
        return -1;
    const char *path = NULL, *content = NULL;
    size_t len = 0, content_len = 0;
    struct write_args a = {.start = 0, .end = -1, .timeout = EXECUTOR_DEFAULT_TIMEOUT};
    if (action_get_string(args, "path", "action.args.path", true, &path, &len, err) < 0 ||
        action_get_string(args, "content", "action.args.content", true, &content, &content_len,
                          err) < 0 ||
        action_get_long(args, "start", "action.args.start", &a.start, err) < 0 ||
        action_get_long(args, "end", "action.args.end", &a.end, err) < 0 ||
        action_get_timeout(action, &a.timeout, err) < 0)
        return -1;
    if (strlen(path) != len) {
        buf_printf(err, "Invalid field: action.args.path (contains a NUL byte)");
        return -1;
    }
    struct write_args *copy = malloc(sizeof *copy);
    a.path = strdup(path);
    a.content = malloc(content_len + 1);
    if (!copy || !a.path || !a.content) {
        free(copy);
        free(a.path);
        free(a.content);
        buf_printf(err, "Out of memory");
        return -1;
    }
    memcpy(a.content, content, content_len);
    a.content[content_len] = '\0';
    a.content_len = content_len;
    *copy = a;
    *out = copy;
    return 0;
}

static json_t *error_reply(const char *fmt, const char *a, const char *b)
{
    struct buf msg = BUF_INIT;
    json_t *r = NULL;
    if (buf_printf(&msg, fmt, a, b) == 0)
        r = fsjob_reply(observation_error(msg.data));
    buf_free(&msg);
    return r;
}

static json_t *os_error_reply(int err, const struct stat *st, const char *filepath)
{
    if (err == ENOENT)
        return error_reply("File not found: %s%s", filepath, "");
    if (err == EISDIR)
        return error_reply("Path is a directory: %s. You can only write to files%s", filepath, "");
    if (err == FILEIO_ESPECIAL)
        return error_reply("Path is a %s: %s. You can only write to files",
                           fileio_kind(st->st_mode), filepath);
    return error_reply("Cannot write %s: %s.", filepath, fileio_strerror(err));
}

/* os.makedirs(dir): every missing level, as the agent. */
static int make_dirs(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) == 0)
        return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
    struct buf parent = BUF_INIT;
    int rc = pathname_dirname(&parent, dir);
    if (rc == 0 && parent.len && strcmp(parent.data, dir) != 0)
        rc = make_dirs(parent.data);
    else if (rc < 0)
        rc = -ENOMEM;
    buf_free(&parent);
    if (rc < 0)
        return rc;
    return mkdir(dir, 0777) == 0 || errno == EEXIST ? 0 : -errno;
}

/* Python slice index -> offset into `count` lines. */
static size_t slice_index(long i, size_t count)
{
    long n = (long)count;
    if (i < 0)
        i += n;
    if (i < 0)
        i = 0;
    if (i > n)
        i = n;
    return (size_t)i;
}

/* insert_lines(content.split("\n"), old lines, start, end). */
static int build_new(struct buf *out, const char *old, size_t old_len, const struct write_args *a)
{
    size_t count = editor_count_lines(old, old_len);
    size_t *offsets = malloc((count + 1) * sizeof *offsets);
    if (!offsets)
        return -1;
    size_t k = 0;
    offsets[0] = 0;
    for (size_t i = 0; i < old_len; i++)
        if (old[i] == '\n')
            offsets[++k] = i + 1;
    offsets[count] = old_len;
    int rc = -1;
    if (a->start != 0) {
        size_t head = slice_index(a->start, count);
        if (buf_append(out, old, offsets[head]) < 0)
            goto out;
    }
    for (size_t i = 0, from = 0; i <= a->content_len; i++) {
        if (i < a->content_len && a->content[i] != '\n')
            continue;
        if (buf_append(out, a->content + from, i - from) < 0 || buf_append(out, "\n", 1) < 0)
            goto out;
        from = i + 1;
    }
    if (a->end != -1) {
        size_t tail = slice_index(a->end, count);
        if (buf_append(out, old + offsets[tail], old_len - offsets[tail]) < 0)
            goto out;
    }
    rc = 0;
out:
    free(offsets);
    return rc;
}

/* The observation, with what the write changed as "paddock_diff" when the engine asked:
 * a unified diff of the old text and the new, or a line saying why there is none. */
static json_t *write_observation(const char *filepath, const struct write_args *a,
                                 const struct buf *old, const struct buf *next)
{
    json_t *obs = observation_write(filepath);
    if (obs && a->lint && old->len <= EDITOR_MAX_FILE_SIZE && next->len <= EDITOR_MAX_FILE_SIZE) {
        struct buf l = BUF_INIT;
        if (lint_changes(&l, getenv("PATH"), filepath, old->data ? old->data : "", old->len,
                         next->data ? next->data : "", next->len) == 0)
            json_object_set_new(obs, "content", json_stringn(l.data ? l.data : "", l.len));
        buf_free(&l);
    }
    if (!a->want_diff || !obs)
        return obs;
    struct buf d = BUF_INIT;
    if (old->len > DIFF_MAX_INPUT || next->len > DIFF_MAX_INPUT) {
        buf_printf(&d, "(no diff: the file is over %u MiB)\n", DIFF_MAX_INPUT >> 20);
    } else if (diff_unified(&d, filepath, old->data ? old->data : "", old->len,
                            next->data ? next->data : "", next->len) < 0) {
        buf_free(&d);
        return obs;
    }
    if (d.len > DIFF_MAX_TEXT) {
        const char *cut = memchr(d.data + DIFF_MAX_TEXT, '\n', d.len - DIFF_MAX_TEXT);
        size_t keep = cut ? (size_t)(cut - d.data) + 1 : d.len;
        size_t total = d.len;
        d.len = keep;
        buf_printf(&d, "(diff cut: %zu of %zu bytes shown)\n", keep, total);
    }
    json_object_set_new(obs, "paddock_diff", json_stringn(d.data ? d.data : "", d.len));
    buf_free(&d);
    return obs;
}

static json_t *write_existing(const char *filepath, const struct write_args *a)
{
    struct stat st;
    struct buf raw = BUF_INIT, old = BUF_INIT, next = BUF_INIT;
    json_t *r = NULL;
    int fd = fileio_open(filepath, O_RDWR, &st);
    if (fd < 0)
        return os_error_reply(-fd, &st, filepath);
    int rc = fileio_read_all(fd, WRITE_MAX_EXISTING, &raw);
    if (rc < 0) {
        r = os_error_reply(-rc, &st, filepath);
        goto out;
    }
    if (editor_encoding_detect(raw.data ? raw.data : "", raw.len) != EDITOR_ENC_UTF8) {
        r = error_reply("File could not be decoded as utf-8: %s%s", filepath, "");
        goto out;
    }
    if (pytext_universal_newlines(&old, raw.data ? raw.data : "", raw.len) < 0 ||
        build_new(&next, old.data ? old.data : "", old.len, a) < 0)
        goto out;
    rc = fileio_replace(fd, next.data ? next.data : "", next.len);
    r = rc < 0 ? os_error_reply(-rc, &st, filepath)
               : fsjob_reply(write_observation(filepath, a, &old, &next));
out:
    close(fd);
    buf_free(&raw);
    buf_free(&old);
    buf_free(&next);
    return r;
}

static json_t *write_new(const char *filepath, const struct write_args *a)
{
    struct stat st;
    struct buf next = BUF_INIT;
    json_t *r = NULL;
    int fd = fileio_open(filepath, O_WRONLY | O_CREAT | O_TRUNC, &st);
    if (fd < 0)
        return os_error_reply(-fd, &st, filepath);
    struct write_args whole = *a;
    whole.start = 0;
    whole.end = -1;
    if (build_new(&next, "", 0, &whole) < 0)
        goto out;
    int rc = fileio_replace(fd, next.data ? next.data : "", next.len);
    if (rc < 0) {
        /* No empty file left behind by a write that failed (a full disk). */
        unlink(filepath);
        r = os_error_reply(-rc, &st, filepath);
        goto out;
    }
    /* 0664 whatever the umask, as OpenHands sets it. */
    if (fchmod(fd, 0664) < 0) {
        struct buf msg = BUF_INIT;
        if (buf_printf(&msg, "File %s written, but failed to change ownership and permissions: ",
                       filepath) == 0 &&
            fileio_oserror(&msg, errno, filepath) == 0)
            r = fsjob_reply(observation_error(msg.data));
        buf_free(&msg);
        goto out;
    }
    struct buf none = BUF_INIT;
    r = fsjob_reply(write_observation(filepath, a, &none, &next));
out:
    close(fd);
    buf_free(&next);
    return r;
}

static json_t *write_in_child(const struct fsjob_env *env, const void *p)
{
    const struct write_args *a = p;
    struct buf filepath = BUF_INIT, dir = BUF_INIT;
    json_t *r = NULL;
    if (pathname_join(&filepath, env->cwd, a->path) < 0 ||
        pathname_dirname(&dir, filepath.data) < 0)
        goto out;
    int rc = make_dirs(dir.data);
    if (rc < 0) {
        r = error_reply("Cannot create the directory %s: %s.", dir.data, fileio_strerror(-rc));
        goto out;
    }
    struct stat st;
    r = stat(filepath.data, &st) == 0 ? write_existing(filepath.data, a)
                                      : write_new(filepath.data, a);
out:
    buf_free(&filepath);
    buf_free(&dir);
    return r;
}

enum action_status action_write_start(struct executor *ex, struct action_req *req)
{
    struct write_args *a = req->args;
    a->want_diff = req->want_diff;
    a->lint = ex->cfg.auto_lint;
    return fsjob_start(ex, req, write_in_child, a->timeout);
}
