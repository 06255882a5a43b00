/* Docker's events stream, open for the engine's lifetime: no polling. When it ends the daemon
 * is pinged; if it does not answer, live sessions are marked disconnected and /_ping is tried
 * again with exponential backoff; once it answers, the stream opens again and the sessions are
 * reconciled with the containers. */
#include "engine/monitor.h"

#include "engine/base/loop.h"
#include "engine/base/util.h"
#include "engine/driver.h"
#include "engine/engine_internal.h"
#include "engine/session.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MONITOR_BACKOFF_FIRST_MS 250
#define MONITOR_BACKOFF_MAX_MS 30000
/* A stream that ends sooner than this after opening does not reset the backoff (a daemon that
 * refuses the stream must not make us spin). */
#define MONITOR_STABLE_MS 5000.0

struct monitor {
    struct engine *eng;
    struct sandbox_stream *events;
    struct loop_timer *timer;
    long backoff_ms;
    double opened_at;
    bool ping_in_flight;
    bool freed; /* monitor_free came while a ping was in flight: its reply frees */
};

static void monitor_open(struct monitor *m);

static int monitor_on_event(const struct sandbox_item *it, void *ud)
{
    struct monitor *m = ud;
    session_on_sandbox_event(m->eng, it->json);
    return 0;
}

static void monitor_retry_later(struct monitor *m);

static void monitor_on_ping(const struct sandbox_reply *r, void *ud)
{
    struct monitor *m = ud;
    m->ping_in_flight = false;
    if (m->freed) {
        free(m);
        return;
    }
    if (r->status == 200) {
        engine_note_docker(m->eng, true, NULL);
        monitor_open(m);
        return;
    }
    engine_note_docker(m->eng, r->status >= 0, r->status < 0 ? r->message : "");
    char *why =
        util_strdupf("Docker daemon not reachable at %s (%s)", m->eng->driver->address(m->eng),
                     r->status < 0 ? r->message : "unexpected /_ping answer");
    session_mark_disconnected(m->eng, why ? why : "Docker daemon not reachable");
    free(why);
    monitor_retry_later(m);
}

static void monitor_ping(void *ud)
{
    struct monitor *m = ud;
    m->timer = NULL;
    m->ping_in_flight = true;
    if (m->eng->driver->ping(m->eng, monitor_on_ping, m) < 0) {
        m->ping_in_flight = false;
        monitor_retry_later(m);
    }
}

static void monitor_retry_later(struct monitor *m)
{
    m->backoff_ms = m->backoff_ms ? m->backoff_ms * 2 : MONITOR_BACKOFF_FIRST_MS;
    if (m->backoff_ms > MONITOR_BACKOFF_MAX_MS)
        m->backoff_ms = MONITOR_BACKOFF_MAX_MS;
    m->timer = loop_timer_add(m->eng->loop, m->backoff_ms, monitor_ping, m);
}

static void monitor_on_end(const struct sandbox_reply *r, void *ud)
{
    struct monitor *m = ud;
    m->events = NULL;
    if (m->eng->stopping)
        return;
    if (loop_now_ms() - m->opened_at < MONITOR_STABLE_MS) {
        monitor_retry_later(m);
        return;
    }
    m->backoff_ms = 0;
    /* Ask at once: a daemon that is still there gets its stream back without any session
     * being marked. */
    monitor_ping(m);
}

static void monitor_open(struct monitor *m)
{
    char *label = util_strdupf("paddock.engine=%s", m->eng->engine_id);
    m->opened_at = loop_now_ms();
    m->events =
        label ? m->eng->driver->events_follow(m->eng, label, monitor_on_event, monitor_on_end, m)
              : NULL;
    free(label);
    if (!m->events) {
        monitor_retry_later(m);
        return;
    }
    /* The stream first, then the list: a change after the list is an event we get. */
    session_reconcile(m->eng);
}

struct monitor *monitor_start(struct engine *eng)
{
    struct monitor *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->eng = eng;
    monitor_open(m);
    return m;
}

void monitor_free(struct monitor *m)
{
    if (!m)
        return;
    if (m->events)
        m->eng->driver->stream_close(m->eng, m->events);
    if (m->timer)
        loop_timer_cancel(m->eng->loop, m->timer);
    if (m->ping_in_flight)
        m->freed = true;
    else
        free(m);
}
