/* The live output of running actions (output.h): a bounded buffer per streamed action, the
 * `action_output` events, and GET /v1/actions/{id}/output. */
#include "engine/output.h"

#include "common/buf.h"
#include "common/utf8.h"
#include "engine/api.h"
#include "engine/base/action_state.h"
#include "engine/base/loop.h"
#include "engine/engine_internal.h"
#include "engine/events.h"
#include "engine/store/store.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Text goes on as JSON and C strings: NUL is replaced too, and each bad byte. */
#define OUTPUT_REPAIR (UTF8_REPAIR_NUL | UTF8_REPAIR_EACH_BYTE)
/* Events of one action come at most this often: a burst is one event, a lone line goes at
 * once (the operator sees it within a frame). */
#define OUTPUT_EVENT_GAP_MS 20.0

struct output;

/* A running action whose output streams. */
struct output_entry {
    struct output_entry *next;
    struct output *o;
    int64_t id;
    char session_id[40];
    struct buf text;  /* the newest OUTPUT_KEEP bytes at most */
    uint64_t dropped; /* text bytes before text's first (its offset) */
    unsigned char carry[4];
    size_t ncarry;       /* the start of a character a chunk cut in two */
    struct buf pending;  /* text not yet sent as an event */
    uint64_t pending_at; /* the offset of pending's first byte */
    struct loop_timer *flush;
    double last_event_ms;
};

/* A GET .../output?follow=1 reader. */
struct output_follower {
    struct output_follower *next;
    struct output *o;
    int64_t id;
    struct api_stream *out;
};

struct output {
    struct engine *eng;
    struct output_entry *entries;
    struct output_follower *followers;
};

static struct output_entry *output_find(struct output *o, int64_t id)
{
    for (struct output_entry *e = o ? o->entries : NULL; e; e = e->next)
        if (e->id == id)
            return e;
    return NULL;
}

static void output_send(struct api_stream *out, const char *type, json_t *data)
{
    char *msg = data ? api_sse_format(type, data) : NULL;
    if (msg)
        api_stream_write(out, msg, strlen(msg));
    free(msg);
}

static void output_send_text(struct api_stream *out, uint64_t offset, const char *text, size_t n)
{
    json_t *ev = json_pack("{s:I,s:s%}", "offset", (json_int_t)offset, "text", text, n);
    output_send(out, "output", ev);
    json_decref(ev);
}

/* ---- the events ---- */

static void output_publish(struct output_entry *e)
{
    if (e->flush) {
        loop_timer_cancel(e->o->eng->loop, e->flush);
        e->flush = NULL;
    }
    if (!e->pending.len)
        return;
    if (!events_listening(e->o->eng->events)) {
        /* Nobody follows the events: what would have gone to nobody is not built. */
        buf_reset(&e->pending);
        e->last_event_ms = loop_now_ms();
        return;
    }
    json_t *ev =
        json_pack("{s:I,s:s,s:I,s:s%}", "action", (json_int_t)e->id, "session", e->session_id,
                  "offset", (json_int_t)e->pending_at, "text", e->pending.data, e->pending.len);
    if (ev)
        events_publish(e->o->eng->events, "action_output", ev);
    json_decref(ev);
    buf_reset(&e->pending);
    e->last_event_ms = loop_now_ms();
}

static void output_on_flush(void *ud)
{
    struct output_entry *e = ud;
    e->flush = NULL;
    output_publish(e);
}

/* The first byte at or after p that starts a character (text is repaired UTF-8). */
static size_t output_char_start(const char *s, size_t len, size_t p)
{
    while (p < len && ((unsigned char)s[p] & 0xC0) == 0x80)
        p++;
    return p;
}

static void output_queue_event(struct output_entry *e, uint64_t offset, const char *t, size_t n)
{
    if (e->pending.len + n > OUTPUT_EVENT_MAX)
        output_publish(e);
    if (n > OUTPUT_EVENT_MAX) { /* one burst larger than an event: its end goes */
        size_t skip = output_char_start(t, n, n - OUTPUT_EVENT_MAX);
        t += skip;
        n -= skip;
        offset += skip;
    }
    if (!e->pending.len)
        e->pending_at = offset;
    if (buf_append(&e->pending, t, n) < 0)
        return;
    double since = loop_now_ms() - e->last_event_ms;
    if (since >= OUTPUT_EVENT_GAP_MS)
        output_publish(e);
    else if (!e->flush)
        e->flush = loop_timer_add(e->o->eng->loop, (long)(OUTPUT_EVENT_GAP_MS - since) + 1,
                                  output_on_flush, e);
}

/* ---- the entries ---- */

void output_begin(struct engine *eng, int64_t id, const char *session_id)
{
    struct output *o = eng->output;
    if (!o || output_find(o, id))
        return;
    struct output_entry *e = calloc(1, sizeof(*e));
    if (!e)
        return; /* its output is not shown live; the observation is unaffected */
    e->o = o;
    e->id = id;
    snprintf(e->session_id, sizeof(e->session_id), "%s", session_id);
    e->next = o->entries;
    o->entries = e;
}

void output_append(struct engine *eng, int64_t id, const char *data, size_t n)
{
    struct output_entry *e = output_find(eng->output, id);
    if (!e || !n)
        return;
    size_t total = e->ncarry + n, tail = 0;
    char *joined = malloc(total);
    if (!joined)
        return;
    memcpy(joined, e->carry, e->ncarry);
    memcpy(joined + e->ncarry, data, n);
    struct buf t = BUF_INIT;
    int rc = utf8_repair(&t, joined, total, OUTPUT_REPAIR | UTF8_REPAIR_KEEP_TAIL, &tail);
    if (tail > sizeof(e->carry))
        tail = 0;
    memcpy(e->carry, joined + total - tail, tail);
    e->ncarry = tail;
    free(joined);
    if (rc < 0 || !t.len) {
        buf_free(&t);
        return;
    }
    uint64_t offset = e->dropped + e->text.len;
    if (buf_append(&e->text, t.data, t.len) == 0 && e->text.len > OUTPUT_KEEP) {
        /* Keep three quarters, so trimming is not paid on every chunk. */
        size_t cut =
            output_char_start(e->text.data, e->text.len, e->text.len - OUTPUT_KEEP * 3 / 4);
        buf_consume(&e->text, cut);
        e->dropped += cut;
    }
    for (struct output_follower *f = e->o->followers; f; f = f->next)
        if (f->id == id)
            output_send_text(f->out, offset, t.data, t.len);
    output_queue_event(e, offset, t.data, t.len);
    buf_free(&t);
}

void output_flush(struct engine *eng, int64_t id)
{
    struct output_entry *e = eng->output ? output_find(eng->output, id) : NULL;
    if (e)
        output_publish(e);
}

static void output_entry_free(struct output_entry *e)
{
    if (e->flush)
        loop_timer_cancel(e->o->eng->loop, e->flush);
    buf_free(&e->text);
    buf_free(&e->pending);
    free(e);
}

/* {"state", "exit_code"} of the action as stored (a new reference; NULL when unknown). */
static json_t *output_end_event(struct engine *eng, int64_t id)
{
    json_t *a = store_action_get(eng->store, id);
    json_t *ev = json_pack("{s:O?,s:O?}", "state", json_object_get(a, "state"), "exit_code",
                           json_object_get(a, "exit_code"));
    json_decref(a);
    return ev;
}

void output_end(struct engine *eng, int64_t id)
{
    struct output *o = eng->output;
    if (!o)
        return;
    for (struct output_entry **pp = &o->entries; *pp; pp = &(*pp)->next)
        if ((*pp)->id == id) {
            struct output_entry *e = *pp;
            *pp = e->next;
            output_publish(e);
            output_entry_free(e);
            break;
        }
    json_t *ev = NULL;
    struct output_follower **pp = &o->followers;
    while (*pp) {
        struct output_follower *f = *pp;
        if (f->id != id) {
            pp = &f->next;
            continue;
        }
        if (!ev)
            ev = output_end_event(eng, id);
        *pp = f->next;
        output_send(f->out, "end", ev);
        api_stream_end(f->out);
        free(f);
    }
    json_decref(ev);
}

/* ---- GET /v1/actions/{id}/output ---- */

static void output_follower_closed(void *ud)
{
    struct output_follower *f = ud;
    for (struct output_follower **pp = &f->o->followers; *pp; pp = &(*pp)->next)
        if (*pp == f) {
            *pp = f->next;
            break;
        }
    free(f);
}

/* What a finished action printed: its observation's content (kept up to 1 MiB). */
static const char *output_stored_text(json_t *full, size_t *len)
{
    json_t *c = json_object_get(json_object_get(full, "observation"), "content");
    *len = json_is_string(c) ? json_string_length(c) : 0;
    return json_is_string(c) ? json_string_value(c) : "";
}

void output_route_get(struct api_req *r)
{
    struct engine *eng = api_req_engine(r);
    const char *p = api_req_param(r, 0);
    char *end = NULL;
    long long id = strtoll(p, &end, 10);
    if (*end || id <= 0) {
        api_reply_error(r, ERR_BAD_REQUEST, "an action id is a positive integer, not \"%.64s\"", p);
        return;
    }
    const char *fq = api_req_query(r, "follow");
    bool follow = fq && strcmp(fq, "1") == 0;
    json_t *full = store_action_get_full(eng->store, id);
    if (!full) {
        api_reply_error(r, ERR_NOT_FOUND, "no action %lld", id);
        return;
    }
    enum action_st st;
    bool final = action_st_parse(json_string_value(json_object_get(full, "state")), &st) == 0 &&
                 action_st_is_final(st);
    struct output_entry *e = output_find(eng->output, id);
    const char *text = e ? e->text.data : "";
    size_t len = e ? e->text.len : 0;
    uint64_t offset = e ? e->dropped : 0;
    if (!e && final)
        text = output_stored_text(full, &len);
    if (!follow) {
        json_t *reply = json_pack("{s:I,s:O,s:b,s:O,s:O?,s:I,s:s%}", "action", (json_int_t)id,
                                  "session", json_object_get(full, "session_id"), "running",
                                  e != NULL, "state", json_object_get(full, "state"), "exit_code",
                                  json_object_get(full, "exit_code"), "offset", (json_int_t)offset,
                                  "text", text ? text : "", len);
        json_decref(full);
        if (!reply)
            api_reply_error(r, ERR_INTERNAL, "out of memory");
        else
            api_reply_json(r, 200, reply);
        return;
    }
    struct output_follower *f = final ? NULL : calloc(1, sizeof(*f));
    if (!final && !f) {
        json_decref(full);
        api_reply_error(r, ERR_INTERNAL, "out of memory");
        return;
    }
    struct api_stream *out =
        api_stream_open(r, "text/event-stream", f ? output_follower_closed : NULL, f);
    if (!out) {
        free(f);
        json_decref(full);
        return;
    }
    if (len)
        output_send_text(out, offset, text, len);
    if (final) {
        json_t *ev = json_pack("{s:O?,s:O?}", "state", json_object_get(full, "state"), "exit_code",
                               json_object_get(full, "exit_code"));
        output_send(out, "end", ev);
        json_decref(ev);
        api_stream_end(out);
    } else {
        /* Running, or waiting for approval or the executor: what it prints comes as it
         * comes, and `end` when it is final (output_end). */
        f->o = eng->output;
        f->id = id;
        f->out = out;
        f->next = eng->output->followers;
        eng->output->followers = f;
    }
    json_decref(full);
}

int output_init(struct engine *eng)
{
    struct output *o = calloc(1, sizeof(*o));
    if (!o)
        return -1;
    o->eng = eng;
    eng->output = o;
    return 0;
}

void output_shutdown(struct engine *eng)
{
    struct output *o = eng->output;
    if (!o)
        return;
    while (o->followers) {
        struct output_follower *f = o->followers;
        o->followers = f->next;
        api_stream_end(f->out);
        free(f);
    }
    while (o->entries) {
        struct output_entry *e = o->entries;
        o->entries = e->next;
        output_entry_free(e);
    }
    free(o);
    eng->output = NULL;
}
