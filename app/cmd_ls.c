/* paddock ls: sessions as a table or JSON. */
#include "app/app.h"
#include "app/cli.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_ls(struct app *app, int argc, char **argv)
{
    static const struct option opts[] = {{"all", no_argument, NULL, 'a'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    bool all = false, as_json = false;
    int c;
    while ((c = getopt_long(argc, argv, "ajh", opts, NULL)) != -1) {
        if (c == 'a') {
            all = true;
        } else if (c == 'j') {
            as_json = true;
        } else if (c == 'h') {
            app_command_help(stdout, "ls");
            return 0;
        } else {
            return 2;
        }
    }
    /* Every engine's sessions (or the named engine's), each tagged with its engine. */
    const char *names[64];
    size_t n = cli_engines(app, names, 64);
    bool multi = app_engines_all(app);
    const char *path = all ? "/v1/sessions?all=1" : "/v1/sessions";
    json_t *sessions = json_array();
    size_t answered = 0;
    for (size_t e = 0; e < n; e++) {
        app->engine = names[e];
        json_t *r =
            multi ? cli_call_listed(app, "ls", path) : cli_call(app, "ls", "GET", path, NULL, 200);
        if (!r)
            continue;
        answered++;
        cli_tag_engine(json_object_get(r, "sessions"), names[e]);
        json_array_extend(sessions, json_object_get(r, "sessions"));
        json_decref(r);
    }
    app->engine = multi ? NULL : app->engine;
    int rc = answered ? 0 : 1;
    if (!answered) {
        rc = 1;
    } else if (as_json) {
        cli_print_json(sessions);
    } else {
        printf("%s%-16s  %-20s  %-12s  %-24s  %7s  %7s  %s\n", multi ? "ENGINE        " : "", "ID",
               "NAME", "STATE", "IMAGE", "ACTIONS", "WAITING", "CREATED");
        size_t i;
        json_t *s;
        json_array_foreach(sessions, i, s)
        {
            char when[32];
            cli_time(json_number_value(json_object_get(s, "created_at")), when, sizeof(when));
            if (multi)
                printf("%-12.12s  ", json_string_value(json_object_get(s, "engine")));
            printf("%-16s  %-20.20s  %-12s  %-24.24s  %7lld  %7lld  %s\n",
                   json_string_value(json_object_get(s, "id")),
                   json_string_value(json_object_get(s, "name")),
                   json_string_value(json_object_get(s, "state")),
                   json_string_value(json_object_get(s, "image")),
                   (long long)json_integer_value(json_object_get(s, "action_count")),
                   (long long)json_integer_value(json_object_get(s, "pending_approvals")), when);
            /* Why a session cannot take actions (paused at its disk limit, stopped, in
             * error): on a line of its own under it. */
            const char *state = json_string_value(json_object_get(s, "state"));
            const char *why = json_string_value(json_object_get(s, "reason"));
            char safe[400];
            if (why && *why && state && strcmp(state, "ready") != 0 &&
                strcmp(state, "deleted") != 0)
                printf("%s%-16s  └ %s\n", multi ? "              " : "", "",
                       cli_safe(why, safe, sizeof(safe)));
        }
    }
    json_decref(sessions);
    return rc;
}
