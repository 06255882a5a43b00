/* HTTP plumbing for the engine API. libmicrohttpd runs in external-epoll mode: its epoll fd
 * sits in the engine loop, and slow work (Docker, executors) suspends the connection until the
 * reply is ready, so nothing blocks and nothing polls. */
#include "engine/api.h"

#include "engine/api_gate.h"

#include "common/buf.h"
#include "engine/base/loop.h"
#include "engine/base/util.h"
#include "engine/engine_internal.h"
#include "engine/events.h"
#include "engine/listen.h"
#include "engine/session.h"

#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define API_MAX_BODY (64u * 1024 * 1024)
#define API_MAX_PARAMS 4
#define API_SUB_MAX_BUFFER (4u * 1024 * 1024)

/* A response that stays open and is written to as things happen: the events feed and follow
 * streams (logs). */
struct api_stream {
    struct api *api;
    struct MHD_Connection *conn;
    struct buf out;
    bool suspended;
    bool closing;
    bool events;                /* receives what is published to the engine's events */
    void (*on_close)(void *ud); /* the client went away or the engine stops */
    void *ud;
    struct api_stream *next;
};

struct api {
    struct engine *eng;
    struct MHD_Daemon *mhd;
    int epfd;
    struct api_stream *subs; /* every open stream */
    struct loop_timer *ping_timer;
    /* A connection was resumed outside MHD_run: in external-epoll mode nothing wakes MHD,
     * so the loop's prepare hook runs it once before sleeping. */
    bool run_pending;
    /* The optional TCP listener is a server of its own (api_listen_tcp) with the same routes;
     * its requests need credentials (listen.c), and events reach its subscribers too. */
    bool tcp;
    bool tls;       /* that listener speaks TLS (api_tls) */
    bool client_ca; /* and asks for client certificates: a verified one is the operator's */
    /* The operator's socket (api_listen_operator): the same routes, and the operator's. */
    bool operator;
    struct api *peer;
    struct api_gate *gate;
    struct api_gate_limits lim;
    struct api_req *receiving; /* requests whose body is still arriving */
    /* Kept-alive connections waiting for their next request, the longest waiting first. */
    struct api_conn *idle_first, *idle_last;
    struct loop_timer *body_timer;
    /* api_free runs MHD once more to send the last replies: a request that arrives then finds
     * the actions and sessions already gone, so it gets a 503. */
    bool closing;
};

/* A connection, which may carry more than one request (api_queue). */
struct api_conn {
    int fd;
    unsigned long requests; /* begun on it: past the first, the gate never saw the head */
    bool idle;              /* its last reply is sent and the next head has not arrived */
    double idle_since;      /* loop_now_ms() when that reply completed */
    struct api_conn *prev, *next;
};

struct api_req {
    struct api *api;
    struct MHD_Connection *conn;
    char *method;
    char *url;
    char *params[API_MAX_PARAMS];
    struct buf body;
    bool nul_in_target; /* the raw target held %00, which MHD's decoding cuts at */
    bool dispatched;
    /* The body deadline (api_on_body_sweep): when the last body bytes came, and whether a
     * reply was written straight to the socket because MHD cannot queue one mid-body. */
    double last_data;
    bool raw_replied;
    double raw_at;
    struct api_req *prev, *next; /* in api->receiving while the body arrives */
    bool suspended;
    struct MHD_Response *resp;
    unsigned status;
    struct api_conn *link; /* its connection's record; NULL without one (one request) */
    bool keep;             /* the reply leaves the connection open for the client's next request */
};

struct engine *api_req_engine(struct api_req *r)
{
    return r->api->eng;
}

const char *api_req_param(struct api_req *r, int i)
{
    return i >= 0 && i < API_MAX_PARAMS ? r->params[i] : NULL;
}

const char *api_req_query(struct api_req *r, const char *key)
{
    return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
}

int api_query_number(struct api_req *r, const char *key, double lo, double hi, double dflt,
                     double *out)
{
    const char *v = api_req_query(r, key);
    char *end = NULL;
    *out = v ? strtod(v, &end) : dflt;
    if (v && (!*v || *end || *out < lo || *out > hi)) {
        api_reply_error(r, ERR_BAD_REQUEST, "\"%s\" must be a number from %g to %g", key, lo, hi);
        return -1;
    }
    return 0;
}

const char *api_req_body(struct api_req *r, size_t *len)
{
    *len = r->body.len;
    return r->body.data ? r->body.data : "";
}

json_t *api_req_json(struct api_req *r, int allow_empty)
{
    size_t i = 0, len;
    const char *body = api_req_body(r, &len);
    while (i < len && (body[i] == ' ' || body[i] == '\n' || body[i] == '\r' || body[i] == '\t'))
        i++;
    if (i == len) {
        if (allow_empty)
            return json_object();
        api_reply_error(r, ERR_INVALID_JSON, "request body is empty; expected a JSON object");
        return NULL;
    }
    json_error_t e;
    json_t *j = json_loadb(body, len, JSON_REJECT_DUPLICATES, &e);
    if (!j) {
        api_reply_error(r, ERR_INVALID_JSON, "malformed JSON at line %d column %d: %s", e.line,
                        e.column, e.text);
        return NULL;
    }
    if (!json_is_object(j)) {
        json_decref(j);
        api_reply_error(r, ERR_INVALID_JSON, "request body must be a JSON object");
        return NULL;
    }
    return j;
}

static void api_set_response(struct api_req *r, unsigned status, struct MHD_Response *resp)
{
    if (r->resp || !resp) { /* a second reply is a bug in a handler; keep the first */
        if (resp)
            MHD_destroy_response(resp);
        return;
    }
    r->resp = resp;
    r->status = status;
    if (r->suspended) {
        r->suspended = false;
        MHD_resume_connection(r->conn);
        r->api->run_pending = true;
    }
}

void api_reply_raw(struct api_req *r, unsigned status, const char *body, size_t len,
                   const char *content_type)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (resp)
        MHD_add_response_header(resp, "Content-Type", content_type);
    api_set_response(r, status, resp);
}

void api_reply_json(struct api_req *r, unsigned status, json_t *j)
{
    char *s = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    if (!s) {
        static const char oom[] =
            "{\"error\":{\"code\":\"internal\",\"message\":\"out of memory\"}}";
        api_reply_raw(r, 500, oom, sizeof(oom) - 1, "application/json");
        return;
    }
    size_t n = strlen(s);
    struct MHD_Response *resp = MHD_create_response_from_buffer(n, s, MHD_RESPMEM_MUST_FREE);
    if (resp)
        MHD_add_response_header(resp, "Content-Type", "application/json");
    else
        free(s);
    api_set_response(r, status, resp);
}

void api_reply_error(struct api_req *r, enum err_code e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = util_vstrdupf(fmt, ap);
    va_end(ap);
    if (!err_name(e))
        e = ERR_INTERNAL; /* ERR_NONE is no error to reply with */
    api_reply_json(
        r, err_status(e),
        json_pack("{s:{s:s,s:s}}", "error", "code", err_name(e), "message", msg ? msg : "error"));
    free(msg);
}

/* Match "/v1/sessions/abc/actions" against "/v1/sessions/ * /actions" (without spaces). */
static int api_match(const char *pattern, const char *path, char **params)
{
    int np = 0;
    const char *p = pattern, *u = path;
    while (*p && *u) {
        if (*p == '*') {
            const char *end = strchr(u, '/');
            size_t n = end ? (size_t)(end - u) : strlen(u);
            if (n == 0 || np >= API_MAX_PARAMS)
                return -1;
            params[np++] = strndup(u, n);
            u += n;
            p++;
            continue;
        }
        if (*p != *u)
            return -1;
        p++;
        u++;
    }
    return (*p == '\0' && *u == '\0') ? np : -1;
}

static void api_free_params(struct api_req *r)
{
    for (int i = 0; i < API_MAX_PARAMS; i++) {
        free(r->params[i]);
        r->params[i] = NULL;
    }
}

/* A session path's first parameter names the session by its id, its name or a unique id
 * prefix: the handlers see the id. false after replying when the prefix is ambiguous; a
 * reference that matches nothing stays as it is, for the handler's not_found. */
static bool api_session_param(struct api_req *r)
{
    char *id = NULL, *err = NULL;
    json_t *candidates = NULL;
    int rc = session_ref_resolve(r->api->eng, r->params[0], &id, &candidates, &err);
    if (rc == 0) {
        free(r->params[0]);
        r->params[0] = id;
    } else if (rc < 0 && candidates) {
        api_reply_json(r, err_status(ERR_AMBIGUOUS),
                       json_pack("{s:{s:s,s:s,s:o}}", "error", "code", err_name(ERR_AMBIGUOUS),
                                 "message", err ? err : "ambiguous", "candidates", candidates));
    } else if (rc < 0) {
        api_reply_error(r, ERR_INTERNAL, "out of memory");
    }
    free(err);
    return rc >= 0;
}

static void api_dispatch(struct api_req *r)
{
    bool path_known = false;
    for (size_t i = 0; i < api_routes_count; i++) {
        const struct api_route *rt = &api_routes[i];
        api_free_params(r);
        if (api_match(rt->pattern, r->url, r->params) < 0)
            continue;
        path_known = true;
        if (strcmp(rt->method, r->method) == 0) {
            if ((rt->flags & API_ROUTE_OPERATOR) && !api_req_is_operator(r)) {
                api_free_params(r);
                api_reply_error(r, ERR_FORBIDDEN,
                                "%s %s is the operator's: use the operator socket %s/%s (the "
                                "paddock CLI and dashboard do), or over TLS a client certificate "
                                "of the listener's --tls-client-ca; the agent socket and a "
                                "token cannot",
                                r->method, r->url, r->api->eng->state_dir, API_OPERATOR_SOCKET);
                return;
            }
            if (strncmp(rt->pattern, "/v1/sessions/*", 14) == 0 && !api_session_param(r))
                return;
            rt->fn(r);
            return;
        }
    }
    api_free_params(r);
    if (path_known)
        api_reply_error(r, ERR_METHOD_NOT_ALLOWED, "%s is not allowed on %s", r->method, r->url);
    else
        api_reply_error(r, ERR_NOT_FOUND, "no such endpoint: %s", r->url);
}

static struct api_conn *api_conn_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

static enum MHD_Result api_queue(struct api_req *r)
{
    /* A reply that is not an error keeps the connection for the client's next request: a new
     * connection per action was an eighth of an action's cost on the unix socket, and a TLS
     * handshake over TCP. The next head is not the gate's to check (api_gate.c), but it has
     * the gate's deadline all the same (api_on_body_sweep), credentials are checked per
     * request (api_on_access), and only its malformed-head errors are libmicrohttpd's own. An
     * error closes: a client that went wrong starts again through the gate. */
    bool upgrade = r->status == MHD_HTTP_SWITCHING_PROTOCOLS; /* the terminal's from now on */
    r->keep = !upgrade && !r->api->closing && r->status < 400 && r->link;
    if (!upgrade && !r->keep)
        MHD_add_response_header(r->resp, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result ret = MHD_queue_response(r->conn, r->status, r->resp);
    MHD_destroy_response(r->resp);
    r->resp = NULL;
    return ret;
}

static void api_receiving_del(struct api_req *r)
{
    struct api *a = r->api;
    if (!r->prev && a->receiving != r)
        return;
    if (r->prev)
        r->prev->next = r->next;
    else
        a->receiving = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->prev = r->next = NULL;
}

static int api_req_fd(struct api_req *r)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    return ci ? ci->connect_fd : -1;
}

/* A reply while MHD still reads the body, which MHD cannot send: written to the socket
 * directly, and the connection shut down for MHD to close it (how: api_on_body_sweep). */
static void api_reply_mid_body(struct api_req *r, enum err_code e, const char *msg)
{
    int fd = api_req_fd(r);
    r->raw_replied = true;
    r->raw_at = loop_now_ms();
    buf_free(&r->body);
    if (fd < 0)
        return;
    api_gate_write_error(fd, e, msg);
    shutdown(fd, e == ERR_REQUEST_TIMEOUT ? SHUT_RDWR : SHUT_WR);
    r->api->run_pending = true;
}

static void api_idle_del(struct api *a, struct api_conn *c)
{
    if (!c->idle)
        return;
    if (c->prev)
        c->prev->next = c->next;
    else
        a->idle_first = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        a->idle_last = c->prev;
    c->prev = c->next = NULL;
    c->idle = false;
}

static void api_idle_add(struct api *a, struct api_conn *c)
{
    api_idle_del(a, c);
    c->idle = true;
    c->idle_since = loop_now_ms();
    c->prev = a->idle_last;
    if (a->idle_last)
        a->idle_last->next = c;
    else
        a->idle_first = c;
    a->idle_last = c;
}

/* Bodies that stall get a 408; a refused body still being sent is cut after a grace; a
 * kept-alive connection whose next head is not complete within the head deadline is closed
 * (the gate's bound for a first head, counted from the last reply). */
static void api_on_body_sweep(void *ud)
{
    struct api *a = ud;
    double now = loop_now_ms();
    while (a->idle_first && now - a->idle_first->idle_since >= (double)a->lim.head_ms) {
        struct api_conn *c = a->idle_first;
        api_idle_del(a, c);
        shutdown(c->fd, SHUT_RDWR); /* libmicrohttpd reads the end and closes it */
        a->run_pending = true;
    }
    for (struct api_req *r = a->receiving; r; r = r->next) {
        if (r->raw_replied) {
            int fd = api_req_fd(r);
            if (now - r->raw_at > 5000 && fd >= 0) {
                shutdown(fd, SHUT_RDWR);
                a->run_pending = true;
            }
        } else if (now - r->last_data >= (double)a->lim.body_idle_ms) {
            char *m = util_strdupf("no body bytes for %g s (PADDOCK_BODY_TIMEOUT); the request "
                                   "was not run",
                                   (double)a->lim.body_idle_ms / 1000);
            api_reply_mid_body(r, ERR_REQUEST_TIMEOUT, m ? m : "request body timeout");
            free(m);
        }
    }
    a->body_timer = loop_timer_add(a->eng->loop, 250, api_on_body_sweep, a);
}

/* Before MHD decodes the target: the raw one shows an encoded NUL that decoding would cut,
 * and a control character that decoding would make look encoded. */
static char api_nul_marker, api_ctl_marker;

static void *api_on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    (void)cls;
    (void)conn;
    for (const char *p = uri ? strchr(uri, '%') : NULL; p; p = strchr(p + 1, '%'))
        if (p[1] == '0' && p[2] == '0')
            return &api_nul_marker;
    for (const char *p = uri; p && *p; p++)
        if ((unsigned char)*p <= 0x20 || *p == 0x7f)
            return &api_ctl_marker;
    return NULL;
}

/* A later request's head as libmicrohttpd parsed it, rebuilt for the gate's check. */
struct api_head {
    char p[API_GATE_HEAD_MAX + 2];
    size_t n;
    bool over;
};

static void api_head_put(struct api_head *h, const char *p, size_t n)
{
    if (h->over || n > sizeof(h->p) - h->n) {
        h->over = true;
        return;
    }
    memcpy(h->p + h->n, p, n);
    h->n += n;
}

static enum MHD_Result api_head_add(void *cls, enum MHD_ValueKind kind, const char *key,
                                    size_t key_size, const char *value, size_t value_size)
{
    struct api_head *h = cls;
    (void)kind;
    api_head_put(h, key, key_size);
    api_head_put(h, ": ", 2);
    api_head_put(h, value ? value : "", value ? value_size : 0);
    api_head_put(h, "\r\n", 2);
    return h->over ? MHD_NO : MHD_YES;
}

/* The head of a later request on a kept connection, which went to libmicrohttpd without the
 * gate: checked as the gate checks a first one (api_gate_check_head), from its parsed form
 * (the target stands apart: libmicrohttpd has decoded it). ERR_NONE, or why not (msg). */
static enum err_code api_check_later_head(struct MHD_Connection *conn, const char *url,
                                          const char *method, const char *version, bool ctl,
                                          char *msg, size_t size)
{
    if (ctl) {
        snprintf(msg, size, "the request target holds a control character");
        return ERR_BAD_REQUEST;
    }
    if (!url || url[0] != '/') {
        snprintf(msg, size, "the request line is malformed: it must be METHOD /path HTTP/1.1");
        return ERR_BAD_REQUEST;
    }
    static struct api_head h; /* 16 KiB: one loop thread, not on its stack */
    h.n = 0;
    h.over = false;
    api_head_put(&h, method ? method : "", method ? strlen(method) : 0);
    api_head_put(&h, " / ", 3);
    api_head_put(&h, version ? version : "", version ? strlen(version) : 0);
    api_head_put(&h, "\r\n", 2);
    MHD_get_connection_values_n(conn, MHD_HEADER_KIND, api_head_add, &h);
    api_head_put(&h, "\r\n", 2);
    if (h.over || h.n > API_GATE_HEAD_MAX) {
        snprintf(msg, size, "the request line and headers exceed %d bytes", API_GATE_HEAD_MAX);
        return ERR_HEADERS_TOO_LARGE;
    }
    return api_gate_check_head(h.p, h.n, msg, size);
}

static enum MHD_Result api_on_access(void *cls, struct MHD_Connection *conn, const char *url,
                                     const char *method, const char *version,
                                     const char *upload_data, size_t *upload_data_size,
                                     void **con_cls)
{
    struct api *a = cls;
    bool nul = *con_cls == &api_nul_marker, ctl = *con_cls == &api_ctl_marker;
    struct api_req *r = nul || ctl ? NULL : *con_cls;
    if (!r) {
        r = calloc(1, sizeof(*r));
        if (!r)
            return MHD_NO;
        r->api = a;
        r->conn = conn;
        r->method = strdup(method);
        r->url = strdup(url);
        r->nul_in_target = nul;
        r->last_data = loop_now_ms();
        *con_cls = r;
        struct api_conn *c = r->link = api_conn_of(conn);
        if (c) {
            api_idle_del(a, c); /* its next head is in */
            char msg[200];
            enum err_code e = c->requests++ == 0 ? ERR_NONE
                                                 : api_check_later_head(conn, url, method, version,
                                                                        ctl, msg, sizeof(msg));
            if (e != ERR_NONE) {
                r->dispatched = true;
                api_reply_error(r, e, "%s", msg);
                return api_queue(r);
            }
        }
        /* Over TCP, credentials first: a stranger learns nothing and sends no body. */
        if (a->tcp && listen_auth_check(r) < 0) {
            r->dispatched = true;
            return api_queue(r);
        }
        if (r->nul_in_target) {
            r->dispatched = true;
            api_reply_error(r, ERR_BAD_REQUEST,
                            "the request target holds an encoded NUL byte (%%00)");
            return api_queue(r);
        }
        /* Refuse an oversized body from its Content-Length before reading any of it: a reply
         * queued now makes MHD skip the body and close the connection after answering. */
        const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
        if (cl && strtoull(cl, NULL, 10) > API_MAX_BODY) {
            r->dispatched = true;
            api_reply_error(r, ERR_TOO_LARGE, "request body exceeds %u bytes", API_MAX_BODY);
            return api_queue(r);
        }
        r->next = a->receiving;
        if (a->receiving)
            a->receiving->prev = r;
        a->receiving = r;
        return MHD_YES;
    }
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        r->last_data = loop_now_ms();
        if (r->raw_replied)
            return MHD_YES; /* read away until the client stops or the grace ends */
        if (r->body.len + n > API_MAX_BODY) {
            /* A chunked body has no length to refuse up front: say so now, not at its end. */
            char *m = util_strdupf("request body exceeds %u bytes", API_MAX_BODY);
            api_reply_mid_body(r, ERR_TOO_LARGE, m ? m : "request body too large");
            free(m);
            return MHD_YES;
        }
        return buf_append(&r->body, upload_data, n) == 0 ? MHD_YES : MHD_NO;
    }
    api_receiving_del(r);
    if (r->raw_replied)
        return MHD_NO; /* answered already: close */
    if (r->resp)
        return api_queue(r);
    if (r->dispatched) /* resumed without a reply: cannot happen, but never hang */
        return MHD_NO;
    r->dispatched = true;
    if (a->closing)
        api_reply_error(r, ERR_UNAVAILABLE, "the engine is stopping; retry once it is back");
    else
        api_dispatch(r);
    if (r->resp)
        return api_queue(r);
    r->suspended = true;
    MHD_suspend_connection(conn);
    return MHD_YES;
}

static void api_on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                             enum MHD_RequestTerminationCode toe)
{
    struct api *a = cls;
    struct api_req *r = *con_cls;
    if (!r || *con_cls == &api_nul_marker || *con_cls == &api_ctl_marker)
        return;
    if (r->keep && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK && !a->closing)
        api_idle_add(a, r->link);
    api_receiving_del(r);
    if (r->resp)
        MHD_destroy_response(r->resp);
    api_free_params(r);
    free(r->method);
    free(r->url);
    buf_free(&r->body);
    free(r);
    *con_cls = NULL;
}

/* A connection the gate handed over has closed: its peer's count drops. */
static void api_on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                              enum MHD_ConnectionNotificationCode toe)
{
    struct api *a = cls;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        /* Without its record a connection is still served, one request at a time. */
        struct api_conn *c = ci ? calloc(1, sizeof(*c)) : NULL;
        if (c)
            c->fd = ci->connect_fd;
        *socket_context = c;
        return;
    }
    if (toe != MHD_CONNECTION_NOTIFY_CLOSED)
        return;
    struct api_conn *c = *socket_context;
    if (c) {
        api_idle_del(a, c);
        free(c);
        *socket_context = NULL;
    }
    if (ci)
        api_gate_closed(a->gate, ci->connect_fd);
}

static void api_on_handed(void *ud)
{
    struct api *a = ud;
    a->run_pending = true;
}

static void api_on_ready(int fd, uint32_t events, void *ud)
{
    struct api *a = ud;
    MHD_run(a->mhd);
}

static long api_prepare(void *ud)
{
    struct api *a = ud;
    MHD_UNSIGNED_LONG_LONG to;
    /* A resumed connection needs more than one turn: one to call the reader, another to
     * write what it returned (the socket is already writable, so epoll reports no new edge).
     * MHD says so with a zero timeout. */
    for (int turns = 0; turns < 16; turns++) {
        bool again = a->run_pending;
        a->run_pending = false;
        if (!again && (MHD_get_timeout(a->mhd, &to) != MHD_YES || to != 0))
            break;
        MHD_run(a->mhd);
    }
    if (MHD_get_timeout(a->mhd, &to) == MHD_YES)
        return (long)(to > 60000 ? 60000 : to);
    return -1;
}

/* ---- streams and server-sent events ---- */

static void api_sub_append(struct api_stream *s, const char *p, size_t n)
{
    if (s->closing)
        return;
    /* A reader that never reads is dropped rather than buffered without bound. */
    if (s->out.len + n > API_SUB_MAX_BUFFER || buf_append(&s->out, p, n) < 0)
        s->closing = true;
    if (s->suspended) {
        s->suspended = false;
        MHD_resume_connection(s->conn);
        s->api->run_pending = true;
    }
}

/* Subscribed to the engine's events (events.h) by api_new: one SSE message to every feed. */
static void api_on_event(const char *type, json_t *data, void *ud)
{
    struct api *a = ud;
    if (!a->subs)
        return;
    char *msg = api_sse_format(type, data);
    if (!msg)
        return;
    size_t n = strlen(msg);
    for (struct api_stream *s = a->subs; s; s = s->next)
        if (s->events)
            api_sub_append(s, msg, n);
    free(msg);
}

/* Whether a GET /v1/events feed is open on this server. */
static bool api_has_feeds(void *ud)
{
    struct api *a = ud;
    for (struct api_stream *s = a->subs; s; s = s->next)
        if (s->events)
            return true;
    return false;
}

char *api_sse_format(const char *type, json_t *data)
{
    char *d = json_dumps(data, JSON_COMPACT);
    char *msg = d ? util_strdupf("event: %s\ndata: %s\n\n", type, d) : NULL;
    free(d);
    return msg;
}

static ssize_t api_sub_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct api_stream *s = cls;
    if (s->out.len == 0) {
        if (s->closing)
            return MHD_CONTENT_READER_END_OF_STREAM;
        /* Nothing to send: park the connection until the next write resumes it. */
        s->suspended = true;
        MHD_suspend_connection(s->conn);
        return 0;
    }
    size_t n = s->out.len < max ? s->out.len : max;
    memcpy(buf, s->out.data, n);
    buf_consume(&s->out, n);
    return (ssize_t)n;
}

static void api_sub_free(void *cls)
{
    struct api_stream *s = cls;
    for (struct api_stream **pp = &s->api->subs; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    if (s->on_close)
        s->on_close(s->ud);
    buf_free(&s->out);
    free(s);
}

struct api_stream *api_stream_open(struct api_req *r, const char *content_type,
                                   void (*on_close)(void *ud), void *ud)
{
    struct api_stream *s = calloc(1, sizeof(*s));
    if (!s) {
        api_reply_error(r, ERR_INTERNAL, "out of memory");
        return NULL;
    }
    s->api = r->api;
    s->conn = r->conn;
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 8192, api_sub_read, s, api_sub_free);
    if (!resp) {
        free(s);
        api_reply_error(r, ERR_INTERNAL, "out of memory");
        return NULL;
    }
    s->on_close = on_close;
    s->ud = ud;
    MHD_add_response_header(resp, "Content-Type", content_type);
    MHD_add_response_header(resp, "Cache-Control", "no-cache");
    s->next = r->api->subs;
    r->api->subs = s;
    api_set_response(r, 200, resp);
    return s;
}

void api_stream_write(struct api_stream *s, const char *data, size_t len)
{
    api_sub_append(s, data, len);
}

void api_stream_end(struct api_stream *s)
{
    if (s->closing)
        return;
    s->closing = true;
    s->on_close = NULL; /* the owner ended it and knows */
    if (s->suspended) {
        s->suspended = false;
        MHD_resume_connection(s->conn);
        s->api->run_pending = true;
    }
}

void api_events_open(struct api_req *r)
{
    struct api_stream *s = api_stream_open(r, "text/event-stream", NULL, NULL);
    if (!s)
        return;
    s->events = true;
    static const char hello[] = ": paddock events\n\n";
    api_sub_append(s, hello, sizeof(hello) - 1);
}

static void api_on_ping(void *ud)
{
    struct api *a = ud;
    static const char ping[] = ": ping\n\n";
    for (struct api_stream *s = a->subs; s; s = s->next)
        if (s->events)
            api_sub_append(s, ping, sizeof(ping) - 1);
    a->ping_timer = loop_timer_add(a->eng->loop, 15000, api_on_ping, a);
}

static struct api *api_create(struct engine *eng, int listen_fd, const struct api_tls *tls,
                              char **err)
{
    struct api *a = calloc(1, sizeof(*a));
    if (!a) {
        *err = strdup("out of memory");
        return NULL;
    }
    a->eng = eng;
    /* The TCP listener's server subscribes too: its feeds get every event. */
    if (events_subscribe_if(eng->events, api_on_event, api_has_feeds, a) < 0) {
        *err = strdup("out of memory");
        free(a);
        return NULL;
    }
    api_gate_limits_get(&a->lim);
    /* Connections come from the gate (api_gate.c), never from MHD's own accept. The timeout
     * is MHD's for a connection that makes no progress (a reader that stopped reading); the
     * head and body deadlines are the gate's and api_on_body_sweep's, and shorter. */
    /* TLS options go last and are skipped (MHD_OPTION_END first) without TLS. */
    struct MHD_OptionItem tls_opts[] = {
        {MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)(tls ? tls->cert : NULL)},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)(tls ? tls->key : NULL)},
        {tls && tls->client_ca ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, 0,
         (void *)(tls ? tls->client_ca : NULL)},
        {MHD_OPTION_END, 0, NULL},
    };
    unsigned int flags =
        MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_ALLOW_UPGRADE | MHD_USE_NO_LISTEN_SOCKET;
    if (tls && !MHD_is_feature_supported(MHD_FEATURE_TLS)) {
        *err = strdup("this libmicrohttpd was built without TLS: --tls-cert cannot be served");
        events_unsubscribe(eng->events, api_on_event, a);
        free(a);
        return NULL;
    }
    a->mhd = MHD_start_daemon(flags | (tls ? MHD_USE_TLS : 0), 0, NULL, NULL, api_on_access, a,
                              MHD_OPTION_NOTIFY_COMPLETED, api_on_completed, a,
                              MHD_OPTION_NOTIFY_CONNECTION, api_on_connection, a,
                              MHD_OPTION_URI_LOG_CALLBACK, api_on_uri, a,
                              MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)120,
                              MHD_OPTION_CONNECTION_LIMIT, (unsigned int)(a->lim.active_max + 64),
                              MHD_OPTION_ARRAY, tls ? tls_opts : tls_opts + 3, MHD_OPTION_END);
    if (!a->mhd) {
        *err = strdup(tls ? "cannot start the HTTPS server (libmicrohttpd): is the certificate "
                            "or key (or the client CA) not PEM, or do they not match?"
                          : "cannot start the HTTP server (libmicrohttpd)");
        events_unsubscribe(eng->events, api_on_event, a);
        free(a);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(a->mhd, MHD_DAEMON_INFO_EPOLL_FD);
    a->epfd = info ? info->epoll_fd : -1;
    if (a->epfd < 0 || loop_add_fd(eng->loop, a->epfd, EPOLLIN, api_on_ready, a) < 0) {
        *err = strdup("cannot watch the HTTP server's epoll descriptor");
        MHD_stop_daemon(a->mhd);
        events_unsubscribe(eng->events, api_on_event, a);
        free(a);
        return NULL;
    }
    if (loop_add_prepare(eng->loop, api_prepare, a) < 0) {
        *err = strdup("too many API listeners on one event loop");
        loop_del_fd(eng->loop, a->epfd);
        MHD_stop_daemon(a->mhd);
        events_unsubscribe(eng->events, api_on_event, a);
        free(a);
        return NULL;
    }
    if (!(a->gate =
              api_gate_new(eng->loop, listen_fd, a->mhd, tls != NULL, api_on_handed, a, err))) {
        loop_del_prepare(eng->loop, api_prepare, a);
        loop_del_fd(eng->loop, a->epfd);
        MHD_stop_daemon(a->mhd);
        events_unsubscribe(eng->events, api_on_event, a);
        free(a);
        return NULL;
    }
    a->body_timer = loop_timer_add(eng->loop, 250, api_on_body_sweep, a);
    a->ping_timer = loop_timer_add(eng->loop, 15000, api_on_ping, a);
    a->tls = tls != NULL;
    a->client_ca = tls && tls->client_ca;
    return a;
}

struct api *api_new(struct engine *eng, int listen_fd, char **err)
{
    return api_create(eng, listen_fd, NULL, err);
}

void api_free(struct api *a)
{
    if (!a)
        return;
    api_free(a->peer);
    loop_del_prepare(a->eng->loop, api_prepare, a);
    events_unsubscribe(a->eng->events, api_on_event, a);
    if (a->ping_timer)
        loop_timer_cancel(a->eng->loop, a->ping_timer);
    if (a->body_timer)
        loop_timer_cancel(a->eng->loop, a->body_timer);
    api_gate_free(a->gate);
    a->gate = NULL; /* MHD_stop_daemon reports its closes, to no gate now */
    a->closing = true;
    for (struct api_stream *s = a->subs; s; s = s->next) {
        s->closing = true;
        if (s->suspended) {
            s->suspended = false;
            MHD_resume_connection(s->conn);
        }
    }
    MHD_run(a->mhd);
    loop_del_fd(a->eng->loop, a->epfd);
    MHD_stop_daemon(a->mhd);
    free(a);
}

/* ---- the TCP listener and what its endpoints need ---- */

/* Another listener with the same routes, at the end of a's chain (api_free frees it). */
static struct api *api_add_peer(struct api *a, int listen_fd, const struct api_tls *tls, char **err)
{
    struct api *t = api_create(a->eng, listen_fd, tls, err);
    if (!t)
        return NULL;
    while (a->peer)
        a = a->peer;
    a->peer = t;
    return t;
}

int api_listen_tcp(struct api *a, int listen_fd, const struct api_tls *tls, char **err)
{
    struct api *t = api_add_peer(a, listen_fd, tls, err);
    if (!t)
        return -1;
    t->tcp = true;
    return 0;
}

bool api_req_is_tcp(struct api_req *r)
{
    return r->api->tcp;
}

bool api_req_client_cert_ok(struct api_req *r)
{
    if (!r->api->client_ca)
        return false;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    gnutls_session_t tls = ci ? (gnutls_session_t)ci->tls_session : NULL;
    unsigned int status = 0;
    /* No certificate at all is an error here too: only a verified one counts. */
    return tls && gnutls_certificate_type_get(tls) == GNUTLS_CRT_X509 &&
           gnutls_certificate_verify_peers2(tls, &status) == 0 && status == 0;
}

int api_listen_operator(struct api *a, int listen_fd, char **err)
{
    struct api *t = api_add_peer(a, listen_fd, NULL, err);
    if (!t)
        return -1;
    t->operator= true;
    return 0;
}

bool api_req_is_operator(struct api_req *r)
{
    /* Over TCP only a client certificate of the listener's client CA is the operator's: the
     * bearer token is also what OpenHands and agents are given. */
    return r->api->operator|| api_req_client_cert_ok(r);
}

const char *api_req_channel(struct api_req *r)
{
    return api_req_is_operator(r) ? "operator" : "agent";
}

const char *api_req_peer(struct api_req *r, char *buf, size_t size)
{
    struct ucred cr;
    socklen_t len = sizeof(cr);
    int fd = api_req_fd(r);
    if (r->api->tcp)
        snprintf(buf, size, "a TCP client");
    else if (fd >= 0 && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0)
        snprintf(buf, size, "uid %u", (unsigned)cr.uid);
    else
        snprintf(buf, size, "an unknown peer");
    return buf;
}

bool api_req_client_gone(struct api_req *r)
{
    /* POLLHUP only: a client may half-close after its request (piped input) and still read. */
    struct pollfd p = {.fd = api_req_fd(r), .events = 0};
    return p.fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR));
}

const char *api_req_path(struct api_req *r)
{
    return r->url;
}

const char *api_req_header(struct api_req *r, const char *name)
{
    return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

void api_reply_header(struct api_req *r, const char *name, const char *value)
{
    if (r->resp && value)
        MHD_add_response_header(r->resp, name, value);
}

void api_reply_fd(struct api_req *r, unsigned status, int fd, uint64_t size,
                  const char *content_type)
{
    struct MHD_Response *resp = MHD_create_response_from_fd64(size, fd);
    if (!resp) {
        close(fd);
        api_reply_error(r, ERR_INTERNAL, "out of memory");
        return;
    }
    MHD_add_response_header(resp, "Content-Type", content_type);
    api_set_response(r, status, resp);
}

/* The connection, once MHD sent the 101: the socket is the handler's from then on. */
struct api_upgrade {
    api_upgrade_fn fn;
    void *ud;
};

static void api_on_upgraded(void *cls, struct MHD_Connection *conn, void *con_cls,
                            const char *extra, size_t extra_len, MHD_socket sock,
                            struct MHD_UpgradeResponseHandle *urh)
{
    (void)conn;
    (void)con_cls;
    struct api_upgrade *u = cls;
    u->fn(sock, extra, extra_len, urh, u->ud);
    free(u);
}

void api_reply_upgrade(struct api_req *r, const char *protocol, api_upgrade_fn fn, void *ud)
{
    struct api_upgrade *u = calloc(1, sizeof(*u));
    struct MHD_Response *resp = u ? MHD_create_response_for_upgrade(api_on_upgraded, u) : NULL;
    if (!resp) {
        free(u);
        api_reply_error(r, ERR_INTERNAL, "out of memory");
        return;
    }
    u->fn = fn;
    u->ud = ud;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_UPGRADE, protocol);
    api_set_response(r, MHD_HTTP_SWITCHING_PROTOCOLS, resp);
}

void api_upgrade_close(struct api *a, void *urh)
{
    MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
    /* MHD finishes the connection on its next run; a is the first listener, and the upgraded
     * connection may be any listener's. */
    for (; a; a = a->peer)
        a->run_pending = true;
}
