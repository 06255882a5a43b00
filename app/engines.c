/* The engines a command can talk to: "local" (the unix socket, always there) and the config
 * file's [engines.NAME], reached over https with their token and CA. */
#include "app/app.h"
#include "client/client.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

size_t app_engine_count(const struct app *app)
{
    return 1 + app->config.nengines;
}

const char *app_engine_name(const struct app *app, size_t i)
{
    return i == 0 ? APP_ENGINE_LOCAL : app->config.engines[i - 1].name;
}

/* The config's entry called name; NULL for "local" or none. */
static const struct config_engine *app_engine_find(const struct app *app, const char *name)
{
    for (size_t i = 0; name && i < app->config.nengines; i++)
        if (strcmp(app->config.engines[i].name, name) == 0)
            return &app->config.engines[i];
    return NULL;
}

bool app_engine_known(const struct app *app, const char *name)
{
    return strcmp(name, APP_ENGINE_LOCAL) == 0 || app_engine_find(app, name);
}

const char *app_engine_where(const struct app *app, const char *name)
{
    const struct config_engine *e = app_engine_find(app, name);
    return e ? e->url : app->socket;
}

/* A token file's content without surrounding white space; malloc'd, NULL with *err. */
static char *app_engine_token(const char *path, char **err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        if (asprintf(err, "cannot read the token file %s: %s", path, strerror(errno)) < 0)
            *err = NULL;
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    char *p = buf, *end = buf + strlen(buf);
    while (*p && isspace((unsigned char)*p))
        p++;
    while (end > p && isspace((unsigned char)end[-1]))
        *--end = '\0';
    char *tok = *p ? strdup(p) : NULL;
    explicit_bzero(buf, sizeof(buf));
    if (!tok && asprintf(err, "the token file %s is empty", path) < 0)
        *err = NULL;
    return tok;
}

struct client *app_client_of(struct app *app, const char *name, char **err)
{
    *err = NULL;
    const struct config_engine *e = app_engine_find(app, name);
    if (!e) {
        if (name && strcmp(name, APP_ENGINE_LOCAL) != 0) {
            if (asprintf(err, "no engine %s in the config file (%s)", name,
                         app->config.path ? app->config.path : "none") < 0)
                *err = NULL;
            return NULL;
        }
        struct client *c = client_new(app->socket);
        if (!c)
            *err = strdup("out of memory");
        return c;
    }
    char *token = NULL;
    if (e->token_file && !(token = app_engine_token(e->token_file, err)))
        return NULL;
    /* The operator's credential of a remote engine is its bearer token or a client
     * certificate (client_auth), sent as configured. */
    struct client_auth auth = {.token = token, .cert = e->cert, .key = e->key};
    struct client *c = client_new_remote(e->url, &auth, e->ca);
    if (token)
        explicit_bzero(token, strlen(token));
    free(token);
    if (!c)
        *err = strdup("out of memory");
    return c;
}

struct client *app_client_new(struct app *app)
{
    char *err = NULL;
    struct client *c = app_client_of(app, app->engine, &err);
    if (!c) {
        fprintf(stderr, "paddock: engine %s: %s\n", app->engine ? app->engine : APP_ENGINE_LOCAL,
                err ? err : "out of memory");
        free(err);
    }
    return c;
}

int app_engine_select(struct app *app, const char *name)
{
    if (app->engine && strcmp(app->engine, name) != 0) {
        fprintf(stderr, "paddock: two engines named (%s and %s); a command talks to one\n",
                app->engine, name);
        return -1;
    }
    if (strcmp(name, APP_ENGINE_AUTO) != 0 && !app_engine_known(app, name)) {
        fprintf(stderr, "paddock: no engine %s: the engines are local", name);
        for (size_t i = 0; i < app->config.nengines; i++)
            fprintf(stderr, ", %s", app->config.engines[i].name);
        fprintf(stderr, " (the config file's [engines.NAME])\n");
        return -1;
    }
    app->engine = name;
    return 0;
}

int app_engine_args(struct app *app, int *argc, char **argv)
{
    int w = 1;
    bool operands = false; /* after "--": the command's own words, untouched */
    for (int i = 1; i < *argc; i++) {
        char *a = argv[i];
        if (!operands && strcmp(a, "--") == 0)
            operands = true;
        if (!operands && strcmp(a, "--engine") == 0) {
            if (i + 1 >= *argc) {
                fprintf(stderr, "paddock: --engine takes a name (local, auto, or one of the "
                                "config file's [engines.NAME])\n");
                return -1;
            }
            if (app_engine_select(app, argv[++i]) < 0)
                return -1;
            continue;
        }
        if (!operands && strncmp(a, "--engine=", 9) == 0) {
            if (app_engine_select(app, a + 9) < 0)
                return -1;
            continue;
        }
        /* SESSION@ENGINE (or ACTION@ENGINE): only a name of a known engine is taken off. */
        char *at = operands || a[0] == '-' ? NULL : strrchr(a, '@');
        if (at && at != a && app_engine_known(app, at + 1)) {
            if (app_engine_select(app, at + 1) < 0)
                return -1;
            *at = '\0';
        }
        argv[w++] = a;
    }
    argv[w] = NULL;
    *argc = w;
    return 0;
}

bool app_engines_all(const struct app *app)
{
    return !app->engine && app->config.nengines > 0;
}

int app_engine_pick(struct app *app, const char **name)
{
    /* The most free capacity: free memory first (what a sandbox needs most), then free CPUs
     * per running session; an engine that does not answer is skipped. */
    double best = -1;
    *name = NULL;
    for (size_t i = 0; i < app_engine_count(app); i++) {
        const char *n = app_engine_name(app, i);
        char *err = NULL;
        struct client *c = app_client_of(app, n, &err);
        json_t *info = NULL;
        int st = c ? client_request(c, "GET", "/v1/info", NULL, 5000, &info, &err) : -1;
        client_free(c);
        if (st != 200) {
            fprintf(stderr, "paddock: engine %s is down (%s); not picked\n", n,
                    err ? err : "it refused /v1/info");
            free(err);
            json_decref(info);
            continue;
        }
        json_t *cap = json_object_get(info, "capacity");
        double mem = json_number_value(json_object_get(cap, "memory_free"));
        double cpus = json_number_value(json_object_get(cap, "cpus"));
        double live = json_number_value(json_object_get(cap, "sessions"));
        double score = mem / (1024.0 * 1024 * 1024) + cpus / (1 + live);
        if (score > best) {
            best = score;
            *name = n;
        }
        json_decref(info);
        free(err);
    }
    if (!*name) {
        fprintf(stderr, "paddock: --engine auto: no engine answers\n");
        return -1;
    }
    return 0;
}
