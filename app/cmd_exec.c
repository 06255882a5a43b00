/* paddock exec SESSION [-- CMD...]: an interactive terminal into a sandbox without the
 * dashboard, through the engine's terminal endpoint (an HTTP upgrade on its unix socket).
 * The local terminal is raw while it runs and restored on every way out; the window size
 * follows the local one; the exit code is the remote command's. */
#include "app/app.h"
#include "app/cli.h"
#include "client/client.h"
#include "client/client_term.h"
#include "common/io.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

static int exec_sigpipe[2] = {-1, -1};
static struct termios exec_saved;
static bool exec_raw;

static void exec_restore(void)
{
    if (exec_raw) {
        tcsetattr(STDIN_FILENO, TCSANOW, &exec_saved);
        exec_raw = false;
    }
}

static void exec_on_signal(int sig)
{
    unsigned char b = (unsigned char)sig;
    if (write(exec_sigpipe[1], &b, 1) < 0) {
        /* the pipe is full: a signal is pending anyway */
    }
}

static bool exec_stdout_failed;

static void exec_on_data(const char *data, size_t len, void *ud)
{
    (void)ud;
    if (!exec_stdout_failed && io_write_all(STDOUT_FILENO, data, len) < 0)
        exec_stdout_failed = true;
}

/* Connect and wait for the upgrade (client_term's state machine, driven by a plain poll).
 * The connection, or NULL with the engine's message in *err and its code in code. */
static struct client_term *exec_upgrade(struct client *c, const char *path, char **err, char *code,
                                        size_t code_size)
{
    struct client_term *t = c ? client_term_open_on(c, path, err) : NULL;
    while (t && client_term_state(t) == CLIENT_TERM_CONNECTING) {
        struct pollfd p = {.fd = client_term_fd(t), .events = client_term_events(t)};
        /* a remote connect's timeouts pass with nothing ready */
        if (poll(&p, 1, client_term_timeout(t)) < 0 && errno != EINTR)
            break;
        client_term_pump(t, p.revents, exec_on_data, NULL);
    }
    if (t && client_term_state(t) != CLIENT_TERM_OPEN) {
        const char *why = client_term_error(t);
        snprintf(code, code_size, "%s", client_term_error_code(t) ? client_term_error_code(t) : "");
        *err = strdup(why ? why : "the engine closed the connection");
        client_term_close(t);
        t = NULL;
    }
    return t;
}

static void exec_resize(struct client *c, const char *sid, const char *tid)
{
    struct winsize ws;
    if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) < 0 || !ws.ws_row || !ws.ws_col)
        return;
    char path[200];
    snprintf(path, sizeof(path), "/v1/sessions/%s/terminal/resize", sid);
    json_t *body =
        json_pack("{s:s,s:i,s:i}", "terminal", tid, "rows", ws.ws_row, "cols", ws.ws_col);
    json_t *reply = NULL;
    char *err = NULL;
    client_request(c, "POST", path, body, 5000, &reply, &err);
    json_decref(body);
    json_decref(reply);
    free(err);
}

/* Whether the engine says the terminal's command has ended. */
static bool exec_ended(struct client *c, const char *sid, const char *tid)
{
    char q[200];
    snprintf(q, sizeof(q), "/v1/sessions/%s/terminal/%s", sid, tid);
    json_t *reply = NULL;
    char *e = NULL;
    int st = client_request(c, "GET", q, NULL, 5000, &reply, &e);
    bool ended = st == 200 && json_is_false(json_object_get(reply, "running"));
    json_decref(reply);
    free(e);
    return ended;
}

/* Copy between the terminal and the connection until the connection ends. Over TLS the
 * engine's close of an upgraded connection does not always reach the client (libmicrohttpd
 * keeps the TLS connection), so a remote terminal also asks, each second without input,
 * whether its command ended. */
static int exec_pump(struct client_term *t, struct client *c, const char *sid, bool tty)
{
    bool stdin_open = true, remote = client_is_remote(c);
    for (;;) {
        /* input waits while the engine is not taking what was typed */
        bool room = client_term_pending(t) < CLIENT_TERM_OUT_MAX / 2;
        struct pollfd p[3] = {{.fd = client_term_fd(t), .events = client_term_events(t)},
                              {.fd = stdin_open && room ? STDIN_FILENO : -1, .events = POLLIN},
                              {.fd = exec_sigpipe[0], .events = POLLIN}};
        int ready = poll(p, 3, remote ? 1000 : -1);
        if (ready < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (ready == 0 && remote && exec_ended(c, sid, client_term_id(t))) {
            client_term_pump(t, POLLIN, exec_on_data, NULL); /* what came before the end */
            return exec_stdout_failed ? -1 : 0;
        }
        if (p[2].revents & POLLIN) {
            unsigned char sig;
            while (read(exec_sigpipe[0], &sig, 1) == 1) {
                if (sig == SIGWINCH)
                    exec_resize(c, sid, client_term_id(t));
                else
                    return 128 + sig;
            }
        }
        if (p[0].revents) {
            enum client_term_state st = client_term_pump(t, p[0].revents, exec_on_data, NULL);
            if (exec_stdout_failed)
                return -1;
            if (st != CLIENT_TERM_OPEN)
                return 0; /* the shell ended */
        }
        if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
            char buf[16384];
            ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
            if (n <= 0) {
                /* input ended: without a TTY the command's stdin ends (a half-close); with
                 * one, ^D as a terminal would send */
                stdin_open = false;
                if (!tty)
                    client_term_shutdown_write(t);
                else if (client_term_send(t, "\x04", 1) < 0)
                    return 0;
                continue;
            }
            if (client_term_send(t, buf, (size_t)n) < 0)
                return 0;
        }
    }
}

int cmd_exec(struct app *app, int argc, char **argv)
{
    static const struct option opts[] = {{"user", required_argument, NULL, 'u'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *user = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "+u:h", opts, NULL)) != -1) {
        if (c == 'u') {
            user = optarg;
        } else if (c == 'h') {
            app_command_help(stdout, "exec");
            return 0;
        } else {
            return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "paddock exec: name a session (its name, id or id prefix)\n");
        return 2;
    }
    char sid[80];
    if (!cli_session_id(app, "exec", argv[optind], sid, sizeof(sid)))
        return 1;
    bool tty = isatty(STDIN_FILENO);
    char path[12288];
    snprintf(path, sizeof(path), "/v1/sessions/%s/terminal", sid);
    if (tty) {
        struct winsize ws;
        if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
            char v[16];
            snprintf(v, sizeof(v), "%d", ws.ws_row);
            cli_query_add(path, sizeof(path), "rows", v);
            snprintf(v, sizeof(v), "%d", ws.ws_col);
            cli_query_add(path, sizeof(path), "cols", v);
        }
    }
    cli_query_add(path, sizeof(path), "user", user);
    if (!tty)
        cli_query_add(path, sizeof(path), "tty", "0"); /* piped: plain stdin, stdout */
    /* the command after "--", one shell line quoted as `run` quotes it */
    int first = optind + 1;
    if (first < argc && strcmp(argv[first], "--") == 0)
        first++;
    if (first < argc) {
        char *line = cli_join_argv(argc - first, argv + first);
        if (!line) {
            fprintf(stderr, "paddock exec: out of memory\n");
            return 1;
        }
        cli_query_add(path, sizeof(path), "cmd", line);
        free(line);
    }
    char *err = NULL, code[40] = "";
    struct client *cl = app_client_new(app);
    struct client_term *t = exec_upgrade(cl, path, &err, code, sizeof(code));
    if (!t) {
        cli_say_refusal(app, "exec", code[0] ? code : NULL, err ? err : "failed", sid);
        free(err);
        client_free(cl);
        return 1;
    }
    if (pipe(exec_sigpipe) == 0) {
        fcntl(exec_sigpipe[0], F_SETFL, O_NONBLOCK);
        fcntl(exec_sigpipe[1], F_SETFL, O_NONBLOCK);
    }
    struct sigaction sa = {.sa_handler = exec_on_signal};
    sigemptyset(&sa.sa_mask);
    int sigs[] = {SIGWINCH, SIGTERM, SIGHUP, SIGINT, SIGQUIT};
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaction(sigs[i], &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (tty && tcgetattr(STDIN_FILENO, &exec_saved) == 0) {
        struct termios raw = exec_saved;
        cfmakeraw(&raw);
        if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0) {
            exec_raw = true;
            atexit(exec_restore);
        }
    }
    char tid[CLIENT_TERM_ID_MAX];
    snprintf(tid, sizeof(tid), "%s", client_term_id(t));
    int rc = exec_pump(t, cl, sid, tty);
    exec_restore();
    client_term_close(t);
    if (rc == 0 && tid[0]) {
        /* the engine records the exit before it closes the connection: one question */
        char q[200];
        snprintf(q, sizeof(q), "/v1/sessions/%s/terminal/%s", sid, tid);
        json_t *reply = NULL;
        char *e = NULL;
        int st = client_request(cl, "GET", q, NULL, 5000, &reply, &e);
        json_t *ec = json_object_get(reply, "exit_code");
        rc = st == 200 && json_is_integer(ec) ? (int)json_integer_value(ec) : 1;
        json_decref(reply);
        free(e);
    } else if (rc < 0) {
        rc = 1;
    }
    client_free(cl);
    return rc;
}
