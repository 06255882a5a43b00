/* The door in front of the API's HTTP server: accepts connections itself, holds each until its
 * request head has arrived (peeked, not read), checks the head, and only then hands the socket
 * to libmicrohttpd. Idle and slow connections therefore wait here, bounded and evicted oldest
 * first, never in the HTTP server's slots; a malformed head gets the JSON error envelope
 * instead of libmicrohttpd's HTML page. Limits and deadlines: docs/security.md. */
#ifndef PADDOCK_API_GATE_H
#define PADDOCK_API_GATE_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/base/errors.h"

struct loop;
struct MHD_Daemon;
struct api_gate;

/* The bounds, from the environment where tests or operators change them. */
struct api_gate_limits {
    long head_ms;      /* a request head must be complete this long after the accept */
    long body_idle_ms; /* a body that sends nothing for this long gets a 408 (api.c) */
    int pending_max;   /* connections whose head has not arrived, per listener */
    int peer_pending;  /* of those, per peer (an address over TCP, a process on the socket) */
    int peer_active;   /* connections handed to the HTTP server, per peer */
    int active_max;    /* connections handed to the HTTP server, per listener */
};

/* MHD's own pool is 32 KiB per connection and must hold the head; beyond this it would send
 * its HTML "request too big". */
#define API_GATE_HEAD_MAX (16 * 1024)

/* The head [p, p+n), its empty line included: ERR_NONE, or why it is refused (msg, the
 * error's message). What the HTTP server would refuse with an HTML page, or take in a form
 * the engine does not, is refused here first. A later request on a kept connection, which
 * the gate never sees, has its head rebuilt from what the server parsed and checked here too
 * (api.c). */
enum err_code api_gate_check_head(const char *p, size_t n, char *msg, size_t size);

/* PADDOCK_HEADER_TIMEOUT and PADDOCK_BODY_TIMEOUT (seconds) over the defaults. */
void api_gate_limits_get(struct api_gate_limits *l);

/* Watch listen_fd on the loop; heads that pass go to mhd (started with
 * MHD_USE_NO_LISTEN_SOCKET), then handed() runs so the caller lets MHD read them. tls: mhd
 * speaks TLS, so a connection whose first bytes are a TLS handshake goes to it at once (the
 * head is encrypted: MHD's own limits bound it), and a plain HTTP request is answered, in
 * plain HTTP, that this port needs https. */
struct api_gate *api_gate_new(struct loop *loop, int listen_fd, struct MHD_Daemon *mhd, bool tls,
                              void (*handed)(void *ud), void *ud, char **err);
/* The HTTP server closed a connection it was handed (its socket fd). */
void api_gate_closed(struct api_gate *g, int fd);
void api_gate_free(struct api_gate *g);

/* Write a complete HTTP/1.1 reply with the error envelope to fd and announce its close; for
 * the gate and for a request the HTTP server still reads (api.c's body deadline). */
void api_gate_write_error(int fd, enum err_code e, const char *msg);

#endif
