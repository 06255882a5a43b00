/* The executor's line per request (an action, a file transfer) in the container's log, where
 * the dashboard's Logs tab and `paddock logs` read it. A line costs the Docker daemon and the
 * container's shim more machine CPU than the executor's whole `echo hi` (bench/scale.c: about
 * 0.17 ms of the 0.41 an action straight to the executors), so a busy executor writes the
 * first REQLOG_BURST lines of each second as they come and one line for the rest when the
 * second ends. Every action is still in the engine's record (history, export). */
#ifndef PADDOCK_EXECUTOR_REQLOG_H
#define PADDOCK_EXECUTOR_REQLOG_H

#include "common/evloop.h"

#include <stdbool.h>

#define REQLOG_BURST 20 /* lines a second written one by one */

struct reqlog {
    struct evloop *loop;
    struct evloop_watch timer; /* the end of a second that held lines back; -1 fd: none */
    double window;             /* evloop_now() when the current second began */
    unsigned lines;            /* written one by one in it */
    unsigned long held;        /* requests whose lines were held back in it */
    unsigned long held_failed; /* of them, the ones that failed (their lines: warnings) */
    int out;                   /* where the summary goes (stdout) */
    bool armed;
};

/* Summaries go to out. 0, or -1 (errno set) when the timer cannot be made. */
int reqlog_init(struct reqlog *g, struct evloop *l, int out);
/* One line (the text without the newline), in one write to fd: the line arrives whole in the
 * container log. failed: a refusal or failure (counted apart when held back). */
void reqlog_line(struct reqlog *g, int fd, bool failed, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Writes what is held back now (the executor stops) and closes the timer. */
void reqlog_close(struct reqlog *g);

#endif
