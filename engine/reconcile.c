/* What the containers really are: reconcile (at engine start and whenever the daemon comes
 * back) finds them by label, never by name; Docker's events move sessions as they happen;
 * sessions whose executor does not answer are retried with backoff. */
#include "engine/session.h"

#include "engine/api.h"
#include "engine/base/loop.h"
#include "engine/base/session_state.h"
#include "engine/base/util.h"
#include "engine/docker/http.h"
#include "engine/driver.h"
#include "engine/engine_internal.h"
#include "engine/session_internal.h"
#include "engine/store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RETRY_FIRST_MS 500
#define RETRY_MAX_MS 30000

static void refresh_done(struct session *s);

void session_retry_cancel(struct session *s)
{
    if (s->retry_timer)
        loop_timer_cancel(s->eng->loop, s->retry_timer);
    s->retry_timer = NULL;
}

/* malloc'd; the executor still listens on its socket, unlinked, so only a new one helps. */
static char *session_channel_reason(const char *why)
{
    return util_strdupf("its executor's channel was refused: %s; stop and resume the session to "
                        "start its executor again",
                        why ? why : "");
}

static void retry_on_timer(void *ud)
{
    struct session *s = ud;
    s->retry_timer = NULL;
    session_refresh(s);
}

/* Disconnected: try again later, waiting twice as long each time (up to 30 s). */
static void retry_schedule(struct session *s)
{
    if (s->retry_timer || s->unlinked || s->eng->stopping)
        return;
    s->retry_ms = s->retry_ms ? s->retry_ms * 2 : RETRY_FIRST_MS;
    if (s->retry_ms > RETRY_MAX_MS)
        s->retry_ms = RETRY_MAX_MS;
    s->retry_timer = loop_timer_add(s->eng->loop, s->retry_ms, retry_on_timer, s);
}

void session_channel_refused(struct session *s, const char *why)
{
    if (!session_st_allows(s->state, SESSION_DISCONNECTED))
        return;
    char *reason = session_channel_reason(why);
    session_set_state(s, SESSION_DISCONNECTED,
                      reason ? reason : "its executor's channel was refused");
    free(reason);
    retry_schedule(s);
}

static void session_gone(struct session *s)
{
    session_set_state(s, SESSION_ERROR, "container removed outside paddock");
    util_remove_tree(s->sock_dir);
}

/* A reply that arrives after the session moved on (an event, a request) says nothing now. */
static bool refresh_outdated(struct session *s, unsigned gen)
{
    if (s->unlinked || s->eng->stopping)
        return true;
    if (s->op != SESSION_OP_NONE) {
        s->stale = true;
        return true;
    }
    if (s->gen != gen || s->refresh_again) {
        s->refresh_again = true;
        return true;
    }
    return false;
}

struct refresh_op {
    struct session *s;
    unsigned gen;
};

static void refresh_on_alive(const struct http_result *r, void *ud)
{
    struct refresh_op *op = ud;
    struct session *s = op->s;
    if (!refresh_outdated(s, op->gen)) {
        if (r->status == 200) {
            if (session_st_allows(s->state, SESSION_STARTED) &&
                !session_st_allows(s->state, SESSION_READY))
                session_set_state(s, SESSION_STARTED, NULL);
            session_set_state(s, SESSION_READY, NULL);
            s->retry_ms = 0;
        } else {
            char *why = r->peer_refused ? session_channel_reason(r->error)
                        : r->status < 0
                            ? util_strdupf("its executor does not answer: %s", r->error)
                            : util_strdupf("its executor answered /alive with %ld", r->status);
            session_set_state(s, SESSION_DISCONNECTED, why ? why : "its executor does not answer");
            free(why);
            retry_schedule(s);
        }
    }
    free(op);
    refresh_done(s);
}

static void refresh_probe(struct session *s)
{
    struct refresh_op *op = calloc(1, sizeof(*op));
    /* A new connection: one kept from before would say nothing of what serves the socket now. */
    struct http_request req = {
        .method = "GET", .url = "http://executor/alive", .timeout_ms = 2000, .fresh_connect = true};
    if (op) {
        op->s = s;
        op->gen = s->gen;
    }
    if (!op || s->driver->executor_request(s, &req, refresh_on_alive, op) < 0) {
        free(op);
        retry_schedule(s);
        refresh_done(s);
    }
}

/* "exited with code 137 (SIGKILL)"; malloc'd. */
static char *refresh_exit_reason(json_t *state, json_t *host, bool oom, int code)
{
    const char *err = json_string_value(json_object_get(state, "Error"));
    const char *sig = code == 137 ? " (SIGKILL)" : code == 143 ? " (SIGTERM)" : "";
    if (oom) {
        json_int_t limit = json_integer_value(json_object_get(host, "Memory"));
        if (limit > 0)
            return util_strdupf("killed by the kernel: out of memory (limit %lld MiB), exit "
                                "code %d",
                                (long long)(limit / (1024 * 1024)), code);
        return util_strdupf("killed by the kernel: out of memory, exit code %d", code);
    }
    return util_strdupf("exited with code %d%s%s%s", code, sig, err && *err ? ": " : "",
                        err ? err : "");
}

static void refresh_on_inspect(const struct sandbox_reply *r, void *ud)
{
    struct refresh_op *op = ud;
    struct session *s = op->s;
    unsigned gen = op->gen;
    free(op);
    if (refresh_outdated(s, gen)) {
        refresh_done(s);
        return;
    }
    if (r->status < 0) {
        char *why = util_strdupf("Docker daemon not reachable: %s", r->message);
        if (session_st_allows(s->state, SESSION_DISCONNECTED))
            session_set_state(s, SESSION_DISCONNECTED, why ? why : "Docker daemon not reachable");
        free(why);
        retry_schedule(s);
        refresh_done(s);
        return;
    }
    json_t *state = json_object_get(r->json, "State");
    const char *status = json_string_value(json_object_get(state, "Status"));
    if (r->status == 404 || (status && strcmp(status, "removing") == 0)) {
        session_gone(s);
    } else if (r->status != 200 || !status) {
        char *why = util_strdupf("docker inspect answered %ld: %s", r->status, r->message);
        if (session_st_allows(s->state, SESSION_DISCONNECTED))
            session_set_state(s, SESSION_DISCONNECTED, why ? why : "docker inspect failed");
        free(why);
        retry_schedule(s);
    } else if (strcmp(status, "running") == 0) {
        /* Its first process now (it may have been started again from outside). */
        s->exec_init_pid = (long)json_integer_value(json_object_get(state, "Pid"));
        refresh_probe(s); /* it calls refresh_done */
        return;
    } else if (strcmp(status, "paused") == 0) {
        if (s->state != SESSION_PAUSED) /* keep "paused by request" */
            session_set_state(s, SESSION_PAUSED, "paused outside paddock");
    } else if (strcmp(status, "restarting") == 0) {
        session_set_state(s, SESSION_DISCONNECTED, "the container is restarting");
        retry_schedule(s);
    } else if (s->state == SESSION_STOPPED || s->state == SESSION_OOM_KILLED) {
        /* Already known to be down: keep the reason it had ("stopped by request"). */
    } else { /* exited, dead, created */
        int code = (int)json_integer_value(json_object_get(state, "ExitCode"));
        bool oom = json_is_true(json_object_get(state, "OOMKilled"));
        char *why =
            strcmp(status, "created") == 0
                ? strdup("the container was never started")
                : refresh_exit_reason(state, json_object_get(r->json, "HostConfig"), oom, code);
        session_set_state_exit(s, oom ? SESSION_OOM_KILLED : SESSION_STOPPED, why ? why : "exited",
                               code);
        free(why);
    }
    refresh_done(s);
}

static void refresh_done(struct session *s)
{
    s->refreshing = false;
    bool again = s->refresh_again && !s->unlinked && !s->eng->stopping;
    s->refresh_again = false;
    if (again)
        session_refresh(s);
    session_release(s);
}

void session_refresh(struct session *s)
{
    if (s->unlinked || s->eng->stopping || !session_st_is_live(s->state))
        return;
    if (s->op != SESSION_OP_NONE) {
        s->stale = true;
        return;
    }
    if (s->refreshing) {
        s->refresh_again = true;
        return;
    }
    if (!s->container_id) {
        session_set_state(s, SESSION_ERROR,
                          "the engine stopped before the session had a container");
        util_remove_tree(s->sock_dir);
        return;
    }
    session_retry_cancel(s);
    s->refreshing = true;
    session_hold(s);
    struct refresh_op *op = calloc(1, sizeof(*op));
    if (op) {
        op->s = s;
        op->gen = s->gen;
    }
    if (!op || s->driver->inspect(s->eng, s->container_id, refresh_on_inspect, op) < 0) {
        free(op);
        retry_schedule(s);
        refresh_done(s);
    }
}

/* ---- reconcile: every session against Docker's list of this engine's containers ---- */

static void reconcile_on_list(const struct sandbox_reply *r, void *ud)
{
    struct engine *eng = ud;
    if (eng->stopping)
        return;
    if (r->status != 200 || !json_is_array(r->json)) {
        char *why = util_strdupf("Docker daemon not reachable: %s", r->message);
        session_mark_disconnected(eng, why ? why : "Docker daemon not reachable");
        free(why);
        return;
    }
    for (struct session *s = eng->sessions; s; s = s->next)
        s->seen = false;
    size_t i;
    json_t *c;
    json_array_foreach(r->json, i, c)
    {
        const char *cid = json_string_value(json_object_get(c, "Id"));
        const char *sid =
            json_string_value(json_object_get(json_object_get(c, "Labels"), "paddock.session"));
        struct session *s = sid ? session_find(eng, sid) : NULL;
        /* A container of no live session, or a second one of a session: left for gc. */
        if (!cid || !s || !session_st_is_live(s->state))
            continue;
        if (s->container_id && strcmp(s->container_id, cid) != 0)
            continue;
        if (!s->container_id && s->op == SESSION_OP_NONE) {
            /* The engine stopped between docker create and recording the id. */
            s->container_id = strdup(cid);
            store_session_set_container(eng->store, s->id, cid, util_now());
        }
        s->seen = true;
    }
    for (struct session *s = eng->sessions; s; s = s->next) {
        if (s->op != SESSION_OP_NONE || !session_st_is_live(s->state))
            continue;
        if (s->seen || s->driver != eng->driver) /* another driver's: asked on its own */
            session_refresh(s);
        else if (s->container_id)
            session_gone(s);
        else
            session_refresh(s); /* no container ever: error */
    }
}

void session_reconcile(struct engine *eng)
{
    char *label = util_strdupf("paddock.engine=%s", eng->engine_id);
    /* Sessions of another driver (local) do not wait for Docker's list. */
    for (struct session *s = eng->sessions; s; s = s->next)
        if (s->driver != eng->driver && s->op == SESSION_OP_NONE && session_st_is_live(s->state))
            session_refresh(s);
    if (!label || eng->driver->list(eng, label, reconcile_on_list, eng) < 0) {
        struct sandbox_reply r = {.status = -1, .message = "cannot start a request"};
        reconcile_on_list(&r, eng);
    }
    free(label);
}

void session_mark_disconnected(struct engine *eng, const char *why)
{
    for (struct session *s = eng->sessions; s; s = s->next) {
        unsigned running = SESSION_ST_SET(SESSION_READY) | SESSION_ST_SET(SESSION_STARTED) |
                           SESSION_ST_SET(SESSION_PAUSED) | SESSION_ST_SET(SESSION_DISCONNECTED);
        /* Only the engine's driver is down: another driver's sandboxes are not. */
        if (s->op != SESSION_OP_NONE || !(running & SESSION_ST_SET(s->state)) ||
            s->driver != eng->driver)
            continue;
        session_set_state(s, SESSION_DISCONNECTED, why);
    }
}

/* ---- Docker's events ---- */

/* Events a lifecycle operation causes itself; any other meaningful one makes it stale. */
static bool event_expected(enum session_op op, const char *action)
{
    /* Docker's event actions each operation causes (a claim causes none). */
    static const char *const expected[SESSION_OP_COUNT] = {
        [SESSION_OP_CREATE] = " create start ",     [SESSION_OP_PAUSE] = " pause ",
        [SESSION_OP_RESUME] = " unpause start ",    [SESSION_OP_STOP] = " kill die stop ",
        [SESSION_OP_DELETE] = " kill die destroy ",
    };
    char word[40];
    snprintf(word, sizeof(word), " %.30s ", action);
    const char *actions = (unsigned)op < SESSION_OP_COUNT ? expected[op] : NULL;
    return actions && strstr(actions, word) != NULL;
}

static void event_oom(struct session *s)
{
    struct engine *eng = s->eng;
    store_session_count_oom(eng->store, s->id, util_now());
    store_event_add(eng->store, s->id, "oom",
                    "the kernel killed a process of the sandbox: out of memory", util_now());
    session_publish(eng, s->id);
}

void session_on_sandbox_event(struct engine *eng, json_t *ev)
{
    const char *action = json_string_value(json_object_get(ev, "Action"));
    json_t *actor = json_object_get(ev, "Actor");
    const char *cid = json_string_value(json_object_get(actor, "ID"));
    const char *sid =
        json_string_value(json_object_get(json_object_get(actor, "Attributes"), "paddock.session"));
    struct session *s = sid ? session_find(eng, sid) : NULL;
    /* A session in error already said why (its create failed, its container went): the
     * destroy of a container it removed itself must not replace that reason. */
    if (!action || !cid || !s || !s->container_id || strcmp(s->container_id, cid) != 0 ||
        eng->stopping || !session_st_is_live(s->state))
        return;
    if (strcmp(action, "oom") == 0) {
        event_oom(s);
        /* The container lives on unless the killed process was its init or executor; "die"
         * follows then. */
        return;
    }
    static const char *const meaningful[] = {"die", "destroy", "pause", "unpause", "start"};
    bool meant = false;
    for (size_t i = 0; i < sizeof(meaningful) / sizeof(meaningful[0]); i++)
        meant = meant || strcmp(action, meaningful[i]) == 0;
    if (!meant)
        return; /* exec_*, kill (die follows), attach, resize, ... */
    if (s->op != SESSION_OP_NONE) {
        if (!event_expected(s->op, action))
            s->stale = true;
        return;
    }
    if (strcmp(action, "destroy") == 0) {
        session_retry_cancel(s);
        session_gone(s);
    } else {
        /* die: the exit code and whether the OOM killer did it come from inspect; start (from
         * outside): the executor is probed. pause and unpause are asked of inspect too: the
         * event stream lags, so the "pause" of the engine's own pause can arrive after its
         * resume has finished, and taken at its word it would pause a running session. */
        session_refresh(s);
    }
}

/* ---- explaining a failed action ---- */

/* After the executor's connection broke, how long Docker may take to report the container's
 * exit before the failure is blamed on the executor alone. */
#define EXPLAIN_WAIT_MS 3000

struct explain {
    struct session *s;
    void (*fn)(const char *msg, void *ud);
    void *ud;
    char *error;
    bool waited;
};

static void explain_on_inspect(const struct sandbox_reply *r, void *ud);

/* The connection broke a moment before Docker saw the container die: wait for it, briefly
 * (POST /wait returns when it stops; event-driven, no polling). */
static void explain_on_wait(const struct sandbox_reply *r, void *ud)
{
    struct explain *x = ud;
    if (r->status != 200 ||
        x->s->driver->inspect(x->s->eng, x->s->container_id, explain_on_inspect, x) < 0) {
        struct sandbox_reply running = {.status = 200, .message = ""};
        explain_on_inspect(&running, x);
    }
}

static void explain_on_inspect(const struct sandbox_reply *r, void *ud)
{
    struct explain *x = ud;
    json_t *state = json_object_get(r->json, "State");
    const char *status = json_string_value(json_object_get(state, "Status"));
    if (r->status == 200 && status && strcmp(status, "running") == 0 && !x->waited) {
        x->waited = true;
        if (x->s->driver->wait(x->s->eng, x->s->container_id, EXPLAIN_WAIT_MS, explain_on_wait,
                               x) == 0)
            return;
    }
    char *msg;
    if (r->status == 404) {
        msg = strdup("the sandbox container was removed while the action ran");
    } else if (r->status == 200 && status && strcmp(status, "running") != 0 &&
               strcmp(status, "paused") != 0) {
        int code = (int)json_integer_value(json_object_get(state, "ExitCode"));
        bool oom = json_is_true(json_object_get(state, "OOMKilled"));
        msg = util_strdupf("the sandbox container %s (code %d%s) while the action ran",
                           strcmp(status, "exited") == 0 ? "exited" : status, code,
                           oom ? ", out of memory" : "");
    } else {
        msg = util_strdupf("the sandbox's executor is not reachable: %s%s", x->error,
                           r->status < 0 ? " (and the Docker daemon does not answer)" : "");
    }
    x->fn(msg ? msg : "the sandbox's executor is not reachable", x->ud);
    free(msg);
    /* The state follows at once rather than when the event comes. */
    if (!x->s->unlinked)
        session_refresh(x->s);
    session_release(x->s);
    free(x->error);
    free(x);
}

void session_explain_failure(struct session *s, const struct http_result *r,
                             void (*fn)(const char *msg, void *ud), void *ud)
{
    const char *transport_error = r->error;
    if (r->peer_refused) {
        char msg[700];
        snprintf(msg, sizeof(msg), "the sandbox's executor channel was refused: %s",
                 transport_error ? transport_error : "");
        fn(msg, ud);
        return;
    }
    struct explain *x = calloc(1, sizeof(*x));
    if (x) {
        x->s = s;
        x->fn = fn;
        x->ud = ud;
        x->error = strdup(transport_error ? transport_error : "transport error");
    }
    if (!x || !x->error || !s->container_id || s->eng->stopping) {
        char msg[300];
        snprintf(msg, sizeof(msg), "the sandbox's executor is not reachable: %.200s",
                 transport_error ? transport_error : "transport error");
        if (x)
            free(x->error);
        free(x);
        fn(msg, ud);
        return;
    }
    session_hold(s);
    if (s->driver->inspect(s->eng, s->container_id, explain_on_inspect, x) < 0) {
        struct sandbox_reply none = {.status = -1, .message = ""};
        explain_on_inspect(&none, x);
    }
}
