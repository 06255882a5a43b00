/* The `:` command line: one table of commands (name, alias, arguments, help, handler), from
 * which the help is generated. A command is its name, its alias or any start of its name that
 * no other command shares (":th light"); a start of the name of one that changes the engine
 * asks y/n first (":p" is too easy to type to pause a session at once). Commands that change
 * the engine are refused by --read-only, as their keys are. */
#include "ui/ui_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMDLINE_MAX_ARGS 8

static unsigned cmd_quit(struct ui *ui, int argc, char **argv)
{
    (void)ui, (void)argc, (void)argv;
    return UI_QUIT;
}

static unsigned cmd_help(struct ui *ui, int argc, char **argv)
{
    (void)argc, (void)argv;
    ui->help_visible = true;
    return UI_DIRTY_HELP;
}

static unsigned cmd_theme(struct ui *ui, int argc, char **argv)
{
    if (argc > 1)
        return ops_theme(ui, argv[1]);
    char *have = theme_list(ui->opt->theme_dirs);
    ui_set_status(ui, "theme %s (have: %s)", ui->theme ? ui->theme->name : "dark",
                  have ? have : "dark");
    free(have);
    return UI_DIRTY_FOOTER;
}

static unsigned cmd_new(struct ui *ui, int argc, char **argv)
{
    (void)argc, (void)argv;
    return ops_create_open(ui);
}

static enum ops_kind cmd_op(const char *name)
{
    return strcmp(name, "pause") == 0    ? OPS_PAUSE
           : strcmp(name, "resume") == 0 ? OPS_RESUME
           : strcmp(name, "stop") == 0   ? OPS_STOP
                                         : OPS_DELETE;
}

static unsigned cmd_session_op(struct ui *ui, int argc, char **argv)
{
    return ops_session(ui, cmd_op(argv[0]), argc > 1 ? argv[1] : NULL);
}

/* :approve ID, :reject ID [REASON]: the action must be in the queue. With several engines
 * ids are per engine: ID@ENGINE as the CLI takes it, and a bare ID that two engines' items
 * share is refused. */
static unsigned cmd_decide(struct ui *ui, int argc, char **argv)
{
    char *end = NULL;
    long long id = strtoll(argv[1], &end, 10);
    const char *engine = end && *end == '@' ? end + 1 : NULL;
    if (!end || (*end && !engine) || id <= 0) {
        ui_set_error(ui, ":%s: '%s' is not an action id (the queue's ID column)", argv[0], argv[1]);
        return UI_DIRTY_FOOTER;
    }
    size_t n = json_array_size(ui->model.approvals), found = n, matches = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *a = json_array_get(ui->model.approvals, i);
        size_t e = model_approval_engine(a);
        if (json_integer_value(json_object_get(a, "id")) != id ||
            (engine && (e >= ui->nengines || strcmp(ui->engines[e].name, engine) != 0)))
            continue;
        found = i;
        matches++;
    }
    if (matches > 1) {
        ui_set_error(ui, ":%s: action %lld waits on several engines: say which, as %lld@ENGINE",
                     argv[0], id, id);
        return UI_DIRTY_FOOTER;
    }
    if (matches == 1) {
        ui->list[UI_LIST_APPROVALS].sel = found;
        return view_approvals_decide(ui, strcmp(argv[0], "approve") == 0,
                                     argc > 2 ? argv[2] : NULL) |
               UI_DIRTY_APPROVALS;
    }
    ui_set_error(ui, ":%s: action %s does not wait for approval", argv[0], argv[1]);
    return UI_DIRTY_FOOTER;
}

/* :history: the History page is the global key 3 (docs/dashboard.md). */
static unsigned cmd_history(struct ui *ui, int argc, char **argv)
{
    (void)argc, (void)argv;
    unsigned dirty = 0;
    if (keys_run(ui, ui_keys, '3', false, &dirty))
        return dirty;
    ui_set_error(ui, "this dashboard has no History page yet (paddock history)");
    return UI_DIRTY_FOOTER;
}

static unsigned cmd_filter(struct ui *ui, int argc, char **argv)
{
    return ops_filter_apply(ui, argc > 1 ? argv[1] : NULL);
}

static unsigned cmd_export(struct ui *ui, int argc, char **argv)
{
    return ops_export(ui, NULL, argc > 1 ? argv[1] : NULL);
}

static unsigned cmd_terminal(struct ui *ui, int argc, char **argv)
{
    (void)argc, (void)argv;
    return ops_terminal(ui);
}

const struct ui_command ui_commands[] = {
    {.name = "quit",
     .alias = "q",
     .args = "",
     .help = "quit (the engine and its sessions keep running)",
     .fn = cmd_quit},
    {.name = "help",
     .alias = "h",
     .args = "",
     .help = "the keys and these commands",
     .fn = cmd_help},
    {.name = "theme",
     .args = "[NAME]",
     .help = "switch the colour theme (no NAME: list them)",
     .max_args = 1,
     .fn = cmd_theme},
    {.name = "new",
     .args = "",
     .help = "create a session (the form)",
     .mutates = true,
     .asks = true,
     .fn = cmd_new},
    {.name = "pause",
     .args = "[SESSION]",
     .help = "pause the selected session, or SESSION (id or name)",
     .max_args = 1,
     .mutates = true,
     .fn = cmd_session_op},
    {.name = "resume",
     .args = "[SESSION]",
     .help = "resume a paused or stopped session",
     .max_args = 1,
     .mutates = true,
     .fn = cmd_session_op},
    {.name = "stop",
     .args = "[SESSION]",
     .help = "stop a session's container",
     .max_args = 1,
     .mutates = true,
     .fn = cmd_session_op},
    {.name = "delete",
     .alias = "rm",
     .args = "[SESSION]",
     .help = "delete a session (asks first)",
     .max_args = 1,
     .mutates = true,
     .asks = true,
     .fn = cmd_session_op},
    {.name = "approve",
     .args = "ID",
     .help = "approve the waiting action ID",
     .min_args = 1,
     .max_args = 1,
     .mutates = true,
     .fn = cmd_decide},
    {.name = "reject",
     .args = "ID [REASON]",
     .help = "reject action ID; the agent sees REASON",
     .min_args = 1,
     .max_args = 2,
     .rest = true,
     .mutates = true,
     .fn = cmd_decide},
    {.name = "filter",
     .args = "[TEXT]",
     .help = "only the sessions containing TEXT (none: all)",
     .max_args = 1,
     .rest = true,
     .fn = cmd_filter},
    {.name = "export",
     .args = "[DIR]",
     .help = "export the selected session into DIR",
     .max_args = 1,
     .rest = true,
     .fn = cmd_export},
    {.name = "terminal",
     .args = "",
     .help = "the selected session's Terminal tab",
     .fn = cmd_terminal},
    {.name = "history", .args = "", .help = "past sessions (the History page)", .fn = cmd_history},
    {0},
};

const struct ui_command *cmdline_find(const char *name, const char **why)
{
    const struct ui_command *hit = NULL;
    size_t n = strlen(name), hits = 0;
    if (n == 0) {
        *why = "no command";
        return NULL;
    }
    for (const struct ui_command *c = ui_commands; c->name; c++)
        if (strcmp(c->name, name) == 0 || (c->alias && strcmp(c->alias, name) == 0))
            return c;
    for (const struct ui_command *c = ui_commands; c->name; c++) {
        if (strncmp(c->name, name, n) == 0) {
            hit = c;
            hits++;
        }
    }
    if (hits == 1)
        return hit;
    *why = hits ? "more than one command starts with that" : "unknown command";
    return NULL;
}

bool cmdline_needs_confirm(const struct ui_command *c, const char *typed)
{
    return c->mutates && !c->asks && strcmp(c->name, typed) != 0 &&
           !(c->alias && strcmp(c->alias, typed) == 0);
}

int cmdline_split(char *line, char **argv, int max, bool rest)
{
    int n = 0;
    char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            return n;
        if (n == max)
            return max + 1;
        argv[n++] = p;
        if (rest && n == max) { /* the remainder, without trailing blanks */
            char *end = p + strlen(p);
            while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
                *--end = '\0';
            return n;
        }
        while (*p && *p != ' ' && *p != '\t')
            p++;
        if (*p)
            *p++ = '\0';
    }
}

static unsigned cmdline_run_line(struct ui *ui, const char *line, bool confirmed);

static unsigned cmdline_confirmed(struct ui *ui, void *ud)
{
    (void)ud;
    char line[sizeof(ui->cmd_pending)];
    snprintf(line, sizeof(line), "%s", ui->cmd_pending);
    ui->cmd_pending[0] = '\0';
    return cmdline_run_line(ui, line, true);
}

unsigned cmdline_run(struct ui *ui, const char *line)
{
    return cmdline_run_line(ui, line, false);
}

static unsigned cmdline_run_line(struct ui *ui, const char *line, bool confirmed)
{
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s", line);
    char *p = buf;
    while (*p == ' ' || *p == ':')
        p++;
    char *args = p;
    while (*args && *args != ' ' && *args != '\t')
        args++;
    if (*args)
        *args++ = '\0';
    if (!*p)
        return 0;
    const char *why = NULL;
    const struct ui_command *c = cmdline_find(p, &why);
    if (!c) {
        ui_set_error(ui, ":%.40s: %s (:help lists the commands)", p, why);
        return UI_DIRTY_FOOTER;
    }
    if (c->mutates && ui->opt->read_only) {
        ui_set_error(ui, "read-only dashboard: :%s (%s) is disabled", c->name, c->help);
        return UI_DIRTY_FOOTER;
    }
    if (!confirmed && cmdline_needs_confirm(c, p)) {
        /* the whole name in the question: what would run is what the operator reads */
        char question[300];
        snprintf(ui->cmd_pending, sizeof(ui->cmd_pending), "%s%s%.200s", c->name, *args ? " " : "",
                 args);
        snprintf(question, sizeof(question), "run :%.200s ? (changes the session)",
                 ui->cmd_pending);
        confirm_open(ui, question, cmdline_confirmed, NULL);
        return UI_DIRTY_ALL;
    }
    char *argv[CMDLINE_MAX_ARGS + 1];
    argv[0] = (char *)c->name;
    int max = c->max_args < CMDLINE_MAX_ARGS ? c->max_args : CMDLINE_MAX_ARGS;
    int n = cmdline_split(args, argv + 1, max, c->rest);
    if (n < c->min_args || n > max) {
        ui_set_error(ui, "usage: :%s%s%s", c->name, c->args[0] ? " " : "", c->args);
        return UI_DIRTY_FOOTER;
    }
    return c->fn(ui, n + 1, argv);
}

static unsigned cmdline_done(struct ui *ui, const char *text, void *ud)
{
    (void)ud;
    if (!text)
        return UI_DIRTY_FOOTER;
    return cmdline_run(ui, text);
}

unsigned cmdline_open(struct ui *ui)
{
    prompt_open(ui, ":", NULL, cmdline_done, NULL);
    return UI_DIRTY_FOOTER;
}
