/* paddock new: create a session that stays (POST /v1/sessions), print its name and id. */
#include "app/app.h"
#include "app/cli.h"
#include "client/client.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "NAME=VALUE" into env, or "NAME" with the value of this process's environment (as docker
 * run -e); false after printing why. */
static bool new_env_add(json_t *env, const char *arg)
{
    const char *eq = strchr(arg, '=');
    char name[256];
    size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
    if (n == 0 || n >= sizeof(name)) {
        fprintf(stderr, "paddock new: --env takes NAME=VALUE or NAME, not %s\n", arg);
        return false;
    }
    memcpy(name, arg, n);
    name[n] = '\0';
    const char *value = eq ? eq + 1 : getenv(name);
    if (!value) {
        fprintf(stderr, "paddock new: --env %s: no such variable here (give NAME=VALUE)\n", name);
        return false;
    }
    json_object_set_new(env, name, json_string(value));
    return true;
}

int cmd_new(struct app *app, int argc, char **argv)
{
    enum { OPT_ALLOW = 256, OPT_NO_KEEP, OPT_BACKEND };
    static const struct option opts[] = {{"image", required_argument, NULL, 'i'},
                                         {"name", required_argument, NULL, 'n'},
                                         {"memory", required_argument, NULL, 'm'},
                                         {"cpus", required_argument, NULL, 'c'},
                                         {"network", required_argument, NULL, 'N'},
                                         {"env", required_argument, NULL, 'e'},
                                         {"env-allow", required_argument, NULL, OPT_ALLOW},
                                         {"confirm", required_argument, NULL, 'C'},
                                         {"no-keep-alive", no_argument, NULL, OPT_NO_KEEP},
                                         {"backend", required_argument, NULL, OPT_BACKEND},
                                         {"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    json_t *body = json_object(), *limits = json_object(), *env = json_object(),
           *allow = json_array();
    bool as_json = false;
    int c, rc = 2;
    while ((c = getopt_long(argc, argv, "i:n:m:c:N:e:C:jh", opts, NULL)) != -1) {
        switch (c) {
        case 'i':
            json_object_set_new(body, "image", json_string(optarg));
            break;
        case 'n':
            json_object_set_new(body, "name", json_string(optarg));
            break;
        case 'm':
            json_object_set_new(limits, "memory", json_string(optarg));
            break;
        case 'c': {
            char *end = NULL;
            errno = 0;
            double cpus = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(cpus > 0)) {
                fprintf(stderr, "paddock new: --cpus takes a number above 0, such as 1.5\n");
                goto out;
            }
            json_object_set_new(limits, "cpus", json_real(cpus));
            break;
        }
        case 'N':
            json_object_set_new(body, "network", json_string(optarg));
            break;
        case 'e':
            if (!new_env_add(env, optarg))
                goto out;
            break;
        case OPT_ALLOW:
            json_array_append_new(allow, json_string(optarg));
            break;
        case 'C':
            json_object_set_new(body, "confirm", json_string(optarg));
            break;
        case OPT_NO_KEEP:
            json_object_set_new(body, "keep_alive", json_false());
            break;
        case OPT_BACKEND:
            json_object_set_new(body, "backend", json_string(optarg));
            break;
        case 'j':
            as_json = true;
            break;
        case 'h':
            app_command_help(stdout, "new");
            rc = 0;
            goto out;
        default:
            goto out;
        }
    }
    if (optind < argc) {
        fprintf(stderr,
                "paddock new: unexpected argument %s (options only; see paddock help new)\n",
                argv[optind]);
        goto out;
    }
    if (json_object_size(limits))
        json_object_set(body, "limits", limits);
    if (json_object_size(env))
        json_object_set(body, "env", env);
    if (json_array_size(allow))
        json_object_set(body, "env_allow", allow);
    rc = 1;
    /* like run, the first command of a fresh machine starts the engine */
    struct client *cl = client_new(app->socket);
    char *err = NULL;
    if (!cl ||
        client_ensure_engine(cl, app->self_exe, app->state_dir, app->agent_socket, &err) < 0) {
        fprintf(stderr, "paddock new: %s\n", err ? err : "out of memory");
        free(err);
        client_free(cl);
        goto out;
    }
    client_free(cl);
    json_t *s = cli_call(app, "new", "POST", "/v1/sessions", body, 201);
    if (!s)
        goto out;
    char id[80], name[160];
    if (as_json)
        cli_print_json(s);
    else
        printf("%s %s\n",
               cli_safe(json_string_value(json_object_get(s, "name")), name, sizeof(name)),
               cli_safe(json_string_value(json_object_get(s, "id")), id, sizeof(id)));
    json_decref(s);
    rc = 0;
out:
    json_decref(body);
    json_decref(limits);
    json_decref(env);
    json_decref(allow);
    return rc;
}
