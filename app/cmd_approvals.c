/* paddock approvals | approve ACTION | reject ACTION: the operator's side of approvals from a
 * shell (the dashboard has the same with y / n). */
#include "app/app.h"
#include "app/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* names: {engine: {session id: name}}; multi: an ENGINE column, and ids as ID@ENGINE. */
static void approvals_print(json_t *list, json_t *names, bool multi)
{
    if (!json_array_size(list)) {
        printf("no action waits for approval\n");
        return;
    }
    printf("%-*s  %-20s  %-6s  %-8s  %-40s  %s\n", multi ? 16 : 6, "ID", "SESSION", "RISK",
           "WAITING", "WHY", "ACTION");
    size_t i;
    json_t *a;
    double now = (double)time(NULL);
    json_array_foreach(list, i, a)
    {
        char sid[160], why[200], what[400], risk[16], kind[32];
        double at = json_number_value(json_object_get(a, "created_at"));
        double left = json_number_value(json_object_get(a, "deadline")) - now;
        char waited[32];
        snprintf(waited, sizeof(waited), "%.0fs", now - at > 0 ? now - at : 0);
        const char *engine = json_string_value(json_object_get(a, "engine"));
        char id[64];
        snprintf(id, sizeof(id), "%lld%s%s",
                 (long long)json_integer_value(json_object_get(a, "id")), multi ? "@" : "",
                 multi ? engine : "");
        printf("%-*s  %-20.20s  %-6s  %-8s  %-40.40s  %s: %s%s\n", multi ? 16 : 6, id,
               cli_session_label(json_object_get(names, engine),
                                 json_string_value(json_object_get(a, "session_id")), sid,
                                 sizeof(sid)),
               cli_safe(json_string_value(json_object_get(a, "risk")), risk, sizeof(risk)), waited,
               cli_safe(json_string_value(json_object_get(a, "risk_reason")), why, sizeof(why)),
               cli_safe(json_string_value(json_object_get(a, "kind")), kind, sizeof(kind)),
               cli_safe(json_string_value(json_object_get(a, "summary")), what, sizeof(what)),
               left < 60 ? " (expires in under a minute)" : "");
    }
}

int cmd_approvals(struct app *app, int argc, char **argv)
{
    bool as_json = false;
    int rc = cli_parse_json_only(argc, argv, &as_json);
    if (rc >= 0)
        return rc;
    char path[200] = "/v1/approvals";
    if (optind < argc) {
        char id[80];
        if (!cli_session_id(app, "approvals", argv[optind], id, sizeof(id)))
            return 1;
        snprintf(path, sizeof(path), "/v1/approvals?session=%s", id);
    }
    /* One queue across every engine (or the named one), oldest first. */
    const char *engines[64];
    bool multi = optind >= argc && app_engines_all(app);
    size_t n = multi ? cli_engines(app, engines, 64) : 1;
    if (!multi)
        engines[0] = app->engine ? app->engine : APP_ENGINE_LOCAL;
    json_t *list = json_array(), *names = json_object();
    size_t answered = 0;
    for (size_t e = 0; e < n; e++) {
        app->engine = engines[e];
        json_t *r = multi ? cli_call_listed(app, "approvals", path)
                          : cli_call(app, "approvals", "GET", path, NULL, 200);
        if (!r)
            continue;
        answered++;
        cli_tag_engine(json_object_get(r, "approvals"), engines[e]);
        json_array_extend(list, json_object_get(r, "approvals"));
        if (!as_json)
            json_object_set_new(names, engines[e], cli_session_names(app));
        json_decref(r);
    }
    if (multi)
        app->engine = NULL;
    if (answered && as_json)
        cli_print_json(list);
    else if (answered) {
        cli_sort_by_time(list, false); /* oldest first, as each engine lists its own */
        approvals_print(list, names, multi);
    }
    json_decref(list);
    json_decref(names);
    return answered ? 0 : 1;
}

static int decide(struct app *app, int argc, char **argv, bool approve)
{
    const char *cmd = approve ? "approve" : "reject";
    static const struct option opts[] = {{"reason", required_argument, NULL, 'r'},
                                         {"by", required_argument, NULL, 'b'},
                                         {"remember", no_argument, NULL, 'm'},
                                         {"pattern", required_argument, NULL, 'p'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *reason = NULL, *by = getenv("USER"), *pattern = NULL;
    bool remember = false, as_json = false;
    int c;
    while ((c = getopt_long(argc, argv, "r:b:mp:jh", opts, NULL)) != -1) {
        switch (c) {
        case 'r':
            reason = optarg;
            break;
        case 'b':
            by = optarg;
            break;
        case 'm':
            remember = true;
            break;
        case 'p':
            pattern = optarg;
            remember = true;
            break;
        case 'j':
            as_json = true;
            break;
        case 'h':
            app_command_help(stdout, cmd);
            return 0;
        default:
            return 2;
        }
    }
    if (!approve && (remember || pattern)) {
        fprintf(stderr, "paddock reject: --remember and --pattern go with approve\n");
        return 2;
    }
    long long id = cli_action_id(cmd, optind < argc ? argv[optind] : NULL);
    if (!id)
        return 2;
    json_t *body = json_object();
    if (by && *by)
        json_object_set_new(body, "by", json_string(by));
    if (reason)
        json_object_set_new(body, "reason", json_string(reason));
    if (remember)
        json_object_set_new(body, "remember", json_true());
    if (pattern)
        json_object_set_new(body, "pattern", json_string(pattern));
    char path[96];
    snprintf(path, sizeof(path), "/v1/actions/%lld/%s", id, cmd);
    json_t *a = cli_call(app, cmd, "POST", path, body, 200);
    json_decref(body);
    if (!a)
        return 1;
    if (as_json) {
        cli_print_json(a);
    } else {
        char what[400];
        printf("%s action %lld: %s\n", approve ? "approved" : "rejected", id,
               cli_safe(json_string_value(json_object_get(a, "summary")), what, sizeof(what)));
    }
    json_decref(a);
    return 0;
}

int cmd_approve(struct app *app, int argc, char **argv)
{
    return decide(app, argc, argv, true);
}

int cmd_reject(struct app *app, int argc, char **argv)
{
    return decide(app, argc, argv, false);
}
