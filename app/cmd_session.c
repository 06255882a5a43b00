/* paddock pause|resume|stop|rm SESSION...: one lifecycle request per session. */
#include "app/app.h"
#include "app/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

/* Each command is a row: its request and what it prints. */
static const struct {
    const char *cmd, *method, *suffix, *done;
} session_verbs[] = {
    {"pause", "POST", "/pause", "paused"},
    {"resume", "POST", "/resume", "resumed"},
    {"stop", "POST", "/stop", "stopped"},
    {"rm", "DELETE", "", "deleted"},
};

static int session_verb(struct app *app, int argc, char **argv, const char *cmd)
{
    size_t v = 0;
    while (strcmp(session_verbs[v].cmd, cmd) != 0)
        v++;
    bool as_json = false;
    int parsed = cli_parse_json_only(argc, argv, &as_json);
    if (parsed >= 0)
        return parsed;
    if (optind >= argc) {
        fprintf(stderr, "paddock %s: name at least one session (id or name)\n", cmd);
        return 2;
    }
    int rc = 0;
    json_t *all = json_array();
    for (int i = optind; i < argc; i++) {
        char id[80], path[300];
        if (!cli_session_id(app, cmd, argv[i], id, sizeof(id))) {
            rc = 1;
            continue;
        }
        snprintf(path, sizeof(path), "/v1/sessions/%s%s", id, session_verbs[v].suffix);
        json_t *s = cli_call(app, cmd, session_verbs[v].method, path, NULL, 200);
        if (!s) {
            rc = 1;
            continue;
        }
        char a[80], b[80], n[160];
        if (!as_json)
            printf("%s %s (%s, %s)\n", session_verbs[v].done,
                   cli_safe(json_string_value(json_object_get(s, "name")), n, sizeof(n)),
                   cli_safe(json_string_value(json_object_get(s, "id")), a, sizeof(a)),
                   cli_safe(json_string_value(json_object_get(s, "state")), b, sizeof(b)));
        json_array_append_new(all, s);
    }
    if (as_json)
        cli_print_json(all);
    json_decref(all);
    return rc;
}

int cmd_pause(struct app *app, int argc, char **argv)
{
    return session_verb(app, argc, argv, "pause");
}

int cmd_resume(struct app *app, int argc, char **argv)
{
    return session_verb(app, argc, argv, "resume");
}

int cmd_stop(struct app *app, int argc, char **argv)
{
    return session_verb(app, argc, argv, "stop");
}

int cmd_rm(struct app *app, int argc, char **argv)
{
    return session_verb(app, argc, argv, "rm");
}
