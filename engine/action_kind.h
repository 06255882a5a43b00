/* The kinds of action the engine records: one table (action_kind.c) that the action path,
 * the risk classifier, the file changes and the store's queries read. Adding a kind is one row
 * there plus its own functions (its classifier in engine/risk/risk.c, its handler in the
 * executor's table, executor/action.c). The lower layer (engine/risk, engine/store) picks no
 * kind by its name: it is given the kind's classifier or the list of names from here. */
#ifndef PADDOCK_ACTION_KIND_H
#define PADDOCK_ACTION_KIND_H

#include "engine/risk/risk.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* What a successful action did to the file it names (engine/changes.c). */
enum action_file_change {
    ACTION_FILE_NONE,    /* nothing (an editor's view) */
    ACTION_FILE_CHANGED, /* written: made or replaced, the record does not say which */
    ACTION_FILE_ADDED,   /* made */
};

struct action_kind {
    const char *name; /* as in the API, the store and OpenHands: "run" */
    /* The args key whose text summarises it (history, the operator's rules, the approval
     * prompt); NULL: "path", else the kind's name. Transfers (files.c) pass their path. */
    const char *summary_arg;
    /* Its risk classifier; NULL for the transfers, which files.c records without a level. */
    risk_kind_fn *classify;
    /* Writes files: what it did to the one it names, given its args.command (NULL: none);
     * NULL when it never writes one. */
    enum action_file_change (*file_change)(const char *command);
    /* The file's path is the observation's "path" (an upload names the file it wrote there),
     * not args.path. */
    bool path_in_observation;
    /* Its observation does not say what it changed: the executor is asked for a diff, which
     * the engine records beside it (?paddock_diff=1, docs/protocol.md). */
    bool ask_diff;
    /* Runs code (a shell, a Python cell): what it does to files is not recorded, so the
     * changes call it opaque. */
    bool shell_like;
    /* Its output is worth watching while it runs: the executor is asked to stream it
     * (?paddock_stream=1), and the engine passes it on (engine/output.c). */
    bool streams;
    /* Through the executor's file endpoints (engine/files.c), not execute_action. */
    bool transfer;
    /* Done by the engine itself (a terminal, a create), never through execute_action: its
     * approval waits for the request that asked (action_ask), which a restart ends. */
    bool engine_side;
};

/* The largest number of kinds (for lists of names). */
#define ACTION_KIND_MAX 16

/* The kind called name, or NULL (an unknown or missing kind). */
const struct action_kind *action_kind_find(const char *name);
/* The i-th row, or NULL past the last (to walk the table). */
const struct action_kind *action_kind_at(size_t i);
/* The names of the kinds that keep(row) says (keep NULL: all), NULL-terminated, into out. */
void action_kind_names(bool (*keep)(const struct action_kind *k),
                       const char *out[ACTION_KIND_MAX + 1]);
bool action_kind_writes_files(const struct action_kind *k);
bool action_kind_is_shell_like(const struct action_kind *k);

/* The action's summary: its kind's summary_arg's text, else its kind's name (borrowed from
 * args or the kind). */
const char *action_kind_summary(const char *kind, const json_t *args);
/* risk_classify_action with the action's kind's classifier. */
void action_kind_classify(const json_t *action, const char *workspace, const char *cwd,
                          struct risk_result *out);

#endif
