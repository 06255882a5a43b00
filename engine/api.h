/* The engine's HTTP API server: libmicrohttpd in external-epoll mode on the engine loop. */
#ifndef PADDOCK_API_H
#define PADDOCK_API_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/base/errors.h"

struct engine;
struct api;
struct api_req;
struct session;

typedef void (*api_handler_fn)(struct api_req *req);

/* The operator's socket, in the state dir (mode 0600 in a 0700 dir): the channel of the CLI and
 * the dashboard (client/client.c names the same file). */
#define API_OPERATOR_SOCKET "operator.sock"
/* Route flags. OPERATOR: the operator's alone (decisions, rules, the engine's own settings,
 * reading the workspace): on the agents' socket and the TCP listener it answers 403 naming the
 * operator's socket (api_listen_operator; docs/security.md says which and why). */
#define API_ROUTE_OPERATOR 1u

struct api_route {
    const char *method;
    const char *pattern; /* "/v1/sessions/ * /actions": "*" matches one path segment */
    api_handler_fn fn;
    unsigned flags; /* API_ROUTE_* */
};

/* Routes live in api_routes.c: adding an endpoint is one handler and one table line. */
extern const struct api_route api_routes[];
extern const size_t api_routes_count;

struct api *api_new(struct engine *eng, int listen_fd, char **err);
/* Resume what waits, end event streams, stop the daemon. */
void api_free(struct api *a);

struct engine *api_req_engine(struct api_req *r);
/* The i-th "*" segment of the matched pattern. */
const char *api_req_param(struct api_req *r, int i);
const char *api_req_query(struct api_req *r, const char *key);
/* The query parameter key as a number in [lo, hi] (dflt when absent): 0, or -1 after a 400
 * reply. */
int api_query_number(struct api_req *r, const char *key, double lo, double hi, double dflt,
                     double *out);
const char *api_req_body(struct api_req *r, size_t *len);
/* Parse the body as a JSON object; on failure replies 400 and returns NULL. An empty body
 * gives an empty object when allow_empty. */
json_t *api_req_json(struct api_req *r, int allow_empty);

/* Replies; each request gets exactly one. They may come later than the handler (async): a
 * handler that returns without replying keeps the connection suspended until it does. */
void api_reply_json(struct api_req *r, unsigned status, json_t *j); /* steals j */
void api_reply_raw(struct api_req *r, unsigned status, const char *body, size_t len,
                   const char *content_type);
/* {"error": {"code", "message"}} with the code's status (engine/base/errors.h). */
void api_reply_error(struct api_req *r, enum err_code e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A response written to as things happen (follow streams): the reply to r. on_close runs
 * once when the client goes away or the engine stops, unless api_stream_end came first; the
 * stream is invalid after either. NULL (and an error reply) when out of memory. */
struct api_stream;
struct api_stream *api_stream_open(struct api_req *r, const char *content_type,
                                   void (*on_close)(void *ud), void *ud);
/* Buffered; a reader that falls 4 MiB behind is disconnected (on_close then runs). */
void api_stream_write(struct api_stream *s, const char *data, size_t len);
/* Finish the response once what is buffered is sent. */
void api_stream_end(struct api_stream *s);
/* "event: TYPE\ndata: JSON\n\n", malloc'd. */
char *api_sse_format(const char *type, json_t *data);

/* The stored session of the request's first path parameter (deleted ones included; the
 * caller's reference), or a 404 reply and NULL. */
json_t *api_stored_session(struct api_req *r);
/* Whether the store knows it; false after a 404 reply. */
bool api_session_known(struct api_req *r);
/* The live session of the request's first path parameter, or a 404/409 reply and NULL. */
struct session *api_live_session(struct api_req *r);

/* Handlers of the action path (api_actions.c). */
void api_route_execute(struct api_req *r);
void api_route_risk(struct api_req *r);
void api_route_action_get(struct api_req *r);
void api_route_action_approve(struct api_req *r);
void api_route_action_reject(struct api_req *r);
void api_route_approvals(struct api_req *r);
void api_route_verify(struct api_req *r);
/* The operator's rules (api_rules.c). */
void api_route_rules_list(struct api_req *r);
void api_route_rules_add(struct api_req *r);
void api_route_rule_get(struct api_req *r);
void api_route_rule_edit(struct api_req *r);
void api_route_rule_remove(struct api_req *r);
void api_route_session_rules_get(struct api_req *r);
void api_route_session_rules_add(struct api_req *r);
/* At start-up: the ceiling (a risk level's name; NULL: "medium") and the config file's
 * engine-wide rules (NULL-terminated lists of globs; NULL: none), kept in step with the store
 * (each change recorded). 0, or -1 with *err (malloc'd). */
int api_rules_load_config(struct engine *eng, const char *ceiling, const char *const *allow,
                          const char *const *deny, char **err);
void api_route_history(struct api_req *r);

/* ---- the optional TCP listener (listen.c decides who may use it) ---- */
/* Serve a second, listening TCP socket with the same routes; its requests pass
 * listen_auth_check before anything else. The events feed reaches both. 0, or -1 with *err. */
int api_listen_tcp(struct api *a, int listen_fd, char **err);
bool api_req_is_tcp(struct api_req *r);

/* ---- the operator's channel (docs/security.md) ---- */
/* Serve the operator's unix socket with the same routes: its requests are the operator's
 * (operator-only routes, options [security] keeps from agents). 0, or -1 with *err. */
int api_listen_operator(struct api *a, int listen_fd, char **err);
/* Whether the request came on the operator's channel (else the agent's socket or TCP). */
bool api_req_is_operator(struct api_req *r);
/* "operator" or "agent": who asked, for the record. */
const char *api_req_channel(struct api_req *r);
/* Who sent the request, for the record: "uid N" (the unix socket's peer, SO_PEERCRED) or "a
 * TCP client". Returns buf. */
const char *api_req_peer(struct api_req *r, char *buf, size_t size);
/* Whether the client of a request that waited (suspended) has closed its connection: a reply
 * then reaches nobody. */
bool api_req_client_gone(struct api_req *r);
/* The request's path (no query string). */
const char *api_req_path(struct api_req *r);
/* A request header's value (case-insensitive name), or NULL. */
const char *api_req_header(struct api_req *r, const char *name);
/* Add a header to the reply just made (call right after api_reply_*, in the same turn). */
void api_reply_header(struct api_req *r, const char *name, const char *value);
/* Reply with size bytes of the file fd from its start (the reply closes fd). */
void api_reply_fd(struct api_req *r, unsigned status, int fd, uint64_t size,
                  const char *content_type);

/* A 101 upgrade: once MHD has sent it, fn gets the connection's socket (blocking mode as MHD
 * left it), the bytes the client sent after its request, and a handle for api_upgrade_close,
 * which closes the socket and must be called exactly once. Headers may be added with
 * api_reply_header right after. */
typedef void (*api_upgrade_fn)(int sock, const char *extra, size_t extra_len, void *urh, void *ud);
void api_reply_upgrade(struct api_req *r, const char *protocol, api_upgrade_fn fn, void *ud);
void api_upgrade_close(struct api *a, void *urh);

/* Handler for GET /v1/events: server-sent events of everything published to the engine's
 * events (events.h). */
void api_events_open(struct api_req *r);

#endif
