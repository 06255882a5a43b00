#include "common/evloop.h"
#include "common/timeconv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define EVLOOP_BATCH 32

struct evloop {
    int epfd;
    struct epoll_event batch[EVLOOP_BATCH];
    int batch_len, batch_pos;
};

struct evloop *evloop_new(void)
{
    struct evloop *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (l->epfd < 0) {
        free(l);
        return NULL;
    }
    return l;
}

void evloop_free(struct evloop *l)
{
    if (!l)
        return;
    close(l->epfd);
    free(l);
}

static int evloop_ctl(struct evloop *l, int op, struct evloop_watch *w, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = w};
    return epoll_ctl(l->epfd, op, w->fd, &ev);
}

int evloop_add(struct evloop *l, struct evloop_watch *w, uint32_t events)
{
    return evloop_ctl(l, EPOLL_CTL_ADD, w, events);
}

int evloop_mod(struct evloop *l, struct evloop_watch *w, uint32_t events)
{
    return evloop_ctl(l, EPOLL_CTL_MOD, w, events);
}

void evloop_del(struct evloop *l, struct evloop_watch *w)
{
    epoll_ctl(l->epfd, EPOLL_CTL_DEL, w->fd, NULL);
    for (int i = l->batch_pos; i < l->batch_len; i++)
        if (l->batch[i].data.ptr == w)
            l->batch[i].data.ptr = NULL;
}

int evloop_run_once(struct evloop *l, int timeout_ms)
{
    int n = epoll_wait(l->epfd, l->batch, EVLOOP_BATCH, timeout_ms);
    if (n < 0)
        return errno == EINTR ? 0 : -1;
    l->batch_len = n;
    for (l->batch_pos = 0; l->batch_pos < l->batch_len;) {
        struct epoll_event *ev = &l->batch[l->batch_pos++];
        struct evloop_watch *w = ev->data.ptr;
        if (w)
            w->fn(w, ev->events);
    }
    l->batch_len = l->batch_pos = 0;
    return 0;
}

double evloop_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int evloop_timer_open(struct evloop *l, struct evloop_watch *w, evloop_fn fn)
{
    w->fn = fn;
    w->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (w->fd < 0)
        return -1;
    if (evloop_add(l, w, EPOLLIN) < 0) {
        int saved = errno;
        close(w->fd);
        w->fd = -1;
        errno = saved;
        return -1;
    }
    return 0;
}

void evloop_timer_close(struct evloop *l, struct evloop_watch *w)
{
    if (w->fd < 0)
        return;
    evloop_del(l, w);
    close(w->fd);
    w->fd = -1;
}

void evloop_timer_at(struct evloop_watch *w, double when)
{
    struct itimerspec its = {0};
    time_t sec;
    if (!(when > 0))
        when = 0; /* a time already past, or NaN: at once */
    /* Past what a time_t holds (infinity, 1e300) it never comes: left disarmed. */
    if (timeconv_to_time(when, &sec) == 0) {
        its.it_value.tv_sec = sec;
        its.it_value.tv_nsec = (long)((when - floor(when)) * 1e9);
        if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
            its.it_value.tv_nsec = 1; /* zero would disarm */
    }
    timerfd_settime(w->fd, TFD_TIMER_ABSTIME, &its, NULL);
}

void evloop_timer_ack(struct evloop_watch *w)
{
    uint64_t ticks;
    ssize_t ignored = read(w->fd, &ticks, sizeof ticks);
    (void)ignored;
}
