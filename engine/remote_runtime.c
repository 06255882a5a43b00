/* OpenHands' remote-runtime API mapped onto sessions. A runtime is a session: runtime_id is
 * the session id, OpenHands' session_id the session's name, and the url handed out is the
 * engine's /v1/sessions/{id}, never the executor's socket, so approvals and the history apply
 * to everything OpenHands does. The session key given with it is kept in the session's stored
 * config ("openhands": {"session_id", "session_api_key"}), never shown in the session object.
 * What has no meaning here (building images, VS Code, MCP) answers a clear error. */
#include "engine/remote_runtime.h"

#include "engine/api.h"
#include "engine/base/session_state.h"
#include "engine/base/util.h"
#include "engine/builder.h"
#include "engine/driver.h"
#include "engine/engine_internal.h"
#include "engine/listen.h"
#include "engine/session.h"
#include "engine/session_config.h"
#include "engine/session_internal.h"
#include "engine/store/store.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REMOTE_KEY_BYTES 32
/* The default memory limit (session_config.c), which resource_factor multiplies. */
#define REMOTE_MEMORY_BASE (2LL * 1024 * 1024 * 1024)

/* A session's state as OpenHands reads it: "status" decides attach (running), resume (paused)
 * or start anew (stopped, or no runtime); "pod_status" is its readiness poll (ready: probe
 * /alive; pending/running: wait; failed: give up; anything else: keep waiting). A stopped
 * session can be started again, so it is "paused" to OpenHands. */
static const struct {
    const char *status, *pod_status;
} remote_states[SESSION_ST_COUNT] = {
    [SESSION_BUILDING] = {"running", "pending"},     [SESSION_STARTING] = {"running", "pending"},
    [SESSION_STARTED] = {"running", "running"},      [SESSION_READY] = {"running", "ready"},
    [SESSION_DISCONNECTED] = {"running", "pending"}, /* paddock reconnects on its own */
    [SESSION_PAUSED] = {"paused", "paused"},         [SESSION_STOPPED] = {"paused", "stopped"},
    [SESSION_OOM_KILLED] = {"paused", "oomkilled"},  [SESSION_ERROR] = {"error", "failed"},
    [SESSION_DELETED] = {"stopped", "not found"},
};

/* state: the stored session's text. */
static void remote_state_map(const char *state, const char **status, const char **pod)
{
    enum session_st st;
    bool known = session_st_parse(state, &st) == 0;
    *status = known ? remote_states[st].status : "error";
    *pod = known ? remote_states[st].pod_status : "unknown";
}

/* The session's key, made and stored on first need when create; NULL when there is none (or
 * the store would not keep a new one). */
static char *remote_key(struct engine *eng, const char *id, bool create)
{
    json_t *cfg = store_session_config(eng->store, id);
    json_t *oh = json_object_get(cfg, "openhands");
    const char *k = json_string_value(json_object_get(oh, "session_api_key"));
    char *out = k ? strdup(k) : NULL;
    char key[2 * REMOTE_KEY_BYTES + 1];
    if (!out && create && util_random_hex(key, REMOTE_KEY_BYTES) == 0) {
        json_t *v = json_is_object(oh) ? json_deep_copy(oh) : json_object();
        json_object_set_new(v, "session_api_key", json_string(key));
        if (store_session_config_set(eng->store, id, "openhands", v, NULL) == 0)
            out = strdup(key);
        json_decref(v);
    }
    json_decref(cfg);
    return out;
}

bool remote_session_key_ok(struct engine *eng, const char *session_id, const char *key)
{
    char *want = remote_key(eng, session_id, false);
    bool ok = want && listen_secret_eq(key, want);
    free(want);
    return ok;
}

/* A Host header fit to go back into a URL. */
static bool remote_host_ok(const char *h)
{
    size_t n = h ? strlen(h) : 0;
    if (n == 0 || n > 255)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)h[i]) && !strchr(".-_:[]", h[i]))
            return false;
    return true;
}

/* Where OpenHands reaches the session: this engine, as the client reached it. */
static char *remote_url(struct api_req *r, const char *id)
{
    struct engine *eng = api_req_engine(r);
    const char *host = api_req_is_tcp(r) ? api_req_header(r, "Host") : NULL;
    if (!remote_host_ok(host))
        host = eng->listen_addr ? eng->listen_addr : "localhost";
    /* Over TLS the url is https: OpenHands then talks to the session with the same CA. */
    return util_strdupf("%s://%s/v1/sessions/%s", eng->listen_tls ? "https" : "http", host, id);
}

/* OpenHands' work_hosts {url: container port}: the session's published TCP ports. */
static json_t *remote_work_hosts(json_t *sess)
{
    json_t *out = json_object();
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(sess, "ports"), i, p)
    {
        const char *proto = json_string_value(json_object_get(p, "protocol"));
        const char *ip = json_string_value(json_object_get(p, "host_ip"));
        json_t *hp = json_object_get(p, "host_port"), *cp = json_object_get(p, "container_port");
        if (!proto || strcmp(proto, "tcp") != 0 || !json_is_integer(cp) || !hp)
            continue;
        char *url = json_is_integer(hp)
                        ? util_strdupf("http://%s:%lld", ip ? ip : "127.0.0.1",
                                       (long long)json_integer_value(hp))
                        : util_strdupf("http://%s:%s", ip ? ip : "127.0.0.1",
                                       json_string_value(hp) ? json_string_value(hp) : "0");
        if (url)
            json_object_set(out, url, cp);
        free(url);
    }
    return out;
}

/* The runtime object of a stored session (NULL when the store has none). */
static json_t *remote_runtime_json(struct api_req *r, const char *id, bool with_key)
{
    struct engine *eng = api_req_engine(r);
    json_t *sess = store_session_get(eng->store, id);
    if (!sess)
        return NULL;
    const char *state = json_string_value(json_object_get(sess, "state"));
    const char *status, *pod;
    remote_state_map(state, &status, &pod);
    json_t *cfg = store_session_config(eng->store, id);
    const char *sid =
        json_string_value(json_object_get(json_object_get(cfg, "openhands"), "session_id"));
    if (!sid)
        sid = json_string_value(json_object_get(sess, "name"));
    char *url = remote_url(r, id);
    json_t *o = json_pack("{s:s,s:s?,s:s,s:s,s:s?,s:o,s:i,s:[],s:O?,s:s?,s:O?}", "runtime_id", id,
                          "session_id", sid, "status", status, "pod_status", pod, "url", url,
                          "work_hosts", remote_work_hosts(sess), "restart_count", 0,
                          "restart_reasons", "image", json_object_get(sess, "image"),
                          "paddock_state", state, "reason", json_object_get(sess, "reason"));
    free(url);
    json_decref(cfg);
    json_decref(sess);
    if (o && !api_req_is_tcp(r) && !eng->listen_addr)
        json_object_set_new(o, "socket", json_string(eng->socket_path));
    if (o && with_key) {
        char *key = remote_key(eng, id, true);
        if (key) {
            json_object_set_new(o, "session_api_key", json_string(key));
            explicit_bzero(key, strlen(key));
        }
        free(key);
    }
    return o;
}

static void remote_reply_runtime(struct api_req *r, unsigned status, const char *id, bool with_key)
{
    json_t *o = remote_runtime_json(r, id, with_key);
    if (o)
        api_reply_json(r, status, o);
    else
        api_reply_error(r, ERR_NOT_FOUND, "no runtime %s", id);
}

/* ---- start ---- */

/* /start answers once the session exists (its id is known), not when it is ready: OpenHands
 * polls /runtime/{id} for that. The creation's own end may come before or after. */
struct remote_start {
    struct api_req *r;
    struct engine *eng;
    char *name; /* OpenHands' session_id */
    bool replied, done, returned;
};

static void remote_start_free(struct remote_start *st)
{
    free(st->name);
    free(st);
}

/* The session named name exists: keep OpenHands' session id and a key with it, answer. */
static void remote_start_reply(struct remote_start *st)
{
    struct session *s = session_find_ref(st->eng, st->name);
    st->replied = true;
    if (!s) {
        api_reply_error(st->r, ERR_INTERNAL, "the session of %s vanished while starting", st->name);
        return;
    }
    json_t *oh = json_pack("{s:s}", "session_id", st->name);
    char *err = NULL;
    if (store_session_config_set(st->eng->store, session_id(s), "openhands", oh, &err) < 0) {
        api_reply_error(st->r, session_store_error(st->eng),
                        "runtime %s started but its key was not kept (%s)", session_id(s),
                        err ? err : "store error");
    } else {
        remote_reply_runtime(st->r, 200, session_id(s), true);
    }
    free(err);
    json_decref(oh);
}

static void remote_start_done(const struct session_result *res, void *ud)
{
    struct remote_start *st = ud;
    st->done = true;
    if (!st->replied) {
        /* Failed (or claimed from the warm pool) before session_create returned. */
        if (res->err) {
            st->replied = true;
            api_reply_error(st->r, res->err, "%s", res->message);
        } else {
            remote_start_reply(st);
        }
    }
    if (st->returned)
        remote_start_free(st);
}

/* OpenHands' action-server command line (`... --plugins agent_skills jupyter vscode
 * --username openhands --user-id 1000 ...`): the plugins and the user it asks for, as session
 * options. Without those flags, OpenHands' defaults: `openhands`, uid 1000, agent_skills and
 * jupyter. vscode is dropped rather than refused: OpenHands adds it by default, and the
 * runtime's vscode/connection_token answers that there is none. */
static void remote_command_options(json_t *command, json_t *opts)
{
    json_t *plugins = NULL;
    bool root = false;
    long uid = -1; /* not given */
    bool in_plugins = false;
    size_t i;
    json_t *x;
    json_array_foreach(command, i, x)
    {
        const char *a = json_string_value(x);
        const char *next = json_string_value(json_array_get(command, i + 1));
        if (!a)
            continue;
        if (strncmp(a, "--", 2) == 0)
            in_plugins = false;
        if (strcmp(a, "--plugins") == 0) {
            in_plugins = true;
            if (!plugins)
                plugins = json_array();
        } else if (in_plugins && strcmp(a, "vscode") != 0) {
            json_array_append(plugins, x);
        } else if (strcmp(a, "--username") == 0 && next) {
            root = strcmp(next, "root") == 0;
        } else if (strcmp(a, "--user-id") == 0 && next) {
            char *end;
            uid = strtol(next, &end, 10);
            if (*end || end == next || uid < 0 || uid > 65534)
                uid = -1;
        }
    }
    json_object_set_new(opts, "plugins",
                        plugins ? plugins : json_pack("[s,s]", "agent_skills", "jupyter"));
    root = root || uid == 0; /* OpenHands runs as uid 0 exactly when it runs as root */
    json_object_set_new(opts, "run_as_openhands", json_boolean(!root));
    if (!root && uid > 0)
        json_object_set_new(opts, "user_id", json_integer(uid));
}

/* OpenHands' /start body → session options; NULL after a 400 reply. */
static json_t *remote_start_options(struct api_req *r, json_t *body)
{
    json_t *sid = json_object_get(body, "session_id"), *image = json_object_get(body, "image");
    json_t *env = json_object_get(body, "environment");
    json_t *factor = json_object_get(body, "resource_factor");
    json_t *rclass = json_object_get(body, "runtime_class");
    if (!json_is_string(sid) || !session_config_name_ok(json_string_value(sid))) {
        api_reply_error(r, ERR_BAD_REQUEST,
                        "\"session_id\" must be a string matching [A-Za-z0-9][A-Za-z0-9_.-]{0,63} "
                        "(it names the paddock session)");
        return NULL;
    }
    if ((image && !json_is_string(image)) || (env && !json_is_object(env) && !json_is_null(env)) ||
        (rclass && !json_is_string(rclass) && !json_is_null(rclass))) {
        api_reply_error(r, ERR_BAD_REQUEST,
                        "\"image\" must be a string, \"environment\" an object of strings, "
                        "\"runtime_class\" a string");
        return NULL;
    }
    double f = factor ? json_number_value(factor) : 1;
    if (factor && (!json_is_number(factor) || f < 1 || f > 8)) {
        api_reply_error(r, ERR_BAD_REQUEST, "\"resource_factor\" must be a number from 1 to 8");
        return NULL;
    }
    json_t *opts = json_pack("{s:O,s:b}", "name", sid, "keep_alive", 1);
    if (image)
        json_object_set(opts, "image", image);
    if (json_is_object(env) && json_object_size(env))
        json_object_set(opts, "env", env);
    if (f != 1) /* the memory limit scales; CPUs stay (Docker refuses more than the host has) */
        json_object_set_new(opts, "limits",
                            json_pack("{s:I}", "memory", (json_int_t)(REMOTE_MEMORY_BASE * f)));
    if (json_is_string(rclass))
        json_object_set(opts, "runtime", rclass);
    json_t *command = json_object_get(body, "command");
    remote_command_options(json_is_array(command) ? command : NULL, opts);
    return opts;
}

void remote_route_start(struct api_req *r)
{
    struct engine *eng = api_req_engine(r);
    json_t *body = api_req_json(r, 0);
    if (!body)
        return;
    json_t *opts = remote_start_options(r, body);
    if (!opts) {
        json_decref(body);
        return;
    }
    const char *name = json_string_value(json_object_get(opts, "name"));
    struct session *same = session_find_ref(eng, name);
    if (same) {
        api_reply_error(r, ERR_CONFLICT,
                        "a runtime for session_id %s exists (runtime_id %s, %s): attach with GET "
                        "/sessions/%s, or POST /stop it first",
                        name, session_id(same), session_st_name(session_state(same)), name);
        json_decref(opts);
        json_decref(body);
        return;
    }
    struct remote_start *st = calloc(1, sizeof(*st));
    if (!st || !(st->name = strdup(name))) {
        if (st)
            remote_start_free(st);
        api_reply_error(r, ERR_INTERNAL, "out of memory");
        json_decref(opts);
        json_decref(body);
        return;
    }
    st->r = r;
    st->eng = eng;
    struct session_result bad = {0};
    if (session_create(eng, opts, !api_req_is_operator(r), remote_start_done, st, &bad) < 0) {
        api_reply_error(r, bad.err, "%s", bad.message);
        remote_start_free(st);
    } else {
        if (!st->replied)
            remote_start_reply(st);
        st->returned = true;
        if (st->done)
            remote_start_free(st);
    }
    json_decref(opts);
    json_decref(body);
}

/* ---- lookups ---- */

void remote_route_session(struct api_req *r)
{
    struct engine *eng = api_req_engine(r);
    const char *sid = api_req_param(r, 0);
    struct session *s = session_find_ref(eng, sid);
    /* A session in error holds no name: OpenHands may start a new one under it. */
    if (!s || s->pooled || session_state(s) == SESSION_ERROR) {
        api_reply_error(r, ERR_NOT_FOUND, "no runtime for session_id %s", sid);
        return;
    }
    remote_reply_runtime(r, 200, session_id(s), true);
}

void remote_route_runtime(struct api_req *r)
{
    struct engine *eng = api_req_engine(r);
    const char *id = api_req_param(r, 0);
    struct session *s = session_find(eng, id);
    if (!s || s->pooled) {
        json_t *stored = s ? NULL : store_session_get(eng->store, id);
        if (stored)
            api_reply_error(r, ERR_NOT_FOUND, "runtime %s was stopped (its session is deleted)",
                            id);
        else
            api_reply_error(r, ERR_NOT_FOUND, "no runtime %s", id);
        json_decref(stored);
        return;
    }
    remote_reply_runtime(r, 200, id, false);
}

void remote_route_list(struct api_req *r)
{
    struct engine *eng = api_req_engine(r);
    json_t *list = json_array();
    for (struct session *s = eng->sessions; s; s = s->next) {
        if (s->pooled)
            continue;
        json_t *o = remote_runtime_json(r, session_id(s), false);
        if (o)
            json_array_append_new(list, o);
    }
    api_reply_json(r, 200, json_pack("{s:o}", "runtimes", list));
}

/* ---- pause, resume, stop ---- */

struct remote_op {
    struct api_req *r;
    char id[2 * SESSION_ID_BYTES + 1];
    bool stop;
};

static void remote_op_done(const struct session_result *res, void *ud)
{
    struct remote_op *op = ud;
    if (res->err)
        api_reply_error(op->r, res->err, "%s", res->message);
    else if (op->stop)
        api_reply_json(op->r, 200,
                       json_pack("{s:s,s:s,s:s}", "runtime_id", op->id, "status", "stopped",
                                 "paddock_state", session_st_name(SESSION_DELETED)));
    else
        remote_reply_runtime(op->r, 200, op->id, false);
    free(op);
}

/* The live session of {"runtime_id"}, or a 400/404 reply and NULL. */
static struct session *remote_body_session(struct api_req *r)
{
    json_t *body = api_req_json(r, 0);
    if (!body)
        return NULL;
    const char *id = json_string_value(json_object_get(body, "runtime_id"));
    struct session *s = id ? session_find(api_req_engine(r), id) : NULL;
    if (!id)
        api_reply_error(r, ERR_BAD_REQUEST, "the body is {\"runtime_id\": \"<id>\"}");
    else if (!s || s->pooled)
        api_reply_error(r, ERR_NOT_FOUND, "no runtime %.64s", id);
    json_decref(body);
    return s && !s->pooled ? s : NULL;
}

static void remote_lifecycle(struct api_req *r,
                             void (*fn)(struct session *, session_done_fn, void *), bool stop)
{
    struct session *s = remote_body_session(r);
    if (!s)
        return;
    struct remote_op *op = calloc(1, sizeof(*op));
    if (!op) {
        api_reply_error(r, ERR_INTERNAL, "out of memory");
        return;
    }
    op->r = r;
    op->stop = stop;
    snprintf(op->id, sizeof(op->id), "%s", session_id(s));
    fn(s, remote_op_done, op);
}

void remote_route_pause(struct api_req *r)
{
    remote_lifecycle(r, session_pause, false);
}

void remote_route_resume(struct api_req *r)
{
    remote_lifecycle(r, session_resume, false);
}

/* OpenHands stops a runtime it is done with for good (a stopped one is never resumed, a new
 * one starts): the session is deleted. /pause keeps it. */
void remote_route_stop(struct api_req *r)
{
    remote_lifecycle(r, session_delete, true);
}

/* ---- images ---- */

static void remote_on_image(const struct sandbox_reply *d, void *ud)
{
    struct api_req *r = ud;
    if (d->status == 200) {
        json_t *size = json_object_get(d->json, "Size");
        api_reply_json(
            r, 200,
            json_pack("{s:b,s:{s:O,s:O,s:O}}", "exists", 1, "image", "id",
                      json_object_get(d->json, "Id") ? json_object_get(d->json, "Id") : json_null(),
                      "upload_time",
                      json_object_get(d->json, "Created") ? json_object_get(d->json, "Created")
                                                          : json_null(),
                      "image_size_bytes", size ? size : json_null()));
    } else if (d->status == 404) {
        api_reply_json(r, 200, json_pack("{s:b}", "exists", 0));
    } else if (d->status < 0) {
        api_reply_error(r, ERR_DOCKER_UNAVAILABLE, "Docker daemon not reachable (%s)", d->message);
    } else {
        api_reply_error(r, ERR_DOCKER_ERROR, "docker image inspect answered %ld: %s", d->status,
                        d->message);
    }
}

void remote_route_image_exists(struct api_req *r)
{
    const char *image = api_req_query(r, "image");
    if (!image || !*image) {
        api_reply_error(r, ERR_BAD_REQUEST, "image_exists needs ?image=<reference>");
        return;
    }
    struct engine *eng = api_req_engine(r);
    if (eng->driver->image_inspect(eng, image, remote_on_image, r) < 0)
        api_reply_error(r, ERR_INTERNAL, "cannot start a request");
}

void remote_route_registry_prefix(struct api_req *r)
{
    /* No registry: images live in the engine's Docker. OpenHands names its runtime images
     * <prefix>/runtime, which is paddock's own repository with the default prefix. */
    const char *repo = getenv("PADDOCK_RUNTIME_REPO");
    char prefix[256];
    snprintf(prefix, sizeof(prefix), "%s", repo && *repo ? repo : BUILDER_DEFAULT_REPO);
    size_t n = strlen(prefix);
    if (n > 8 && strcmp(prefix + n - 8, "/runtime") == 0)
        prefix[n - 8] = '\0';
    api_reply_json(r, 200, json_pack("{s:s}", "registry_prefix", prefix));
}

/* ---- the action server's extras ---- */

void remote_route_vscode_token(struct api_req *r)
{
    /* OpenHands' own answer when the vscode plugin is not loaded: it shows no VS Code link. */
    if (api_live_session(r))
        api_reply_json(r, 200, json_pack("{s:n}", "token"));
}

void remote_route_update_mcp(struct api_req *r)
{
    if (api_live_session(r))
        api_reply_error(r, ERR_NOT_IMPLEMENTED,
                        "paddock's executor runs no MCP servers; configure MCP servers on the "
                        "OpenHands side (sse or shttp servers reach the agent directly)");
}
