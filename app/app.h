/* The paddock command: subcommands share these. */
#ifndef PADDOCK_APP_H
#define PADDOCK_APP_H

#include "app/config.h"
#include "ui/ui.h"

#include <stdbool.h>
#include <stdio.h>

struct app {
    const char *argv0;
    char *self_exe;          /* absolute path of this binary */
    char *state_dir;         /* resolved state dir */
    char *socket;            /* the operator's socket, <state>/operator.sock: what commands use */
    char *agent_socket;      /* the agents' API socket (--socket): what `serve` listens on */
    bool agent_socket_given; /* by --socket, PADDOCK_SOCKET or the config, not the default */
    struct config config;    /* the config file (empty when there is none) */
    /* The engine the command talks to (--engine NAME, SESSION@ENGINE): NULL when none was
     * named (the local one, and every engine for ls, approvals and history). Borrowed from
     * argv or the config. */
    const char *engine;
};

struct app_command {
    const char *name;
    const char *args;    /* the usage line after the name */
    const char *help;    /* one line for `paddock --help` */
    const char *about;   /* what it does, for `paddock help NAME` (lines of at most 80) */
    const char *options; /* "  --flag  what it does\n" lines ("" when none) */
    const char *example; /* one command line */
    /* argv[0] is the command's name; getopt_long parses the rest from optind = 1. */
    int (*run)(struct app *app, int argc, char **argv);
    bool is_default; /* what `paddock` runs without a command (one entry) */
};

/* The table in main.c, ended by an entry without a name. */
extern const struct app_command app_commands[];
/* The entry marked is_default. */
const struct app_command *app_command_default(void);
/* The entry called name, or NULL. */
const struct app_command *app_command_find(const char *name);
/* `paddock help NAME`, also what `paddock NAME --help` prints: usage, what it does, options,
 * an example. Nothing for an unknown name. */
void app_command_help(FILE *f, const char *name);

/* ---- the engines (app/engines.c) ---- */
#define APP_ENGINE_LOCAL "local" /* the engine on the unix socket */
#define APP_ENGINE_AUTO "auto"   /* run/new: the one with the most free capacity */
struct client;
/* "local", then the config file's engines in its order. */
size_t app_engine_count(const struct app *app);
const char *app_engine_name(const struct app *app, size_t i);
/* "local" or a config file's engine. */
bool app_engine_known(const struct app *app, const char *name);
/* Its socket path or url, for messages (the local one's for an unknown name). */
const char *app_engine_where(const struct app *app, const char *name);
/* A client of engine name (NULL: local): its token read from its token_file. NULL with *err
 * (malloc'd): no such engine, an unreadable token file. */
struct client *app_client_of(struct app *app, const char *name, char **err);
/* The same for app->engine; NULL after printing why. */
struct client *app_client_new(struct app *app);
/* Set app->engine (auto too); -1 after printing why: unknown, or another one named already. */
int app_engine_select(struct app *app, const char *name);
/* Take --engine NAME, --engine=NAME and the @ENGINE of SESSION@ENGINE (a known engine only)
 * off a command's argv, before any "--"; argv[0] stays. 0, or -1 after printing why. */
int app_engine_args(struct app *app, int *argc, char **argv);
/* No engine was named and the config has remote ones: lists cover every engine. */
bool app_engines_all(const struct app *app);
/* The engine with the most free capacity (GET /v1/info's capacity: free memory, CPUs per
 * session); engines that do not answer are skipped with a line on stderr. 0 with *name (a
 * static copy of the config's), or -1 after printing that none answers. */
int app_engine_pick(struct app *app, const char **name);

/* Path of paddock-executor for the engine to mount, or NULL when none is found. */
char *app_find_executor(const struct app *app);

int cmd_serve(struct app *app, int argc, char **argv);
int cmd_run(struct app *app, int argc, char **argv);
int cmd_ls(struct app *app, int argc, char **argv);
int cmd_dashboard(struct app *app, int argc, char **argv);
int cmd_gc(struct app *app, int argc, char **argv);
int cmd_build(struct app *app, int argc, char **argv);
int cmd_images(struct app *app, int argc, char **argv);
int cmd_pause(struct app *app, int argc, char **argv);
int cmd_resume(struct app *app, int argc, char **argv);
int cmd_stop(struct app *app, int argc, char **argv);
int cmd_rm(struct app *app, int argc, char **argv);
int cmd_limit(struct app *app, int argc, char **argv);
int cmd_approvals(struct app *app, int argc, char **argv);
int cmd_approve(struct app *app, int argc, char **argv);
int cmd_reject(struct app *app, int argc, char **argv);
int cmd_history(struct app *app, int argc, char **argv);
int cmd_risk(struct app *app, int argc, char **argv);
int cmd_verify(struct app *app, int argc, char **argv);
int cmd_rules(struct app *app, int argc, char **argv);
int cmd_show(struct app *app, int argc, char **argv);
int cmd_export(struct app *app, int argc, char **argv);
int cmd_exec(struct app *app, int argc, char **argv);
int cmd_watch(struct app *app, int argc, char **argv);
/* paddock show ACTION --follow (cmd_watch.c): the action's output until it ends; its exit
 * code (0 without one), or 1 after printing why it could not follow. */
int watch_action_follow(struct app *app, long long id);
int cmd_new(struct app *app, int argc, char **argv);
int cmd_help(struct app *app, int argc, char **argv);
int cmd_version(struct app *app, int argc, char **argv);
int cmd_files(struct app *app, int argc, char **argv);
int cmd_cat(struct app *app, int argc, char **argv);
int cmd_egress(struct app *app, int argc, char **argv);

/* The dashboard's export (struct ui_options.export_session): session id's record into dir
 * as NAME.json, NAME.md and NAME.cast (NAME: the session's name when plain, else its id;
 * each written as NAME.EXT.part and renamed when whole). ctx is the struct app, engine the
 * session's engine's name (NULL: the app's);
 * progress (may be NULL) hears (done, total) actions fetched. 0 with *msg saying where, or
 * -1 with *msg saying why. */
int app_export_session(void *ctx, const char *engine, const char *id, const char *dir,
                       ui_progress_fn progress, void *progress_ctx, char **msg);

#endif
