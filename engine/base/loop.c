/* epoll loop with a sorted timer list: few timers live at once, so a list is enough. */
#include "engine/base/loop.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

struct watch {
    int fd;
    loop_fd_fn fn;
    void *ud;
    struct watch *next_dead;
};

struct loop_timer {
    double due;
    loop_timer_fn fn;
    void *ud;
    struct loop_timer *next;
};

#define LOOP_MAX_PREPARE 4

struct loop {
    int epfd;
    bool stop;
    struct watch **watches; /* indexed by fd */
    int nwatches;
    struct loop_timer *timers;
    struct watch *dead; /* deleted during a batch of events; freed after it */
    struct {
        loop_prepare_fn fn;
        void *ud;
    } prepare[LOOP_MAX_PREPARE];
    int nprepare;
};

double loop_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct loop *loop_new(void)
{
    struct loop *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (l->epfd < 0) {
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
    while (l->dead) {
        struct watch *w = l->dead;
        l->dead = w->next_dead;
        free(w);
    }
    while (l->timers) {
        struct loop_timer *t = l->timers;
        l->timers = t->next;
        free(t);
    }
    close(l->epfd);
    free(l);
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
    if (!w && !(w = calloc(1, sizeof(*w))))
        return -1;
    bool existed = l->watches[fd] != NULL;
    w->fd = fd;
    w->fn = fn;
    w->ud = ud;
    l->watches[fd] = w;
    struct epoll_event ev = {.events = events, .data.ptr = w};
    if (epoll_ctl(l->epfd, existed ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev) < 0) {
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
    struct epoll_event ev = {.events = events, .data.ptr = l->watches[fd]};
    return epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev);
}

void loop_del_fd(struct loop *l, int fd)
{
    if (fd < 0 || fd >= l->nwatches || !l->watches[fd])
        return;
    epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
    /* The watch may be in the current batch of events: mark it dead, free it later. */
    struct watch *w = l->watches[fd];
    w->fn = NULL;
    w->fd = -1;
    w->next_dead = l->dead;
    l->dead = w;
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

void loop_add_prepare(struct loop *l, loop_prepare_fn fn, void *ud)
{
    if (l->nprepare < LOOP_MAX_PREPARE) {
        l->prepare[l->nprepare].fn = fn;
        l->prepare[l->nprepare].ud = ud;
        l->nprepare++;
    }
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
    enum { MAXEV = 64 };
    struct epoll_event evs[MAXEV];
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
        if (l->stop)
            break;
        int n = epoll_wait(l->epfd, evs, MAXEV, (int)wait);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        for (int i = 0; i < n; i++) {
            struct watch *w = evs[i].data.ptr;
            if (w->fn)
                w->fn(w->fd, evs[i].events, w->ud);
        }
        while (l->dead) {
            struct watch *w = l->dead;
            l->dead = w->next_dead;
            free(w);
        }
        loop_run_timers(l);
    }
    l->stop = false; /* a later loop_run runs again (tests drive the loop step by step) */
    return 0;
}
