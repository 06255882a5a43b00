/* A terminal into a sandbox (POST /v1/sessions/{id}/terminal, an HTTP upgrade on the engine's
 * unix socket; docs/terminal.md) as a non-blocking connection an event loop drives: connect,
 * send the upgrade request, read the 101 without waiting, then raw bytes both ways through a
 * bounded outgoing buffer. The dashboard's Terminal tab and `paddock exec` both use it. */
#ifndef PADDOCK_CLIENT_TERM_H
#define PADDOCK_CLIENT_TERM_H

#include <stdbool.h>
#include <stddef.h>

#define CLIENT_TERM_ID_MAX 64
#define CLIENT_TERM_OUT_MAX (1u << 20) /* keys waiting for the engine: more is refused */

/* ---- the upgrade reply's head (pure) ---- */

struct client_term_reply {
    int status;                   /* 101 when upgraded */
    char tid[CLIENT_TERM_ID_MAX]; /* X-Paddock-Terminal, "" when absent */
    size_t head_len;              /* bytes up to and with the blank line */
    long content_length;          /* of an error's body; -1 when not given */
};

/* Parse the reply's head from the first len bytes received: 1 complete (*out set), 0 more
 * bytes needed, -1 not an HTTP reply (or a head over 16 KiB). */
int client_term_parse_reply(const char *buf, size_t len, struct client_term_reply *out);

/* ---- the connection ---- */

enum client_term_state {
    CLIENT_TERM_CONNECTING, /* the request is out (or going), the reply not yet in */
    CLIENT_TERM_OPEN,       /* upgraded: bytes flow */
    CLIENT_TERM_CLOSED,     /* the engine closed it (the command ended) */
    CLIENT_TERM_FAILED,     /* refused or broken: client_term_error says why */
};

struct client_term;
/* Bytes from the sandbox. */
typedef void (*client_term_data_fn)(const char *data, size_t len, void *ud);

/* Connect to socket_path and queue the upgrade request for path (".../terminal?rows=..").
 * NULL with *err (malloc'd) when the socket cannot be reached at all. */
struct client_term *client_term_open(const char *socket_path, const char *path, char **err);
struct client;
/* The same on client c's engine: its unix socket, or a remote engine's https (its TCP connect
 * and TLS handshake carried on by client_term_pump, never blocking; the credentials go with
 * the request). */
struct client_term *client_term_open_on(struct client *c, const char *path, char **err);
void client_term_close(struct client_term *t);
int client_term_fd(const struct client_term *t);
/* ms until client_term_pump must run with nothing ready (a remote connect's timeouts); -1:
 * none. */
int client_term_timeout(const struct client_term *t);
/* What to poll for: POLLIN, plus POLLOUT while connecting or bytes wait to go out. */
short client_term_events(const struct client_term *t);
/* The descriptor is ready (or poll said nothing: harmless): write what waits, read what came
 * (bounded per call), hand the sandbox's bytes to fn. Returns the state after. */
enum client_term_state client_term_pump(struct client_term *t, short revents,
                                        client_term_data_fn fn, void *ud);
enum client_term_state client_term_state(const struct client_term *t);
/* The terminal id from the 101 ("" before). */
const char *client_term_id(const struct client_term *t);
/* Why it failed (the engine's message), or NULL. */
const char *client_term_error(const struct client_term *t);
/* The engine's error code when it refused ("session_paused"), or NULL; valid until close. */
const char *client_term_error_code(const struct client_term *t);
/* Queue bytes for the sandbox and write what the socket takes now. 0, or -1 when the buffer
 * would pass CLIENT_TERM_OUT_MAX or the connection is over (nothing queued). */
int client_term_send(struct client_term *t, const char *p, size_t n);
size_t client_term_pending(const struct client_term *t);
/* End the sandbox's input once the queued bytes are out (a half-close: tty=0 commands). */
void client_term_shutdown_write(struct client_term *t);

#endif
