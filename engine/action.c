/* The action path: record the intent, classify the risk, hold what the policy says for the
 * operator, forward to the executor, record the observation, answer.
 *
 * An action waiting for the operator is a row in the store first (state "pending", with its
 * deadline) and an entry in memory second: a restarted engine rebuilds the entries from the
 * rows, so approvals survive it. Decisions are conditional updates (only a pending row
 * changes), so a second decision, or one after the timeout, changes nothing. */
#include "engine/action.h"

#include "common/buf.h"
#include "common/timeconv.h"
#include "engine/action_kind.h"
#include "engine/base/action_state.h"
#include "engine/base/loop.h"
#include "engine/base/session_state.h"
#include "engine/base/util.h"
#include "engine/commit.h"
#include "engine/disk.h"
#include "engine/docker/http.h"
#include "engine/driver.h"
#include "engine/engine_internal.h"
#include "engine/events.h"
#include "engine/output.h"
#include "engine/risk/policy.h"
#include "engine/risk/risk.h"
#include "engine/session_internal.h"
#include "engine/store/store.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ACTION_REJECTED_TEXT "Action has been rejected by the user! Waiting for further user input."
/* Long polls end after this at the latest (GET /v1/actions/{id}?wait=S). */
#define ACTION_WAIT_MAX 600.0
/* A frame of the executor's stream larger than this is a broken stream. */
#define ACTION_FRAME_MAX (64ull * 1024 * 1024)

/* The executor's streamed reply (?paddock_stream=1, docs/protocol.md): "o LEN\n" output
 * frames, then "r STATUS LEN\n" and the observation. An executor that does not stream
 * (a runtime image baked before) answers with the plain observation: its first byte is "{". */
struct action_frames {
    bool decided, plain;
    bool in_payload;
    char type; /* 'o' or 'r': the frame being read */
    char head[64];
    size_t head_len;
    unsigned long long left; /* payload bytes still to come */
    bool got_result;
    long status;
    struct buf result; /* the observation, byte for byte */
};

/* An action the engine holds: waiting for the operator, or on its way to the executor. */
struct action {
    struct action *next;
    struct engine *eng;
    int64_t id;
    char session_id[40];
    json_t *action; /* the OpenHands action object */
    char *body;     /* the request as received, forwarded unchanged; NULL: rebuilt */
    size_t len;
    session_action_fn fn; /* who waits for the observation; NULL: nobody (202, restored) */
    void *ud;
    struct loop_timer *timer; /* the approval's deadline */
    struct session *s;        /* held while forwarding */
    struct action_frames frames;
    /* An approval the engine asked for a request it holds (action_ask): told the decision
     * once, instead of forwarding to the executor. */
    action_decided_fn decided;
    void *decided_ud;
};

/* A long poll on an action's end. */
struct action_waiter {
    struct action_waiter *next;
    struct engine *eng;
    int64_t id;
    struct loop_timer *timer;
    action_wait_fn fn;
    void *ud;
};

struct actions {
    enum action_scope scope; /* of the approval being delivered (action_decision_scope) */
    struct action *held;
    struct action_waiter *waiters;
};

/* ---- events and waiters ---- */

/* fresh: the action's first event ("new": true), which clients count (the dashboard's
 * counters follow the stream instead of refetching the sessions). */
static void action_publish_as(struct engine *eng, int64_t id, bool approval, bool fresh)
{
    /* Nobody follows the events: the action need not be read back to make one. */
    if (!events_listening(eng->events)) {
        output_flush(eng, id);
        return;
    }
    json_t *a = store_action_get(eng->store, id);
    if (!a)
        return;
    if (fresh)
        json_object_set_new(a, "new", json_true());
    /* Its output first: a client seeing the action end has seen everything it printed. */
    output_flush(eng, id);
    events_publish(eng->events, "action", a);
    if (approval)
        events_publish(eng->events, "approval", a);
    json_decref(a);
}

static void action_publish(struct engine *eng, int64_t id, bool approval)
{
    action_publish_as(eng, id, approval, false);
}

static void action_waiter_fire(struct action_waiter *w)
{
    struct engine *eng = w->eng;
    struct actions *as = eng->actions;
    for (struct action_waiter **pp = &as->waiters; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    if (w->timer)
        loop_timer_cancel(eng->loop, w->timer);
    json_t *a = store_action_get_full(eng->store, w->id);
    w->fn(a, w->ud);
    json_decref(a);
    free(w);
}

static void action_waiter_on_timer(void *ud)
{
    struct action_waiter *w = ud;
    w->timer = NULL;
    action_waiter_fire(w);
}

/* The action reached a final state: every long poll on it answers. */
static void action_notify(struct engine *eng, int64_t id)
{
    output_end(eng, id);
    if (!eng->actions)
        return; /* after actions_shutdown: a terminal's end at the engine's stop */
    struct action_waiter *w = eng->actions->waiters;
    while (w) {
        struct action_waiter *next = w->next;
        if (w->id == id)
            action_waiter_fire(w);
        w = next;
    }
}

void action_wait(struct engine *eng, int64_t id, double seconds, action_wait_fn fn, void *ud)
{
    json_t *a = store_action_get(eng->store, id);
    enum action_st state;
    bool final = a &&
                 action_st_parse(json_string_value(json_object_get(a, "state")), &state) == 0 &&
                 action_st_is_final(state);
    json_decref(a);
    struct action_waiter *w = a && !final && seconds > 0 ? calloc(1, sizeof(*w)) : NULL;
    if (!w) {
        json_t *full = a ? store_action_get_full(eng->store, id) : NULL;
        fn(full, ud);
        json_decref(full);
        return;
    }
    w->eng = eng;
    w->id = id;
    w->fn = fn;
    w->ud = ud;
    w->timer = loop_timer_add(eng->loop,
                              (long)((seconds > ACTION_WAIT_MAX ? ACTION_WAIT_MAX : seconds) * 1e3),
                              action_waiter_on_timer, w);
    w->next = eng->actions->waiters;
    eng->actions->waiters = w;
}

/* ---- replies ---- */

static void action_reply_json(session_action_fn fn, void *ud, unsigned status, json_t *j,
                              enum err_code err)
{
    char *body = json_dumps(j, JSON_COMPACT);
    struct session_action_result res = {
        .status = status, .body = body ? body : "", .len = body ? strlen(body) : 0, .err = err};
    fn(&res, ud);
    free(body);
    json_decref(j);
}

static void action_reply_error(session_action_fn fn, void *ud, enum err_code err, const char *msg)
{
    action_reply_json(fn, ud, err_status(err),
                      json_pack("{s:{s:s,s:s}}", "error", "code", err_name(err), "message", msg),
                      err);
}

/* The observation a rejected action gets: OpenHands' UserRejectObservation, with why. */
static char *action_rejected_observation(int64_t id, const char *by, const char *reason)
{
    char *content = reason && *reason ? util_strdupf("%s\nReason: %s", ACTION_REJECTED_TEXT, reason)
                                      : strdup(ACTION_REJECTED_TEXT);
    json_t *o = json_pack("{s:s,s:s,s:{s:s?,s:s?},s:s}", "observation", "user_rejected", "content",
                          content ? content : ACTION_REJECTED_TEXT, "extras", "decided_by", by,
                          "reason", reason, "message", ACTION_REJECTED_TEXT);
    if (id > 0)
        json_object_set_new(json_object_get(o, "extras"), "action_id", json_integer(id));
    free(content);
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

static enum err_code action_store_error(struct engine *eng, const char *what, const char *err,
                                        char **msg)
{
    enum err_code e = session_store_error(eng);
    *msg = util_strdupf("%s (%s)%s%s", what, err ? err : "store error",
                        e == ERR_STORAGE_FULL ? "; free disk space under " : "",
                        e == ERR_STORAGE_FULL ? eng->state_dir : "");
    return e;
}

/* ---- held actions ---- */

static void action_unhold(struct action *a)
{
    struct actions *as = a->eng->actions;
    for (struct action **pp = &as->held; *pp; pp = &(*pp)->next)
        if (*pp == a) {
            *pp = a->next;
            break;
        }
    if (a->timer)
        loop_timer_cancel(a->eng->loop, a->timer);
    json_decref(a->action);
    free(a->body);
    buf_free(&a->frames.result);
    free(a);
}

static struct action *action_find(struct engine *eng, int64_t id)
{
    for (struct action *a = eng->actions->held; a; a = a->next)
        if (a->id == id)
            return a;
    return NULL;
}

bool action_is_held(struct engine *eng, int64_t id)
{
    return action_find(eng, id) != NULL;
}

/* body: the request as received (malloc'd, the held action's from now on; NULL: rebuilt from
 * action when it is forwarded). */
static struct action *action_hold(struct engine *eng, int64_t id, const char *session_id,
                                  json_t *action, char *body, size_t len)
{
    struct action *a = calloc(1, sizeof(*a));
    if (!a) {
        free(body);
        return NULL;
    }
    a->eng = eng;
    a->id = id;
    snprintf(a->session_id, sizeof(a->session_id), "%s", session_id);
    a->action = json_incref(action);
    a->body = body;
    a->len = len;
    a->next = eng->actions->held;
    eng->actions->held = a;
    return a;
}

/* ---- forwarding to the executor ---- */

static void action_finished(struct action *a)
{
    struct engine *eng = a->eng;
    int64_t id = a->id;
    disk_watch_soon(eng, a->session_id); /* what the action wrote counts at once */
    if (a->s)
        session_release(a->s);
    action_unhold(a);
    action_notify(eng, id);
}

static void action_on_explained(const char *msg, void *ud)
{
    struct action *a = ud;
    struct engine *eng = a->eng;
    store_action_finish(eng->store, a->id, ACTION_FAILED, STORE_NO_EXIT_CODE, NULL, 0, msg,
                        util_now(), NULL);
    action_publish(eng, a->id, false);
    if (a->fn)
        action_reply_error(a->fn, a->ud, ERR_EXECUTOR_ERROR, msg);
    action_finished(a);
}

/* An action's end on its way into the record (commit.c): the observation as the agent gets
 * it, and the executor's status. */
struct action_end {
    struct action *a;
    long status; /* the executor's: 200, or its refusal, answered as is */
    int exit_code;
    char *obs, *diff, *error;
    size_t len;
};

static int action_end_write(struct store *st, void *ud, char **err)
{
    struct action_end *e = ud;
    if (!commit_records(e->a->eng))
        return 0;
    return store_action_finish_diff(st, e->a->id, e->status == 200 ? ACTION_DONE : ACTION_FAILED,
                                    e->exit_code, e->obs, e->len, e->diff, e->error, util_now(),
                                    err);
}

static void action_end_done(int rc, char *err, void *ud)
{
    struct action_end *e = ud;
    struct action *a = e->a;
    struct engine *eng = a->eng;
    if (rc < 0 && e->status == 200) {
        /* Acknowledged means recorded: the agent hears that it ran and that its result is
         * not kept, rather than a result the history will not show. */
        char *what = util_strdupf("the action ran (exit code %d) but its observation could "
                                  "not be recorded",
                                  e->exit_code == STORE_NO_EXIT_CODE ? -1 : e->exit_code);
        char *msg = NULL;
        enum err_code code = action_store_error(eng, what ? what : "store error", err, &msg);
        if (a->fn)
            action_reply_error(a->fn, a->ud, code, msg ? msg : "store error");
        free(what);
        free(msg);
    } else {
        if (rc == 0)
            action_publish(eng, a->id, false);
        if (a->fn) {
            struct session_action_result res = {
                .status = (unsigned)e->status, .body = e->obs, .len = e->len};
            a->fn(&res, a->ud);
        }
    }
    free(err);
    free(e->obs);
    free(e->diff);
    free(e->error);
    free(e);
    action_finished(a);
}

static void action_on_done(const struct http_result *r, void *ud)
{
    struct action *a = ud;
    struct engine *eng = a->eng;
    int exit_code = STORE_NO_EXIT_CODE;
    if (r->status < 0 && eng->stopping) {
        /* The engine stops, not the executor: the action may still run in the sandbox. As after
         * a crash it is "interrupted" (never re-run), and the agent hears that, not "failed". */
        char msg[200];
        snprintf(msg, sizeof(msg),
                 "the engine is stopping; action %lld was in flight and may have run in the "
                 "sandbox; it is recorded as interrupted and will not be re-run",
                 (long long)a->id);
        store_action_finish(eng->store, a->id, ACTION_INTERRUPTED, STORE_NO_EXIT_CODE, NULL, 0,
                            "engine stopped while the action was in flight; not re-run", util_now(),
                            NULL);
        action_publish(eng, a->id, false);
        if (a->fn)
            action_reply_error(a->fn, a->ud, ERR_UNAVAILABLE, msg);
        action_finished(a);
        return;
    }
    if (r->status < 0) {
        /* The connection broke: ask Docker what became of the container, so the agent hears
         * "exited (code 137, out of memory)" rather than "connection reset". */
        session_explain_failure(a->s, r, action_on_explained, a);
        return;
    }
    json_t *obs = json_loadb(r->body, r->len, 0, NULL);
    json_t *ec =
        json_object_get(json_object_get(json_object_get(obs, "extras"), "metadata"), "exit_code");
    if (json_is_integer(ec))
        exit_code = (int)json_integer_value(ec);
    /* A write's diff (asked for in action_forward) is recorded beside the observation and
     * taken out of it: the agent gets OpenHands' observation, key for key. */
    char *diff = NULL, *clean = NULL;
    const char *body = r->body;
    size_t len = r->len;
    json_t *pd = json_object_get(obs, "paddock_diff");
    if (pd) {
        diff = json_is_string(pd) ? strdup(json_string_value(pd)) : NULL;
        json_object_del(obs, "paddock_diff");
        clean = json_dumps(obs, JSON_COMPACT);
        if (clean) {
            body = clean;
            len = strlen(clean);
        }
    }
    json_decref(obs);
    /* The observation goes into the record with the others of this turn (commit.c); the agent
     * hears it once that commit is on disk. The bytes are copied: r's are gone on return. */
    struct action_end *e = calloc(1, sizeof(*e));
    if (e) {
        e->a = a;
        e->status = r->status;
        e->exit_code = exit_code;
        e->diff = diff;
        e->obs = malloc(len + 1);
        if (e->obs) {
            memcpy(e->obs, body, len);
            e->obs[len] = '\0';
            e->len = len;
        }
        /* The executor refused the action (bad arguments...): its answer goes back as is. */
        e->error = r->status == 200 ? NULL : util_strdupf("executor answered %ld", r->status);
    }
    free(clean);
    if (!e || !e->obs) {
        if (e)
            free(e->error);
        free(e);
        free(diff);
        if (a->fn)
            action_reply_error(a->fn, a->ud, ERR_INTERNAL, "out of memory");
        action_finished(a);
        return;
    }
    commit_add(eng, true, action_end_write, action_end_done, e);
}

/* The executor's stream as it comes: output to the live feeds, the observation kept. */
static int action_on_frames(const char *data, size_t len, void *ud)
{
    struct action *a = ud;
    struct action_frames *f = &a->frames;
    if (!f->decided && len) {
        f->decided = true;
        f->plain = data[0] == '{';
    }
    if (f->plain) /* bounded as a result frame is */
        return f->result.len + len > ACTION_FRAME_MAX ? -1 : buf_append(&f->result, data, len);
    while (len > 0) {
        if (!f->in_payload) {
            char c = *data++;
            len--;
            if (c != '\n') {
                if (f->head_len + 1 >= sizeof(f->head))
                    return -1;
                f->head[f->head_len++] = c;
                continue;
            }
            f->head[f->head_len] = '\0';
            f->head_len = 0;
            unsigned long long n = 0;
            if (sscanf(f->head, "o %llu", &n) == 1)
                f->type = 'o';
            else if (sscanf(f->head, "r %ld %llu", &f->status, &n) == 2 && !f->got_result)
                f->type = 'r', f->got_result = true;
            else
                return -1;
            if (n > ACTION_FRAME_MAX)
                return -1;
            f->left = n;
            f->in_payload = n > 0;
            continue;
        }
        size_t k = len < f->left ? len : (size_t)f->left;
        if (f->type == 'o')
            output_append(a->eng, a->id, data, k);
        else if (buf_append(&f->result, data, k) < 0)
            return -1;
        data += k;
        len -= k;
        f->left -= k;
        f->in_payload = f->left > 0;
    }
    return 0;
}

static void action_on_streamed(const struct http_result *r, void *ud)
{
    struct action *a = ud;
    struct action_frames *f = &a->frames;
    struct http_result res = *r;
    if (r->status == 200) {
        bool whole = f->plain || (f->got_result && !f->in_payload);
        if (buf_append(&f->result, "", 1) < 0) /* NUL-terminated, as a buffered body is */
            whole = false;
        else
            f->result.len--;
        res.status = !whole ? -1 : f->plain ? 200 : f->status;
        res.body = f->result.data ? f->result.data : "";
        res.len = f->result.len;
        if (!whole)
            res.error = "the executor's stream ended before the action's result";
    }
    action_on_done(&res, a);
}

static void action_forward(struct action *a, struct session *s)
{
    struct engine *eng = a->eng;
    a->s = s;
    session_hold(s);
    if (!a->body) {
        /* Approved after a restart: the request is rebuilt from the stored action. */
        json_t *req = json_pack("{s:O}", "action", a->action);
        a->body = json_dumps(req, JSON_COMPACT);
        a->len = a->body ? strlen(a->body) : 0;
        json_decref(req);
    }
    /* The executor enforces the action's own timeout; this one only guards a hung sandbox. */
    json_t *jt = json_object_get(a->action, "timeout");
    double t = json_is_number(jt) ? json_number_value(jt) : 120.0;
    if (!(t > 0) || t > TIMECONV_TIMEOUT_MAX) /* the API refuses more; the executor's default */
        t = 120.0;
    /* A write's observation says only "wrote"; the executor, which reads the old text anyway,
     * adds what changed for the record when its kind asks (docs/protocol.md). */
    const struct action_kind *kind =
        action_kind_find(json_string_value(json_object_get(a->action, "action")));
    bool want_diff = kind && kind->ask_diff;
    bool stream = kind && kind->streams;
    struct http_request req = {.method = "POST",
                               .url = want_diff ? "http://executor/execute_action?paddock_diff=1"
                                      : stream  ? "http://executor/execute_action?paddock_stream=1"
                                                : "http://executor/execute_action",
                               .body = a->body ? a->body : "{}",
                               .body_len = a->body ? a->len : 2,
                               .on_data = stream ? action_on_frames : NULL,
                               .timeout_ms = (long)(t * 1000.0) + 60000};
    if (stream)
        output_begin(eng, a->id, a->session_id);
    if (s->driver->executor_request(s, &req, stream ? action_on_streamed : action_on_done, a) < 0) {
        struct http_result r = {.status = -1, .error = "cannot start a request"};
        action_on_done(&r, a);
    }
}

/* ---- the session's policy ---- */

/* The policy, timeout and rules, read from the store once per session. */
static void action_policy_load(struct session *s)
{
    if (s->policy_loaded)
        return;
    struct engine *eng = s->eng;
    json_t *cfg = store_session_config(eng->store, s->id);
    json_t *opt = json_object_get(cfg, "options");
    int p = policy_parse(json_string_value(json_object_get(opt, "confirm")));
    s->confirm = p < 0 ? eng->default_confirm : (enum policy)p;
    json_t *t = json_object_get(opt, "approval_timeout");
    s->approval_timeout = json_is_number(t) ? json_number_value(t) : eng->approval_timeout;
    json_decref(cfg);
    s->policy_loaded = true;
}

/* The rules that apply to the session's actions, reloaded after any rule changed. */
static json_t *action_rules(struct session *s)
{
    if (!s->rules || s->rules_gen != s->eng->rules_gen) {
        json_decref(s->rules);
        s->rules = store_rules_list(s->eng->store, s->id);
        s->rules_gen = s->eng->rules_gen;
    }
    return s->rules;
}

/* ---- the deadline ---- */

static void action_expire(void *ud);

static void action_arm(struct action *a, double deadline)
{
    /* The deadline comes from the record: no later than the longest approval timeout. */
    double ms = (deadline - util_now()) * 1e3;
    if (!(ms > 0))
        ms = 0;
    else if (ms > TIMECONV_TIMEOUT_MAX * 1e3)
        ms = TIMECONV_TIMEOUT_MAX * 1e3;
    a->timer = loop_timer_add(a->eng->loop, (long)ms, action_expire, a);
}

/* End a pending action as rejected (by the operator, the timeout or the session's end). */
static int action_reject(struct action *a, enum action_approval decision, const char *by,
                         const char *reason, char **err)
{
    struct engine *eng = a->eng;
    char *obs = action_rejected_observation(a->id, by, reason);
    int rc = store_action_decide(eng->store, a->id, decision, by, reason, obs, util_now(), err);
    if (rc == 1) {
        action_publish(eng, a->id, true);
        if (a->decided) {
            char why[400];
            snprintf(why, sizeof(why), "%s by %s%s%.300s",
                     decision == APPROVAL_EXPIRED ? "expired" : "rejected", by ? by : "someone",
                     reason && *reason ? ": " : "", reason ? reason : "");
            a->decided(false, why, a->decided_ud);
        }
        if (a->fn) {
            struct session_action_result res = {
                .status = 200, .body = obs ? obs : "{}", .len = obs ? strlen(obs) : 2};
            a->fn(&res, a->ud);
        }
        int64_t id = a->id;
        action_unhold(a);
        action_notify(eng, id);
    }
    free(obs);
    return rc;
}

static void action_expire(void *ud)
{
    struct action *a = ud;
    a->timer = NULL;
    if (action_reject(a, APPROVAL_EXPIRED, "timeout", "no decision before the approval deadline",
                      NULL) < 0) {
        /* The store would not take it (disk full): try again in a while. */
        a->timer = loop_timer_add(a->eng->loop, 5000, action_expire, a);
    }
}

/* ---- submit ---- */

/* The agent's confirmation_state, read where OpenHands puts it (args) and at the top level;
 * the stricter of the two counts, so "confirmed" in one place never hides "rejected" in the
 * other. Absent (or a value OpenHands does not send): confirmed, which only means the agent's
 * side agreed; the operator's policy still decides. */
static enum action_confirmation action_confirmation_of(const json_t *action)
{
    const json_t *where[] = {json_object_get(action, "args"), action};
    enum action_confirmation worst = CONFIRMATION_CONFIRMED;
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
        enum action_confirmation c = CONFIRMATION_CONFIRMED;
        action_confirmation_parse(
            json_string_value(json_object_get(where[i], "confirmation_state")), &c);
        if (c == CONFIRMATION_REJECTED ||
            (c == CONFIRMATION_AWAITING && worst == CONFIRMATION_CONFIRMED))
            worst = c;
    }
    return worst;
}

/* An action on its way into the record: what action_submit decided, kept until the group
 * commit (commit.c) has written its row; then it is answered, held or forwarded. It owns what
 * the row points to (the action object holds kind and summary). */
struct action_intent {
    struct engine *eng;
    struct session *s; /* held until then */
    json_t *action;
    char *body; /* the request as received, copied */
    size_t len;
    bool wait, held;
    session_action_fn fn;
    void *ud;
    struct store_action_new row;
    struct risk_result risk;
    enum risk_level declared;
    char why[512];
    char *args_json, *obs, *rule_pattern;
    int64_t id;
};

static void action_intent_free(struct action_intent *in)
{
    session_release(in->s);
    json_decref(in->action);
    free(in->body);
    free(in->args_json);
    free(in->obs);
    free(in->rule_pattern);
    free(in);
}

static int action_intent_write(struct store *st, void *ud, char **err)
{
    struct action_intent *in = ud;
    if (!commit_records(in->eng)) {
        /* Far above any id the store gives: nothing can be asked about these. */
        in->id = (INT64_C(1) << 50) + ++in->eng->bench_unrecorded;
        return 0;
    }
    in->id = store_action_add(st, &in->row, err);
    return in->id < 0 ? -1 : 0;
}

static void action_intent_done(int rc, char *err, void *ud)
{
    struct action_intent *in = ud;
    struct engine *eng = in->eng;
    struct session *s = in->s;
    session_action_fn fn = in->fn;
    void *cb_ud = in->ud;
    int64_t id = in->id;
    if (rc < 0) {
        char *msg = NULL;
        enum err_code e =
            action_store_error(eng, "the action was not run: it could not be recorded", err, &msg);
        action_reply_error(fn, cb_ud, e, msg ? msg : "cannot record the action");
        free(msg);
        free(err);
        action_intent_free(in);
        return;
    }
    enum action_st state = in->row.state;
    if (state != ACTION_RUNNING && !in->held) {
        /* Answered at once: rejected or skipped, recorded, never run. */
        action_publish_as(eng, id, state == ACTION_REJECTED, true);
        if (in->wait) {
            struct session_action_result res = {
                .status = 200, .body = in->obs, .len = strlen(in->obs)};
            fn(&res, cb_ud);
        } else {
            action_reply_json(
                fn, cb_ud, 202,
                json_pack("{s:I,s:s}", "action_id", (json_int_t)id, "state", action_st_name(state)),
                ERR_NONE);
        }
        action_intent_free(in);
        return;
    }
    enum err_code refusal;
    char msg[512];
    if (!in->held && session_check_actionable(s, &refusal, msg, sizeof(msg)) < 0) {
        /* A pause, stop or delete began in the same turn, after the action arrived: it never
         * reaches the sandbox, and the record says why. */
        store_action_finish(eng->store, id, ACTION_FAILED, STORE_NO_EXIT_CODE, NULL, 0, msg,
                            util_now(), NULL);
        action_publish_as(eng, id, false, true);
        action_reply_error(fn, cb_ud, refusal, msg);
        action_intent_free(in);
        return;
    }
    struct action *a = action_hold(eng, id, s->id, in->action, in->body, in->len);
    in->body = NULL; /* the held action's now */
    if (!a) {
        store_action_finish(eng->store, id, ACTION_FAILED, STORE_NO_EXIT_CODE, NULL, 0,
                            "out of memory", util_now(), NULL);
        action_reply_error(fn, cb_ud, ERR_INTERNAL, "out of memory");
        action_intent_free(in);
        return;
    }
    bool held = in->held;
    double deadline = in->row.deadline;
    if (in->wait) {
        a->fn = fn;
        a->ud = cb_ud;
    } else {
        action_reply_json(fn, cb_ud, 202,
                          json_pack("{s:I,s:s}", "action_id", (json_int_t)id, "state",
                                    action_st_name(held ? ACTION_PENDING : ACTION_RUNNING)),
                          ERR_NONE);
    }
    if (held) {
        action_arm(a, deadline);
        action_publish_as(eng, id, true, true);
        action_intent_free(in);
        return;
    }
    /* Read back only for someone following the events. */
    json_t *pub = events_listening(eng->events) ? store_action_get(eng->store, id) : NULL;
    if (pub) {
        json_object_set_new(pub, "new", json_true());
        events_publish(eng->events, "action", pub);
        json_decref(pub);
    }
    /* Its row is committed: only now may the command reach the sandbox. */
    action_forward(a, s);
    action_intent_free(in);
}

void action_submit(struct session *s, json_t *action, const char *body, size_t len, bool wait,
                   session_action_fn fn, void *ud)
{
    struct engine *eng = s->eng;
    enum err_code refusal;
    char refusal_msg[512];
    if (session_check_actionable(s, &refusal, refusal_msg, sizeof(refusal_msg)) < 0) {
        action_reply_error(fn, ud, refusal, refusal_msg);
        return;
    }
    struct action_intent *in = calloc(1, sizeof(*in));
    if (in && body && !(in->body = malloc(len ? len : 1))) {
        free(in);
        in = NULL;
    }
    if (!in) {
        action_reply_error(fn, ud, ERR_INTERNAL, "out of memory");
        return;
    }
    if (body) {
        memcpy(in->body, body, len);
        in->len = len;
    }
    in->eng = eng;
    in->s = s;
    session_hold(s);
    in->action = json_incref(action);
    in->wait = wait;
    in->fn = fn;
    in->ud = ud;
    action_policy_load(s);
    const char *kind = json_string_value(json_object_get(action, "action"));
    json_t *args = json_object_get(action, "args");
    const char *summary = action_kind_summary(kind, args);
    struct risk_result *risk = &in->risk;
    action_kind_classify(action, ACTION_WORKSPACE, NULL, risk);
    in->args_json = json_dumps(action, JSON_COMPACT);
    double now = util_now();
    in->declared = (enum risk_level)risk->declared;
    struct store_action_new row = {.session_id = s->id,
                                   .kind = kind,
                                   .summary = summary,
                                   .args_json = in->args_json ? in->args_json : "{}",
                                   .risk = risk->level,
                                   .risk_reason = risk->reason,
                                   .declared_risk = risk->declared >= 0 ? &in->declared : NULL,
                                   .state = ACTION_RUNNING,
                                   .approval = APPROVAL_NONE,
                                   .durable = !wait,
                                   .now = now};
    enum action_confirmation confirmation = action_confirmation_of(action);
    json_t *matched = NULL;
    enum policy_rule rule = policy_rules_match(action_rules(s), kind, summary, &matched);
    const char *pat = json_string_value(json_object_get(matched, "pattern"));
    in->rule_pattern = pat ? strdup(pat) : NULL;
    const char *rule_pat = in->rule_pattern;
    json_int_t rule_id = json_integer_value(json_object_get(matched, "id"));
    /* The ceiling: an allow rule never approves what is rated above it; the policy decides. */
    if (rule == POLICY_RULE_ALLOW && risk->level > eng->rule_ceiling)
        rule = POLICY_RULE_NONE;
    char *why = in->why;
    size_t whysz = sizeof(in->why);
    if (confirmation == CONFIRMATION_REJECTED) {
        /* OpenHands sends a rejected action so that it is recorded; it never runs. */
        row.state = ACTION_REJECTED;
        row.approval = APPROVAL_REJECTED;
        row.decided_by = "agent";
        row.decision_reason = "the action arrived with confirmation_state \"rejected\"";
    } else if (confirmation == CONFIRMATION_AWAITING) {
        /* OpenHands' own client never sends these; its runtime answers a null observation. */
        row.state = ACTION_SKIPPED;
        in->obs = strdup("{\"observation\":\"null\",\"content\":\"\",\"extras\":{},"
                         "\"message\":\"No observation\"}");
        row.observation = in->obs;
    } else if (rule == POLICY_RULE_DENY) {
        snprintf(why, whysz, "denied by rule %lld \"%.400s\"", (long long)rule_id, rule_pat);
        row.state = ACTION_REJECTED;
        row.approval = APPROVAL_REJECTED;
        row.decided_by = "rule";
        row.decision_reason = why;
        row.rule_id = rule_id;
        row.rule_pattern = rule_pat;
    } else if (rule == POLICY_RULE_ALLOW) {
        snprintf(why, whysz, "allowed by rule %lld \"%.400s\"", (long long)rule_id, rule_pat);
        row.approval = APPROVAL_AUTO;
        row.decided_by = "rule";
        row.decision_reason = why;
        row.rule_id = rule_id;
        row.rule_pattern = rule_pat;
    } else if (policy_needs_approval(s->confirm, (int)risk->level)) {
        row.state = ACTION_PENDING;
        row.approval = APPROVAL_PENDING;
        row.deadline = now + s->approval_timeout;
        row.durable = true;
        in->held = true;
    }
    if (row.state == ACTION_REJECTED) {
        row.durable = true;
        /* The id is not known before the insert: the observation names it afterwards. */
        in->obs = action_rejected_observation(0, row.decided_by, row.decision_reason);
        row.observation = in->obs;
    }
    if ((row.state == ACTION_REJECTED || row.state == ACTION_SKIPPED) && !in->obs) {
        action_reply_error(fn, ud, ERR_INTERNAL, "out of memory");
        action_intent_free(in);
        return;
    }
    if (in->held && !commit_records(eng)) {
        /* An approval is listed, decided and expired through the action's row. */
        action_reply_error(fn, ud, ERR_CONFLICT,
                           "this engine records nothing (PADDOCK_UNSAFE_BENCH=record), so it "
                           "cannot hold an action for approval");
        action_intent_free(in);
        return;
    }
    in->row = row;
    /* Intent first: the row is committed (with whatever else arrived in this turn) before
     * anything reaches the sandbox. */
    commit_add(eng, row.durable, action_intent_write, action_intent_done, in);
}

/* ---- approvals the engine asks for itself ---- */

int64_t action_ask(struct engine *eng, const struct action_request *q, action_decided_fn fn,
                   void *ud, char **err)
{
    char *args_json = json_dumps(q->action, JSON_COMPACT);
    double now = util_now();
    struct store_action_new row = {.session_id = q->session_id,
                                   .kind = json_string_value(json_object_get(q->action, "action")),
                                   .summary = q->summary,
                                   .args_json = args_json ? args_json : "{}",
                                   .risk = q->risk,
                                   .risk_reason = q->risk_reason,
                                   .state = q->pending ? ACTION_PENDING : ACTION_RUNNING,
                                   .approval = q->pending ? APPROVAL_PENDING : APPROVAL_AUTO,
                                   .deadline = q->pending ? now + q->timeout : 0,
                                   .decided_by = q->pending ? NULL : q->decided_by,
                                   .decision_reason = q->pending ? NULL : q->decision_reason,
                                   .durable = true,
                                   .now = now};
    int64_t id = store_action_add(eng->store, &row, err);
    free(args_json);
    if (id < 0)
        return -1;
    if (!q->pending) {
        action_publish(eng, id, false);
        return id;
    }
    struct action *a = action_hold(eng, id, q->session_id, q->action, NULL, 0);
    if (!a) {
        store_action_finish(eng->store, id, ACTION_FAILED, STORE_NO_EXIT_CODE, NULL, 0,
                            "out of memory", util_now(), NULL);
        *err = strdup("out of memory");
        return -1;
    }
    a->decided = fn;
    a->decided_ud = ud;
    action_arm(a, row.deadline);
    action_publish(eng, id, true);
    return id;
}

enum action_scope action_decision_scope(const struct engine *eng)
{
    return eng->actions ? eng->actions->scope : ACTION_SCOPE_ONCE;
}

void action_ask_cancel(struct engine *eng, int64_t id, const char *why)
{
    struct action *a = action_find(eng, id);
    if (!a || !a->decided)
        return;
    a->decided = NULL;
    action_reject(a, APPROVAL_REJECTED, "engine", why, NULL);
}

void action_end(struct engine *eng, int64_t id, enum action_st state, int exit_code,
                const char *observation, const char *error)
{
    store_action_finish(eng->store, id, state, exit_code, observation,
                        observation ? strlen(observation) : 0, error, util_now(), NULL);
    action_publish(eng, id, false);
    action_notify(eng, id);
}

/* ---- decisions ---- */

static void action_result(struct action_result *out, enum err_code err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void action_result(struct action_result *out, enum err_code err, const char *fmt, ...)
{
    out->status = err_status(err);
    out->err = err;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->message, sizeof(out->message), fmt, ap);
    va_end(ap);
}

/* A failed store write as the request's error (507 when the disk is full). */
static void action_result_store(struct action_result *out, struct engine *eng, const char *what,
                                char *err)
{
    char *msg = NULL;
    enum err_code e = action_store_error(eng, what, err, &msg);
    action_result(out, e, "%s", msg ? msg : "store error");
    free(msg);
    free(err);
}

/* Why an action that is not pending cannot be decided. */
static void action_already(json_t *cur, int64_t id, struct action_result *out)
{
    enum action_approval approval = APPROVAL_NONE; /* unknown text: it never waited */
    action_approval_parse(json_string_value(json_object_get(cur, "approval")), &approval);
    const char *by = json_string_value(json_object_get(cur, "decided_by"));
    const char *state = json_string_value(json_object_get(cur, "state"));
    const char *reason = json_string_value(json_object_get(cur, "decision_reason"));
    json_t *at = json_object_get(cur, "decided_at");
    char when[64] = "an unknown time";
    struct tm tm;
    if (json_is_number(at) && timeconv_to_utc(json_number_value(at), &tm) == 0)
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
    switch (approval) {
    case APPROVAL_EXPIRED:
        action_result(out, ERR_EXPIRED,
                      "action %lld expired at %s without a decision and was rejected; nothing "
                      "changed",
                      (long long)id, when);
        break;
    case APPROVAL_AUTO:
    case APPROVAL_APPROVED:
    case APPROVAL_REJECTED:
        action_result(
            out, ERR_ALREADY_DECIDED,
            "action %lld was already %s by %s at %s%s%.200s%s; nothing changed", (long long)id,
            approval == APPROVAL_AUTO ? "allowed" : action_approval_name(approval),
            by ? by : "someone", when, reason ? " (" : "", reason ? reason : "", reason ? ")" : "");
        break;
    case APPROVAL_PENDING:
        /* its row is written but its intent not yet synced: the engine holds it in a moment */
        action_result(out, ERR_NOT_PENDING,
                      "action %lld is still being recorded and cannot be decided yet; try again",
                      (long long)id);
        break;
    case APPROVAL_NONE:
    case APPROVAL_COUNT:
        action_result(out, ERR_NOT_PENDING,
                      "action %lld is %s and never waited for approval (its risk was below the "
                      "session's policy); nothing to decide",
                      (long long)id, state ? state : "unknown");
        break;
    }
}

int64_t action_rule_add(struct engine *eng, const char *session_id, json_t *rule, const char *by,
                        struct action_result *out)
{
    char *err = NULL;
    struct store_rule row = {.session_id = session_id,
                             .pattern = json_string_value(json_object_get(rule, "pattern")),
                             .kind = json_string_value(json_object_get(rule, "kind")),
                             .by = by};
    if (policy_rule_parse(json_string_value(json_object_get(rule, "decision")), &row.decision) <
        0) {
        action_result(out, ERR_BAD_REQUEST, "\"decision\" must be \"allow\" or \"deny\"");
        return -1;
    }
    int64_t rid = store_rule_add(eng->store, &row, util_now(), &err);
    if (rid < 0) {
        action_result_store(out, eng, "the rule was not added", err);
        return -1;
    }
    eng->rules_gen++;
    return rid;
}

void action_decide(struct engine *eng, int64_t id, const struct action_decision *d,
                   struct action_result *out)
{
    memset(out, 0, sizeof(*out));
    json_t *cur = store_action_get(eng->store, id);
    if (!cur) {
        action_result(out, ERR_NOT_FOUND, "no action %lld", (long long)id);
        return;
    }
    enum action_st state;
    bool pending = action_st_parse(json_string_value(json_object_get(cur, "state")), &state) == 0 &&
                   state == ACTION_PENDING;
    struct action *a = action_find(eng, id);
    if (!pending || !a) {
        action_already(cur, id, out);
        json_decref(cur);
        return;
    }
    json_decref(cur);
    struct session *s = session_find(eng, a->session_id);
    bool approve = d->approve;
    if (approve && a->decided) {
        /* What waits is a request the engine holds: it checks its session itself. */
        char *err = NULL;
        int rc = store_action_decide(eng->store, id, APPROVAL_APPROVED, d->by, d->reason, NULL,
                                     util_now(), &err);
        if (rc <= 0) {
            if (rc == 0) {
                json_t *now_row = store_action_get(eng->store, id);
                action_already(now_row, id, out);
                json_decref(now_row);
                free(err);
            } else {
                action_result_store(out, eng, "the decision was not recorded", err);
            }
            return;
        }
        action_publish(eng, id, true);
        *out = (struct action_result){.status = 200};
        action_decided_fn fn = a->decided;
        void *ud = a->decided_ud;
        action_unhold(a); /* a long poll answers at its end (action_end), not now */
        eng->actions->scope =
            d->remember && d->scope == ACTION_SCOPE_ONCE ? ACTION_SCOPE_SESSION : d->scope;
        fn(true, d->by, ud);
        eng->actions->scope = ACTION_SCOPE_ONCE;
        return;
    }
    if (approve && d->scope == ACTION_SCOPE_ENGINE) {
        action_result(out, ERR_BAD_REQUEST,
                      "action %lld: \"scope\": \"engine\" is for egress questions; an agent's "
                      "action is remembered for its session (\"remember\": true) or by an "
                      "engine-wide rule (POST /v1/rules)",
                      (long long)id);
        return;
    }
    if (approve && (!s || s->state != SESSION_READY || !s->container_id)) {
        /* Nothing changes: the operator may resume the session and approve again, or reject. */
        enum session_st st = s ? s->state : SESSION_DELETED;
        bool gone = !s || !s->container_id || !session_st_is_live(st);
        /* paused has its own code: clients tell it apart without reading the text */
        action_result(out,
                      gone                   ? ERR_SESSION_GONE
                      : st == SESSION_PAUSED ? ERR_SESSION_PAUSED
                                             : ERR_CONFLICT,
                      "action %lld cannot run: session %s is %s%s; nothing changed", (long long)id,
                      a->session_id, session_st_name(st),
                      gone ? " and its container is gone (reject the action instead)"
                           : " (resume it, then approve again)");
        return;
    }
    if (approve && s->op != SESSION_OP_NONE && s->op != SESSION_OP_CREATE) {
        /* A pause, stop or delete is under way: running now would race it. */
        action_result(out, ERR_CONFLICT,
                      "action %lld cannot run now: session %s is busy (%s in progress); nothing "
                      "changed, approve again once it is done",
                      (long long)id, a->session_id, session_op_name(s->op));
        return;
    }
    char *err = NULL;
    if (!approve) {
        int rc = action_reject(a, APPROVAL_REJECTED, d->by, d->reason, &err);
        if (rc <= 0)
            action_result_store(out, eng, "the decision was not recorded", err);
        else
            *out = (struct action_result){.status = 200};
        return;
    }
    if (d->remember && s) {
        /* For this kind of action only: a path approved for reading is no command to run. */
        const char *kind = json_string_value(json_object_get(a->action, "action"));
        char *pat =
            d->pattern
                ? strdup(d->pattern)
                : policy_glob_escape(action_kind_summary(kind, json_object_get(a->action, "args")));
        json_t *rule = json_pack("{s:s,s:s,s:s?}", "pattern", pat ? pat : "", "decision",
                                 policy_rule_name(POLICY_RULE_ALLOW), "kind", kind);
        free(pat);
        int64_t rc = action_rule_add(eng, s->id, rule, d->by, out);
        json_decref(rule);
        if (rc < 0)
            return;
    }
    int rc = store_action_decide(eng->store, id, APPROVAL_APPROVED, d->by, d->reason, NULL,
                                 util_now(), &err);
    if (rc == 0) {
        json_t *now_row = store_action_get(eng->store, id);
        action_already(now_row, id, out);
        json_decref(now_row);
        return;
    }
    if (rc < 0) {
        action_result_store(out, eng, "the decision was not recorded", err);
        return;
    }
    if (a->timer) {
        loop_timer_cancel(eng->loop, a->timer);
        a->timer = NULL;
    }
    action_publish(eng, id, true);
    *out = (struct action_result){.status = 200};
    action_forward(a, s);
}

/* ---- the session's end, start-up, shutdown ---- */

void actions_session_gone(struct engine *eng, const char *session_id, const char *why)
{
    struct action *a = eng->actions->held;
    while (a) {
        struct action *next = a->next;
        if (!a->s && strcmp(a->session_id, session_id) == 0)
            action_reject(a, APPROVAL_REJECTED, "engine", why, NULL);
        a = next;
    }
}

int actions_init(struct engine *eng)
{
    eng->actions = calloc(1, sizeof(*eng->actions));
    if (!eng->actions)
        return -1;
    /* Waiting actions survive the engine: their rows come back with their deadlines. An action
     * of a session that is gone is rejected now; one whose deadline passed expires at once. */
    json_t *pending = store_actions_pending(eng->store, NULL);
    size_t i;
    json_t *row;
    json_array_foreach(pending, i, row)
    {
        int64_t id = json_integer_value(json_object_get(row, "id"));
        const char *sid = json_string_value(json_object_get(row, "session_id"));
        json_t *args = json_object_get(row, "args");
        json_t *deadline = json_object_get(row, "deadline");
        struct action *a =
            sid && json_is_object(args) ? action_hold(eng, id, sid, args, NULL, 0) : NULL;
        if (!a)
            continue;
        const struct action_kind *k =
            action_kind_find(json_string_value(json_object_get(row, "kind")));
        if (!session_find(eng, sid))
            action_reject(a, APPROVAL_REJECTED, "engine", "the session is gone", NULL);
        else if (k && k->engine_side)
            action_reject(a, APPROVAL_REJECTED, "engine",
                          "the engine restarted while it waited; the request that asked is gone: "
                          "ask again",
                          NULL);
        else
            action_arm(a, json_is_number(deadline) ? json_number_value(deadline) : 0);
    }
    json_decref(pending);
    return 0;
}

void actions_shutdown(struct engine *eng)
{
    struct actions *as = eng->actions;
    if (!as)
        return;
    /* Whoever waits hears that the engine stops; pending rows stay pending for the next one. */
    while (as->held) {
        struct action *a = as->held;
        if (a->decided)
            a->decided(false, "not decided: the engine is stopping", a->decided_ud);
        if (a->fn && !a->s) {
            char msg[200];
            snprintf(msg, sizeof(msg),
                     "the engine is stopping; action %lld stays pending: poll GET /v1/actions/%lld",
                     (long long)a->id, (long long)a->id);
            action_reply_error(a->fn, a->ud, ERR_UNAVAILABLE, msg);
        }
        if (a->s)
            session_release(a->s);
        action_unhold(a);
    }
    while (as->waiters)
        action_waiter_fire(as->waiters);
    free(as);
    eng->actions = NULL;
}
