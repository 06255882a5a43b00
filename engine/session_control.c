/* Operator and agent requests on a live session: pause, resume, stop, attach; and the engine's
 * clean stop, which deletes the sessions that asked not to be kept (keep_alive false). */
#include "engine/session.h"

#include "engine/base/loop.h"
#include "engine/base/session_state.h"
#include "engine/base/util.h"
#include "engine/disk.h"
#include "engine/driver.h"
#include "engine/engine_internal.h"
#include "engine/session_internal.h"
#include "engine/store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How long a clean engine stop waits for keep_alive=false sessions to be deleted. */
#define SESSION_SHUTDOWN_GRACE_MS 20000

static void control_reply_session(struct session *s, unsigned status, session_done_fn fn, void *ud)
{
    if (!fn)
        return;
    json_t *body = store_session_get(s->eng->store, s->id);
    struct session_result res = {.status = status, .body = body};
    fn(&res, ud);
    json_decref(body);
}

static void control_refuse(session_done_fn fn, void *ud, enum err_code err, const char *msg)
{
    if (!fn)
        return;
    struct session_result res = {.status = err_status(err), .err = err, .message = msg};
    fn(&res, ud);
}

int session_check(struct session *s, const char *verb, enum session_st target, unsigned from_ok,
                  session_done_fn fn, void *ud)
{
    char msg[640];
    if (s->op != SESSION_OP_NONE) {
        snprintf(msg, sizeof(msg), "cannot %s session %s: %s in progress; retry once it is done",
                 verb, s->id, session_op_name(s->op));
        control_refuse(fn, ud, ERR_CONFLICT, msg);
        return -1;
    }
    if (s->state == target) {
        control_reply_session(s, 200, fn, ud);
        return 1;
    }
    if (from_ok & SESSION_ST_SET(s->state))
        return 0;
    char hint[256];
    session_st_hint(s->state, s->id, hint, sizeof(hint));
    json_t *cur = store_session_get(s->eng->store, s->id);
    const char *why = json_string_value(json_object_get(cur, "reason"));
    snprintf(msg, sizeof(msg), "cannot %s session %s: it is %s%s%.200s%s%s%s", verb, s->id,
             session_st_name(s->state), why ? " (" : "", why ? why : "", why ? ")" : "",
             hint[0] ? "; " : "", hint);
    json_decref(cur);
    control_refuse(fn, ud, ERR_CONFLICT, msg);
    return -1;
}

/* A Docker call of an operation failed: the reply says why; 404 means the container is gone. */
static void control_docker_failed(struct session *s, const char *verb,
                                  const struct sandbox_reply *r, session_done_fn fn, void *ud)
{
    char *msg;
    enum err_code err;
    if (r->status < 0) {
        msg = util_strdupf("cannot %s session %s: Docker daemon not reachable at %s (%s)", verb,
                           s->id, s->eng->driver->address(s->eng), r->message);
        err = ERR_DOCKER_UNAVAILABLE;
    } else if (r->status == 404) {
        session_set_state(s, SESSION_ERROR, "container removed outside paddock");
        util_remove_tree(s->sock_dir);
        msg = util_strdupf("cannot %s session %s: its container was removed outside paddock", verb,
                           s->id);
        err = ERR_CONFLICT;
    } else {
        msg = util_strdupf("cannot %s session %s: docker %s failed (%ld): %s", verb, s->id, verb,
                           r->status, r->message);
        /* Docker's 409: the container is not in the state we thought (an event is on its way). */
        err = r->status == 409 ? ERR_CONFLICT : ERR_DOCKER_ERROR;
        s->stale = true; /* look at the container again: it may not be what we thought */
    }
    control_refuse(fn, ud, err, msg ? msg : "docker call failed");
    free(msg);
}

struct control_op {
    struct session *s;
    session_done_fn fn; /* NULL: nobody waits for the reply */
    void *ud;
    char *reason; /* the state's reason once done (pause), malloc'd */
};

static struct control_op *control_op_new(struct session *s, enum session_op kind,
                                         session_done_fn fn, void *ud)
{
    struct control_op *op = calloc(1, sizeof(*op));
    if (!op) {
        control_refuse(fn, ud, ERR_INTERNAL, "out of memory");
        return NULL;
    }
    op->s = s;
    op->fn = fn;
    op->ud = ud;
    session_op_begin(s, kind);
    return op;
}

static void control_op_end(struct control_op *op)
{
    session_op_end(op->s);
    free(op->reason);
    free(op);
}

/* ---- pause ---- */

static void pause_on_paused(const struct sandbox_reply *r, void *ud)
{
    struct control_op *op = ud;
    if (r->status == 204) {
        /* A driver may say how it paused (the local one: cgroup freezer or SIGSTOP). */
        const char *why = op->reason ? op->reason : "paused by request";
        char *told = r->message && *r->message ? util_strdupf("%s (%s)", why, r->message) : NULL;
        session_set_state(op->s, SESSION_PAUSED, told ? told : why);
        free(told);
        control_reply_session(op->s, 200, op->fn, op->ud);
    } else {
        control_docker_failed(op->s, "pause", r, op->fn, op->ud);
    }
    control_op_end(op);
}

void session_pause(struct session *s, session_done_fn fn, void *ud)
{
    session_pause_because(s, NULL, fn, ud);
}

void session_pause_because(struct session *s, const char *reason, session_done_fn fn, void *ud)
{
    if (session_check(s, "pause", SESSION_PAUSED,
                      SESSION_ST_SET(SESSION_READY) | SESSION_ST_SET(SESSION_STARTED) |
                          SESSION_ST_SET(SESSION_DISCONNECTED),
                      fn, ud))
        return;
    struct control_op *op = control_op_new(s, SESSION_OP_PAUSE, fn, ud);
    if (op && reason && !(op->reason = strdup(reason))) {
        control_refuse(fn, ud, ERR_INTERNAL, "out of memory");
        control_op_end(op);
        return;
    }
    if (op && s->driver->pause(s->eng, s->container_id, pause_on_paused, op) < 0) {
        struct sandbox_reply r = {.status = -1, .message = "cannot start a request"};
        pause_on_paused(&r, op);
    }
}

/* ---- resume: unpause (paused) or start again (stopped, oom-killed) ---- */

static void resume_on_unpaused(const struct sandbox_reply *r, void *ud)
{
    struct control_op *op = ud;
    if (r->status == 204) {
        session_set_state(op->s, SESSION_READY, NULL);
        disk_watch_soon(op->s->eng, op->s->id); /* still over its limit: paused again */
        control_reply_session(op->s, 200, op->fn, op->ud);
    } else {
        control_docker_failed(op->s, "resume", r, op->fn, op->ud);
    }
    control_op_end(op);
}

static void control_resume(struct session *s, const char *verb, session_done_fn fn, void *ud)
{
    if (session_check(s, verb, SESSION_READY,
                      SESSION_ST_SET(SESSION_PAUSED) | SESSION_ST_SET(SESSION_STOPPED) |
                          SESSION_ST_SET(SESSION_OOM_KILLED),
                      fn, ud))
        return;
    if (s->state == SESSION_PAUSED) {
        struct control_op *op = control_op_new(s, SESSION_OP_RESUME, fn, ud);
        if (op && s->driver->resume(s->eng, s->container_id, resume_on_unpaused, op) < 0) {
            struct sandbox_reply r = {.status = -1, .message = "cannot start a request"};
            resume_on_unpaused(&r, op);
        }
        return;
    }
    /* Stopped: the same container starts again (its filesystem is kept, its processes are
     * new), then the executor is awaited as at create. */
    session_op_begin(s, SESSION_OP_RESUME);
    session_set_state(s, SESSION_STARTING, "restarting the stopped container");
    session_start_container(s, true, fn, ud);
}

void session_resume(struct session *s, session_done_fn fn, void *ud)
{
    control_resume(s, "resume", fn, ud);
}

/* ---- stop ---- */

static void stop_on_inspect(const struct sandbox_reply *r, void *ud)
{
    struct control_op *op = ud;
    json_t *st = json_object_get(r->json, "State");
    int code = json_is_integer(json_object_get(st, "ExitCode"))
                   ? (int)json_integer_value(json_object_get(st, "ExitCode"))
                   : STORE_NO_EXIT_CODE;
    session_set_state_exit(op->s, SESSION_STOPPED, "stopped by request", code);
    control_reply_session(op->s, 200, op->fn, op->ud);
    control_op_end(op);
}

static void stop_on_stopped(const struct sandbox_reply *r, void *ud)
{
    struct control_op *op = ud;
    if (r->status != 204 && r->status != 304) {
        control_docker_failed(op->s, "stop", r, op->fn, op->ud);
        control_op_end(op);
        return;
    }
    /* The exit code goes with the state. */
    if (op->s->driver->inspect(op->s->eng, op->s->container_id, stop_on_inspect, op) < 0) {
        struct sandbox_reply none = {.status = -1, .message = ""};
        stop_on_inspect(&none, op);
    }
}

void session_stop(struct session *s, session_done_fn fn, void *ud)
{
    if (session_check(s, "stop", SESSION_STOPPED,
                      SESSION_ST_SET(SESSION_READY) | SESSION_ST_SET(SESSION_PAUSED) |
                          SESSION_ST_SET(SESSION_STARTED) | SESSION_ST_SET(SESSION_DISCONNECTED),
                      fn, ud))
        return;
    struct control_op *op = control_op_new(s, SESSION_OP_STOP, fn, ud);
    /* docker stop sends SIGTERM (the init passes it on) and SIGKILL after 5 s; a paused
     * container is thawed by Docker so that it can die. */
    if (op && s->driver->stop(s->eng, s->container_id, 5, stop_on_stopped, op) < 0) {
        struct sandbox_reply r = {.status = -1, .message = "cannot start a request"};
        stop_on_stopped(&r, op);
    }
}

/* ---- attach ---- */

void session_attach(struct engine *eng, const char *ref, session_done_fn fn, void *ud)
{
    struct session *s = session_find_ref(eng, ref);
    char msg[640];
    if (!s) {
        json_t *stored = store_session_get(eng->store, ref);
        if (stored)
            snprintf(msg, sizeof(msg), "session %s is deleted; create a new session", ref);
        else
            snprintf(msg, sizeof(msg), "no session with id or name \"%.200s\"", ref);
        json_decref(stored);
        control_refuse(fn, ud, ERR_NOT_FOUND, msg);
        return;
    }
    if (s->state == SESSION_READY && s->op == SESSION_OP_NONE) {
        control_reply_session(s, 200, fn, ud);
        return;
    }
    /* Paused or stopped: attaching brings it back. Anything else is refused with its state. */
    control_resume(s, "attach to", fn, ud);
}

/* ---- the engine stopping cleanly ---- */

struct shutdown {
    struct engine *eng;
    int pending;
    void (*done)(void *ud);
    void *ud;
    struct loop_timer *timer;
};

static struct shutdown *session_shutdown_state;

static void shutdown_finish(struct shutdown *sd)
{
    if (sd->timer)
        loop_timer_cancel(sd->eng->loop, sd->timer);
    session_shutdown_state = NULL;
    void (*done)(void *) = sd->done;
    void *ud = sd->ud;
    free(sd);
    done(ud);
}

static void shutdown_on_deleted(const struct session_result *r, void *ud)
{
    struct shutdown *sd = session_shutdown_state;
    if (sd && --sd->pending == 0)
        shutdown_finish(sd);
}

static void shutdown_on_timeout(void *ud)
{
    struct shutdown *sd = ud;
    sd->timer = NULL;
    shutdown_finish(sd);
}

void session_shutdown_delete(struct session *s)
{
    s->doomed = false;
    if (s->unlinked || s->state == SESSION_DELETED)
        shutdown_on_deleted(NULL, NULL); /* an earlier delete got there first */
    else
        session_delete(s, shutdown_on_deleted, NULL);
}

void session_shutdown(struct engine *eng, void (*done)(void *ud), void *ud)
{
    struct shutdown *sd = calloc(1, sizeof(*sd));
    if (!sd) {
        done(ud);
        return;
    }
    sd->eng = eng;
    sd->done = done;
    sd->ud = ud;
    sd->pending = 1;
    session_shutdown_state = sd;
    /* Collect first: deleting unlinks sessions from the list we walk. */
    size_t n = 0;
    for (struct session *s = eng->sessions; s; s = s->next)
        n++;
    struct session **doomed = calloc(n + 1, sizeof(*doomed));
    size_t k = 0;
    for (struct session *s = eng->sessions; doomed && s; s = s->next)
        if (!s->keep_alive)
            doomed[k++] = s;
    for (size_t i = 0; i < k; i++) {
        struct session *s = doomed[i];
        sd->pending++;
        if (s->op != SESSION_OP_NONE)
            s->doomed = true; /* deleted when its operation ends */
        else
            session_shutdown_delete(s);
    }
    free(doomed);
    sd->timer = loop_timer_add(eng->loop, SESSION_SHUTDOWN_GRACE_MS, shutdown_on_timeout, sd);
    if (--sd->pending == 0)
        shutdown_finish(sd);
}
