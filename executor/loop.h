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

#define LOOP_CONTAINER_OF(ptr, type, member)                                                       \
    ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

#endif
