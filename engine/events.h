/* The engine's event point: modules publish what happened (a session's state, an action, a
 * build, a stats sample), subscribers (the API's GET /v1/events feeds) receive it. Publishers
 * need not know who listens, so they do not include the API. */
#ifndef PADDOCK_EVENTS_H
#define PADDOCK_EVENTS_H

#include <jansson.h>
#include <stdbool.h>

struct events;

/* type: "session", "action", "approval", "build", "stats"; data is borrowed for the call. */
typedef void (*events_fn)(const char *type, json_t *data, void *ud);

/* NULL when out of memory. */
struct events *events_new(void);
/* Subscribers still registered are dropped without a call. */
void events_free(struct events *ev);
/* fn gets every event published from now on, in subscription order. 0, or -1 when out of
 * memory. */
int events_subscribe(struct events *ev, events_fn fn, void *ud);
/* Whether a subscriber would pass an event on now (its feeds are open). */
typedef bool (*events_listening_fn)(void *ud);
/* As events_subscribe, with listening telling events_listening whether it wants events now
 * (a subscriber without one always does). */
int events_subscribe_if(struct events *ev, events_fn fn, events_listening_fn listening, void *ud);
/* Whether any subscriber wants events now: a publisher may skip building one otherwise. */
bool events_listening(const struct events *ev);
/* Removes the subscription with this fn and ud (safe from inside a delivery: it gets no
 * further events, the one at hand included). */
void events_unsubscribe(struct events *ev, events_fn fn, void *ud);
/* Deliver to every subscriber; ev may be NULL (nothing listens yet, or the engine stops). */
void events_publish(struct events *ev, const char *type, json_t *data);

#endif
