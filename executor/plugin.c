#include "plugin.h"

#include <string.h>

#include "action_ipython.h"
#include "executor.h"
#include "gitinfo.h"
#include "observation.h"
#include "skills.h"

struct plugin {
    const char *name;
    const char *alias_of; /* this name turns on that plugin */
    /* Before the shell's environment is made from the executor's. */
    int (*prepare)(struct executor *ex, struct buf *err);
    int (*init)(struct executor *ex, struct buf *err);
    void (*free)(struct executor *ex);
    bool (*reaped)(struct executor *ex, pid_t pid, int status);
    void (*on_run)(struct executor *ex, const struct marker_info *m, json_t *obs);
    const char *const *actions; /* action types that need this plugin */
};

static const char *const ipython_actions[] = {"run_ipython", NULL};

static const struct plugin plugins[] = {
    {.name = "ipython",
     .init = action_ipython_init,
     .free = action_ipython_free_state,
     .reaped = action_ipython_reaped,
     .actions = ipython_actions},
    {.name = "jupyter", .alias_of = "ipython"}, /* OpenHands' name */
    /* OpenHands' file_ops helpers as the module `agentskills` (skills.h). */
    {.name = "agent_skills", .prepare = skills_prepare, .free = skills_free},
    {.name = "gitinfo", .on_run = gitinfo_on_run},
};

#define PLUGIN_COUNT (sizeof plugins / sizeof plugins[0])

static bool is_on(const struct executor *ex, size_t i)
{
    return ex->plugins & (1u << i);
}

int plugin_enable(struct executor *ex, const char *name, struct buf *err)
{
    for (size_t i = 0; i < PLUGIN_COUNT; i++) {
        if (strcmp(plugins[i].name, name) != 0)
            continue;
        if (plugins[i].alias_of)
            return plugin_enable(ex, plugins[i].alias_of, err);
        ex->plugins |= 1u << i;
        return 0;
    }
    buf_printf(err, "unknown plugin '%s' (known: ", name);
    for (size_t i = 0; i < PLUGIN_COUNT; i++)
        buf_printf(err, "%s%s", i ? ", " : "", plugins[i].name);
    buf_printf(err, ")");
    return -1;
}

int plugin_prepare_all(struct executor *ex, struct buf *err)
{
    for (size_t i = 0; i < PLUGIN_COUNT; i++)
        if (is_on(ex, i) && plugins[i].prepare && plugins[i].prepare(ex, err) < 0)
            return -1;
    return 0;
}

int plugin_init_all(struct executor *ex, struct buf *err)
{
    for (size_t i = 0; i < PLUGIN_COUNT; i++)
        if (is_on(ex, i) && plugins[i].init && plugins[i].init(ex, err) < 0)
            return -1;
    return 0;
}

void plugin_free_all(struct executor *ex)
{
    for (size_t i = 0; i < PLUGIN_COUNT; i++)
        if (is_on(ex, i) && plugins[i].free)
            plugins[i].free(ex);
}

json_t *plugin_check_action(const struct executor *ex, const char *type)
{
    for (size_t i = 0; i < PLUGIN_COUNT; i++) {
        for (const char *const *a = plugins[i].actions; a && *a; a++) {
            if (strcmp(*a, type) != 0)
                continue;
            if (is_on(ex, i))
                return NULL;
            struct buf text = BUF_INIT;
            buf_printf(&text,
                       "ERROR: %s is not available: the executor was started without the %s "
                       "plugin (--plugins %s).",
                       type, plugins[i].name, plugins[i].name);
            json_t *obs = observation_error(text.data ? text.data : "ERROR: Out of memory");
            buf_free(&text);
            return obs;
        }
    }
    return NULL;
}

void plugin_on_run_completed(struct executor *ex, const struct marker_info *m, json_t *obs)
{
    for (size_t i = 0; i < PLUGIN_COUNT; i++)
        if (is_on(ex, i) && plugins[i].on_run)
            plugins[i].on_run(ex, m, obs);
}

bool plugin_reaped(struct executor *ex, pid_t pid, int status)
{
    for (size_t i = 0; i < PLUGIN_COUNT; i++)
        if (is_on(ex, i) && plugins[i].reaped && plugins[i].reaped(ex, pid, status))
            return true;
    return false;
}
