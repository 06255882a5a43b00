/* A unix-socket relay in front of the Docker daemon, for the tests: stopping it looks to the
 * engine like the daemon going away (its connections close, the socket is gone) while the real
 * daemon and every container go on, so other tests are not disturbed. */
#ifndef PADDOCK_TESTS_PROXY_H
#define PADDOCK_TESTS_PROXY_H

struct proxy;

/* Listen on path and relay each connection to upstream; runs in a thread. NULL on failure. */
struct proxy *proxy_start(const char *path, const char *upstream);
/* Close the listener and every relayed connection, remove the socket, join the thread. */
void proxy_stop(struct proxy *p);

#endif
