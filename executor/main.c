/* paddock-executor: OpenHands' action execution server for one sandbox, in one process.
 *
 * Start-up: take the API key (if any) out of the environment or its file, resolve the agent
 * user, make the working dir, start the shell, wait for its first marker, run the start-up
 * steps in it (variables, git identity, setup script), then bind the sockets (so "socket
 * exists + /alive 200" means ready) and serve. One epoll loop drives HTTP (MHD), the pty,
 * signals (signalfd), the action timer (timerfd) and the pipes of file operations running as
 * the agent. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "action_browse.h"
#include "action_run.h"
#include "auth.h"
#include "egress.h"
#include "endpoint.h"
#include "env.h"
#include "executor.h"
#include "fsjob.h"
#include "jalloc.h"
#include "listen.h"
#include "plugin.h"
#include "seccomp_probe.h"
#include "server.h"
#include "skills.h"
#include "startup.h"
#include "userdb.h"

#define STARTUP_TIMEOUT 30.0 /* seconds for the shell's first prompt */
#define SHELL_MAX_FAILURES 3 /* consecutive deaths before the first prompt */

extern char **environ;

struct options {
    const char *socket_path;
    const char *listen;
    const char *api_key_file;
    const char *working_dir;
    const char *username;
    const char *shell;
    const char *env_file;
    const char *home;
    const char *command_dir; /* --command-dir DIR: where long commands' directory is made */
    const char *egress_proxy, *egress_socket;
    const char *user_db; /* --user-db DIR: name the user in DIR/passwd and DIR/group */
    long user_id;
    double no_change_timeout;
    double stream_hold; /* seconds */
    double setup_timeout;
    const char **plugins; /* names after --plugins */
    size_t n_plugins;
    unsigned connection_timeout;
    bool quiet;
    bool auto_lint;
    bool own_working_dir;
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: paddock-executor [--socket PATH] [--listen HOST:PORT] [--api-key-file PATH]\n"
            "                        [--working-dir DIR] [--user-id UID] [--username NAME]\n"
            "                        [--no-change-timeout SECS] [--connection-timeout SECS]\n"
            "                        [--shell PATH] [--home DIR] [--env-file PATH] [--quiet]\n"
            "                        [--setup-timeout SECS] [--auto-lint] [--command-dir DIR]\n"
            "                        [--user-db DIR] [--own-working-dir] [--stream-hold MS]\n"
            "                        [--egress-proxy HOST:PORT --egress-socket PATH]\n"
            "                        [--plugins NAME...]\n"
            "\n"
            "Serves OpenHands' action execution protocol over HTTP on the unix socket PATH\n"
            "and/or on TCP (at least one of --socket and --listen).\n"
            "  --listen HOST:PORT        also serve on TCP ([::1]:PORT for IPv6); a host that is\n"
            "                            not loopback needs an API key\n"
            "  --api-key-file PATH       require X-Session-API-Key equal to the key in PATH (a\n"
            "                            file only this uid can read); default: $SESSION_API_KEY\n"
            "  --working-dir DIR         the shell starts here; created if missing (/workspace)\n"
            "  --user-id UID             run the shell as UID (needs root)\n"
            "  --username NAME           the agent's name for UID, whatever /etc/passwd says\n"
            "  --user-db DIR             as root: make DIR/passwd and DIR/group (/etc) name\n"
            "                            --username first for --user-id\n"
            "  --own-working-dir         as root: give the working dir (on its filesystem) to\n"
            "                            --user-id when it is not theirs\n"
            "  --no-change-timeout SECS  soft timeout for non-blocking commands\n"
            "                            (default: $NO_CHANGE_TIMEOUT_SECONDS, else 10)\n"
            "  --connection-timeout SECS close connections idle this long (60; 0: never)\n"
            "  --stream-hold MS          a streamed command's first output waits this long for\n"
            "                            its end, so a quick one is answered whole (2; 0: no)\n"
            "  --shell PATH              shell binary (default: bash from PATH, else /bin/sh)\n"
            "  --home DIR                the agent's HOME (default: its passwd home, else the\n"
            "                            working dir); created if missing\n"
            "  --command-dir DIR         make the directory of long commands' files in DIR\n"
            "                            (default /tmp); it goes when DIR goes, even if the\n"
            "                            executor is killed\n"
            "  --env-file PATH           KEY=VALUE lines exported in the shell at start and\n"
            "                            persisted to ~/.bashrc\n"
            "  --setup-timeout SECS      limit of the workspace's setup script (600)\n"
            "  --auto-lint               OpenHands' enable_auto_lint: edits and writes report\n"
            "                            the lint errors they introduced\n"
            "  --egress-proxy HOST:PORT  listen there (loopback) and hand each connection to\n"
            "  --egress-socket PATH      the engine's unix socket PATH (its HTTP proxy)\n"
            "  --quiet                   no log line per action and file request (stdout);\n"
            "                            warnings stay on stderr\n"
            "  --plugins NAME...         optional capabilities: ipython (alias jupyter) for\n"
            "                            run_ipython, gitinfo for git metadata of commands,\n"
            "                            agent_skills for OpenHands' agentskills module\n");
}

static int parse_seconds(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v > 0) || v > 1e9)
        return -1;
    *out = v;
    return 0;
}

/* OpenHands' `--plugins a b c`: the names up to the next option (or `--plugins=a`). They are
 * taken out of argv, so getopt never sees them. */
static int take_plugins(int *argc, char **argv, struct options *o)
{
    int out = 1;
    o->plugins = calloc((size_t)*argc, sizeof *o->plugins);
    if (!o->plugins)
        return -1;
    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            while (i < *argc)
                argv[out++] = argv[i++];
            break;
        }
        if (strncmp(argv[i], "--plugins=", 10) == 0) {
            if (argv[i][10])
                o->plugins[o->n_plugins++] = argv[i] + 10;
            continue;
        }
        if (strcmp(argv[i], "--plugins") != 0) {
            argv[out++] = argv[i];
            continue;
        }
        while (i + 1 < *argc && argv[i + 1][0] != '-')
            o->plugins[o->n_plugins++] = argv[++i];
    }
    argv[out] = NULL;
    *argc = out;
    return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        {"socket", required_argument, NULL, 's'},
        {"listen", required_argument, NULL, 'l'},
        {"api-key-file", required_argument, NULL, 'k'},
        {"connection-timeout", required_argument, NULL, 'c'},
        {"working-dir", required_argument, NULL, 'w'},
        {"user-id", required_argument, NULL, 'u'},
        {"username", required_argument, NULL, 'n'},
        {"no-change-timeout", required_argument, NULL, 't'},
        {"stream-hold", required_argument, NULL, 'W'},
        {"shell", required_argument, NULL, 'S'},
        {"env-file", required_argument, NULL, 'e'},
        {"home", required_argument, NULL, 'H'},
        {"command-dir", required_argument, NULL, 'C'},
        {"setup-timeout", required_argument, NULL, 'T'},
        {"egress-proxy", required_argument, NULL, 'P'},
        {"egress-socket", required_argument, NULL, 'E'},
        {"quiet", no_argument, NULL, 'q'},
        {"auto-lint", no_argument, NULL, 'L'},
        {"user-db", required_argument, NULL, 'D'},
        {"own-working-dir", no_argument, NULL, 'O'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    const char *env_nct = getenv("NO_CHANGE_TIMEOUT_SECONDS");
    *o = (struct options){.working_dir = "/workspace",
                          .user_id = -1,
                          .no_change_timeout = EXECUTOR_DEFAULT_NO_CHANGE,
                          .stream_hold = EXECUTOR_DEFAULT_STREAM_HOLD,
                          .setup_timeout = STARTUP_SETUP_TIMEOUT,
                          .connection_timeout = EXECUTOR_CONNECTION_TIMEOUT};
    if (take_plugins(&argc, argv, o) < 0) {
        fprintf(stderr, "paddock-executor: out of memory\n");
        return 1;
    }
    if (env_nct && *env_nct && parse_seconds(env_nct, &o->no_change_timeout) < 0) {
        fprintf(stderr, "paddock-executor: invalid NO_CHANGE_TIMEOUT_SECONDS: %s\n", env_nct);
        return 2;
    }
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 's':
            o->socket_path = optarg;
            break;
        case 'l':
            o->listen = optarg;
            break;
        case 'k':
            o->api_key_file = optarg;
            break;
        case 'c':
            errno = 0;
            unsigned long ct = strtoul(optarg, &end, 10);
            if (errno || end == optarg || *end || optarg[0] == '-' || ct > 86400) {
                fprintf(stderr, "paddock-executor: invalid --connection-timeout: %s\n", optarg);
                return 2;
            }
            o->connection_timeout = (unsigned)ct;
            break;
        case 'w':
            o->working_dir = optarg;
            break;
        case 'u':
            errno = 0;
            o->user_id = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || o->user_id < 0 || o->user_id > INT_MAX) {
                fprintf(stderr, "paddock-executor: invalid --user-id: %s\n", optarg);
                return 2;
            }
            break;
        case 'n':
            o->username = optarg;
            break;
        case 't':
            if (parse_seconds(optarg, &o->no_change_timeout) < 0) {
                fprintf(stderr, "paddock-executor: invalid --no-change-timeout: %s\n", optarg);
                return 2;
            }
            break;
        case 'W':
            errno = 0;
            o->stream_hold = strtod(optarg, &end) / 1e3;
            if (errno || end == optarg || *end || !(o->stream_hold >= 0) || o->stream_hold > 60) {
                fprintf(stderr, "paddock-executor: invalid --stream-hold: %s (0 to 60000 ms)\n",
                        optarg);
                return 2;
            }
            break;
        case 'T':
            if (parse_seconds(optarg, &o->setup_timeout) < 0) {
                fprintf(stderr, "paddock-executor: invalid --setup-timeout: %s\n", optarg);
                return 2;
            }
            break;
        case 'S':
            o->shell = optarg;
            break;
        case 'e':
            o->env_file = optarg;
            break;
        case 'H':
            o->home = optarg;
            break;
        case 'C':
            o->command_dir = optarg;
            break;
        case 'P':
            o->egress_proxy = optarg;
            break;
        case 'E':
            o->egress_socket = optarg;
            break;
        case 'q':
            o->quiet = true;
            break;
        case 'L':
            o->auto_lint = true;
            break;
        case 'D':
            o->user_db = optarg;
            break;
        case 'O':
            o->own_working_dir = true;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        case 'V':
            printf("paddock-executor %s\n", PADDOCK_VERSION);
            exit(0);
        default:
            fprintf(stderr, "paddock-executor: unknown option or missing value: %s\n",
                    argv[optind - 1]);
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "paddock-executor: unexpected argument: %s\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if ((!o->socket_path || !*o->socket_path) && (!o->listen || !*o->listen)) {
        fprintf(stderr, "paddock-executor: --socket or --listen is required\n");
        usage(stderr);
        return 2;
    }
    if (o->socket_path && !*o->socket_path)
        o->socket_path = NULL;
    if (!o->egress_proxy != !o->egress_socket) {
        fprintf(stderr, "paddock-executor: --egress-proxy and --egress-socket go together\n");
        return 2;
    }
    struct buf err = BUF_INIT;
    char host[256], port[8];
    if (o->listen && listen_split(o->listen, host, sizeof host, port, sizeof port, &err) < 0) {
        fprintf(stderr, "paddock-executor: %s\n", err.data);
        buf_free(&err);
        return 2;
    }
    return 0;
}

static int mkdir_p(const char *path, bool *created)
{
    char tmp[PATH_MAX];
    struct stat st;
    *created = false;
    if (stat(path, &st) == 0)
        return S_ISDIR(st.st_mode) ? 0 : (errno = ENOTDIR, -1);
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp)
        return errno = ENAMETOOLONG, -1;
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
        return -1;
    *created = true;
    return 0;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void on_shell_event(struct shell *sh, enum shell_event ev, void *ctx)
{
    struct executor *ex = ctx;
    switch (ev) {
    case SHELL_EVENT_READY:
        ex->shell_started = true;
        ex->shell_failures = 0;
        ex->shell_broken = false;
        action_run_on_shell_event(ex, ev);
        action_pump(ex);
        break;
    case SHELL_EVENT_MARKER:
        action_run_on_shell_event(ex, ev);
        break;
    case SHELL_EVENT_EXITED:
        /* After that, during the start-up steps too (a setup script that exits), it is
         * replaced like any shell that ends. */
        if (!ex->shell_started) {
            ex->fatal = "the shell exited before its first prompt";
            ex->stopping = true;
            return;
        }
        action_run_on_shell_event(ex, ev);
        if (ex->stopping)
            return;
        if (ex->shell_failures++ >= SHELL_MAX_FAILURES || shell_start(sh) < 0) {
            ex->shell_broken = true;
            action_pump(ex);
        }
        break;
    }
}

struct signals {
    struct evloop_watch watch;
    struct executor *ex;
};

static void on_signal(struct evloop_watch *w, uint32_t events)
{
    struct signals *s = EVLOOP_CONTAINER_OF(w, struct signals, watch);
    struct signalfd_siginfo si;
    (void)events;
    while (read(w->fd, &si, sizeof si) == (ssize_t)sizeof si) {
        if (si.ssi_signo != SIGCHLD) {
            s->ex->stopping = true;
            continue;
        }
        /* Subreaper: orphans of the agent's jobs come to us too. */
        int status;
        pid_t pid;
        while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
            if (pid == s->ex->shell.pid)
                shell_reaped(&s->ex->shell, status);
            else if (!plugin_reaped(s->ex, pid, status) &&
                     !action_browse_reaped(s->ex, pid, status))
                action_run_child_exited(s->ex, pid, status);
        }
    }
}

struct startup_timer {
    struct evloop_watch watch;
    struct executor *ex;
};

static void on_startup_timeout(struct evloop_watch *w, uint32_t events)
{
    struct startup_timer *t = EVLOOP_CONTAINER_OF(w, struct startup_timer, watch);
    (void)events;
    evloop_timer_ack(w);
    if (!t->ex->shell.ready) {
        t->ex->fatal = "the shell did not print its first prompt in time";
        t->ex->stopping = true;
    }
}

/* Runs the loop until the shell is ready (true) or start-up failed. */
static bool wait_for_shell(struct executor *ex)
{
    struct startup_timer t = {.ex = ex};
    if (evloop_timer_open(ex->loop, &t.watch, on_startup_timeout) < 0) {
        ex->fatal = "cannot create the start-up timer";
        return false;
    }
    evloop_timer_at(&t.watch, evloop_now() + STARTUP_TIMEOUT);
    while (!ex->shell.ready && !ex->stopping)
        if (evloop_run_once(ex->loop, -1) < 0)
            break;
    evloop_timer_close(ex->loop, &t.watch);
    return ex->shell.ready && !ex->stopping;
}

int main(int argc, char **argv)
{
    jalloc_install(); /* before any JSON value exists */
    /* The engine's start-up check, in a container of its own (not a server). */
    if (argc == 2 && strcmp(argv[1], "--seccomp-probe") == 0)
        return seccomp_probe_run();
    /* agentskills' file_editor, run by the agent's Python (skills.h). */
    if (argc == 2 && strcmp(argv[1], "--file-editor") == 0)
        return skills_file_editor_main();
    struct options o;
    int rc = parse_options(argc, argv, &o);
    if (rc) {
        free(o.plugins);
        return rc;
    }

    static struct executor ex;
    /* The key first, so that nothing started later (the shell) can inherit it. */
    struct buf err = BUF_INIT;
    char *env_key = auth_key_take_env();
    if (o.api_key_file) {
        ex.api_key = auth_key_load_file(o.api_key_file, &err);
        auth_key_free(env_key);
        if (!ex.api_key) {
            fprintf(stderr, "paddock-executor: %s\n", err.data);
            buf_free(&err);
            free(o.plugins);
            return 1;
        }
    } else {
        ex.api_key = env_key;
    }
    struct buf perr = BUF_INIT;
    for (size_t i = 0; i < o.n_plugins; i++) {
        if (plugin_enable(&ex, o.plugins[i], &perr) < 0) {
            fprintf(stderr, "paddock-executor: %s\n", perr.data ? perr.data : "bad plugin");
            buf_free(&perr);
            free(o.plugins);
            auth_key_free(ex.api_key);
            return 2;
        }
    }
    free(o.plugins);
    o.plugins = NULL;
    ex.cfg.socket_path = o.socket_path;
    ex.quiet = o.quiet;
    ex.cfg.working_dir = o.working_dir;
    ex.cfg.no_change_timeout = o.no_change_timeout;
    ex.cfg.stream_hold = o.stream_hold;
    ex.cfg.auto_lint = o.auto_lint;
    ex.cfg.username = o.username;

    /* Who the agent's shell runs as, and where its home is. */
    uid_t uid = geteuid();
    gid_t gid = getegid();
    if (o.user_id < 0 && o.username && geteuid() == 0) {
        struct passwd *pw = getpwnam(o.username);
        if (pw)
            o.user_id = pw->pw_uid;
    }
    if (o.user_id >= 0 && (uid_t)o.user_id != geteuid()) {
        if (geteuid() != 0) {
            fprintf(stderr,
                    "paddock-executor: --user-id %ld needs root; running the shell as uid %ld\n",
                    o.user_id, (long)geteuid());
        } else {
            uid = (uid_t)o.user_id;
            gid = (gid_t)o.user_id;
            ex.cfg.switch_user = true;
        }
    }
    /* A name given for the uid wins over the uid's first passwd entry: an image may list
     * `openhands` beside another name for uid 1000 (OpenHands' user). */
    struct passwd *pw = o.username ? getpwnam(o.username) : NULL;
    if (!pw || pw->pw_uid != uid)
        pw = getpwuid(uid);
    char user[256], home[PATH_MAX];
    if (pw && ex.cfg.switch_user)
        gid = pw->pw_gid;
    /* A name asked for is the agent's name (USER, the metadata) even when the image calls
     * the uid otherwise: OpenHands' `openhands` in an image that has no such user. */
    if (o.username) {
        snprintf(user, sizeof user, "%s", o.username);
    } else if (pw) {
        snprintf(user, sizeof user, "%s", pw->pw_name);
    } else {
        snprintf(user, sizeof user, "%ld", (long)uid);
    }
    ex.cfg.uid = uid;
    ex.cfg.gid = gid;
    if (!ex.cfg.username)
        ex.cfg.username = user;

    bool created;
    if (mkdir_p(o.working_dir, &created) < 0) {
        fprintf(stderr, "paddock-executor: cannot create working dir %s: %s\n", o.working_dir,
                strerror(errno));
        return 1;
    }
    if (created && ex.cfg.switch_user && chown(o.working_dir, uid, gid) < 0)
        fprintf(stderr, "paddock-executor: cannot chown %s: %s\n", o.working_dir, strerror(errno));
    /* The engine asks it for a workspace of the image's or its own, never for an operator's
     * directory (docs/protocol.md, "The agent user"). */
    if (o.own_working_dir && ex.cfg.switch_user) {
        buf_reset(&err);
        if (userdb_own_tree(o.working_dir, uid, gid, &err) < 0)
            fprintf(stderr, "paddock-executor: warning: %s\n", err.data);
    }
    if (o.home) {
        if (mkdir_p(o.home, &created) < 0) {
            fprintf(stderr, "paddock-executor: cannot create home %s: %s\n", o.home,
                    strerror(errno));
            return 1;
        }
        if (created && ex.cfg.switch_user && chown(o.home, uid, gid) < 0)
            fprintf(stderr, "paddock-executor: cannot chown %s: %s\n", o.home, strerror(errno));
    }
    snprintf(home, sizeof home, "%s",
             o.home                     ? o.home
             : pw && is_dir(pw->pw_dir) ? pw->pw_dir
                                        : o.working_dir);

    struct env_var *vars = NULL;
    size_t nvars = 0;
    if (o.env_file) {
        buf_reset(&err);
        if (env_file_read(o.env_file, environ, &vars, &nvars, &err) < 0) {
            fprintf(stderr, "paddock-executor: --env-file: %s\n", err.data ? err.data : "");
            buf_free(&err);
            env_vars_free(vars, nvars);
            auth_key_free(ex.api_key);
            return 1;
        }
    }

    if (plugin_prepare_all(&ex, &perr) < 0) {
        fprintf(stderr, "paddock-executor: %s\n", perr.data ? perr.data : "cannot set up plugins");
        buf_free(&perr);
        env_vars_free(vars, nvars);
        auth_key_free(ex.api_key);
        return 1;
    }

    char hostname[256] = "localhost";
    if (gethostname(hostname, sizeof hostname - 1) < 0)
        snprintf(hostname, sizeof hostname, "localhost");

    char shell_path[PATH_MAX];
    bool is_bash = false;
    struct env_params ep = {.home = home,
                            .user = user,
                            .hostname = hostname,
                            .shell = "/bin/sh",
                            .allow = getenv("PADDOCK_ENV_ALLOW")};
    char **envp = env_build(environ, &ep);
    if (!envp) {
        fprintf(stderr, "paddock-executor: out of memory\n");
        return 1;
    }
    if (o.shell) {
        snprintf(shell_path, sizeof shell_path, "%s", o.shell);
        const char *base = strrchr(o.shell, '/');
        is_bash = strncmp(base ? base + 1 : o.shell, "bash", 4) == 0;
    } else if (shell_find(env_get(envp, "PATH"), shell_path, sizeof shell_path, &is_bash) < 0) {
        fprintf(stderr, "paddock-executor: no shell found (neither bash nor /bin/sh)\n");
        env_free(envp);
        return 1;
    }
    env_free(envp);
    ep.shell = shell_path;
    /* Before anything runs as the agent: whoami, id -un, getent and ~ then say its name. */
    if (o.user_db && o.username && ex.cfg.switch_user) {
        struct userdb_user u = {
            .name = user, .uid = uid, .gid = gid, .home = home, .shell = shell_path};
        buf_reset(&err);
        if (userdb_name_user(o.user_db, &u, &err) < 0)
            fprintf(stderr, "paddock-executor: warning: cannot name uid %ld '%s': %s\n", (long)uid,
                    user, err.data);
    }
    envp = env_build(environ, &ep);
    if (!envp) {
        fprintf(stderr, "paddock-executor: out of memory\n");
        return 1;
    }

    /* TCP is bound before the shell starts, so a refused or busy address fails at once; it
     * is served only when the unix socket appears (the readiness signal). */
    int fd_tcp = -1;
    if (o.listen && (fd_tcp = listen_tcp(o.listen, ex.api_key != NULL, &err)) < 0) {
        fprintf(stderr, "paddock-executor: %s\n", err.data);
        buf_free(&err);
        env_free(envp);
        auth_key_free(ex.api_key);
        return 1;
    }

    /* The proxy's port too, before the shell: nothing the agent starts can take it first. */
    struct egress_relay *egress = NULL;
    if (o.egress_proxy && !(egress = egress_relay_open(o.egress_proxy, o.egress_socket, &err))) {
        fprintf(stderr, "paddock-executor: --egress-proxy: %s\n", err.data);
        buf_free(&err);
        env_free(envp);
        auth_key_free(ex.api_key);
        return 1;
    }

    /* Signals arrive through the loop; SIGPIPE would kill us on a vanished client. */
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN);
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);

    ex.loop = evloop_new();
    struct signals sigs = {.ex = &ex, .watch.fn = on_signal};
    sigs.watch.fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (!ex.loop || sigs.watch.fd < 0 || evloop_add(ex.loop, &sigs.watch, EPOLLIN) < 0 ||
        reqlog_init(&ex.log, ex.loop, STDOUT_FILENO) < 0 || action_run_init(&ex) < 0 ||
        fsjob_init(&ex) < 0 || action_browse_init(&ex) < 0) {
        fprintf(stderr, "paddock-executor: cannot set up the event loop: %s\n", strerror(errno));
        return 1;
    }
    ex.started_at = ex.last_action_at = evloop_now();
    if (egress && egress_relay_serve(egress, ex.loop) < 0) {
        fprintf(stderr, "paddock-executor: cannot serve the egress proxy: %s\n", strerror(errno));
        return 1;
    }

    /* Without it the shell still runs short one-line commands; the rest are refused. */
    char script_dir[PATH_MAX] = "";
    if (shell_script_dir_create(o.command_dir, script_dir, sizeof script_dir, &err) < 0) {
        fprintf(stderr, "paddock-executor: %s\n", err.data);
        script_dir[0] = '\0';
        buf_reset(&err);
    }
    struct shell_options so = {
        .script_dir = script_dir[0] ? script_dir : NULL,
        .path = shell_path,
        .bash = is_bash,
        .envp = envp,
        .workdir = o.working_dir,
        .hostname = hostname,
        .switch_user = ex.cfg.switch_user,
        .uid = uid,
        .gid = gid,
    };
    if (shell_init(&ex.shell, ex.loop, &so, on_shell_event, &ex) < 0 ||
        shell_start(&ex.shell) < 0) {
        fprintf(stderr, "paddock-executor: cannot start the shell %s: %s\n", shell_path,
                strerror(errno));
        if (script_dir[0])
            rmdir(script_dir);
        return 1;
    }

    if (plugin_init_all(&ex, &perr) < 0) {
        fprintf(stderr, "paddock-executor: %s\n", perr.data ? perr.data : "cannot set up plugins");
        buf_free(&perr);
        rc = 1;
        goto out;
    }

    rc = 0;
    if (!wait_for_shell(&ex)) {
        fprintf(stderr, "paddock-executor: %s (%s)\n", ex.fatal ? ex.fatal : "stopped", shell_path);
        rc = ex.fatal ? 1 : 0;
        goto out;
    }

    buf_reset(&err);
    struct startup_params sp = {.vars = vars,
                                .nvars = nvars,
                                .working_dir = o.working_dir,
                                .setup_timeout = o.setup_timeout};
    if (startup_run(&ex, &sp, &err) < 0) {
        goto out;
    }
    if (err.len)
        fprintf(stderr, "paddock-executor: start-up: %s", err.data);
    buf_free(&err);
    int fds[SERVER_MAX_LISTENERS];
    size_t nfds = 0;
    bool failed = false;
    if (fd_tcp >= 0)
        fds[nfds++] = fd_tcp;
    fd_tcp = -1;
    if (o.socket_path) {
        int fd = listen_unix(o.socket_path, &err);
        if (fd < 0)
            failed = true;
        else
            fds[nfds++] = fd;
    }
    if (!failed)
        ex.server = server_start(&ex, fds, nfds, o.connection_timeout, &err);
    else
        for (size_t i = 0; i < nfds; i++)
            close(fds[i]);
    if (!ex.server) {
        if (o.socket_path && !failed)
            unlink(o.socket_path);
        fprintf(stderr, "paddock-executor: %s\n", err.data ? err.data : "cannot serve");
        buf_free(&err);
        rc = 1;
        goto out;
    }
    ex.serving = true;

    while (!ex.stopping) {
        int timeout = server_timeout_ms(ex.server), hold = endpoint_execute_hold_ms(&ex);
        if (hold >= 0 && (timeout < 0 || hold < timeout))
            timeout = hold;
        if (evloop_run_once(ex.loop, timeout) < 0)
            break;
        endpoint_execute_release(&ex, false);
        server_run_due(ex.server);
    }

out:
    buf_free(&err);
    if (fd_tcp >= 0)
        close(fd_tcp);
    ex.stopping = true;
    action_abort_all(&ex);
    endpoint_execute_release(&ex, true);
    server_stop(ex.server);
    if (ex.serving && o.socket_path)
        unlink(o.socket_path);
    plugin_free_all(&ex);
    shell_free(&ex.shell);
    action_run_free_state(&ex);
    if (script_dir[0])
        rmdir(script_dir); /* its files went with their shells */
    fsjob_free_state(&ex);
    action_browse_free_state(&ex);
    egress_relay_close(egress, ex.loop);
    reqlog_close(&ex.log);
    evloop_del(ex.loop, &sigs.watch);
    close(sigs.watch.fd);
    evloop_free(ex.loop);
    env_free(envp);
    auth_key_free(ex.api_key);
    env_vars_free(vars, nvars);
    return rc;
}
