/* paddock limit SESSION --disk SIZE: the operator raises (or lowers) a session's disk limit.
 * A session the disk watchdog paused stays paused: resume it afterwards (paddock resume). */
#include "app/app.h"
#include "app/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

int cmd_limit(struct app *app, int argc, char **argv)
{
    static const struct option opts[] = {{"disk", required_argument, NULL, 'd'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    const char *disk = NULL;
    bool as_json = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "d:jh", opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            disk = optarg;
            break;
        case 'j':
            as_json = true;
            break;
        case 'h':
            app_command_help(stdout, "limit");
            return 0;
        default:
            return 2;
        }
    }
    if (optind + 1 != argc || !disk) {
        fprintf(stderr, "paddock limit: name one session and --disk SIZE\n");
        return 2;
    }
    char id[80], path[300];
    if (!cli_session_id(app, "limit", argv[optind], id, sizeof(id)))
        return 1;
    snprintf(path, sizeof(path), "/v1/sessions/%s/limits", id);
    json_t *body = json_pack("{s:s}", "disk", disk);
    json_t *s = cli_call(app, "limit", "POST", path, body, 200);
    json_decref(body);
    if (!s)
        return 1;
    if (as_json) {
        cli_print_json(s);
    } else {
        char a[80], b[80];
        json_t *lim =
            json_object_get(json_object_get(json_object_get(s, "options"), "limits"), "disk");
        printf("limit %s: disk %lld bytes (%s)\n",
               cli_safe(json_string_value(json_object_get(s, "id")), a, sizeof(a)),
               (long long)json_integer_value(lim),
               cli_safe(json_string_value(json_object_get(s, "state")), b, sizeof(b)));
    }
    json_decref(s);
    return 0;
}
