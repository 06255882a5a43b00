/* The operator dashboard (`paddock` with no command): the only entry point into ui/. */
#ifndef PADDOCK_UI_H
#define PADDOCK_UI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct client;

/* How far a long operation got: done of total (total 0: not known yet). */
typedef void (*ui_progress_fn)(void *ctx, size_t done, size_t total);

/* An engine the dashboard shows beside the first (ui_run's): a remote one of the config. */
struct ui_engine_conf {
    const char *name;      /* as the config file names it */
    struct client *client; /* valid while the dashboard runs */
};

struct ui_options {
    const char *theme; /* theme name ("dark", "light"); NULL = "dark" */
    bool no_color;     /* monochrome: bold/reverse/underline only (NO_COLOR) */
    bool read_only;    /* never change anything in the engine (no mutating keys) */
    bool bell;         /* ring the terminal bell when an action starts waiting for approval */
    /* Where NAME.theme files are looked for, in order (NULL-terminated); NULL: only the
     * built-in dark. `:theme NAME` switches live. */
    const char *const *theme_dirs;
    /* Clicks select rows, focus panes and pick tabs; the wheel scrolls. Off by default: a
     * terminal's own text selection then works without Shift. */
    bool mouse;
    /* `e` in the sessions list: write session id's record (of the engine named engine) (JSON,
     * Markdown, an asciinema cast) into dir, telling progress how far it got. 0 with *msg saying
     * where, or -1 with *msg saying why (malloc'd). It blocks, so the dashboard runs it in a child
     * process (ui/job.c) and stays live meanwhile. NULL: no export. */
    int (*export_session)(void *ctx, const char *engine, const char *id, const char *dir,
                          ui_progress_fn progress, void *progress_ctx, char **msg);
    void *export_ctx;
    /* The engine's state dir: when the engine does not answer, the dashboard says which
     * engine holds it (client_engine_diagnose). NULL: only that none answers. */
    const char *state_dir;
    /* The name of ui_run's engine (NULL: "local"), and the engines shown beside it (their
     * sessions in one list with an ENGINE column, one approval queue, each one's state in the
     * header); at most 7. */
    const char *engine_name;
    const struct ui_engine_conf *engines;
    size_t nengines;
};

/* Run the dashboard on the controlling terminal until the operator quits or a SIGINT,
 * SIGTERM or SIGHUP arrives; the terminal is restored in every case, a crash included.
 * c (and opt's other engines) must stay valid throughout; an engine may come and go (the
 * header says so and the dashboard tries again, waiting longer after each failure). Returns the
 * process exit code: 0 after `q`, 128 + signal number after a signal, 1 when the dashboard cannot
 * start (*err then holds a malloc'd message; nothing is ever printed by ui/). */
int ui_run(struct client *c, const struct ui_options *opt, char **err);
/* Check the options before anything starts (the theme loads): 0, or -1 with *err (malloc'd:
 * a bad theme file names the file and the line). */
int ui_check_options(const struct ui_options *opt, char **err);
/* Every key of the dashboard, from its key tables, one "WHERE\tKEYS\tWHAT" line each (keys of
 * one handler joined as the ? overlay shows them), then the `:` commands: for the man page and
 * the test that holds it to the tables. */
void ui_keys_print(FILE *f);

#endif
