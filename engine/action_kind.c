/* The table of action kinds: the executor's execute_action kinds (executor/action.c's
 * action_types[], checked by tests/unit/test_action_kind.c) and the transfers that files.c
 * records. */
#include "engine/action_kind.h"

#include <string.h>

/* A write or an upload replaces or makes the file: the record does not say which. */
static enum action_file_change action_kind_file_written(const char *command)
{
    (void)command;
    return ACTION_FILE_CHANGED;
}

/* The editor's view reads; its create makes the file; the others change it. */
static enum action_file_change action_kind_file_edited(const char *command)
{
    if (command && strcmp(command, "view") == 0)
        return ACTION_FILE_NONE;
    if (command && strcmp(command, "create") == 0)
        return ACTION_FILE_ADDED;
    return ACTION_FILE_CHANGED;
}

static const struct action_kind action_kinds[] = {
    {.name = "run",
     .summary_arg = "command",
     .classify = risk_classify_run,
     .shell_like = true,
     .streams = true},
    {.name = "run_ipython",
     .summary_arg = "code",
     .classify = risk_classify_ipython,
     .shell_like = true,
     .streams = true},
    {.name = "read", .summary_arg = "path", .classify = risk_classify_read},
    {.name = "write",
     .summary_arg = "path",
     .classify = risk_classify_write,
     .file_change = action_kind_file_written,
     .ask_diff = true},
    {.name = "edit",
     .summary_arg = "path",
     .classify = risk_classify_edit,
     .file_change = action_kind_file_edited},
    {.name = "browse", .summary_arg = "url", .classify = risk_classify_browse},
    {.name = "browse_interactive", .classify = risk_classify_browse},
    {.name = "upload",
     .file_change = action_kind_file_written,
     .path_in_observation = true,
     .transfer = true},
    {.name = "download", .transfer = true},
    {.name = "list_files", .transfer = true},
    /* What a client asked of the engine itself (docs/security.md): a terminal into the sandbox
     * (its transcript is the observation), a session with weaker isolation. */
    {.name = "terminal", .summary_arg = "command", .shell_like = true, .engine_side = true},
    {.name = "create", .summary_arg = "asks", .engine_side = true},
    /* A connection to a network destination nobody decided yet (egress.c, docs/egress.md). */
    {.name = "egress", .summary_arg = "destination", .engine_side = true},
};

_Static_assert(sizeof action_kinds / sizeof action_kinds[0] <= ACTION_KIND_MAX,
               "ACTION_KIND_MAX is too small for the table");

const struct action_kind *action_kind_at(size_t i)
{
    return i < sizeof action_kinds / sizeof action_kinds[0] ? &action_kinds[i] : NULL;
}

const struct action_kind *action_kind_find(const char *name)
{
    const struct action_kind *k;
    for (size_t i = 0; name && (k = action_kind_at(i)); i++)
        if (strcmp(k->name, name) == 0)
            return k;
    return NULL;
}

void action_kind_names(bool (*keep)(const struct action_kind *k),
                       const char *out[ACTION_KIND_MAX + 1])
{
    size_t n = 0;
    const struct action_kind *k;
    for (size_t i = 0; (k = action_kind_at(i)); i++)
        if (!keep || keep(k))
            out[n++] = k->name;
    out[n] = NULL;
}

bool action_kind_writes_files(const struct action_kind *k)
{
    return k->file_change != NULL;
}

bool action_kind_is_shell_like(const struct action_kind *k)
{
    return k->shell_like;
}

const char *action_kind_summary(const char *kind, const json_t *args)
{
    const struct action_kind *k = action_kind_find(kind);
    const char *v =
        json_string_value(json_object_get(args, k && k->summary_arg ? k->summary_arg : "path"));
    return v ? v : kind;
}

void action_kind_classify(const json_t *action, const char *workspace, const char *cwd,
                          struct risk_result *out)
{
    const struct action_kind *k =
        action_kind_find(json_string_value(json_object_get(action, "action")));
    risk_classify_action(action, k ? k->classify : NULL, workspace, cwd, out);
}
