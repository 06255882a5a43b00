/* Sessions: one hardened container each, with the executor listening on a per-session socket. */
#ifndef PADDOCK_SESSION_H
#define PADDOCK_SESSION_H

#include <jansson.h>
#include <stddef.h>

struct engine;
struct session;

/* Outcome of an asynchronous session operation. status is an HTTP status; on success code
 * is NULL and body is the reply document (borrowed). */
struct session_result {
    unsigned status;
    const char *code;    /* error code, NULL on success */
    const char *message; /* error text, NULL on success */
    json_t *body;        /* success reply, borrowed */
};
typedef void (*session_done_fn)(const struct session_result *r, void *ud);

/* Raw passthrough reply of an action: the executor's status and body, unchanged. */
struct session_action_result {
    unsigned status;
    const char *body;
    size_t len;
    const char *code; /* engine-side error code when the engine answers itself, else NULL */
};
typedef void (*session_action_fn)(const struct session_action_result *r, void *ud);

/* At start-up: load live sessions from the store. */
void session_load_all(struct engine *eng);
/* At shutdown: free the in-memory list (containers keep running; a restart reattaches). */
void session_free_all(struct engine *eng);

struct session *session_find(struct engine *eng, const char *id);
const char *session_id(const struct session *s);
const char *session_state(const struct session *s);

/* Validates opts synchronously: returns -1 and fills *bad (400) when they are wrong; otherwise
 * starts creating and calls fn once the session is ready or failed. */
int session_create(struct engine *eng, json_t *opts, session_done_fn fn, void *ud,
                   struct session_result *bad);
void session_delete(struct session *s, session_done_fn fn, void *ud);

/* Record, forward to the executor, record the observation, reply. action is the parsed
 * "action" object; body/len the raw request forwarded unchanged. */
void session_execute(struct session *s, json_t *action, const char *body, size_t len,
                     session_action_fn fn, void *ud);

/* Publish the stored session object as a "session" event. */
void session_publish(struct engine *eng, const char *id);

#endif
