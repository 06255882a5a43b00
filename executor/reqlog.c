/* The per-request log lines, a burst a second (reqlog.h). */
#include "reqlog.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

/* The summary of a second that held lines back: on stdout, with a count of the failures
 * (their warnings went to stderr when written one by one). */
static void reqlog_summarize(struct reqlog *g)
{
    if (!g->held)
        return;
    char line[256];
    int n = snprintf(line, sizeof line,
                     "paddock-executor: %lu more requests in the last second, %lu of them "
                     "failed (more than %d a second: not logged one by one)\n",
                     g->held, g->held_failed, REQLOG_BURST);
    if (n > 0)
        (void)!write(g->out, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    g->held = g->held_failed = 0;
}

static void reqlog_on_timer(struct evloop_watch *w, uint32_t events)
{
    (void)events;
    struct reqlog *g = EVLOOP_CONTAINER_OF(w, struct reqlog, timer);
    evloop_timer_ack(w);
    g->armed = false;
    reqlog_summarize(g);
    /* A new second begins at the summary: the next lines are written one by one again. */
    g->window = evloop_now();
    g->lines = 0;
}

int reqlog_init(struct reqlog *g, struct evloop *l, int out)
{
    *g = (struct reqlog){.loop = l, .timer.fd = -1, .window = evloop_now(), .out = out};
    return evloop_timer_open(l, &g->timer, reqlog_on_timer);
}

void reqlog_line(struct reqlog *g, int fd, bool failed, const char *fmt, ...)
{
    double now = evloop_now();
    if (!g->armed && now - g->window >= 1.0) {
        g->window = now;
        g->lines = 0;
    }
    if ((g->lines >= REQLOG_BURST || g->armed) && g->timer.fd >= 0) {
        g->held++;
        g->held_failed += failed;
        if (!g->armed) {
            evloop_timer_at(&g->timer, g->window + 1.0);
            g->armed = true;
        }
        return;
    }
    g->lines++;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof line - 1 ? (size_t)n : sizeof line - 2;
    line[len++] = '\n';
    (void)!write(fd, line, len);
}

void reqlog_close(struct reqlog *g)
{
    if (!g->loop)
        return; /* never opened */
    reqlog_summarize(g);
    if (g->timer.fd >= 0)
        evloop_timer_close(g->loop, &g->timer);
    g->timer.fd = -1;
    g->armed = false;
}
