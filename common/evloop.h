/* The epoll core of both event loops: descriptors watched through a struct the owner embeds
 * (no allocation, no lookup), deletion that is safe inside a batch of events, and deadline
 * timers on a timerfd. The executor drives it directly; the engine's loop (engine/base/loop.c)
 * adds its callbacks with user data, one-shot timers and prepare hooks on top. */
#ifndef PADDOCK_COMMON_EVLOOP_H
#define PADDOCK_COMMON_EVLOOP_H

#include <stddef.h>
#include <stdint.h>

struct evloop;
struct evloop_watch;

typedef void (*evloop_fn)(struct evloop_watch *w, uint32_t events);

/* Embed in the owner's struct; the handler gets it back (container_of style). */
struct evloop_watch {
    int fd;
    evloop_fn fn;
};

struct evloop *evloop_new(void);
void evloop_free(struct evloop *l);
int evloop_add(struct evloop *l, struct evloop_watch *w, uint32_t events);
int evloop_mod(struct evloop *l, struct evloop_watch *w, uint32_t events);
/* Safe from inside a handler: pending events of w in the current batch are dropped. */
void evloop_del(struct evloop *l, struct evloop_watch *w);
/* Waits up to timeout_ms (-1: no limit) and runs the handlers of ready fds. */
int evloop_run_once(struct evloop *l, int timeout_ms);

/* CLOCK_MONOTONIC in seconds. */
double evloop_now(void);

/* Deadline timers: a timerfd in the loop, w->fn called when it falls due (the executor's one
 * timer of each action type and of start-up). */
int evloop_timer_open(struct evloop *l, struct evloop_watch *w, evloop_fn fn);
void evloop_timer_close(struct evloop *l, struct evloop_watch *w);
/* Falls due at `when` (evloop_now() seconds; a time already past: at once); INFINITY, or a
 * time past what a time_t holds, disarms. */
void evloop_timer_at(struct evloop_watch *w, double when);
/* In the handler: takes the expiry, so the fd stops being readable. */
void evloop_timer_ack(struct evloop_watch *w);

#define EVLOOP_CONTAINER_OF(ptr, type, member)                                                     \
    ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

#endif
