/* paddock: the dashboard by default; subcommands from one table. */
#include "app/app.h"
#include "client/client.h"

#include <curl/curl.h>
#include <getopt.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const struct app_command app_commands[] = {
    {"serve", "[--socket PATH] [--state-dir DIR]", "run the engine in the foreground", cmd_serve},
    {"run", "[--image IMG] [--session ID] [--json] -- CMD...",
     "run one command in a sandbox, print its output, exit with its code", cmd_run},
    {"ls", "[--all] [--json]", "list sessions", cmd_ls},
    {"dashboard", "[--read-only] [--theme NAME] [--bell] [--mouse]",
     "open the dashboard (the default)", cmd_dashboard},
    {"gc", "[--dry-run] [--json]", "remove containers, volumes, socket dirs of no live session",
     cmd_gc},
    {"pause", "[--json] SESSION...", "freeze sessions (docker pause)", cmd_pause},
    {"resume", "[--json] SESSION...", "unfreeze or restart sessions", cmd_resume},
    {"stop", "[--json] SESSION...", "stop sessions' containers (they stay)", cmd_stop},
    {"rm", "[--json] SESSION...", "delete sessions (their history stays)", cmd_rm},
    {"approvals", "[--json] [SESSION]", "actions waiting for the operator", cmd_approvals},
    {"approve", "ACTION [--reason T] [--by N] [--remember] [--json]", "let a waiting action run",
     cmd_approve},
    {"reject", "ACTION [--reason T] [--by N] [--json]", "refuse a waiting action", cmd_reject},
    {"history",
     "[SESSION] [--search T] [--state S] [--kind K] [--risk R] [--limit N] [--before ID] [--json]",
     "recorded actions, newest first; full-text search", cmd_history},
    {"show", "[--json] SESSION | ACTION", "one session or one action in full", cmd_show},
    {"exec", "[--user agent|root] SESSION [-- CMD...]",
     "a terminal in a sandbox (exit the shell to leave)", cmd_exec},
    {"export", "SESSION [--format json|md|cast] [--raw] [-o FILE]",
     "a session's record as JSON, Markdown or an asciinema cast", cmd_export},
    {NULL, NULL, NULL, NULL},
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: paddock [--socket PATH] [--state-dir DIR] [--config FILE] [COMMAND [ARGS]]\n\n"
            "commands:\n");
    for (const struct app_command *c = app_commands; c->name; c++)
        fprintf(f, "  %-10s %-48s %s\n", c->name, c->args, c->help);
    fprintf(f, "\nenvironment: PADDOCK_STATE_DIR, PADDOCK_SOCKET, PADDOCK_IMAGE, PADDOCK_CONFIG, "
               "PADDOCK_EXECUTOR, DOCKER_HOST\n"
               "config file: $XDG_CONFIG_HOME/paddock/config.toml (see man paddock)\n");
}

char *app_find_executor(const struct app *app)
{
    const char *env = getenv("PADDOCK_EXECUTOR");
    if (env && *env)
        return access(env, X_OK) == 0 ? realpath(env, NULL) : NULL;
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", app->self_exe);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    /* Installed side by side, or in the build tree (build/executor/). */
    const char *cands[] = {"%s/paddock-executor", "%s/executor/paddock-executor",
                           "%s/../lib/paddock/paddock-executor"};
    for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
        char p[PATH_MAX + 64];
        snprintf(p, sizeof(p), cands[i], dir);
        if (access(p, X_OK) == 0)
            return realpath(p, NULL);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    setlocale(LC_ALL, "");
    curl_global_init(CURL_GLOBAL_DEFAULT);
    struct app app = {.argv0 = argv[0]};
    app.self_exe = realpath("/proc/self/exe", NULL);
    const char *state = NULL, *sock = NULL, *config = NULL;

    /* Global options come before the command name. */
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--state-dir") == 0 && i + 1 < argc) {
            state = argv[++i];
        } else if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc) {
            sock = argv[++i];
        } else if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
            config = argv[++i];
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("paddock %s\n", PADDOCK_VERSION);
            return 0;
        } else if (strcmp(argv[i], "--read-only") == 0 || strcmp(argv[i], "--theme") == 0 ||
                   strcmp(argv[i], "--bell") == 0 || strcmp(argv[i], "--mouse") == 0 ||
                   strcmp(argv[i], "--no-mouse") == 0) {
            break; /* a dashboard option: the default command takes it */
        } else {
            fprintf(stderr, "paddock: unknown option %s\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    char *warnings = NULL, *err = NULL;
    if (config_load(config, &app.config, &warnings, &err) < 0) {
        fprintf(stderr, "paddock: %s\n", err ? err : "cannot read the config file");
        free(err);
        return 2;
    }
    if (warnings)
        fputs(warnings, stderr);
    free(warnings);
    /* flag > environment > config file > default */
    const char *env_state = getenv("PADDOCK_STATE_DIR"), *env_sock = getenv("PADDOCK_SOCKET");
    if (!state && !(env_state && *env_state))
        state = app.config.state_dir;
    if (!sock && !(env_sock && *env_sock))
        sock = app.config.socket;
    app.state_dir = state ? strdup(state) : client_default_state_dir();
    app.socket = sock ? strdup(sock) : client_default_socket(app.state_dir);

    const struct app_command *cmd = &app_commands[3]; /* dashboard */
    int sub_argc = argc - i + 1;
    char **sub_argv = argv + i - 1;
    if (i < argc && strcmp(argv[i], "__commands") == 0) {
        /* for shell completion and the man page test: the command names, one a line */
        for (const struct app_command *c = app_commands; c->name; c++)
            printf("%s\n", c->name);
        config_free(&app.config);
        free(app.self_exe);
        free(app.state_dir);
        free(app.socket);
        curl_global_cleanup();
        return 0;
    }
    if (i < argc && argv[i][0] != '-') {
        cmd = NULL;
        for (const struct app_command *c = app_commands; c->name; c++)
            if (strcmp(c->name, argv[i]) == 0)
                cmd = c;
        if (!cmd) {
            fprintf(stderr, "paddock: unknown command '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
        sub_argc = argc - i;
        sub_argv = argv + i;
    }
    optind = 1;
    int rc = cmd->run(&app, sub_argc, sub_argv);
    free(app.self_exe);
    free(app.state_dir);
    free(app.socket);
    config_free(&app.config);
    curl_global_cleanup();
    return rc;
}
