/* Operator terminals into sandboxes: POST /v1/sessions/{id}/terminal upgrades the HTTP
 * connection to a raw byte stream joined to a Docker exec with a TTY (a login shell as the
 * agent's user, or ?cmd=). Both directions go through the engine's loop with bounded buffers:
 * a client that stops reading pauses the exec's output, a full exec input queue pauses
 * reading from the client. The dashboard's Terminal view and `paddock exec` are its clients.
 * A terminal is an action in the session's history (kind "terminal"): who opened it (the
 * operator's channel or an agent's), as which user, and its transcript (bounded) as the
 * observation. On an agent's channel [security] terminal / root_terminal decide whether it
 * opens, waits for the operator, or is refused (engine/security.h). */
#include "engine/terminal.h"

#include "common/buf.h"
#include "common/utf8.h"
#include "engine/action.h"
#include "engine/api.h"
#include "engine/base/loop.h"
#include "engine/base/proc.h"
#include "engine/base/util.h"
#include "engine/driver.h"
#include "engine/engine_internal.h"
#include "engine/security.h"
#include "engine/session_internal.h"
#include "engine/store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <unistd.h>

#define TERM_MAX_BUFFER (256 * 1024)    /* output held for a slow client before pausing */
#define TERM_KEEP_MS 60000              /* an ended terminal answers about its exit this long */
#define TERM_AGENT_UID 1000             /* the agent's uid when the session's options do not say */
#define TERM_TRANSCRIPT_OUT (64 * 1024) /* the output kept in the record: its first bytes */
#define TERM_TRANSCRIPT_IN (16 * 1024)  /* the input kept: what was typed or piped */

struct term {
    struct term *next;
    struct engine *eng;
    char id[17];
    char session_id[40];
    char *cmd; /* what runs, for the record */
    struct sandbox_exec *x;
    const struct sandbox_driver *drv; /* the session's driver, which runs x */
    int fd; /* the upgraded connection; -1 before the upgrade and after the end */
    void *urh;
    struct buf out; /* output the client has not taken yet */
    struct buf in;  /* input the exec queue did not take yet */
    bool paused;    /* the exec's output waits for the client */
    bool reading;
    bool tty; /* false (?tty=0, for piped input): the client's half-close is stdin's end */
    bool exited, closed;
    int exit_code;
    char *error;
    int rows, cols;
    struct loop_timer *reap;
    struct api_req *resize_req; /* answered once Docker applied the size */
    char exec_id[80];           /* for the hang-up after the client went */
    int hangup_tries;
    struct loop_timer *hangup_timer;
    /* The record: the action's id (0: none), who opened it and as whom, the transcript. */
    int64_t action_id;
    bool root;
    const char *channel; /* "operator" or "agent" (static) */
    struct buf said, typed;
    unsigned long long said_total, typed_total;
    /* Waiting for the operator's approval (an agent's channel, [security] "approve"): the
     * request, answered once the decision comes. */
    struct api_req *waiting;
    bool recorded_end;
    bool start_failed; /* the exec never ran (term_on_exit with an error) */
    bool login;        /* no ?cmd: a login shell */
};

/* A process whose client went: Docker leaves it running (its TTY stays open in the shim), so
 * the engine hangs it up itself, then kills it if it ignored that. Local daemons only: the
 * PID is the host's. The state lives in the terminal, which outlives it (TERM_KEEP_MS). */
static void term_hangup_inspect(struct term *t);

static void term_on_hangup_timer(void *ud)
{
    struct term *t = ud;
    t->hangup_timer = NULL;
    term_hangup_inspect(t);
}

static void term_on_hangup_inspect(const struct sandbox_reply *r, void *ud)
{
    struct term *t = ud;
    json_t *pid = json_object_get(r->json, "Pid");
    bool running = r->status == 200 && json_is_true(json_object_get(r->json, "Running"));
    struct session *s = session_find(t->eng, t->session_id);
    if (!running || !json_is_integer(pid) || !s || t->hangup_tries >= 2)
        return;
    /* The pid may have been reused since Docker answered: only a process still inside the
     * sandbox is signalled (proc.h); one that is not is left alone. */
    char why[160];
    if (proc_signal_in_pidns((pid_t)json_integer_value(pid), (pid_t)s->exec_init_pid,
                             t->hangup_tries == 0 ? SIGHUP : SIGKILL, why, sizeof(why)) < 0)
        return;
    t->hangup_tries++;
    t->hangup_timer = loop_timer_add(t->eng->loop, 2000, term_on_hangup_timer, t);
}

static void term_hangup_inspect(struct term *t)
{
    t->drv->exec_inspect(t->eng, t->exec_id, term_on_hangup_inspect, t);
}

/* err ERR_NONE: the new size is applied. */
static void term_resize_answer(struct term *t, enum err_code err, const char *why)
{
    struct api_req *r = t->resize_req;
    if (!r)
        return;
    t->resize_req = NULL;
    if (err == ERR_NONE)
        api_reply_json(
            r, 200,
            json_pack("{s:s,s:i,s:i}", "terminal", t->id, "rows", t->rows, "cols", t->cols));
    else
        api_reply_error(r, err, "%s", why);
}

static struct term *term_find(struct engine *eng, const char *session_id, const char *id)
{
    for (struct term *t = eng->terminals; t; t = t->next)
        if (strcmp(t->id, id) == 0 && strcmp(t->session_id, session_id) == 0)
            return t;
    return NULL;
}

static void term_free(struct term *t)
{
    for (struct term **pp = &t->eng->terminals; *pp; pp = &(*pp)->next)
        if (*pp == t) {
            *pp = t->next;
            break;
        }
    if (t->reap)
        loop_timer_cancel(t->eng->loop, t->reap);
    if (t->hangup_timer)
        loop_timer_cancel(t->eng->loop, t->hangup_timer);
    buf_free(&t->out);
    buf_free(&t->in);
    buf_free(&t->said);
    buf_free(&t->typed);
    free(t->cmd);
    free(t->error);
    free(t);
}

static void term_on_reap(void *ud)
{
    struct term *t = ud;
    t->reap = NULL;
    term_free(t);
}

static void term_watch(struct term *t)
{
    if (t->fd < 0)
        return;
    uint32_t ev = (t->reading ? EPOLLIN : 0) | (t->out.len ? EPOLLOUT : 0);
    loop_mod_fd(t->eng->loop, t->fd, ev);
}

/* Keep the first max bytes of a stream in b, counting all of it. */
static void term_keep(struct buf *b, unsigned long long *total, size_t max, const char *p, size_t n)
{
    *total += n;
    if (b->len < max)
        buf_append(b, p, n < max - b->len ? n : max - b->len);
}

/* The transcript as valid UTF-8 text (the bytes are the sandbox's; a display sanitizes). */
static json_t *term_text(const struct buf *b)
{
    struct buf t = {0};
    if (utf8_repair(&t, b->data ? b->data : "", b->len, UTF8_REPAIR_NUL, NULL) < 0 ||
        buf_append(&t, "", 1) < 0) {
        buf_free(&t);
        return json_string("");
    }
    json_t *j = json_string(t.data);
    buf_free(&t);
    return j ? j : json_string("");
}

/* The terminal's action ends: its transcript becomes the observation. */
static void term_record_end(struct term *t, enum action_st state)
{
    if (!t->action_id || t->recorded_end)
        return;
    t->recorded_end = true;
    json_t *obs = json_pack(
        "{s:s,s:o,s:{s:o,s:s,s:s,s:s,s:s,s:I,s:I,s:b}}", "observation", "terminal", "content",
        term_text(&t->said), "extras", "input", term_text(&t->typed), "terminal", t->id, "user",
        t->root ? "root" : "agent", "channel", t->channel, "command", t->cmd, "output_bytes",
        (json_int_t)t->said_total, "input_bytes", (json_int_t)t->typed_total, "truncated",
        t->said_total > t->said.len || t->typed_total > t->typed.len);
    if (obs && t->exited && !t->error)
        json_object_set_new(json_object_get(obs, "extras"), "exit_code",
                            json_integer(t->exit_code));
    char *text = obs ? json_dumps(obs, JSON_COMPACT) : NULL;
    json_decref(obs);
    action_end(t->eng, t->action_id, state, t->exited && !t->error ? t->exit_code : -1, text,
               t->error);
    free(text);
}

/* The connection ends: the socket goes back to MHD to close, the record says how it ended;
 * the terminal answers GET .../terminal/{id} for a minute more. */
static void term_close(struct term *t)
{
    if (t->closed)
        return;
    t->closed = true;
    if (t->fd >= 0) {
        loop_del_fd(t->eng->loop, t->fd);
        api_upgrade_close(t->eng->api, t->urh);
        t->fd = -1;
    }
    term_resize_answer(t, ERR_CONFLICT, "the terminal ended");
    if (t->x) {
        snprintf(t->exec_id, sizeof(t->exec_id), "%s", t->drv->exec_id(t->x));
        t->drv->exec_close(t->x);
        t->x = NULL;
        if (t->exec_id[0] && t->drv->is_local(t->eng))
            term_hangup_inspect(t);
        if (!t->exited) {
            t->exited = true;
            t->exit_code = -1;
            t->error = strdup("the client closed the terminal");
        }
    }
    char detail[300];
    if (t->error)
        snprintf(detail, sizeof(detail), "closed %s: %.200s", t->id, t->error);
    else
        snprintf(detail, sizeof(detail), "closed %s: exit code %d", t->id, t->exit_code);
    store_event_add(t->eng->store, t->session_id, "terminal", detail, util_now());
    term_record_end(t, t->start_failed ? ACTION_FAILED : ACTION_DONE);
    t->reap = loop_timer_add(t->eng->loop, TERM_KEEP_MS, term_on_reap, t);
}

/* Send what the client can take now. */
static void term_flush(struct term *t)
{
    while (t->fd >= 0 && t->out.len) {
        ssize_t n = write(t->fd, t->out.data, t->out.len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n <= 0) { /* the client is gone */
            buf_free(&t->out);
            term_close(t);
            return;
        }
        buf_consume(&t->out, (size_t)n);
    }
    if (t->paused && t->out.len < TERM_MAX_BUFFER / 2 && t->x) {
        t->paused = false;
        t->drv->exec_resume_output(t->x);
    }
    if (t->exited && !t->out.len) {
        term_close(t);
        return;
    }
    term_watch(t);
}

/* Input for the exec: what its queue does not take waits, and reading stops until it drains. */
static void term_input(struct term *t, const char *p, size_t n)
{
    if (!t->x || t->exited)
        return;
    term_keep(&t->typed, &t->typed_total, TERM_TRANSCRIPT_IN, p, n);
    if (t->in.len) {
        buf_append(&t->in, p, n);
        return;
    }
    long w = t->drv->exec_write(t->x, p, n);
    if (w < 0)
        return;
    if ((size_t)w < n) {
        buf_append(&t->in, p + w, n - (size_t)w);
        t->reading = false;
        term_watch(t);
    }
}

static void term_on_drain(void *ud)
{
    struct term *t = ud;
    if (!t->in.len || !t->x)
        return;
    long w = t->drv->exec_write(t->x, t->in.data, t->in.len);
    if (w > 0)
        buf_consume(&t->in, (size_t)w);
    if (!t->in.len && !t->closed) {
        t->reading = true;
        term_watch(t);
    }
}

static void term_on_fd(int fd, uint32_t events, void *ud)
{
    struct term *t = ud;
    if (events & EPOLLOUT)
        term_flush(t);
    if (t->closed || t->fd < 0)
        return;
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        char buf[16384];
        for (int i = 0; i < 16 && t->reading; i++) {
            ssize_t n = read(fd, buf, sizeof(buf));
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                break;
            if (n == 0 && !t->tty && t->x) {
                /* piped input ended: the command's stdin ends, its output still comes */
                t->drv->exec_close_input(t->x);
                t->reading = false;
                term_watch(t);
                return;
            }
            if (n <= 0) {
                term_close(t); /* the client went: the shell is hung up */
                return;
            }
            term_input(t, buf, (size_t)n);
        }
    }
}

static int term_on_output(const char *data, size_t len, int fd, void *ud)
{
    (void)fd;
    struct term *t = ud;
    if (t->closed)
        return 0;
    term_keep(&t->said, &t->said_total, TERM_TRANSCRIPT_OUT, data, len);
    if (buf_append(&t->out, data, len) < 0)
        return -1;
    if (t->fd >= 0)
        term_flush(t);
    if (t->out.len >= TERM_MAX_BUFFER) {
        t->paused = true; /* a client that does not read slows the shell, not the engine */
        return -1;
    }
    return 0;
}

static void term_on_exit(int exit_code, const char *error, void *ud)
{
    struct term *t = ud;
    t->x = NULL; /* freed when this returns */
    t->exited = true;
    term_resize_answer(t, ERR_CONFLICT, "the terminal ended");
    t->exit_code = exit_code;
    if (error) {
        t->error = strdup(error);
        t->start_failed = true;
    }
    if (error && t->fd >= 0) {
        /* the client hears why in its terminal before the end */
        char msg[400];
        snprintf(msg, sizeof(msg), "\r\npaddock: the terminal could not start: %.300s\r\n", error);
        buf_append(&t->out, msg, strlen(msg));
    }
    if (t->fd >= 0)
        term_flush(t);
}

static void term_on_upgraded(int sock, const char *extra, size_t extra_len, void *urh, void *ud)
{
    struct term *t = ud;
    t->fd = sock;
    t->urh = urh;
    fcntl(sock, F_SETFL, fcntl(sock, F_GETFL) | O_NONBLOCK);
    t->reading = true;
    if (loop_add_fd(t->eng->loop, sock, EPOLLIN, term_on_fd, t) < 0) {
        t->fd = -1;
        api_upgrade_close(t->eng->api, urh);
        term_close(t);
        return;
    }
    if (extra_len)
        term_input(t, extra, extra_len);
    if (t->error) {
        char msg[400];
        snprintf(msg, sizeof(msg), "\r\npaddock: the terminal could not start: %.300s\r\n",
                 t->error);
        buf_append(&t->out, msg, strlen(msg));
    }
    term_flush(t);
}

/* A query number in [lo, hi], dflt when absent; -1 after a 400. */
static int term_query_int(struct api_req *r, const char *key, int lo, int hi, int dflt, int *out)
{
    const char *v = api_req_query(r, key);
    char *end = NULL;
    long n = v ? strtol(v, &end, 10) : dflt;
    if (v && (!*v || *end || n < lo || n > hi)) {
        api_reply_error(r, ERR_BAD_REQUEST, "\"%s\" must be an integer from %d to %d", key, lo, hi);
        return -1;
    }
    *out = (int)n;
    return 0;
}

/* Open the exec and answer r with the upgrade; the action is recorded already. */
static void term_start(struct term *t, struct api_req *r)
{
    struct engine *eng = t->eng;
    struct session *s = session_find(eng, t->session_id);
    enum err_code refusal = ERR_NONE;
    char msg[512] = "the session is gone";
    if (!s || session_check_actionable(s, &refusal, msg, sizeof(msg)) < 0 || !s->container_id) {
        api_reply_error(r, refusal ? refusal : ERR_CONFLICT, "%s", msg);
        t->error = strdup(msg);
        term_record_end(t, ACTION_FAILED);
        term_free(t);
        return;
    }
    /* a login shell: bash when the image has it */
    const char *shell =
        "if command -v bash >/dev/null 2>&1; then exec bash -l; else exec sh -l; fi";
    const char *argv[] = {"/bin/sh", "-c", t->login ? shell : t->cmd, NULL};
    const char *env[] = {"TERM=xterm-256color", "LANG=C.UTF-8", NULL};
    /* "agent" is whoever the session's shell runs as (options.user_id: OpenHands' user_id,
     * 0 for run_as_openhands false). */
    json_t *cfg = store_session_config(eng->store, t->session_id);
    json_t *uid = json_object_get(json_object_get(cfg, "options"), "user_id");
    long agent = json_is_integer(uid) ? (long)json_integer_value(uid) : TERM_AGENT_UID;
    json_decref(cfg);
    char agent_user[48];
    snprintf(agent_user, sizeof(agent_user), "%ld:%ld", agent, agent);
    struct sandbox_exec_opts o = {.cmd = argv,
                                  .env = env,
                                  .user = t->root ? "0:0" : agent_user,
                                  .working_dir = "/workspace",
                                  .tty = t->tty,
                                  .rows = t->rows,
                                  .cols = t->cols,
                                  .on_drain = term_on_drain};
    t->x = s->driver->exec_open(eng, s->container_id, &o, term_on_output, term_on_exit, t);
    if (!t->x) {
        api_reply_error(r, ERR_INTERNAL, "cannot start an exec");
        t->error = strdup("cannot start an exec");
        term_record_end(t, ACTION_FAILED);
        term_free(t);
        return;
    }
    t->next = eng->terminals;
    eng->terminals = t;
    char detail[300];
    snprintf(detail, sizeof(detail), "opened %s: %.200s%s", t->id, t->cmd,
             t->root ? " (as root)" : "");
    store_event_add(eng->store, t->session_id, "terminal", detail, util_now());
    api_reply_upgrade(r, "tcp", term_on_upgraded, t);
    api_reply_header(r, "X-Paddock-Terminal", t->id);
    if (t->action_id) {
        char id[32];
        snprintf(id, sizeof(id), "%lld", (long long)t->action_id);
        api_reply_header(r, "X-Paddock-Action", id);
    }
}

/* The operator decided an agent's terminal ([security] "approve"). */
static void term_on_decided(bool approved, const char *why, void *ud)
{
    struct term *t = ud;
    struct api_req *r = t->waiting;
    t->waiting = NULL;
    if (approved && api_req_client_gone(r)) {
        /* Nobody would get the shell: it is not started (and not left running). */
        t->error = strdup("approved after its client went away; not opened");
        term_record_end(t, ACTION_FAILED);
        api_reply_error(r, ERR_CONFLICT, "%s", t->error);
        term_free(t);
        return;
    }
    if (approved) {
        term_start(t, r);
        return;
    }
    t->recorded_end = true; /* the rejection is the record */
    api_reply_error(r, ERR_FORBIDDEN,
                    "the terminal%s was not opened (it needs the operator's approval): %s",
                    t->root ? " as root" : "", why);
    term_free(t);
}

void terminal_route_open(struct api_req *r)
{
    struct session *s = api_live_session(r);
    if (!s)
        return;
    struct engine *eng = api_req_engine(r);
    enum err_code refusal = ERR_NONE;
    char msg[512] = "";
    if (session_check_actionable(s, &refusal, msg, sizeof(msg)) < 0 || !s->container_id) {
        api_reply_error(r, refusal ? refusal : ERR_CONFLICT, "%s", msg);
        return;
    }
    const char *up = api_req_header(r, "Upgrade"), *conn = api_req_header(r, "Connection");
    if (!up || !conn || !strcasestr(conn, "upgrade")) {
        api_reply_error(r, ERR_BAD_REQUEST,
                        "this endpoint is an HTTP upgrade: send Connection: Upgrade and "
                        "Upgrade: tcp, then use the connection as the terminal");
        return;
    }
    int rows, cols;
    if (term_query_int(r, "rows", 1, 1000, 24, &rows) < 0 ||
        term_query_int(r, "cols", 1, 1000, 80, &cols) < 0)
        return;
    const char *cmd = api_req_query(r, "cmd");
    if (cmd && (!*cmd || strlen(cmd) > 8192)) {
        api_reply_error(r, ERR_BAD_REQUEST, "\"cmd\" is a shell command line (1..8192 bytes)");
        return;
    }
    const char *tty = api_req_query(r, "tty");
    if (tty && strcmp(tty, "0") && strcmp(tty, "1")) {
        api_reply_error(r, ERR_BAD_REQUEST, "\"tty\" is 1 (the default) or 0");
        return;
    }
    const char *user = api_req_query(r, "user");
    if (user && strcmp(user, "agent") && strcmp(user, "root")) {
        api_reply_error(r, ERR_BAD_REQUEST, "\"user\" is agent (the default) or root");
        return;
    }
    bool root = user && strcmp(user, "root") == 0;
    if (root && s->driver == &driver_local) { /* root there would be the host's root */
        api_reply_error(r, ERR_NOT_IMPLEMENTED,
                        "a root terminal is not available on the local backend (its sandbox has "
                        "only its unprivileged user)");
        return;
    }
    /* The agents' channel gets what [security] says; the operator's is never asked. */
    enum security_ask ask = root ? SECURITY_ROOT_TERMINAL : SECURITY_TERMINAL;
    enum security_mode mode = SECURITY_ALLOW;
    if (!api_req_is_operator(r) &&
        (mode = security_decide(eng, 1u << ask, msg, sizeof(msg))) == SECURITY_REFUSE) {
        api_reply_error(r, ERR_FORBIDDEN, "%s", msg);
        return;
    }
    struct term *t = calloc(1, sizeof(*t));
    if (!t || util_random_hex(t->id, 8) < 0 || !(t->cmd = strdup(cmd ? cmd : "login shell"))) {
        free(t);
        api_reply_error(r, ERR_INTERNAL, "out of memory");
        return;
    }
    t->eng = eng;
    t->drv = s->driver;
    t->fd = -1;
    t->rows = rows;
    t->cols = cols;
    t->tty = !tty || strcmp(tty, "1") == 0;
    t->root = root;
    t->login = !cmd;
    t->channel = api_req_channel(r);
    snprintf(t->session_id, sizeof(t->session_id), "%s", session_id(s));
    char summary[300], reason[200];
    snprintf(summary, sizeof(summary), "%s%.200s", root ? "as root: " : "", t->cmd);
    snprintf(reason, sizeof(reason), "[security] %s = \"%s\"", security_ask_name(ask),
             security_mode_name(mode));
    json_t *action = json_pack("{s:s,s:{s:s,s:s,s:s,s:s,s:b}}", "action", "terminal", "args",
                               "command", t->cmd, "user", root ? "root" : "agent", "channel",
                               t->channel, "terminal", t->id, "tty", t->tty);
    struct action_request q = {
        .session_id = t->session_id,
        .action = action,
        .summary = summary,
        .risk = root ? RISK_HIGH : RISK_MEDIUM,
        .risk_reason = root ? "a terminal as root in the sandbox"
                            : "a terminal: its commands pass no risk check",
        .pending = mode == SECURITY_APPROVE,
        .timeout = eng->approval_timeout,
        .decided_by = api_req_is_operator(r) ? "operator" : "config",
        .decision_reason = api_req_is_operator(r) ? "opened on the operator's channel" : reason,
    };
    char *err = NULL;
    t->action_id = action ? action_ask(eng, &q, term_on_decided, t, &err) : -1;
    json_decref(action);
    if (t->action_id < 0) {
        t->action_id = 0;
        api_reply_error(r, ERR_STORE_ERROR,
                        "the terminal was not opened: it could not be "
                        "recorded (%s)",
                        err ? err : "out of memory");
        free(err);
        term_free(t);
        return;
    }
    if (mode == SECURITY_APPROVE) {
        t->waiting = r; /* answered by term_on_decided */
        return;
    }
    term_start(t, r);
}

static void term_on_resized(const struct sandbox_reply *dr, void *ud)
{
    struct term *t = ud;
    if (dr->status == 200 || dr->status == 201)
        term_resize_answer(t, ERR_NONE, NULL);
    else
        term_resize_answer(t, ERR_DOCKER_ERROR,
                           dr->message && *dr->message ? dr->message : "Docker refused");
}

void terminal_route_resize(struct api_req *r)
{
    if (!api_session_known(r))
        return;
    json_t *body = api_req_json(r, 0);
    if (!body)
        return;
    json_t *id = json_object_get(body, "terminal"), *jr = json_object_get(body, "rows"),
           *jc = json_object_get(body, "cols");
    struct term *t = json_is_string(id)
                         ? term_find(api_req_engine(r), api_req_param(r, 0), json_string_value(id))
                         : NULL;
    if (!json_is_string(id) || !json_is_integer(jr) || !json_is_integer(jc) ||
        json_integer_value(jr) < 1 || json_integer_value(jr) > 1000 || json_integer_value(jc) < 1 ||
        json_integer_value(jc) > 1000)
        api_reply_error(r, ERR_BAD_REQUEST,
                        "the body is {\"terminal\": id, \"rows\": 1..1000, \"cols\": 1..1000}");
    else if (!t)
        api_reply_error(r, ERR_NOT_FOUND, "no terminal %.40s in session %s", json_string_value(id),
                        api_req_param(r, 0));
    else if (strcmp(t->channel, "operator") == 0 && !api_req_is_operator(r))
        /* Its id is in the session's history, which agents read: the operator's terminal is
         * sized by the operator only. */
        api_reply_error(r, ERR_FORBIDDEN,
                        "terminal %s was opened on the operator's channel: only the operator "
                        "resizes it",
                        t->id);
    else if (!t->x)
        api_reply_error(r, ERR_CONFLICT, "terminal %s has ended", t->id);
    else {
        /* the answer waits for Docker: a client that resizes then runs `stty size` sees it */
        t->rows = (int)json_integer_value(jr);
        t->cols = (int)json_integer_value(jc);
        term_resize_answer(t, ERR_NONE, NULL); /* a newer size supersedes one in flight */
        t->resize_req = r;
        if (t->drv->exec_resize(t->x, t->rows, t->cols, term_on_resized, t) < 0)
            term_resize_answer(t, ERR_INTERNAL, "out of memory");
    }
    json_decref(body);
}

void terminal_route_get(struct api_req *r)
{
    if (!api_session_known(r))
        return;
    struct term *t = term_find(api_req_engine(r), api_req_param(r, 0), api_req_param(r, 1));
    if (!t) {
        api_reply_error(r, ERR_NOT_FOUND,
                        "no terminal %.40s in session %s (an ended one is kept a minute)",
                        api_req_param(r, 1), api_req_param(r, 0));
        return;
    }
    json_t *o = json_pack("{s:s,s:s,s:i,s:i,s:b}", "terminal", t->id, "cmd", t->cmd, "rows",
                          t->rows, "cols", t->cols, "running", !t->exited);
    json_object_set_new(o, "exit_code",
                        t->exited && !t->error ? json_integer(t->exit_code) : json_null());
    json_object_set_new(o, "error", t->error ? json_string(t->error) : json_null());
    api_reply_json(r, 200, o);
}

void terminals_free(struct engine *eng)
{
    while (eng->terminals) {
        struct term *t = eng->terminals;
        if (!t->closed) {
            t->closed = true;
            if (t->fd >= 0) {
                loop_del_fd(eng->loop, t->fd);
                api_upgrade_close(eng->api, t->urh);
            }
            if (t->x)
                t->drv->exec_close(t->x);
            term_resize_answer(t, ERR_UNAVAILABLE, "the engine is stopping");
            term_record_end(t, ACTION_INTERRUPTED);
        }
        term_free(t);
    }
}
