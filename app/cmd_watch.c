/* paddock watch SESSION: the session's actions as they happen, each command's output as it
 * prints (the engine's `action_output` events), until the session is deleted or ^C; and
 * `paddock show ACTION --follow`: one action's output until it ends
 * (GET /v1/actions/{id}/output?follow=1). Everything from the sandbox is sanitized
 * (common/sanitize.c through cli_write_safe) before it reaches the terminal. */
#include "app/app.h"
#include "app/cli.h"
#include "client/client.h"
#include "client/live_output.h"

#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The action being shown: only one runs at a time in a session. */
struct watch {
    char sid[80];
    long long id; /* the action whose output is printed, 0: none */
    struct live_output lo;
    bool at_line_start;
    bool done;     /* the session is gone: stop */
    int exit_code; /* show --follow: what to return */
    bool ended;
};

/* A piece of the action's output at offset (dedupe and gaps: client/live_output.h). */
static void watch_print(struct watch *w, unsigned long long offset, const char *text, size_t len)
{
    size_t skip;
    uint64_t missed;
    size_t n = live_output_place(&w->lo, offset, len, &skip, &missed);
    if (missed)
        printf("%s[%llu bytes of output not shown]\n", w->at_line_start ? "" : "\n",
               (unsigned long long)missed);
    if (missed)
        w->at_line_start = true;
    if (!n)
        return;
    cli_write_safe(stdout, text + skip, n);
    w->at_line_start = text[len - 1] == '\n';
    fflush(stdout);
}

/* The line that opens an action: its number, kind and summary. */
static void watch_begin(struct watch *w, json_t *a)
{
    char what[600], kind[32];
    w->id = (long long)json_integer_value(json_object_get(a, "id"));
    w->lo = (struct live_output){0};
    w->at_line_start = true;
    printf("── #%lld %s: %s\n", w->id,
           cli_safe(json_string_value(json_object_get(a, "kind")), kind, sizeof(kind)),
           cli_safe(json_string_value(json_object_get(a, "summary")), what, sizeof(what)));
    fflush(stdout);
}

/* The line that closes it: its state and exit code. */
static void watch_end(struct watch *w, json_t *state, json_t *code)
{
    char st[40];
    cli_safe(json_string_value(state), st, sizeof(st));
    if (!w->at_line_start)
        putchar('\n');
    if (json_is_integer(code))
        printf("── %s, exit code %lld\n", st, (long long)json_integer_value(code));
    else
        printf("── %s\n", st);
    w->at_line_start = true;
    fflush(stdout);
}

static bool watch_final(const char *state)
{
    static const char *const final[] = {"done", "failed", "rejected", "interrupted", "skipped"};
    for (size_t i = 0; state && i < sizeof(final) / sizeof(final[0]); i++)
        if (strcmp(state, final[i]) == 0)
            return true;
    return false;
}

static void watch_on_event(const char *type, json_t *data, void *ud)
{
    struct watch *w = ud;
    if (strcmp(type, "action") == 0) {
        const char *sid = json_string_value(json_object_get(data, "session_id"));
        const char *state = json_string_value(json_object_get(data, "state"));
        long long id = (long long)json_integer_value(json_object_get(data, "id"));
        if (!sid || strcmp(sid, w->sid) != 0 || !state)
            return;
        if (id != w->id && (strcmp(state, "running") == 0 || watch_final(state))) {
            watch_begin(w, data);
        } else if (id == w->id && strcmp(state, "pending") == 0) {
            printf("── waiting for approval\n");
            fflush(stdout);
        }
        if (id == w->id && watch_final(state)) {
            watch_end(w, json_object_get(data, "state"), json_object_get(data, "exit_code"));
            w->id = 0;
        }
    } else if (strcmp(type, "action_output") == 0) {
        const char *sid = json_string_value(json_object_get(data, "session"));
        json_t *text = json_object_get(data, "text");
        if (!sid || strcmp(sid, w->sid) != 0 || !json_is_string(text) ||
            json_integer_value(json_object_get(data, "action")) != w->id)
            return;
        watch_print(w, (unsigned long long)json_integer_value(json_object_get(data, "offset")),
                    json_string_value(text), json_string_length(text));
    } else if (strcmp(type, "session") == 0) {
        const char *id = json_string_value(json_object_get(data, "id"));
        const char *state = json_string_value(json_object_get(data, "state"));
        char st[40];
        if (!id || strcmp(id, w->sid) != 0 || !state)
            return;
        printf("── session %s\n", cli_safe(state, st, sizeof(st)));
        fflush(stdout);
        w->done = strcmp(state, "deleted") == 0 || strcmp(state, "error") == 0;
    }
}

static void watch_on_follow(const char *type, json_t *data, void *ud)
{
    struct watch *w = ud;
    json_t *text = json_object_get(data, "text");
    if (strcmp(type, "output") == 0 && json_is_string(text)) {
        watch_print(w, (unsigned long long)json_integer_value(json_object_get(data, "offset")),
                    json_string_value(text), json_string_length(text));
    } else if (strcmp(type, "end") == 0) {
        json_t *code = json_object_get(data, "exit_code");
        watch_end(w, json_object_get(data, "state"), code);
        w->exit_code = json_is_integer(code) ? (int)json_integer_value(code) : 0;
        w->ended = true;
    }
}

/* Pump ev until stop says so or the stream ends; 0, or 1 after printing why it broke. */
static int watch_pump(const char *cmd, struct client_events *ev, client_event_fn fn,
                      struct watch *w, const bool *stop)
{
    while (!*stop) {
        struct pollfd p = {.fd = client_events_fd(ev), .events = POLLIN};
        if (poll(&p, 1, -1) < 0)
            continue; /* EINTR */
        if (client_events_pump(ev, fn, w) == 0)
            continue;
        if (*stop)
            break;
        char msg[400];
        const char *e = client_events_error(ev);
        fprintf(stderr, "paddock %s: %s\n", cmd,
                cli_safe(e ? e : "the engine closed the stream", msg, sizeof(msg)));
        return 1;
    }
    return 0;
}

int watch_action_follow(struct app *app, long long id)
{
    struct watch w = {.at_line_start = true};
    char path[96];
    snprintf(path, sizeof(path), "/v1/actions/%lld", id);
    json_t *a = cli_call(app, "show", "GET", path, NULL, 200);
    if (!a)
        return 1;
    watch_begin(&w, a);
    json_decref(a);
    struct client *cl = client_new(app->socket);
    char *err = NULL;
    snprintf(path, sizeof(path), "/v1/actions/%lld/output?follow=1", id);
    struct client_events *ev = cl ? client_sse_open(cl, path, &err) : NULL;
    if (!ev) {
        char msg[400];
        fprintf(stderr, "paddock show: %s\n",
                cli_safe(err ? err : "no engine answers", msg, sizeof(msg)));
        free(err);
        client_free(cl);
        return 1;
    }
    int rc = watch_pump("show", ev, watch_on_follow, &w, &w.ended);
    client_events_close(ev);
    client_free(cl);
    return rc ? rc : w.exit_code;
}

int cmd_watch(struct app *app, int argc, char **argv)
{
    bool as_json = false;
    int rc = cli_parse_json_only(argc, argv, &as_json);
    if (rc >= 0)
        return rc;
    if (optind >= argc || as_json) {
        fprintf(stderr, "paddock watch: name a session (id or name)%s\n",
                as_json ? "; --json is not taken (GET /v1/events is the JSON stream)" : "");
        return 2;
    }
    struct watch w = {.at_line_start = true};
    if (!cli_session_id(app, "watch", argv[optind], w.sid, sizeof(w.sid)))
        return 1;
    /* The stream first, then what runs already: nothing falls between the two. */
    struct client *cl = client_new(app->socket);
    char *err = NULL;
    struct client_events *ev = cl ? client_events_open(cl, &err) : NULL;
    if (!ev) {
        char msg[400];
        fprintf(stderr, "paddock watch: %s\n",
                cli_safe(err ? err : "no engine answers", msg, sizeof(msg)));
        free(err);
        client_free(cl);
        return 1;
    }
    char path[160];
    snprintf(path, sizeof(path), "/v1/sessions/%s/actions?limit=1", w.sid);
    json_t *list = cli_call(app, "watch", "GET", path, NULL, 200);
    json_t *last = json_array_get(json_object_get(list, "actions"), 0);
    const char *state = json_string_value(json_object_get(last, "state"));
    if (state && strcmp(state, "running") == 0) {
        watch_begin(&w, last);
        snprintf(path, sizeof(path), "/v1/actions/%lld/output", w.id);
        json_t *out = cli_call(app, "watch", "GET", path, NULL, 200);
        json_t *text = json_object_get(out, "text");
        if (json_is_true(json_object_get(out, "running")) && json_is_string(text))
            watch_print(&w, (unsigned long long)json_integer_value(json_object_get(out, "offset")),
                        json_string_value(text), json_string_length(text));
        json_decref(out);
    } else {
        printf("── watching; the next action shows here as it runs (^C stops)\n");
        fflush(stdout);
    }
    json_decref(list);
    rc = watch_pump("watch", ev, watch_on_event, &w, &w.done);
    client_events_close(ev);
    client_free(cl);
    return rc;
}
