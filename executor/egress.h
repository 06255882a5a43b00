/* The sandbox's HTTP proxy address ("network": "egress", docs/egress.md): the executor
 * listens on a loopback TCP port inside the sandbox and hands every connection it accepts,
 * as a descriptor (SCM_RIGHTS), to the engine's socket in /run/paddock. The engine reads the
 * request and decides; the executor never looks at the bytes. */
#ifndef PADDOCK_EXECUTOR_EGRESS_H
#define PADDOCK_EXECUTOR_EGRESS_H

#include "common/buf.h"
#include "common/evloop.h"

struct egress_relay;

/* Listens on spec (HOST:PORT, loopback) now, so nothing started later can take the port;
 * hands connections to the unix socket at engine_socket once egress_relay_serve is called.
 * NULL with a message. */
struct egress_relay *egress_relay_open(const char *spec, const char *engine_socket,
                                       struct buf *err);
/* Starts accepting on the loop. 0, or -1 (errno set). */
int egress_relay_serve(struct egress_relay *r, struct evloop *l);
void egress_relay_close(struct egress_relay *r, struct evloop *l);

#endif
