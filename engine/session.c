/* Session lifecycle: create (Docker create → start → executor /alive), execute, delete.
 * Every step is asynchronous on the engine loop; the store records each transition. */
#include "engine/session.h"

#include "engine/api.h"
#include "engine/docker.h"
#include "engine/engine_internal.h"
#include "engine/http.h"
#include "engine/logs.h"
#include "engine/loop.h"
#include "engine/stats.h"
#include "engine/store.h"
#include "engine/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define SESSION_ID_BYTES 8
#define SESSION_READY_TIMEOUT_MS 30000.0
#define SESSION_MEMORY_DEFAULT (2LL * 1024 * 1024 * 1024)
#define SESSION_NANOCPUS_DEFAULT 2000000000LL
#define SESSION_PIDS_DEFAULT 512
#define SESSION_AGENT_UID "1000"
#define EXECUTOR_IN_CONTAINER "/opt/paddock/paddock-executor"
#define SOCKET_DIR_IN_CONTAINER "/run/paddock"

struct session {
    struct session *next;
    struct engine *eng;
    char id[2 * SESSION_ID_BYTES + 1];
    char *container_id;
    char *sock_dir;
    char *exec_sock;
    const char *state; /* static string */
    int busy;          /* async operations holding a pointer to this session */
    bool unlinked;     /* removed from the list; freed when busy drops to 0 */
};

const char *session_id(const struct session *s)
{
    return s->id;
}

const char *session_state(const struct session *s)
{
    return s->state;
}

static void session_free(struct session *s)
{
    free(s->container_id);
    free(s->sock_dir);
    free(s->exec_sock);
    free(s);
}

static void session_hold(struct session *s)
{
    s->busy++;
}

static void session_release(struct session *s)
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

void session_publish(struct engine *eng, const char *id)
{
    json_t *j = store_session_get(eng->store, id);
    if (j) {
        api_events_publish(eng->api, "session", j);
        json_decref(j);
    }
}

/* A store write failed: 507 when the disk is full (the operator can fix that), else 500. */
static unsigned session_store_status(struct engine *eng, const char **code)
{
    bool full = store_last_error_was_full(eng->store);
    *code = full ? "storage_full" : "store_error";
    return full ? 507 : 500;
}

/* Record a state change in memory, in the store and as an event. */
static void session_set_state(struct session *s, const char *state, const char *error)
{
    s->state = state;
    store_session_update(s->eng->store, s->id, state, s->container_id, error, util_now(), NULL);
    store_event_add(s->eng->store, s->id, state, error, util_now());
    session_publish(s->eng, s->id);
    stats_on_state(s->eng->stats, s->id, s->container_id, state);
}

static struct session *session_alloc(struct engine *eng, const char *id, const char *state)
{
    struct session *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->eng = eng;
    snprintf(s->id, sizeof(s->id), "%s", id);
    s->state = state;
    s->sock_dir = util_strdupf("%s/run/%s", eng->state_dir, id);
    s->exec_sock = s->sock_dir ? util_strdupf("%s/executor.sock", s->sock_dir) : NULL;
    if (!s->exec_sock) {
        session_free(s);
        return NULL;
    }
    s->next = eng->sessions;
    eng->sessions = s;
    return s;
}

void session_load_all(struct engine *eng)
{
    json_t *all = store_sessions_list(eng->store, 0);
    size_t i;
    json_t *row;
    json_array_foreach(all, i, row)
    {
        const char *id = json_string_value(json_object_get(row, "id"));
        const char *state = json_string_value(json_object_get(row, "state"));
        const char *cid = json_string_value(json_object_get(row, "container_id"));
        if (!id || !state)
            continue;
        if (strcmp(state, "ready") == 0) {
            /* Its container may still run: the socket path is derived from the id, so
             * requests reach the same executor again. */
            struct session *s = session_alloc(eng, id, "ready");
            if (s && cid)
                s->container_id = strdup(cid);
            if (s)
                stats_on_state(eng->stats, s->id, s->container_id, s->state);
        } else if (strcmp(state, "creating") == 0 || strcmp(state, "deleting") == 0) {
            store_session_update(eng->store, id, "error", NULL,
                                 "engine stopped while the session was changing state", util_now(),
                                 NULL);
        }
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

struct create_op {
    struct session *s;
    session_done_fn fn;
    void *ud;
    double deadline;
    long backoff_ms;
    double next_inspect;
    int exit_code;
};

static bool session_valid_name(const char *n)
{
    size_t len = strlen(n);
    if (len == 0 || len > 64 || !isalnum((unsigned char)n[0]))
        return false;
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)n[i]) && !strchr("_.-", n[i]))
            return false;
    return true;
}

static bool session_valid_env_key(const char *k)
{
    if (!*k || !(isalpha((unsigned char)*k) || *k == '_'))
        return false;
    for (; *k; k++)
        if (!(isalnum((unsigned char)*k) || *k == '_'))
            return false;
    return true;
}

static bool session_valid_image(const char *img)
{
    size_t n = strlen(img);
    if (n == 0 || n > 255)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(isalnum((unsigned char)img[i]) || strchr("_.-/:@", img[i])))
            return false;
    return true;
}

/* Fill a synchronous refusal of session_create; returns -1 for the caller to return. */
static int session_refuse(struct session_result *bad, unsigned status, const char *code,
                          const char *msg)
{
    bad->status = status;
    bad->code = code;
    bad->message = msg;
    return -1;
}

/* The hardened container (docs/architecture.md, research/security.md §2). */
static json_t *session_container_config(struct engine *eng, struct session *s, const char *image,
                                        json_t *env)
{
    json_t *envs = json_array();
    json_array_append_new(envs, json_string("LANG=C.UTF-8"));
    const char *k;
    json_t *v;
    json_object_foreach(env, k, v)
    {
        char *kv = util_strdupf("%s=%s", k, json_string_value(v));
        if (kv)
            json_array_append_new(envs, json_string(kv));
        free(kv);
    }
    json_t *mounts =
        json_pack("[{s:s,s:s,s:s,s:b},{s:s,s:s,s:s,s:b}]", "Type", "bind", "Source",
                  eng->executor_path, "Target", EXECUTOR_IN_CONTAINER, "ReadOnly", 1, "Type",
                  "bind", "Source", s->sock_dir, "Target", SOCKET_DIR_IN_CONTAINER, "ReadOnly", 0);
    json_t *labels =
        json_pack("{s:s,s:s}", "paddock.session", s->id, "paddock.engine", eng->engine_id);
    const char *test_label = getenv("PADDOCK_TEST_LABEL");
    if (test_label && *test_label)
        json_object_set_new(labels, "paddock.test", json_string(test_label));
    /* The executor runs as container root with only what it needs: CHOWN for the workspace,
     * SETUID/SETGID to drop the agent's shell to uid 1000, KILL to signal the agent's
     * processes. MaskedPaths/ReadonlyPaths are left out so Docker's defaults apply. */
    json_t *host = json_pack(
        "{s:[s],s:[s,s,s,s],s:[s],s:I,s:I,s:I,s:I,s:s,s:b,s:s,s:I,"
        "s:{s:s,s:{s:s,s:s}},s:{s:s},s:o,"
        "s:[{s:s,s:I,s:I},{s:s,s:I,s:I}]}",
        "CapDrop", "ALL", "CapAdd", "CHOWN", "SETUID", "SETGID", "KILL", "SecurityOpt",
        "no-new-privileges", "PidsLimit", (json_int_t)SESSION_PIDS_DEFAULT, "Memory",
        (json_int_t)SESSION_MEMORY_DEFAULT, "MemorySwap", (json_int_t)SESSION_MEMORY_DEFAULT,
        "NanoCpus", (json_int_t)SESSION_NANOCPUS_DEFAULT, "NetworkMode", "none", "Init", 1,
        "IpcMode", "private", "ShmSize", (json_int_t)(64 * 1024 * 1024), "LogConfig", "Type",
        "json-file", "Config", "max-size", "10m", "max-file", "1", "RestartPolicy", "Name", "no",
        "Mounts", mounts, "Ulimits", "Name", "nofile", "Soft", (json_int_t)8192, "Hard",
        (json_int_t)8192, "Name", "core", "Soft", (json_int_t)0, "Hard", (json_int_t)0);
    /* The ipython plugin starts Python only at the first cell (and only if the image has it). */
    return json_pack("{s:s,s:[s],s:[s,s,s,s,s,s,s,s],s:o,s:o,s:s,s:s,s:i,s:o}", "Image", image,
                     "Entrypoint", EXECUTOR_IN_CONTAINER, "Cmd", "--socket",
                     SOCKET_DIR_IN_CONTAINER "/executor.sock", "--working-dir", "/workspace",
                     "--user-id", SESSION_AGENT_UID, "--plugins", "ipython", "Env", envs, "Labels",
                     labels, "User", "0:0", "WorkingDir", "/", "StopTimeout", 5, "HostConfig",
                     host);
}

static void create_fail(struct create_op *op, unsigned status, const char *code, const char *msg);

static void create_on_removed(const struct docker_reply *r, void *ud)
{
    struct session *s = ud;
    session_release(s);
}

static void create_finish(struct create_op *op, const struct session_result *res)
{
    op->fn(res, op->ud);
    session_release(op->s);
    free(op);
}

static void create_fail(struct create_op *op, unsigned status, const char *code, const char *msg)
{
    struct session *s = op->s;
    session_set_state(s, "error", msg);
    if (s->container_id) {
        session_hold(s);
        if (docker_container_remove(s->eng->docker, s->container_id, create_on_removed, s) < 0)
            session_release(s);
    }
    util_remove_tree(s->sock_dir);
    struct session_result res = {.status = status, .code = code, .message = msg};
    session_unlink(s); /* stays in the store with its error; freed once op releases it */
    create_finish(op, &res);
}

static void create_probe(void *ud);

/* The container died before its executor answered: say why, with the last lines it printed. */
static void create_on_exit_logs(const struct docker_reply *r, void *ud)
{
    struct create_op *op = ud;
    const char *logs = r->status == 200 ? r->message : "";
    size_t n = strlen(logs);
    while (n && (logs[n - 1] == '\n' || logs[n - 1] == ' '))
        n--;
    size_t start = n > 600 ? n - 600 : 0;
    char *msg =
        util_strdupf("the sandbox container exited (code %d) before its executor "
                     "answered%s%.*s",
                     op->exit_code, n ? "; it printed: " : "", (int)(n - start), logs + start);
    create_fail(op, 502, "executor_error", msg ? msg : "sandbox exited");
    free(msg);
}

static void create_on_inspect(const struct docker_reply *r, void *ud)
{
    struct create_op *op = ud;
    json_t *state = json_object_get(r->json, "State");
    if (r->status == 200 && state && !json_is_true(json_object_get(state, "Running"))) {
        op->exit_code = (int)json_integer_value(json_object_get(state, "ExitCode"));
        if (docker_container_logs_tail(op->s->eng->docker, op->s->container_id, 20,
                                       create_on_exit_logs, op) < 0) {
            struct docker_reply none = {.status = -1, .message = ""};
            create_on_exit_logs(&none, op);
        }
        return;
    }
    loop_timer_add(op->s->eng->loop, op->backoff_ms, create_probe, op);
}

static void create_on_alive(const struct http_result *r, void *ud)
{
    struct create_op *op = ud;
    if (r->status == 200) {
        session_set_state(op->s, "ready", NULL);
        json_t *body = store_session_get(op->s->eng->store, op->s->id);
        struct session_result res = {.status = 201, .body = body};
        create_finish(op, &res);
        json_decref(body);
        return;
    }
    if (loop_now_ms() > op->deadline) {
        create_fail(op, 504, "executor_timeout",
                    "the sandbox's executor did not answer within 30 s");
        return;
    }
    if (loop_now_ms() > op->next_inspect) {
        op->next_inspect = loop_now_ms() + 500;
        /* Now and then ask Docker whether the container still runs; the reply probes again. */
        if (docker_container_inspect(op->s->eng->docker, op->s->container_id, create_on_inspect,
                                     op) == 0)
            return;
    }
    /* Tight backoff: the executor binds its socket milliseconds after start. */
    loop_timer_add(op->s->eng->loop, op->backoff_ms, create_probe, op);
    if (op->backoff_ms < 20)
        op->backoff_ms *= 2;
}

static void create_probe(void *ud)
{
    struct create_op *op = ud;
    struct stat st;
    if (stat(op->s->exec_sock, &st) < 0 || !S_ISSOCK(st.st_mode)) {
        struct http_result r = {.status = -1, .error = "no socket yet"};
        create_on_alive(&r, op);
        return;
    }
    struct http_request req = {.method = "GET",
                               .unix_socket = op->s->exec_sock,
                               .url = "http://executor/alive",
                               .timeout_ms = 2000};
    if (http_start(op->s->eng->http, &req, create_on_alive, op) < 0)
        create_fail(op, 500, "internal", "cannot start a request");
}

static void create_on_start(const struct docker_reply *r, void *ud)
{
    struct create_op *op = ud;
    if (r->status != 204 && r->status != 304) {
        char *msg = util_strdupf("docker start failed: %s", r->message);
        create_fail(op, r->status < 0 ? 503 : 502,
                    r->status < 0 ? "docker_unavailable" : "docker_error",
                    msg ? msg : "docker start failed");
        free(msg);
        return;
    }
    op->backoff_ms = 1;
    op->deadline = loop_now_ms() + SESSION_READY_TIMEOUT_MS;
    op->next_inspect = loop_now_ms() + 500;
    create_probe(op);
}

static void create_on_create(const struct docker_reply *r, void *ud)
{
    struct create_op *op = ud;
    struct engine *eng = op->s->eng;
    engine_note_docker(eng, r->status >= 0, r->message);
    if (r->status < 0) {
        create_fail(op, 503, "docker_unavailable",
                    eng->docker_error ? eng->docker_error : "Docker daemon not reachable");
        return;
    }
    if (r->status == 404) {
        char *msg = util_strdupf("image not found: %s (build the default one with "
                                 "scripts/build-image, or docker pull it)",
                                 r->message);
        create_fail(op, 400, "image_not_found", msg ? msg : "image not found");
        free(msg);
        return;
    }
    const char *cid = json_string_value(json_object_get(r->json, "Id"));
    if (r->status != 201 || !cid) {
        char *msg = util_strdupf("docker create failed (%ld): %s", r->status, r->message);
        create_fail(op, 502, "docker_error", msg ? msg : "docker create failed");
        free(msg);
        return;
    }
    op->s->container_id = strdup(cid);
    store_session_update(eng->store, op->s->id, "creating", cid, NULL, util_now(), NULL);
    if (docker_container_start(eng->docker, cid, create_on_start, op) < 0)
        create_fail(op, 500, "internal", "cannot start a request");
}

int session_create(struct engine *eng, json_t *opts, session_done_fn fn, void *ud,
                   struct session_result *bad)
{
    const char *k;
    json_t *v;
    json_object_foreach(opts, k, v)
    {
        if (strcmp(k, "image") && strcmp(k, "name") && strcmp(k, "env")) {
            static char msg[160];
            snprintf(msg, sizeof(msg), "unknown field \"%.64s\" (known: image, name, env)", k);
            return session_refuse(bad, 400, "bad_request", msg);
        }
    }
    json_t *jimage = json_object_get(opts, "image");
    json_t *jname = json_object_get(opts, "name");
    json_t *jenv = json_object_get(opts, "env");
    if (jimage && !json_is_null(jimage) &&
        (!json_is_string(jimage) || !session_valid_image(json_string_value(jimage)))) {
        return session_refuse(bad, 400, "bad_request",
                              "\"image\" must be an image reference string");
    }
    if (jname && !json_is_null(jname) &&
        (!json_is_string(jname) || !session_valid_name(json_string_value(jname)))) {
        return session_refuse(bad, 400, "bad_request",
                              "\"name\" must match [A-Za-z0-9][A-Za-z0-9_.-]{0,63}");
    }
    if (jenv && !json_is_null(jenv)) {
        if (!json_is_object(jenv)) {
            return session_refuse(bad, 400, "bad_request", "\"env\" must be an object of strings");
        }
        json_object_foreach(jenv, k, v)
        {
            if (!session_valid_env_key(k) || !json_is_string(v) ||
                strlen(json_string_value(v)) != json_string_length(v)) {
                return session_refuse(
                    bad, 400, "bad_request",
                    "\"env\" keys must be [A-Za-z_][A-Za-z0-9_]* with string values "
                    "without NUL");
            }
        }
    }
    if (!eng->executor_path)
        return session_refuse(bad, 500, "executor_missing",
                              "paddock-executor not found next to paddock; set PADDOCK_EXECUTOR");
    const char *image = json_is_string(jimage) ? json_string_value(jimage) : eng->default_image;
    char id[2 * SESSION_ID_BYTES + 1];
    if (util_random_hex(id, SESSION_ID_BYTES) < 0)
        return session_refuse(bad, 500, "internal", "no randomness for a session id");
    const char *name = json_is_string(jname) ? json_string_value(jname) : id;

    struct session *s = session_alloc(eng, id, "creating");
    struct create_op *op = calloc(1, sizeof(*op));
    if (!s || !op) {
        if (s)
            session_unlink(s);
        free(op);
        return session_refuse(bad, 500, "internal", "out of memory");
    }
    struct sockaddr_un sa;
    if (strlen(s->exec_sock) >= sizeof(sa.sun_path)) {
        session_unlink(s);
        free(op);
        return session_refuse(bad, 500, "internal",
                              "state dir path too long for a unix socket (108 bytes)");
    }
    json_t *config = json_pack("{s:s,s:O}", "image", image, "env", jenv ? jenv : json_null());
    char *err = NULL;
    if (store_session_insert(eng->store, id, name, image, "creating", config, util_now(), &err) <
        0) {
        json_decref(config);
        session_unlink(s);
        free(op);
        static char msg[512];
        const char *code;
        unsigned status = session_store_status(eng, &code);
        snprintf(msg, sizeof(msg), "%s%s%s", err ? err : "store error",
                 status == 507 ? "; free disk space under " : "",
                 status == 507 ? eng->state_dir : "");
        free(err);
        return session_refuse(bad, status, code, msg);
    }
    json_decref(config);
    store_event_add(eng->store, id, "creating", image, util_now());
    session_publish(eng, id);

    session_hold(s);
    op->s = s;
    op->fn = fn;
    op->ud = ud;
    if (util_mkdir_p(s->sock_dir, 0711) < 0) {
        create_fail(op, 500, "internal", "cannot create the session's socket directory");
        return 0;
    }
    json_t *noenv = json_object();
    json_t *body = session_container_config(eng, s, image, json_is_object(jenv) ? jenv : noenv);
    json_decref(noenv);
    char cname[64];
    snprintf(cname, sizeof(cname), "paddock-%s", s->id);
    int rc = docker_container_create(eng->docker, cname, body, create_on_create, op);
    json_decref(body);
    if (rc < 0)
        create_fail(op, 500, "internal", "cannot start a request");
    return 0;
}

/* ---- delete ---- */

struct delete_op {
    struct session *s;
    session_done_fn fn;
    void *ud;
    const char *prev_state;
};

static void delete_on_remove(const struct docker_reply *r, void *ud)
{
    struct delete_op *op = ud;
    struct session *s = op->s;
    struct engine *eng = s->eng;
    if (r->status < 0 || (r->status != 204 && r->status != 404)) {
        char *msg = r->status < 0
                        ? util_strdupf("Docker daemon not reachable at %s (%s); %s",
                                       docker_socket(eng->docker), r->message, docker_start_hint())
                        : util_strdupf("docker remove failed: %s", r->message);
        s->state = op->prev_state;
        struct session_result res = {.status = r->status < 0 ? 503 : 502,
                                     .code = r->status < 0 ? "docker_unavailable" : "docker_error",
                                     .message = msg ? msg : "docker remove failed"};
        op->fn(&res, op->ud);
        free(msg);
    } else {
        util_remove_tree(s->sock_dir);
        session_set_state(s, "deleted", NULL);
        json_t *body = store_session_get(eng->store, s->id);
        struct session_result res = {.status = 200, .body = body};
        op->fn(&res, op->ud);
        json_decref(body);
        session_unlink(s);
    }
    session_release(s);
    free(op);
}

static void delete_on_tail_saved(void *ud, const char *error)
{
    struct delete_op *op = ud;
    (void)error; /* a log we could not read does not keep the container alive */
    if (docker_container_remove(op->s->eng->docker, op->s->container_id, delete_on_remove, op) <
        0) {
        struct docker_reply r = {.status = -1, .message = "cannot start a request"};
        delete_on_remove(&r, op);
    }
}

void session_delete(struct session *s, session_done_fn fn, void *ud)
{
    struct delete_op *op = calloc(1, sizeof(*op));
    if (!op) {
        struct session_result res = {.status = 500, .code = "internal", .message = "out of memory"};
        fn(&res, ud);
        return;
    }
    op->s = s;
    op->fn = fn;
    op->ud = ud;
    op->prev_state = s->state;
    session_hold(s);
    s->state = "deleting";
    if (!s->container_id) {
        struct docker_reply r = {.status = 404, .message = ""};
        delete_on_remove(&r, op);
        return;
    }
    /* The log tail goes to the store first: the container takes its log with it. */
    logs_save_tail(s->eng, s->id, s->container_id, delete_on_tail_saved, op);
}

/* ---- execute ---- */

struct exec_op {
    struct session *s;
    int64_t action_id;
    session_action_fn fn;
    void *ud;
};

static void exec_publish(struct engine *eng, int64_t id, const char *state_override)
{
    json_t *a = store_action_get(eng->store, id);
    if (!a)
        return;
    if (state_override)
        json_object_set_new(a, "state", json_string(state_override));
    api_events_publish(eng->api, "action", a);
    json_decref(a);
}

static void exec_reply_error(session_action_fn fn, void *ud, unsigned status, const char *code,
                             const char *msg)
{
    json_t *j = json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", msg);
    char *body = json_dumps(j, JSON_COMPACT);
    struct session_action_result res = {
        .status = status, .body = body ? body : "", .len = body ? strlen(body) : 0, .code = code};
    fn(&res, ud);
    free(body);
    json_decref(j);
}

static void exec_on_done(const struct http_result *r, void *ud)
{
    struct exec_op *op = ud;
    struct engine *eng = op->s->eng;
    int exit_code = STORE_NO_EXIT_CODE;
    if (r->status == 200) {
        json_t *obs = json_loadb(r->body, r->len, 0, NULL);
        json_t *ec = json_object_get(json_object_get(json_object_get(obs, "extras"), "metadata"),
                                     "exit_code");
        if (json_is_integer(ec))
            exit_code = (int)json_integer_value(ec);
        json_decref(obs);
        char *err = NULL;
        if (store_action_finish(eng->store, op->action_id, "done", exit_code, r->body, r->len, NULL,
                                util_now(), &err) < 0) {
            /* Acknowledged means recorded: the agent hears that it ran and that its result is
             * not kept, rather than a result the history will not show. */
            const char *code;
            unsigned status = session_store_status(eng, &code);
            char *msg = util_strdupf(
                "the action ran (exit code %d) but its observation could not be recorded "
                "(%s)%s%s",
                exit_code == STORE_NO_EXIT_CODE ? -1 : exit_code, err ? err : "store error",
                status == 507 ? "; free disk space under " : "",
                status == 507 ? eng->state_dir : "");
            exec_reply_error(op->fn, op->ud, status, code, msg ? msg : "store error");
            free(msg);
        } else {
            struct session_action_result res = {.status = 200, .body = r->body, .len = r->len};
            exec_publish(eng, op->action_id, NULL);
            op->fn(&res, op->ud);
        }
        free(err);
    } else if (r->status < 0) {
        char *msg = util_strdupf("the sandbox's executor is not reachable: %s", r->error);
        store_action_finish(eng->store, op->action_id, "failed", exit_code, NULL, 0, msg,
                            util_now(), NULL);
        exec_publish(eng, op->action_id, NULL);
        json_t *j = json_pack("{s:{s:s,s:s}}", "error", "code", "executor_error", "message",
                              msg ? msg : "executor not reachable");
        char *body = json_dumps(j, JSON_COMPACT);
        struct session_action_result res = {.status = 502,
                                            .body = body ? body : "",
                                            .len = body ? strlen(body) : 0,
                                            .code = "executor_error"};
        op->fn(&res, op->ud);
        free(body);
        json_decref(j);
        free(msg);
    } else {
        /* The executor refused the action (bad arguments...): its answer goes back as is. */
        char *msg = util_strdupf("executor answered %ld", r->status);
        store_action_finish(eng->store, op->action_id, "failed", exit_code, r->body, r->len, msg,
                            util_now(), NULL);
        exec_publish(eng, op->action_id, NULL);
        struct session_action_result res = {
            .status = (unsigned)r->status, .body = r->body, .len = r->len};
        op->fn(&res, op->ud);
        free(msg);
    }
    session_release(op->s);
    free(op);
}

static const char *exec_summary(const char *kind, json_t *args)
{
    const char *v = NULL;
    if (strcmp(kind, "run") == 0)
        v = json_string_value(json_object_get(args, "command"));
    else if (strcmp(kind, "run_ipython") == 0)
        v = json_string_value(json_object_get(args, "code"));
    else if (strcmp(kind, "browse") == 0)
        v = json_string_value(json_object_get(args, "url"));
    else
        v = json_string_value(json_object_get(args, "path"));
    return v ? v : kind;
}

void session_execute(struct session *s, json_t *action, const char *body, size_t len,
                     session_action_fn fn, void *ud)
{
    struct engine *eng = s->eng;
    if (strcmp(s->state, "ready") != 0) {
        char msg[128];
        snprintf(msg, sizeof(msg), "session %s is %s, not ready", s->id, s->state);
        exec_reply_error(fn, ud, 409, "conflict", msg);
        return;
    }
    const char *kind = json_string_value(json_object_get(action, "action"));
    json_t *args = json_object_get(action, "args");
    char *args_json = json_dumps(action, JSON_COMPACT);
    char *err = NULL;
    /* Intent first: the row is committed before anything reaches the sandbox. */
    int64_t id = store_action_insert(eng->store, s->id, kind, exec_summary(kind, args),
                                     args_json ? args_json : "{}", util_now(), &err);
    free(args_json);
    if (id < 0) {
        /* Nothing was sent: the action did not run. */
        const char *code;
        unsigned status = session_store_status(eng, &code);
        char *msg = util_strdupf(
            "the action was not run: it could not be recorded (%s)%s%s", err ? err : "store error",
            status == 507 ? "; free disk space under " : "", status == 507 ? eng->state_dir : "");
        exec_reply_error(fn, ud, status, code, msg ? msg : "cannot record the action");
        free(msg);
        free(err);
        return;
    }
    struct exec_op *op = calloc(1, sizeof(*op));
    if (!op) {
        exec_reply_error(fn, ud, 500, "internal", "out of memory");
        return;
    }
    op->s = s;
    op->action_id = id;
    op->fn = fn;
    op->ud = ud;
    session_hold(s);
    exec_publish(eng, id, "running");
    /* The executor enforces the action's own timeout; this one only guards a hung sandbox. */
    json_t *jt = json_object_get(action, "timeout");
    double t = json_is_number(jt) ? json_number_value(jt) : 120.0;
    if (t < 0 || t > 86400)
        t = 120.0;
    struct http_request req = {.method = "POST",
                               .unix_socket = s->exec_sock,
                               .url = "http://executor/execute_action",
                               .body = body,
                               .body_len = len,
                               .timeout_ms = (long)(t * 1000.0) + 60000};
    if (http_start(eng->http, &req, exec_on_done, op) < 0) {
        struct http_result r = {.status = -1, .error = "cannot start a request"};
        exec_on_done(&r, op);
    }
}
