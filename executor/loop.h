/* The executor's one event loop: epoll over file descriptors, each with its handler. */
#ifndef PADDOCK_EXECUTOR_LOOP_H
#define PADDOCK_EXECUTOR_LOOP_H

#include <stddef.h>
#include <stdint.h>

struct loop;
struct loop_watch;

typedef void (*loop_fn)(struct loop_watch *w, uint32_t events);

/* Embed in the owner's struct; the handler gets it back (container_of style). */
struct loop_watch {
    int fd;
    loop_fn fn;
};

struct loop *loop_new(void);
void loop_free(struct loop *l);
int loop_add(struct loop *l, struct loop_watch *w, uint32_t events);
int loop_mod(struct loop *l, struct loop_watch *w, uint32_t events);
/* Safe from inside a handler: pending events of w in the current batch are dropped. */
void loop_del(struct loop *l, struct loop_watch *w);
/* Waits up to timeout_ms (-1: no limit) and runs the handlers of ready fds. */
int loop_run_once(struct loop *l, int timeout_ms);

/* CLOCK_MONOTONIC in seconds. */
double loop_now(void);

/* Deadline timers: a timerfd in the loop, w->fn called when it falls due. The one timer of
 * each action type and of start-up. */
int loop_timer_open(struct loop *l, struct loop_watch *w, loop_fn fn);
void loop_timer_close(struct loop *l, struct loop_watch *w);
/* Falls due at `when` (loop_now() seconds; a time already past: at once); INFINITY
 * disarms. */
void loop_timer_at(struct loop_watch *w, double when);
/* In the handler: takes the expiry, so the fd stops being readable. */
void loop_timer_ack(struct loop_watch *w);

#define LOOP_CONTAINER_OF(ptr, type, member)                                                       \
    ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

#endif
