/* paddock risk [--session S] [--json] -- CMD...: what the engine would make of a command
 * (POST /v1/risk): its risk, the reason and the session's rule that would decide it. Nothing
 * runs and nothing is recorded: an operator tries a rule, an agent host asks before sending. */
#include "app/app.h"
#include "app/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One operand is the command line as written; several are joined by spaces, as sh -c "$*". */
static char *risk_command(int argc, char **argv)
{
    size_t n = 1;
    for (int i = 0; i < argc; i++)
        n += strlen(argv[i]) + 1;
    char *s = calloc(1, n);
    for (int i = 0; s && i < argc; i++) {
        if (i)
            strcat(s, " ");
        strcat(s, argv[i]);
    }
    return s;
}

static void risk_print(json_t *r)
{
    char risk[16], why[400], declared[16], pat[400];
    printf("%s: %s\n", cli_safe(json_string_value(json_object_get(r, "risk")), risk, sizeof(risk)),
           cli_safe(json_string_value(json_object_get(r, "reason")), why, sizeof(why)));
    const char *d = json_string_value(json_object_get(r, "declared_risk"));
    if (d)
        printf("the agent declared: %s\n", cli_safe(d, declared, sizeof(declared)));
    json_t *rule = json_object_get(r, "rule");
    if (json_is_object(rule))
        printf("decided by the rule: %s \"%s\"\n",
               json_string_value(json_object_get(rule, "decision")),
               cli_safe(json_string_value(json_object_get(rule, "pattern")), pat, sizeof(pat)));
}

int cmd_risk(struct app *app, int argc, char **argv)
{
    static const struct option opts[] = {{"session", required_argument, NULL, 's'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *session = NULL;
    bool as_json = false;
    int c;
    while ((c = getopt_long(argc, argv, "+s:jh", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            session = optarg;
            break;
        case 'j':
            as_json = true;
            break;
        case 'h':
            app_command_help(stdout, "risk");
            return 0;
        default:
            return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "paddock risk: no command given (paddock risk -- CMD...)\n");
        return 2;
    }
    char path[200] = "/v1/risk";
    if (session) {
        char id[80];
        if (!cli_session_id(app, "risk", session, id, sizeof(id)))
            return 1;
        cli_query_add(path, sizeof(path), "session", id);
    }
    char *command = risk_command(argc - optind, argv + optind);
    if (!command) {
        fprintf(stderr, "paddock risk: out of memory\n");
        return 1;
    }
    json_t *body =
        json_pack("{s:{s:s,s:{s:s}}}", "action", "action", "run", "args", "command", command);
    free(command);
    json_t *r = cli_call(app, "risk", "POST", path, body, 200);
    json_decref(body);
    if (!r)
        return 1;
    if (as_json)
        cli_print_json(r);
    else
        risk_print(r);
    json_decref(r);
    return 0;
}
