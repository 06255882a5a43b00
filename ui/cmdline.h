/* The `:` command line: one table of commands, their lookup and the line's splitting. No
 * ncurses: the commands run on a struct ui (ui_internal.h) and draw nothing themselves. */
#ifndef PADDOCK_UI_CMDLINE_H
#define PADDOCK_UI_CMDLINE_H

#include <stdbool.h>

struct ui;

struct ui_command {
    const char *name;
    const char *alias; /* a short name (":q"), or NULL */
    const char *args;  /* as shown in help: "NAME", "[SESSION]", "" */
    const char *help;
    int min_args, max_args;
    bool rest;    /* the last argument takes the rest of the line (a reason with spaces) */
    bool mutates; /* changes the engine: refused with --read-only */
    bool asks;    /* asks before it changes anything itself (a question, a form) */
    unsigned (*fn)(struct ui *ui, int argc, char **argv); /* argv[0] is the command's name */
};

extern const struct ui_command ui_commands[];
/* The `:` key: the command prompt. */
unsigned cmdline_open(struct ui *ui);
/* Run one command line (without the ':'). Returns dirty bits; errors go to the footer. */
unsigned cmdline_run(struct ui *ui, const char *line);
/* The command called name (its name, alias, or a start of its name that only it has), or
 * NULL with *why. */
const struct ui_command *cmdline_find(const char *name, const char **why);
/* Whether typed (what named c on the line) must be confirmed before c runs: a command that
 * changes the engine, named by a start of its name, that does not ask by itself. Its full
 * name and its alias run at once. */
bool cmdline_needs_confirm(const struct ui_command *c, const char *typed);
/* Split line into words in place (spaces); with rest, word max-1 is the remainder of the
 * line. Returns the count, or max + 1 when there are more words than max. */
int cmdline_split(char *line, char **argv, int max, bool rest);

#endif
