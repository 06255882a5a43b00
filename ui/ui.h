/* The operator dashboard (`paddock` with no command): the only entry point into ui/. */
#ifndef PADDOCK_UI_H
#define PADDOCK_UI_H

#include <stdbool.h>

struct client;

struct ui_options {
    const char *theme; /* theme name ("dark", "light"); NULL = "dark" */
    bool no_color;     /* monochrome: bold/reverse/underline only (NO_COLOR) */
    bool read_only;    /* never change anything in the engine (no mutating keys) */
    bool bell;         /* ring the terminal bell when an action starts waiting for approval */
};

/* Run the dashboard on the controlling terminal until the operator quits or a SIGINT,
 * SIGTERM or SIGHUP arrives; the terminal is restored in every case, a crash included.
 * c must stay valid throughout; the engine may come and go (the header says so and the
 * dashboard reconnects every second). Returns the process exit code: 0 after `q`,
 * 128 + signal number after a signal, 1 when the dashboard cannot start (*err then holds a
 * malloc'd message; nothing is ever printed by ui/). */
int ui_run(struct client *c, const struct ui_options *opt, char **err);

#endif
