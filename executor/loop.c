#include "loop.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#define LOOP_BATCH 32

struct loop {
    int epfd;
    struct epoll_event batch[LOOP_BATCH];
    int batch_len, batch_pos;
};

struct loop *loop_new(void)
{
    struct loop *l = calloc(1, sizeof *l);
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
    close(l->epfd);
    free(l);
}

static int loop_ctl(struct loop *l, int op, struct loop_watch *w, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = w};
    return epoll_ctl(l->epfd, op, w->fd, &ev);
}

int loop_add(struct loop *l, struct loop_watch *w, uint32_t events)
{
    return loop_ctl(l, EPOLL_CTL_ADD, w, events);
}

int loop_mod(struct loop *l, struct loop_watch *w, uint32_t events)
{
    return loop_ctl(l, EPOLL_CTL_MOD, w, events);
}

void loop_del(struct loop *l, struct loop_watch *w)
{
    epoll_ctl(l->epfd, EPOLL_CTL_DEL, w->fd, NULL);
    for (int i = l->batch_pos; i < l->batch_len; i++)
        if (l->batch[i].data.ptr == w)
            l->batch[i].data.ptr = NULL;
}

int loop_run_once(struct loop *l, int timeout_ms)
{
    int n = epoll_wait(l->epfd, l->batch, LOOP_BATCH, timeout_ms);
    if (n < 0)
        return errno == EINTR ? 0 : -1;
    l->batch_len = n;
    for (l->batch_pos = 0; l->batch_pos < l->batch_len;) {
        struct epoll_event *ev = &l->batch[l->batch_pos++];
        struct loop_watch *w = ev->data.ptr;
        if (w)
            w->fn(w, ev->events);
    }
    l->batch_len = l->batch_pos = 0;
    return 0;
}

double loop_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
