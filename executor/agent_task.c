#include "agent_task.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"
#include "common/io.h"
#include "common/utf8.h"
#include "executor.h"
#include "fileio.h"
#include "jalloc.h"
#include "spawn.h"
#include "text.h"

#define AGENT_TASK_PIPE_SIZE (1024 * 1024)
#define AGENT_TASK_RESULT_FD 3

static unsigned fail_v(json_t **reply, unsigned status, const char *suffix, const char *fmt,
                       va_list ap)
{
    struct buf raw = BUF_INIT, clean = BUF_INIT;
    char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) >= 0) {
        buf_append_str(&raw, msg);
        free(msg);
    }
    if (suffix)
        buf_append_str(&raw, suffix);
    if (raw.data)
        utf8_repair(&clean, raw.data, raw.len, 0, NULL);
    json_decref(*reply);
    *reply = json_pack("{s:s}", "detail", clean.data ? clean.data : "");
    buf_free(&raw);
    buf_free(&clean);
    return status;
}

unsigned agent_task_fail(json_t **reply, unsigned status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_v(reply, status, NULL, fmt, ap);
    va_end(ap);
    return status;
}

unsigned agent_task_fail_errno(json_t **reply, int err, const char *fmt, ...)
{
    unsigned status;
    switch (err) {
    case EACCES:
    case EPERM:
    case EROFS:
        status = 403;
        break;
    case ENOENT:
        status = 404;
        break;
    case ENOTDIR:
    case EISDIR:
    case ELOOP:
    case EEXIST:
    case ENAMETOOLONG:
        status = 400;
        break;
    case ENOSPC:
    case EDQUOT:
        status = 507;
        break;
    default:
        status = 500;
    }
    char suffix[256];
    snprintf(suffix, sizeof suffix, ": %s", strerror(err));
    va_list ap;
    va_start(ap, fmt);
    fail_v(reply, status, suffix, fmt, ap);
    va_end(ap);
    return status;
}

/* "<status>\n<JSON>" on the result pipe. */
static void child_report(unsigned status, json_t *reply)
{
    char head[16];
    char *text = reply ? jalloc_dumps(reply, JSON_COMPACT) : NULL;
    int n = snprintf(head, sizeof head, "%u\n", status);
    if (io_write_all(AGENT_TASK_RESULT_FD, head, (size_t)n) == 0 && text)
        io_write_all(AGENT_TASK_RESULT_FD, text, strlen(text));
    free(text);
}

/* The child's own descriptors: input on 0, output on 1, the result on 3, stderr kept. */
static int child_fds(int in_fd, int out_fd, int res_fd)
{
    int r = fcntl(res_fd, F_DUPFD, 10);
    int i = in_fd >= 0 ? fcntl(in_fd, F_DUPFD, 10) : -1;
    int o = out_fd >= 0 ? fcntl(out_fd, F_DUPFD, 10) : -1;
    if (r < 0 || (in_fd >= 0 && i < 0) || (out_fd >= 0 && o < 0))
        return -1;
    if (dup2(r, AGENT_TASK_RESULT_FD) < 0)
        return -1;
    if (i >= 0 ? dup2(i, 0) < 0 : close(0) < 0 && errno != EBADF)
        return -1;
    if (o >= 0 ? dup2(o, 1) < 0 : close(1) < 0 && errno != EBADF)
        return -1;
    spawn_close_from(AGENT_TASK_RESULT_FD + 1);
    return 0;
}

static _Noreturn void child_run(struct executor *ex, pid_t parent, agent_task_fn fn, void *arg,
                                int in_fd, int out_fd, int res_fd)
{
    /* The agent may not see the key, not even in this process's memory. */
    if (ex->api_key) {
        auth_key_free(ex->api_key);
        ex->api_key = NULL;
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (child_fds(in_fd, out_fd, res_fd) < 0)
        _exit(126);
    if (ex->cfg.switch_user && spawn_become_user(ex->cfg.uid, ex->cfg.gid) < 0) {
        json_t *r = json_pack("{s:s}", "detail", "Cannot switch to the agent user");
        child_report(500, r);
        _exit(0);
    }
    /* After the switch (which clears both): not dumpable, and gone with the executor. */
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != parent)
        _exit(1);
    umask(022);
    json_t *reply = NULL;
    unsigned status = fn(arg, in_fd >= 0 ? 0 : -1, out_fd >= 0 ? 1 : -1, &reply);
    if (out_fd >= 0)
        close(1); /* end of file for the reader before the result says "done" */
    child_report(status, reply);
    _exit(0);
}

static void finish(struct agent_task *t)
{
    evloop_del(t->loop, &t->watch);
    close(t->watch.fd);
    t->watch.fd = -1;
    t->finished = true;
    t->status = 500;
    char *nl = t->result.data ? memchr(t->result.data, '\n', t->result.len) : NULL;
    if (nl) {
        char *end;
        unsigned long st = strtoul(t->result.data, &end, 10);
        size_t rest = t->result.len - (size_t)(nl + 1 - t->result.data);
        json_t *reply = rest ? json_loadb(nl + 1, rest, 0, NULL) : NULL;
        if (end == nl && st >= 100 && st <= 599 && (reply || !rest)) {
            t->status = (unsigned)st;
            t->reply = reply;
        } else {
            json_decref(reply);
        }
    }
    if (t->status == 500 && !t->reply)
        t->reply = json_pack("{s:s}", "detail", "The file operation ended without a result");
    buf_free(&t->result);
    if (t->on_finish)
        t->on_finish(t); /* last: it may free t */
}

static void on_result(struct evloop_watch *w, uint32_t events)
{
    struct agent_task *t = EVLOOP_CONTAINER_OF(w, struct agent_task, watch);
    char chunk[65536];
    (void)events;
    for (;;) {
        ssize_t n = read(w->fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n > 0 && t->result.len + (size_t)n <= AGENT_TASK_REPLY_MAX &&
            buf_append(&t->result, chunk, (size_t)n) == 0)
            continue;
        if (n > 0) {
            /* Too much, or no memory: stop the child and fail. */
            kill(t->pid, SIGKILL);
            buf_free(&t->result);
        }
        finish(t);
        return;
    }
}

static void set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

struct agent_task *agent_task_start(struct executor *ex, agent_task_fn fn, void *arg,
                                    unsigned flags, struct buf *err)
{
    int res[2] = {-1, -1}, in[2] = {-1, -1}, out[2] = {-1, -1};
    struct agent_task *t = calloc(1, sizeof *t);
    if (!t || pipe2(res, O_CLOEXEC) < 0 ||
        ((flags & AGENT_TASK_INPUT) && pipe2(in, O_CLOEXEC) < 0) ||
        ((flags & AGENT_TASK_OUTPUT) && pipe2(out, O_CLOEXEC) < 0)) {
        buf_printf(err, "cannot make pipes: %s", strerror(errno));
        goto fail;
    }
    pid_t parent = getpid();
    t->pid = fork();
    if (t->pid < 0) {
        buf_printf(err, "cannot fork: %s", strerror(errno));
        goto fail;
    }
    if (t->pid == 0)
        child_run(ex, parent, fn, arg, in[0], out[1], res[1]);
    close(res[1]);
    if (in[0] >= 0)
        close(in[0]);
    if (out[1] >= 0)
        close(out[1]);
    t->in_fd = in[1];
    t->out_fd = out[0];
    t->loop = ex->loop;
    t->watch.fd = res[0];
    t->watch.fn = on_result;
    set_nonblock(res[0]);
    for (int i = 0; i < 2; i++) {
        int fd = i ? t->out_fd : t->in_fd;
        if (fd >= 0) {
            set_nonblock(fd);
            fcntl(fd, F_SETPIPE_SZ, AGENT_TASK_PIPE_SIZE); /* best effort */
        }
    }
    if (evloop_add(ex->loop, &t->watch, EPOLLIN) < 0) {
        buf_printf(err, "cannot watch the file operation: %s", strerror(errno));
        kill(t->pid, SIGKILL);
        close(res[0]);
        if (t->in_fd >= 0)
            close(t->in_fd);
        if (t->out_fd >= 0)
            close(t->out_fd);
        free(t);
        return NULL;
    }
    return t;
fail:
    for (int i = 0; i < 2; i++) {
        if (res[i] >= 0)
            close(res[i]);
        if (in[i] >= 0)
            close(in[i]);
        if (out[i] >= 0)
            close(out[i]);
    }
    free(t);
    return NULL;
}

void agent_task_close_input(struct agent_task *t)
{
    if (t && t->in_fd >= 0) {
        close(t->in_fd);
        t->in_fd = -1;
    }
}

static void release(struct agent_task *t, bool kill_child)
{
    if (!t)
        return;
    if (!t->finished && !kill_child) {
        evloop_del(t->loop, &t->watch);
        close(t->watch.fd);
    } else if (!t->finished) {
        /* Kill it only while its end of the result pipe is open: then it has not exited, and
         * the pid (not reaped) is still its own. */
        char chunk[4096];
        ssize_t n;
        while ((n = read(t->watch.fd, chunk, sizeof chunk)) > 0 || (n < 0 && errno == EINTR))
            ;
        if (n < 0 && errno == EAGAIN)
            kill(t->pid, SIGKILL);
        evloop_del(t->loop, &t->watch);
        close(t->watch.fd);
    }
    agent_task_close_input(t);
    if (t->out_fd >= 0)
        close(t->out_fd);
    json_decref(t->reply);
    buf_free(&t->result);
    free(t);
}

void agent_task_free(struct agent_task *t)
{
    release(t, true);
}

void agent_task_release(struct agent_task *t)
{
    release(t, false);
}
