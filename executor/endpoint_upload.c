/* POST /upload_file?destination=<abs>&recursive=<bool>: a multipart/form-data body whose
 * field `file` is written into the destination directory (created if missing) with the
 * agent's permissions; a .zip file name or recursive=true unpacks it there instead.
 *
 * The body is parsed as it arrives (multipart.h). When the `file` part begins, a child with
 * the agent's permissions starts (agent_task.h); the part's bytes go to it through a pipe in
 * frames (a 4-byte little-endian length, then the bytes; a zero length ends the file), so a
 * client that disconnects or a body that turns out malformed never leaves a file behind: the
 * child writes a temporary file in the destination and only renames it into place (or
 * unpacks it) once the end frame arrives. While the pipe is full the connection is suspended,
 * so memory stays bounded whatever the upload's size. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_task.h"
#include "common/io.h"
#include "common/utf8.h"
#include "endpoint.h"
#include "executor.h"
#include "fileio.h"
#include "multipart.h"
#include "text.h"
#include "zip_read.h"

#define UPLOAD_STAGE_HIGH (256 * 1024) /* suspend the connection above this much staged */
#define UPLOAD_ZIP_MAX_TOTAL (1024ull * 1024 * 1024)
#define UPLOAD_ZIP_MAX_ENTRIES 100000
#define UPLOAD_CHUNK 65536

enum upload_phase {
    UPLOAD_BEFORE_FILE,
    UPLOAD_IN_FILE,
    UPLOAD_AFTER_FILE,
};

struct upload {
    struct request *rq;
    char *destination;
    bool recursive;
    struct multipart mp;
    enum upload_phase phase;
    bool in_other_part;
    char *filename; /* the base name written */
    bool is_zip;
    struct agent_task *task;
    struct buf stage; /* framed bytes not yet in the pipe, from stage_off */
    size_t stage_off;
    struct evloop_watch pipe_watch;
    bool watching;
    bool sink_dead; /* the child stopped reading (it failed) */
    bool end_sent;
    unsigned error_status; /* a client error found while reading the body */
    struct buf error;
};

/* What the child needs (it gets a copy of the parent's memory). */
struct upload_args {
    const char *destination;
    const char *filename;
    bool is_zip;
};

/* ---- the child, as the agent ------------------------------------------------------------- */

static int mkdir_p(const char *path)
{
    char *tmp = strdup(path);
    if (!tmp)
        return -1;
    for (char *p = tmp + 1;; p++) {
        if (*p && *p != '/')
            continue;
        char c = *p;
        *p = '\0';
        if (mkdir(tmp, 0755) < 0 && errno != EEXIST) {
            free(tmp);
            return -1;
        }
        if (!c)
            break;
        *p = c;
    }
    free(tmp);
    return 0;
}

/* Copies framed data from in_fd into fd until the end frame: 0; -1 with errno for a write
 * error; -2 when the frames stop before the end (the upload was abandoned). */
static int receive(int in_fd, int fd)
{
    static char chunk[UPLOAD_CHUNK];
    for (;;) {
        unsigned char head[4];
        if (io_read_full(in_fd, head, sizeof head, -1) < 0)
            return -2;
        uint32_t len = (uint32_t)head[0] | (uint32_t)head[1] << 8 | (uint32_t)head[2] << 16 |
                       (uint32_t)head[3] << 24;
        if (len == 0)
            return 0;
        while (len > 0) {
            size_t want = len < sizeof chunk ? len : sizeof chunk;
            if (io_read_full(in_fd, chunk, want, -1) < 0)
                return -2;
            if (io_write_all(fd, chunk, want) < 0)
                return -1;
            len -= (uint32_t)want;
        }
    }
}

static unsigned upload_child(void *arg, int in_fd, int out_fd, json_t **reply)
{
    const struct upload_args *a = arg;
    (void)out_fd;
    struct stat st;
    if (mkdir_p(a->destination) < 0)
        return agent_task_fail_errno(reply, errno, "Cannot create the destination %s",
                                     a->destination);
    int dir = open(a->destination, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
        if (errno == ENOTDIR || (stat(a->destination, &st) == 0 && !S_ISDIR(st.st_mode)))
            return agent_task_fail(reply, 400, "Destination is not a directory: %s",
                                   a->destination);
        return agent_task_fail_errno(reply, errno, "Cannot open the destination %s",
                                     a->destination);
    }
    /* A temporary name in the destination: renamed over the target only when complete. */
    char tmp[64];
    int fd = -1;
    for (int i = 0; i < 100 && fd < 0; i++) {
        snprintf(tmp, sizeof tmp, ".paddock-upload-%ld-%d", (long)getpid(), i);
        fd = openat(dir, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0)
        return agent_task_fail_errno(reply, errno, "Cannot write in %s", a->destination);
    if (a->is_zip)
        unlinkat(dir, tmp, 0); /* the archive is only read through fd */
    unsigned status = 200;
    int rc = receive(in_fd, fd);
    if (rc == -2) {
        status = agent_task_fail(reply, 400, "The upload was abandoned");
    } else if (rc < 0) {
        status =
            agent_task_fail_errno(reply, errno, "Cannot write %s/%s", a->destination, a->filename);
    } else if (a->is_zip) {
        struct buf err = BUF_INIT;
        struct zip_limits lim = {UPLOAD_ZIP_MAX_TOTAL, UPLOAD_ZIP_MAX_ENTRIES};
        enum zip_result zr = zip_extract(fd, dir, &lim, &err);
        if (zr == ZIP_REFUSED)
            status = agent_task_fail(reply, 400, "%s", err.data);
        else if (zr == ZIP_SYSTEM)
            status = agent_task_fail_errno(reply, errno, "%s (unpacking %s into %s)", err.data,
                                           a->filename, a->destination);
        buf_free(&err);
    } else if (renameat(dir, tmp, dir, a->filename) < 0) {
        status =
            agent_task_fail_errno(reply, errno, "Cannot write %s/%s", a->destination, a->filename);
    }
    if (status != 200 && !a->is_zip)
        unlinkat(dir, tmp, 0);
    close(fd);
    close(dir);
    return status;
}

/* ---- the parent ------------------------------------------------------------------------- */

static void set_error(struct upload *u, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_error(struct upload *u, unsigned status, const char *fmt, ...)
{
    if (u->error_status)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    u->error_status = status;
    utf8_repair(&u->error, msg, strlen(msg), 0, NULL);
}

static void unwatch(struct upload *u)
{
    if (u->watching) {
        evloop_del(u->rq->ex->loop, &u->pipe_watch);
        u->watching = false;
    }
}

/* The child is no longer wanted (the request failed or went away): it reads end of file
 * without the end frame, removes its temporary file and exits. */
static void drop_child(struct upload *u)
{
    unwatch(u);
    agent_task_release(u->task);
    u->task = NULL;
    buf_free(&u->stage);
    u->stage_off = 0;
}

/* Writes what the pipe takes; watches it while something is left. Once no more than
 * UPLOAD_STAGE_HIGH is left the connection may read again: that is decided here, wherever
 * the stage shrinks, because MHD goes on calling the data handler for the chunks of a
 * chunked body it already has even after the handler suspended the connection; such a call
 * may empty the stage (the child read meanwhile), and then no pipe watch is left to resume
 * the connection. */
static void flush(struct upload *u)
{
    while (u->task && !u->sink_dead && u->stage_off < u->stage.len) {
        ssize_t n =
            write(u->task->in_fd, u->stage.data + u->stage_off, u->stage.len - u->stage_off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            break;
        if (n < 0) { /* EPIPE: the child has given up; its result says why */
            u->sink_dead = true;
            break;
        }
        u->stage_off += (size_t)n;
    }
    if (u->sink_dead || u->stage_off == u->stage.len) {
        buf_reset(&u->stage);
        u->stage_off = 0;
        unwatch(u);
        endpoint_resume(u->rq);
        return;
    }
    if (u->stage_off > UPLOAD_STAGE_HIGH) {
        memmove(u->stage.data, u->stage.data + u->stage_off, u->stage.len - u->stage_off);
        u->stage.len -= u->stage_off;
        u->stage_off = 0;
    }
    if (!u->watching && evloop_add(u->rq->ex->loop, &u->pipe_watch, EPOLLOUT) == 0) {
        u->watching = true;
    } else if (!u->watching) {
        set_error(u, 500, "Cannot watch the upload pipe");
        drop_child(u);
    }
    if (u->stage.len - u->stage_off <= UPLOAD_STAGE_HIGH)
        endpoint_resume(u->rq);
}

static void on_pipe_writable(struct evloop_watch *w, uint32_t events)
{
    struct upload *u = EVLOOP_CONTAINER_OF(w, struct upload, pipe_watch);
    (void)events;
    flush(u);
}

static int stage_frame(struct upload *u, const char *data, size_t n)
{
    unsigned char head[4] = {(unsigned char)n, (unsigned char)(n >> 8), (unsigned char)(n >> 16),
                             (unsigned char)(n >> 24)};
    if (u->sink_dead || !u->task)
        return 0;
    if (buf_append(&u->stage, head, sizeof head) < 0 || buf_append(&u->stage, data, n) < 0) {
        set_error(u, 500, "Out of memory");
        return -1;
    }
    return 0;
}

static void on_child_done(struct agent_task *t)
{
    struct upload *u = t->owner;
    endpoint_resume(u->rq);
}

static int start_child(struct upload *u)
{
    struct upload_args *a = malloc(sizeof *a);
    if (!a) {
        set_error(u, 500, "Out of memory");
        return -1;
    }
    /* The child's copy of memory holds *a; the parent's is freed right after the fork. */
    *a = (struct upload_args){u->destination, u->filename, u->is_zip};
    struct buf err = BUF_INIT;
    u->task = agent_task_start(u->rq->ex, upload_child, a, AGENT_TASK_INPUT, &err);
    free(a);
    if (!u->task) {
        set_error(u, 500, "Cannot start the upload: %s", err.data ? err.data : "");
        buf_free(&err);
        return -1;
    }
    u->task->owner = u;
    u->task->on_finish = on_child_done;
    u->pipe_watch.fd = u->task->in_fd;
    u->pipe_watch.fn = on_pipe_writable;
    return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int on_part_begin(void *ctx, const char *name, const char *filename)
{
    struct upload *u = ctx;
    u->in_other_part = u->phase != UPLOAD_BEFORE_FILE || strcmp(name, "file") != 0;
    if (u->in_other_part)
        return 0; /* other fields, and a second `file`, are ignored */
    if (!filename || !*filename) {
        set_error(u, 400, "Missing file name in form field: file");
        return -1;
    }
    const char *slash = strrchr(filename, '/');
    const char *base = slash ? slash + 1 : filename;
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
        set_error(u, 400, "Invalid file name: %s", filename);
        return -1;
    }
    u->filename = strdup(base);
    if (!u->filename) {
        set_error(u, 500, "Out of memory");
        return -1;
    }
    /* As OpenHands: the name decides, and recursive asks for a zip. */
    u->is_zip = ends_with(base, ".zip");
    if (u->recursive && !u->is_zip) {
        set_error(u, 400, "Uploaded file is not a zip");
        return -1;
    }
    u->phase = UPLOAD_IN_FILE;
    return start_child(u);
}

static int on_part_data(void *ctx, const char *data, size_t n)
{
    struct upload *u = ctx;
    if (u->in_other_part || u->phase != UPLOAD_IN_FILE)
        return 0;
    return stage_frame(u, data, n);
}

static int on_part_end(void *ctx)
{
    struct upload *u = ctx;
    if (!u->in_other_part && u->phase == UPLOAD_IN_FILE)
        u->phase = UPLOAD_AFTER_FILE;
    return 0;
}

static void free_upload(void *state)
{
    struct upload *u = state;
    drop_child(u);
    multipart_free(&u->mp);
    buf_free(&u->error);
    free(u->destination);
    free(u->filename);
    free(u);
}

/* FastAPI's bool query values. */
static int parse_bool(const char *v, bool *out)
{
    static const char *const yes[] = {"true", "1", "yes", "on"}, *const no[] = {"false", "0", "no",
                                                                                "off"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(v, yes[i]) == 0)
            return *out = true, 0;
        if (strcasecmp(v, no[i]) == 0)
            return *out = false, 0;
    }
    return -1;
}

enum MHD_Result endpoint_upload_start(struct request *rq)
{
    const char *dest = endpoint_query(rq, "destination");
    const char *rec = endpoint_query(rq, "recursive");
    bool recursive = false;
    char boundary[MULTIPART_BOUNDARY_MAX + 1];
    if (!dest || !*dest)
        dest = "/";
    /* A 400 (OpenHands wraps its own 400 in a 500). */
    if (dest[0] != '/')
        return endpoint_reply_detail(rq, MHD_HTTP_BAD_REQUEST,
                                     "Destination must be an absolute path");
    if (rec && parse_bool(rec, &recursive) < 0)
        return endpoint_reply_detail(rq, MHD_HTTP_BAD_REQUEST,
                                     "Invalid query parameter: recursive (expected a boolean)");
    if (multipart_boundary(endpoint_header(rq, MHD_HTTP_HEADER_CONTENT_TYPE), boundary,
                           sizeof boundary) < 0)
        return endpoint_reply_detail(
            rq, MHD_HTTP_BAD_REQUEST,
            "Invalid Content-Type: expected multipart/form-data with a boundary");
    struct upload *u = calloc(1, sizeof *u);
    if (!u || !(u->destination = strdup(dest))) {
        free(u);
        return endpoint_reply_detail(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "Out of memory");
    }
    u->rq = rq;
    u->recursive = recursive;
    struct multipart_handler h = {on_part_begin, on_part_data, on_part_end, u};
    multipart_init(&u->mp, boundary, &h);
    rq->state = u;
    rq->state_free = free_upload;
    return MHD_YES;
}

int endpoint_upload_data(struct request *rq, const char *data, size_t n)
{
    struct upload *u = rq->state;
    if (u->error_status)
        return 0; /* the rest is read and dropped; the error is the reply */
    struct buf err = BUF_INIT;
    if (multipart_feed(&u->mp, data, n, &err) < 0) {
        set_error(u, 400, "Invalid multipart body: %s", err.data ? err.data : "refused");
        buf_free(&err);
    }
    if (u->error_status) {
        drop_child(u);
        endpoint_resume(rq); /* it may be a call while suspended: the rest is read and dropped */
        return 0;
    }
    flush(u);
    if (u->stage.len - u->stage_off > UPLOAD_STAGE_HIGH)
        endpoint_suspend(rq); /* until the pipe takes it */
    return 0;
}

static enum MHD_Result reply_done(struct request *rq, struct upload *u)
{
    struct agent_task *t = u->task;
    if (t->status != MHD_HTTP_OK) {
        json_t *r = t->reply;
        t->reply = NULL;
        return endpoint_reply_json(rq, t->status, r);
    }
    struct buf name = BUF_INIT, dest = BUF_INIT;
    utf8_repair(&name, u->filename, strlen(u->filename), 0, NULL);
    utf8_repair(&dest, u->destination, strlen(u->destination), 0, NULL);
    enum MHD_Result rc = endpoint_reply_json(
        rq, MHD_HTTP_OK,
        json_pack("{s:s, s:s, s:b}", "filename", name.data ? name.data : "", "destination",
                  dest.data ? dest.data : "", "recursive", u->recursive));
    buf_free(&name);
    buf_free(&dest);
    return rc;
}

enum MHD_Result endpoint_upload(struct request *rq)
{
    struct upload *u = rq->state;
    if (!u->error_status && !multipart_complete(&u->mp))
        set_error(u, 400, "Invalid multipart body: it ends before the closing boundary");
    if (!u->error_status && u->phase == UPLOAD_BEFORE_FILE)
        set_error(u, 400, "Missing form field: file");
    if (u->error_status) {
        drop_child(u);
        return endpoint_reply_detail(rq, u->error_status, "%s", u->error.data);
    }
    if (u->task->finished)
        return reply_done(rq, u);
    if (endpoint_stopping(rq))
        return endpoint_reply_stopping(rq);
    if (!u->end_sent) {
        u->end_sent = true;
        if (stage_frame(u, "", 0) < 0) {
            drop_child(u);
            return endpoint_reply_detail(rq, u->error_status, "%s", u->error.data);
        }
        flush(u);
    }
    endpoint_suspend(rq); /* until the child reports */
    return MHD_YES;
}
