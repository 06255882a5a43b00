/* paddock history [SESSION]: recorded actions, newest first, searchable (GET /v1/history). */
#include "app/app.h"
#include "app/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* names: {engine: {session id: name}}; multi: ids as ID@ENGINE. */
static void history_print(json_t *list, json_t *names, bool multi)
{
    printf("%-*s  %-19s  %-20s  %-11s  %-6s  %-9s  %4s  %9s  %s\n", multi ? 16 : 7, "ID", "TIME",
           "SESSION", "KIND", "RISK", "APPROVAL", "EXIT", "MS", "SUMMARY");
    size_t i;
    json_t *a;
    json_array_foreach(list, i, a)
    {
        char when[32], sid[160], kind[32], risk[16], appr[16], what[300], ec[16], ms[24], st[24];
        json_t *e = json_object_get(a, "exit_code"), *d = json_object_get(a, "duration_ms");
        snprintf(ec, sizeof(ec), "-");
        if (json_is_integer(e))
            snprintf(ec, sizeof(ec), "%lld", (long long)json_integer_value(e));
        snprintf(ms, sizeof(ms), "-");
        if (json_is_number(d))
            snprintf(ms, sizeof(ms), "%.1f", json_number_value(d));
        /* anything but done is said after the summary */
        cli_safe(json_string_value(json_object_get(a, "state")), st, sizeof(st));
        bool done = strcmp(st, "done") == 0;
        /* an automatic decision names its rule (id and pattern, as it was then) */
        char by_rule[300] = "";
        json_t *rule = json_object_get(a, "rule");
        if (json_is_object(rule)) {
            char pat[240];
            snprintf(
                by_rule, sizeof(by_rule), "  [%s by rule %lld \"%s\"]",
                strcmp(st, "rejected") == 0 ? "denied" : "allowed",
                (long long)json_integer_value(json_object_get(rule, "id")),
                cli_safe(json_string_value(json_object_get(rule, "pattern")), pat, sizeof(pat)));
        }
        const char *engine = json_string_value(json_object_get(a, "engine"));
        char id[64];
        snprintf(id, sizeof(id), "%lld%s%s",
                 (long long)json_integer_value(json_object_get(a, "id")), multi ? "@" : "",
                 multi ? engine : "");
        printf("%-*s  %-19s  %-20.20s  %-11.11s  %-6s  %-9s  %4s  %9s  %s%s%s%s%s\n",
               multi ? 16 : 7, id,
               cli_time(json_number_value(json_object_get(a, "created_at")), when, sizeof(when)),
               cli_session_label(json_object_get(names, engine),
                                 json_string_value(json_object_get(a, "session_id")), sid,
                                 sizeof(sid)),
               cli_safe(json_string_value(json_object_get(a, "kind")), kind, sizeof(kind)),
               cli_safe(json_string_value(json_object_get(a, "risk")), risk, sizeof(risk)),
               cli_safe(json_string_value(json_object_get(a, "approval")), appr, sizeof(appr)), ec,
               ms, cli_safe(json_string_value(json_object_get(a, "summary")), what, sizeof(what)),
               done ? "" : "  [", done ? "" : st, done ? "" : "]", by_rule);
    }
}

int cmd_history(struct app *app, int argc, char **argv)
{
    static const struct option opts[] = {{"search", required_argument, NULL, 'q'},
                                         {"state", required_argument, NULL, 's'},
                                         {"kind", required_argument, NULL, 'k'},
                                         {"risk", required_argument, NULL, 'r'},
                                         {"limit", required_argument, NULL, 'n'},
                                         {"before", required_argument, NULL, 'b'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *q = NULL, *state = NULL, *kind = NULL, *risk = NULL, *limit = "50", *before = NULL;
    bool as_json = false;
    int c;
    while ((c = getopt_long(argc, argv, "q:s:k:r:n:b:jh", opts, NULL)) != -1) {
        switch (c) {
        case 'q':
            q = optarg;
            break;
        case 's':
            state = optarg;
            break;
        case 'k':
            kind = optarg;
            break;
        case 'r':
            risk = optarg;
            break;
        case 'n':
            limit = optarg;
            break;
        case 'b':
            before = optarg;
            break;
        case 'j':
            as_json = true;
            break;
        case 'h':
            app_command_help(stdout, "history");
            return 0;
        default:
            return 2;
        }
    }
    char path[2048] = "/v1/history", id[80];
    if (optind < argc) {
        if (!cli_session_id(app, "history", argv[optind], id, sizeof(id)))
            return 1;
        cli_query_add(path, sizeof(path), "session", id);
    }
    cli_query_add(path, sizeof(path), "q", q);
    cli_query_add(path, sizeof(path), "state", state);
    cli_query_add(path, sizeof(path), "kind", kind);
    cli_query_add(path, sizeof(path), "risk", risk);
    cli_query_add(path, sizeof(path), "limit", limit);
    cli_query_add(path, sizeof(path), "before", before);
    /* Every engine's actions (or the named one's), newest first; a page per engine. */
    const char *engines[64];
    bool multi = optind >= argc && !before && app_engines_all(app);
    size_t n = multi ? cli_engines(app, engines, 64) : 1;
    if (!multi)
        engines[0] = app->engine ? app->engine : APP_ENGINE_LOCAL;
    json_t *r = multi ? json_pack("{s:[],s:n}", "actions", "next_before") : NULL;
    json_t *names = json_object();
    size_t answered = 0;
    for (size_t e = 0; e < n; e++) {
        app->engine = engines[e];
        json_t *one = multi ? cli_call_listed(app, "history", path)
                            : cli_call(app, "history", "GET", path, NULL, 200);
        if (!one)
            continue;
        answered++;
        cli_tag_engine(json_object_get(one, "actions"), engines[e]);
        if (!as_json)
            json_object_set_new(names, engines[e], cli_session_names(app));
        if (!multi) {
            r = one;
            continue;
        }
        json_array_extend(json_object_get(r, "actions"), json_object_get(one, "actions"));
        json_decref(one);
    }
    if (multi)
        app->engine = NULL;
    if (!answered) {
        json_decref(r);
        json_decref(names);
        return 1;
    }
    if (multi)
        cli_sort_by_time(json_object_get(r, "actions"), true); /* newest first */
    if (as_json) {
        cli_print_json(r);
    } else {
        history_print(json_object_get(r, "actions"), names, multi);
        json_t *next = json_object_get(r, "next_before");
        if (json_is_integer(next))
            printf("more: paddock history --before %lld%s%s\n", (long long)json_integer_value(next),
                   app->engine ? " --engine " : "", app->engine ? app->engine : "");
    }
    json_decref(names);
    json_decref(r);
    return 0;
}
