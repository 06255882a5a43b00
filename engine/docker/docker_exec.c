/* docker exec with the HTTP upgrade: create the exec, then on a connection of its own send
 * POST /exec/{id}/start with "Connection: Upgrade", read the 101 and keep the socket as a raw
 * bidirectional stream on the engine loop. libcurl makes the connection (CONNECT_ONLY) so the
 * unix socket, TCP and TLS are one code path with the same settings as every other call; we
 * write the request and read the reply ourselves because libcurl does not hand over an
 * upgraded HTTP/1.1 connection. */
#include "common/buf.h"
#include "engine/docker/docker.h"

#include "engine/base/loop.h"
#include "engine/base/util.h"
#include "engine/docker/docker_internal.h"
#include "engine/docker/http.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>

#define EXEC_MAX_REPLY_HEAD (64 * 1024)
#define EXEC_READ_CHUNK (64 * 1024)
#define EXEC_INSPECT_TRIES 9 /* the exit code may lag the stream's end: 10 ms … 2.5 s */
#define EXEC_RESIZE_TRIES 5  /* API < 1.42: the first resize may beat the process's start */
/* Docker holds back stdin bytes that start its detach sequence (ctrl-p,ctrl-q by default,
 * which swallows the shell's Ctrl-P); pick one nobody types. */
#define EXEC_DETACH_KEYS "ctrl-^,ctrl-@,ctrl-^,ctrl-@"

enum exec_state { X_CREATING, X_CONNECTING, X_STARTING, X_STREAM, X_ENDING };

struct resize_waiter {
    struct resize_waiter *next;
    docker_done_fn fn;
    void *ud;
    unsigned gen; /* the size it asked for */
};

struct docker_exec {
    struct docker *d;
    struct docker_exec *next, *prev; /* d->execs */
    enum exec_state state;
    char *container;
    char id[80];
    int tty, no_stdin;
    void (*on_drain)(void *ud);
    docker_exec_output_fn on_output;
    docker_exec_exit_fn on_exit;
    void *ud;

    struct http_raw *raw;
    int fd;
    uint32_t events;
    struct buf head;       /* the start request, until sent */
    struct buf reply;      /* the start reply's head (and an error's body) */
    size_t reply_head_len; /* once the blank line is in */
    long reply_status;
    struct buf out; /* the process's input, sent once the stream is up */
    bool want_drain, close_input, input_closed, paused, write_failed;
    bool hold_input; /* until the first size is set (API < 1.42): typed commands see it */
    struct docker_demux demux;

    int rows, cols;           /* a size still to send (0: none) */
    unsigned size_gen;        /* sizes asked for so far */
    int sent_rows, sent_cols; /* the size in flight (or to retry) */
    unsigned sent_gen;
    struct resize_waiter *resize_waiters;
    bool resize_in_flight;
    int resize_tries;
    int inspect_tries;
    struct loop_timer *resize_timer;  /* a resize's retry */
    struct loop_timer *inspect_timer; /* asking for the exit code again */
    struct loop_timer *read_timer;    /* a paused read's resumption */

    int busy;     /* inside our callbacks */
    int inflight; /* our docker calls whose callbacks still refer to us */
    bool closed;  /* freed once neither */
};

static struct loop *exec_loop(struct docker_exec *x)
{
    return http_loop(x->d->http);
}

static void exec_unlink(struct docker_exec *x)
{
    struct docker *d = x->d;
    if (x->prev)
        x->prev->next = x->next;
    else if (d->execs == x)
        d->execs = x->next;
    if (x->next)
        x->next->prev = x->prev;
    x->next = x->prev = NULL;
}

static void exec_drop_connection(struct docker_exec *x)
{
    if (!x->raw)
        return;
    loop_del_fd(exec_loop(x), x->fd);
    http_raw_close(x->raw);
    x->raw = NULL;
    x->fd = -1;
}

static void exec_free(struct docker_exec *x)
{
    while (x->resize_waiters) {
        struct resize_waiter *w = x->resize_waiters;
        x->resize_waiters = w->next;
        free(w);
    }
    buf_free(&x->head);
    buf_free(&x->reply);
    buf_free(&x->out);
    free(x->container);
    free(x);
}

static void exec_maybe_free(struct docker_exec *x)
{
    if (x->closed && x->busy == 0 && x->inflight == 0)
        exec_free(x);
}

/* No callback after this; the memory goes once no callback of ours refers to it. */
static void exec_release(struct docker_exec *x)
{
    if (x->closed)
        return;
    x->closed = true;
    exec_unlink(x);
    exec_drop_connection(x);
    struct loop_timer **timers[] = {&x->resize_timer, &x->inspect_timer, &x->read_timer};
    for (size_t i = 0; i < sizeof(timers) / sizeof(timers[0]); i++)
        if (*timers[i]) {
            loop_timer_cancel(exec_loop(x), *timers[i]);
            *timers[i] = NULL;
        }
    exec_maybe_free(x);
}

static void exec_finish(struct docker_exec *x, int code, const char *error)
{
    if (x->closed)
        return;
    docker_exec_exit_fn fn = x->on_exit;
    void *ud = x->ud;
    x->busy++;
    exec_release(x); /* closed before the callback: a docker_exec_close inside it is a no-op */
    fn(code, error, ud);
    x->busy--;
    exec_maybe_free(x);
}

__attribute__((format(printf, 2, 3))) static void exec_failf(struct docker_exec *x, const char *fmt,
                                                             ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = util_vstrdupf(fmt, ap);
    va_end(ap);
    exec_finish(x, -1, msg ? msg : "docker exec failed");
    free(msg);
}

/* ---- the exit code ---- */

static void exec_inspect(struct docker_exec *x);

static void exec_on_inspect_timer(void *ud)
{
    struct docker_exec *x = ud;
    x->inspect_timer = NULL;
    exec_inspect(x);
}

static void exec_on_inspect(const struct docker_reply *r, void *ud)
{
    struct docker_exec *x = ud;
    x->inflight--;
    if (x->closed) {
        exec_maybe_free(x);
        return;
    }
    if (r->status != 200) {
        exec_failf(x, "docker exec: the exit code is unknown: %s", r->message);
        return;
    }
    json_t *code = json_object_get(r->json, "ExitCode");
    if (json_is_true(json_object_get(r->json, "Running")) || !json_is_integer(code)) {
        /* The stream can end a moment before Docker records the exit. */
        if (++x->inspect_tries < EXEC_INSPECT_TRIES &&
            (x->inspect_timer = loop_timer_add(exec_loop(x), 10L << (x->inspect_tries - 1),
                                               exec_on_inspect_timer, x)))
            return;
        exec_failf(x, "docker exec: the stream ended but the process still runs");
        return;
    }
    exec_finish(x, (int)json_integer_value(code), NULL);
}

static void exec_inspect(struct docker_exec *x)
{
    if (docker_call_id(x->d, "GET", "/exec/%s/json", x->id, NULL, 10000, 0, exec_on_inspect, x) <
        0) {
        exec_failf(x, "docker exec: cannot ask for the exit code: out of memory");
        return;
    }
    x->inflight++;
}

/* The stream is over (EOF or a broken connection): ask Docker how the process ended. */
static void exec_on_stream_end(struct docker_exec *x)
{
    x->state = X_ENDING;
    exec_drop_connection(x);
    exec_inspect(x);
}

/* ---- resize ---- */

static int exec_send_resize(struct docker_exec *x);
static void exec_update_events(struct docker_exec *x);

static void exec_on_resize_timer(void *ud)
{
    struct docker_exec *x = ud;
    x->resize_timer = NULL;
    x->resize_in_flight = false;
    if (x->rows <= 0) { /* no newer size came: the same again */
        x->rows = x->sent_rows;
        x->cols = x->sent_cols;
    }
    exec_send_resize(x);
}

static void exec_on_resized(const struct docker_reply *r, void *ud)
{
    struct docker_exec *x = ud;
    x->inflight--;
    x->resize_in_flight = false;
    if (x->closed) {
        exec_maybe_free(x);
        return;
    }
    bool ok = r->status >= 200 && r->status < 300;
    if (!ok && r->status >= 0 && ++x->resize_tries < EXEC_RESIZE_TRIES && x->state == X_STREAM &&
        (x->resize_timer =
             loop_timer_add(exec_loop(x), 20L << x->resize_tries, exec_on_resize_timer, x))) {
        x->resize_in_flight = true;
        return;
    }
    if (x->hold_input) {
        x->hold_input = false;
        exec_update_events(x);
    }
    /* Those who asked for this size or an older one have their answer. */
    x->busy++;
    struct resize_waiter **pp = &x->resize_waiters;
    while (*pp && !x->closed) {
        struct resize_waiter *w = *pp;
        if (w->gen > x->sent_gen) {
            pp = &w->next;
            continue;
        }
        *pp = w->next;
        if (w->fn)
            w->fn(r, w->ud);
        free(w);
    }
    x->busy--;
    if (x->closed) {
        exec_maybe_free(x);
        return;
    }
    if (x->rows > 0) /* a newer size came meanwhile */
        exec_send_resize(x);
}

/* Send the kept size (x->rows/cols). */
static int exec_send_resize(struct docker_exec *x)
{
    if (x->rows <= 0 || x->cols <= 0 || x->resize_in_flight || x->state != X_STREAM)
        return 0;
    char fmt[64];
    snprintf(fmt, sizeof(fmt), "/exec/%%s/resize?h=%d&w=%d", x->rows, x->cols);
    if (docker_call_id(x->d, "POST", fmt, x->id, NULL, 10000, 0, exec_on_resized, x) < 0)
        return -1;
    x->sent_rows = x->rows;
    x->sent_cols = x->cols;
    x->sent_gen = x->size_gen;
    x->rows = x->cols = 0;
    x->resize_in_flight = true;
    x->inflight++;
    return 0;
}

int docker_exec_resize(struct docker_exec *x, int rows, int cols, docker_done_fn fn, void *ud)
{
    if (!x || x->closed || x->state == X_ENDING || !x->tty || rows <= 0 || cols <= 0)
        return -1;
    struct resize_waiter *w = calloc(1, sizeof(*w));
    if (!w)
        return -1;
    w->fn = fn;
    w->ud = ud;
    w->gen = ++x->size_gen;
    struct resize_waiter **pp = &x->resize_waiters;
    while (*pp)
        pp = &(*pp)->next;
    *pp = w;
    /* One resize in flight at a time; the latest size wins. */
    x->rows = rows;
    x->cols = cols;
    x->resize_tries = 0;
    if (exec_send_resize(x) < 0) {
        *pp = NULL;
        free(w);
        return -1;
    }
    return 0;
}

/* ---- the stream ---- */

static void exec_update_events(struct docker_exec *x)
{
    if (!x->raw)
        return;
    uint32_t ev = 0;
    if (x->state == X_STARTING) {
        ev = EPOLLIN | (x->head.len ? EPOLLOUT : 0);
    } else if (x->state == X_STREAM) {
        bool to_send = (x->out.len && !x->write_failed) || (x->close_input && !x->input_closed);
        ev = (x->paused ? 0 : EPOLLIN) | (to_send && !x->hold_input ? EPOLLOUT : 0);
    }
    if (ev != x->events) {
        x->events = ev;
        loop_mod_fd(exec_loop(x), x->fd, ev);
    }
}

/* Send what can be sent: the start request, then the process's input. -1: connection gone. */
static int exec_flush(struct docker_exec *x)
{
    struct buf *b = x->state == X_STARTING ? &x->head : &x->out;
    if ((x->state != X_STARTING && x->state != X_STREAM) || (x->state == X_STREAM && x->hold_input))
        return 0;
    while (b->len && !x->write_failed) {
        ssize_t n = http_raw_send(x->raw, b->data, b->len);
        if (n < 0 && errno == EAGAIN)
            break;
        if (n <= 0) {
            if (x->state == X_STARTING)
                return -1;
            /* The process stopped reading (or exited): its output and exit still come. */
            x->write_failed = true;
            buf_consume(b, b->len);
            break;
        }
        buf_consume(b, (size_t)n);
    }
    if (x->state != X_STREAM)
        return 0;
    if (!x->out.len && x->close_input && !x->input_closed) {
        x->input_closed = true;
        http_raw_shutdown_write(x->raw);
    }
    if (!x->out.len && x->want_drain && x->on_drain) {
        x->want_drain = false;
        x->on_drain(x->ud);
    }
    return 0;
}

static int exec_deliver_frame(const char *p, size_t n, int fd, void *ud)
{
    struct docker_exec *x = ud;
    if (x->on_output(p, n, fd, x->ud) < 0)
        x->paused = true;
    return x->closed ? -1 : 0;
}

static void exec_deliver(struct docker_exec *x, const char *p, size_t n)
{
    if (x->tty) {
        if (x->on_output(p, n, 1, x->ud) < 0)
            x->paused = true;
    } else {
        docker_demux_feed(&x->demux, p, n, exec_deliver_frame, x);
    }
}

static long exec_content_length(const char *head)
{
    for (const char *p = strstr(head, "\r\n"); p && p[2]; p = strstr(p + 2, "\r\n"))
        if (strncasecmp(p + 2, "Content-Length:", 15) == 0)
            return strtol(p + 17, NULL, 10);
    return -1;
}

/* Docker refused the start: report its message once the body is in (or the peer closed). */
static void exec_fail_reply(struct docker_exec *x)
{
    const char *body = x->reply.data + x->reply_head_len;
    json_t *j = json_loads(body, 0, NULL);
    const char *m = json_string_value(json_object_get(j, "message"));
    exec_failf(x, "docker exec: start: HTTP %ld: %s", x->reply_status, m ? m : body);
    json_decref(j);
}

static void exec_started(struct docker_exec *x);

/* The start reply: headers, then either the stream (101, or 200 from daemons that hijack
 * without the upgrade) or an error with a JSON body. Bytes after the blank line are the
 * stream's first. */
static void exec_on_reply(struct docker_exec *x, const char *p, size_t n, bool eof)
{
    if (n && buf_append(&x->reply, p, n) < 0) {
        exec_failf(x, "docker exec: out of memory");
        return;
    }
    if (!x->reply_head_len) {
        char *end = x->reply.data ? strstr(x->reply.data, "\r\n\r\n") : NULL;
        if (!end) {
            if (eof)
                exec_failf(x, "docker exec: the daemon closed the connection before replying");
            else if (x->reply.len > EXEC_MAX_REPLY_HEAD)
                exec_failf(x, "docker exec: the daemon's reply has no end of headers");
            return;
        }
        x->reply_head_len = (size_t)(end - x->reply.data) + 4;
        int status = 0;
        if (sscanf(x->reply.data, "HTTP/1.%*d %d", &status) != 1) {
            exec_failf(x, "docker exec: not an HTTP reply");
            return;
        }
        x->reply_status = status;
        if (status == 101 || status == 200) {
            size_t rest = x->reply.len - x->reply_head_len;
            x->state = X_STREAM;
            buf_free(&x->head);
            exec_started(x);
            if (rest && !x->closed) {
                char *first = malloc(rest);
                if (!first) {
                    exec_failf(x, "docker exec: out of memory");
                    return;
                }
                memcpy(first, x->reply.data + x->reply_head_len, rest);
                buf_free(&x->reply);
                exec_deliver(x, first, rest);
                free(first);
            } else {
                buf_free(&x->reply);
            }
            return;
        }
    }
    long want = exec_content_length(x->reply.data);
    if (eof || (want >= 0 && x->reply.len - x->reply_head_len >= (size_t)want) ||
        x->reply.len > EXEC_MAX_REPLY_HEAD)
        exec_fail_reply(x);
}

/* Read until the socket has nothing more (TLS may hold decoded bytes: drain to EAGAIN). */
static void exec_read(struct docker_exec *x)
{
    char buf[EXEC_READ_CHUNK];
    while (!x->closed && x->raw && !(x->state == X_STREAM && x->paused)) {
        ssize_t n = http_raw_recv(x->raw, buf, sizeof(buf));
        if (n < 0 && errno == EAGAIN)
            return;
        bool eof = n <= 0;
        if (x->state == X_STARTING) {
            if (n < 0)
                exec_failf(x, "docker exec: start: %s", http_raw_error(x->raw));
            else
                exec_on_reply(x, buf, (size_t)n, eof);
        } else if (eof) {
            exec_on_stream_end(x);
            return;
        } else {
            exec_deliver(x, buf, (size_t)n);
        }
        if (eof)
            return;
    }
}

static void exec_on_fd(int fd, uint32_t events, void *ud)
{
    struct docker_exec *x = ud;
    x->busy++;
    if ((events & EPOLLOUT) && exec_flush(x) < 0)
        exec_failf(x, "docker exec: start: %s", http_raw_error(x->raw));
    if (!x->closed && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
        exec_read(x);
    if (!x->closed)
        exec_update_events(x);
    x->busy--;
    exec_maybe_free(x);
}

static void exec_started(struct docker_exec *x)
{
    exec_send_resize(x);
    x->hold_input = x->resize_in_flight;
    exec_flush(x);
}

static void exec_on_connected(struct http_raw *c, const char *error, int connect_failed,
                              int tls_failed, void *ud)
{
    struct docker_exec *x = ud;
    if (!c) {
        x->raw = NULL; /* already freed */
        char *why = tls_failed ? docker_explain_tls(x->d, error) : NULL;
        exec_failf(x, "docker exec: cannot connect to %s: %s", docker_socket(x->d),
                   why ? why : error);
        free(why);
        return;
    }
    x->raw = c;
    x->fd = http_raw_fd(c);
    x->state = X_STARTING;
    /* Same Tty as at create: the start's flag decides raw vs framed output. */
    json_t *body = json_pack("{s:b,s:b}", "Detach", 0, "Tty", x->tty);
    if (body && x->d->api >= 1042 && x->tty && x->rows > 0 && x->cols > 0 && !x->resize_waiters) {
        json_object_set_new(body, "ConsoleSize", json_pack("[i,i]", x->rows, x->cols));
        x->rows = x->cols = 0;
    }
    char *payload = body ? json_dumps(body, JSON_COMPACT) : NULL;
    char *e = docker_escape(x->id);
    char *head = payload && e
                     ? util_strdupf("POST %s/exec/%s/start HTTP/1.1\r\n"
                                    "Host: %s\r\n"
                                    "User-Agent: paddock\r\n"
                                    "Content-Type: application/json\r\n"
                                    "Connection: Upgrade\r\n"
                                    "Upgrade: tcp\r\n"
                                    "Content-Length: %zu\r\n"
                                    "\r\n%s",
                                    x->d->prefix, e, x->d->host_port, strlen(payload), payload)
                     : NULL;
    json_decref(body);
    free(payload);
    free(e);
    if (!head || buf_append(&x->head, head, strlen(head)) < 0 ||
        loop_add_fd(exec_loop(x), x->fd, EPOLLIN | EPOLLOUT, exec_on_fd, x) < 0) {
        free(head);
        http_raw_close(x->raw);
        x->raw = NULL;
        exec_failf(x, "docker exec: cannot start: out of memory");
        return;
    }
    free(head);
    x->events = EPOLLIN | EPOLLOUT;
}

static void exec_on_created(const struct docker_reply *r, void *ud)
{
    struct docker_exec *x = ud;
    x->inflight--;
    if (x->closed) {
        exec_maybe_free(x);
        return;
    }
    const char *id = json_string_value(json_object_get(r->json, "Id"));
    if (r->status != 201 || !id) {
        exec_failf(x, "docker exec in %s: create: %s", x->container, r->message);
        return;
    }
    snprintf(x->id, sizeof(x->id), "%s", id);
    x->state = X_CONNECTING;
    char *url = util_strdupf("%s/", x->d->base);
    struct http_request req = {.method = "GET", .url = url, .timeout_ms = 30000};
    docker_fill_request(x->d, &req);
    x->raw = url ? http_raw_open(exec_loop(x), &req, exec_on_connected, x) : NULL;
    free(url);
    if (!x->raw)
        exec_failf(x, "docker exec: cannot connect: out of memory");
}

static json_t *exec_strings(const char *const *v)
{
    json_t *a = json_array();
    for (; a && v && *v; v++)
        json_array_append_new(a, json_string(*v));
    return a;
}

struct docker_exec *docker_exec_open(struct docker *d, const char *container,
                                     const struct docker_exec_opts *o,
                                     docker_exec_output_fn on_output, docker_exec_exit_fn on_exit,
                                     void *ud)
{
    if (!o || !o->cmd || !o->cmd[0] || !container || !on_output || !on_exit)
        return NULL;
    struct docker_exec *x = calloc(1, sizeof(*x));
    if (!x)
        return NULL;
    x->d = d;
    x->fd = -1;
    x->tty = o->tty;
    x->no_stdin = o->no_stdin;
    x->on_drain = o->on_drain;
    x->on_output = on_output;
    x->on_exit = on_exit;
    x->ud = ud;
    x->rows = o->tty ? o->rows : 0;
    x->cols = o->tty ? o->cols : 0;
    x->container = strdup(container);
    json_t *body = json_pack("{s:b,s:b,s:b,s:b,s:o,s:s}", "AttachStdin", !o->no_stdin,
                             "AttachStdout", 1, "AttachStderr", 1, "Tty", o->tty, "Cmd",
                             exec_strings(o->cmd), "DetachKeys", EXEC_DETACH_KEYS);
    if (body && o->env)
        json_object_set_new(body, "Env", exec_strings(o->env));
    if (body && o->user)
        json_object_set_new(body, "User", json_string(o->user));
    if (body && o->working_dir)
        json_object_set_new(body, "WorkingDir", json_string(o->working_dir));
    /* ConsoleSize (API 1.42+) sizes the PTY before the process starts; older daemons get a
     * resize right after the start instead. The version is known here only if negotiated:
     * otherwise the start's ConsoleSize or the resize covers it. */
    if (body && o->tty && o->rows > 0 && o->cols > 0 && d->api >= 1042)
        json_object_set_new(body, "ConsoleSize", json_pack("[i,i]", o->rows, o->cols));
    int rc = body && x->container ? docker_call_id(d, "POST", "/containers/%s/exec", container,
                                                   body, 30000, 0, exec_on_created, x)
                                  : -1;
    json_decref(body);
    if (rc < 0) {
        exec_free(x);
        return NULL;
    }
    x->inflight++;
    x->next = d->execs;
    if (d->execs)
        d->execs->prev = x;
    d->execs = x;
    return x;
}

long docker_exec_write(struct docker_exec *x, const void *data, size_t len)
{
    if (!x || x->closed || x->no_stdin || x->close_input || x->state == X_ENDING)
        return -1;
    if (x->write_failed)
        return (long)len; /* the process is gone or stopped reading: nothing to keep */
    size_t room = x->out.len < DOCKER_EXEC_MAX_QUEUE ? DOCKER_EXEC_MAX_QUEUE - x->out.len : 0;
    size_t take = len < room ? len : room;
    if (take < len)
        x->want_drain = true;
    if (take && buf_append(&x->out, data, take) < 0)
        return -1;
    exec_update_events(x);
    return (long)take;
}

size_t docker_exec_queued(const struct docker_exec *x)
{
    return x ? x->out.len : 0;
}

int docker_exec_close_input(struct docker_exec *x)
{
    if (!x || x->closed || x->no_stdin || x->d->use_tls)
        return -1;
    x->close_input = true;
    exec_update_events(x);
    return 0;
}

static void exec_on_resume_timer(void *ud)
{
    struct docker_exec *x = ud;
    x->read_timer = NULL;
    x->busy++;
    exec_read(x);
    if (!x->closed)
        exec_update_events(x);
    x->busy--;
    exec_maybe_free(x);
}

void docker_exec_resume_output(struct docker_exec *x)
{
    if (!x || x->closed || !x->paused)
        return;
    x->paused = false;
    exec_update_events(x);
    /* Bytes TLS already decoded raise no epoll event: read once from the loop. */
    if (x->raw && !x->read_timer)
        x->read_timer = loop_timer_add(exec_loop(x), 0, exec_on_resume_timer, x);
}

const char *docker_exec_id(const struct docker_exec *x)
{
    return x->id;
}

void docker_exec_close(struct docker_exec *x)
{
    if (x)
        exec_release(x);
}

void docker_exec_close_all(struct docker *d)
{
    while (d->execs) {
        struct docker_exec *x = d->execs;
        exec_release(x);
        /* docker_free dropped the calls that referred to it: nothing will come back. */
        x->inflight = 0;
        exec_maybe_free(x);
    }
}

int docker_exec_inspect(struct docker *d, const char *exec_id, docker_done_fn fn, void *ud)
{
    return docker_call_id(d, "GET", "/exec/%s/json", exec_id, NULL, 10000, 0, fn, ud);
}

bool docker_is_local(const struct docker *d)
{
    return d->socket != NULL;
}
