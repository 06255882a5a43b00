#include "fsjob.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "common/io.h"
#include "executor.h"
#include "fileio.h"
#include "jalloc.h"
#include "observation.h"
#include "spawn.h"
#include "text.h"

/* The child's reply pipe, after it closed everything else. */
#define CHILD_REPLY_FD 3

struct fsjob_state {
    struct executor *ex;
    struct editor_history *history;
    struct evloop_watch pipe; /* read end, -1 when no job runs */
    struct evloop_watch timer;
    struct action_req *req;
    pid_t pid;
    double timeout;
    struct buf reply;
};

json_t *fsjob_reply(json_t *obs)
{
    return obs ? json_pack("{s:o}", "observation", obs) : NULL;
}

/* ---- the child -------------------------------------------------------------------------- */

static void send_reply(json_t *reply)
{
    char *text = reply ? jalloc_dumps(reply, JSON_COMPACT) : NULL;
    if (text)
        io_write_all(CHILD_REPLY_FD, text, strlen(text));
    free(text);
    json_decref(reply);
}

static void child_main(struct fsjob_state *s, int reply_fd, fsjob_fn fn, const void *args,
                       pid_t parent)
{
    const struct executor_config *cfg = &s->ex->cfg;
    if (reply_fd != CHILD_REPLY_FD) {
        if (dup2(reply_fd, CHILD_REPLY_FD) < 0)
            _exit(1);
        close(reply_fd);
    }
    /* Nothing of the executor's (its socket, the pty, the epoll fd) stays reachable through
     * /proc/self/fd or /dev/fd. */
    spawn_close_from(CHILD_REPLY_FD + 1);
    if (cfg->switch_user && spawn_become_user(cfg->uid, cfg->gid) < 0) {
        send_reply(fsjob_reply(
            observation_error("ERROR: The file operation could not switch to the agent user.")));
        _exit(1);
    }
    /* Non-dumpable: /proc/self/{environ,mem,fd,...} of this process become root's, so the
     * agent cannot read the executor's memory through it, nor can its processes ptrace it. */
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    /* After the uid change, which clears it. */
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != parent)
        _exit(1);
    const char *cwd = s->ex->shell.marker.cwd[0] ? s->ex->shell.marker.cwd : cfg->working_dir;
    struct fsjob_env env = {.cwd = cwd,
                            .workdir = cfg->working_dir,
                            .history = s->history,
                            .auto_lint = cfg->auto_lint};
    send_reply(fn(&env, args));
    _exit(0);
}

/* ---- the executor side ------------------------------------------------------------------ */

static void stop_watching(struct fsjob_state *s)
{
    evloop_timer_at(&s->timer, INFINITY);
    if (s->pipe.fd >= 0) {
        evloop_del(s->ex->loop, &s->pipe);
        close(s->pipe.fd);
        s->pipe.fd = -1;
    }
}

static void apply_history(struct fsjob_state *s, const json_t *h)
{
    const char *op = json_string_value(json_object_get(h, "op"));
    const char *path = json_string_value(json_object_get(h, "path"));
    const json_t *text = json_object_get(h, "text");
    if (!op || !path)
        return;
    if (strcmp(op, "push") == 0 && json_is_string(text))
        editor_history_push(s->history, path, json_string_value(text), json_string_length(text));
    else if (strcmp(op, "pop") == 0)
        editor_history_pop(s->history, path);
}

static void finish(struct fsjob_state *s, json_t *obs)
{
    struct action_req *req = s->req;
    stop_watching(s);
    buf_free(&s->reply);
    s->req = NULL;
    s->pid = -1;
    req->result = obs;
    action_finish(s->ex, req);
}

/* The child closed its end: it is done (or died). */
static void finish_from_reply(struct fsjob_state *s)
{
    json_t *reply =
        s->reply.len ? json_loadb(s->reply.data, s->reply.len, JSON_ALLOW_NUL, NULL) : NULL;
    json_t *obs = json_object_get(reply, "observation");
    if (json_is_object(obs)) {
        json_incref(obs);
        apply_history(s, json_object_get(reply, "history"));
    } else {
        obs = observation_error("ERROR: The file operation failed: its process ended without a "
                                "result (out of memory?).");
    }
    json_decref(reply);
    finish(s, obs);
}

/* Reads what the pipe has; true at end of file. */
static bool drain(struct fsjob_state *s)
{
    for (;;) {
        if (buf_reserve(&s->reply, 65536) < 0)
            return true; /* the truncated reply fails to parse: reported as a failure */
        ssize_t n = read(s->pipe.fd, s->reply.data + s->reply.len, s->reply.cap - s->reply.len - 1);
        if (n > 0) {
            s->reply.len += (size_t)n;
            s->reply.data[s->reply.len] = '\0';
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        return n == 0 || errno != EAGAIN;
    }
}

static void on_pipe(struct evloop_watch *w, uint32_t events)
{
    struct fsjob_state *s = EVLOOP_CONTAINER_OF(w, struct fsjob_state, pipe);
    (void)events;
    if (s->req && drain(s))
        finish_from_reply(s);
}

static void on_timer(struct evloop_watch *w, uint32_t events)
{
    struct fsjob_state *s = EVLOOP_CONTAINER_OF(w, struct fsjob_state, timer);
    (void)events;
    evloop_timer_ack(w);
    if (!s->req)
        return;
    /* A reply that is complete wins over the deadline. The write end is open until the
     * child exits, so no end of file means the pid is still the child's. */
    if (drain(s)) {
        finish_from_reply(s);
        return;
    }
    kill(s->pid, SIGKILL);
    char num[64], msg[160];
    text_format_float(num, sizeof num, s->timeout);
    snprintf(msg, sizeof msg,
             "ERROR: The file operation did not finish within %s seconds and was stopped.", num);
    finish(s, observation_error(msg));
}

enum action_status fsjob_start(struct executor *ex, struct action_req *req, fsjob_fn fn,
                               double timeout)
{
    struct fsjob_state *s = ex->fsjob;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) {
        req->result = observation_error("ERROR: The file operation could not be started.");
        return ACTION_DONE;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        req->result = observation_error("ERROR: The file operation could not be started.");
        return ACTION_DONE;
    }
    if (pid == 0) {
        close(fds[0]);
        child_main(s, fds[1], fn, req->args, parent);
    }
    close(fds[1]);
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    s->req = req;
    s->pid = pid;
    s->timeout = timeout;
    s->pipe.fd = fds[0];
    if (evloop_add(ex->loop, &s->pipe, EPOLLIN) < 0) {
        kill(pid, SIGKILL);
        close(fds[0]);
        s->pipe.fd = -1;
        s->req = NULL;
        req->result = observation_error("ERROR: The file operation could not be started.");
        return ACTION_DONE;
    }
    evloop_timer_at(&s->timer, evloop_now() + timeout);
    return ACTION_PENDING;
}

void fsjob_cancel(struct executor *ex, struct action_req *req)
{
    struct fsjob_state *s = ex->fsjob;
    if (!s || s->req != req)
        return;
    if (!drain(s))
        kill(s->pid, SIGKILL);
    stop_watching(s);
    buf_free(&s->reply);
    s->req = NULL;
    s->pid = -1;
}

int fsjob_init(struct executor *ex)
{
    struct fsjob_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    s->ex = ex;
    s->pid = -1;
    s->pipe.fd = -1;
    s->pipe.fn = on_pipe;
    s->timer.fd = -1;
    s->history = editor_history_new();
    if (!s->history || evloop_timer_open(ex->loop, &s->timer, on_timer) < 0) {
        editor_history_free(s->history);
        free(s);
        return -1;
    }
    ex->fsjob = s;
    return 0;
}

void fsjob_free_state(struct executor *ex)
{
    struct fsjob_state *s = ex->fsjob;
    if (!s)
        return;
    if (s->req)
        fsjob_cancel(ex, s->req);
    evloop_timer_close(ex->loop, &s->timer);
    editor_history_free(s->history);
    free(s);
    ex->fsjob = NULL;
}
