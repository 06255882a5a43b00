#include "server.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "endpoint.h"
#include "executor.h"
#include "jalloc.h"

struct listener {
    struct server *srv;
    struct MHD_Daemon *daemon;
    struct evloop_watch watch;
};

struct server {
    struct executor *ex;
    struct listener listeners[SERVER_MAX_LISTENERS];
    size_t n;
    /* A connection was resumed. In external-loop mode MHD has no wakeup fd for that (it
     * drops its ITC), so the loop must run MHD before it sleeps again. */
    bool resumed;
    bool stopping;
    struct request *requests; /* every live request, for shutdown */
};

/* One line per endpoint. OPEN: no API key; BODY: the body is collected for finish; STREAM:
 * the body goes to data as it arrives. */
static const struct route routes[] = {
    {"/alive", MHD_HTTP_METHOD_GET, ENDPOINT_OPEN, NULL, NULL, endpoint_alive},
    {"/server_info", MHD_HTTP_METHOD_GET, ENDPOINT_OPEN, NULL, NULL, endpoint_server_info},
    {"/execute_action", MHD_HTTP_METHOD_POST, ENDPOINT_BODY, NULL, NULL, endpoint_execute},
    {"/env", MHD_HTTP_METHOD_POST, ENDPOINT_BODY, NULL, NULL, endpoint_env},
    {"/list_files", MHD_HTTP_METHOD_POST, ENDPOINT_BODY, NULL, NULL, endpoint_list},
    {"/upload_file", MHD_HTTP_METHOD_POST, ENDPOINT_STREAM, endpoint_upload_start,
     endpoint_upload_data, endpoint_upload},
    {"/download_files", MHD_HTTP_METHOD_GET, 0, NULL, NULL, endpoint_download},
    {"/browse", MHD_HTTP_METHOD_POST, ENDPOINT_BODY, NULL, NULL, endpoint_browse},
};

/* ---- replies and the request API (endpoint.h) ------------------------------------------ */

static enum MHD_Result reply_text(struct request *rq, unsigned status, char *text,
                                  const char *allow)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    if (allow)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
    return endpoint_reply_response(rq, status, resp);
}

static enum MHD_Result reply_json_allow(struct request *rq, unsigned status, json_t *body,
                                        const char *allow)
{
    char *text = body ? jalloc_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    if (!text) {
        static const char fallback[] =
            "{\"detail\":\"An unexpected error occurred. Please try again later.\"}";
        status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        text = strdup(fallback);
        if (!text)
            return MHD_NO;
    }
    return reply_text(rq, status, text, allow);
}

enum MHD_Result endpoint_reply_response(struct request *rq, unsigned status,
                                        struct MHD_Response *resp)
{
    enum MHD_Result rc = MHD_queue_response(rq->conn, status, resp);
    MHD_destroy_response(resp);
    if (rc == MHD_YES) {
        rq->replied = true;
        rq->reply_status = status;
    }
    return rc;
}

enum MHD_Result endpoint_reply_json(struct request *rq, unsigned status, json_t *body)
{
    return reply_json_allow(rq, status, body, NULL);
}

enum MHD_Result endpoint_reply_detail(struct request *rq, unsigned status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return endpoint_reply_json(rq, status, json_pack("{s:s}", "detail", msg));
}

void endpoint_suspend(struct request *rq)
{
    if (rq->suspended)
        return;
    rq->suspended = true;
    MHD_suspend_connection(rq->conn);
}

void endpoint_resume(struct request *rq)
{
    if (!rq->suspended)
        return;
    rq->suspended = false;
    MHD_resume_connection(rq->conn);
    rq->srv->resumed = true;
}

bool endpoint_stopping(const struct request *rq)
{
    return rq->srv->stopping;
}

enum MHD_Result endpoint_reply_stopping(struct request *rq)
{
    return endpoint_reply_detail(rq, MHD_HTTP_SERVICE_UNAVAILABLE,
                                 "The executor is shutting down.");
}

const char *endpoint_query(struct request *rq, const char *key)
{
    return MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, key);
}

const char *endpoint_header(struct request *rq, const char *name)
{
    return MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, name);
}

json_t *endpoint_body_object(struct request *rq, enum MHD_Result *rc)
{
    json_error_t jerr;
    json_t *body =
        json_loadb(rq->body.data ? rq->body.data : "", rq->body.len, JSON_ALLOW_NUL, &jerr);
    buf_free(&rq->body);
    if (!body) {
        *rc =
            endpoint_reply_detail(rq, MHD_HTTP_BAD_REQUEST, "Invalid JSON: %s (line %d, column %d)",
                                  jerr.text, jerr.line, jerr.column);
        return NULL;
    }
    if (!json_is_object(body)) {
        json_decref(body);
        *rc = endpoint_reply_detail(rq, MHD_HTTP_BAD_REQUEST,
                                    "Invalid request body: expected a JSON object");
        return NULL;
    }
    return body;
}

static double server_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- routing ---------------------------------------------------------------------------- */

static void route_request(struct request *rq, const char *url, const char *method)
{
    bool path_known = false, open = false;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        if (strcmp(routes[i].path, url) != 0)
            continue;
        path_known = true;
        open = routes[i].flags & ENDPOINT_OPEN;
        rq->allow = routes[i].method;
        if (strcmp(routes[i].method, method) == 0) {
            rq->route = &routes[i];
            break;
        }
    }
    /* As OpenHands' middleware: every path but the open ones needs the key, unknown paths
     * included (so a client without the key learns nothing about the routes). */
    if (!open && !auth_key_matches(rq->ex->api_key, endpoint_header(rq, AUTH_HEADER))) {
        rq->route = NULL;
        rq->status = MHD_HTTP_FORBIDDEN;
    } else if (!rq->route) {
        rq->status = path_known ? MHD_HTTP_METHOD_NOT_ALLOWED : MHD_HTTP_NOT_FOUND;
    }
}

static enum MHD_Result reply_too_large(struct request *rq)
{
    return endpoint_reply_detail(rq, MHD_HTTP_CONTENT_TOO_LARGE,
                                 "Request body too large (limit %u bytes)", EXECUTOR_MAX_BODY);
}

/* The first call: headers are in, no body yet. */
static enum MHD_Result on_headers(struct request *rq)
{
    if (rq->status == MHD_HTTP_FORBIDDEN) /* before any of the body is read */
        return endpoint_reply_detail(rq, MHD_HTTP_FORBIDDEN, "Invalid API Key");
    if (!rq->route)
        return MHD_YES;
    if (rq->route->flags & (ENDPOINT_BODY | ENDPOINT_STREAM)) {
        const char *cl = endpoint_header(rq, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > EXECUTOR_MAX_BODY) {
            /* Answer before the body is read; MHD then closes the connection. */
            rq->too_large = true;
            return reply_too_large(rq);
        }
    }
    return rq->route->start ? rq->route->start(rq) : MHD_YES;
}

static enum MHD_Result on_body(struct request *rq, const char *data, size_t n)
{
    if (!rq->route || rq->replied || rq->too_large || rq->no_memory)
        return MHD_YES; /* dropped */
    if (!(rq->route->flags & (ENDPOINT_BODY | ENDPOINT_STREAM)))
        return MHD_YES;
    /* Chunked bodies have no length up front: count, and stop keeping past the limit. */
    rq->received += n;
    if (rq->received > EXECUTOR_MAX_BODY) {
        rq->too_large = true;
        buf_free(&rq->body);
        return MHD_YES;
    }
    if (rq->route->flags & ENDPOINT_STREAM)
        return rq->route->data(rq, data, n) < 0 ? MHD_NO : MHD_YES;
    if (buf_append(&rq->body, data, n) < 0) {
        rq->no_memory = true;
        buf_free(&rq->body);
    }
    return MHD_YES;
}

static enum MHD_Result on_complete(struct request *rq)
{
    if (rq->too_large)
        return reply_too_large(rq);
    if (rq->no_memory)
        return endpoint_reply_detail(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "Out of memory");
    if (rq->status == MHD_HTTP_NOT_FOUND)
        return endpoint_reply_detail(rq, MHD_HTTP_NOT_FOUND, "Not Found");
    if (rq->status == MHD_HTTP_METHOD_NOT_ALLOWED)
        return reply_json_allow(rq, MHD_HTTP_METHOD_NOT_ALLOWED,
                                json_pack("{s:s}", "detail", "Method Not Allowed"), rq->allow);
    return rq->route->finish(rq);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    struct server *srv = cls;
    struct request *rq = *con_cls;
    (void)version;
    if (!rq) {
        rq = calloc(1, sizeof *rq);
        if (!rq)
            return MHD_NO;
        rq->srv = srv;
        rq->ex = srv->ex;
        rq->conn = conn;
        rq->next = srv->requests;
        if (srv->requests)
            srv->requests->prev = rq;
        srv->requests = rq;
        *con_cls = rq;
        rq->started_ms = server_now_ms();
        snprintf(rq->what, sizeof rq->what, "%.7s %.64s", method, url);
        /* The URL as libmicrohttpd decoded it (%0a is a newline): one log line stays one. */
        for (char *w = rq->what; *w; w++)
            if ((unsigned char)*w < 0x20 || *w == 0x7f)
                *w = ' ';
        route_request(rq, url, method);
        return on_headers(rq);
    }
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        return on_body(rq, upload_data, n);
    }
    return on_complete(rq);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct server *srv = cls;
    struct request *rq = *con_cls;
    (void)conn;
    (void)toe;
    if (!rq)
        return;
    /* No access log: each action has its line (action_log), so do the file endpoints; a
     * request refused or failed is a warning on stderr. The probes (/alive, /server_info)
     * would drown the rest. */
    unsigned status = rq->reply_status ? rq->reply_status : 499u;
    bool execute = rq->route && rq->route->finish == endpoint_execute;
    if (!(rq->route && (rq->route->flags & ENDPOINT_OPEN)) && !rq->ex->quiet) {
        double ms = server_now_ms() - rq->started_ms;
        if (status >= 400)
            reqlog_line(&rq->ex->log, STDERR_FILENO, true,
                        "paddock-executor: warning: %s answered %u, %.0f ms", rq->what, status, ms);
        else if (!execute)
            reqlog_line(&rq->ex->log, STDOUT_FILENO, false, "paddock-executor: %s %u, %.0f ms",
                        rq->what, status, ms);
    }
    if (rq->prev)
        rq->prev->next = rq->next;
    else
        srv->requests = rq->next;
    if (rq->next)
        rq->next->prev = rq->prev;
    if (rq->state_free)
        rq->state_free(rq->state);
    buf_free(&rq->body);
    free(rq);
    *con_cls = NULL;
}

/* ---- the daemons on the loop ------------------------------------------------------------ */

static void on_mhd_fd(struct evloop_watch *w, uint32_t events)
{
    struct listener *l = EVLOOP_CONTAINER_OF(w, struct listener, watch);
    (void)events;
    MHD_run(l->daemon);
}

static void run_all(struct server *srv)
{
    srv->resumed = false;
    for (size_t i = 0; i < srv->n; i++)
        MHD_run(srv->listeners[i].daemon);
}

static void stop_listeners(struct server *srv)
{
    for (size_t i = 0; i < srv->n; i++) {
        struct listener *l = &srv->listeners[i];
        if (l->watch.fn)
            evloop_del(srv->ex->loop, &l->watch);
        MHD_stop_daemon(l->daemon);
    }
    srv->n = 0;
}

struct server *server_start(struct executor *ex, const int *listen_fds, size_t n,
                            unsigned connection_timeout, struct buf *err)
{
    struct server *srv = calloc(1, sizeof *srv);
    size_t i = 0;
    if (!srv || n == 0 || n > SERVER_MAX_LISTENERS) {
        buf_printf(err, srv ? "no socket to serve on" : "out of memory");
        goto fail;
    }
    srv->ex = ex;
    for (; i < n; i++) {
        struct listener *l = &srv->listeners[i];
        l->srv = srv;
        l->daemon = MHD_start_daemon(
            MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL, on_request, srv,
            MHD_OPTION_LISTEN_SOCKET, listen_fds[i], MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout, MHD_OPTION_END);
        if (!l->daemon) {
            buf_printf(err, "cannot start the HTTP server");
            goto fail;
        }
        srv->n++;
        const union MHD_DaemonInfo *info = MHD_get_daemon_info(l->daemon, MHD_DAEMON_INFO_EPOLL_FD);
        l->watch.fd = info ? info->epoll_fd : -1;
        if (l->watch.fd < 0 || evloop_add(ex->loop, &l->watch, EPOLLIN) < 0) {
            buf_printf(err, "cannot watch the HTTP server");
            i++; /* its socket is the daemon's now */
            goto fail;
        }
        l->watch.fn = on_mhd_fd;
    }
    return srv;
fail:
    if (srv)
        stop_listeners(srv);
    for (; i < n; i++)
        close(listen_fds[i]);
    free(srv);
    return NULL;
}

void server_stop(struct server *srv)
{
    if (!srv)
        return;
    /* Requests still waiting are resumed; their handlers see endpoint_stopping() and reply
     * (503), and those replies are written if they can be. */
    srv->stopping = true;
    for (struct request *rq = srv->requests; rq; rq = rq->next)
        endpoint_resume(rq);
    for (size_t i = 0; i < srv->n; i++) {
        evloop_del(srv->ex->loop, &srv->listeners[i].watch);
        srv->listeners[i].watch.fn = NULL;
    }
    run_all(srv);
    stop_listeners(srv);
    free(srv);
}

int server_timeout_ms(struct server *srv)
{
    if (!srv)
        return -1;
    if (srv->resumed)
        return 0;
    long long best = -1;
    for (size_t i = 0; i < srv->n; i++) {
        MHD_UNSIGNED_LONG_LONG ms;
        if (MHD_get_timeout(srv->listeners[i].daemon, &ms) == MHD_YES &&
            (best < 0 || (long long)ms < best))
            best = ms > LLONG_MAX ? LLONG_MAX : (long long)ms;
    }
    return best > INT_MAX ? INT_MAX : (int)best;
}

void server_run_due(struct server *srv)
{
    /* Bounded: if MHD still has work, the next loop turn polls with timeout 0. */
    for (int i = 0; i < 8 && srv && server_timeout_ms(srv) == 0; i++)
        run_all(srv);
}
