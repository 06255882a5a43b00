/* Shared by the subcommands. */
#include "app/cli.h"

#include "app/app.h"
#include "client/client.h"
#include "common/sanitize.h"
#include "common/timeconv.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void cli_say_no_engine(struct app *app, const char *cmd)
{
    if (app->engine && strcmp(app->engine, APP_ENGINE_LOCAL) != 0) {
        fprintf(stderr,
                "paddock %s: engine %s at %s does not answer (is it running, and its url "
                "right in the config file?)\n",
                cmd, app->engine, app_engine_where(app, app->engine));
        return;
    }
    char *why = client_engine_diagnose(app->socket, app->state_dir);
    bool held = client_engine_holder(app->state_dir) > 0;
    fprintf(stderr, "paddock %s: %s%s\n", cmd, why ? why : "no engine answers",
            held ? ""
                 : "; start one with `paddock serve` (it stays in the foreground), or run "
                   "`paddock`, whose dashboard starts one in the background");
    free(why);
}

/* The session id in an engine path ("/v1/sessions/ID/..."), into out; false when none. */
static bool cli_path_session(const char *path, char *out, size_t size)
{
    const char *p = strncmp(path, "/v1/sessions/", 13) == 0 ? path + 13 : NULL;
    size_t n = p ? strcspn(p, "/?") : 0;
    if (!n || n >= size)
        return false;
    memcpy(out, p, n);
    out[n] = '\0';
    return true;
}

/* The session of the action an engine path names ("/v1/actions/N/..."), asked of the engine,
 * into out; false when the path names none or the engine does not say. */
static bool cli_path_action_session(struct client *cl, const char *path, char *out, size_t size)
{
    const char *p = strncmp(path, "/v1/actions/", 12) == 0 ? path + 12 : NULL;
    size_t n = p ? strspn(p, "0123456789") : 0;
    if (!n || n > 20)
        return false;
    char get[40];
    snprintf(get, sizeof(get), "/v1/actions/%.*s", (int)n, p);
    json_t *a = NULL;
    const char *sid = NULL;
    if (client_request(cl, "GET", get, NULL, 10000, &a, NULL) == 200)
        sid = json_string_value(json_object_get(a, "session_id"));
    bool ok = sid && strlen(sid) < size;
    if (ok)
        memcpy(out, sid, strlen(sid) + 1);
    json_decref(a);
    return ok;
}

void cli_say_error(struct app *app, const char *cmd, json_t *reply, const char *session_id,
                   const char *fallback)
{
    cli_say_refusal(app, cmd, client_error_code(reply), client_error_message(reply, fallback),
                    session_id);
}

void cli_say_refusal(struct app *app, const char *cmd, const char *code, const char *message,
                     const char *session_id)
{
    char safe[1024];
    bool paused = code && strcmp(code, "session_paused") == 0;
    if (!session_id || !(paused || (code && strcmp(code, "session_stopped") == 0))) {
        cli_safe(message ? message : "failed", safe, sizeof(safe));
        bool remote = app->engine && strcmp(app->engine, APP_ENGINE_LOCAL) != 0;
        fprintf(stderr, "paddock %s: %s%s%s%s\n", cmd, remote ? "engine " : "",
                remote ? app->engine : "", remote ? ": " : "", safe);
        return;
    }
    /* The engine's text names the API; a person at the shell gets the command. */
    char path[200], ref[160], st[40], why[300];
    snprintf(path, sizeof(path), "/v1/sessions/%s", session_id);
    struct client *cl = app_client_new(app);
    json_t *s = NULL;
    if (!cl || client_request(cl, "GET", path, NULL, 10000, &s, NULL) != 200) {
        json_decref(s);
        s = NULL;
    }
    client_free(cl);
    const char *name = json_string_value(json_object_get(s, "name"));
    cli_safe(name ? name : session_id, ref, sizeof(ref));
    cli_safe(json_string_value(json_object_get(s, "state")) ?: (paused ? "paused" : "stopped"), st,
             sizeof(st));
    const char *reason = json_string_value(json_object_get(s, "reason"));
    cli_safe(reason, why, sizeof(why));
    if (paused)
        fprintf(stderr,
                "paddock %s: session %s is paused%s%s%s; resume it with `paddock resume %s`\n", cmd,
                ref, reason ? " (" : "", reason ? why : "", reason ? ")" : "", ref);
    else
        fprintf(stderr,
                "paddock %s: session %s is %s%s%s%s; start it again with `paddock resume %s` (a "
                "restart: the shell's variables and cwd are not kept)%s%s%s\n",
                cmd, ref, st, reason ? " (" : "", reason ? why : "", reason ? ")" : "", ref,
                strcmp(st, "oom-killed") == 0 ? ", or delete it (`paddock rm " : "",
                strcmp(st, "oom-killed") == 0 ? ref : "",
                strcmp(st, "oom-killed") == 0
                    ? "`) and create one with more memory (`paddock new --memory SIZE`)"
                    : "");
    json_decref(s);
}

json_t *cli_call(struct app *app, const char *cmd, const char *method, const char *path,
                 json_t *body, int want)
{
    struct client *cl = app_client_new(app);
    json_t *reply = NULL;
    char *err = NULL;
    int st = cl ? client_request(cl, method, path, body, 120000, &reply, &err) : -1;
    bool ok = want ? st == want : st >= 200 && st < 300;
    if (ok) {
        client_free(cl);
        free(err);
        return reply ? reply : json_object();
    }
    char msg[1024], sid[80];
    if (cl && st < 0 && client_is_remote(cl)) {
        /* libcurl's reason says more than a ping would: the certificate, a refusal */
        fprintf(stderr, "paddock %s: engine %s: %s\n", cmd, app->engine,
                cli_safe(err ? err : "does not answer", msg, sizeof(msg)));
    } else if (cl && st < 0 && !client_ping(cl)) {
        cli_say_no_engine(app, cmd);
    } else if (st < 0 || !cl) {
        fprintf(stderr, "paddock %s: %s\n", cmd,
                cli_safe(err ? err : "out of memory", msg, sizeof(msg)));
    } else {
        /* A refusal for the session's state (by its code) names the session: the path's, or
         * for an action's route (approve on a paused session) the action's. */
        const char *code = client_error_code(reply);
        bool about_session =
            code && (strcmp(code, "session_paused") == 0 || strcmp(code, "session_stopped") == 0);
        bool named = cli_path_session(path, sid, sizeof(sid)) ||
                     (about_session && cli_path_action_session(cl, path, sid, sizeof(sid)));
        cli_say_error(app, cmd, reply, named ? sid : NULL, "the engine refused");
    }
    client_free(cl);
    json_decref(reply);
    free(err);
    return NULL;
}

size_t cli_engines(struct app *app, const char **names, size_t max)
{
    if (!app_engines_all(app)) {
        names[0] = app->engine ? app->engine : APP_ENGINE_LOCAL;
        return 1;
    }
    size_t n = 0;
    for (size_t i = 0; i < app_engine_count(app) && n < max; i++)
        names[n++] = app_engine_name(app, i);
    return n;
}

json_t *cli_call_listed(struct app *app, const char *cmd, const char *path)
{
    char *err = NULL, msg[1024];
    struct client *cl = app_client_of(app, app->engine, &err);
    json_t *reply = NULL;
    int st = cl ? client_request(cl, "GET", path, NULL, 30000, &reply, &err) : -1;
    client_free(cl);
    if (st == 200) {
        free(err);
        return reply ? reply : json_object();
    }
    if (st < 0)
        fprintf(stderr, "paddock %s: engine %s is down: %s\n", cmd, app->engine,
                cli_safe(err ? err : "it does not answer", msg, sizeof(msg)));
    else
        fprintf(stderr, "paddock %s: engine %s: %s\n", cmd, app->engine,
                cli_safe(client_error_message(reply, "refused"), msg, sizeof(msg)));
    json_decref(reply);
    free(err);
    return NULL;
}

void cli_tag_engine(json_t *list, const char *name)
{
    size_t i;
    json_t *o;
    json_array_foreach(list, i, o) json_object_set_new(o, "engine", json_string(name));
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
    /* The time comes from the engine's record: anything may be there. */
    struct tm tm;
    if (timeconv_to_local(t, &tm) < 0) {
        snprintf(buf, size, "-");
        return buf;
    }
    strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm);
    return buf;
}

size_t cli_json_flags(size_t flags)
{
    /* To a terminal, every non-ASCII character as \uXXXX: JSON escapes C0 controls itself,
     * but C1 controls (U+009B is CSI) and bidi overrides from a sandbox would reach it raw. */
    return isatty(STDOUT_FILENO) ? flags | JSON_ENSURE_ASCII : flags;
}

void cli_print_json(json_t *j)
{
    json_dumpf(j, stdout, cli_json_flags(JSON_INDENT(2)));
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

json_t *cli_session_get(struct app *app, const char *cmd, const char *ref)
{
    char safe[200];
    /* What a path may carry: ids, prefixes and names are all of these characters. */
    if (!*ref || strlen(ref) > 128 ||
        strspn(ref, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
            strlen(ref) ||
        ref[0] == '.') {
        fprintf(stderr, "paddock %s: no session with the id, id prefix or name %s\n", cmd,
                cli_safe(ref, safe, sizeof(safe)));
        return NULL;
    }
    char path[200];
    snprintf(path, sizeof(path), "/v1/sessions/%s", ref);
    struct client *cl = app_client_new(app);
    json_t *reply = NULL;
    char *err = NULL;
    int st = cl ? client_request(cl, "GET", path, NULL, 30000, &reply, &err) : -1;
    if (st == 200) {
        client_free(cl);
        return reply;
    }
    const char *code = client_error_code(reply);
    if (st < 0 && cl && client_is_remote(cl))
        fprintf(stderr, "paddock %s: engine %s: %s\n", cmd, app->engine,
                cli_safe(err ? err : "does not answer", safe, sizeof(safe)));
    else if (st < 0 && cl && !client_ping(cl))
        cli_say_no_engine(app, cmd);
    else if (st == 404 && code && strcmp(code, "not_found") == 0)
        fprintf(stderr,
                "paddock %s: no session with the id, id prefix or name %s (`paddock ls --all` "
                "lists them)\n",
                cmd, cli_safe(ref, safe, sizeof(safe)));
    else if (st < 0)
        fprintf(stderr, "paddock %s: %s\n", cmd,
                cli_safe(err ? err : "failed", safe, sizeof(safe)));
    else
        cli_say_error(app, cmd, reply, NULL, "the engine refused");
    client_free(cl);
    json_decref(reply);
    free(err);
    return NULL;
}

json_t *cli_session_names(struct app *app)
{
    struct client *cl = app_client_new(app);
    json_t *reply = NULL, *names = json_object();
    if (cl && names &&
        client_request(cl, "GET", "/v1/sessions?all=1", NULL, 30000, &reply, NULL) == 200) {
        size_t i;
        json_t *s;
        json_array_foreach(json_object_get(reply, "sessions"), i, s)
        {
            const char *id = json_string_value(json_object_get(s, "id"));
            json_t *name = json_object_get(s, "name");
            if (id && json_is_string(name))
                json_object_set(names, id, name);
        }
    }
    json_decref(reply);
    client_free(cl);
    return names;
}

const char *cli_session_label(json_t *names, const char *id, char *buf, size_t size)
{
    const char *name = json_string_value(json_object_get(names, id ? id : ""));
    return cli_safe(name ? name : id, buf, size);
}

bool cli_session_id(struct app *app, const char *cmd, const char *ref, char *out, size_t size)
{
    json_t *s = cli_session_get(app, cmd, ref);
    const char *id = json_string_value(json_object_get(s, "id"));
    if (id)
        snprintf(out, size, "%s", id);
    json_decref(s);
    return id != NULL;
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

int cli_parse_json_only(int argc, char **argv, bool *as_json)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
        if (c == 'j') {
            *as_json = true;
        } else if (c == 'h') {
            app_command_help(stdout, argv[0]);
            return 0;
        } else {
            return 2;
        }
    }
    return -1;
}

static int cli_cmp_oldest(const void *a, const void *b)
{
    double x = json_number_value(json_object_get(*(json_t *const *)a, "created_at"));
    double y = json_number_value(json_object_get(*(json_t *const *)b, "created_at"));
    return (x > y) - (x < y);
}

static int cli_cmp_newest(const void *a, const void *b)
{
    return cli_cmp_oldest(b, a);
}

void cli_sort_by_time(json_t *list, bool newest_first)
{
    size_t n = json_array_size(list);
    json_t **items = n ? malloc(n * sizeof(*items)) : NULL;
    if (!items)
        return;
    for (size_t i = 0; i < n; i++)
        items[i] = json_incref(json_array_get(list, i));
    qsort(items, n, sizeof(*items), newest_first ? cli_cmp_newest : cli_cmp_oldest);
    json_array_clear(list);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(list, items[i]);
    free(items);
}
