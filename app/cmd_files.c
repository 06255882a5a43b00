/* paddock files SESSION [PATH] and paddock cat SESSION PATH: the operator's reads of a
 * session's workspace (GET /v1/sessions/{id}/files and .../files/content, engine/browse.h).
 * They are recorded as the operator's, never as the agent's actions. Names and contents come
 * from the sandbox: sanitized for a terminal; cat gives the bytes unchanged only to a pipe or a
 * file, and a binary file's bytes only with --raw (else what it is). */
#include "app/app.h"
#include "app/cli.h"
#include "common/base64.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FILES_PATH_MAX 4096

/* The options both take: --json, --raw (cat), --limit/--max N. 0 to go on, else the exit
 * code + 1 (so 0 stays "go on"). */
struct files_opts {
    bool json, raw;
    const char *count; /* --limit (files) or --max (cat) */
};

static int files_parse(int argc, char **argv, bool cat, struct files_opts *o)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},        {"raw", no_argument, NULL, 'r'},
        {"limit", required_argument, NULL, 'n'}, {"max", required_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},        {0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+jrn:m:h", opts, NULL)) != -1) {
        switch (c) {
        case 'j':
            o->json = true;
            break;
        case 'r':
        case 'm':
            if (!cat)
                goto bad;
            if (c == 'r')
                o->raw = true;
            else
                o->count = optarg;
            break;
        case 'n':
            if (cat)
                goto bad;
            o->count = optarg;
            break;
        case 'h':
            app_command_help(stdout, argv[0]);
            return 1;
        default:
            goto bad;
        }
    }
    if (argc - optind < (cat ? 2 : 1) || argc - optind > 2)
        goto bad;
    return 0;
bad:
    fprintf(stderr, "usage: paddock %s %s\n", argv[0], app_command_find(argv[0])->args);
    return 3;
}

static json_t *files_get(struct app *app, const char *cmd, const char *ref, const char *route,
                         const char *path, const char *count_key, const char *count, bool raw)
{
    char id[80], url[FILES_PATH_MAX * 3 + 200];
    if (!cli_session_id(app, cmd, ref, id, sizeof(id)))
        return NULL;
    snprintf(url, sizeof(url), "/v1/sessions/%s/%s", id, route);
    cli_query_add(url, sizeof(url), "path", path);
    cli_query_add(url, sizeof(url), count_key, count);
    cli_query_add(url, sizeof(url), "raw", raw ? "1" : NULL);
    return cli_call(app, cmd, "GET", url, NULL, 200);
}

static const struct {
    const char *type;
    char mark;
} files_marks[] = {
    {"directory", 'd'},        {"file", '-'},         {"link", 'l'}, {"fifo", 'p'}, {"socket", 's'},
    {"character device", 'c'}, {"block device", 'b'},
};

static char files_mark(const char *type)
{
    for (size_t i = 0; type && i < sizeof(files_marks) / sizeof(files_marks[0]); i++)
        if (strcmp(type, files_marks[i].type) == 0)
            return files_marks[i].mark;
    return '?';
}

int cmd_files(struct app *app, int argc, char **argv)
{
    struct files_opts o = {0};
    int rc = files_parse(argc, argv, false, &o);
    if (rc)
        return rc - 1;
    json_t *j = files_get(app, "files", argv[optind], "files",
                          optind + 1 < argc ? argv[optind + 1] : NULL, "limit", o.count, false);
    if (!j)
        return 1;
    if (o.json) {
        cli_print_json(j);
        json_decref(j);
        return 0;
    }
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(j, "entries"), i, e)
    {
        char name[1024], target[1024], when[32];
        const char *type = json_string_value(json_object_get(e, "type"));
        const char *t = json_string_value(json_object_get(e, "target"));
        printf("%c %10lld  %s  %s%s%s%s\n", files_mark(type),
               (long long)json_integer_value(json_object_get(e, "size")),
               cli_time(json_number_value(json_object_get(e, "mtime")), when, sizeof(when)),
               cli_safe(json_string_value(json_object_get(e, "name")), name, sizeof(name)),
               type && strcmp(type, "directory") == 0 ? "/" : "", t ? " -> " : "",
               t ? cli_safe(t, target, sizeof(target)) : "");
    }
    long long omitted = (long long)json_integer_value(json_object_get(j, "omitted"));
    if (omitted > 0)
        printf("… %lld more not shown (of %lld; --limit N shows up to 5000)\n", omitted,
               (long long)json_integer_value(json_object_get(j, "total")));
    json_decref(j);
    return 0;
}

int cmd_cat(struct app *app, int argc, char **argv)
{
    struct files_opts o = {0};
    int rc = files_parse(argc, argv, true, &o);
    if (rc)
        return rc - 1;
    const char *path = argv[optind + 1];
    json_t *j = files_get(app, "cat", argv[optind], "files/content", path, "max", o.count, o.raw);
    if (!j)
        return 1;
    if (o.json) {
        cli_print_json(j);
        json_decref(j);
        return 0;
    }
    char safe[1024], kind[200];
    cli_safe(json_string_value(json_object_get(j, "path")), safe, sizeof(safe));
    cli_safe(json_string_value(json_object_get(j, "kind")), kind, sizeof(kind));
    long long size = (long long)json_integer_value(json_object_get(j, "size"));
    const char *b64 = json_string_value(json_object_get(j, "content_base64"));
    struct buf data = BUF_INIT;
    if (!b64) {
        /* Binary (or a FIFO, a device): what it is, not its bytes. */
        printf("%s: %s, %lld bytes (binary: not shown; --raw writes its bytes)\n", safe, kind,
               size);
        json_decref(j);
        return 0;
    }
    if (base64_decode(&data, b64, strlen(b64)) < 0) {
        fprintf(stderr, "paddock cat: the engine's reply for %s is not base64\n", safe);
        json_decref(j);
        return 1;
    }
    if (isatty(STDOUT_FILENO))
        cli_write_safe(stdout, data.data ? data.data : "", data.len);
    else if (data.len && fwrite(data.data, 1, data.len, stdout) != data.len) {
        perror("paddock cat: stdout");
        rc = 1;
    }
    if (json_is_true(json_object_get(j, "truncated")))
        fprintf(stderr, "paddock cat: %s has %lld bytes; only the first %zu were read (--max)\n",
                safe, size, data.len);
    buf_free(&data);
    json_decref(j);
    return rc;
}
