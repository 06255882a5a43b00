/* Logs: the live follow stream as server-sent events, a tail on request, and the tail kept in
 * the store so a past session's log can be read after its container is gone. */
#include "engine/logs.h"

#include "common/buf.h"
#include "common/utf8.h"
#include "engine/api.h"
#include "engine/base/session_state.h"
#include "engine/base/util.h"
#include "engine/driver.h"
#include "engine/driver_local.h"
#include "engine/engine_internal.h"
#include "engine/store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOGS_DEFAULT_TAIL 200
#define LOGS_MAX_TAIL 100000
/* Log text goes on as JSON and C strings: NUL is replaced too, and each bad byte. */
#define LOGS_REPAIR (UTF8_REPAIR_NUL | UTF8_REPAIR_EACH_BYTE)

struct logs_follow {
    struct engine *eng;
    struct api_stream *out;
    struct sandbox_stream *in;
    /* Per stream, the start of a UTF-8 sequence a chunk cut in two. */
    unsigned char carry[3][4];
    size_t ncarry[3];
};

static void logs_follow_free(struct logs_follow *f)
{
    free(f);
}

static void logs_send(struct logs_follow *f, const char *type, json_t *data)
{
    char *msg = api_sse_format(type, data);
    if (msg)
        api_stream_write(f->out, msg, strlen(msg));
    free(msg);
}

static int logs_on_item(const struct sandbox_item *it, void *ud)
{
    struct logs_follow *f = ud;
    int fd = it->fd == 2 ? 2 : 1;
    size_t n = f->ncarry[fd] + it->len;
    char *joined = malloc(n ? n : 1);
    if (!joined)
        return -1;
    memcpy(joined, f->carry[fd], f->ncarry[fd]);
    memcpy(joined + f->ncarry[fd], it->data, it->len);
    size_t tail = 0;
    struct buf text = BUF_INIT;
    int rc = utf8_repair(&text, joined, n, LOGS_REPAIR | UTF8_REPAIR_KEEP_TAIL, &tail);
    if (tail > sizeof(f->carry[fd]))
        tail = 0;
    memcpy(f->carry[fd], joined + n - tail, tail);
    f->ncarry[fd] = tail;
    free(joined);
    if (rc == 0 && text.len) {
        json_t *ev = json_pack("{s:i,s:s%}", "fd", fd, "text", text.data, text.len);
        logs_send(f, "log", ev);
        json_decref(ev);
    }
    buf_free(&text);
    return rc;
}

/* Docker ended the stream: the container stopped or went away, or the daemon did. */
static void logs_on_end(const struct sandbox_reply *r, void *ud)
{
    struct logs_follow *f = ud;
    const char *why = r->status == 200 ? "the container stopped"
                      : r->status == 404
                          ? "the container is gone"
                          : (r->message && *r->message ? r->message : "the log stream ended");
    json_t *ev = json_pack("{s:s}", "reason", why);
    logs_send(f, "end", ev);
    json_decref(ev);
    api_stream_end(f->out);
    logs_follow_free(f);
}

/* The client went away: stop reading from Docker. */
static void logs_on_close(void *ud)
{
    struct logs_follow *f = ud;
    f->eng->driver->stream_close(f->eng, f->in);
    logs_follow_free(f);
}

struct logs_tail_req {
    struct api_req *r;
    char *session_id;
};

static void logs_reply_stored(struct api_req *r, const char *session_id)
{
    json_t *t = store_log_tail_get(api_req_engine(r)->store, session_id);
    if (!t) {
        api_reply_error(r, ERR_NOT_FOUND, "session %s has no container and no stored log tail",
                        session_id);
        return;
    }
    json_object_set_new(t, "source", json_string("stored"));
    api_reply_json(r, 200, t);
}

static void logs_on_tail(const struct sandbox_reply *rep, void *ud)
{
    struct logs_tail_req *q = ud;
    if (rep->status == 200) {
        struct buf text = BUF_INIT;
        if (utf8_repair(&text, rep->message, strlen(rep->message), LOGS_REPAIR, NULL) < 0)
            buf_reset(&text);
        api_reply_json(q->r, 200,
                       json_pack("{s:s%,s:s}", "text", text.data ? text.data : "", text.len,
                                 "source", "container"));
        buf_free(&text);
    } else if (rep->status == 404) {
        logs_reply_stored(q->r, q->session_id);
    } else {
        api_reply_error(q->r, rep->status < 0 ? ERR_DOCKER_UNAVAILABLE : ERR_DOCKER_ERROR,
                        "cannot read the container's log: %s", rep->message);
    }
    free(q->session_id);
    free(q);
}

static long logs_query_long(struct api_req *r, const char *key, long def, long max, bool *bad)
{
    const char *v = api_req_query(r, key);
    if (!v || !*v)
        return def;
    char *end;
    long n = strtol(v, &end, 10);
    if (*end || n < 0 || n > max) {
        *bad = true;
        return def;
    }
    return n;
}

void logs_route_get(struct api_req *r)
{
    struct engine *eng = api_req_engine(r);
    const char *id = api_req_param(r, 0);
    json_t *s = api_stored_session(r);
    if (!s)
        return;
    bool bad = false;
    long tail = logs_query_long(r, "tail", LOGS_DEFAULT_TAIL, LOGS_MAX_TAIL, &bad);
    long follow = logs_query_long(r, "follow", 0, 1, &bad);
    long stamps = logs_query_long(r, "timestamps", 0, 1, &bad);
    if (bad) {
        json_decref(s);
        api_reply_error(r, ERR_BAD_REQUEST, "tail must be 0..%d, follow and timestamps 0 or 1",
                        LOGS_MAX_TAIL);
        return;
    }
    const char *cid = json_string_value(json_object_get(s, "container_id"));
    const char *state = json_string_value(json_object_get(s, "state"));
    enum session_st st;
    bool gone = !cid || (session_st_parse(state, &st) == 0 && st == SESSION_DELETED);
    if (gone) {
        json_decref(s);
        if (follow)
            api_reply_error(r, ERR_CONFLICT,
                            "session %s has no container to follow; GET without follow=1 "
                            "gives its stored log tail",
                            id);
        else
            logs_reply_stored(r, id);
        return;
    }
    if (follow && local_driver_for(eng, cid) == &driver_local) {
        json_decref(s);
        api_reply_error(r, ERR_NOT_IMPLEMENTED,
                        "following logs is not available on the local backend (without follow: "
                        "the executor's own output)");
        return;
    }
    if (follow) {
        struct logs_follow *f = calloc(1, sizeof(*f));
        if (!f) {
            json_decref(s);
            api_reply_error(r, ERR_INTERNAL, "out of memory");
            return;
        }
        f->eng = eng;
        f->in = local_driver_for(eng, cid)->logs_follow(eng, cid, (int)tail, (int)stamps,
                                                        logs_on_item, logs_on_end, f);
        json_decref(s);
        if (!f->in) {
            free(f);
            api_reply_error(r, ERR_INTERNAL, "cannot start a request");
            return;
        }
        f->out = api_stream_open(r, "text/event-stream", logs_on_close, f);
        if (!f->out) {
            eng->driver->stream_close(eng, f->in);
            free(f);
        }
        return;
    }
    struct logs_tail_req *q = calloc(1, sizeof(*q));
    if (q) {
        q->r = r;
        q->session_id = strdup(id);
    }
    if (!q || !q->session_id ||
        local_driver_for(eng, cid)->logs_tail(eng, cid, (int)tail, logs_on_tail, q) < 0) {
        if (q)
            free(q->session_id);
        free(q);
        api_reply_error(r, ERR_INTERNAL, "cannot start a request");
    }
    json_decref(s);
}

/* ---- the tail kept at the end ---- */

struct logs_save {
    struct engine *eng;
    char *session_id;
    logs_saved_fn done;
    void *ud;
};

static void logs_on_save_tail(const struct sandbox_reply *rep, void *ud)
{
    struct logs_save *op = ud;
    const char *error = NULL;
    char *err = NULL;
    if (rep->status == 200) {
        size_t total = strlen(rep->message);
        const char *p = rep->message;
        size_t n = total;
        if (n > LOGS_TAIL_BYTES) { /* keep the end, from a line start when there is one */
            p += n - LOGS_TAIL_BYTES;
            n = LOGS_TAIL_BYTES;
            const char *nl = memchr(p, '\n', n);
            if (nl && (size_t)(nl - p) < n / 4) {
                n -= (size_t)(nl + 1 - p);
                p = nl + 1;
            }
        }
        struct buf text = BUF_INIT;
        if (utf8_repair(&text, p, n, LOGS_REPAIR, NULL) < 0 ||
            store_log_tail_set(op->eng->store, op->session_id, text.data ? text.data : "", text.len,
                               total, util_now(), &err) < 0)
            error = err ? err : "out of memory";
        buf_free(&text);
    } else if (rep->status != 404) {
        error = rep->message && *rep->message ? rep->message : "cannot read the log";
    }
    if (op->done)
        op->done(op->ud, error);
    free(err);
    free(op->session_id);
    free(op);
}

void logs_save_tail(struct engine *eng, const char *session_id, const char *container_id,
                    logs_saved_fn done, void *ud)
{
    struct logs_save *op = calloc(1, sizeof(*op));
    if (op)
        op->session_id = strdup(session_id);
    if (!op || !op->session_id || !container_id) {
        if (op)
            free(op->session_id);
        free(op);
        if (done)
            done(ud, container_id ? "out of memory" : NULL);
        return;
    }
    op->eng = eng;
    op->done = done;
    op->ud = ud;
    if (local_driver_for(eng, container_id)
            ->logs_tail(eng, container_id, LOGS_TAIL_LINES, logs_on_save_tail, op) < 0) {
        struct sandbox_reply rep = {.status = -1, .message = "cannot start a request"};
        logs_on_save_tail(&rep, op);
    }
}
