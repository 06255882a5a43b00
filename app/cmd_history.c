/* paddock history [SESSION]: recorded actions, newest first, searchable (GET /v1/history). */
#include "app/app.h"
#include "app/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void history_print(json_t *list, json_t *names)
{
    printf("%-7s  %-19s  %-20s  %-11s  %-6s  %-9s  %4s  %9s  %s\n", "ID", "TIME", "SESSION", "KIND",
           "RISK", "APPROVAL", "EXIT", "MS", "SUMMARY");
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
        printf("%-7lld  %-19s  %-20.20s  %-11.11s  %-6s  %-9s  %4s  %9s  %s%s%s%s%s\n",
               (long long)json_integer_value(json_object_get(a, "id")),
               cli_time(json_number_value(json_object_get(a, "created_at")), when, sizeof(when)),
               cli_session_label(names, json_string_value(json_object_get(a, "session_id")), sid,
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
    json_t *r = cli_call(app, "history", "GET", path, NULL, 200);
    if (!r)
        return 1;
    if (as_json) {
        cli_print_json(r);
    } else {
        json_t *names = cli_session_names(app);
        history_print(json_object_get(r, "actions"), names);
        json_decref(names);
        json_t *next = json_object_get(r, "next_before");
        if (json_is_integer(next))
            printf("more: paddock history --before %lld\n", (long long)json_integer_value(next));
    }
    json_decref(r);
    return 0;
}
