/* paddock show SESSION | ACTION-ID: one session (its options, state history, counts) or one
 * action (arguments, risk, decision, observation) in full. */
#include "app/app.h"
#include "app/cli.h"
#include "client/action_detail.h"
#include "client/action_view.h"
#include "client/client.h"
#include "common/size.h"

#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void show_field(const char *name, const char *value)
{
    char safe[1024];
    printf("%-16s %s\n", name, cli_safe(value ? value : "-", safe, sizeof(safe)));
}

/* Session option names whose numbers are bytes, and those that are seconds. */
static bool show_is_key(const char *key, const char *const *set)
{
    for (; *set; set++)
        if (strcmp(key, *set) == 0)
            return true;
    return false;
}

/* One option per line, "limits.memory  2 GiB": nested objects by their path, lists joined,
 * sizes in binary units, times in seconds. */
static void show_options(const char *prefix, json_t *o)
{
    static const char *const bytes[] = {"memory", "disk", NULL};
    static const char *const seconds[] = {"approval_timeout", NULL};
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v)
    {
        char key[128], text[512];
        snprintf(key, sizeof(key), "%s%s%s", prefix, *prefix ? "." : "", k);
        if (json_is_object(v) && json_object_size(v)) {
            show_options(key, v);
            continue;
        }
        if (json_is_number(v) && show_is_key(k, bytes)) {
            size_format((long long)json_number_value(v), text, sizeof(text));
        } else if (json_is_number(v) && show_is_key(k, seconds)) {
            snprintf(text, sizeof(text), "%g s", json_number_value(v));
        } else if (json_is_number(v)) {
            snprintf(text, sizeof(text), "%g", json_number_value(v));
        } else if (json_is_boolean(v)) {
            snprintf(text, sizeof(text), "%s", json_is_true(v) ? "yes" : "no");
        } else if (json_is_string(v)) {
            snprintf(text, sizeof(text), "%s", json_string_value(v));
        } else if (json_is_array(v) && json_array_size(v) == 0) {
            snprintf(text, sizeof(text), "none");
        } else {
            char *j = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
            snprintf(text, sizeof(text), "%s", j ? j : "?");
            free(j);
        }
        char safe[600];
        printf("  %-20s %s\n", key, cli_safe(text, safe, sizeof(safe)));
    }
}

static void show_action(json_t *a, json_t *names)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(json_object_get(a, "id")));
    show_field("action", buf);
    const char *sid = json_string_value(json_object_get(a, "session_id"));
    const char *sname = json_string_value(json_object_get(names, sid ? sid : ""));
    char sess[200];
    snprintf(sess, sizeof(sess), "%s%s%s%s", sname ? sname : (sid ? sid : "-"), sname ? " (" : "",
             sname ? sid : "", sname ? ")" : "");
    show_field("session", sess);
    static const char *const keys[] = {"kind",        "summary",  "state",      "risk",
                                       "risk_reason", "approval", "decided_by", "decision_reason",
                                       "error",       NULL};
    for (const char *const *k = keys; *k; k++)
        if (json_is_string(json_object_get(a, *k)))
            show_field(*k, json_string_value(json_object_get(a, *k)));
    static const char *const times[] = {"created_at", "started_at", "finished_at",
                                        "decided_at", "deadline",   NULL};
    for (const char *const *k = times; *k; k++)
        if (json_is_number(json_object_get(a, *k)))
            show_field(*k, cli_time(json_number_value(json_object_get(a, *k)), buf, sizeof(buf)));
    json_t *ec = json_object_get(a, "exit_code");
    if (json_is_integer(ec)) {
        snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(ec));
        show_field("exit_code", buf);
    }
    json_t *d = json_object_get(a, "duration_ms");
    if (json_is_number(d)) {
        snprintf(buf, sizeof(buf), "%.1f ms", json_number_value(d));
        show_field("duration", buf);
    }
    char *args = json_dumps(json_object_get(a, "args"), JSON_INDENT(2));
    printf("\nargs:\n");
    cli_write_safe(stdout, args ? args : "null", args ? strlen(args) : 4);
    free(args);
    json_t *obs = json_object_get(a, "observation");
    const char *content = json_string_value(json_object_get(obs, "content"));
    char otype[128]; /* the executor's word: sanitized like everything from the sandbox */
    printf("\n\nobservation (%s):\n",
           cli_safe(json_string_value(json_object_get(obs, "observation")) ?: "none", otype,
                    sizeof(otype)));
    if (content)
        cli_write_safe(stdout, content, strlen(content));
    const char *input =
        action_view_input(action_view_find(json_string_value(json_object_get(a, "kind"))), a);
    if (input) {
        printf("\n\ninput:\n");
        cli_write_safe(stdout, input, strlen(input));
    }
    const char *diff = action_detail_diff_of(a);
    if (diff) {
        printf("\n\ndiff:\n");
        cli_write_safe(stdout, diff, strlen(diff));
    }
    printf("\n");
}

static void show_session(json_t *s, json_t *events)
{
    static const char *const keys[] = {"id",    "name",         "state", "reason",
                                       "image", "container_id", NULL};
    for (const char *const *k = keys; *k; k++)
        show_field(*k, json_string_value(json_object_get(s, *k)));
    char buf[64];
    show_field("created",
               cli_time(json_number_value(json_object_get(s, "created_at")), buf, sizeof(buf)));
    snprintf(buf, sizeof(buf), "%lld (%lld waiting for approval)",
             (long long)json_integer_value(json_object_get(s, "action_count")),
             (long long)json_integer_value(json_object_get(s, "pending_approvals")));
    show_field("actions", buf);
    /* The disk watchdog's last measurement (engine/disk.c), once there is one. */
    json_t *disk = json_object_get(s, "disk");
    if (json_is_object(disk)) {
        char used[32], limit[32], line[400];
        const char *err = json_string_value(json_object_get(disk, "error"));
        snprintf(
            line, sizeof(line), "%s used of %s (measured %s)%s%s",
            size_format(json_integer_value(json_object_get(disk, "used")), used, sizeof(used)),
            size_format(json_integer_value(json_object_get(disk, "limit")), limit, sizeof(limit)),
            cli_time(json_number_value(json_object_get(disk, "at")), buf, sizeof(buf)),
            err ? "; not measured: " : "", err ? err : "");
        show_field("disk", line);
    }
    /* env: names only (the engine keeps no values); withheld: each name and why. */
    char names[512] = "";
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(s, "env"), i, e)
    {
        size_t len = strlen(names);
        snprintf(names + len, sizeof(names) - len, "%s%s", len ? ", " : "",
                 json_string_value(e) ? json_string_value(e) : "?");
    }
    if (names[0])
        show_field("env", names);
    json_array_foreach(json_object_get(s, "withheld_env"), i, e)
    {
        char line[600];
        const char *n = json_string_value(json_object_get(e, "name"));
        const char *why = json_string_value(json_object_get(e, "why"));
        snprintf(line, sizeof(line), "%s: %s", n ? n : "?", why ? why : "");
        show_field("withheld env", line);
    }
    printf("\noptions:\n");
    show_options("", json_object_get(s, "options"));
    if (json_array_size(json_object_get(s, "ports"))) {
        char *ports = json_dumps(json_object_get(s, "ports"), JSON_INDENT(2));
        printf("ports:\n");
        cli_write_safe(stdout, ports ? ports : "[]", ports ? strlen(ports) : 2);
        putchar('\n');
        free(ports);
    }
    printf("\nstate history:\n");
    json_array_foreach(events, i, e)
    {
        char when[32], kind[40], detail[300];
        printf("  %s  %-12s %s\n",
               cli_time(json_number_value(json_object_get(e, "at")), when, sizeof(when)),
               cli_safe(json_string_value(json_object_get(e, "kind")), kind, sizeof(kind)),
               cli_safe(json_string_value(json_object_get(e, "detail")), detail, sizeof(detail)));
    }
}

int cmd_show(struct app *app, int argc, char **argv)
{
    bool as_json = false, follow = false;
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                         {"follow", no_argument, NULL, 'f'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "jfh", opts, NULL)) != -1) {
        if (c == 'j') {
            as_json = true;
        } else if (c == 'f') {
            follow = true;
        } else if (c == 'h') {
            app_command_help(stdout, argv[0]);
            return 0;
        } else {
            return 2;
        }
    }
    if (optind >= argc) {
        fprintf(
            stderr,
            "paddock show: name a session (its name, id or id prefix) or an action (its number)\n");
        return 2;
    }
    const char *ref = argv[optind];
    bool digits = *ref && strspn(ref, "0123456789") == strlen(ref) && strlen(ref) < 16;
    char path[200];
    if (follow && (!digits || as_json)) {
        fprintf(stderr, "paddock show: --follow takes an action's number%s\n",
                as_json ? ", without --json" : " (paddock watch follows a session)");
        return 2;
    }
    if (follow)
        return watch_action_follow(app, strtoll(ref, NULL, 10));
    json_t *a = NULL;
    if (digits) {
        /* a number is an action's; when no action has it, an id prefix of digits */
        snprintf(path, sizeof(path), "/v1/actions/%s", ref);
        struct client *cl = app_client_new(app);
        int st = cl ? client_request(cl, "GET", path, NULL, 30000, &a, NULL) : -1;
        client_free(cl);
        if (st != 200) {
            json_decref(a);
            a = st == 404 ? NULL : cli_call(app, "show", "GET", path, NULL, 200);
            if (!a && st != 404)
                return 1;
        }
    }
    if (digits && a) {
        if (as_json)
            cli_print_json(a);
        else {
            json_t *names = cli_session_names(app);
            show_action(a, names);
            json_decref(names);
        }
        json_decref(a);
        return 0;
    }
    char id[80];
    if (!cli_session_id(app, "show", ref, id, sizeof(id)))
        return 1;
    snprintf(path, sizeof(path), "/v1/sessions/%s", id);
    json_t *s = cli_call(app, "show", "GET", path, NULL, 200);
    snprintf(path, sizeof(path), "/v1/sessions/%s/events", id);
    json_t *ev = s ? cli_call(app, "show", "GET", path, NULL, 200) : NULL;
    if (!ev) {
        json_decref(s);
        return 1;
    }
    if (as_json) {
        json_object_set(s, "events", json_object_get(ev, "events"));
        cli_print_json(s);
    } else {
        show_session(s, json_object_get(ev, "events"));
    }
    json_decref(s);
    json_decref(ev);
    return 0;
}
