/* common/evloop.c: ready descriptors reach their handlers, a watch deleted inside a batch gets
 * none of its pending events, deadline timers fire and disarm. */
#include "common/evloop.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

struct pipe_watch {
    struct evloop_watch w;
    int wr;
    int calls;
    struct evloop *loop;
    struct pipe_watch *other; /* deleted by this one's handler, when set */
};

static void on_readable(struct evloop_watch *w, uint32_t events)
{
    struct pipe_watch *p = EVLOOP_CONTAINER_OF(w, struct pipe_watch, w);
    assert_true(events & EPOLLIN);
    p->calls++;
    char c;
    assert_int_equal(read(w->fd, &c, 1), 1);
    if (p->other)
        evloop_del(p->loop, &p->other->w);
}

static void pipe_watch_open(struct evloop *l, struct pipe_watch *p)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    memset(p, 0, sizeof(*p));
    p->w.fd = fds[0];
    p->w.fn = on_readable;
    p->wr = fds[1];
    p->loop = l;
    assert_int_equal(evloop_add(l, &p->w, EPOLLIN), 0);
}

static void pipe_watch_close(struct pipe_watch *p)
{
    close(p->w.fd);
    close(p->wr);
}

static void test_evloop_dispatch(void **state)
{
    struct evloop *l = evloop_new();
    assert_non_null(l);
    struct pipe_watch a;
    pipe_watch_open(l, &a);
    assert_int_equal(evloop_run_once(l, 0), 0); /* nothing ready */
    assert_int_equal(a.calls, 0);
    assert_int_equal(write(a.wr, "x", 1), 1);
    assert_int_equal(evloop_run_once(l, -1), 0);
    assert_int_equal(a.calls, 1);
    /* not watched for input any more: the byte waits */
    assert_int_equal(evloop_mod(l, &a.w, 0), 0);
    assert_int_equal(write(a.wr, "y", 1), 1);
    assert_int_equal(evloop_run_once(l, 0), 0);
    assert_int_equal(a.calls, 1);
    assert_int_equal(evloop_mod(l, &a.w, EPOLLIN), 0);
    assert_int_equal(evloop_run_once(l, -1), 0);
    assert_int_equal(a.calls, 2);
    pipe_watch_close(&a);
    evloop_free(l);
}

static void test_evloop_delete_inside_a_batch(void **state)
{
    struct evloop *l = evloop_new();
    assert_non_null(l);
    struct pipe_watch a, b;
    pipe_watch_open(l, &a);
    pipe_watch_open(l, &b);
    a.other = &b;
    b.other = &a;
    /* both ready in one batch: whichever runs first deletes the other, which must not run */
    assert_int_equal(write(a.wr, "x", 1), 1);
    assert_int_equal(write(b.wr, "x", 1), 1);
    assert_int_equal(evloop_run_once(l, -1), 0);
    assert_int_equal(a.calls + b.calls, 1);
    pipe_watch_close(&a);
    pipe_watch_close(&b);
    evloop_free(l);
}

static int fired;

static void on_timer(struct evloop_watch *w, uint32_t events)
{
    evloop_timer_ack(w);
    fired++;
}

static void test_evloop_timer(void **state)
{
    struct evloop *l = evloop_new();
    assert_non_null(l);
    struct evloop_watch t;
    assert_int_equal(evloop_timer_open(l, &t, on_timer), 0);
    fired = 0;
    evloop_timer_at(&t, evloop_now() - 1); /* already past: at once */
    double deadline = evloop_now() + 10;
    while (!fired && evloop_now() < deadline)
        assert_int_equal(evloop_run_once(l, 1000), 0);
    assert_int_equal(fired, 1);
    /* acknowledged: not ready again */
    assert_int_equal(evloop_run_once(l, 0), 0);
    assert_int_equal(fired, 1);
    /* armed, then disarmed before it falls due */
    evloop_timer_at(&t, evloop_now() + 3600);
    evloop_timer_at(&t, INFINITY);
    assert_int_equal(evloop_run_once(l, 0), 0);
    assert_int_equal(fired, 1);
    /* a deadline no time_t holds disarms too (it was converted unchecked, refused by the
     * kernel, and left the earlier deadline armed) */
    struct itimerspec its;
    evloop_timer_at(&t, evloop_now() + 3600);
    evloop_timer_at(&t, 1e300);
    assert_int_equal(timerfd_gettime(t.fd, &its), 0);
    assert_true(its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0);
    evloop_timer_at(&t, NAN); /* not a time: at once, as a past one */
    deadline = evloop_now() + 10;
    while (fired < 2 && evloop_now() < deadline)
        assert_int_equal(evloop_run_once(l, 1000), 0);
    assert_int_equal(fired, 2);
    evloop_timer_close(l, &t);
    assert_int_equal(t.fd, -1);
    evloop_timer_close(l, &t); /* closing twice is harmless */
    evloop_free(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_evloop_dispatch),
        cmocka_unit_test(test_evloop_delete_inside_a_batch),
        cmocka_unit_test(test_evloop_timer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
