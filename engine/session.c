/* Session lifecycle: create (Docker create → start → executor /alive), execute, delete. Every
 * step is asynchronous on the engine loop; every state change goes through the table in
 * session_state.c and is recorded in the store. Pause, resume, stop and attach are in
 * session_control.c; reattaching and Docker's events in reconcile.c. */
#include "engine/session.h"

#include "common/buf.h"
#include "engine/action.h"
#include "engine/base/loop.h"
#include "engine/base/session_state.h"
#include "engine/base/util.h"
#include "engine/builder.h"
#include "engine/changes.h"
#include "engine/disk.h"
#include "engine/docker/http.h"
#include "engine/driver.h"
#include "engine/driver_local.h"
#include "engine/egress.h"
#include "engine/engine_internal.h"
#include "engine/events.h"
#include "engine/logs.h"
#include "engine/pool.h"
#include "engine/seccomp_probe.h"
#include "engine/security.h"
#include "engine/session_config.h"
#include "engine/session_internal.h"
#include "engine/session_prepare.h"
#include "engine/stats.h"
#include "engine/store/store.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

const char *session_id(const struct session *s)
{
    return s->id;
}

enum session_st session_state(const struct session *s)
{
    return s->state;
}

static void session_free(struct session *s)
{
    if (s->retry_timer)
        loop_timer_cancel(s->eng->loop, s->retry_timer);
    free(s->name);
    free(s->image);
    free(s->container_id);
    free(s->sock_dir);
    free(s->exec_sock);
    json_decref(s->rules);
    free(s);
}

void session_hold(struct session *s)
{
    s->busy++;
}

void session_release(struct session *s)
{
    if (--s->busy == 0 && s->unlinked)
        session_free(s);
}

static void session_unlink(struct session *s)
{
    for (struct session **pp = &s->eng->sessions; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    s->unlinked = true;
    session_retry_cancel(s);
    if (s->busy == 0)
        session_free(s);
}

struct session *session_find(struct engine *eng, const char *id)
{
    for (struct session *s = eng->sessions; s; s = s->next)
        if (strcmp(s->id, id) == 0)
            return s;
    return NULL;
}

struct session *session_find_ref(struct engine *eng, const char *ref)
{
    struct session *s = session_find(eng, ref);
    if (s)
        return s;
    for (s = eng->sessions; s; s = s->next)
        if (s->name && strcmp(s->name, ref) == 0 && s->state != SESSION_ERROR)
            return s;
    return NULL;
}

int session_ref_resolve(struct engine *eng, const char *ref, char **id, json_t **candidates,
                        char **err)
{
    *id = NULL;
    *candidates = NULL;
    *err = NULL;
    if (session_find(eng, ref)) { /* a live session's id, the agents' every request: no SQL */
        *id = strdup(ref);
        return *id ? 0 : -1;
    }
    json_t *rows = store_session_match(eng->store, ref);
    if (!rows)
        return -1;
    size_t n = json_array_size(rows), i, prefixes = 0, live = 0;
    json_t *row, *pick = NULL, *live_pick = NULL;
    json_array_foreach(rows, i, row)
    {
        bool alive = strcmp(json_string_value(json_object_get(row, "state")), "deleted") != 0;
        if (json_is_true(json_object_get(row, "exact"))) {
            pick = row; /* an id is never ambiguous */
            break;
        }
        if (json_is_true(json_object_get(row, "named"))) {
            /* the newest live session of that name, else the newest of all */
            if (alive) {
                pick = row;
                break;
            }
            if (!pick)
                pick = row;
            continue;
        }
        if (pick)
            break; /* a name wins over id prefixes */
        prefixes++;
        if (alive && live++ == 0)
            live_pick = row;
    }
    /* A prefix names one session, or one live one among deleted ones (as the dashboard's
     * eight characters do); more is ambiguous and the reply lists them. */
    if (!pick && prefixes == 1)
        pick = json_array_get(rows, 0);
    else if (!pick && live == 1)
        pick = live_pick;
    if (pick) {
        *id = strdup(json_string_value(json_object_get(pick, "id")));
        json_decref(rows);
        return *id ? 0 : -1;
    }
    if (n == 0) {
        json_decref(rows);
        return 1;
    }
    struct buf msg = {0};
    buf_printf(&msg, "\"%.64s\" begins %zu%s session ids: ", ref, n, n == 64 ? " or more" : "");
    json_array_foreach(rows, i, row)
    {
        const char *name = json_string_value(json_object_get(row, "name"));
        json_object_del(row, "exact");
        json_object_del(row, "named");
        if (i < 8)
            buf_printf(&msg, "%s%s%s%s%s (%s)", i ? ", " : "",
                       json_string_value(json_object_get(row, "id")), name ? " \"" : "",
                       name ? name : "", name ? "\"" : "",
                       json_string_value(json_object_get(row, "state")));
    }
    buf_printf(&msg, "%s; give more of the id, or the name", n > 8 ? ", ..." : "");
    *err = msg.data;
    *candidates = rows;
    return -1;
}

void session_publish(struct engine *eng, const char *id)
{
    json_t *j = store_session_get(eng->store, id);
    if (j && !json_is_true(json_object_get(j, "pooled")))
        events_publish(eng->events, "session", j);
    json_decref(j);
    pool_on_session(eng);
}

enum err_code session_store_error(struct engine *eng)
{
    return store_last_error_was_full(eng->store) ? ERR_STORAGE_FULL : ERR_STORE_ERROR;
}

int session_set_state_exit(struct session *s, enum session_st to, const char *reason, int exit_code)
{
    if (to == s->state) {
        /* Not a transition; only a new reason (a disconnected session's latest cause) is news. */
        json_t *cur = store_session_get(s->eng->store, s->id);
        const char *old = json_string_value(json_object_get(cur, "reason"));
        bool same = (!old && !reason) || (old && reason && strcmp(old, reason) == 0);
        json_decref(cur);
        if (same) {
            egress_session_sync(s);
            return 0;
        }
    } else if (!session_st_allows(s->state, to)) {
        return -1;
    }
    s->state = to;
    s->gen++;
    store_session_transition(s->eng->store, s->id, to, s->container_id, reason, exit_code,
                             util_now(), NULL);
    session_publish(s->eng, s->id);
    if (!s->pooled)
        stats_on_state(s->eng->stats, s->id, s->container_id, to);
    egress_session_sync(s);
    return 0;
}

int session_set_state(struct session *s, enum session_st state, const char *reason)
{
    return session_set_state_exit(s, state, reason, STORE_NO_EXIT_CODE);
}

void session_op_begin(struct session *s, enum session_op op)
{
    s->op = op;
    s->stale = false;
    session_retry_cancel(s);
    session_hold(s);
}

void session_op_end(struct session *s)
{
    s->op = SESSION_OP_NONE;
    if (s->doomed)
        session_shutdown_delete(s);
    else if (!s->unlinked && s->stale && session_st_is_live(s->state))
        session_refresh(s);
    s->stale = false;
    session_release(s);
}

static struct session *session_alloc(struct engine *eng, const char *id, const char *name,
                                     enum session_st state)
{
    struct session *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->eng = eng;
    snprintf(s->id, sizeof(s->id), "%s", id);
    s->state = state;
    s->keep_alive = true;
    s->driver = eng->driver;
    s->name = strdup(name ? name : id);
    s->sock_dir = util_strdupf("%s/run/%s", eng->state_dir, id);
    s->exec_sock = s->sock_dir ? util_strdupf("%s/executor.sock", s->sock_dir) : NULL;
    if (!s->exec_sock || !s->name) {
        session_free(s);
        return NULL;
    }
    s->next = eng->sessions;
    eng->sessions = s;
    return s;
}

/* keep_alive lives in the session's stored options (sessions.config.options; absent: true). */
static bool session_config_keep_alive(struct engine *eng, const char *id)
{
    json_t *cfg = store_session_config(eng->store, id);
    json_t *ka = json_object_get(json_object_get(cfg, "options"), "keep_alive");
    bool keep = !json_is_false(ka);
    json_decref(cfg);
    return keep;
}

void session_load_all(struct engine *eng)
{
    /* Every session that is not deleted, as the store last saw it; reconcile (started by the
     * Docker monitor) then looks at the containers themselves. */
    json_t *all = store_sessions_list(eng->store, STORE_LIST_POOLED);
    size_t i;
    json_t *row;
    json_array_foreach(all, i, row)
    {
        const char *id = json_string_value(json_object_get(row, "id"));
        const char *cid = json_string_value(json_object_get(row, "container_id"));
        enum session_st state;
        if (!id || session_st_parse(json_string_value(json_object_get(row, "state")), &state) < 0)
            continue;
        struct session *s =
            session_alloc(eng, id, json_string_value(json_object_get(row, "name")), state);
        if (!s)
            continue;
        if (cid)
            s->container_id = strdup(cid);
        if (cid && strncmp(cid, LOCAL_ID_PREFIX, strlen(LOCAL_ID_PREFIX)) == 0)
            s->driver = &driver_local;
        s->keep_alive = session_config_keep_alive(eng, id);
        s->pooled = json_is_true(json_object_get(row, "pooled"));
        const char *image = json_string_value(json_object_get(row, "image"));
        s->image = image ? strdup(image) : NULL;
        if (!s->pooled)
            stats_on_state(eng->stats, s->id, s->container_id, s->state);
    }
    json_decref(all);
}

void session_free_all(struct engine *eng)
{
    while (eng->sessions) {
        struct session *s = eng->sessions;
        eng->sessions = s->next;
        session_free(s);
    }
}

/* ---- create ---- */

/* One start of a container: create (a new session) or restart (resume from stopped), then
 * docker start, then /alive until the executor answers. */
struct start_op {
    struct session *s;
    session_done_fn fn;
    void *ud;
    bool restart;
    bool exited; /* the container died before its executor answered */
    bool oom;
    int exit_code;
    double deadline;
    long backoff_ms;
    double next_inspect;
    struct session_config *cfg; /* create only: the parsed options */
    json_t *body;               /* create only: the container config, while its image is made */
    bool pull_tried;            /* create only: a missing image was pulled once */
    int64_t ask_id;             /* create only: the "create" action waiting for the operator */
};

/* Fill a synchronous refusal of session_create; returns -1 for the caller to return. */
static int session_refuse(struct session_result *bad, enum err_code err, const char *msg)
{
    bad->status = err_status(err);
    bad->err = err;
    bad->message = msg;
    return -1;
}

static void start_on_removed(const struct sandbox_reply *r, void *ud)
{
    struct session *s = ud;
    session_prepare_cleanup(s->eng, s->id);
    session_release(s);
}

static void start_finish(struct start_op *op, const struct session_result *res)
{
    op->fn(res, op->ud);
    session_op_end(op->s);
    session_config_free(op->cfg);
    json_decref(op->body);
    free(op);
}

/* A restart that failed leaves the container stopped: nothing of the session is lost. */
static void start_on_stopped(const struct sandbox_reply *r, void *ud)
{
    session_release(ud);
}

static void start_fail(struct start_op *op, enum err_code err, const char *msg)
{
    struct session *s = op->s;
    if (!op->restart) {
        /* A session that never became ready keeps nothing: no container, no socket dir. */
        session_set_state(s, SESSION_ERROR, msg);
        if (s->container_id) {
            session_hold(s);
            if (s->driver->remove(s->eng, s->container_id, start_on_removed, s) < 0)
                session_release(s);
        } else {
            session_prepare_cleanup(s->eng, s->id);
        }
        util_remove_tree(s->sock_dir);
    } else if (op->exited) {
        session_set_state_exit(s, op->oom ? SESSION_OOM_KILLED : SESSION_STOPPED, msg,
                               op->exit_code);
    } else if (err == ERR_NOT_FOUND) {
        session_set_state(s, SESSION_ERROR, msg);
        util_remove_tree(s->sock_dir);
    } else {
        if (s->state == SESSION_STARTED) {
            session_hold(s);
            if (s->driver->stop(s->eng, s->container_id, 5, start_on_stopped, s) < 0)
                session_release(s);
        }
        session_set_state(s, SESSION_STOPPED, msg);
    }
    struct session_result res = {.status = err_status(err),
                                 .err = err,
                                 .message = msg,
                                 .session_id = op->restart ? NULL : s->id};
    start_finish(op, &res);
}

static void start_probe(void *ud);

/* The container died before its executor answered: say why, with the last lines it printed. */
static void start_on_exit_logs(const struct sandbox_reply *r, void *ud)
{
    struct start_op *op = ud;
    const char *logs = r->status == 200 ? r->message : "";
    size_t n = strlen(logs);
    while (n && (logs[n - 1] == '\n' || logs[n - 1] == ' '))
        n--;
    size_t start = n > 600 ? n - 600 : 0;
    char *msg = util_strdupf("the sandbox container exited (code %d%s) before its executor "
                             "answered%s%.*s",
                             op->exit_code, op->oom ? ", out of memory" : "",
                             n ? "; it printed: " : "", (int)(n - start), logs + start);
    op->exited = true;
    start_fail(op, ERR_EXECUTOR_ERROR, msg ? msg : "sandbox exited");
    free(msg);
}

static void start_on_inspect(const struct sandbox_reply *r, void *ud)
{
    struct start_op *op = ud;
    if (r->status < 0) {
        char *msg = util_strdupf("Docker daemon not reachable while the sandbox was starting "
                                 "(%s)",
                                 r->message);
        start_fail(op, ERR_DOCKER_UNAVAILABLE, msg ? msg : "Docker daemon not reachable");
        free(msg);
        return;
    }
    json_t *state = json_object_get(r->json, "State");
    if (r->status == 200 && state && !json_is_true(json_object_get(state, "Running"))) {
        op->exit_code = (int)json_integer_value(json_object_get(state, "ExitCode"));
        op->oom = json_is_true(json_object_get(state, "OOMKilled"));
        if (op->s->driver->logs_tail(op->s->eng, op->s->container_id, 20, start_on_exit_logs, op) <
            0) {
            struct sandbox_reply none = {.status = -1, .message = ""};
            start_on_exit_logs(&none, op);
        }
        return;
    }
    loop_timer_add(op->s->eng->loop, op->backoff_ms, start_probe, op);
}

static void start_on_alive(const struct http_result *r, void *ud)
{
    struct start_op *op = ud;
    if (r->status == 200) {
        session_set_state(op->s, SESSION_READY, NULL);
        json_t *body = store_session_get(op->s->eng->store, op->s->id);
        struct session_result res = {.status = op->restart ? 200 : 201, .body = body};
        start_finish(op, &res);
        json_decref(body);
        return;
    }
    if (loop_now_ms() > op->deadline) {
        start_fail(op, ERR_EXECUTOR_TIMEOUT, "the sandbox's executor did not answer within 30 s");
        return;
    }
    if (loop_now_ms() > op->next_inspect) {
        op->next_inspect = loop_now_ms() + 500;
        /* Now and then ask Docker whether the container still runs; the reply probes again. */
        if (op->s->driver->inspect(op->s->eng, op->s->container_id, start_on_inspect, op) == 0)
            return;
    }
    /* Tight backoff: the executor binds its socket milliseconds after start. */
    loop_timer_add(op->s->eng->loop, op->backoff_ms, start_probe, op);
    if (op->backoff_ms < 20)
        op->backoff_ms *= 2;
}

static void start_probe(void *ud)
{
    struct start_op *op = ud;
    if (!op->s->driver->executor_ready(op->s)) {
        struct http_result r = {.status = -1, .error = "no socket yet"};
        start_on_alive(&r, op);
        return;
    }
    struct http_request req = {.method = "GET", .url = "http://executor/alive", .timeout_ms = 2000};
    if (op->s->driver->executor_request(op->s, &req, start_on_alive, op) < 0)
        start_fail(op, ERR_INTERNAL, "cannot start a request");
}

/* A mount that is not what the policy checked ends the create: the container is removed. */
static void start_on_mounts_checked(const char *why, void *ud)
{
    struct start_op *op = ud;
    if (why)
        start_fail(op, ERR_CONFLICT, why);
    else
        start_probe(op);
}

static void start_on_start(const struct sandbox_reply *r, void *ud)
{
    struct start_op *op = ud;
    if (r->status != 204 && r->status != 304) {
        char *msg = r->status == 404 ? strdup("container removed outside paddock")
                                     : util_strdupf("docker start failed: %s", r->message);
        start_fail(op,
                   r->status < 0      ? ERR_DOCKER_UNAVAILABLE
                   : r->status == 404 ? ERR_NOT_FOUND
                                      : ERR_DOCKER_ERROR,
                   msg ? msg : "docker start failed");
        free(msg);
        return;
    }
    session_set_state(op->s, SESSION_STARTED, NULL);
    op->backoff_ms = 1;
    op->deadline = loop_now_ms() + SESSION_READY_TIMEOUT_MS;
    op->next_inspect = loop_now_ms() + 500;
    if (op->cfg && op->s->driver != &driver_local) /* the host ports Docker chose: stored */
        session_prepare_started(op->s->eng, op->cfg, op->s->id, op->s->container_id,
                                start_on_mounts_checked, op);
    else
        start_probe(op);
}

static void start_begin(struct start_op *op)
{
    if (op->s->driver->start(op->s->eng, op->s->container_id, start_on_start, op) < 0)
        start_fail(op, ERR_INTERNAL, "cannot start a request");
}

/* A restart: the binds were checked again; after the start they are compared like a create's. */
static void start_on_rechecked(enum err_code err, const char *why, struct session_config *c,
                               void *ud)
{
    struct start_op *op = ud;
    op->cfg = c;
    if (why)
        start_fail(op, err, why);
    else
        start_begin(op);
}

void session_start_container(struct session *s, bool restart, session_done_fn fn, void *ud)
{
    struct start_op *op = calloc(1, sizeof(*op));
    if (!op) {
        struct session_result res = {
            .status = 500, .err = ERR_INTERNAL, .message = "out of memory"};
        fn(&res, ud);
        session_op_end(s);
        return;
    }
    op->s = s;
    op->fn = fn;
    op->ud = ud;
    op->restart = restart;
    /* The old executor's socket is dead; the new one binds it again. */
    unlink(s->exec_sock);
    s->exec_init_pid = 0;                      /* a new first process: learned again */
    if (restart && s->driver == &driver_local) /* no binds to check again */
        start_begin(op);
    else if (restart)
        session_prepare_restart(s->eng, s->container_id, start_on_rechecked, op);
    else
        start_begin(op);
}

static void create_on_pulled(const struct builder_result *r, void *ud);

static void create_on_create(const struct sandbox_reply *r, void *ud)
{
    struct start_op *op = ud;
    struct engine *eng = op->s->eng;
    engine_note_docker(eng, r->status >= 0, r->message);
    if (r->status < 0) {
        start_fail(op, ERR_DOCKER_UNAVAILABLE,
                   eng->docker_error ? eng->docker_error : "Docker daemon not reachable");
        return;
    }
    if (r->status == 404) {
        const char *image = json_string_value(json_object_get(op->body, "Image"));
        if (!op->pull_tried && image) {
            op->pull_tried = true;
            session_set_state(op->s, SESSION_BUILDING, "pulling the image");
            const char *platform = json_string_value(json_object_get(op->body, "Platform"));
            if (builder_pull(eng, op->s->id, image, platform, create_on_pulled, op) == 0)
                return;
        }
        char *msg = util_strdupf("image not found: %s (build the default one with "
                                 "scripts/build-image, or docker pull it)",
                                 r->message);
        start_fail(op, ERR_IMAGE_NOT_FOUND, msg ? msg : "image not found");
        free(msg);
        return;
    }
    if (r->status == 400) {
        char *msg = util_strdupf("Docker refused the configuration: %s", r->message);
        start_fail(op, ERR_BAD_REQUEST, msg ? msg : "Docker refused the configuration");
        free(msg);
        return;
    }
    if (r->status == 409) {
        /* Not ours to remove: it may be another engine's, or anyone's. */
        char *msg = util_strdupf("container name already in use: %s; remove that container, or "
                                 "run `paddock gc` if an earlier session of this engine left it",
                                 r->message);
        start_fail(op, ERR_CONFLICT, msg ? msg : "container name already in use");
        free(msg);
        return;
    }
    const char *cid = json_string_value(json_object_get(r->json, "Id"));
    if (r->status != 201 || !cid) {
        char *msg = util_strdupf("docker create failed (%ld): %s", r->status, r->message);
        start_fail(op, ERR_DOCKER_ERROR, msg ? msg : "docker create failed");
        free(msg);
        return;
    }
    op->s->container_id = strdup(cid);
    store_session_set_container(eng->store, op->s->id, cid, util_now());
    start_begin(op);
}

/* Only once the start-up probe has not shown the seccomp profile to be ignored. */
static void create_on_probe(const char *refusal, void *ud)
{
    struct start_op *op = ud;
    struct session *s = op->s;
    if (refusal) {
        start_fail(op, ERR_UNAVAILABLE, refusal);
        return;
    }
    /* Named after the engine and the session: predictable for people, unique per engine. */
    char cname[96];
    snprintf(cname, sizeof(cname), "paddock-%.8s-%s", s->eng->engine_id, s->name);
    if (s->driver->create(s->eng, cname, op->body, create_on_create, op) < 0)
        start_fail(op, ERR_INTERNAL, "cannot start a request");
}

static void create_container(struct start_op *op)
{
    if (op->s->driver == &driver_local) { /* no Docker to probe: the driver loads the table */
        create_on_probe(NULL, op);
        return;
    }
    seccomp_probe_wait(op->s->eng, create_on_probe, op);
}

static void create_on_building(void *ud)
{
    struct start_op *op = ud;
    session_set_state(op->s, SESSION_BUILDING, "preparing the image");
}

static void create_on_image(const struct builder_result *r, void *ud)
{
    struct start_op *op = ud;
    if (op->s->state == SESSION_BUILDING)
        session_set_state(op->s, SESSION_STARTING, NULL);
    if (r->status) {
        start_fail(op, r->err, r->message);
        return;
    }
    builder_apply(r, op->body);
    create_container(op);
}

/* Docker has no such image: one pull, then the create again, else the hint. */
static void create_on_pulled(const struct builder_result *r, void *ud)
{
    struct start_op *op = ud;
    create_on_image(r, op);
}

/* The options are checked and the engine's own directories and git clone are ready. */
static void create_on_prepared(const struct session_result *err, void *ud)
{
    struct start_op *op = ud;
    struct session *s = op->s;
    if (err) {
        start_fail(op, err->err, err->message);
        return;
    }
    op->body = session_config_container(s->eng, op->cfg, s->id, s->sock_dir);
    if (!op->body) {
        start_fail(op, ERR_INTERNAL, "out of memory");
        return;
    }
    /* Setup steps (or a baked executor) need a runtime image first. */
    if (builder_needed(op->cfg->setup, op->cfg->rebuild)) {
        struct builder_spec spec = {
            .session_id = s->id,
            .image = json_string_value(json_object_get(op->body, "Image")),
            .steps = op->cfg->setup,
            .platform = op->cfg->platform,
            .rebuild = op->cfg->rebuild,
        };
        if (builder_run(s->eng, &spec, create_on_building, create_on_image, op) < 0)
            start_fail(op, ERR_INTERNAL, "cannot start preparing the image");
        return;
    }
    create_container(op);
}

static int session_create_cfg(struct engine *eng, struct session_config *cfg, bool pooled,
                              const char *hold, session_done_fn fn, void *ud,
                              struct session_result *bad);

int session_create(struct engine *eng, json_t *opts, bool agent, session_done_fn fn, void *ud,
                   struct session_result *bad)
{
    struct session_config *cfg = NULL;
    if (session_config_parse(eng, opts, &cfg, bad) < 0)
        return -1;
    /* Before anything is recorded: the store keeps room for what it has acknowledged. */
    static char floor_msg[640];
    if (disk_floor_check(eng, "the session was not created", floor_msg, sizeof(floor_msg)) < 0) {
        session_config_free(cfg);
        return session_refuse(bad, ERR_STORAGE_FULL, floor_msg);
    }
    /* What weakens the sandbox is the operator's call (docs/security.md). */
    static char refusal[700];
    char asked[1024];
    unsigned asks = agent ? security_config_asks(cfg, asked, sizeof(asked)) : 0;
    enum security_mode mode =
        asks ? security_decide(eng, asks, refusal, sizeof(refusal)) : SECURITY_ALLOW;
    if (mode == SECURITY_REFUSE) {
        session_config_free(cfg);
        return session_refuse(bad, ERR_FORBIDDEN, refusal);
    }
    if (mode == SECURITY_APPROVE) /* never a warm sandbox: the operator decides first */
        return session_create_cfg(eng, cfg, false, asked, fn, ud, bad);
    /* A warm sandbox when the pool has one for these options: ready in a store write. */
    const char *image = cfg->image ? cfg->image : eng->default_image;
    const char *name = cfg->name;
    if (!eng->stopping && !cfg->local && (!name || !session_find_ref(eng, name)) &&
        pool_fits(eng, opts, image)) {
        struct session *warm = pool_take(eng, image);
        json_t *o = json_pack(
            "{s:b,s:s,s:f}", "keep_alive", cfg->keep_alive, "confirm",
            cfg->confirm ? cfg->confirm : policy_name(eng->default_confirm), "approval_timeout",
            cfg->approval_timeout > 0 ? cfg->approval_timeout : eng->approval_timeout);
        if (o && cfg->env_allow)
            json_object_set(o, "env_allow", cfg->env_allow);
        /* The warm sandbox gets what a fresh one would: cfg->env is without what was
         * withheld. */
        json_t *patch = o ? json_pack("{s:o,s:o,s:O}", "options", o, "env",
                                      session_config_env_names(cfg), "withheld_env", cfg->withheld)
                          : NULL;
        int rc = warm && patch
                     ? session_claim(warm, name ? name : warm->id, patch, cfg->env, fn, ud)
                     : -1;
        json_decref(patch);
        if (rc == 0) {
            session_config_free(cfg);
            return 0;
        }
    }
    return session_create_cfg(eng, cfg, false, NULL, fn, ud, bad);
}

int session_create_pooled(struct engine *eng, const char *image, session_done_fn fn, void *ud,
                          struct session_result *bad)
{
    json_t *opts = json_pack("{s:s,s:b}", "image", image, "keep_alive", 0);
    struct session_config *cfg = NULL;
    int rc = opts ? session_config_parse(eng, opts, &cfg, bad) : -1;
    json_decref(opts);
    if (rc < 0)
        return -1;
    static char floor_msg[640]; /* the pool does not fill the store's last space either */
    if (disk_floor_check(eng, "the warm sandbox was not created", floor_msg, sizeof(floor_msg)) <
        0) {
        session_config_free(cfg);
        return session_refuse(bad, ERR_STORAGE_FULL, floor_msg);
    }
    return session_create_cfg(eng, cfg, true, NULL, fn, ud, bad);
}

/* The engine's own preparation (volumes, runtimes, clones), which a local session has none of. */
static void create_prepare(struct start_op *op)
{
    if (op->cfg->local)
        create_on_prepared(NULL, op);
    else
        session_prepare(op->s->eng, op->cfg, op->s->id, create_on_prepared, op);
}

/* The operator decided an agent's create that asked for weaker isolation. */
static void create_on_decided(bool approved, const char *why, void *ud)
{
    struct start_op *op = ud;
    struct session *s = op->s;
    if (!approved) {
        char *msg = util_strdupf(
            "the session was not created (its options need the operator's approval): %s", why);
        start_fail(op, ERR_FORBIDDEN, msg ? msg : "the operator did not approve the session");
        free(msg);
        return;
    }
    action_end(s->eng, op->ask_id, ACTION_DONE, STORE_NO_EXIT_CODE,
               "{\"observation\":\"create\",\"content\":\"approved: the session is being "
               "created\",\"extras\":{}}",
               NULL);
    session_set_state(s, SESSION_STARTING, NULL);
    create_prepare(op);
}

/* hold: what the create asks beyond the hardened default, when the operator must approve it
 * first (the session waits in state starting, its reason says why); NULL: create now. */
static int session_create_cfg(struct engine *eng, struct session_config *cfg, bool pooled,
                              const char *hold, session_done_fn fn, void *ud,
                              struct session_result *bad)
{
    if (!eng->executor_path) {
        session_config_free(cfg);
        return session_refuse(bad, ERR_EXECUTOR_MISSING,
                              "paddock-executor not found next to paddock; set PADDOCK_EXECUTOR");
    }
    /* A local session has no image: the host's system, read-only, is its root. */
    const char *image = cfg->local ? "local" : cfg->image ? cfg->image : eng->default_image;
    char id[2 * SESSION_ID_BYTES + 1];
    if (util_random_hex(id, SESSION_ID_BYTES) < 0) {
        session_config_free(cfg);
        return session_refuse(bad, ERR_INTERNAL, "no randomness for a session id");
    }
    const char *name = cfg->name ? cfg->name : id;
    /* Names are unique among the engine's sessions that are not deleted or in error: they
     * name the container and let a client attach by name. */
    struct session *same = session_find_ref(eng, name);
    if (same && strcmp(same->name, name) == 0) {
        static char msg[300];
        snprintf(msg, sizeof(msg),
                 "a session named \"%s\" already exists (id %s, %s); attach to it with "
                 "{\"attach\": \"%s\"} or delete it first",
                 name, same->id, session_st_name(same->state), name);
        session_config_free(cfg);
        return session_refuse(bad, ERR_CONFLICT, msg);
    }
    if (eng->stopping) {
        session_config_free(cfg);
        return session_refuse(bad, ERR_STOPPING, "the engine is stopping");
    }

    struct session *s = session_alloc(eng, id, name, SESSION_STARTING);
    struct start_op *op = calloc(1, sizeof(*op));
    if (!s || !op) {
        if (s)
            session_unlink(s);
        free(op);
        session_config_free(cfg);
        return session_refuse(bad, ERR_INTERNAL, "out of memory");
    }
    struct sockaddr_un sa;
    if (strlen(s->exec_sock) >= sizeof(sa.sun_path)) {
        session_unlink(s);
        free(op);
        session_config_free(cfg);
        return session_refuse(bad, ERR_INTERNAL,
                              "state dir path too long for a unix socket (108 bytes)");
    }
    s->keep_alive = cfg->keep_alive;
    if (cfg->local)
        s->driver = &driver_local;
    s->pooled = pooled;
    s->image = strdup(image);
    json_t *config = session_config_stored(cfg, eng, id, image);
    if (pooled)
        json_object_set_new(config, "pooled", json_true());
    char *err = NULL;
    if (store_session_insert(eng->store, id, name, image, SESSION_STARTING, config, util_now(),
                             &err) < 0) {
        json_decref(config);
        session_unlink(s);
        free(op);
        session_config_free(cfg);
        static char msg[512];
        enum err_code e = session_store_error(eng);
        snprintf(msg, sizeof(msg), "%s%s%s", err ? err : "store error",
                 e == ERR_STORAGE_FULL ? "; free disk space under " : "",
                 e == ERR_STORAGE_FULL ? eng->state_dir : "");
        free(err);
        return session_refuse(bad, e, msg);
    }
    json_decref(config);
    store_event_add(eng->store, id, session_st_name(SESSION_STARTING), image, util_now());
    session_publish(eng, id);

    session_op_begin(s, SESSION_OP_CREATE);
    op->s = s;
    op->fn = fn;
    op->ud = ud;
    op->cfg = cfg;
    if (util_mkdir_p(s->sock_dir, 0711) < 0) {
        start_fail(op, ERR_INTERNAL, "cannot create the session's socket directory");
        return 0;
    }
    if (hold) {
        json_t *stored = store_session_config(eng->store, id);
        json_t *action = json_pack("{s:s,s:{s:s,s:O?}}", "action", "create", "args", "asks", hold,
                                   "options", json_object_get(stored, "options"));
        json_decref(stored);
        struct action_request q = {
            .session_id = id,
            .action = action,
            .summary = hold,
            .risk = RISK_HIGH,
            .risk_reason = "a session with weaker isolation than the hardened default",
            .pending = true,
            .timeout = cfg->approval_timeout > 0 ? cfg->approval_timeout : eng->approval_timeout,
        };
        op->ask_id = action ? action_ask(eng, &q, create_on_decided, op, &err) : -1;
        json_decref(action);
        if (op->ask_id < 0) {
            char *msg = util_strdupf("the session's approval could not be recorded: %s",
                                     err ? err : "out of memory");
            start_fail(op, ERR_STORE_ERROR, msg ? msg : "store error");
            free(msg);
            free(err);
            return 0;
        }
        char *why = util_strdupf("waiting for the operator's approval of: %.900s", hold);
        session_set_state(s, SESSION_STARTING, why ? why : "waiting for the operator's approval");
        free(why);
        return 0;
    }
    create_prepare(op);
    return 0;
}

/* ---- delete ---- */

struct delete_op {
    struct session *s;
    session_done_fn fn;
    void *ud;
    int volumes_left;
};

static void delete_finish(struct delete_op *op)
{
    struct session *s = op->s;
    struct engine *eng = s->eng;
    util_remove_tree(s->sock_dir);
    session_prepare_cleanup(eng, s->id);
    session_set_state(s, SESSION_DELETED, NULL);
    actions_session_gone(eng, s->id, "the session was deleted");
    json_t *body = store_session_get(eng->store, s->id);
    struct session_result res = {.status = 200, .body = body};
    op->fn(&res, op->ud);
    json_decref(body);
    session_unlink(s);
    session_op_end(s);
    free(op);
}

static void delete_on_volume_removed(const struct sandbox_reply *r, void *ud)
{
    struct delete_op *op = ud;
    /* A volume still in use stays for gc; the session is gone either way. */
    if (--op->volumes_left == 0)
        delete_finish(op);
}

/* Volumes the engine made for this session carry its label (the anonymous ones went with the
 * container: v=1). */
static void delete_on_volumes(const struct sandbox_reply *r, void *ud)
{
    struct delete_op *op = ud;
    json_t *vols = json_object_get(r->json, "Volumes");
    size_t i;
    json_t *v;
    op->volumes_left = 1;
    if (r->status == 200)
        json_array_foreach(vols, i, v)
        {
            const char *name = json_string_value(json_object_get(v, "Name"));
            if (!name)
                continue;
            op->volumes_left++;
            if (op->s->driver->volume_remove(op->s->eng, name, delete_on_volume_removed, op) < 0)
                op->volumes_left--;
        }
    if (--op->volumes_left == 0)
        delete_finish(op);
}

static void delete_on_remove(const struct sandbox_reply *r, void *ud)
{
    struct delete_op *op = ud;
    struct session *s = op->s;
    struct engine *eng = s->eng;
    if (r->status < 0 || (r->status != 204 && r->status != 404)) {
        char *msg = r->status < 0 ? util_strdupf("Docker daemon not reachable at %s (%s); %s",
                                                 eng->driver->address(eng), r->message,
                                                 eng->driver->hint(eng))
                                  : util_strdupf("docker remove failed: %s", r->message);
        enum err_code e = r->status < 0 ? ERR_DOCKER_UNAVAILABLE : ERR_DOCKER_ERROR;
        struct session_result res = {
            .status = err_status(e), .err = e, .message = msg ? msg : "docker remove failed"};
        op->fn(&res, op->ud);
        free(msg);
        session_op_end(s);
        free(op);
        return;
    }
    char *label = util_strdupf("paddock.session=%s", s->id);
    if (!label || s->driver->volume_list(eng, label, delete_on_volumes, op) < 0) {
        struct sandbox_reply none = {.status = -1, .message = ""};
        delete_on_volumes(&none, op);
    }
    free(label);
}

static void delete_on_changes_saved(void *ud, const char *error)
{
    struct delete_op *op = ud;
    (void)error; /* changes we could not keep do not keep the container alive either */
    if (op->s->driver->remove(op->s->eng, op->s->container_id, delete_on_remove, op) < 0) {
        struct sandbox_reply r = {.status = -1, .message = "cannot start a request"};
        delete_on_remove(&r, op);
    }
}

/* Then its file changes: the container's layer and an overlay's upper dir go with it. */
static void delete_on_tail_saved(void *ud, const char *error)
{
    struct delete_op *op = ud;
    (void)error; /* a log we could not read does not keep the container alive */
    changes_save(op->s->eng, op->s->id, op->s->container_id, delete_on_changes_saved, op);
}

void session_delete(struct session *s, session_done_fn fn, void *ud)
{
    if (session_check(s, "delete", SESSION_DELETED,
                      SESSION_ST_SET(SESSION_READY) | SESSION_ST_SET(SESSION_PAUSED) |
                          SESSION_ST_SET(SESSION_STOPPED) | SESSION_ST_SET(SESSION_ERROR) |
                          SESSION_ST_SET(SESSION_DISCONNECTED) |
                          SESSION_ST_SET(SESSION_OOM_KILLED) | SESSION_ST_SET(SESSION_STARTED),
                      fn, ud))
        return;
    struct delete_op *op = calloc(1, sizeof(*op));
    if (!op) {
        struct session_result res = {
            .status = 500, .err = ERR_INTERNAL, .message = "out of memory"};
        fn(&res, ud);
        return;
    }
    op->s = s;
    op->fn = fn;
    op->ud = ud;
    session_op_begin(s, SESSION_OP_DELETE);
    if (!s->container_id) {
        struct sandbox_reply r = {.status = 404, .message = ""};
        delete_on_remove(&r, op);
        return;
    }
    /* The log tail goes to the store first: the container takes its log with it. */
    logs_save_tail(s->eng, s->id, s->container_id, delete_on_tail_saved, op);
}

/* ---- actions ---- */

int session_check_actionable(struct session *s, enum err_code *err, char *msg, size_t size)
{
    if (s->state != SESSION_READY) {
        char hint[256];
        session_st_hint(s->state, s->id, hint, sizeof(hint));
        json_t *cur = store_session_get(s->eng->store, s->id);
        const char *why = json_string_value(json_object_get(cur, "reason"));
        snprintf(msg, size, "session %s is %s%s%.200s%s; %s", s->id, session_st_name(s->state),
                 why ? " (" : "", why ? why : "", why ? ")" : "", hint);
        json_decref(cur);
        *err = session_st_refusal(s->state);
        return -1;
    }
    if (s->op != SESSION_OP_NONE && s->op != SESSION_OP_CREATE) {
        snprintf(msg, size, "session %s is busy: %s in progress; retry once it is done", s->id,
                 session_op_name(s->op));
        *err = ERR_CONFLICT;
        return -1;
    }
    /* Before anything is recorded: the store keeps room for what it has acknowledged. */
    if (disk_floor_check(s->eng, "not run", msg, size) < 0) {
        *err = ERR_STORAGE_FULL;
        return -1;
    }
    return 0;
}

long session_count_live(struct engine *eng)
{
    long n = 0;
    for (struct session *s = eng->sessions; s; s = s->next)
        n += !s->pooled;
    return n;
}
