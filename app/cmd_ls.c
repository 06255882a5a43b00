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
    json_t *reply =
        cli_call(app, "ls", "GET", all ? "/v1/sessions?all=1" : "/v1/sessions", NULL, 200);
    int rc = 0;
    if (!reply) {
        rc = 1;
    } else if (as_json) {
        json_dumpf(json_object_get(reply, "sessions"), stdout, JSON_INDENT(2));
        putchar('\n');
    } else {
        printf("%-16s  %-20s  %-12s  %-24s  %7s  %7s  %s\n", "ID", "NAME", "STATE", "IMAGE",
               "ACTIONS", "WAITING", "CREATED");
        size_t i;
        json_t *s;
        json_array_foreach(json_object_get(reply, "sessions"), i, s)
        {
            char when[32];
            cli_time(json_number_value(json_object_get(s, "created_at")), when, sizeof(when));
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
                printf("%-16s  └ %s\n", "", cli_safe(why, safe, sizeof(safe)));
        }
    }
    json_decref(reply);
    return rc;
}
