/* POST /execute_action: one action, queued behind the one that runs (action.h).
 *
 * With `?paddock_stream=1` (the engine asks it for shell commands) the reply is a stream of
 * frames instead of the observation alone, so the operator sees a command's output while it
 * runs: each frame is a header line "TYPE LENGTH\n" and LENGTH bytes. Type `o`: output as the
 * shell printed it (raw bytes, possibly cut inside a character); type `r`: the end, its
 * header "r STATUS LENGTH\n" and the observation's JSON, byte for byte the body a plain
 * request gets. Frames are written as the output comes (docs/protocol.md). The reply waits for
 * the first frame, and the first frame waits for the end up to --stream-hold (2 ms): bash writes
 * a quick command's output and its marker apart, so they come in two reads of the terminal,
 * and a reply started at the first cost the engine a wakeup, a chunk and a frame more. An
 * action that ends within the hold (a quick command) is answered whole, headers and frames
 * with their length, in one write; a longer one streams from the end of the hold. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "action.h"
#include "endpoint.h"
#include "executor.h"
#include "jalloc.h"

/* Output not yet written to a slow engine is dropped past this (the observation keeps all of
 * it); the stream then carries a note in place of what was dropped. */
#define EXECUTE_STREAM_MAX (4u * 1024 * 1024)
/* How much output the first frame's wait for the end (--stream-hold) holds at most. */
#define EXECUTE_FIRST_HOLD_MAX (16u * 1024)

/* A streamed request: the action, the frames not yet sent, and whether the end is in. */
struct execute_stream {
    struct request *rq;
    struct action_req *req;
    struct buf out;
    unsigned long long dropped;
    bool ended;         /* the `r` frame is in out */
    bool reader_parked; /* the reader suspended the connection for want of bytes */
    bool reply_parked;  /* no reply yet: the connection waits for the first frame */
    double hold_until;  /* as ex->held: the first frame waits for the end until then */
};

/* Resumes the connection whose action finished after it was suspended. */
static void on_action_done(struct action_req *req)
{
    endpoint_resume(req->owner);
}

static void free_action(void *state)
{
    action_req_free(state);
}

static enum MHD_Result reply_action(struct request *rq)
{
    struct action_req *req = rq->state;
    json_t *result = req->result;
    action_log(rq->ex, req);
    if (!result)
        return endpoint_reply_stopping(rq);
    req->result = NULL;
    return endpoint_reply_json(rq, MHD_HTTP_OK, result);
}

/* ---- the streamed reply ---- */

/* Actions run one at a time, so one stream at most holds its first frame: ex->held. */
static void hold_drop(struct execute_stream *st)
{
    if (st->rq && st->rq->ex->held == st)
        st->rq->ex->held = NULL;
}

static void stream_wake(struct execute_stream *st)
{
    hold_drop(st);
    if ((st->reader_parked || st->reply_parked) && st->rq) {
        st->reader_parked = st->reply_parked = false;
        endpoint_resume(st->rq);
    }
}

/* Output frames past the cap are dropped (and counted); the result frame (final) never is:
 * the observation is the reply, whatever the engine's reading pace. */
static void stream_frame(struct execute_stream *st, const char *head, const char *data, size_t n,
                         bool final)
{
    if (!final && st->out.len + n > EXECUTE_STREAM_MAX) {
        st->dropped += n;
        return;
    }
    if (st->dropped) {
        char note[96];
        int k = snprintf(note, sizeof note, "\r\n[paddock: %llu bytes of output dropped]\r\n",
                         st->dropped);
        st->dropped = 0;
        char h[32];
        snprintf(h, sizeof h, "o %d\n", k);
        buf_append_str(&st->out, h);
        buf_append(&st->out, note, (size_t)k);
    }
    buf_append_str(&st->out, head);
    buf_append(&st->out, data, n);
    if (final || !st->reply_parked || !st->rq || st->out.len > EXECUTE_FIRST_HOLD_MAX ||
        !(st->rq->ex->cfg.stream_hold > 0)) {
        stream_wake(st);
        return;
    }
    struct executor *ex = st->rq->ex;
    if (ex->held != st) { /* the first frame: it waits for the end a little */
        st->hold_until = evloop_now() + ex->cfg.stream_hold;
        ex->held = st;
    }
}

static void stream_on_output(struct action_req *req, const char *data, size_t n)
{
    struct execute_stream *st = req->owner;
    char head[32];
    snprintf(head, sizeof head, "o %zu\n", n);
    stream_frame(st, head, data, n, false);
}

static void stream_on_done(struct action_req *req)
{
    struct execute_stream *st = req->owner;
    unsigned status = 200;
    action_log(st->rq->ex, req);
    char *text = req->result ? jalloc_dumps(req->result, JSON_COMPACT) : NULL;
    if (!text) {
        status = MHD_HTTP_SERVICE_UNAVAILABLE;
        text = strdup("{\"detail\":\"The executor is shutting down.\"}");
    }
    size_t n = text ? strlen(text) : 0;
    char head[48];
    snprintf(head, sizeof head, "r %u %zu\n", status, n);
    stream_frame(st, head, text ? text : "", n, true);
    st->ended = true;
    free(text);
    stream_wake(st);
}

/* The connection went away first: the action runs on and frees itself when done. */
static void orphan_done(struct action_req *req)
{
    action_log(req->orphan_of, req);
    action_req_free(req);
}

static void free_stream(void *state)
{
    struct execute_stream *st = state;
    hold_drop(st);
    if (st->ended || !st->req)
        action_req_free(st->req);
    else {
        st->req->on_output = NULL;
        st->req->done = orphan_done;
        st->req->orphan_of = st->rq->ex;
        st->req->owner = NULL;
    }
    buf_free(&st->out);
    free(st);
}

static ssize_t stream_read(void *cls, uint64_t pos, char *out, size_t max)
{
    struct execute_stream *st = cls;
    (void)pos;
    if (st->out.len == 0) {
        if (st->ended)
            return MHD_CONTENT_READER_END_OF_STREAM;
        /* Nothing to send: park until output or the end comes. */
        st->reader_parked = true;
        endpoint_suspend(st->rq);
        return 0;
    }
    size_t n = st->out.len < max ? st->out.len : max;
    memcpy(out, st->out.data, n);
    buf_consume(&st->out, n);
    return (ssize_t)n;
}

/* The reply, once there is a frame to send (or the executor stops): the whole body when the
 * action has ended, else a chunked stream of the frames as they come. */
static enum MHD_Result stream_reply(struct request *rq)
{
    struct execute_stream *st = rq->state;
    struct MHD_Response *resp;
    if (st->ended) {
        resp = MHD_create_response_from_buffer(st->out.len, st->out.data ? st->out.data : "",
                                               st->out.data ? MHD_RESPMEM_MUST_FREE
                                                            : MHD_RESPMEM_PERSISTENT);
        if (resp)
            st->out = (struct buf)BUF_INIT; /* the response's now */
    } else {
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, stream_read, st, NULL);
    }
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/x-paddock-frames");
    return endpoint_reply_response(rq, MHD_HTTP_OK, resp);
}

static enum MHD_Result start_stream(struct request *rq, struct action_req *req)
{
    struct execute_stream *st = calloc(1, sizeof *st);
    if (!st) {
        action_req_free(req);
        return endpoint_reply_detail(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "Out of memory");
    }
    st->rq = rq;
    st->req = req;
    req->owner = st;
    req->done = stream_on_done;
    req->on_output = stream_on_output;
    rq->state = st;
    rq->state_free = free_stream;
    rq->ex->last_action_at = evloop_now();
    if (action_submit(rq->ex, req))
        stream_on_done(req);
    if (st->out.len || st->ended)
        return stream_reply(rq);
    /* Nothing to send yet: the first frame resumes it (stream_wake). */
    st->reply_parked = true;
    endpoint_suspend(rq);
    return MHD_YES;
}

int endpoint_execute_hold_ms(const struct executor *ex)
{
    if (!ex->held)
        return -1;
    double ms = (ex->held->hold_until - evloop_now()) * 1e3;
    return ms <= 0 ? 0 : (int)ms + 1; /* epoll counts whole ms: never wake before it */
}

void endpoint_execute_release(struct executor *ex, bool all)
{
    if (ex->held && (all || ex->held->hold_until <= evloop_now()))
        stream_wake(ex->held);
}

enum MHD_Result endpoint_execute(struct request *rq)
{
    if (rq->state && rq->state_free == free_stream) /* resumed: a frame came, or a stop */
        return rq->replied ? MHD_YES : stream_reply(rq);
    if (rq->state) /* resumed: the action has its result (or the executor gave up on it) */
        return rq->replied ? MHD_YES : reply_action(rq);
    enum MHD_Result rc;
    json_t *body = endpoint_body_object(rq, &rc);
    if (!body)
        return rc;
    struct buf err = BUF_INIT;
    struct action_req *req = action_req_new(body, &err);
    json_decref(body);
    if (!req) {
        rc = endpoint_reply_detail(rq, MHD_HTTP_BAD_REQUEST, "%s",
                                   err.data ? err.data : "Invalid action");
        buf_free(&err);
        return rc;
    }
    const char *diff = endpoint_query(rq, "paddock_diff");
    req->want_diff = diff && strcmp(diff, "1") == 0;
    const char *stream = endpoint_query(rq, "paddock_stream");
    if (stream && strcmp(stream, "1") == 0)
        return start_stream(rq, req);
    req->done = on_action_done;
    req->owner = rq;
    rq->state = req;
    rq->state_free = free_action;
    rq->ex->last_action_at = evloop_now();
    if (action_submit(rq->ex, req))
        return reply_action(rq);
    /* One action at a time: this connection sleeps until its result is there. */
    endpoint_suspend(rq);
    return MHD_YES;
}
