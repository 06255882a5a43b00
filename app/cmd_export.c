/* paddock export SESSION [--format json|md|cast] [--raw] [-o FILE]: a session's whole record,
 * as JSON (everything), a Markdown report (for people), or an asciinema v2 cast of the agent's
 * terminal (its commands and their output, at the times they happened). A cast is written to
 * a terminal when it is played, so its text goes through the sanitizer's replay filter unless
 * --raw asks for the bytes. The dashboard's `e` writes all three (filtered) through
 * app_export_session. */
#include "app/app.h"
#include "app/cli.h"
#include "app/export.h"
#include "client/client.h"
#include "common/sanitize.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Where an export reads from; a failed request is noted (the first message kept) and, for the
 * CLI, said on stderr at once. */
struct export_src {
    bool print;
    char *err;               /* the first failure (malloc'd), or NULL */
    struct client *cl;       /* one connection for every request of export_collect */
    ui_progress_fn progress; /* (done, total) actions fetched; may be NULL */
    void *progress_ctx;
};

static json_t *export_get(struct export_src *src, const char *path, int want)
{
    json_t *reply = NULL;
    char *err = NULL;
    int st = src->cl ? client_request(src->cl, "GET", path, NULL, 120000, &reply, &err) : -1;
    bool ok = want ? st == want : st >= 200 && st < 300;
    if (ok) {
        free(err);
        return reply ? reply : json_object();
    }
    const char *msg = err ? err : client_error_message(reply, "no engine answers");
    if (src->print) {
        char safe[1024];
        fprintf(stderr, "paddock export: %s\n", cli_safe(msg, safe, sizeof(safe)));
    }
    if (!src->err)
        src->err = strdup(msg);
    json_decref(reply);
    free(err);
    return NULL;
}

/* The session, its events, every action in full (oldest first) and the log tail. */
static json_t *export_collect_on(struct export_src *src, const char *id)
{
    char path[200];
    snprintf(path, sizeof(path), "/v1/sessions/%s", id);
    json_t *s = export_get(src, path, 200);
    if (!s)
        return NULL;
    json_t *doc = json_pack("{s:o,s:[],s:[]}", "session", s, "events", "actions");
    snprintf(path, sizeof(path), "/v1/sessions/%s/events", id);
    json_t *ev = export_get(src, path, 200);
    if (ev)
        json_object_set(doc, "events", json_object_get(ev, "events"));
    json_decref(ev);
    /* page through the history, then fetch each action whole */
    json_t *ids = json_array();
    long long before = 0;
    for (;;) {
        snprintf(path, sizeof(path), "/v1/sessions/%s/actions?limit=1000%s%lld", id,
                 before ? "&before=" : "", before);
        if (!before)
            path[strlen(path) - 1] = '\0'; /* drop the 0 */
        json_t *page = export_get(src, path, 200);
        if (!page)
            break;
        size_t i;
        json_t *a;
        json_array_foreach(json_object_get(page, "actions"), i, a)
            json_array_insert(ids, 0, json_object_get(a, "id"));
        json_t *next = json_object_get(page, "next_before");
        before = json_is_integer(next) ? json_integer_value(next) : 0;
        json_decref(page);
        if (!before)
            break;
    }
    size_t i, total = json_array_size(ids);
    json_t *aid;
    json_array_foreach(ids, i, aid)
    {
        if (src->progress)
            src->progress(src->progress_ctx, i, total);
        snprintf(path, sizeof(path), "/v1/actions/%lld", (long long)json_integer_value(aid));
        json_t *full = export_get(src, path, 200);
        if (full)
            json_array_append_new(json_object_get(doc, "actions"), full);
    }
    if (src->progress)
        src->progress(src->progress_ctx, total, total);
    json_decref(ids);
    /* The record's entries last: every action above is in them (paddock verify --export). */
    snprintf(path, sizeof(path), "/v1/verify?session=%s&entries=1", id);
    json_t *chain = export_get(src, path, 0);
    if (json_is_object(chain))
        json_object_set_new(doc, "chain",
                            json_pack("{s:O,s:O,s:O}", "head", json_object_get(chain, "head"),
                                      "verified", json_object_get(chain, "ok"), "entries",
                                      json_object_get(chain, "chain")));
    json_decref(chain);
    /* The connections through its egress proxy (none without "network": "egress"). */
    snprintf(path, sizeof(path), "/v1/sessions/%s/egress?limit=10000", id);
    json_t *egress = export_get(src, path, 0);
    if (json_is_object(egress))
        json_object_set_new(doc, "egress",
                            json_pack("{s:O,s:O,s:O}", "connections",
                                      json_object_get(egress, "connections"), "hosts",
                                      json_object_get(egress, "hosts"), "rules",
                                      json_object_get(egress, "rules")));
    json_decref(egress);
    snprintf(path, sizeof(path), "/v1/sessions/%s/logs?tail=2000", id);
    json_t *logs = export_get(src, path, 0);
    json_object_set_new(doc, "logs", logs ? logs : json_null());
    return doc;
}

/* The same over one connection, closed at the end. */
static json_t *export_collect(struct export_src *src, const char *id)
{
    json_t *doc = export_collect_on(src, id);
    client_free(src->cl);
    src->cl = NULL;
    return doc;
}

static const char *const export_formats[] = {"json", "md", "cast", NULL};

/* A file name from the session's name when it is a plain one, else its id. */
static const char *export_base(json_t *doc, const char *id)
{
    const char *name = json_string_value(json_object_get(json_object_get(doc, "session"), "name"));
    if (!name || !*name || name[0] == '.' || strlen(name) > 100)
        return id;
    for (const char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '-' || *c == '_' || *c == '.'))
            return id;
    return name;
}

/* path.part first, renamed when whole: an export cut short leaves no half file behind a
 * name that looks finished. 0, or -1 with *msg. */
static int export_file(json_t *doc, const char *dir, const char *base, const char *format,
                       char **msg)
{
    char *path = NULL, *part = NULL;
    int rc = -1;
    if (asprintf(&path, "%s/%s.%s", dir, base, format) < 0 ||
        asprintf(&part, "%s.part", path) < 0) {
        *msg = strdup("out of memory");
        free(path);
        return -1;
    }
    FILE *f = fopen(part, "w");
    int e = errno;
    if (f) {
        export_write(f, doc, format, false);
        e = ferror(f) ? EIO : 0;
        if (fclose(f) != 0 && !e)
            e = errno;
        if (!e && rename(part, path) != 0)
            e = errno;
        if (e)
            unlink(part);
        else
            rc = 0;
    }
    if (rc < 0 && asprintf(msg, "%s: %s", path, strerror(e)) < 0)
        *msg = NULL;
    free(part);
    free(path);
    return rc;
}

/* dir and its missing parents, as mkdir -p (0755: an export is the operator's to share).
 * 0, or -1 with *msg (malloc'd) naming the directory that could not be made. */
static int export_mkdir_p(const char *dir, char **msg)
{
    char *p = strdup(dir);
    if (!p) {
        *msg = strdup("out of memory");
        return -1;
    }
    int rc = 0;
    for (char *slash = p + 1; rc == 0; slash++) {
        bool end = *slash == '\0';
        if (*slash != '/' && !end)
            continue;
        *slash = '\0';
        struct stat st;
        if (mkdir(p, 0755) < 0 && errno != EEXIST) {
            if (asprintf(msg, "cannot create the directory %s: %s", p, strerror(errno)) < 0)
                *msg = NULL;
            rc = -1;
        } else if (stat(p, &st) < 0 || !S_ISDIR(st.st_mode)) {
            if (asprintf(msg, "%s is not a directory", p) < 0)
                *msg = NULL;
            rc = -1;
        }
        if (end)
            break;
        *slash = '/';
    }
    free(p);
    return rc;
}

int app_export_session(void *ctx, const char *engine, const char *id, const char *dir,
                       ui_progress_fn progress, void *progress_ctx, char **msg)
{
    struct app *app = ctx;
    if (engine) /* the dashboard runs this in a child: its own copy of app */
        app->engine = engine;
    struct export_src src = {
        .cl = app_client_new(app), .progress = progress, .progress_ctx = progress_ctx};
    *msg = NULL;
    json_t *doc = export_collect(&src, id);
    if (!doc) {
        *msg = src.err ? src.err : strdup("the engine did not answer");
        return -1;
    }
    const char *base = export_base(doc, id);
    int rc = export_mkdir_p(dir, msg);
    for (size_t i = 0; export_formats[i] && rc == 0; i++)
        rc = export_file(doc, dir, base, export_formats[i], msg);
    if (rc == 0 && asprintf(msg, "exported %zu actions to %s/%s.{json,md,cast}%s%s",
                            json_array_size(json_object_get(doc, "actions")), dir, base,
                            src.err ? "; missing parts: " : "", src.err ? src.err : "") < 0)
        *msg = NULL;
    free(src.err);
    json_decref(doc);
    return rc;
}

int cmd_export(struct app *app, int argc, char **argv)
{
    static const struct option opts[] = {{"format", required_argument, NULL, 'f'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"raw", no_argument, NULL, 'r'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *format = "json", *output = NULL;
    bool raw = false;
    int c;
    while ((c = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1) {
        if (c == 'f') {
            format = optarg;
        } else if (c == 'o') {
            output = optarg;
        } else if (c == 'r') {
            raw = true;
        } else if (c == 'h') {
            app_command_help(stdout, "export");
            return 0;
        } else {
            return 2;
        }
    }
    if (strcmp(format, "json") && strcmp(format, "md") && strcmp(format, "cast")) {
        fprintf(stderr, "paddock export: --format is json, md or cast\n");
        return 2;
    }
    if (raw && strcmp(format, "cast") != 0) {
        fprintf(stderr, "paddock export: --raw is for --format cast\n");
        return 2;
    }
    if (optind >= argc) {
        fprintf(stderr, "paddock export: name a session (id or name)\n");
        return 2;
    }
    char id[80];
    if (!cli_session_id(app, "export", argv[optind], id, sizeof(id)))
        return 1;
    struct export_src src = {.cl = app_client_new(app), .print = true};
    if (!src.cl)
        return 1;
    json_t *doc = export_collect(&src, id);
    free(src.err);
    if (!doc)
        return 1;
    /* a missing directory on the way to FILE is made, as the dashboard's export does */
    char *parent = output ? strdup(output) : NULL, *slash = parent ? strrchr(parent, '/') : NULL;
    char *mkerr = NULL;
    if (slash && slash != parent) {
        *slash = '\0';
        if (export_mkdir_p(parent, &mkerr) < 0) {
            fprintf(stderr, "paddock export: %s\n", mkerr ? mkerr : "out of memory");
            free(mkerr);
            free(parent);
            json_decref(doc);
            return 1;
        }
    }
    free(parent);
    FILE *f = output ? fopen(output, "w") : stdout;
    if (!f) {
        perror(output);
        json_decref(doc);
        return 1;
    }
    export_write(f, doc, format, raw);
    int rc = 0;
    if (output && fclose(f) != 0) {
        perror(output);
        rc = 1;
    }
    json_decref(doc);
    return rc;
}
