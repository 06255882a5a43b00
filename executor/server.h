/* HTTP: libmicrohttpd driven by the executor's event loop, one daemon per listening socket,
 * and the routes (endpoint.h). */
#ifndef PADDOCK_EXECUTOR_SERVER_H
#define PADDOCK_EXECUTOR_SERVER_H

#include <stddef.h>

#include "common/buf.h"

#define SERVER_MAX_LISTENERS 2

struct executor;
struct server;

/* Serves on the n listening sockets (taken over, closed on failure). A connection that sends
 * and accepts nothing for connection_timeout seconds is closed (0: never; a suspended one,
 * waiting for its action or file operation, never times out). NULL with a message. */
struct server *server_start(struct executor *ex, const int *listen_fds, size_t n,
                            unsigned connection_timeout, struct buf *err);
/* Waiting requests are resumed and answered (503) as far as possible, then all is closed. */
void server_stop(struct server *srv);
/* Milliseconds until MHD needs a run without an fd event, or -1 for never. */
int server_timeout_ms(struct server *srv);
/* Runs MHD while it has work that no fd will announce (resumed connections, buffered
 * data, timeouts). Call after every loop turn. */
void server_run_due(struct server *srv);

#endif
