/* Non-blocking requests to the engine for an event loop (the dashboard). */
#ifndef PADDOCK_CLIENT_ASYNC_H
#define PADDOCK_CLIENT_ASYNC_H

#include <jansson.h>
#include <poll.h>
#include <stddef.h>

struct client;
struct client_async;

/* status: the HTTP status, or -1 with err (transport); reply: the parsed JSON body or NULL.
 * Both are valid during the call only. */
typedef void (*client_async_fn)(int status, json_t *reply, const char *err, void *ud);

struct client_async *client_async_new(struct client *c);
/* Pending requests are dropped without their callbacks. */
void client_async_free(struct client_async *a);
/* Start a request; fn runs from client_async_poll when it ends. 0, or -1 (out of memory). */
int client_async_request(struct client_async *a, const char *method, const char *path, json_t *body,
                         long timeout_ms, client_async_fn fn, void *ud);
/* The same on another engine's client c (one loop, one wait, many engines); c must outlive
 * the request. */
int client_async_request_on(struct client_async *a, struct client *c, const char *method,
                            const char *path, json_t *body, long timeout_ms, client_async_fn fn,
                            void *ud);
/* Drop the pending requests started with ud (their callbacks never run). */
void client_async_cancel(struct client_async *a, void *ud);
size_t client_async_pending(const struct client_async *a);
/* The loop's one wait: up to timeout_ms (-1: long) for the requests' sockets and fds (each
 * fds[i].revents is set: POLLIN/POLLOUT/POLLPRI; a hang-up shows as POLLIN), then the
 * callbacks of finished requests. Returns how many of fds are ready, or -1. */
int client_async_poll(struct client_async *a, struct pollfd *fds, int nfds, int timeout_ms);

#endif
