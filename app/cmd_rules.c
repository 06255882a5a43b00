/* paddock rules [list|add|edit|rm]: the operator's rules from a shell (the dashboard's queue
 * has the same under R). Engine-wide rules come from the config file ([approvals] allow and
 * deny, changed only there) or from here; a session's last as long as it does. */
#include "app/app.h"
#include "app/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void rules_print(json_t *r)
{
    json_t *list = json_object_get(r, "rules");
    char ceiling[16];
    printf("ceiling: rules approve nothing rated above %s\n",
           cli_safe(json_string_value(json_object_get(r, "ceiling")), ceiling, sizeof(ceiling)));
    if (!json_array_size(list)) {
        printf("no rules\n");
        return;
    }
    printf("%-5s  %-5s  %-16s  %-7s  %-10s  %s\n", "ID", "RULE", "SCOPE", "KIND", "BY", "PATTERN");
    size_t i;
    json_t *x;
    json_array_foreach(list, i, x)
    {
        char dec[16], sid[40], kind[32], by[64], pat[600];
        const char *origin = json_string_value(json_object_get(x, "origin"));
        const char *s = json_string_value(json_object_get(x, "session_id"));
        const char *who = json_string_value(json_object_get(x, "changed_by"));
        if (!who)
            who = json_string_value(json_object_get(x, "created_by"));
        printf("%-5lld  %-5s  %-16s  %-7s  %-10s  %s\n",
               (long long)json_integer_value(json_object_get(x, "id")),
               cli_safe(json_string_value(json_object_get(x, "decision")), dec, sizeof(dec)),
               s ? cli_safe(s, sid, sizeof(sid))
                 : (origin && strcmp(origin, "config") == 0 ? "config file" : "engine"),
               json_string_value(json_object_get(x, "kind"))
                   ? cli_safe(json_string_value(json_object_get(x, "kind")), kind, sizeof(kind))
                   : "any",
               cli_safe(who ? who : "-", by, sizeof(by)),
               cli_safe(json_string_value(json_object_get(x, "pattern")), pat, sizeof(pat)));
    }
}

static void rule_print_one(const char *what, json_t *x)
{
    char pat[600], dec[16];
    printf("%s rule %lld: %s %s\n", what, (long long)json_integer_value(json_object_get(x, "id")),
           cli_safe(json_string_value(json_object_get(x, "decision")), dec, sizeof(dec)),
           cli_safe(json_string_value(json_object_get(x, "pattern")), pat, sizeof(pat)));
}

/* The options every subcommand shares; *pattern_opt only for edit. */
struct rules_opts {
    const char *session, *kind, *by, *pattern, *decision;
    bool as_json;
};

static int rules_getopt(int argc, char **argv, struct rules_opts *o)
{
    static const struct option opts[] = {{"session", required_argument, NULL, 's'},
                                         {"kind", required_argument, NULL, 'k'},
                                         {"by", required_argument, NULL, 'b'},
                                         {"pattern", required_argument, NULL, 'p'},
                                         {"allow", no_argument, NULL, 'a'},
                                         {"deny", no_argument, NULL, 'd'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int c;
    o->by = getenv("USER");
    while ((c = getopt_long(argc, argv, "s:k:b:p:adjh", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            o->session = optarg;
            break;
        case 'k':
            o->kind = optarg;
            break;
        case 'b':
            o->by = optarg;
            break;
        case 'p':
            o->pattern = optarg;
            break;
        case 'a':
            o->decision = "allow";
            break;
        case 'd':
            o->decision = "deny";
            break;
        case 'j':
            o->as_json = true;
            break;
        case 'h':
            app_command_help(stdout, "rules");
            return 0;
        default:
            fprintf(stderr, "usage: paddock rules %s (paddock help rules)\n",
                    app_command_find("rules")->args);
            return 2;
        }
    }
    return -1;
}

static int rules_list(struct app *app, const struct rules_opts *o)
{
    char path[200] = "/v1/rules";
    if (o->session) {
        char id[80];
        if (!cli_session_id(app, "rules", o->session, id, sizeof(id)))
            return 1;
        cli_query_add(path, sizeof(path), "session", id);
    }
    json_t *r = cli_call(app, "rules", "GET", path, NULL, 200);
    if (!r)
        return 1;
    if (o->as_json)
        cli_print_json(r);
    else
        rules_print(r);
    json_decref(r);
    return 0;
}

static int rules_add(struct app *app, const struct rules_opts *o, int argc, char **argv)
{
    char *pattern = optind < argc ? cli_join_argv(argc - optind, argv + optind) : NULL;
    if (!pattern || !*pattern) {
        fprintf(stderr, "paddock rules add: a PATTERN is needed (\"git status *\")\n");
        free(pattern);
        return 2;
    }
    json_t *body =
        json_pack("{s:s,s:s}", "pattern", pattern, "decision", o->decision ? o->decision : "allow");
    free(pattern);
    if (o->kind && strcmp(o->kind, "any") != 0)
        json_object_set_new(body, "kind", json_string(o->kind));
    if (o->by && *o->by)
        json_object_set_new(body, "by", json_string(o->by));
    if (o->session) {
        char id[80];
        if (!cli_session_id(app, "rules", o->session, id, sizeof(id))) {
            json_decref(body);
            return 1;
        }
        json_object_set_new(body, "session", json_string(id));
    }
    json_t *r = cli_call(app, "rules", "POST", "/v1/rules", body, 201);
    json_decref(body);
    if (!r)
        return 1;
    if (o->as_json)
        cli_print_json(r);
    else
        rule_print_one("added", r);
    json_decref(r);
    return 0;
}

static long long rules_id(const char *cmd, const char *arg)
{
    char *end = NULL;
    long long id = arg ? strtoll(arg, &end, 10) : 0;
    if (!arg || !*arg || *end || id <= 0) {
        fprintf(stderr, "paddock rules %s: a rule's ID is needed (paddock rules list shows them)\n",
                cmd);
        return 0;
    }
    return id;
}

static int rules_edit(struct app *app, const struct rules_opts *o, int argc, char **argv)
{
    long long id = rules_id("edit", optind < argc ? argv[optind] : NULL);
    if (!id)
        return 2;
    if (!o->pattern && !o->decision && !o->kind) {
        fprintf(stderr, "paddock rules edit: say what changes (--pattern, --allow, --deny, "
                        "--kind)\n");
        return 2;
    }
    json_t *body = json_object();
    if (o->pattern)
        json_object_set_new(body, "pattern", json_string(o->pattern));
    if (o->decision)
        json_object_set_new(body, "decision", json_string(o->decision));
    if (o->kind)
        json_object_set_new(body, "kind",
                            strcmp(o->kind, "any") == 0 ? json_null() : json_string(o->kind));
    if (o->by && *o->by)
        json_object_set_new(body, "by", json_string(o->by));
    char path[64];
    snprintf(path, sizeof(path), "/v1/rules/%lld", id);
    json_t *r = cli_call(app, "rules", "PATCH", path, body, 200);
    json_decref(body);
    if (!r)
        return 1;
    if (o->as_json)
        cli_print_json(r);
    else
        rule_print_one("changed", r);
    json_decref(r);
    return 0;
}

static int rules_rm(struct app *app, const struct rules_opts *o, int argc, char **argv)
{
    long long id = rules_id("rm", optind < argc ? argv[optind] : NULL);
    if (!id)
        return 2;
    char path[200];
    snprintf(path, sizeof(path), "/v1/rules/%lld", id);
    if (o->by && *o->by)
        cli_query_add(path, sizeof(path), "by", o->by);
    json_t *r = cli_call(app, "rules", "DELETE", path, NULL, 200);
    if (!r)
        return 1;
    if (o->as_json)
        cli_print_json(r);
    else
        rule_print_one("removed", json_object_get(r, "removed"));
    json_decref(r);
    return 0;
}

int cmd_rules(struct app *app, int argc, char **argv)
{
    /* The subcommand first ("list" when there is none or an option comes first). */
    const char *sub = argc > 1 && argv[1][0] != '-' ? argv[1] : "list";
    int shift = argc > 1 && argv[1][0] != '-' ? 1 : 0;
    struct rules_opts o = {0};
    optind = 1;
    int rc = rules_getopt(argc - shift, argv + shift, &o);
    if (rc >= 0)
        return rc;
    argc -= shift;
    argv += shift;
    if (strcmp(sub, "list") == 0 || strcmp(sub, "ls") == 0)
        return rules_list(app, &o);
    if (strcmp(sub, "add") == 0)
        return rules_add(app, &o, argc, argv);
    if (strcmp(sub, "edit") == 0)
        return rules_edit(app, &o, argc, argv);
    if (strcmp(sub, "rm") == 0 || strcmp(sub, "remove") == 0)
        return rules_rm(app, &o, argc, argv);
    fprintf(stderr,
            "paddock rules: no subcommand \"%s\" (list, add, edit, rm; paddock help rules)\n", sub);
    return 2;
}
