/* GET /download_files?path=<abs>: the directory as a zip (application/zip, attachment
 * "<basename>.zip"), entries relative to it, files deflated, directories as entries.
 *
 * A child with the agent's permissions (agent_task.h) walks the tree and writes the archive
 * into a pipe as it compresses (zip_write.h); the reply streams from that pipe (chunked), so
 * nothing is built in memory or on disk whatever the size. The walk opens every name relative
 * to its directory with O_NOFOLLOW and skips symlinks, FIFOs, sockets and devices, so it never
 * leaves the tree; names the agent cannot open are skipped. A regular file gives a zip holding
 * that one file (OpenHands sends an empty zip). Errors before the first byte get their status
 * (400 relative path, 404 missing, 403 not permitted); an error after it cuts the stream (no
 * final chunk), so the client sees a broken transfer, never a short archive that looks whole. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_task.h"
#include "common/io.h"
#include "endpoint.h"
#include "executor.h"
#include "fileio.h"
#include "zip_write.h"

#define DOWNLOAD_MAX_DEPTH 256
#define DOWNLOAD_BLOCK 65536

struct download {
    struct request *rq;
    char *path;
    struct agent_task *task;
    struct evloop_watch watch; /* the data pipe */
    bool watching;
    bool streaming;            /* the 200 and its headers are queued */
    char head[DOWNLOAD_BLOCK]; /* first bytes, read while waiting to know the status */
    size_t head_len, head_off;
    bool eof;
};

/* ---- the child, as the agent ------------------------------------------------------------- */

static int sink_fd(void *ctx, const void *data, size_t n)
{
    return io_write_all(*(int *)ctx, data, n);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dirfd, sorted (a stable archive order); NULL with errno. */
static char **read_names(int dirfd, size_t *count)
{
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (n + 1 >= cap) {
            cap = cap ? cap * 2 : 64;
            char **p = realloc(names, cap * sizeof *p);
            if (!p)
                break;
            names = p;
        }
        if (!(names[n] = strdup(de->d_name)))
            break;
        n++;
    }
    closedir(d);
    if (!names && !(names = calloc(1, sizeof *names)))
        return NULL;
    qsort(names, n, sizeof *names, compare_names);
    *count = n;
    return names;
}

static bool skippable(int err)
{
    /* Gone meanwhile, not permitted, or swapped for a symlink: leave it out. */
    return err == ENOENT || err == EACCES || err == EPERM || err == ELOOP || err == ENOTDIR;
}

/* Adds what dirfd holds, names prefixed with prefix. 0, or -1 with errno. */
static int walk(struct zip_writer *zw, int dirfd, struct buf *prefix, int depth)
{
    size_t n = 0;
    char **names = read_names(dirfd, &n);
    int rc = 0;
    if (!names)
        return skippable(errno) ? 0 : -1;
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct stat st;
        size_t keep = prefix->len;
        if (fstatat(dirfd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            buf_append_str(prefix, names[i]) < 0)
            goto next;
        if (S_ISDIR(st.st_mode)) {
            int sub = openat(dirfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0) {
                rc = skippable(errno) ? 0 : -1;
                goto next;
            }
            if (buf_append_str(prefix, "/") < 0 ||
                zip_writer_add_dir(zw, prefix->data, st.st_mtime, st.st_mode) < 0)
                rc = -1;
            else if (depth >= DOWNLOAD_MAX_DEPTH)
                rc = (errno = ELOOP, -1);
            else
                rc = walk(zw, sub, prefix, depth + 1);
            int saved = errno;
            close(sub);
            errno = saved;
        } else if (S_ISREG(st.st_mode)) {
            int f = openat(dirfd, names[i], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
            if (f < 0) {
                rc = skippable(errno) ? 0 : -1;
                goto next;
            }
            /* Opened what stat saw? (A FIFO swapped in would have blocked a plain open.) */
            if (fstat(f, &st) == 0 && S_ISREG(st.st_mode))
                rc = zip_writer_add_file(zw, prefix->data, f, (uint64_t)st.st_size, st.st_mtime,
                                         st.st_mode);
            int saved = errno;
            close(f);
            errno = saved;
        }
        /* symlinks, FIFOs, sockets, devices: not archived */
    next:
        prefix->len = keep;
        if (prefix->data)
            prefix->data[keep] = '\0';
    }
    int saved = errno;
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    errno = saved;
    return rc;
}

static unsigned download_child(void *arg, int in_fd, int out_fd, json_t **reply)
{
    const char *path = arg;
    (void)in_fd;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return agent_task_fail(reply, 404, "File not found: %s", path);
        return agent_task_fail_errno(reply, errno, "Cannot read %s", path);
    }
    if (fstat(fd, &st) < 0 || (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))) {
        close(fd);
        return agent_task_fail(reply, 400, "Not a directory or regular file: %s", path);
    }
    struct zip_writer *zw = zip_writer_new(sink_fd, &out_fd, -1);
    struct buf prefix = BUF_INIT;
    int rc = -1;
    if (zw && S_ISDIR(st.st_mode)) {
        rc = buf_append(&prefix, "", 0) < 0 ? -1 : walk(zw, fd, &prefix, 0);
    } else if (zw) {
        const char *slash = strrchr(path, '/');
        rc = zip_writer_add_file(zw, slash ? slash + 1 : path, fd, (uint64_t)st.st_size,
                                 st.st_mtime, st.st_mode);
    }
    if (rc == 0)
        rc = zip_writer_finish(zw);
    int saved = errno;
    zip_writer_free(zw);
    buf_free(&prefix);
    close(fd);
    if (rc < 0)
        return agent_task_fail_errno(reply, saved, "Cannot archive %s", path);
    return 200;
}

/* ---- the parent ------------------------------------------------------------------------- */

static void unwatch(struct download *d)
{
    if (d->watching) {
        evloop_del(d->rq->ex->loop, &d->watch);
        d->watching = false;
    }
}

static void watch(struct download *d)
{
    if (!d->watching && evloop_add(d->rq->ex->loop, &d->watch, EPOLLIN) == 0)
        d->watching = true;
}

/* Before the reply: keep the first bytes (they mean "the archive began"); at the pipe's end
 * of file, wait for the child's result instead. While streaming: just wake the reader. */
static void on_data(struct evloop_watch *w, uint32_t events)
{
    struct download *d = EVLOOP_CONTAINER_OF(w, struct download, watch);
    (void)events;
    unwatch(d);
    if (!d->streaming && d->head_len == 0 && !d->eof) {
        ssize_t n;
        do
            n = read(d->task->out_fd, d->head, sizeof d->head);
        while (n < 0 && errno == EINTR);
        if (n < 0 && errno == EAGAIN) {
            watch(d);
            return;
        }
        if (n <= 0) {
            d->eof = true;
            return; /* the result will come */
        }
        d->head_len = (size_t)n;
    }
    endpoint_resume(d->rq);
}

static void on_child_done(struct agent_task *t)
{
    struct download *d = t->owner;
    endpoint_resume(d->rq);
}

static ssize_t read_archive(void *cls, uint64_t pos, char *out, size_t max)
{
    struct download *d = cls;
    (void)pos;
    if (endpoint_stopping(d->rq))
        return MHD_CONTENT_READER_END_WITH_ERROR;
    if (d->head_off < d->head_len) {
        size_t n = d->head_len - d->head_off < max ? d->head_len - d->head_off : max;
        memcpy(out, d->head + d->head_off, n);
        d->head_off += n;
        return (ssize_t)n;
    }
    ssize_t n = 0;
    if (!d->eof) {
        do
            n = read(d->task->out_fd, out, max);
        while (n < 0 && errno == EINTR);
        if (n > 0)
            return n;
        if (n < 0 && errno != EAGAIN)
            return MHD_CONTENT_READER_END_WITH_ERROR;
        if (n < 0) { /* nothing yet: sleep until the pipe has more */
            watch(d);
            endpoint_suspend(d->rq);
            return 0;
        }
        d->eof = true;
    }
    if (!d->task->finished) { /* all read: the result says whether it is whole */
        endpoint_suspend(d->rq);
        return 0;
    }
    return d->task->status == MHD_HTTP_OK ? MHD_CONTENT_READER_END_OF_STREAM
                                          : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void free_download(void *state)
{
    struct download *d = state;
    unwatch(d);
    agent_task_free(d->task);
    free(d->path);
    free(d);
}

/* "<basename>.zip" for the header: quotes, backslashes, controls and non-ASCII as '_'. */
static void zip_name(const char *path, char *out, size_t outlen)
{
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        len--;
    const char *base = path;
    for (size_t i = 0; i < len; i++)
        if (path[i] == '/')
            base = path + i + 1;
    size_t bl = (size_t)(path + len - base), o = 0;
    if (bl == 0) {
        base = "root";
        bl = 4;
    }
    for (size_t i = 0; i < bl && o + 5 < outlen; i++) {
        unsigned char c = (unsigned char)base[i];
        out[o++] = c < 0x20 || c >= 0x7f || c == '"' || c == '\\' ? '_' : (char)c;
    }
    snprintf(out + o, outlen - o, ".zip");
}

static enum MHD_Result start_stream(struct request *rq, struct download *d)
{
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, DOWNLOAD_BLOCK, read_archive, d, NULL);
    if (!resp)
        return endpoint_reply_detail(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "Out of memory");
    char name[300], disposition[340];
    zip_name(d->path, name, sizeof name);
    snprintf(disposition, sizeof disposition, "attachment; filename=\"%s\"", name);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/zip");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_DISPOSITION, disposition);
    d->streaming = true;
    return endpoint_reply_response(rq, MHD_HTTP_OK, resp);
}

enum MHD_Result endpoint_download(struct request *rq)
{
    struct download *d = rq->state;
    if (d) { /* resumed */
        if (endpoint_stopping(rq))
            return endpoint_reply_stopping(rq);
        if (d->task->finished && d->task->status != MHD_HTTP_OK) {
            json_t *r = d->task->reply;
            d->task->reply = NULL;
            return endpoint_reply_json(rq, d->task->status, r);
        }
        if (d->head_len > 0 || d->task->finished)
            return start_stream(rq, d);
        endpoint_suspend(rq);
        return MHD_YES;
    }
    const char *path = endpoint_query(rq, "path");
    if (!path)
        return endpoint_reply_detail(rq, MHD_HTTP_BAD_REQUEST, "Missing query parameter: path");
    if (path[0] != '/')
        return endpoint_reply_detail(rq, MHD_HTTP_BAD_REQUEST, "Path must be an absolute path");
    d = calloc(1, sizeof *d);
    if (!d || !(d->path = strdup(path))) {
        free(d);
        return endpoint_reply_detail(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "Out of memory");
    }
    d->rq = rq;
    rq->state = d;
    rq->state_free = free_download;
    struct buf err = BUF_INIT;
    d->task = agent_task_start(rq->ex, download_child, d->path, AGENT_TASK_OUTPUT, &err);
    if (!d->task) {
        enum MHD_Result rc =
            endpoint_reply_detail(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "Cannot archive %s: %s",
                                  d->path, err.data ? err.data : "");
        buf_free(&err);
        return rc;
    }
    d->task->owner = d;
    d->task->on_finish = on_child_done;
    d->watch.fd = d->task->out_fd;
    d->watch.fn = on_data;
    watch(d);
    endpoint_suspend(rq);
    return MHD_YES;
}
