/* The engine's event point (events.h): a list of subscribers called in turn. */
#include "engine/events.h"

#include <stdlib.h>

struct subscriber {
    events_fn fn; /* NULL: unsubscribed during a delivery, removed once it ends */
    events_listening_fn listening;
    void *ud;
};

struct events {
    struct subscriber *subs;
    size_t n, cap;
    int delivering; /* nesting depth of events_publish: entries are not moved meanwhile */
};

struct events *events_new(void)
{
    return calloc(1, sizeof(struct events));
}

void events_free(struct events *ev)
{
    if (!ev)
        return;
    free(ev->subs);
    free(ev);
}

int events_subscribe(struct events *ev, events_fn fn, void *ud)
{
    return events_subscribe_if(ev, fn, NULL, ud);
}

int events_subscribe_if(struct events *ev, events_fn fn, events_listening_fn listening, void *ud)
{
    if (!ev)
        return -1;
    if (ev->n == ev->cap) {
        size_t cap = ev->cap ? ev->cap * 2 : 4;
        struct subscriber *subs = realloc(ev->subs, cap * sizeof(*subs));
        if (!subs)
            return -1;
        ev->subs = subs;
        ev->cap = cap;
    }
    ev->subs[ev->n++] = (struct subscriber){.fn = fn, .listening = listening, .ud = ud};
    return 0;
}

bool events_listening(const struct events *ev)
{
    if (!ev)
        return false;
    for (size_t i = 0; i < ev->n; i++)
        if (ev->subs[i].fn && (!ev->subs[i].listening || ev->subs[i].listening(ev->subs[i].ud)))
            return true;
    return false;
}

/* Drop the entries unsubscribed during a delivery, keeping the order. */
static void events_compact(struct events *ev)
{
    size_t k = 0;
    for (size_t i = 0; i < ev->n; i++)
        if (ev->subs[i].fn)
            ev->subs[k++] = ev->subs[i];
    ev->n = k;
}

void events_unsubscribe(struct events *ev, events_fn fn, void *ud)
{
    if (!ev)
        return;
    for (size_t i = 0; i < ev->n; i++)
        if (ev->subs[i].fn == fn && ev->subs[i].ud == ud) {
            ev->subs[i].fn = NULL;
            break;
        }
    if (!ev->delivering)
        events_compact(ev);
}

void events_publish(struct events *ev, const char *type, json_t *data)
{
    if (!ev)
        return;
    ev->delivering++;
    /* A subscriber added during the delivery waits for the next event. */
    size_t n = ev->n;
    for (size_t i = 0; i < n; i++)
        if (ev->subs[i].fn)
            ev->subs[i].fn(type, data, ev->subs[i].ud);
    if (--ev->delivering == 0)
        events_compact(ev);
}
