/* The Docker sandbox driver (driver.h): each operation is one call of engine/docker/, whose
 * replies already have the normalized form; only their C types are translated, by a small
 * relay per call. The executor channel is a unix socket in a host directory that the create
 * body bind-mounts into the container (session.c makes it, session_config.c mounts it). */
#include "engine/driver.h"

#include "engine/base/unix_peer.h"
#include "engine/base/util.h"
#include "engine/docker/docker.h"
#include "engine/engine_internal.h"
#include "engine/session_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static struct docker *dk(const struct engine *eng)
{
    return eng->driver_state;
}

/* ---- replies ---- */

struct relay {
    sandbox_done_fn fn;
    sandbox_progress_fn progress; /* image pulls and builds */
    void *ud;
};

static void relay_reply(const struct docker_reply *r, void *ud)
{
    struct relay rl = *(struct relay *)ud;
    free(ud);
    struct sandbox_reply out = {.status = r->status, .json = r->json, .message = r->message};
    if (rl.fn)
        rl.fn(&out, rl.ud);
}

static void relay_progress(json_t *obj, void *ud)
{
    struct relay *rl = ud;
    if (rl->progress)
        rl->progress(obj, rl->ud);
}

/* A relay for one call, or NULL (out of memory: the call is not made). */
static struct relay *relay_new(sandbox_done_fn fn, void *ud)
{
    struct relay *rl = malloc(sizeof(*rl));
    if (rl)
        *rl = (struct relay){.fn = fn, .ud = ud};
    return rl;
}

/* The docker_* call's return value: its relay is freed when the call could not be made. */
static int relay_sent(int rc, struct relay *rl)
{
    if (rc < 0)
        free(rl);
    return rc;
}

/* ---- the driver itself ---- */

static int dd_open(struct engine *eng, const char *address, char **err)
{
    if (!(eng->driver_state = docker_new(eng->http, address))) {
        *err = strdup("out of memory");
        return -1;
    }
    return 0;
}

static void dd_close(struct engine *eng)
{
    docker_free(dk(eng));
    eng->driver_state = NULL;
}

static const char *dd_address(const struct engine *eng)
{
    return docker_socket(dk(eng));
}

static const char *dd_hint(const struct engine *eng)
{
    return docker_hint(dk(eng));
}

static const char *dd_api_version(const struct engine *eng)
{
    return docker_api_version(dk(eng));
}

static bool dd_is_local(const struct engine *eng)
{
    return docker_is_local(dk(eng));
}

static int dd_ping(struct engine *eng, sandbox_done_fn fn, void *ud)
{
    struct relay *rl = relay_new(fn, ud);
    return rl ? relay_sent(docker_ping(dk(eng), relay_reply, rl), rl) : -1;
}

static int dd_version(struct engine *eng, sandbox_done_fn fn, void *ud)
{
    struct relay *rl = relay_new(fn, ud);
    return rl ? relay_sent(docker_version(dk(eng), relay_reply, rl), rl) : -1;
}

static int dd_info(struct engine *eng, sandbox_done_fn fn, void *ud)
{
    struct relay *rl = relay_new(fn, ud);
    return rl ? relay_sent(docker_info(dk(eng), relay_reply, rl), rl) : -1;
}

/* ---- sandboxes ---- */

static int dd_create(struct engine *eng, const char *name, json_t *body, sandbox_done_fn fn,
                     void *ud)
{
    /* "Platform" is Docker's query parameter, not part of its body. */
    const char *platform = json_string_value(json_object_get(body, "Platform"));
    json_t *sent = platform ? json_copy(body) : json_incref(body);
    if (!sent)
        return -1;
    json_object_del(sent, "Platform");
    struct relay *rl = relay_new(fn, ud);
    int rc =
        rl ? relay_sent(docker_container_create(dk(eng), name, platform, sent, relay_reply, rl), rl)
           : -1;
    json_decref(sent);
    return rc;
}

static int dd_start(struct engine *eng, const char *id, sandbox_done_fn fn, void *ud)
{
    struct relay *rl = relay_new(fn, ud);
    return rl ? relay_sent(docker_container_start(dk(eng), id, relay_reply, rl), rl) : -1;
}

static int dd_stop(struct engine *eng, const char *id, int timeout_s, sandbox_done_fn fn, void *ud)
{
    struct relay *rl = relay_new(fn, ud);
    return rl ? relay_sent(docker_container_stop(dk(eng), id, timeout_s, relay_reply, rl), rl) : -1;
}

static int dd_pause(struct engine *eng, const char *id, sandbox_done_fn fn, void *ud)
{
    struct relay *rl = relay_new(fn, ud);
    return rl ? relay_sent(docker_container_pause(dk(eng), id, relay_reply, rl), rl) : -1;
}

static int dd_resume(struct engine *eng, const char *id, sandbox_done_fn fn, void *ud)
{
    struct relay *rl = relay_new(fn, ud);
    return rl ? relay_sent(docker_container_unpause(dk(eng), id, relay_reply, rl), rl) : -1;
}

static int dd_remove(struct engine *eng, const char *id, sandbox_done_fn fn, void *ud)
{
    struct relay *rl = relay_new(fn, ud);
    return rl ? relay_sent(docker_container_remove(dk(eng), id, relay_reply, rl), rl) : -1;
}

static int dd_rename(struct engine *eng, const char *id, const char *name, sandbox_done_fn fn,
                     void *ud)
{
    struct relay *rl = relay_new(fn, ud);
    return rl ? relay_sent(docker_container_rename(dk(eng), id, name, relay_reply, rl), rl) : -1;
}

static int dd_inspect(struct engine *eng, const char *id, sandbox_done_fn fn, void *ud)
{
    struct relay *rl = relay_new(fn, ud);
    return rl ? relay_sent(docker_container_inspect(dk(eng), id, relay_reply, rl), rl) : -1;
}

static int dd_wait(struct engine *eng, const char *id, long timeout_ms, sandbox_done_fn fn,
                   void *ud)
{
    struct relay *rl = relay_new(fn, ud);
    return rl ? relay_sent(docker_container_wait_timeout(dk(eng), id, timeout_ms, relay_reply, rl),
                           rl)
              : -1;
}

static int dd_list(struct engine *eng, const char *label, sandbox_done_fn fn, void *ud)
{
    struct relay *rl = relay_new(fn, ud);
    return rl ? relay_sent(docker_container_list(dk(eng), label, relay_reply, rl), rl) : -1;
}

static int dd_changes(struct engine *eng, const char *id, sandbox_done_fn fn, void *ud)
{
    struct relay *rl = relay_new(fn, ud);
    return rl ? relay_sent(docker_container_changes(dk(eng), id, relay_reply, rl), rl) : -1;
}

static int dd_logs_tail(struct engine *eng, const char *id, int tail, sandbox_done_fn fn, void *ud)
{
    struct relay *rl = relay_new(fn, ud);
    return rl ? relay_sent(docker_container_logs_tail(dk(eng), id, tail, relay_reply, rl), rl) : -1;
}

/* ---- follow streams ---- */

/* Lives from the open to the end or the close. */
struct sandbox_stream {
    struct docker_stream *in;
    sandbox_item_fn on_item;
    sandbox_done_fn on_end;
    void *ud;
};

static int stream_on_item(const struct docker_item *it, void *ud)
{
    struct sandbox_stream *s = ud;
    struct sandbox_item out = {.json = it->json, .data = it->data, .len = it->len, .fd = it->fd};
    return s->on_item(&out, s->ud);
}

static void stream_on_end(const struct docker_reply *r, void *ud)
{
    struct sandbox_stream s = *(struct sandbox_stream *)ud;
    free(ud);
    struct sandbox_reply out = {.status = r->status, .json = r->json, .message = r->message};
    s.on_end(&out, s.ud);
}

static struct sandbox_stream *stream_new(sandbox_item_fn on_item, sandbox_done_fn on_end, void *ud)
{
    struct sandbox_stream *s = calloc(1, sizeof(*s));
    if (s)
        *s = (struct sandbox_stream){.on_item = on_item, .on_end = on_end, .ud = ud};
    return s;
}

static struct sandbox_stream *stream_opened(struct sandbox_stream *s, struct docker_stream *in)
{
    if (!in) {
        free(s);
        return NULL;
    }
    s->in = in;
    return s;
}

static struct sandbox_stream *dd_events_follow(struct engine *eng, const char *label,
                                               sandbox_item_fn on_item, sandbox_done_fn on_end,
                                               void *ud)
{
    struct sandbox_stream *s = stream_new(on_item, on_end, ud);
    return s ? stream_opened(s,
                             docker_events_follow(dk(eng), label, stream_on_item, stream_on_end, s))
             : NULL;
}

static struct sandbox_stream *dd_stats_follow(struct engine *eng, const char *id,
                                              sandbox_item_fn on_item, sandbox_done_fn on_end,
                                              void *ud)
{
    struct sandbox_stream *s = stream_new(on_item, on_end, ud);
    return s ? stream_opened(s, docker_stats_follow(dk(eng), id, stream_on_item, stream_on_end, s))
             : NULL;
}

static struct sandbox_stream *dd_logs_follow(struct engine *eng, const char *id, int tail,
                                             int timestamps, sandbox_item_fn on_item,
                                             sandbox_done_fn on_end, void *ud)
{
    struct sandbox_stream *s = stream_new(on_item, on_end, ud);
    /* Sandboxes run without a TTY: their logs are framed stdout/stderr. */
    return s ? stream_opened(s, docker_logs_follow(dk(eng), id, tail, timestamps, 0, stream_on_item,
                                                   stream_on_end, s))
             : NULL;
}

static void dd_stream_close(struct engine *eng, struct sandbox_stream *s)
{
    if (!s)
        return;
    docker_stream_close(dk(eng), s->in);
    free(s);
}

/* ---- volumes ---- */

static int dd_volume_inspect(struct engine *eng, const char *name, sandbox_done_fn fn, void *ud)
{
    struct relay *rl = relay_new(fn, ud);
    return rl ? relay_sent(docker_volume_inspect(dk(eng), name, relay_reply, rl), rl) : -1;
}

static int dd_volume_list(struct engine *eng, const char *label, sandbox_done_fn fn, void *ud)
{
    struct relay *rl = relay_new(fn, ud);
    return rl ? relay_sent(docker_volume_list(dk(eng), label, relay_reply, rl), rl) : -1;
}

static int dd_volume_remove(struct engine *eng, const char *name, sandbox_done_fn fn, void *ud)
{
    struct relay *rl = relay_new(fn, ud);
    return rl ? relay_sent(docker_volume_remove(dk(eng), name, relay_reply, rl), rl) : -1;
}

/* ---- exec ---- */

/* Lives from the open to the exit or the close; docker_exec calls back with it as ud. */
struct sandbox_exec {
    struct docker_exec *x;
    sandbox_output_fn on_output;
    sandbox_exit_fn on_exit;
    void (*on_drain)(void *ud);
    void *ud;
    sandbox_done_fn on_resized; /* the latest exec_resize's (one caller: the terminal) */
    void *resized_ud;
};

static int exec_on_output(const char *data, size_t len, int fd, void *ud)
{
    struct sandbox_exec *e = ud;
    return e->on_output(data, len, fd, e->ud);
}

static void exec_on_exit(int exit_code, const char *error, void *ud)
{
    struct sandbox_exec e = *(struct sandbox_exec *)ud;
    free(ud);
    e.on_exit(exit_code, error, e.ud);
}

static void exec_on_drain(void *ud)
{
    struct sandbox_exec *e = ud;
    if (e->on_drain)
        e->on_drain(e->ud);
}

static void exec_on_resized(const struct docker_reply *r, void *ud)
{
    struct sandbox_exec *e = ud;
    struct sandbox_reply out = {.status = r->status, .json = r->json, .message = r->message};
    if (e->on_resized)
        e->on_resized(&out, e->resized_ud);
}

static struct sandbox_exec *dd_exec_open(struct engine *eng, const char *id,
                                         const struct sandbox_exec_opts *opts,
                                         sandbox_output_fn on_output, sandbox_exit_fn on_exit,
                                         void *ud)
{
    struct sandbox_exec *e = calloc(1, sizeof(*e));
    if (!e)
        return NULL;
    *e = (struct sandbox_exec){
        .on_output = on_output, .on_exit = on_exit, .on_drain = opts->on_drain, .ud = ud};
    struct docker_exec_opts o = {.cmd = opts->cmd,
                                 .env = opts->env,
                                 .user = opts->user,
                                 .working_dir = opts->working_dir,
                                 .tty = opts->tty,
                                 .rows = opts->rows,
                                 .cols = opts->cols,
                                 .on_drain = exec_on_drain};
    if (!(e->x = docker_exec_open(dk(eng), id, &o, exec_on_output, exec_on_exit, e))) {
        free(e);
        return NULL;
    }
    return e;
}

static long dd_exec_write(struct sandbox_exec *e, const void *data, size_t len)
{
    return docker_exec_write(e->x, data, len);
}

static int dd_exec_close_input(struct sandbox_exec *e)
{
    return docker_exec_close_input(e->x);
}

static int dd_exec_resize(struct sandbox_exec *e, int rows, int cols, sandbox_done_fn fn, void *ud)
{
    e->on_resized = fn;
    e->resized_ud = ud;
    return docker_exec_resize(e->x, rows, cols, exec_on_resized, e);
}

static void dd_exec_resume_output(struct sandbox_exec *e)
{
    docker_exec_resume_output(e->x);
}

static const char *dd_exec_id(const struct sandbox_exec *e)
{
    return docker_exec_id(e->x);
}

static void dd_exec_close(struct sandbox_exec *e)
{
    docker_exec_close(e->x);
    free(e);
}

static int dd_exec_inspect(struct engine *eng, const char *exec_id, sandbox_done_fn fn, void *ud)
{
    struct relay *rl = relay_new(fn, ud);
    return rl ? relay_sent(docker_exec_inspect(dk(eng), exec_id, relay_reply, rl), rl) : -1;
}

/* ---- images ---- */

static int dd_image_inspect(struct engine *eng, const char *name, sandbox_done_fn fn, void *ud)
{
    struct relay *rl = relay_new(fn, ud);
    return rl ? relay_sent(docker_image_inspect(dk(eng), name, relay_reply, rl), rl) : -1;
}

static int dd_image_pull(struct engine *eng, const char *ref, const char *platform, long timeout_ms,
                         sandbox_progress_fn on_progress, sandbox_done_fn fn, void *ud)
{
    struct relay *rl = relay_new(fn, ud);
    if (rl)
        rl->progress = on_progress;
    return rl ? relay_sent(docker_image_pull(dk(eng), ref, platform, timeout_ms, relay_progress,
                                             relay_reply, rl),
                           rl)
              : -1;
}

static int dd_image_build(struct engine *eng, const char *tag, json_t *labels, int nocache,
                          const char *platform, const void *context, size_t len, long timeout_ms,
                          sandbox_progress_fn on_progress, sandbox_done_fn fn, void *ud)
{
    struct relay *rl = relay_new(fn, ud);
    if (rl)
        rl->progress = on_progress;
    return rl ? relay_sent(docker_image_build(dk(eng), tag, labels, nocache, platform, context, len,
                                              timeout_ms, relay_progress, relay_reply, rl),
                           rl)
              : -1;
}

static int dd_image_list(struct engine *eng, const char *label, sandbox_done_fn fn, void *ud)
{
    struct relay *rl = relay_new(fn, ud);
    return rl ? relay_sent(docker_image_list(dk(eng), label, relay_reply, rl), rl) : -1;
}

static int dd_image_remove(struct engine *eng, const char *name, sandbox_done_fn fn, void *ud)
{
    struct relay *rl = relay_new(fn, ud);
    return rl ? relay_sent(docker_image_remove(dk(eng), name, relay_reply, rl), rl) : -1;
}

static int dd_image_tag(struct engine *eng, const char *name, const char *ref, sandbox_done_fn fn,
                        void *ud)
{
    char *repo = NULL, *tag = NULL;
    int rc = -1;
    if (docker_image_ref_split(ref, &repo, &tag) == 0) {
        struct relay *rl = relay_new(fn, ud);
        rc = rl ? relay_sent(docker_image_tag(dk(eng), name, repo, tag, relay_reply, rl), rl) : -1;
    }
    free(repo);
    free(tag);
    return rc;
}

/* ---- the executor channel ---- */

static void dd_learn_on_inspect(const struct sandbox_reply *r, void *ud)
{
    struct session *s = ud;
    json_t *state = json_object_get(r->json, "State");
    json_int_t pid = json_integer_value(json_object_get(state, "Pid"));
    if (r->status == 200 && json_is_true(json_object_get(state, "Running")) && pid > 0)
        s->exec_init_pid = (long)pid;
    s->exec_init_learning = false;
    session_release(s);
}

/* Ready once the executor listens and the container's first process is known (the channel's
 * check needs it): asked right after a start, so the inspect that learns it runs while the
 * executor binds its socket rather than after. */
static bool dd_executor_ready(struct session *s)
{
    if (s->exec_init_pid <= 0) {
        if (!s->exec_init_learning && s->container_id) {
            s->exec_init_learning = true;
            session_hold(s);
            if (dd_inspect(s->eng, s->container_id, dd_learn_on_inspect, s) < 0) {
                s->exec_init_learning = false;
                session_release(s);
            }
        }
        return false;
    }
    struct stat st; /* the sandbox can write the socket's directory: a link is not followed */
    return lstat(s->exec_sock, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* Before the first request on each connection: the container's root can put anything at
 * executor.sock, and the engine (the host's root) must send nothing but to that container's
 * executor. The socket was opened without following a link (http.c); the process serving it
 * must run the executor binary the engine mounts, in the pid namespace of the container's first
 * process. arg: "<its pid> <binary>". */
static int dd_executor_check(int fd, const char *arg, char *err, size_t errlen)
{
    char *end = NULL;
    long init = strtol(arg, &end, 10);
    if (init <= 0 || !end || *end != ' ') {
        snprintf(err, errlen, "Docker did not say which is the sandbox's first process");
        return -2;
    }
    if (!end[1]) {
        snprintf(err, errlen,
                 "the engine has no executor binary to check the socket's server "
                 "against (paddock serve --executor)");
        return -1;
    }
    char why[400];
    int rc = unix_peer_check(fd, end + 1, (pid_t)init, why, sizeof(why));
    if (rc == -1)
        snprintf(err, errlen,
                 "refused the executor's socket: %s; nothing was sent to it (something in the "
                 "sandbox replaced the socket)",
                 why);
    else if (rc < 0)
        snprintf(err, errlen, "%s", why);
    return rc;
}

/* One request on the channel. When the container's first process (Docker's State.Pid) is not
 * known yet, an inspect learns it first and the request is kept (its strings copied)
 * meanwhile. A refused channel is the session's news too: it says why. */
struct channel_call {
    struct session *s;
    http_done_fn fn;
    http_data_fn on_data;
    void *ud;
    struct http_request req;
    char *url, *body, *content_type;
    char **headers;
};

static void channel_call_free(struct channel_call *c)
{
    free(c->url);
    free(c->body);
    free(c->content_type);
    for (char **h = c->headers; h && *h; h++)
        free(*h);
    free(c->headers);
    free(c);
}

/* keep: copy req's strings (it is sent later); else it is sent at once and libcurl copies. */
static struct channel_call *channel_call_new(struct session *s, const struct http_request *req,
                                             bool keep, http_done_fn fn, void *ud)
{
    struct channel_call *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    *c = (struct channel_call){.s = s, .fn = fn, .on_data = req->on_data, .ud = ud, .req = *req};
    if (!keep)
        return c;
    size_t nh = 0;
    while (req->headers && req->headers[nh])
        nh++;
    c->url = strdup(req->url);
    c->body = req->body ? malloc(req->body_len ? req->body_len : 1) : NULL;
    c->content_type = req->content_type ? strdup(req->content_type) : NULL;
    c->headers = calloc(nh + 1, sizeof(char *));
    bool ok =
        c->url && (!req->body || c->body) && (!req->content_type || c->content_type) && c->headers;
    for (size_t i = 0; ok && i < nh; i++)
        ok = (c->headers[i] = strdup(req->headers[i])) != NULL;
    if (!ok) {
        channel_call_free(c);
        return NULL;
    }
    if (req->body)
        memcpy(c->body, req->body, req->body_len);
    c->req.url = c->url;
    c->req.body = c->body;
    c->req.content_type = c->content_type;
    c->req.headers = (const char *const *)c->headers;
    return c;
}

static int dd_executor_data(const char *data, size_t len, void *ud)
{
    struct channel_call *c = ud;
    return c->on_data(data, len, c->ud);
}

static void dd_executor_done(const struct http_result *r, void *ud)
{
    struct channel_call *c = ud;
    struct session *s = c->s;
    if (r->peer_refused && !s->unlinked)
        session_channel_refused(s, r->error);
    c->fn(r, c->ud);
    channel_call_free(c);
    session_release(s);
}

/* Fails the call as the transport would (fn is called: this runs from the loop). */
static void channel_fail(struct channel_call *c, const char *why)
{
    struct http_result r = {.status = -1, .body = "", .error = why, .connect_failed = 1};
    dd_executor_done(&r, c);
}

static int channel_send(struct channel_call *c)
{
    struct session *s = c->s;
    char *arg = util_strdupf("%ld %s", s->exec_init_pid,
                             s->eng->executor_path ? s->eng->executor_path : "");
    c->req.unix_socket = s->exec_sock;
    /* Off only in a benchmark that measures what the check costs (engine_internal.h). */
    c->req.peer_check = s->eng->bench_off & ENGINE_BENCH_NO_PEER_CHECK ? NULL : dd_executor_check;
    c->req.peer_arg = arg;
    c->req.on_data = c->on_data ? dd_executor_data : NULL;
    int rc = arg ? http_start(s->eng->http, &c->req, dd_executor_done, c) : -1;
    free(arg);
    return rc;
}

static void channel_on_inspect(const struct sandbox_reply *r, void *ud)
{
    struct channel_call *c = ud;
    json_t *state = json_object_get(r->json, "State");
    json_int_t pid = json_integer_value(json_object_get(state, "Pid"));
    if (r->status == 200 && json_is_true(json_object_get(state, "Running")) && pid > 0) {
        c->s->exec_init_pid = (long)pid;
        if (channel_send(c) < 0)
            channel_fail(c, "cannot start a request to the executor");
        return;
    }
    char *why = r->status == 200 ? strdup("the sandbox is not running")
                                 : util_strdupf("docker inspect: %s", r->message);
    channel_fail(c, why ? why : "docker inspect failed");
    free(why);
}

static int dd_executor_request(struct session *s, const struct http_request *req, http_done_fn fn,
                               void *ud)
{
    if (!s->container_id)
        return -1;
    bool known = s->exec_init_pid > 0;
    struct channel_call *c = channel_call_new(s, req, !known, fn, ud);
    if (!c)
        return -1;
    session_hold(s);
    if (known ? channel_send(c) < 0
              : dd_inspect(s->eng, s->container_id, channel_on_inspect, c) < 0) {
        session_release(s);
        channel_call_free(c);
        return -1;
    }
    return 0;
}

const struct sandbox_driver driver_docker = {
    .name = "docker",
    .open = dd_open,
    .close = dd_close,
    .address = dd_address,
    .hint = dd_hint,
    .api_version = dd_api_version,
    .is_local = dd_is_local,
    .ping = dd_ping,
    .version = dd_version,
    .info = dd_info,
    .create = dd_create,
    .start = dd_start,
    .stop = dd_stop,
    .pause = dd_pause,
    .resume = dd_resume,
    .remove = dd_remove,
    .rename = dd_rename,
    .inspect = dd_inspect,
    .wait = dd_wait,
    .list = dd_list,
    .changes = dd_changes,
    .logs_tail = dd_logs_tail,
    .events_follow = dd_events_follow,
    .stats_follow = dd_stats_follow,
    .logs_follow = dd_logs_follow,
    .stream_close = dd_stream_close,
    .volume_inspect = dd_volume_inspect,
    .volume_list = dd_volume_list,
    .volume_remove = dd_volume_remove,
    .exec_open = dd_exec_open,
    .exec_write = dd_exec_write,
    .exec_close_input = dd_exec_close_input,
    .exec_resize = dd_exec_resize,
    .exec_resume_output = dd_exec_resume_output,
    .exec_id = dd_exec_id,
    .exec_close = dd_exec_close,
    .exec_inspect = dd_exec_inspect,
    .image_inspect = dd_image_inspect,
    .image_pull = dd_image_pull,
    .image_build = dd_image_build,
    .image_tag = dd_image_tag,
    .image_list = dd_image_list,
    .image_remove = dd_image_remove,
    .executor_ready = dd_executor_ready,
    .executor_request = dd_executor_request,
};
