/* The engine's watch on the Docker daemon: its events stream for the engine's lifetime, and
 * reconnection with backoff when the daemon goes away. */
#ifndef PADDOCK_MONITOR_H
#define PADDOCK_MONITOR_H

struct engine;
struct monitor;

/* Follow the events of the engine's containers (label paddock.engine=<id>) and reconcile the
 * sessions with what Docker has. NULL when out of memory. */
struct monitor *monitor_start(struct engine *eng);
/* Close the stream and stop retrying; call before http_cancel_all. */
void monitor_free(struct monitor *m);

#endif
