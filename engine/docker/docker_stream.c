/* Docker's follow streams (events, stats, logs), decoded as they arrive on the engine loop. */
#include "engine/base/util.h"
#include "engine/docker/docker.h"
#include "engine/docker/docker_internal.h"
#include "engine/docker/http.h"
#include "engine/docker/jsonl.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum stream_kind { STREAM_JSON, STREAM_FRAMED, STREAM_RAW };

struct docker_stream {
    struct docker *d;
    struct docker_req *req;
    enum stream_kind kind;
    docker_item_fn on_item;
    docker_done_fn on_end;
    void *ud;
    struct jsonl lines;
    struct docker_demux demux; /* framed logs */
};

static void stream_free(struct docker_stream *st)
{
    jsonl_free(&st->lines);
    free(st);
}

static int stream_on_line(json_t *obj, const char *line, size_t len, void *ud)
{
    struct docker_stream *st = ud;
    if (!obj)
        return 0; /* not JSON: Docker never sends that on these streams; skip it */
    struct docker_item it = {.json = obj};
    return st->on_item(&it, st->ud);
}

static int stream_on_frame(const char *p, size_t n, int fd, void *ud)
{
    struct docker_stream *st = ud;
    struct docker_item it = {.data = p, .len = n, .fd = fd};
    return st->on_item(&it, st->ud);
}

static int stream_on_data(const char *p, size_t n, void *ud)
{
    struct docker_stream *st = ud;
    switch (st->kind) {
    case STREAM_JSON:
        return jsonl_feed(&st->lines, p, n, stream_on_line, st);
    case STREAM_FRAMED:
        return docker_demux_feed(&st->demux, p, n, stream_on_frame, st);
    case STREAM_RAW: {
        struct docker_item it = {.data = p, .len = n, .fd = 1};
        return st->on_item(&it, st->ud);
    }
    }
    return -1;
}

static void stream_on_done(const struct http_result *r, void *ud)
{
    struct docker_stream *st = ud;
    /* An error reply (404 for a removed container) comes buffered: pass Docker's message on. */
    struct docker_reply rep = {.status = r->status, .message = r->error ? r->error : ""};
    if (r->status >= 300 && r->len) {
        rep.json = json_loadb(r->body, r->len, 0, NULL);
        const char *m = json_string_value(json_object_get(rep.json, "message"));
        rep.message = m ? m : r->body;
    }
    st->req = NULL;
    if (st->on_end)
        st->on_end(&rep, st->ud);
    json_decref(rep.json);
    stream_free(st);
}

static struct docker_stream *stream_open(struct docker *d, const char *path, enum stream_kind kind,
                                         docker_item_fn on_item, docker_done_fn on_end, void *ud)
{
    struct docker_stream *st = calloc(1, sizeof(*st));
    if (!st)
        return NULL;
    st->d = d;
    st->kind = kind;
    st->on_item = on_item;
    st->on_end = on_end;
    st->ud = ud;
    struct http_request req = {.method = "GET", .on_data = stream_on_data};
    st->req = docker_req_start(d, path, &req, stream_on_done, st);
    if (!st->req) {
        stream_free(st);
        return NULL;
    }
    return st;
}

void docker_stream_close(struct docker *d, struct docker_stream *st)
{
    if (!st)
        return;
    docker_req_cancel(d, st->req);
    stream_free(st);
}

struct docker_stream *docker_events_follow(struct docker *d, const char *label,
                                           docker_item_fn on_item, docker_done_fn on_end, void *ud)
{
    return docker_events_follow_since(d, label, 0, on_item, on_end, ud);
}

struct docker_stream *docker_events_follow_since(struct docker *d, const char *label, double since,
                                                 docker_item_fn on_item, docker_done_fn on_end,
                                                 void *ud)
{
    char *e = docker_label_filter(label, "container");
    char since_q[48] = "";
    if (since > 0)
        snprintf(since_q, sizeof(since_q), "&since=%.9f", since);
    char *path = e ? util_strdupf("/events?filters=%s%s", e, since_q) : NULL;
    struct docker_stream *st = path ? stream_open(d, path, STREAM_JSON, on_item, on_end, ud) : NULL;
    free(e);
    free(path);
    return st;
}

static struct docker_stream *stream_open_id(struct docker *d, const char *fmt, const char *id,
                                            enum stream_kind kind, docker_item_fn on_item,
                                            docker_done_fn on_end, void *ud)
{
    char *e = docker_escape(id);
    char *path = e ? util_strdupf(fmt, e) : NULL;
    struct docker_stream *st = path ? stream_open(d, path, kind, on_item, on_end, ud) : NULL;
    free(e);
    free(path);
    return st;
}

struct docker_stream *docker_stats_follow(struct docker *d, const char *id, docker_item_fn on_item,
                                          docker_done_fn on_end, void *ud)
{
    return stream_open_id(d, "/containers/%s/stats?stream=1", id, STREAM_JSON, on_item, on_end, ud);
}

struct docker_stream *docker_logs_follow(struct docker *d, const char *id, int tail, int timestamps,
                                         int tty, docker_item_fn on_item, docker_done_fn on_end,
                                         void *ud)
{
    char fmt[128], n[16] = "all";
    if (tail >= 0)
        snprintf(n, sizeof(n), "%d", tail);
    snprintf(fmt, sizeof(fmt), "/containers/%%s/logs?follow=1&stdout=1&stderr=1&tail=%s%s", n,
             timestamps ? "&timestamps=1" : "");
    return stream_open_id(d, fmt, id, tty ? STREAM_RAW : STREAM_FRAMED, on_item, on_end, ud);
}
