/* Container logs: live (follow) to API clients, and the tail kept in the store when a session's
 * container goes away. */
#ifndef PADDOCK_LOGS_H
#define PADDOCK_LOGS_H

struct engine;
struct api_req;

/* Lines kept from the end of a container's log, and the byte cap on them. */
#define LOGS_TAIL_LINES 2000
#define LOGS_TAIL_BYTES (256 * 1024)

/* GET /v1/sessions/{id}/logs?tail=N&follow=1&timestamps=1 (see docs/architecture.md). */
void logs_route_get(struct api_req *r);

/* Fetch the container's log tail into the store; done(ud, error or NULL) runs once, later or
 * at once. Safe to call when the container is already gone (then nothing is saved). */
typedef void (*logs_saved_fn)(void *ud, const char *error);
void logs_save_tail(struct engine *eng, const char *session_id, const char *container_id,
                    logs_saved_fn done, void *ud);

#endif
