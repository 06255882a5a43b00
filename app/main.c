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

/* One entry per command: its usage, one line for the list, then what `paddock help CMD` and
 * `paddock CMD --help` print (the same text): what it does, its options, an example. */
const struct app_command app_commands[] = {
    {.name = "dashboard",
     .args = "[--read-only] [--theme NAME] [--bell] [--mouse|--no-mouse]",
     .help = "open the dashboard (the default)",
     .about = "The full-screen dashboard: sessions, their actions, the approval queue, a terminal\n"
              "in the sandbox. `paddock` alone opens it. It starts an engine in the background\n"
              "when none answers (its log: STATE_DIR/engine.log). Press ? inside for the keys.",
     .options = "  --read-only   look, change nothing (no approvals, no operations)\n"
                "  --theme NAME  a theme: NAME.theme in ~/.config/paddock/themes or the installed\n"
                "                ones, a file path, or dark (the built-in)\n"
                "  --bell        ring when an action starts waiting for approval\n"
                "  --mouse       clicks and the wheel (--no-mouse: off, over the config file)\n",
     .example = "paddock --read-only",
     .run = cmd_dashboard,
     .is_default = true},
    {.name = "serve",
     .args = "[--socket PATH] [--state-dir DIR] [--pool N|IMAGE=N,...] [--listen HOST:PORT "
             "[--token-file FILE] [--tls-cert F --tls-key F [--tls-client-ca F]] [--insecure]] "
             "[--driver NAME]",
     .help = "run the engine in the foreground",
     .about = "The engine: the only process that talks to Docker and keeps the record. Every\n"
              "other command is its client over STATE_DIR/engine.sock. One engine per state\n"
              "dir; `paddock`, `paddock run` and `paddock new` start one in the background when\n"
              "none answers.",
     .options =
         "  --socket PATH     the API's unix socket (default STATE_DIR/engine.sock)\n"
         "  --state-dir DIR   the record and the lock (default ~/.local/state/paddock)\n"
         "  --pool N          keep N sandboxes started ahead (IMAGE=N,... per image);\n"
         "                    also $PADDOCK_POOL\n"
         "  --listen H:P      also serve the API on TCP (Authorization: Bearer <token>);\n"
         "                    also $PADDOCK_LISTEN\n"
         "  --token-file F    the token (chmod 600); also $PADDOCK_TOKEN; without one it is\n"
         "                    generated into STATE_DIR/token, on a loopback address only\n"
         "  --tls-cert F      TLS on the listener: its certificate (chain), PEM\n"
         "  --tls-key F       its key, PEM\n"
         "  --tls-client-ca F client certificates this CA signed open the API as the token\n"
         "  --insecure        allow plain HTTP beyond loopback (refused without it)\n"
         "  --driver NAME     the sandbox runtime (docker); also $PADDOCK_DRIVER\n",
     .example = "paddock serve --pool 2",
     .run = cmd_serve},
    {.name = "new",
     .args = "[--image IMG] [--name NAME] [--memory SIZE] [--cpus N] [--network MODE] "
             "[--env NAME[=VALUE]]... [--backend NAME] [--json]",
     .help = "create a session that stays; print its name and id",
     .about = "Creates a sandbox session and leaves it running (unlike run, which deletes its\n"
              "own). Work in it with exec, run --session, or the dashboard; remove it with rm.",
     .options = "  --image IMG          the sandbox's image (default: the engine's)\n"
                "  --name NAME          [A-Za-z0-9][A-Za-z0-9_.-]*; default: a generated one\n"
                "  --memory SIZE        a memory limit such as 512m or 2g (default 2g)\n"
                "  --cpus N             CPUs, such as 0.5 or 2 (default 2)\n"
                "  --network MODE       none (the default), bridge or host\n"
                "  --env NAME=VALUE     a variable for the sandbox (NAME alone: its value here);\n"
                "                       repeatable\n"
                "  --env-allow NAME     pass a credential-named variable on purpose\n"
                "  --confirm POLICY     which actions wait for the operator (never, high,\n"
                "                       medium, always)\n"
                "  --no-keep-alive      deleted when the engine stops cleanly\n"
                "  --backend NAME       docker (the default) or local: on the host under\n"
                "                       bubblewrap, when the engine's config enables [local]\n"
                "  --json               the session as JSON\n",
     .example = "paddock new --name demo --memory 1g --network bridge --env LANG=C.UTF-8",
     .run = cmd_new},
    {.name = "run",
     .args = "[--image IMG] [--session SESSION] [--timeout SECS] [--json] -- CMD...",
     .help = "run one command in a sandbox, print its output, exit with its code",
     .about = "Like `docker run --rm`: a fresh session, the command, its output, its exit code,\n"
              "and the session deleted (its record stays). With --session the command runs in\n"
              "that session, which stays. A stdin that is not a terminal (text, at most 64 KiB)\n"
              "is the command's input. Exit 125: paddock itself failed; 124: no exit code.",
     .options = "  --image IMG        the sandbox's image (default: the engine's)\n"
                "  --session SESSION  run in this session (its name, id or a unique id prefix)\n"
                "  --timeout SECS     give up after SECS (default 600)\n"
                "  --json             the whole observation as JSON\n",
     .example = "echo hello | paddock run -- tr a-z A-Z",
     .run = cmd_run},
    {.name = "ls",
     .args = "[--all] [--json]",
     .help = "list sessions",
     .about = "The sessions, newest first: id, name, state, image, actions, those waiting.",
     .options = "  --all   deleted sessions too\n"
                "  --json  the session objects as JSON\n",
     .example = "paddock ls --all",
     .run = cmd_ls},
    {.name = "show",
     .args = "[--json] SESSION | ACTION [--follow]",
     .help = "one session or one action in full; --follow: its output as it runs",
     .about = "A session (its options, environment names, ports, state history) or an action\n"
              "(its arguments, risk, decision, observation, diff). SESSION is a name, an id or a\n"
              "unique id prefix; ACTION is an action's number.",
     .options = "  --json    as JSON\n"
                "  --follow  an action's output as it is printed, until it ends; the exit code is\n"
                "            the action's\n",
     .example = "paddock show 42 --follow",
     .run = cmd_show},
    {.name = "watch",
     .args = "SESSION",
     .help = "the session's actions and their output as they happen",
     .about = "Follows a session: each action as it starts (what runs already first), its output\n"
              "as it is printed, and how it ended. Ctrl-C leaves.",
     .options = "",
     .example = "paddock watch demo",
     .run = cmd_watch},
    {.name = "exec",
     .args = "[--user agent|root] SESSION [-- CMD...]",
     .help = "a terminal in a sandbox (exit the shell to leave)",
     .about = "A login shell (or CMD) in the session's sandbox. Every key, Ctrl-C included, goes\n"
              "to the sandbox; leave by ending the shell (exit or Ctrl-D). The exit code is the\n"
              "command's. A paused session is refused with how to resume it.",
     .options = "  --user agent|root  who runs it (default agent)\n",
     .example = "paddock exec demo -- sh -c 'echo x; exit 5'",
     .run = cmd_exec},
    {.name = "pause",
     .args = "[--json] SESSION...",
     .help = "freeze sessions (docker pause)",
     .about = "Freezes the sessions' processes (a cgroup freeze: nothing is lost). resume thaws.",
     .options = "  --json  the sessions as JSON\n",
     .example = "paddock pause demo",
     .run = cmd_pause},
    {.name = "resume",
     .args = "[--json] SESSION...",
     .help = "unfreeze or restart sessions",
     .about = "Thaws paused sessions; starts stopped (or oom-killed) ones again (a restart: the\n"
              "shell's variables and working directory are not kept).",
     .options = "  --json  the sessions as JSON\n",
     .example = "paddock resume demo",
     .run = cmd_resume},
    {.name = "stop",
     .args = "[--json] SESSION...",
     .help = "stop sessions' containers (they stay)",
     .about = "Stops the sessions' containers; their workspace stays and resume starts them again.",
     .options = "  --json  the sessions as JSON\n",
     .example = "paddock stop demo",
     .run = cmd_stop},
    {.name = "rm",
     .args = "[--json] SESSION...",
     .help = "delete sessions (their history stays)",
     .about = "Removes the sessions' containers and volumes; the record of what they did stays\n"
              "(ls --all, history, export).",
     .options = "  --json  the sessions as JSON\n",
     .example = "paddock rm demo",
     .run = cmd_rm},
    {.name = "limit",
     .args = "[--json] SESSION --disk SIZE",
     .help = "raise or lower a session's disk limit",
     .about = "Sets the session's disk limit. A session the disk watchdog paused at its limit\n"
              "stays paused: `paddock resume` it afterwards.",
     .options = "  --disk SIZE  the limit: \"20g\", \"512m\" or bytes\n"
                "  --json       the session as JSON\n",
     .example = "paddock limit demo --disk 20g && paddock resume demo",
     .run = cmd_limit},
    {.name = "approvals",
     .args = "[--json] [SESSION]",
     .help = "actions waiting for the operator",
     .about = "The approval queue, oldest first: each action with its session, risk and why.\n"
              "Decide with approve or reject.",
     .options = "  --json  as JSON\n",
     .example = "paddock approvals demo",
     .run = cmd_approvals},
    {.name = "approve",
     .args = "ACTION [--reason T] [--by N] [--remember | --pattern GLOB] [--json]",
     .help = "let a waiting action run",
     .about = "Lets a waiting action run. --remember allows the same command in this session\n"
              "from now on; --pattern allows every command the glob matches.",
     .options = "  --reason TEXT   recorded with the decision\n"
                "  --by NAME       who decided (default: your user name)\n"
                "  --remember      allow this exact command from now on (this session)\n"
                "  --pattern GLOB  allow commands matching GLOB from now on (this session)\n"
                "  --json          the decided action as JSON\n",
     .example = "paddock approve 42 --reason 'checked the URL'",
     .run = cmd_approve},
    {.name = "reject",
     .args = "ACTION [--reason T] [--by N] [--json]",
     .help = "refuse a waiting action",
     .about = "Refuses a waiting action; the agent gets a rejection with the reason.",
     .options = "  --reason TEXT  told to the agent and recorded\n"
                "  --by NAME      who decided (default: your user name)\n"
                "  --json         the decided action as JSON\n",
     .example = "paddock reject 42 --reason 'no network installs'",
     .run = cmd_reject},
    {.name = "risk",
     .args = "[--session SESSION] [--json] -- CMD...",
     .help = "the risk of a command and the rule that would decide it; nothing runs",
     .about = "Classifies a command as the engine would (risk, reason) and names the rule that\n"
              "would decide it, with a session's rules when --session is given. Nothing runs.",
     .options = "  --session SESSION  with this session's rules and policy\n"
                "  --json             as JSON\n",
     .example = "paddock risk -- curl http://example.com | sh",
     .run = cmd_risk},
    {.name = "verify",
     .args = "[SESSION] [--json] | --export FILE",
     .help = "check the tamper-evident record; names the first entry that does not match",
     .about = "Walks the hash chain of the record (one session's, or all of it) or of an\n"
              "exported JSON file; exit 1 naming the first entry that does not match.",
     .options = "  --export FILE  check an exported record instead of the engine's\n"
                "  --json         the result as JSON\n",
     .example = "paddock verify demo",
     .run = cmd_verify},
    {.name = "rules",
     .args = "[list|add|edit|rm] [--session S] [PATTERN|ID]",
     .help = "the operator's rules: what runs without waiting",
     .about =
         "  paddock rules [list] [--session SESSION] [--json]\n"
         "  paddock rules add [--session SESSION] [--deny] [--kind KIND] [--by NAME] PATTERN\n"
         "  paddock rules edit ID [--pattern PATTERN] [--allow | --deny] [--kind KIND|any]\n"
         "  paddock rules rm ID [--by NAME]\n"
         "PATTERN is a shell glob over the command (or path); an allow rule's wildcards never\n"
         "match ; & | < > ( ) $ ` \\ or a line break, so \"ls *\" never allows\n"
         "\"ls; rm -rf /\". A rule never approves an action rated above the engine's\n"
         "ceiling (shown by list).",
     .options = "  --session SESSION  list: the rules that apply to it; add: a rule for its rest\n"
                "                     (without: every rule; add: an engine-wide rule)\n"
                "  --deny             a rule that rejects (add, edit)\n"
                "  --allow            a rule that approves (edit)\n"
                "  --kind KIND        only actions of this kind (any: all)\n"
                "  --pattern PATTERN  the new pattern (edit)\n"
                "  --by NAME          who made the change (recorded)\n"
                "  --json             as JSON\n",
     .example = "paddock rules add --session demo 'pytest *'",
     .run = cmd_rules},
    {.name = "history",
     .args = "[SESSION] [--search T] [--state S] [--kind K] [--risk R] [--limit N] [--before ID] "
             "[--json]",
     .help = "recorded actions, newest first; full-text search",
     .about = "The recorded actions of every session (or one), newest first. --search finds words\n"
              "in commands and their output.",
     .options = "  --search TEXT  full-text search of commands and output\n"
                "  --state S      only actions in state S (pending, running, done, failed,\n"
                "                 rejected, interrupted, skipped)\n"
                "  --kind K       only actions of kind K (run, read, write, edit, ...)\n"
                "  --risk R       only actions of risk R (low, medium, high)\n"
                "  --limit N      at most N (default 50)\n"
                "  --before ID    the page before action ID (what `more:` prints)\n"
                "  --json         as JSON\n",
     .example = "paddock history demo --search curl --state done",
     .run = cmd_history},
    {.name = "files",
     .args = "[--limit N] [--json] SESSION [PATH]",
     .help = "list a directory of a session's workspace (an operator read)",
     .about = "The workspace's directory PATH (default: the workspace itself), one entry a line.\n"
              "The read is recorded as the operator's, never in the agent's actions.",
     .options = "  --limit N  at most N entries\n"
                "  --json     as JSON\n",
     .example = "paddock files demo src",
     .run = cmd_files},
    {.name = "cat",
     .args = "[--raw] [--max BYTES] [--json] SESSION PATH",
     .help = "a file of a session's workspace (an operator read)",
     .about = "The file's bytes: sanitized on a terminal, unchanged into a pipe or a file; a\n"
              "binary file is described unless --raw. Recorded as the operator's read.",
     .options = "  --raw        a binary file's bytes too\n"
                "  --max BYTES  read at most BYTES\n"
                "  --json       as JSON\n",
     .example = "paddock cat demo src/main.py | less",
     .run = cmd_cat},
    {.name = "egress",
     .args = "[--json] SESSION",
     .help = "a session's connections through its egress proxy, and totals per host",
     .about = "The connections of a session with \"network\": \"egress\" through its proxy,\n"
              "newest first: method, destination, decision and the rule or person behind it,\n"
              "bytes each way, how it ended; then the totals per host (docs/egress.md).",
     .options = "  --json  as JSON\n",
     .example = "paddock egress demo",
     .run = cmd_egress},
    {.name = "export",
     .args = "SESSION [--format json|md|cast] [--raw] [-o FILE]",
     .help = "a session's record as JSON, Markdown or an asciinema cast",
     .about = "json: the session, its events, every action with its observation, the log;\n"
              "md: a Markdown report; cast: an asciinema v2 recording of its commands.\n"
              "A missing directory in FILE's path is created.",
     .options = "  --format F   json (the default), md or cast\n"
                "  -o FILE      write to FILE (default: stdout)\n"
                "  --raw        the cast keeps the output's bytes, escape sequences included (by\n"
                "               default titles, clipboard writes and modes beyond the screen are\n"
                "               dropped: a played cast writes to your terminal)\n",
     .example = "paddock export demo --format md -o reports/demo.md",
     .run = cmd_export},
    {.name = "gc",
     .args = "[--dry-run] [--json]",
     .help = "remove containers, volumes, socket dirs of no live session",
     .about = "Removes the containers and volumes labelled with this engine's id that belong to\n"
              "no live session, and socket directories of no live session.",
     .options = "  --dry-run  say what would go, remove nothing\n"
                "  --json     as JSON\n",
     .example = "paddock gc --dry-run",
     .run = cmd_gc},
    {.name = "build",
     .args = "[--image IMG] [--setup CMD]... [--extra-deps CMD] [--platform OS/ARCH] [--rebuild] "
             "[--quiet] [--json]",
     .help = "make a runtime image (setup steps, executor baked in); print its tags",
     .about = "Makes the runtime image of IMG with the setup commands run in it (as root,\n"
              "/bin/sh -c) and the executor baked in, or finds it made already (POST\n"
              "/v1/images). The progress goes to stderr, the three tags to stdout (source: the\n"
              "image to run). A platform the Docker daemon cannot run is refused before\n"
              "anything is built.",
     .options = "  --image IMG       the base (default: the engine's image)\n"
                "  --setup CMD       a setup command; repeatable, run in order\n"
                "  --extra-deps CMD  OpenHands' runtime_extra_deps: one more command after them\n"
                "  --platform P      os/arch[/variant], such as linux/arm64 (default: the\n"
                "                    daemon's own)\n"
                "  --rebuild         build again without Docker's cache\n"
                "  --quiet           no progress\n"
                "  --json            the finished build as JSON\n",
     .example = "paddock build --setup 'apt-get install -y jq' --platform linux/amd64",
     .run = cmd_build},
    {.name = "images",
     .args = "[--json] | rm TAG...",
     .help = "list or remove runtime images",
     .about = "The runtime images the engine built (GET /v1/images): their tags, base, size and\n"
              "age; `images rm` removes some (DELETE /v1/images/TAG), refused while a session's\n"
              "container uses one.",
     .options = "  --json  as JSON\n",
     .example = "paddock images rm paddock/runtime:pd_v0.1.0_4k2j9x0a1b2c3d4e",
     .run = cmd_images},
    {.name = "help",
     .args = "[COMMAND]",
     .help = "the commands, or one command's usage, options and an example",
     .about = "Without a command: every command in one line each. With one: what it does, its\n"
              "options and an example (the same as `paddock COMMAND --help`).",
     .options = "",
     .example = "paddock help run",
     .run = cmd_help},
    {.name = "version",
     .args = "",
     .help = "the version of paddock",
     .about = "Prints paddock's version (the same as `paddock --version`).",
     .options = "",
     .example = "paddock version",
     .run = cmd_version},
    {0},
};

const struct app_command *app_command_default(void)
{
    for (const struct app_command *c = app_commands; c->name; c++)
        if (c->is_default)
            return c;
    return NULL;
}

const struct app_command *app_command_find(const char *name)
{
    for (const struct app_command *c = app_commands; name && c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

void app_command_help(FILE *f, const char *name)
{
    const struct app_command *c = app_command_find(name);
    if (!c)
        return;
    fprintf(f, "usage: paddock %s%s%s\n\n  %s\n\n%s\n", c->name, c->args[0] ? " " : "", c->args,
            c->help, c->about);
    if (c->options[0])
        fprintf(f, "\noptions:\n%s", c->options);
    fprintf(f, "\nexample:\n  %s\n", c->example);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: paddock [--socket PATH] [--operator-socket PATH] [--state-dir DIR] [--config "
            "FILE]\n               [--engine NAME] [COMMAND [ARGS]]\n\n"
            "commands:\n");
    for (const struct app_command *c = app_commands; c->name; c++)
        fprintf(f, "  %-10s %s\n", c->name, c->help);
    fprintf(f, "\n`paddock help COMMAND` (or `paddock COMMAND --help`): its options and an "
               "example.\n"
               "sessions are named by their name, their id or a unique id prefix;\n"
               "SESSION@ENGINE (or --engine NAME) names one on an engine of the config file.\n"
               "--socket is the agents' API socket (serve listens there); commands talk on the\n"
               "operator's socket, <state>/operator.sock (docs/security.md).\n"
               "environment: PADDOCK_STATE_DIR, PADDOCK_SOCKET, PADDOCK_OPERATOR_SOCKET, "
               "PADDOCK_IMAGE, PADDOCK_CONFIG, "
               "PADDOCK_EXECUTOR, DOCKER_HOST\n"
               "config file: $XDG_CONFIG_HOME/paddock/config.toml (see man paddock)\n");
}

int cmd_help(struct app *app, int argc, char **argv)
{
    (void)app;
    if (argc > 1 && strcmp(argv[1], "--help") != 0 && strcmp(argv[1], "-h") != 0) {
        if (!app_command_find(argv[1])) {
            fprintf(stderr, "paddock help: no command '%s'; the commands:\n", argv[1]);
            usage(stderr);
            return 2;
        }
        app_command_help(stdout, argv[1]);
        return 0;
    }
    if (argc > 1) {
        app_command_help(stdout, "help");
        return 0;
    }
    usage(stdout);
    return 0;
}

int cmd_version(struct app *app, int argc, char **argv)
{
    (void)app;
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        app_command_help(stdout, "version");
        return 0;
    }
    printf("paddock %s\n", PADDOCK_VERSION);
    return 0;
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

/* The engine the command talks to: --engine (before or after the command's name) and
 * SESSION@ENGINE; auto, for run and new, picks one. 0, or 2 after printing why. */
static int main_engine(struct app *app, const struct app_command *cmd, const char *engine,
                       int *argc, char **argv)
{
    if (strcmp(cmd->name, "serve") == 0 || strcmp(cmd->name, "help") == 0 ||
        strcmp(cmd->name, "version") == 0)
        return 0;
    if (engine && app_engine_select(app, engine) < 0)
        return 2;
    if (app_engine_args(app, argc, argv) < 0)
        return 2;
    if (!app->engine || strcmp(app->engine, APP_ENGINE_AUTO) != 0)
        return 0;
    if (strcmp(cmd->name, "run") != 0 && strcmp(cmd->name, "new") != 0) {
        fprintf(stderr,
                "paddock %s: --engine auto is for run and new (where a session is "
                "made); name an engine\n",
                cmd->name);
        return 2;
    }
    const char *picked = NULL;
    if (app_engine_pick(app, &picked) < 0)
        return 2;
    app->engine = picked;
    return 0;
}

int main(int argc, char **argv)
{
    setlocale(LC_ALL, "");
    curl_global_init(CURL_GLOBAL_DEFAULT);
    struct app app = {.argv0 = argv[0]};
    const char *state = NULL, *sock = NULL, *opsock = NULL, *config = NULL, *engine = NULL;

    /* Global options come before the command name. */
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--state-dir") == 0 && i + 1 < argc) {
            state = argv[++i];
        } else if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc) {
            sock = argv[++i];
        } else if (strcmp(argv[i], "--operator-socket") == 0 && i + 1 < argc) {
            opsock = argv[++i];
        } else if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
            config = argv[++i];
        } else if (strcmp(argv[i], "--engine") == 0 && i + 1 < argc) {
            engine = argv[++i];
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
    /* Commands talk on the operator's channel; --socket names the agents' socket, which
     * `serve` (and an engine started on demand) listens on (docs/security.md). */
    app.agent_socket = sock ? strdup(sock) : client_default_socket(app.state_dir);
    app.agent_socket_given = sock || (env_sock && *env_sock);
    const char *env_opsock = getenv("PADDOCK_OPERATOR_SOCKET");
    if (!opsock && env_opsock && *env_opsock)
        opsock = env_opsock;
    app.socket = opsock ? strdup(opsock) : client_operator_socket(app.state_dir);

    const struct app_command *cmd = app_command_default();
    if (i < argc && (strcmp(argv[i], "__commands") == 0 || strcmp(argv[i], "__keys") == 0)) {
        /* for shell completion and the man page test: the command names, one a line; or
         * the dashboard's keys from their tables (scripts/man-keys.sh writes them in) */
        if (strcmp(argv[i], "__keys") == 0)
            ui_keys_print(stdout);
        for (const struct app_command *c = app_commands; c->name && argv[i][2] == 'c'; c++)
            printf("%s\n", c->name);
        config_free(&app.config);
        free(app.self_exe);
        free(app.state_dir);
        free(app.socket);
        free(app.agent_socket);
        curl_global_cleanup();
        return 0;
    }
    if (i < argc && argv[i][0] != '-') {
        cmd = NULL;
        for (const struct app_command *c = app_commands; c->name; c++)
            if (strcmp(c->name, argv[i]) == 0)
                cmd = c;
        if (!cmd) {
            fprintf(stderr, "paddock: unknown command '%s'; `paddock help` lists the commands\n",
                    argv[i]);
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
        rc = main_engine(&app, cmd, engine, &sub_argc, sub_argv);
        if (rc == 0)
            rc = cmd->run(&app, sub_argc, sub_argv);
    }
    free(sub_argv);
    free(app.self_exe);
    free(app.state_dir);
    free(app.socket);
    free(app.agent_socket);
    config_free(&app.config);
    curl_global_cleanup();
    return rc;
}
