/* The risk classifier: every action gets LOW, MEDIUM or HIGH and a reason a person can read.
 * Pure: no I/O. docs/risk.md has the levels, the pipeline and the rules. */
#ifndef PADDOCK_RISK_H
#define PADDOCK_RISK_H

#include <jansson.h>

enum risk_level { RISK_LOW = 0, RISK_MEDIUM = 1, RISK_HIGH = 2 };

struct risk_result {
    enum risk_level level;
    char reason[200]; /* "deletes recursively outside the workspace (/home/x)" */
    int declared;     /* the agent's declared level, -1 when none or unknown */
};

/* The classification under way (risk.c's). */
struct rk;
/* One kind of action's classifier: raises k for what the action's args do. The engine's table
 * of action kinds (engine/action_kind.c) names each kind's; they are below. */
typedef void risk_kind_fn(struct rk *k, const json_t *args);

/* An OpenHands action {"action": "run", "args": {...}}, by its kind's classifier (NULL: a kind
 * the engine does not know, MEDIUM). workspace: the sandbox's workspace root; cwd: the shell's
 * directory when known, else NULL (relative paths are taken as in the workspace; ".." that
 * leaves it is outside). The agent's args.security_risk (-1..2, or "LOW".."HIGH") raises the
 * level, never lowers it. Never fails. */
void risk_classify_action(const json_t *action, risk_kind_fn *classify, const char *workspace,
                          const char *cwd, struct risk_result *out);
/* The kinds' classifiers: args.command as a shell command line; args.code as an IPython
 * cell (its shell lines, then Python); args.path read; args.path written with args.content;
 * the editor (view reads, the others write file_text or new_str); a web page (file:// reads). */
risk_kind_fn risk_classify_run;
risk_kind_fn risk_classify_ipython;
risk_kind_fn risk_classify_read;
risk_kind_fn risk_classify_write;
risk_kind_fn risk_classify_edit;
risk_kind_fn risk_classify_browse;
/* A shell command line alone. */
void risk_classify_command(const char *cmd, const char *workspace, const char *cwd,
                           struct risk_result *out);
const char *risk_level_name(enum risk_level l); /* "low", "medium", "high" */
int risk_level_parse(const char *s);            /* any case; -1 when not a level */

#endif
