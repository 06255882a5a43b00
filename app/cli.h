/* What the subcommands share: one request with its error printed, sanitized text, times. */
#ifndef PADDOCK_CLI_H
#define PADDOCK_CLI_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct app;
struct client;

/* One request to the engine. The reply (owned by the caller) when the status is want (0: any
 * 2xx); otherwise prints "paddock CMD: <the engine's message>" and returns NULL. */
json_t *cli_call(struct app *app, const char *cmd, const char *method, const char *path,
                 json_t *body, int want);
/* The engines a list covers: every engine ("local" first) when none was named
 * (app_engines_all), else the named one (or "local"). Into names (static copies, at most max);
 * returns how many. */
size_t cli_engines(struct app *app, const char **names, size_t max);
/* GET path on app->engine for a list over several engines: the reply (the caller's) when 200;
 * else NULL after printing "paddock CMD: engine NAME is down: why" (or its refusal), which the
 * caller takes as one engine missing from the list, not as a failure of the command. */
json_t *cli_call_listed(struct app *app, const char *cmd, const char *path);
/* Add "engine": name to each object of array list. */
void cli_tag_engine(json_t *list, const char *name);
/* A string from a container or an agent, made safe for the terminal (one line, or
 * multiline). Returns buf. */
const char *cli_safe(const char *s, char *buf, size_t size);
/* The same, written to f with newlines kept (observations, logs); the bytes are not bounded
 * by a buffer. */
void cli_write_safe(FILE *f, const char *s, size_t len);
/* Local time "YYYY-MM-DD HH:MM:SS", or "-" for 0 and for what is no such time (negative, past
 * year 9999). */
const char *cli_time(double t, char *buf, size_t size);
/* A JSON document, indented, and a newline. */
void cli_print_json(json_t *j);
/* flags for json_dump* to stdout: with JSON_ENSURE_ASCII when stdout is a terminal. */
size_t cli_json_flags(size_t flags);
/* The session a reference names: its full id, a unique id prefix, or its name (the newest
 * live session of that name, else a past one); the engine resolves it (GET
 * /v1/sessions/REF). The session object (the caller's), or NULL after printing why (none, an
 * ambiguous prefix with its candidates, no engine). */
json_t *cli_session_get(struct app *app, const char *cmd, const char *ref);
/* Every session's name by its id ({id: name}, deleted ones too; the caller's; empty when the
 * engine does not answer, NULL without memory): lists print names where a session has one. */
json_t *cli_session_names(struct app *app);
/* Sort a list merged from several engines by each item's "created_at": newest first, or
 * oldest first. */
void cli_sort_by_time(json_t *list, bool newest_first);
/* The name of session id in names, else the id, made safe; returns buf. */
const char *cli_session_label(json_t *names, const char *id, char *buf, size_t size);
/* The same, its id into out; false after printing why. */
bool cli_session_id(struct app *app, const char *cmd, const char *ref, char *out, size_t size);
/* "paddock CMD: " and why no engine answers (which engine holds the state dir, or that none
 * runs) and what to do. */
void cli_say_no_engine(struct app *app, const char *cmd);
/* "paddock CMD: " and an engine error reply for a person: a paused or stopped session
 * (session_id, recognised by the error's code) is told with the command that resumes it,
 * anything else with the engine's message (fallback when it has none). */
void cli_say_error(struct app *app, const char *cmd, json_t *reply, const char *session_id,
                   const char *fallback);
/* The same from an error's code and message (a refused terminal). */
void cli_say_refusal(struct app *app, const char *cmd, const char *code, const char *message,
                     const char *session_id);
/* argv as one shell command line, each argument quoted for sh where it needs it (a single
 * argument is taken as a command line already); malloc'd, NULL without memory. */
char *cli_join_argv(int argc, char **argv);
/* Append "&key=value" (value URL-encoded; "?" first) to a path buffer. */
void cli_query_add(char *path, size_t size, const char *key, const char *value);
/* argv[optind] as an action id (> 0), or 0 after printing why. */
long long cli_action_id(const char *cmd, const char *arg);
/* Options of a command that takes only --json and --help: -1 to go on (optind at the first
 * operand), else the exit code (0 after printing its help, 2 after getopt's complaint). */
int cli_parse_json_only(int argc, char **argv, bool *as_json);

#endif
