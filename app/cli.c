/* Shared by the subcommands. */
#include "app/cli.h"

#include "app/app.h"
#include "client/client.h"
#include "common/sanitize.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

json_t *cli_call(struct app *app, const char *cmd, const char *method, const char *path,
                 json_t *body, int want)
{
    struct client *cl = client_new(app->socket);
    json_t *reply = NULL;
    char *err = NULL;
    int st = cl ? client_request(cl, method, path, body, 120000, &reply, &err) : -1;
    client_free(cl);
    bool ok = want ? st == want : st >= 200 && st < 300;
    if (ok) {
        free(err);
        return reply ? reply : json_object();
    }
    char msg[1024];
    cli_safe(err ? err : client_error_message(reply, "no engine answers"), msg, sizeof(msg));
    fprintf(stderr, "paddock %s: %s\n", cmd, msg);
    json_decref(reply);
    free(err);
    return NULL;
}

const char *cli_safe(const char *s, char *buf, size_t size)
{
    sanitize_text(s ? s : "", s ? strlen(s) : 0, buf, size);
    return buf;
}

void cli_write_safe(FILE *f, const char *s, size_t len)
{
    char *safe = sanitize_dup(s, len, len * 4 + 64, SANITIZE_MULTILINE);
    if (safe) {
        fputs(safe, f);
        free(safe);
    }
}

const char *cli_time(double t, char *buf, size_t size)
{
    /* The time comes from the engine's record: past year 9999 it no longer fits the format,
     * and far past it neither time_t nor localtime_r's year. */
    time_t tt = t > 0 && t < 253402300800.0 ? (time_t)t : 0;
    struct tm tm;
    if (tt <= 0 || !localtime_r(&tt, &tm)) {
        snprintf(buf, size, "-");
        return buf;
    }
    strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm);
    return buf;
}

void cli_print_json(json_t *j)
{
    json_dumpf(j, stdout, JSON_INDENT(2));
    putchar('\n');
}

long long cli_action_id(const char *cmd, const char *arg)
{
    char *end = NULL;
    long long id = arg ? strtoll(arg, &end, 10) : 0;
    if (!arg || *end || id <= 0) {
        fprintf(stderr, "paddock %s: an action id is a positive number%s%s\n", cmd,
                arg ? ", not " : "", arg ? arg : "");
        return 0;
    }
    return id;
}

bool cli_session_id(struct app *app, const char *cmd, const char *ref, char *out, size_t size)
{
    json_t *list = cli_call(app, cmd, "GET", "/v1/sessions?all=1", NULL, 200);
    if (!list)
        return false;
    const char *found = NULL;
    size_t i;
    json_t *s;
    /* an id wins; then a name, the newest live one first (the list is newest first) */
    json_array_foreach(json_object_get(list, "sessions"), i, s)
    {
        const char *id = json_string_value(json_object_get(s, "id"));
        if (id && strcmp(id, ref) == 0) {
            found = id;
            break;
        }
    }
    for (int pass = 0; !found && pass < 2; pass++)
        json_array_foreach(json_object_get(list, "sessions"), i, s)
        {
            const char *name = json_string_value(json_object_get(s, "name"));
            const char *state = json_string_value(json_object_get(s, "state"));
            bool live = state && strcmp(state, "deleted") != 0;
            if (name && strcmp(name, ref) == 0 && (pass == 1 || live)) {
                found = json_string_value(json_object_get(s, "id"));
                break;
            }
        }
    if (found)
        snprintf(out, size, "%s", found);
    else {
        char safe[200];
        fprintf(stderr, "paddock %s: no session with the id or name %s\n", cmd,
                cli_safe(ref, safe, sizeof(safe)));
    }
    json_decref(list);
    return found != NULL;
}

char *cli_join_argv(int argc, char **argv)
{
    if (argc == 1)
        return strdup(argv[0]);
    size_t cap = 1;
    for (int i = 0; i < argc; i++)
        cap += strlen(argv[i]) * 4 + 3;
    char *out = malloc(cap), *o = out;
    if (!out)
        return NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        bool plain = *a != '\0';
        for (const char *p = a; *p; p++)
            if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%",
                        *p))
                plain = false;
        if (i)
            *o++ = ' ';
        if (plain) {
            o = stpcpy(o, a);
            continue;
        }
        *o++ = '\'';
        for (const char *p = a; *p; p++) {
            if (*p == '\'')
                o = stpcpy(o, "'\\''");
            else
                *o++ = *p;
        }
        *o++ = '\'';
    }
    *o = '\0';
    return out;
}

void cli_query_add(char *path, size_t size, const char *key, const char *value)
{
    if (!value)
        return;
    size_t n = strlen(path);
    int w = snprintf(path + n, size - n, "%c%s=", strchr(path, '?') ? '&' : '?', key);
    if (w < 0 || (size_t)w >= size - n)
        return;
    n += (size_t)w;
    for (const unsigned char *p = (const unsigned char *)value; *p && n + 4 < size; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("-_.~", *p))
            path[n++] = (char)*p;
        else
            n += (size_t)snprintf(path + n, size - n, "%%%02X", *p);
    }
    path[n] = '\0';
}

int cli_parse_json_only(int argc, char **argv, bool *as_json, const char *usage, ...)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
        if (c == 'j') {
            *as_json = true;
        } else if (c == 'h') {
            va_list ap;
            va_start(ap, usage);
            vprintf(usage, ap);
            va_end(ap);
            return 0;
        } else {
            return 2;
        }
    }
    return -1;
}
