/* The executor's HTTP endpoints: what a handler gets of its request and how it answers.
 *
 * The routes are a table in server.c, one line per endpoint; each endpoint is one file
 * (endpoint_*.c). The server authenticates, routes, enforces the body limit and calls:
 *   start   (optional) once the headers are in, before any of the body: may reply at once
 *           (a 400 for bad query parameters) or set up state;
 *   data    (ENDPOINT_STREAM routes) with each piece of the body as it arrives;
 *   finish  when the whole request is in (ENDPOINT_BODY routes: in rq->body), and again
 *           after every endpoint_resume(), until it replies.
 * A handler that must wait (a queued action, a child process) suspends the connection and
 * returns MHD_YES; whatever it waits for resumes it. */
#ifndef PADDOCK_EXECUTOR_ENDPOINT_H
#define PADDOCK_EXECUTOR_ENDPOINT_H

#include <jansson.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/buf.h"

struct executor;
struct server;
struct request;

typedef enum MHD_Result (*endpoint_fn)(struct request *rq);
/* Takes all n bytes (buffering or passing them on); -1 closes the connection. */
typedef int (*endpoint_data_fn)(struct request *rq, const char *data, size_t n);

#define ENDPOINT_OPEN 1u   /* no API key needed (/alive, /server_info) */
#define ENDPOINT_BODY 2u   /* the body is collected into rq->body (up to the limit) */
#define ENDPOINT_STREAM 4u /* the body goes to the data handler as it arrives */

struct route {
    const char *path;
    const char *method;
    unsigned flags;
    endpoint_fn start;
    endpoint_data_fn data;
    endpoint_fn finish;
};

struct request {
    struct server *srv;
    struct executor *ex;
    struct MHD_Connection *conn;
    const struct route *route;
    struct buf body;                 /* ENDPOINT_BODY: the whole body when finish runs */
    void *state;                     /* the endpoint's own */
    void (*state_free)(void *state); /* runs when the request ends, however it ends */
    bool suspended;
    bool replied;
    /* the server's */
    unsigned status; /* 403/404/405 decided from the headers */
    const char *allow;
    unsigned long long received;
    bool too_large;
    bool no_memory;
    /* the access log line (container log: what `paddock logs` and the dashboard show) */
    unsigned reply_status;
    double started_ms;
    char what[80]; /* "POST /execute_action" */
    struct request *prev, *next;
};

/* Replies; body is taken (json_decref'ed). */
enum MHD_Result endpoint_reply_json(struct request *rq, unsigned status, json_t *body);
/* FastAPI's error shape: {"detail": "<text>"}. */
enum MHD_Result endpoint_reply_detail(struct request *rq, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Replies with a response the endpoint made (a stream); it is destroyed here. */
enum MHD_Result endpoint_reply_response(struct request *rq, unsigned status,
                                        struct MHD_Response *resp);
/* Both are no-ops when the connection already is in that state. */
void endpoint_suspend(struct request *rq);
void endpoint_resume(struct request *rq);
/* The executor is shutting down: waiting handlers reply 503 when resumed. */
bool endpoint_stopping(const struct request *rq);
enum MHD_Result endpoint_reply_stopping(struct request *rq);
/* A query parameter, percent-decoded; NULL when absent. */
const char *endpoint_query(struct request *rq, const char *key);
const char *endpoint_header(struct request *rq, const char *name);
/* The body as a JSON object: NULL after replying 400 (not JSON, not an object). */
json_t *endpoint_body_object(struct request *rq, enum MHD_Result *rc);

/* endpoint_info.c */
enum MHD_Result endpoint_alive(struct request *rq);
enum MHD_Result endpoint_server_info(struct request *rq);
/* endpoint_execute.c */
enum MHD_Result endpoint_execute(struct request *rq);
/* A streamed action's first output frame waits a moment for the action's end (a quick
 * command is then answered whole): ms until that wait ends, -1 when none. */
int endpoint_execute_hold_ms(const struct executor *ex);
/* Sends the first frame once its wait is over (all: at once, at shutdown). */
void endpoint_execute_release(struct executor *ex, bool all);
/* endpoint_env.c: POST /env, a paddock extension */
enum MHD_Result endpoint_env(struct request *rq);
/* endpoint_list.c */
enum MHD_Result endpoint_list(struct request *rq);
/* endpoint_upload.c */
enum MHD_Result endpoint_upload_start(struct request *rq);
int endpoint_upload_data(struct request *rq, const char *data, size_t n);
enum MHD_Result endpoint_upload(struct request *rq);
/* endpoint_browse.c: POST /browse, the operator's reads (a paddock extension) */
enum MHD_Result endpoint_browse(struct request *rq);
/* endpoint_download.c */
enum MHD_Result endpoint_download(struct request *rq);

#endif
