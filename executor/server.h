/* HTTP on a unix socket: libmicrohttpd driven by the executor's event loop, and the routes. */
#ifndef PADDOCK_EXECUTOR_SERVER_H
#define PADDOCK_EXECUTOR_SERVER_H

#include "buf.h"

struct executor;
struct server;

/* Binds and listens on path (a stale socket there is replaced). The socket appears only once
 * it listens, so "it exists" means "it accepts". Returns the fd, or -1 with a message. */
int server_listen_unix(const char *path, struct buf *err);
/* Serves on listen_fd (taken over). NULL with a message on failure. */
struct server *server_start(struct executor *ex, int listen_fd, struct buf *err);
void server_stop(struct server *srv);
/* Milliseconds until MHD needs a run without an fd event, or -1 for never. */
int server_timeout_ms(struct server *srv);
/* Runs MHD while it has work that no fd will announce (resumed connections, buffered
 * data, timeouts). Call after every loop turn. */
void server_run_due(struct server *srv);

#endif
