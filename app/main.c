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
    {.name = "serve",
     .args = "[--socket PATH] [--state-dir DIR]",
     .help = "run the engine in the foreground",
     .run = cmd_serve},
    {.name = "run",
     .args = "[--image IMG] [--session ID] [--json] -- CMD...",
     .help = "run one command in a sandbox, print its output, exit with its code",
     .run = cmd_run},
    {.name = "ls", .args = "[--all] [--json]", .help = "list sessions", .run = cmd_ls},
    {.name = "dashboard",
     .args = "[--read-only] [--theme NAME] [--bell] [--mouse]",
     .help = "open the dashboard (the default)",
     .run = cmd_dashboard,
     .is_default = true},
    {.name = "gc",
     .args = "[--dry-run] [--json]",
     .help = "remove containers, volumes, socket dirs of no live session",
     .run = cmd_gc},
    {.name = "build",
     .args = "[--image IMG] [--setup CMD]... [--platform P] [--rebuild] [--json]",
     .help = "make a runtime image (setup steps, executor baked in); print its tags",
     .run = cmd_build},
    {.name = "images",
     .args = "[--json] | rm TAG...",
     .help = "list or remove runtime images",
     .run = cmd_images},
    {.name = "pause",
     .args = "[--json] SESSION...",
     .help = "freeze sessions (docker pause)",
     .run = cmd_pause},
    {.name = "resume",
     .args = "[--json] SESSION...",
     .help = "unfreeze or restart sessions",
     .run = cmd_resume},
    {.name = "stop",
     .args = "[--json] SESSION...",
     .help = "stop sessions' containers (they stay)",
     .run = cmd_stop},
    {.name = "rm",
     .args = "[--json] SESSION...",
     .help = "delete sessions (their history stays)",
     .run = cmd_rm},
    {.name = "limit",
     .args = "[--json] SESSION --disk SIZE",
     .help = "raise or lower a session's disk limit",
     .run = cmd_limit},
    {.name = "approvals",
     .args = "[--json] [SESSION]",
     .help = "actions waiting for the operator",
     .run = cmd_approvals},
    {.name = "approve",
     .args = "ACTION [--reason T] [--by N] [--remember] [--json]",
     .help = "let a waiting action run",
     .run = cmd_approve},
    {.name = "reject",
     .args = "ACTION [--reason T] [--by N] [--json]",
     .help = "refuse a waiting action",
     .run = cmd_reject},
    {.name = "risk",
     .args = "[--session SESSION] [--json] -- CMD...",
     .help = "the risk of a command and the rule that would decide it; nothing runs",
     .run = cmd_risk},
    {.name = "verify",
     .args = "[SESSION] [--json] | --export FILE",
     .help = "check the tamper-evident record; names the first entry that does not match",
     .run = cmd_verify},
    {.name = "rules",
     .args = "[list|add|edit|rm] [--session S] [PATTERN|ID]",
     .help = "the operator's rules: what runs without waiting",
     .run = cmd_rules},
    {.name = "history",
     .args = "[SESSION] [--search T] [--state S] [--kind K] [--risk R] [--limit N] [--before ID] "
             "[--json]",
     .help = "recorded actions, newest first; full-text search",
     .run = cmd_history},
    {.name = "show",
     .args = "[--json] SESSION | ACTION",
     .help = "one session or one action in full",
     .run = cmd_show},
    {.name = "exec",
     .args = "[--user agent|root] SESSION [-- CMD...]",
     .help = "a terminal in a sandbox (exit the shell to leave)",
     .run = cmd_exec},
    {.name = "files",
     .args = "[--limit N] [--json] SESSION [PATH]",
     .help = "list a directory of a session's workspace (an operator read)",
     .run = cmd_files},
    {.name = "cat",
     .args = "[--raw] [--max BYTES] [--json] SESSION PATH",
     .help = "a file of a session's workspace (an operator read)",
     .run = cmd_cat},
    {.name = "export",
     .args = "SESSION [--format json|md|cast] [--raw] [-o FILE]",
     .help = "a session's record as JSON, Markdown or an asciinema cast",
     .run = cmd_export},
    {0},
};

const struct app_command *app_command_default(void)
{
    for (const struct app_command *c = app_commands; c->name; c++)
        if (c->is_default)
            return c;
    return NULL;
}

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
        } else {
            break; /* not a global option: the default command's option table decides */
        }
    }
    /* After the options that answer and return at once (--help, --version): nothing to free. */
    app.self_exe = realpath("/proc/self/exe", NULL);
    char *warnings = NULL, *err = NULL;
    if (config_load(config, &app.config, &warnings, &err) < 0) {
        fprintf(stderr, "paddock: %s\n", err ? err : "cannot read the config file");
        free(err);
        free(app.self_exe);
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

    const struct app_command *cmd = app_command_default();
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
        i++;
    }
    /* The command's own argv: its name first (getopt's messages start with it), then what
     * follows it. */
    int sub_argc = argc - i + 1;
    char **sub_argv = calloc((size_t)sub_argc + 1, sizeof(char *));
    int rc = 1;
    if (sub_argv) {
        sub_argv[0] = (char *)cmd->name;
        memcpy(sub_argv + 1, argv + i, (size_t)(argc - i) * sizeof(char *));
        optind = 1;
        rc = cmd->run(&app, sub_argc, sub_argv);
    }
    free(sub_argv);
    free(app.self_exe);
    free(app.state_dir);
    free(app.socket);
    config_free(&app.config);
    curl_global_cleanup();
    return rc;
}
