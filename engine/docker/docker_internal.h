/* What the docker_*.c files share; not for the rest of the engine. */
#ifndef PADDOCK_DOCKER_INTERNAL_H
#define PADDOCK_DOCKER_INTERNAL_H

#include "engine/docker/docker.h"
#include "engine/docker/http.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The API versions we speak: 1.41 (Docker 20.10, Debian 12) has everything we need; 1.51 is
 * the newest whose changes (moby api/docs/CHANGELOG.md) we have checked against our calls
 * (1.52 drops the events' old status/id/from fields; Docker 29 accepts nothing below 1.44). */
#define DOCKER_API_MIN 1041 /* major * 1000 + minor */
#define DOCKER_API_MAX 1051
#define DOCKER_API_RANGE "1.41 to 1.51" /* for messages */

struct loop_timer;
struct docker_req;
struct docker_exec;

struct docker {
    struct http *http;
    char *address;   /* for messages: "unix:///var/run/docker.sock", "tcp://host:2376" */
    char *socket;    /* unix socket path, or NULL for TCP */
    char *base;      /* "http://docker" (unix), "http://host:port" or "https://host:port" */
    char *host_port; /* the Host header of hand-written requests */
    bool tcp;
    bool use_tls;
    struct http_tls tls;
    char *tls_ca, *tls_cert, *tls_key, *cert_dir;
    char *config_error; /* DOCKER_HOST/DOCKER_CERT_PATH could not be used: every call fails */

    /* Version negotiation (/_ping, /version), done before the first call goes out. */
    enum { DOCKER_NEG_NONE, DOCKER_NEG_RUNNING, DOCKER_NEG_DONE } neg;
    int api;                       /* negotiated, major * 1000 + minor; 0 before */
    char version[12];              /* "1.41", the last negotiated */
    char prefix[16];               /* "/v1.41" (the minimum until negotiated) */
    struct http_call *neg_call;    /* the /_ping or /version of a negotiation in flight */
    struct docker_req *waiting;    /* requests held until the version is known */
    struct docker_req *failing;    /* requests being told that negotiation failed */
    struct docker_req *running;    /* requests in flight (for docker_free) */
    struct docker_exec *execs;     /* open exec sessions (closed by docker_free) */
    struct loop_timer *fail_timer; /* config errors are reported from the loop */
};

/* ---- requests that wait for the negotiated version ----
 * req's url and transport fields are ignored: path ("/containers/json") is put under the
 * negotiated version and the daemon's address. fn is called exactly once, later, from the
 * loop, unless docker_req_cancel came first. Before the version is known the request waits;
 * if negotiation fails it gets that failure (-1: unreachable; 400: no common version). */
struct docker_req *docker_req_start(struct docker *d, const char *path,
                                    const struct http_request *req, http_done_fn fn, void *ud);
/* Not from inside its own on_data (return -1 there). */
void docker_req_cancel(struct docker *d, struct docker_req *r);

/* A one-shot call under the negotiated version: the reply is parsed as JSON (demux: the
 * body is a framed log, decoded into the reply's message). fn may be NULL. 0 or -1. */
int docker_call(struct docker *d, const char *method, const char *path, json_t *body,
                long timeout_ms, int demux, docker_done_fn fn, void *ud);
/* The same with "%s" in fmt replaced by the escaped id. */
int docker_call_id(struct docker *d, const char *method, const char *fmt, const char *id,
                   json_t *body, long timeout_ms, int demux, docker_done_fn fn, void *ud);

/* The full URL of an API path ("/containers/json?...") under the negotiated version (the
 * minimum before negotiation); malloc'd. Prefer docker_req_start, which waits for it. */
char *docker_url(const struct docker *d, const char *path);
/* Point a request at the daemon (unix socket or TCP, TLS). */
void docker_fill_request(const struct docker *d, struct http_request *req);
/* Docker's filters={"label": [label], "type": [type]} (type may be NULL), URL-escaped;
 * malloc'd. */
char *docker_label_filter(const char *label, const char *type);
/* GET fmt with "%s" replaced by docker_label_filter(label, NULL). */
int docker_call_filtered(struct docker *d, const char *fmt, const char *label, docker_done_fn fn,
                         void *ud);
/* URL-escape one path or query component; malloc'd. */
char *docker_escape(const char *s);
/* A TLS failure's message naming the certificates used and what they must be; malloc'd. */
char *docker_explain_tls(const struct docker *d, const char *error);
/* "1.41" → 1041; 0 when not a version. */
int docker_parse_version(const char *s);

/* Docker's multiplexed stdout/stderr framing: [fd,0,0,0,len BE32] + payload, headers and
 * payloads split anywhere across chunks. */
struct docker_demux {
    unsigned char hdr[8];
    size_t hdr_len;
    uint32_t remaining;
    int fd;
};
/* One piece of a frame's payload; return 0 to go on, -1 to stop. */
typedef int (*docker_demux_fn)(const char *p, size_t n, int fd, void *ud);
int docker_demux_feed(struct docker_demux *dm, const char *p, size_t n, docker_demux_fn fn,
                      void *ud);

/* docker_exec.c: close every exec session (docker_free). */
void docker_exec_close_all(struct docker *d);

#endif
