/* The engine's loop on the common epoll core: handlers by fd with user data, a sorted list of
 * one-shot timers (few live at once, so a list is enough), prepare hooks for libcurl and MHD. */
#include "engine/base/loop.h"

#include "common/evloop.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A descriptor's handler and its data, found by fd (the engine's callers speak in fds). */
struct watch {
    struct evloop_watch ev;
    loop_fd_fn fn;
    void *ud;
};

struct loop_timer {
    double due;
    loop_timer_fn fn;
    void *ud;
    struct loop_timer *next;
};

#define LOOP_MAX_PREPARE 4
#define LOOP_MAX_FLUSH 2

struct loop {
    struct evloop *ev;
    bool stop;
    struct watch **watches; /* indexed by fd */
    int nwatches;
    struct loop_timer *timers;
    struct {
        loop_prepare_fn fn;
        void *ud;
    } prepare[LOOP_MAX_PREPARE];
    int nprepare;
    struct {
        loop_flush_fn fn;
        void *ud;
    } flush[LOOP_MAX_FLUSH];
    int nflush;
};

double loop_now_ms(void)
{
    return evloop_now() * 1e3;
}

struct loop *loop_new(void)
{
    struct loop *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    l->ev = evloop_new();
    if (!l->ev) {
        free(l);
        return NULL;
    }
    return l;
}

void loop_free(struct loop *l)
{
    if (!l)
        return;
    for (int i = 0; i < l->nwatches; i++)
        free(l->watches[i]);
    free(l->watches);
    while (l->timers) {
        struct loop_timer *t = l->timers;
        l->timers = t->next;
        free(t);
    }
    evloop_free(l->ev);
    free(l);
}

static void loop_dispatch(struct evloop_watch *ev, uint32_t events)
{
    struct watch *w = EVLOOP_CONTAINER_OF(ev, struct watch, ev);
    w->fn(ev->fd, events, w->ud);
}

int loop_add_fd(struct loop *l, int fd, uint32_t events, loop_fd_fn fn, void *ud)
{
    if (fd >= l->nwatches) {
        int n = fd + 64;
        struct watch **w = realloc(l->watches, (size_t)n * sizeof(*w));
        if (!w)
            return -1;
        for (int i = l->nwatches; i < n; i++)
            w[i] = NULL;
        l->watches = w;
        l->nwatches = n;
    }
    struct watch *w = l->watches[fd];
    bool existed = w != NULL;
    if (!w && !(w = calloc(1, sizeof(*w))))
        return -1;
    w->ev.fd = fd;
    w->ev.fn = loop_dispatch;
    w->fn = fn;
    w->ud = ud;
    l->watches[fd] = w;
    if ((existed ? evloop_mod : evloop_add)(l->ev, &w->ev, events) < 0) {
        if (!existed) {
            l->watches[fd] = NULL;
            free(w);
        }
        return -1;
    }
    return 0;
}

int loop_mod_fd(struct loop *l, int fd, uint32_t events)
{
    if (fd < 0 || fd >= l->nwatches || !l->watches[fd])
        return -1;
    return evloop_mod(l->ev, &l->watches[fd]->ev, events);
}

void loop_del_fd(struct loop *l, int fd)
{
    if (fd < 0 || fd >= l->nwatches || !l->watches[fd])
        return;
    /* evloop_del drops the watch's events still pending in this batch: it can go at once. */
    evloop_del(l->ev, &l->watches[fd]->ev);
    free(l->watches[fd]);
    l->watches[fd] = NULL;
}

struct loop_timer *loop_timer_add(struct loop *l, long ms, loop_timer_fn fn, void *ud)
{
    struct loop_timer *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->due = loop_now_ms() + (double)ms;
    t->fn = fn;
    t->ud = ud;
    struct loop_timer **pp = &l->timers;
    while (*pp && (*pp)->due <= t->due)
        pp = &(*pp)->next;
    t->next = *pp;
    *pp = t;
    return t;
}

void loop_timer_cancel(struct loop *l, struct loop_timer *t)
{
    for (struct loop_timer **pp = &l->timers; *pp; pp = &(*pp)->next)
        if (*pp == t) {
            *pp = t->next;
            free(t);
            return;
        }
}

int loop_add_prepare(struct loop *l, loop_prepare_fn fn, void *ud)
{
    if (l->nprepare >= LOOP_MAX_PREPARE)
        return -1;
    l->prepare[l->nprepare].fn = fn;
    l->prepare[l->nprepare].ud = ud;
    l->nprepare++;
    return 0;
}

void loop_del_prepare(struct loop *l, loop_prepare_fn fn, void *ud)
{
    for (int i = 0; i < l->nprepare; i++)
        if (l->prepare[i].fn == fn && l->prepare[i].ud == ud) {
            memmove(&l->prepare[i], &l->prepare[i + 1],
                    (size_t)(l->nprepare - i - 1) * sizeof(l->prepare[0]));
            l->nprepare--;
            return;
        }
}

int loop_add_flush(struct loop *l, loop_flush_fn fn, void *ud)
{
    if (l->nflush >= LOOP_MAX_FLUSH)
        return -1;
    l->flush[l->nflush].fn = fn;
    l->flush[l->nflush].ud = ud;
    l->nflush++;
    return 0;
}

/* True when a flush hook did something: what it did (a reply resumed, a request started) may
 * need the prepare hooks again before the loop can sleep. */
static bool loop_run_flush(struct loop *l)
{
    bool did = false;
    for (int i = 0; i < l->nflush; i++)
        did |= l->flush[i].fn(l->flush[i].ud);
    return did;
}

static void loop_run_timers(struct loop *l)
{
    double now = loop_now_ms();
    while (l->timers && l->timers->due <= now) {
        struct loop_timer *t = l->timers;
        l->timers = t->next;
        loop_timer_fn fn = t->fn;
        void *ud = t->ud;
        free(t);
        fn(ud);
    }
}

void loop_stop(struct loop *l)
{
    l->stop = true;
}

int loop_run(struct loop *l)
{
    while (!l->stop) {
        long wait = -1;
        for (int i = 0; i < l->nprepare; i++) {
            long w = l->prepare[i].fn(l->prepare[i].ud);
            if (w >= 0 && (wait < 0 || w < wait))
                wait = w;
        }
        if (l->timers) {
            double d = l->timers->due - loop_now_ms();
            long w = d <= 0 ? 0 : (long)d + 1;
            if (wait < 0 || w < wait)
                wait = w;
        }
        /* Last before sleeping: everything this turn handled has had its say. */
        if (loop_run_flush(l))
            wait = 0;
        if (l->stop)
            break;
        if (evloop_run_once(l->ev, (int)wait) < 0)
            return -1;
        loop_run_timers(l);
    }
    l->stop = false; /* a later loop_run runs again (tests drive the loop step by step) */
    return 0;
}
