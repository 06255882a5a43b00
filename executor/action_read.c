/* The `read` action (FileReadAction).
 *
 * impl_source "default": the path is taken relative to the shell's current directory;
 * images, PDFs and videos come back as data: URLs; other files are read as UTF-8 and
 * sliced by start/end (0-based line indexes, end -1 meaning all) with OpenHands'
 * read_lines rules. impl_source "oh_aci": the editor's `view` with view_range. Either way
 * the work runs as the agent user (fsjob.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "action.h"
#include "common/base64.h"
#include "editor.h"
#include "editor_encoding.h"
#include "executor.h"
#include "fileio.h"
#include "fsjob.h"
#include "observation.h"
#include "pathname.h"
#include "pytext.h"

/* Bigger files are refused: the reply has to fit the executor's memory. */
#define READ_MAX_BYTES (64u * 1024 * 1024)

struct read_args {
    char *path;
    long start, end;
    bool oh_aci;
    json_t *view_range; /* NULL when not given */
    double timeout;
};

void action_read_free(void *p)
{
    struct read_args *a = p;
    free(a->path);
    json_decref(a->view_range);
    free(a);
}

int action_read_parse(const json_t *action, void **out, struct buf *err)
{
    const json_t *args = action_get_args(action, err);
    if (!args)
        return -1;
    const char *path = NULL, *impl = "default";
    size_t len = 0, impl_len = 0;
    struct read_args a = {.start = 0, .end = -1, .timeout = EXECUTOR_DEFAULT_TIMEOUT};
    if (action_get_string(args, "path", "action.args.path", true, &path, &len, err) < 0 ||
        action_get_long(args, "start", "action.args.start", &a.start, err) < 0 ||
        action_get_long(args, "end", "action.args.end", &a.end, err) < 0 ||
        action_get_string(args, "impl_source", "action.args.impl_source", false, &impl, &impl_len,
                          err) < 0 ||
        action_get_timeout(action, &a.timeout, err) < 0)
        return -1;
    if (strlen(path) != len) {
        buf_printf(err, "Invalid field: action.args.path (contains a NUL byte)");
        return -1;
    }
    if (strcmp(impl, "default") != 0 && strcmp(impl, "oh_aci") != 0) {
        buf_printf(err,
                   "Invalid field: action.args.impl_source (expected \"default\" or \"oh_aci\")");
        return -1;
    }
    a.oh_aci = strcmp(impl, "oh_aci") == 0;
    struct read_args *copy = malloc(sizeof *copy);
    if (!copy || !(a.path = strdup(path))) {
        free(copy);
        buf_printf(err, "Out of memory");
        return -1;
    }
    const json_t *vr = json_object_get(args, "view_range");
    a.view_range = vr ? json_deep_copy(vr) : NULL;
    *copy = a;
    *out = copy;
    return 0;
}

/* mimetypes.guess_type for the extensions OpenHands sends as data: URLs; NULL otherwise. */
static const char *media_type(const char *path)
{
    static const struct {
        const char *ext, *mime;
    } types[] = {
        {".png", "image/png"},   {".jpg", "image/jpeg"},
        {".jpeg", "image/jpeg"}, {".bmp", "image/bmp"},
        {".gif", "image/gif"},   {".pdf", "application/pdf"},
        {".mp4", "video/mp4"},   {".webm", "video/webm"},
        {".ogg", "audio/ogg"}, /* what Python's mimetypes says for .ogg */
    };
    size_t n = strlen(path);
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        size_t e = strlen(types[i].ext);
        if (n >= e && strcasecmp(path + n - e, types[i].ext) == 0)
            return types[i].mime;
    }
    return NULL;
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

/* The errors of opening or reading filepath, in OpenHands' words where it has them. */
static json_t *open_error_reply(int err, const struct stat *st, const char *filepath,
                                const char *cwd)
{
    if (err == ENOENT || err == ENOTDIR)
        return error_reply("File not found: %s. Your current working directory is %s.", filepath,
                           cwd);
    if (err == EISDIR)
        return error_reply("Path is a directory: %s. You can only read files%s", filepath, "");
    if (err == FILEIO_ESPECIAL)
        return error_reply("Path is a %s: %s. You can only read files", fileio_kind(st->st_mode),
                           filepath);
    if (err == EFBIG) {
        struct buf msg = BUF_INIT;
        json_t *r = NULL;
        if (buf_printf(&msg, "File is too large to read: %s. Maximum allowed size is %uMB.",
                       filepath, READ_MAX_BYTES / 1024 / 1024) == 0)
            r = fsjob_reply(observation_error(msg.data));
        buf_free(&msg);
        return r;
    }
    return error_reply("Cannot read %s: %s.", filepath, fileio_strerror(err));
}

static json_t *read_whole(const char *filepath, const char *cwd, struct buf *out)
{
    struct stat st;
    int fd = fileio_open_read(filepath, &st);
    if (fd < 0)
        return open_error_reply(-fd, &st, filepath, cwd);
    int rc = fileio_read_all(fd, READ_MAX_BYTES, out);
    close(fd);
    return rc < 0 ? open_error_reply(-rc, &st, filepath, cwd) : NULL;
}

static json_t *read_media(const char *filepath, const char *cwd, const char *mime)
{
    struct buf data = BUF_INIT, url = BUF_INIT;
    json_t *r = read_whole(filepath, cwd, &data);
    if (!r && buf_printf(&url, "data:%s;base64,", mime) == 0 &&
        base64_encode(&url, (const unsigned char *)(data.data ? data.data : ""), data.len) == 0)
        r = fsjob_reply(observation_read(url.data, url.len, filepath, "default"));
    buf_free(&data);
    buf_free(&url);
    return r;
}

/* OpenHands' read_lines(all_lines, start, end) over `count` lines starting at offsets[]. */
static void read_lines_range(size_t count, long start, long end, size_t *from, size_t *to)
{
    long n = (long)count;
    start = start < 0 ? 0 : start;
    start = start > n ? n : start;
    if (end != -1) {
        end = end < 0 ? 0 : end;
        end = end > n ? n : end;
    }
    if (end == -1) {
        *from = (size_t)start;
        *to = count;
        return;
    }
    long begin = start < n - 2 ? start : n - 2;
    begin = begin < 0 ? 0 : begin;
    if (end < begin + 1)
        end = begin + 1;
    *from = (size_t)(begin < n ? begin : n);
    *to = (size_t)(end < n ? end : n);
    if (*to < *from)
        *to = *from;
}

static json_t *read_text(const char *filepath, const char *cwd, long start, long end)
{
    struct buf raw = BUF_INIT, text = BUF_INIT;
    size_t *offsets = NULL;
    json_t *r = read_whole(filepath, cwd, &raw);
    if (r)
        goto out;
    if (editor_encoding_detect(raw.data ? raw.data : "", raw.len) != EDITOR_ENC_UTF8) {
        r = error_reply("File could not be decoded as utf-8: %s.%s", filepath, "");
        goto out;
    }
    if (pytext_universal_newlines(&text, raw.data ? raw.data : "", raw.len) < 0)
        goto out;
    /* readlines(): each line keeps its "\n". */
    size_t count = editor_count_lines(text.data ? text.data : "", text.len);
    offsets = malloc((count + 1) * sizeof *offsets);
    if (!offsets)
        goto out;
    size_t k = 0;
    offsets[0] = 0;
    for (size_t i = 0; i < text.len; i++)
        if (text.data[i] == '\n')
            offsets[++k] = i + 1;
    offsets[count] = text.len;
    size_t from, to;
    read_lines_range(count, start, end, &from, &to);
    r = fsjob_reply(observation_read(text.data ? text.data + offsets[from] : "",
                                     offsets[to] - offsets[from], filepath, "default"));
out:
    free(offsets);
    buf_free(&raw);
    buf_free(&text);
    return r;
}

/* OpenHands refuses binary files before anything else; directories, missing and
 * unreadable paths count as text, and so do FIFOs and the like (never opened). */
static bool is_binary_file(const char *path)
{
    char head[FILEIO_SNIFF_BYTES];
    int n = fileio_sniff(path, head);
    return n > 0 && fileio_is_binary(head, (size_t)n);
}

static json_t *read_oh_aci(const struct fsjob_env *env, const struct read_args *a)
{
    if (pathname_is_absolute(a->path) && is_binary_file(a->path))
        return fsjob_reply(observation_error("ERROR_BINARY_FILE"));
    struct editor_env eenv = {.workspace_root = env->workdir, .history = env->history};
    struct editor_args ea = {.command = "view", .path = a->path, .view_range = a->view_range};
    struct editor_result res = {0};
    struct buf content = BUF_INIT;
    json_t *r = NULL;
    if (editor_run(&eenv, &ea, &res) == 0 &&
        (!res.failed || buf_append_str(&content, "ERROR:\n") == 0) &&
        buf_append(&content, res.output.data ? res.output.data : "", res.output.len) == 0)
        r = fsjob_reply(
            observation_read(content.data ? content.data : "", content.len, a->path, "oh_aci"));
    buf_free(&content);
    editor_result_free(&res);
    return r;
}

static json_t *read_in_child(const struct fsjob_env *env, const void *p)
{
    const struct read_args *a = p;
    if (a->oh_aci)
        return read_oh_aci(env, a);
    struct buf filepath = BUF_INIT;
    json_t *r = NULL;
    if (pathname_join(&filepath, env->cwd, a->path) < 0)
        return NULL;
    const char *mime = media_type(filepath.data);
    if (mime)
        r = read_media(filepath.data, env->cwd, mime);
    else if (is_binary_file(filepath.data))
        r = fsjob_reply(observation_error("ERROR_BINARY_FILE"));
    else
        r = read_text(filepath.data, env->cwd, a->start, a->end);
    buf_free(&filepath);
    return r;
}

enum action_status action_read_start(struct executor *ex, struct action_req *req)
{
    const struct read_args *a = req->args;
    return fsjob_start(ex, req, read_in_child, a->timeout);
}
