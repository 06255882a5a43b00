/* paddock run: one command in a sandbox, like `docker run --rm`, but through the engine. */
#include "app/app.h"
#include "app/cli.h"
#include "client/client.h"
#include "common/timeconv.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A piped stdin travels inside the command line, which the engine records, judges and the
 * executor types into the sandbox's shell. The engine's risk check reads at most 64 KiB of a
 * line (a longer one waits for an operator's approval), so the line, input quoted, stays
 * within that. */
#define RUN_LINE_MAX (64u * 1024)
#define RUN_STDIN_MAX RUN_LINE_MAX

static void run_say_too_large(void)
{
    fprintf(stderr,
            "paddock run: stdin is too large: it is passed inside the command line, at most %u "
            "KiB (the engine's risk check reads no more); put a larger input in the workspace "
            "and name the file\n",
            RUN_LINE_MAX / 1024);
}

/* All of stdin, at most RUN_STDIN_MAX bytes and NUL-terminated, into *out (*len bytes); -1
 * after printing why. */
static int run_read_stdin(char **out, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *in = malloc(cap);
    while (in && n <= RUN_STDIN_MAX) {
        if (n + 1 == cap) {
            char *grown = realloc(in, cap * 2);
            if (!grown)
                break;
            in = grown;
            cap *= 2;
        }
        ssize_t r = read(STDIN_FILENO, in + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            fprintf(stderr, "paddock run: cannot read stdin: %s\n", strerror(errno));
            free(in);
            return -1;
        }
        if (r == 0) {
            in[n] = '\0';
            *out = in;
            *len = n;
            return 0;
        }
        n += (size_t)r;
    }
    if (n > RUN_STDIN_MAX)
        run_say_too_large();
    else
        fprintf(stderr, "paddock run: out of memory\n");
    free(in);
    return -1;
}

/* A stdin that is not a terminal becomes the command's: its bytes, quoted, are printed into
 * the command, which reads them and then the end of its input, as with `cmd < file` (an
 * empty input is /dev/null). The shell line, or NULL after printing why (too large, not
 * text). */
static char *run_bind_stdin(const char *command)
{
    char *in;
    size_t len;
    if (run_read_stdin(&in, &len) < 0)
        return NULL;
    /* the command line is a JSON string: text without NUL bytes */
    json_t *probe = json_stringn(in, len);
    bool text = probe && !memchr(in, '\0', len);
    json_decref(probe);
    char *out = NULL, *quoted = NULL;
    if (!text) {
        fprintf(stderr, "paddock run: stdin is not text (NUL bytes or invalid UTF-8); run "
                        "passes only text input\n");
    } else if (len == 0) {
        /* the newline before the brace ends a comment the command may end with */
        if (asprintf(&out, "{ %s\n} </dev/null", command) < 0)
            out = NULL;
    } else {
        /* two words, so the input is quoted (one would be taken as a command line) */
        char *words[] = {"%s", in};
        quoted = cli_join_argv(2, words);
        if (quoted && asprintf(&out, "printf %s | { %s\n}", quoted, command) < 0)
            out = NULL;
    }
    if (text && !out) {
        fprintf(stderr, "paddock run: out of memory\n");
    } else if (out && strlen(out) > RUN_LINE_MAX) {
        run_say_too_large();
        free(out);
        out = NULL;
    }
    free(quoted);
    free(in);
    return out;
}

static volatile int run_interrupted;

static void run_on_signal(int sig)
{
    run_interrupted = sig;
}

static int run_delete(struct client *c, const char *id)
{
    char path[128];
    json_t *reply = NULL;
    char *err = NULL;
    snprintf(path, sizeof(path), "/v1/sessions/%s", id);
    int st = client_request(c, "DELETE", path, NULL, 120000, &reply, &err);
    if (st != 200)
        fprintf(stderr, "paddock run: could not delete session %s: %s\n", id,
                err ? err : client_error_message(reply, "unknown error"));
    json_decref(reply);
    free(err);
    return st == 200 ? 0 : -1;
}

int cmd_run(struct app *app, int argc, char **argv)
{
    static const struct option opts[] = {
        {"image", required_argument, NULL, 'i'},   {"session", required_argument, NULL, 's'},
        {"timeout", required_argument, NULL, 't'}, {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
    const char *image = NULL, *session = NULL;
    double timeout = 600;
    bool as_json = false;
    int c;
    while ((c = getopt_long(argc, argv, "+i:s:t:jh", opts, NULL)) != -1) {
        switch (c) {
        case 'i':
            image = optarg;
            break;
        case 's':
            session = optarg;
            break;
        case 't':
            timeout = strtod(optarg, NULL);
            if (!(timeout > 0 && timeout <= TIMECONV_TIMEOUT_MAX)) {
                fprintf(stderr, "paddock run: --timeout takes seconds > 0 and at most %.0f\n",
                        TIMECONV_TIMEOUT_MAX);
                return 2;
            }
            break;
        case 'j':
            as_json = true;
            break;
        case 'h':
            app_command_help(stdout, "run");
            return 0;
        default:
            return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "paddock run: no command given (paddock run -- CMD...)\n");
        return 2;
    }
    char *command = cli_join_argv(argc - optind, argv + optind);
    if (command && !isatty(STDIN_FILENO)) {
        char *bound = run_bind_stdin(command);
        free(command);
        if (!bound)
            return 125;
        command = bound;
    }
    struct client *cl = app_client_new(app);
    char *err = NULL;
    json_t *reply = NULL;
    int rc = 125; /* like docker run: 125 = paddock itself failed */
    char *created = NULL;
    char sid[80];
    if (!command || !cl) {
        fprintf(stderr, "paddock run: out of memory\n");
        goto out;
    }
    /* Ctrl-C stops waiting, but the session this command made is still deleted. */
    struct sigaction sa = {.sa_handler = run_on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    client_set_interrupt(cl, &run_interrupted);
    if (client_ensure_engine(cl, app->self_exe, app->state_dir, app->agent_socket, &err) < 0) {
        fprintf(stderr, "paddock run: %s\n", err);
        goto out;
    }
    if (session) {
        /* an id, a unique prefix of one, or a name: the engine resolves it */
        if (!cli_session_id(app, "run", session, sid, sizeof(sid)))
            goto out;
        session = sid;
    } else {
        json_t *body = json_object();
        if (image)
            json_object_set_new(body, "image", json_string(image));
        int st = client_request(cl, "POST", "/v1/sessions", body, 180000, &reply, &err);
        json_decref(body);
        const char *id = json_string_value(json_object_get(reply, "id"));
        if (st != 201 || !id) {
            fprintf(stderr, "paddock run: cannot create a session: %s\n",
                    err ? err : client_error_message(reply, "unknown error"));
            /* the session the engine recorded before it failed is this run's, deleted */
            const char *left =
                json_string_value(json_object_get(json_object_get(reply, "error"), "session"));
            if (left)
                created = strdup(left);
            goto out;
        }
        created = strdup(id);
        session = created;
        json_decref(reply);
        reply = NULL;
    }
    json_t *action = json_pack("{s:{s:s,s:{s:s,s:b},s:f}}", "action", "action", "run", "args",
                               "command", command, "blocking", 1, "timeout", timeout);
    char path[128];
    snprintf(path, sizeof(path), "/v1/sessions/%s/execute_action", session);
    int st =
        client_request(cl, "POST", path, action, (long)(timeout * 1000) + 120000, &reply, &err);
    json_decref(action);
    if (st < 0) {
        fprintf(stderr, "paddock run: %s\n", err ? err : "the action failed");
        goto out;
    }
    if (st != 200 || !json_is_object(reply)) {
        cli_say_error(app, "run", reply, session, "the action failed");
        goto out;
    }
    if (as_json) {
        cli_print_json(reply);
    } else {
        const char *content = json_string_value(json_object_get(reply, "content"));
        if (content && *content) {
            fputs(content, stdout);
            if (content[strlen(content) - 1] != '\n')
                putchar('\n');
        }
    }
    json_t *meta = json_object_get(json_object_get(reply, "extras"), "metadata");
    json_int_t ec = json_integer_value(json_object_get(meta, "exit_code"));
    if (!json_is_integer(json_object_get(meta, "exit_code")) || ec < 0) {
        const char *suffix = json_string_value(json_object_get(meta, "suffix"));
        fprintf(stderr, "paddock run: %s\n",
                suffix && *suffix ? suffix + (*suffix == '\n') : "no exit code");
        rc = 124;
    } else {
        rc = (int)(ec & 0xff);
    }
    fflush(stdout);
out:
    if (run_interrupted)
        rc = 128 + run_interrupted;
    if (cl)
        client_set_interrupt(cl, NULL);
    if (created && run_delete(cl, created) < 0 && rc == 0)
        rc = 125;
    json_decref(reply);
    free(err);
    free(created);
    free(command);
    client_free(cl);
    return rc;
}
