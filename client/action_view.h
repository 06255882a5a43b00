/* How each kind of action is shown to the operator (client/action_detail.c, the transcript of
 * ui/agentlog.c) and exported (app/cmd_export.c's asciinema cast). The engine's API names a kind by
 * its text only, and client/ does not include engine/ (tests/lint/layers_check.sh): its table of
 * kinds (engine/action_kind.c) is the engine's, this one is the operator's side. Adding a kind is
 * one row here when it is shown other than by its args; an unknown kind is shown by them. */
#ifndef PADDOCK_CLIENT_ACTION_VIEW_H
#define PADDOCK_CLIENT_ACTION_VIEW_H

#include <jansson.h>
#include <stdbool.h>

/* What the action view prints after the summary line. */
enum action_view_args {
    ACTION_VIEW_ARGS_JSON,    /* its args as indented JSON */
    ACTION_VIEW_ARGS_NONE,    /* nothing: the summary is the whole action (a command) */
    ACTION_VIEW_ARGS_CONTENT, /* args.content as the text written (else the JSON) */
};

struct action_view {
    const char *name; /* the kind, as the API says it: "run" */
    enum action_view_args args;
    /* Replayed in an exported cast as this prompt and its summary, then its output; NULL:
     * left out of the cast (it ran no command). */
    const char *cast_prompt;
    /* Runs in the agent's shell: the Terminal tab's transcript (ui/agentlog.c) replays it. */
    bool in_shell;
    /* Its observation's extras.input is what was typed or piped into it (a terminal): shown
     * after its output. */
    bool shows_input;
};

/* The row of kind (NULL or unknown: the default one, args as JSON and no cast). */
const struct action_view *action_view_find(const char *kind);
/* What was typed into it when its view shows input and there was some (borrowed from
 * action), else NULL. */
const char *action_view_input(const struct action_view *view, json_t *action);

#endif
