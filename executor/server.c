#include "server.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "action.h"
#include "action_run.h"
#include "env.h"
#include "executor.h"
#include "sysinfo.h"

struct server {
    struct executor *ex;
    struct MHD_Daemon *daemon;
    struct loop_watch watch;
    /* A connection was resumed. In external-loop mode MHD has no wakeup fd for that (it
     * drops its ITC), so the loop must run MHD before it sleeps again. */
    bool resumed;
};

struct request;
typedef enum MHD_Result (*route_fn)(struct request *rq);

struct route {
    const char *path;
    const char *method;
    bool body; /* keeps the request body */
    route_fn fn;
};

struct request {
    struct server *srv;
    struct MHD_Connection *conn;
    const struct route *route;
    unsigned status; /* 404/405 decided from the first line */
    const char *allow;
    struct buf body;
    bool too_large;
    bool no_memory;
    struct action_req *action; /* submitted; the reply waits for its result */
    bool env;                  /* POST /env: the result becomes {"status": "ok"} or an error */
};

/* Takes the reference to body. */
static enum MHD_Result reply_json(struct MHD_Connection *conn, unsigned status, json_t *body,
                                  const char *allow)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    if (!text) {
        static char fallback[] =
            "{\"detail\":\"An unexpected error occurred. Please try again later.\"}";
        status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        text = strdup(fallback);
        if (!text)
            return MHD_NO;
    }
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    if (allow)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
    enum MHD_Result rc = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return rc;
}

/* FastAPI's error shape: {"detail": "..."}. */
static enum MHD_Result reply_detail(struct MHD_Connection *conn, unsigned status, const char *fmt,
                                    ...) __attribute__((format(printf, 3, 4)));
static enum MHD_Result reply_detail(struct MHD_Connection *conn, unsigned status, const char *fmt,
                                    ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return reply_json(conn, status, json_pack("{s:s}", "detail", msg), NULL);
}

static enum MHD_Result route_alive(struct request *rq)
{
    return reply_json(rq->conn, MHD_HTTP_OK, json_pack("{s:s}", "status", "ok"), NULL);
}

static enum MHD_Result route_server_info(struct request *rq)
{
    struct executor *ex = rq->srv->ex;
    double now = loop_now();
    return reply_json(rq->conn, MHD_HTTP_OK,
                      sysinfo_json(now - ex->started_at, now - ex->last_action_at), NULL);
}

/* Resumes the connection whose action finished after it was suspended. */
static void on_action_done(struct action_req *req)
{
    struct request *rq = req->owner;
    MHD_resume_connection(rq->conn);
    rq->srv->resumed = true;
}

/* POST /env: what the hidden export command's observation means for the caller. */
static enum MHD_Result reply_env(struct request *rq, json_t *result)
{
    const char *content = json_string_value(json_object_get(result, "content"));
    int code = action_run_exit_code(result);
    enum MHD_Result rc;
    if (code == 0)
        rc = reply_json(rq->conn, MHD_HTTP_OK, json_pack("{s:s}", "status", "ok"), NULL);
    else if (content && strcmp(content, ACTION_RUN_BUSY) == 0)
        rc = reply_detail(rq->conn, MHD_HTTP_CONFLICT,
                          "The shell is running a command: variables can be added once it has "
                          "finished (or after C-c).");
    else
        rc = reply_detail(rq->conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
                          "Failed to add environment variables: %s",
                          content && *content ? content : "the shell command failed");
    json_decref(result);
    return rc;
}

static enum MHD_Result reply_action(struct request *rq)
{
    json_t *result = rq->action->result;
    if (!result)
        return reply_detail(rq->conn, MHD_HTTP_SERVICE_UNAVAILABLE,
                            "The executor is shutting down.");
    rq->action->result = NULL;
    if (rq->env)
        return reply_env(rq, result);
    return reply_json(rq->conn, MHD_HTTP_OK, result, NULL);
}

/* Queues req for rq; replies at once when it finished at once. */
static enum MHD_Result submit(struct request *rq, struct action_req *req)
{
    struct executor *ex = rq->srv->ex;
    req->done = on_action_done;
    req->owner = rq;
    rq->action = req;
    if (action_submit(ex, req))
        return reply_action(rq);
    /* One action at a time: this connection sleeps until its result is there. */
    MHD_suspend_connection(rq->conn);
    return MHD_YES;
}

static enum MHD_Result route_execute_action(struct request *rq)
{
    struct executor *ex = rq->srv->ex;
    json_error_t jerr;
    struct buf err = BUF_INIT;
    json_t *body =
        json_loadb(rq->body.data ? rq->body.data : "", rq->body.len, JSON_ALLOW_NUL, &jerr);
    buf_free(&rq->body);
    if (!body)
        return reply_detail(rq->conn, MHD_HTTP_BAD_REQUEST, "Invalid JSON: %s (line %d, column %d)",
                            jerr.text, jerr.line, jerr.column);
    struct action_req *req = action_req_new(body, &err);
    json_decref(body);
    if (!req) {
        enum MHD_Result rc = reply_detail(rq->conn, MHD_HTTP_BAD_REQUEST, "%s",
                                          err.data ? err.data : "Invalid action");
        buf_free(&err);
        return rc;
    }
    ex->last_action_at = loop_now();
    return submit(rq, req);
}

/* POST /env {"K": "V", ...} (a paddock extension): OpenHands' add_env_vars. The keys are
 * upper-cased, exported in the live shell and persisted to ~/.bashrc. */
static enum MHD_Result route_env(struct request *rq)
{
    json_error_t jerr;
    struct env_var *vars = NULL;
    size_t n = 0;
    const char *key;
    json_t *value;
    struct buf cmd = BUF_INIT;
    struct action_req *req = NULL;
    enum MHD_Result rc;
    json_t *body =
        json_loadb(rq->body.data ? rq->body.data : "", rq->body.len, JSON_ALLOW_NUL, &jerr);
    buf_free(&rq->body);
    if (!body)
        return reply_detail(rq->conn, MHD_HTTP_BAD_REQUEST, "Invalid JSON: %s (line %d, column %d)",
                            jerr.text, jerr.line, jerr.column);
    if (!json_is_object(body)) {
        json_decref(body);
        return reply_detail(rq->conn, MHD_HTTP_BAD_REQUEST,
                            "Invalid request body: expected a JSON object");
    }
    json_object_foreach(body, key, value)
    {
        if (!env_name_valid(key)) {
            rc = reply_detail(rq->conn, MHD_HTTP_BAD_REQUEST, "Invalid variable name: %s", key);
            goto out;
        }
        if (!json_is_string(value)) {
            rc = reply_detail(rq->conn, MHD_HTTP_BAD_REQUEST,
                              "Invalid value for %s (expected a string)", key);
            goto out;
        }
        if (env_vars_add(&vars, &n, key, strlen(key), json_string_value(value),
                         json_string_length(value)) < 0) {
            rc = reply_detail(rq->conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "Out of memory");
            goto out;
        }
        if (env_name_reserved(vars[n - 1].name)) {
            rc =
                reply_detail(rq->conn, MHD_HTTP_BAD_REQUEST,
                             "Reserved variable name: %s (the executor sets it)", vars[n - 1].name);
            goto out;
        }
    }
    if (n == 0) {
        rc = reply_json(rq->conn, MHD_HTTP_OK, json_pack("{s:s}", "status", "ok"), NULL);
        goto out;
    }
    if (env_script_add(&cmd, vars, n) == 0)
        req = action_run_internal_new(cmd.data, EXECUTOR_ENV_TIMEOUT);
    buf_free(&cmd);
    if (!req) {
        rc = reply_detail(rq->conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "Out of memory");
        goto out;
    }
    rq->env = true;
    rc = submit(rq, req);
out:
    env_vars_free(vars, n);
    json_decref(body);
    return rc;
}

static const struct route routes[] = {
    {"/alive", MHD_HTTP_METHOD_GET, false, route_alive},
    {"/server_info", MHD_HTTP_METHOD_GET, false, route_server_info},
    {"/execute_action", MHD_HTTP_METHOD_POST, true, route_execute_action},
    {"/env", MHD_HTTP_METHOD_POST, true, route_env},
};

static void route_request(struct request *rq, const char *url, const char *method)
{
    bool path_known = false;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        if (strcmp(routes[i].path, url) != 0)
            continue;
        path_known = true;
        rq->allow = routes[i].method;
        if (strcmp(routes[i].method, method) == 0) {
            rq->route = &routes[i];
            return;
        }
    }
    rq->status = path_known ? MHD_HTTP_METHOD_NOT_ALLOWED : MHD_HTTP_NOT_FOUND;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    struct request *rq = *con_cls;
    (void)version;
    if (!rq) {
        rq = calloc(1, sizeof *rq);
        if (!rq)
            return MHD_NO;
        rq->srv = cls;
        rq->conn = conn;
        *con_cls = rq;
        route_request(rq, url, method);
        if (rq->route && rq->route->body) {
            const char *cl =
                MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
            if (cl && strtoull(cl, NULL, 10) > EXECUTOR_MAX_BODY) {
                /* Answer before the body is read; MHD then closes the connection. */
                rq->too_large = true;
                return reply_detail(conn, MHD_HTTP_CONTENT_TOO_LARGE,
                                    "Request body too large (limit %u bytes)", EXECUTOR_MAX_BODY);
            }
        }
        return MHD_YES;
    }
    if (*upload_data_size) {
        /* Chunked bodies have no length up front: count, and stop keeping past the limit. */
        if (rq->route && rq->route->body && !rq->too_large && !rq->no_memory) {
            if (rq->body.len + *upload_data_size > EXECUTOR_MAX_BODY) {
                rq->too_large = true;
                buf_free(&rq->body);
            } else if (buf_append(&rq->body, upload_data, *upload_data_size) < 0) {
                rq->no_memory = true;
                buf_free(&rq->body);
            }
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (rq->action)
        return reply_action(rq);
    if (rq->too_large)
        return reply_detail(conn, MHD_HTTP_CONTENT_TOO_LARGE,
                            "Request body too large (limit %u bytes)", EXECUTOR_MAX_BODY);
    if (rq->no_memory)
        return reply_detail(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "Out of memory");
    if (rq->status == MHD_HTTP_NOT_FOUND)
        return reply_detail(conn, MHD_HTTP_NOT_FOUND, "Not Found");
    if (rq->status == MHD_HTTP_METHOD_NOT_ALLOWED)
        return reply_json(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
                          json_pack("{s:s}", "detail", "Method Not Allowed"), rq->allow);
    return rq->route->fn(rq);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct request *rq = *con_cls;
    (void)cls;
    (void)conn;
    (void)toe;
    if (!rq)
        return;
    buf_free(&rq->body);
    action_req_free(rq->action);
    free(rq);
    *con_cls = NULL;
}

static void on_mhd_fd(struct loop_watch *w, uint32_t events)
{
    struct server *srv = LOOP_CONTAINER_OF(w, struct server, watch);
    (void)events;
    MHD_run(srv->daemon);
}

int server_listen_unix(const char *path, struct buf *err)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    char tmp[sizeof addr.sun_path];
    if (strlen(path) >= sizeof addr.sun_path) {
        buf_printf(err, "socket path too long (max %zu bytes): %s", sizeof addr.sun_path - 1, path);
        return -1;
    }
    /* Bind a temporary name, then rename: clients never see a socket that does not listen. */
    int n = snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    const char *bind_path = n > 0 && (size_t)n < sizeof tmp ? tmp : path;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        buf_printf(err, "socket: %s", strerror(errno));
        return -1;
    }
    unlink(bind_path);
    if (bind_path == path)
        unlink(path);
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", bind_path);
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(fd, 64) < 0) {
        buf_printf(err, "cannot listen on %s: %s", bind_path, strerror(errno));
        close(fd);
        return -1;
    }
    chmod(bind_path, 0660);
    /* The engine made the socket's directory: let its owner (not the agent) connect. */
    char dir[sizeof addr.sun_path];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = '\0';
    struct stat st;
    if (geteuid() == 0 && stat(slash ? dir : ".", &st) == 0 && st.st_uid != 0) {
        int ignored = chown(bind_path, st.st_uid, st.st_gid);
        (void)ignored;
    }
    if (bind_path != path && rename(bind_path, path) < 0) {
        buf_printf(err, "cannot rename %s to %s: %s", bind_path, path, strerror(errno));
        unlink(bind_path);
        close(fd);
        return -1;
    }
    return fd;
}

struct server *server_start(struct executor *ex, int listen_fd, struct buf *err)
{
    struct server *srv = calloc(1, sizeof *srv);
    if (!srv) {
        close(listen_fd);
        buf_printf(err, "out of memory");
        return NULL;
    }
    srv->ex = ex;
    srv->daemon =
        MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL, on_request, srv,
                         MHD_OPTION_LISTEN_SOCKET, listen_fd, MHD_OPTION_NOTIFY_COMPLETED,
                         on_completed, srv, MHD_OPTION_CONNECTION_TIMEOUT, 0u, MHD_OPTION_END);
    if (!srv->daemon) {
        buf_printf(err, "cannot start the HTTP server");
        close(listen_fd);
        free(srv);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_EPOLL_FD);
    srv->watch.fd = info ? info->epoll_fd : -1;
    srv->watch.fn = on_mhd_fd;
    if (srv->watch.fd < 0 || loop_add(ex->loop, &srv->watch, EPOLLIN) < 0) {
        buf_printf(err, "cannot watch the HTTP server");
        MHD_stop_daemon(srv->daemon);
        free(srv);
        return NULL;
    }
    return srv;
}

void server_stop(struct server *srv)
{
    if (!srv)
        return;
    loop_del(srv->ex->loop, &srv->watch);
    /* Requests that were resumed at shutdown get their replies written if they can. */
    srv->resumed = false;
    MHD_run(srv->daemon);
    MHD_stop_daemon(srv->daemon);
    free(srv);
}

int server_timeout_ms(struct server *srv)
{
    MHD_UNSIGNED_LONG_LONG ms;
    if (srv && srv->resumed)
        return 0;
    if (!srv || MHD_get_timeout(srv->daemon, &ms) != MHD_YES)
        return -1;
    return ms > INT_MAX ? INT_MAX : (int)ms;
}

void server_run_due(struct server *srv)
{
    /* Bounded: if MHD still has work, the next loop turn polls with timeout 0. */
    for (int i = 0; i < 8 && srv && server_timeout_ms(srv) == 0; i++) {
        srv->resumed = false;
        MHD_run(srv->daemon);
    }
}
