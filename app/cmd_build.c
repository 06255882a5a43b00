/* paddock build: a runtime image made by the engine's builder (POST /v1/images), its progress
 * followed on the event stream, and its three tags printed. */
#include "app/app.h"
#include "app/cli.h"
#include "client/client.h"
#include "common/sanitize.h"

#include <getopt.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BUILD_POLL_MS 5000 /* the build's state asked again this often, events or not */

struct build_watch {
    const char *id;
    bool quiet;
    bool ended;
};

/* Build output is the image's text, anyone's: sanitized before the terminal. */
static void build_on_event(const char *type, json_t *data, void *ud)
{
    struct build_watch *w = ud;
    const char *build = json_string_value(json_object_get(data, "build"));
    if (strcmp(type, "build") != 0 || !build || strcmp(build, w->id) != 0)
        return;
    const char *stage = json_string_value(json_object_get(data, "stage"));
    const char *msg = json_string_value(json_object_get(data, "message"));
    if (stage && (strcmp(stage, "done") == 0 || strcmp(stage, "failed") == 0))
        w->ended = true;
    if (w->quiet || !msg)
        return;
    char line[600];
    sanitize_text(msg, strlen(msg), line, sizeof(line));
    fprintf(stderr, "[%s] %s\n", stage ? stage : "build", line);
}

static double build_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The build's object once it is not running (the caller's); NULL with a message printed. */
static json_t *build_follow(struct client *cl, struct client_events **ev, struct build_watch *w)
{
    char path[96];
    snprintf(path, sizeof(path), "/v1/images/builds/%.32s", w->id);
    double next = build_now() + BUILD_POLL_MS / 1000.0;
    for (;;) {
        int fd = *ev ? client_events_fd(*ev) : -1;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (fd >= 0 && poll(&p, 1, 500) > 0 && client_events_pump(*ev, build_on_event, w) < 0) {
            client_events_close(*ev); /* the state is still asked below */
            *ev = NULL;
        } else if (fd < 0) {
            poll(NULL, 0, 500);
        }
        if (!w->ended && build_now() < next)
            continue;
        next = build_now() + BUILD_POLL_MS / 1000.0;
        json_t *b = NULL;
        char *err = NULL;
        int st = client_request(cl, "GET", path, NULL, 10000, &b, &err);
        if (st != 200) {
            fprintf(stderr, "paddock build: %s\n",
                    err ? err : client_error_message(b, "the engine forgot the build"));
            free(err);
            json_decref(b);
            return NULL;
        }
        const char *state = json_string_value(json_object_get(b, "state"));
        if (state && strcmp(state, "running") != 0)
            return b;
        json_decref(b);
    }
}

static void build_print(json_t *b)
{
    const char *keys[] = {"source", "lock", "versioned"};
    for (size_t i = 0; i < 3; i++) {
        const char *t = json_string_value(json_object_get(json_object_get(b, "tags"), keys[i]));
        char safe[300];
        sanitize_text(t ? t : "-", t ? strlen(t) : 1, safe, sizeof(safe));
        printf("%-10s %s\n", keys[i], safe);
    }
}

int cmd_build(struct app *app, int argc, char **argv)
{
    static const struct option opts[] = {{"image", required_argument, NULL, 'i'},
                                         {"setup", required_argument, NULL, 's'},
                                         {"extra-deps", required_argument, NULL, 'x'},
                                         {"platform", required_argument, NULL, 'p'},
                                         {"rebuild", no_argument, NULL, 'r'},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    json_t *body = json_pack("{s:b,s:[]}", "wait", 0, "setup");
    bool as_json = false;
    struct build_watch w = {0};
    int c;
    while ((c = getopt_long(argc, argv, "i:s:x:p:rqjh", opts, NULL)) != -1) {
        if (c == 'i') {
            json_object_set_new(body, "image", json_string(optarg));
        } else if (c == 's') {
            json_array_append_new(json_object_get(body, "setup"), json_string(optarg));
        } else if (c == 'x') {
            json_object_set_new(body, "runtime_extra_deps", json_string(optarg));
        } else if (c == 'p') {
            json_object_set_new(body, "platform", json_string(optarg));
        } else if (c == 'r') {
            json_object_set_new(body, "rebuild", json_true());
        } else if (c == 'q') {
            w.quiet = true;
        } else if (c == 'j') {
            as_json = true;
        } else if (c == 'h') {
            app_command_help(stdout, "build");
            json_decref(body);
            return 0;
        } else {
            json_decref(body);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "paddock build: unexpected argument %s (setup commands go in --setup)\n",
                argv[optind]);
        json_decref(body);
        return 2;
    }
    struct client *cl = client_new(app->socket);
    char *err = NULL;
    /* Subscribed before the build starts: none of its events is missed. */
    struct client_events *ev = cl ? client_events_open(cl, &err) : NULL;
    free(err);
    err = NULL;
    json_t *reply = NULL, *result = NULL;
    int st = cl ? client_request(cl, "POST", "/v1/images", body, 60000, &reply, &err) : -1;
    int rc = 1;
    if (st == 202) {
        w.id = json_string_value(json_object_get(reply, "id"));
        result = w.id ? build_follow(cl, &ev, &w) : NULL;
    } else if (st == 200) {
        result = json_incref(reply);
    } else {
        fprintf(stderr, "paddock build: %s\n",
                err ? err : client_error_message(reply, "no engine answers"));
    }
    const char *state = json_string_value(json_object_get(result, "state"));
    if (result && as_json) {
        cli_print_json(result);
    }
    if (state && strcmp(state, "done") == 0) {
        if (!as_json)
            build_print(result);
        rc = 0;
    } else if (state) {
        const char *why = json_string_value(json_object_get(result, "error"));
        char safe[1024];
        sanitize_text(why ? why : "failed", why ? strlen(why) : 6, safe, sizeof(safe));
        fprintf(stderr, "paddock build: %s\n", safe);
    }
    if (ev)
        client_events_close(ev);
    json_decref(result);
    json_decref(reply);
    json_decref(body);
    free(err);
    client_free(cl);
    return rc;
}
