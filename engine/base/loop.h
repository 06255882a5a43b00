/* The engine's one event loop: epoll over descriptors, plus one-shot timers. */
#ifndef PADDOCK_LOOP_H
#define PADDOCK_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct loop;
struct loop_timer;

typedef void (*loop_fd_fn)(int fd, uint32_t events, void *ud);
typedef void (*loop_timer_fn)(void *ud);
/* Called before each wait; returns the longest the loop may sleep in ms (-1: no limit). */
typedef long (*loop_prepare_fn)(void *ud);

struct loop *loop_new(void);
void loop_free(struct loop *l);

int loop_add_fd(struct loop *l, int fd, uint32_t events, loop_fd_fn fn, void *ud);
int loop_mod_fd(struct loop *l, int fd, uint32_t events);
void loop_del_fd(struct loop *l, int fd);

/* One-shot timer after ms milliseconds; the handle is invalid once it fired or was cancelled. */
struct loop_timer *loop_timer_add(struct loop *l, long ms, loop_timer_fn fn, void *ud);
void loop_timer_cancel(struct loop *l, struct loop_timer *t);

/* -1 when the table is full: a listener whose hook is not called would never be served. */
int loop_add_prepare(struct loop *l, loop_prepare_fn fn, void *ud);
void loop_del_prepare(struct loop *l, loop_prepare_fn fn, void *ud);
/* Called after the prepare hooks, once everything ready in this turn was handled (the group
 * commit gathers there what the turn produced); returns whether it did anything, in which case
 * the loop polls without sleeping and runs the prepare hooks again. */
typedef bool (*loop_flush_fn)(void *ud);
int loop_add_flush(struct loop *l, loop_flush_fn fn, void *ud);

/* Milliseconds on CLOCK_MONOTONIC. */
double loop_now_ms(void);

int loop_run(struct loop *l);
void loop_stop(struct loop *l);

#endif
