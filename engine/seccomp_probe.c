/* The seccomp probe's steps: create, start, wait, logs, remove; then the waiters. */
#include "engine/seccomp_probe.h"

#include "engine/base/util.h"
#include "engine/builder.h"
#include "engine/driver.h"
#include "engine/engine_internal.h"
#include "engine/seccomp.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROBE_EXECUTOR "/opt/paddock/paddock-executor"
#define PROBE_WAIT_MS 30000L

enum probe_state {
    PROBE_UNCHECKED, /* not run yet, or it could not run */
    PROBE_CHECKING,
    PROBE_APPLIED,
    PROBE_NOT_APPLIED,
    PROBE_STATE_COUNT
};

static const char *const probe_state_names[PROBE_STATE_COUNT] = {
    [PROBE_UNCHECKED] = "unchecked",
    [PROBE_CHECKING] = "checking",
    [PROBE_APPLIED] = "applied",
    [PROBE_NOT_APPLIED] = "not_applied",
};

struct probe_waiter {
    seccomp_probe_fn fn;
    void *ud;
    struct probe_waiter *next;
};

struct seccomp_probe {
    struct engine *eng;
    enum probe_state state;
    char *error;              /* why not applied, or why it could not run */
    char *cid;                /* the probe container while it exists */
    enum probe_state verdict; /* what the steps so far showed; UNCHECKED: nothing */
    double started, ms;
    bool override;             /* PADDOCK_SECCOMP_UNVERIFIED=1 */
    void (*settled)(void *ud); /* the engine's stop waits for the container's removal */
    void *settled_ud;
    struct probe_waiter *waiters;
};

static struct seccomp_probe *probe_of(const struct engine *eng)
{
    return eng->seccomp_probe;
}

/* "paddock-<engine>-seccomp-probe-<pid>-": the names of this process's probes start so. */
static void probe_name_prefix(const struct engine *eng, char *out, size_t size)
{
    snprintf(out, size, "paddock-%.8s-seccomp-probe-%ld-", eng->engine_id, (long)getpid());
}

static void probe_set_error(struct seccomp_probe *p, const char *what, const char *detail)
{
    free(p->error);
    p->error = util_strdupf("%s%s%s", what, detail && *detail ? ": " : "", detail ? detail : "");
}

/* The state is known (or the probe could not run): tell every waiter. */
static void probe_finish(struct seccomp_probe *p, enum probe_state state)
{
    p->state = state;
    p->ms = util_now() * 1000.0 - p->started;
    if (p->settled) {
        void (*settled)(void *) = p->settled;
        p->settled = NULL;
        settled(p->settled_ud);
    }
    struct probe_waiter *w = p->waiters;
    p->waiters = NULL;
    while (w) {
        struct probe_waiter *next = w->next;
        bool refuse = state == PROBE_NOT_APPLIED && !p->override;
        if (p->eng->stopping)
            w->fn("the engine is stopping", w->ud);
        else
            w->fn(refuse ? (p->error ? p->error : "the seccomp profile is not applied") : NULL,
                  w->ud);
        free(w);
        w = next;
    }
}

/* A refusal (status >= 400) whose message is about seccomp. */
static bool names_seccomp(const struct sandbox_reply *r)
{
    return r->status >= 400 && r->message && strcasestr(r->message, "seccomp");
}

static void probe_on_removed(const struct sandbox_reply *r, void *ud)
{
    struct seccomp_probe *p = ud;
    (void)r; /* a leftover carries the engine's label: gc finds it */
    free(p->cid);
    p->cid = NULL;
    probe_finish(p, p->verdict);
}

/* Remove the container, then finish with the verdict. */
static void probe_remove(struct seccomp_probe *p)
{
    if (!p->cid || p->eng->driver->remove(p->eng, p->cid, probe_on_removed, p) < 0)
        probe_on_removed(&(struct sandbox_reply){.status = -1, .message = ""}, p);
}

static void probe_on_logs(const struct sandbox_reply *r, void *ud)
{
    struct seccomp_probe *p = ud;
    char *out = r->status == 200 && r->message ? strdup(r->message) : NULL;
    for (char *c = out; c && *c; c++)
        if (*c == '\n')
            *c = *(c + 1) ? ';' : '\0';
    probe_set_error(p,
                    p->verdict == PROBE_NOT_APPLIED
                        ? "the daemon did not apply paddock's seccomp profile"
                        : "seccomp probe: the executor did not run in the default image",
                    out);
    free(out);
    probe_remove(p);
}

static void probe_on_wait(const struct sandbox_reply *r, void *ud)
{
    struct seccomp_probe *p = ud;
    if (r->status != 200) {
        probe_set_error(p, "seccomp probe: no exit status", r->message);
        probe_remove(p);
        return;
    }
    /* 1: the probe ran and saw the profile missing; another code: it did not run (126, 127). */
    json_int_t code = json_integer_value(json_object_get(r->json, "StatusCode"));
    p->verdict = code == 0 ? PROBE_APPLIED : code == 1 ? PROBE_NOT_APPLIED : PROBE_UNCHECKED;
    if (code == 0) {
        free(p->error);
        p->error = NULL;
        probe_remove(p);
        return;
    }
    if (p->eng->stopping || p->eng->driver->logs_tail(p->eng, p->cid, 10, probe_on_logs, p) < 0)
        probe_on_logs(&(struct sandbox_reply){.status = -1, .message = ""}, p);
}

static void probe_on_start(const struct sandbox_reply *r, void *ud)
{
    struct seccomp_probe *p = ud;
    if (r->status < 0 || (r->status != 204 && r->status != 304)) {
        /* The runtime failing on the profile is a verdict; no answer, or another failure
         * (a mount), is not. */
        p->verdict = names_seccomp(r) ? PROBE_NOT_APPLIED : PROBE_UNCHECKED;
        probe_set_error(p,
                        p->verdict == PROBE_NOT_APPLIED
                            ? "the daemon could not start a container under paddock's seccomp "
                              "profile"
                            : "seccomp probe: could not start its container",
                        r->message);
        probe_remove(p);
        return;
    }
    if (p->eng->stopping ||
        p->eng->driver->wait(p->eng, p->cid, PROBE_WAIT_MS, probe_on_wait, p) < 0)
        probe_on_wait(&(struct sandbox_reply){.status = -1, .message = "cannot start a request"},
                      p);
}

static void probe_on_create(const struct sandbox_reply *r, void *ud)
{
    struct seccomp_probe *p = ud;
    const char *cid = json_string_value(json_object_get(r->json, "Id"));
    if (r->status != 201 || !cid) {
        /* The daemon refusing the profile is a verdict. Unreachable, no default image yet, a
         * mount it cannot make: nothing known, the next create probes again. */
        p->verdict = names_seccomp(r) ? PROBE_NOT_APPLIED : PROBE_UNCHECKED;
        probe_set_error(p,
                        p->verdict == PROBE_NOT_APPLIED
                            ? "the daemon refused paddock's seccomp profile"
                            : "seccomp probe: could not create its container",
                        r->message);
        probe_finish(p, p->verdict);
        return;
    }
    p->cid = strdup(cid);
    if (!p->cid || p->eng->stopping || p->eng->driver->start(p->eng, p->cid, probe_on_start, p) < 0)
        probe_on_start(&(struct sandbox_reply){.status = -1, .message = "cannot start a request"},
                       p);
}

/* The probe's create body: the default image with only the executor mounted, no network, every
 * capability dropped, and the same SecurityOpt as every session. */
static json_t *probe_body(struct engine *eng)
{
    json_t *labels =
        json_pack("{s:s,s:s}", "paddock.engine", eng->engine_id, "paddock.probe", "seccomp");
    const char *test_label = getenv("PADDOCK_TEST_LABEL");
    if (labels && test_label && *test_label)
        json_object_set_new(labels, "paddock.test", json_string(test_label));
    return json_pack("{s:s,s:[s],s:[s],s:s,s:o,s:{s:[s],s:[s,s],s:s,s:[{s:s,s:s,s:s,s:b}]}}",
                     "Image", eng->default_image, "Entrypoint", PROBE_EXECUTOR, "Cmd",
                     "--seccomp-probe", "User", "0:0", "Labels", labels, "HostConfig", "CapDrop",
                     "ALL", "SecurityOpt", "no-new-privileges", eng->seccomp_opt, "NetworkMode",
                     "none", "Mounts", "Type", "bind", "Source", eng->executor_path, "Target",
                     PROBE_EXECUTOR, "ReadOnly", 1);
}

static void probe_run(struct seccomp_probe *p)
{
    struct engine *eng = p->eng;
    p->state = PROBE_CHECKING;
    p->started = util_now() * 1000.0;
    p->verdict = PROBE_UNCHECKED;
    json_t *body = eng->executor_path && !builder_bakes() ? probe_body(eng) : NULL;
    char name[96];
    probe_name_prefix(eng, name, sizeof(name));
    snprintf(name + strlen(name), sizeof(name) - strlen(name), "%lx", (unsigned long)p->started);
    if (!body) {
        probe_set_error(p, "seccomp probe: no executor to mount (PADDOCK_BAKE_EXECUTOR)", NULL);
        probe_finish(p, PROBE_UNCHECKED);
    } else if (eng->driver->create(eng, name, body, probe_on_create, p) < 0) {
        probe_set_error(p, "seccomp probe: cannot start a request", NULL);
        probe_finish(p, PROBE_UNCHECKED);
    }
    json_decref(body);
}

static void probe_on_leftover_removed(const struct sandbox_reply *r, void *ud)
{
    (void)r; /* what stays is gc's */
    (void)ud;
}

/* Probe containers this engine left when it was killed mid-probe: removed in the background. */
static void probe_on_leftovers(const struct sandbox_reply *r, void *ud)
{
    struct seccomp_probe *p = ud;
    char mine[96]; /* this process's probes are not leftovers */
    probe_name_prefix(p->eng, mine, sizeof(mine));
    size_t i;
    json_t *c;
    json_array_foreach(r->status == 200 ? r->json : NULL, i, c)
    {
        const char *cid = json_string_value(json_object_get(c, "Id"));
        const char *eid =
            json_string_value(json_object_get(json_object_get(c, "Labels"), "paddock.engine"));
        const char *name = json_string_value(json_array_get(json_object_get(c, "Names"), 0));
        if (cid && eid && strcmp(eid, p->eng->engine_id) == 0 && name &&
            strncmp(name + (*name == '/'), mine, strlen(mine)) != 0)
            p->eng->driver->remove(p->eng, cid, probe_on_leftover_removed, NULL);
    }
}

int seccomp_probe_start(struct engine *eng)
{
    struct seccomp_probe *p = calloc(1, sizeof(*p));
    if (!p)
        return -1;
    const char *o = getenv("PADDOCK_SECCOMP_UNVERIFIED");
    p->eng = eng;
    p->override = o && strcmp(o, "1") == 0;
    eng->seccomp_probe = p;
    /* Nothing to do if the list cannot be asked: the next start or gc removes them. */
    eng->driver->list(eng, "paddock.probe=seccomp", probe_on_leftovers, p);
    probe_run(p);
    return 0;
}

void seccomp_probe_wait(struct engine *eng, seccomp_probe_fn fn, void *ud)
{
    struct seccomp_probe *p = probe_of(eng);
    if (!p) {
        fn(NULL, ud);
        return;
    }
    if (p->state == PROBE_APPLIED || (p->state == PROBE_NOT_APPLIED && p->override)) {
        fn(NULL, ud);
        return;
    }
    if (p->state == PROBE_NOT_APPLIED) {
        fn(p->error ? p->error : "the seccomp profile is not applied", ud);
        return;
    }
    struct probe_waiter *w = malloc(sizeof(*w));
    if (!w) {
        fn("out of memory", ud);
        return;
    }
    /* In order: creates go to the daemon as they came. */
    *w = (struct probe_waiter){.fn = fn, .ud = ud};
    struct probe_waiter **tail = &p->waiters;
    while (*tail)
        tail = &(*tail)->next;
    *tail = w;
    if (p->state == PROBE_UNCHECKED)
        probe_run(p);
}

void seccomp_probe_settle(struct engine *eng, void (*done)(void *ud), void *ud)
{
    struct seccomp_probe *p = probe_of(eng);
    if (!p || p->state != PROBE_CHECKING) {
        done(ud);
        return;
    }
    p->settled = done;
    p->settled_ud = ud;
}

json_t *seccomp_probe_info(const struct engine *eng)
{
    const struct seccomp_probe *p = probe_of(eng);
    size_t n, removed = 0;
    const struct seccomp_call *t = seccomp_calls(&n);
    for (size_t i = 0; i < n; i++)
        removed += t[i].action == SECCOMP_REMOVE;
    return json_pack(
        "{s:s,s:I,s:s,s:s?,s:f,s:b}", "profile", "paddock", "removed", (json_int_t)removed, "state",
        probe_state_names[p ? p->state : PROBE_UNCHECKED], "error", p ? p->error : NULL, "probe_ms",
        p ? p->ms : 0.0, "override", p && p->override);
}

void seccomp_probe_free(struct engine *eng)
{
    struct seccomp_probe *p = probe_of(eng);
    if (!p)
        return;
    struct probe_waiter *w = p->waiters;
    while (w) {
        struct probe_waiter *next = w->next;
        w->fn("the engine is stopping", w->ud);
        free(w);
        w = next;
    }
    free(p->error);
    free(p->cid);
    free(p);
    eng->seccomp_probe = NULL;
}
