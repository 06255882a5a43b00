#include "ipython_runner.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn.h"

/* Reads the script frame from fd 3 and runs it, leaving nothing behind in __main__ but `_f`
 * (the buffered reader of fd 3, which the script takes and removes). */
#define RUNNER_BOOTSTRAP                                                                           \
    "import os as _o;_f=_o.fdopen(3,'rb');del _o;"                                                 \
    "exec(compile(_f.read(int(_f.readline())),'<paddock-ipython>','exec'))"
#define RUNNER_READS_PER_WAKEUP 16
#define RUNNER_HEADER_MAX 64       /* "<kind> <length>\n" */
#define RUNNER_REPLY_MAX (1 << 20) /* replies are short: sys.executable at most */

static char runner_read_buf[65536];

static void on_reply(struct evloop_watch *w, uint32_t events);
static void on_req(struct evloop_watch *w, uint32_t events);
static void on_out(struct evloop_watch *w, uint32_t events);

void ipython_runner_init(struct ipython_runner *r, struct evloop *loop,
                         const struct ipython_runner_options *opt, ipython_runner_fn on_event,
                         void *ctx)
{
    memset(r, 0, sizeof *r);
    r->opt = *opt;
    r->loop = loop;
    r->pid = -1;
    r->reply = (struct evloop_watch){.fd = -1, .fn = on_reply};
    r->req = (struct evloop_watch){.fd = -1, .fn = on_req};
    r->out = (struct evloop_watch){.fd = -1, .fn = on_out};
    r->on_event = on_event;
    r->ctx = ctx;
    capture_init(&r->output, 0, 0);
    capture_no_window(&r->output);
    ansi_filter_init(&r->ansi);
}

bool ipython_runner_running(const struct ipython_runner *r)
{
    return r->reply.fd >= 0;
}

static void close_watch(struct ipython_runner *r, struct evloop_watch *w, bool watched)
{
    if (w->fd < 0)
        return;
    if (watched)
        evloop_del(r->loop, w);
    close(w->fd);
    w->fd = -1;
}

static void close_pipes(struct ipython_runner *r)
{
    close_watch(r, &r->reply, true);
    close_watch(r, &r->req, r->writing);
    close_watch(r, &r->out, true);
    r->writing = false;
    buf_free(&r->wq);
    buf_free(&r->rq);
}

static void sink_output(void *ctx, const char *data, size_t n)
{
    struct ipython_runner *r = ctx;
    capture_append(&r->output, data, n);
}

void ipython_runner_clear_output(struct ipython_runner *r)
{
    capture_reset(&r->output);
    ansi_filter_init(&r->ansi);
    r->saw_output = false;
}

/* Reads output; false once the pipe is closed for good (it is then no longer watched). */
static bool read_output(struct ipython_runner *r, int max_reads)
{
    for (int i = 0; i < max_reads && r->out.fd >= 0; i++) {
        ssize_t n = read(r->out.fd, runner_read_buf, sizeof runner_read_buf);
        if (n > 0) {
            r->saw_output = true;
            if (r->tap)
                r->tap(r->tap_ctx, runner_read_buf, (size_t)n);
            ansi_filter_feed(&r->ansi, runner_read_buf, (size_t)n, sink_output, r);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return true;
        /* Every writer is gone (the runner and whatever it started). */
        close_watch(r, &r->out, true);
        return false;
    }
    return true;
}

static void on_out(struct evloop_watch *w, uint32_t events)
{
    struct ipython_runner *r = EVLOOP_CONTAINER_OF(w, struct ipython_runner, out);
    (void)events;
    read_output(r, RUNNER_READS_PER_WAKEUP);
}

static int exit_code_of(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return -1;
}

/* The runner broke its pipes: it ended (its status may be known already) or it must go. */
static void runner_gone(struct ipython_runner *r)
{
    int status = r->reaped ? r->status : -1;
    read_output(r, 1 << 20);
    ansi_filter_flush(&r->ansi, sink_output, r);
    if (r->pid > 0) {
        kill(r->pid, SIGKILL);
        if (waitpid(r->pid, &status, 0) < 0)
            status = -1;
    }
    r->pid = -1;
    r->reaped = false;
    r->exit_code = status == -1 ? -1 : exit_code_of(status);
    r->busy = false;
    close_pipes(r);
    r->on_event(r, IPYTHON_RUNNER_EXITED, r->ctx);
}

bool ipython_runner_reaped(struct ipython_runner *r, pid_t pid, int status)
{
    if (pid <= 0 || pid != r->pid)
        return false;
    /* EXITED follows from the reply pipe's end of file, once every reply is read. */
    r->pid = -1;
    r->reaped = true;
    r->status = status;
    return true;
}

static void flush_requests(struct ipython_runner *r)
{
    size_t done = 0;
    while (done < r->wq.len) {
        ssize_t n = write(r->req.fd, r->wq.data + done, r->wq.len - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN) /* the runner is gone; its reply pipe says so */
                done = r->wq.len;
            break;
        }
        done += (size_t)n;
    }
    memmove(r->wq.data, r->wq.data + done, r->wq.len - done);
    r->wq.len -= done;
    bool want = r->wq.len > 0;
    if (want == r->writing)
        return;
    if (want ? evloop_add(r->loop, &r->req, EPOLLOUT) == 0 : (evloop_del(r->loop, &r->req), true))
        r->writing = want;
}

static void on_req(struct evloop_watch *w, uint32_t events)
{
    struct ipython_runner *r = EVLOOP_CONTAINER_OF(w, struct ipython_runner, req);
    (void)events;
    flush_requests(r);
}

static int queue_frame(struct ipython_runner *r, const char *head, const char *data, size_t n)
{
    if (r->req.fd < 0)
        return -1;
    if (buf_append_str(&r->wq, head) < 0 || buf_append(&r->wq, data, n) < 0)
        return -1;
    flush_requests(r);
    return 0;
}

int ipython_runner_send(struct ipython_runner *r, const char *kind, const char *data, size_t n)
{
    char head[RUNNER_HEADER_MAX];
    snprintf(head, sizeof head, "%s %zu\n", kind, n);
    if (queue_frame(r, head, data, n) < 0)
        return -1;
    r->busy = true;
    return 0;
}

/* Handles the complete frames in rq; false when the runner went away meanwhile. */
static bool handle_frames(struct ipython_runner *r)
{
    pid_t pid = r->pid;
    while (r->rq.len > 0) {
        char *nl = memchr(r->rq.data, '\n', r->rq.len);
        if (!nl) {
            if (r->rq.len > RUNNER_HEADER_MAX)
                goto broken;
            return true;
        }
        char kind[16];
        size_t len;
        int used = 0;
        *nl = '\0';
        if (sscanf(r->rq.data, "%15s %zu%n", kind, &len, &used) != 2 ||
            used != (int)(nl - r->rq.data) || len > RUNNER_REPLY_MAX)
            goto broken;
        *nl = '\n';
        size_t head = (size_t)(nl - r->rq.data) + 1;
        if (r->rq.len - head < len)
            return true;
        char *payload = r->rq.data + head;
        if (strcmp(kind, "ready") == 0) {
            free(r->executable);
            r->executable = strndup(payload, len);
            r->ready = true;
        }
        memmove(r->rq.data, payload + len, r->rq.len - head - len);
        r->rq.len -= head + len;
        if (strcmp(kind, "ready") == 0) {
            r->on_event(r, IPYTHON_RUNNER_READY, r->ctx);
        } else if (strcmp(kind, "done") == 0) {
            /* Everything the cell printed is in the output pipe by now. */
            read_output(r, 1 << 20);
            ansi_filter_flush(&r->ansi, sink_output, r);
            r->busy = false;
            r->on_event(r, IPYTHON_RUNNER_DONE, r->ctx);
        }
        if (r->pid != pid || !ipython_runner_running(r))
            return false;
    }
    return true;
broken:
    /* Something else wrote to the reply pipe: this runner cannot be trusted any more. */
    runner_gone(r);
    return false;
}

static void read_replies(struct ipython_runner *r, int max_reads)
{
    for (int i = 0; i < max_reads && r->reply.fd >= 0; i++) {
        ssize_t n = read(r->reply.fd, runner_read_buf, sizeof runner_read_buf);
        if (n > 0) {
            if (buf_append(&r->rq, runner_read_buf, (size_t)n) < 0 || !handle_frames(r))
                return;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        runner_gone(r);
        return;
    }
}

static void on_reply(struct evloop_watch *w, uint32_t events)
{
    struct ipython_runner *r = EVLOOP_CONTAINER_OF(w, struct ipython_runner, reply);
    (void)events;
    read_replies(r, RUNNER_READS_PER_WAKEUP);
}

void ipython_runner_drain(struct ipython_runner *r)
{
    read_output(r, 1 << 20);
    read_replies(r, 1 << 20);
}

static void set_nonblock(int fd)
{
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

int ipython_runner_start(struct ipython_runner *r, const char *python)
{
    int req[2] = {-1, -1}, rep[2] = {-1, -1}, out[2] = {-1, -1};
    const char *base = strrchr(python, '/');
    char *argv[] = {(char *)(base ? base + 1 : python), "-u", "-c", RUNNER_BOOTSTRAP, NULL};
    int saved;

    ipython_runner_stop(r);
    if (pipe2(req, O_CLOEXEC) < 0 || pipe2(rep, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
        goto fail;
    struct spawn_options so = {
        .path = python,
        .argv = argv,
        .envp = r->opt.envp,
        .workdir = r->opt.workdir,
        .switch_user = r->opt.switch_user,
        .uid = r->opt.uid,
        .gid = r->opt.gid,
        .fds = {-1, out[1], out[1], req[0], rep[1]},
        .nfds = 5,
    };
    pid_t pid = spawn_process(&so);
    if (pid < 0)
        goto fail;
    close(req[0]);
    close(rep[1]);
    close(out[1]);
    set_nonblock(req[1]);
    set_nonblock(rep[0]);
    set_nonblock(out[0]);
    r->pid = pid;
    r->reaped = false;
    r->req.fd = req[1];
    r->reply.fd = rep[0];
    r->out.fd = out[0];
    r->ready = r->busy = false;
    free(r->executable);
    r->executable = NULL;
    ipython_runner_clear_output(r);
    if (evloop_add(r->loop, &r->reply, EPOLLIN) < 0) {
        close_watch(r, &r->reply, false);
        ipython_runner_stop(r);
        return -1;
    }
    if (evloop_add(r->loop, &r->out, EPOLLIN) < 0) {
        close_watch(r, &r->out, false);
        ipython_runner_stop(r);
        return -1;
    }
    char head[RUNNER_HEADER_MAX];
    snprintf(head, sizeof head, "%zu\n", strlen(ipython_runner_script));
    if (queue_frame(r, head, ipython_runner_script, strlen(ipython_runner_script)) < 0) {
        ipython_runner_stop(r);
        return -1;
    }
    return 0;
fail:
    saved = errno;
    for (int i = 0; i < 2; i++) {
        if (req[i] >= 0)
            close(req[i]);
        if (rep[i] >= 0)
            close(rep[i]);
        if (out[i] >= 0)
            close(out[i]);
    }
    errno = saved;
    return -1;
}

void ipython_runner_interrupt(struct ipython_runner *r)
{
    if (r->pid > 0)
        kill(-r->pid, SIGINT);
}

void ipython_runner_stop(struct ipython_runner *r)
{
    /* Its process group: whatever the cell started goes with it. */
    spawn_stop(r->pid, &r->pid);
    r->reaped = false;
    close_pipes(r);
    r->busy = false;
}

void ipython_runner_free(struct ipython_runner *r)
{
    ipython_runner_stop(r);
    capture_reset(&r->output);
    free(r->executable);
    r->executable = NULL;
}
