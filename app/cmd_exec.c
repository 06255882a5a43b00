/* paddock exec SESSION [-- CMD...]: an interactive terminal into a sandbox without the
 * dashboard, through the engine's terminal endpoint (an HTTP upgrade on its unix socket).
 * The local terminal is raw while it runs and restored on every way out; the window size
 * follows the local one; the exit code is the remote command's. */
#include "app/app.h"
#include "app/cli.h"
#include "app/client.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
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

static int exec_connect(const char *path, char **err)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (fd < 0 || strlen(path) >= sizeof(sa.sun_path)) {
        if (asprintf(err, "cannot use the socket %s", path) < 0)
            *err = NULL;
        if (fd >= 0)
            close(fd);
        return -1;
    }
    strcpy(sa.sun_path, path);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        if (asprintf(err, "engine at %s: %s", path, strerror(errno)) < 0)
            *err = NULL;
        close(fd);
        return -1;
    }
    return fd;
}

static int exec_write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Send the upgrade request and read the answer's head. 0 with the terminal id (and any bytes
 * that came after the head in *extra), or -1 with the engine's message. */
static int exec_upgrade(int fd, const char *path, char *tid, size_t tidsz, char **extra,
                        size_t *extra_len, char **err)
{
    char req[4096];
    int n = snprintf(req, sizeof(req),
                     "POST %s HTTP/1.1\r\nHost: paddock\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n"
                     "Content-Length: 0\r\n\r\n",
                     path);
    if (n <= 0 || (size_t)n >= sizeof(req) || exec_write_all(fd, req, (size_t)n) < 0) {
        *err = strdup("cannot send the request");
        return -1;
    }
    char buf[65536];
    size_t len = 0;
    char *end = NULL;
    while (!end && len < sizeof(buf) - 1) {
        ssize_t r = read(fd, buf + len, sizeof(buf) - 1 - len);
        if (r <= 0)
            break;
        len += (size_t)r;
        buf[len] = '\0';
        end = strstr(buf, "\r\n\r\n");
    }
    if (!end) {
        *err = strdup("the engine closed the connection");
        return -1;
    }
    int status = 0;
    sscanf(buf, "HTTP/1.%*d %d", &status);
    if (status != 101) {
        /* a JSON error body follows the head */
        json_t *j = json_loads(end + 4, JSON_DISABLE_EOF_CHECK, NULL);
        if (!j) {
            /* the body may not all be here yet */
            size_t have = len - (size_t)(end + 4 - buf);
            while (len < sizeof(buf) - 1) {
                ssize_t r = read(fd, buf + len, sizeof(buf) - 1 - len);
                if (r <= 0)
                    break;
                len += (size_t)r;
                buf[len] = '\0';
                if ((j = json_loads(end + 4, JSON_DISABLE_EOF_CHECK, NULL)))
                    break;
            }
            (void)have;
        }
        *err = strdup(client_error_message(j, "the engine refused the terminal"));
        json_decref(j);
        return -1;
    }
    tid[0] = '\0';
    for (char *line = strstr(buf, "\r\n"); line && line < end; line = strstr(line + 2, "\r\n"))
        if (strncasecmp(line + 2, "X-Paddock-Terminal:", 19) == 0)
            sscanf(line + 2 + 19, " %63[0-9a-f]", tid);
    (void)tidsz;
    *extra_len = len - (size_t)(end + 4 - buf);
    *extra = malloc(*extra_len + 1);
    if (*extra)
        memcpy(*extra, end + 4, *extra_len);
    return 0;
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

/* Copy between the terminal and the connection until the connection ends. */
static int exec_pump(int fd, struct client *c, const char *sid, const char *tid, bool tty)
{
    bool stdin_open = true;
    for (;;) {
        struct pollfd p[3] = {{.fd = fd, .events = POLLIN},
                              {.fd = stdin_open ? STDIN_FILENO : -1, .events = POLLIN},
                              {.fd = exec_sigpipe[0], .events = POLLIN}};
        if (poll(p, 3, -1) < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        char buf[16384];
        if (p[2].revents & POLLIN) {
            unsigned char sig;
            while (read(exec_sigpipe[0], &sig, 1) == 1) {
                if (sig == SIGWINCH)
                    exec_resize(c, sid, tid);
                else
                    return 128 + sig;
            }
        }
        if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t n = read(fd, buf, sizeof(buf));
            if (n <= 0)
                return 0; /* the shell ended */
            if (exec_write_all(STDOUT_FILENO, buf, (size_t)n) < 0)
                return -1;
        }
        if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
            if (n <= 0) {
                /* input ended: without a TTY the command's stdin ends (a half-close); with
                 * one, ^D as a terminal would send */
                stdin_open = false;
                if (!tty)
                    shutdown(fd, SHUT_WR);
                else if (exec_write_all(fd, "\x04", 1) < 0)
                    return -1;
                continue;
            }
            if (exec_write_all(fd, buf, (size_t)n) < 0)
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
            printf("usage: paddock exec [--user agent|root] SESSION [-- CMD...]\n"
                   "  a terminal in the sandbox (a login shell, or CMD); leave it by ending the\n"
                   "  shell (exit or Ctrl-D); every key, Ctrl-C included, goes to the sandbox.\n"
                   "  The exit code is the command's.\n");
            return 0;
        } else {
            return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "paddock exec: name a session (id or name)\n");
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
    /* the command after "--", joined as a shell line */
    int first = optind + 1;
    if (first < argc && strcmp(argv[first], "--") == 0)
        first++;
    if (first < argc) {
        char line[8192] = "";
        size_t n = 0;
        for (int i = first; i < argc && n < sizeof(line) - 1; i++)
            n +=
                (size_t)snprintf(line + n, sizeof(line) - n, "%s%s", i > first ? " " : "", argv[i]);
        cli_query_add(path, sizeof(path), "cmd", line);
    }
    char *err = NULL;
    int fd = exec_connect(app->socket, &err);
    char tid[64], *extra = NULL;
    size_t extra_len = 0;
    if (fd < 0 || exec_upgrade(fd, path, tid, sizeof(tid), &extra, &extra_len, &err) < 0) {
        char safe[1024];
        fprintf(stderr, "paddock exec: %s\n", cli_safe(err ? err : "failed", safe, sizeof(safe)));
        free(err);
        if (fd >= 0)
            close(fd);
        return 1;
    }
    if (extra_len)
        exec_write_all(STDOUT_FILENO, extra, extra_len);
    free(extra);
    struct client *cl = client_new(app->socket);
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
    int rc = exec_pump(fd, cl, sid, tid, tty);
    exec_restore();
    close(fd);
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
