/* Blocking client of the engine's HTTP API over its unix socket, or over TCP (https) to a
 * remote engine (CLI and TUI). */
#ifndef PADDOCK_CLIENT_H
#define PADDOCK_CLIENT_H

#include <jansson.h>
#include <stdbool.h>

struct client;

/* Paths resolved from the environment (PADDOCK_STATE_DIR, PADDOCK_SOCKET, XDG_STATE_HOME,
 * HOME). Returned strings are malloc'd. */
char *client_default_state_dir(void);
char *client_default_socket(const char *state_dir);
/* The operator's socket, <state_dir>/operator.sock (malloc'd): the channel the CLI and the
 * dashboard use; the engine makes it (engine/api.h, API_OPERATOR_SOCKET; docs/security.md). */
char *client_operator_socket(const char *state_dir);

struct client *client_new(const char *socket_path);
/* How a client proves who it is to a remote engine's listener. Pluggable: each field that is
 * set is sent (a token as "Authorization: Bearer", a client certificate in the TLS handshake).
 * Strings borrowed during client_new_remote (copied). */
struct client_auth {
    const char *token;      /* NULL: none */
    const char *cert, *key; /* PEM files of a client certificate; NULL: none */
};
/* A client of the engine at url ("https://HOST:PORT", or "http://" on loopback or behind a
 * proxy), trusting the certificates that the CA file ca signed (NULL: the system's). NULL
 * when out of memory. */
struct client *client_new_remote(const char *url, const struct client_auth *auth, const char *ca);
void client_free(struct client *c);
/* Where the engine is: the socket path, or the remote engine's url; valid until free. */
const char *client_socket(const struct client *c);
/* True for a client made by client_new_remote. */
bool client_is_remote(const struct client *c);

/* True when an engine answers GET /v1/info on the socket. */
bool client_ping(struct client *c);

/* Start `paddock serve` in the background (its state dir and the agents' socket,
 * agent_socket, passed on) unless an engine already answers on c's socket (the operator's);
 * wait until it answers (at most 10 s). An engine that holds the state dir
 * but does not answer (after a second's grace: it may be starting), or the started one
 * exiting, fails at once, saying which (its pid, its log's last line). self_exe is the path
 * of the paddock binary. Returns 0, or -1 with a malloc'd message in *err. */
int client_ensure_engine(struct client *c, const char *self_exe, const char *state_dir,
                         const char *agent_socket, char **err);
/* The pid of the engine holding state_dir's lock (from /proc/locks), or 0 when none does. */
long client_engine_holder(const char *state_dir);
/* Why no engine answers at socket_path, as a sentence for a person: which engine holds the
 * state dir (its pid, what to do), or that none runs. malloc'd; NULL without memory. */
char *client_engine_diagnose(const char *socket_path, const char *state_dir);

/* Requests in progress give up (transport error "interrupted") once *flag is non-zero; a
 * signal handler sets it. NULL turns this off. */
void client_set_interrupt(struct client *c, volatile int *flag);

/* One request. body may be NULL. On transport success returns the HTTP status and stores the
 * parsed JSON reply (or NULL when the body is not JSON) in *reply. On transport failure returns
 * -1 and sets *err (malloc'd). timeout_ms 0 = none. */
int client_request(struct client *c, const char *method, const char *path, json_t *body,
                   long timeout_ms, json_t **reply, char **err);

/* The message of an engine error reply ({"error":{"message"}}), or a fallback text. */
const char *client_error_message(json_t *reply, const char *fallback);
/* Its code ("session_paused": the table in docs/architecture.md), or NULL; borrowed. */
const char *client_error_code(json_t *reply);

/* A server-sent events stream for an event loop: a non-blocking reader. */
struct client_events;
typedef void (*client_event_fn)(const char *type, json_t *data, void *ud);
/* GET path (with its query; no spaces or controls) as an event stream. NULL with *err
 * (malloc'd) when the engine cannot be reached; a refusal shows later, in pump. */
struct client_events *client_sse_open(struct client *c, const char *path, char **err);
/* The same without waiting for a remote engine: its TCP connect and TLS handshake go on in
 * client_events_pump, called when client_events_fd is ready (for client_events_want) or
 * client_events_timeout has passed; client_events_connecting says whether they still do, and
 * a failed one ends the stream (pump returns -1, client_events_error says why). */
struct client_events *client_sse_start(struct client *c, const char *path, char **err);
bool client_events_connecting(const struct client_events *ev);
/* What to poll client_events_fd for (POLLIN once connected; -1 fd: no socket yet). */
short client_events_want(const struct client_events *ev);
/* ms until pump must run even with nothing ready (a connect's timeouts); -1: none. */
int client_events_timeout(const struct client_events *ev);
/* client_sse_open on GET /v1/events, the engine's events. */
struct client_events *client_events_open(struct client *c, char **err);
/* The descriptor to poll (changes when a connect ends, and after reopen); -1 when closed. */
int client_events_fd(struct client_events *ev);
/* Read what is available and dispatch whole events. Returns 0, or -1 when the stream ended
 * or was refused (the caller may reopen it). */
int client_events_pump(struct client_events *ev, client_event_fn fn, void *ud);
/* The reply's HTTP status once its headers arrived, else 0. After pump returned -1 on a
 * refusal (not 200): the engine's error message (else NULL); valid until close. */
int client_events_status(const struct client_events *ev);
const char *client_events_error(const struct client_events *ev);
void client_events_close(struct client_events *ev);

#endif
