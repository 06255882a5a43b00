/* The sockets the executor serves on: a unix socket (the default transport) and, on request,
 * a TCP address. */
#ifndef PADDOCK_EXECUTOR_LISTEN_H
#define PADDOCK_EXECUTOR_LISTEN_H

#include <stdbool.h>

#include "common/buf.h"

/* Binds and listens on path (a stale socket there is replaced). The socket appears only once
 * it listens, so "it exists" means "it accepts". Mode 0660; when running as root in a
 * directory that belongs to another uid, the socket is given to that uid. Returns the fd, or
 * -1 with a message. */
int listen_unix(const char *path, struct buf *err);

/* spec is HOST:PORT, with an IPv6 HOST in brackets ([::1]:8000); HOST is numeric or a name
 * from /etc/hosts. A host that is not a loopback address is refused unless allow_remote (an
 * API key is configured). Returns the fd, or -1 with a message. */
int listen_tcp(const char *spec, bool allow_remote, struct buf *err);

/* Parses spec without binding: 0 with host and port copied out, or -1 with a message. */
int listen_split(const char *spec, char *host, size_t hostlen, char *port, size_t portlen,
                 struct buf *err);

#endif
