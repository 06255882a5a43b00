/* The table of how each kind of action is shown and exported; kinds not in it are shown by
 * their args. */
#include "client/action_view.h"

#include <stddef.h>
#include <string.h>

static const struct action_view action_views[] = {
    {.name = "run", .args = ACTION_VIEW_ARGS_NONE, .cast_prompt = "$", .in_shell = true},
    {.name = "run_ipython", .args = ACTION_VIEW_ARGS_JSON, .cast_prompt = ">>>"},
    {.name = "write", .args = ACTION_VIEW_ARGS_CONTENT},
    /* a terminal into the sandbox: its transcript is the output, then what was typed */
    {.name = "terminal", .args = ACTION_VIEW_ARGS_JSON, .shows_input = true},
};

static const struct action_view action_view_default = {.name = "", .args = ACTION_VIEW_ARGS_JSON};

const struct action_view *action_view_find(const char *kind)
{
    for (size_t i = 0; kind && i < sizeof action_views / sizeof action_views[0]; i++)
        if (strcmp(action_views[i].name, kind) == 0)
            return &action_views[i];
    return &action_view_default;
}

const char *action_view_input(const struct action_view *view, json_t *action)
{
    json_t *extras = json_object_get(json_object_get(action, "observation"), "extras");
    const char *in = json_string_value(json_object_get(extras, "input"));
    return view->shows_input && in && *in ? in : NULL;
}
