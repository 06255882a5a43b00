/* Child processes watched on the engine loop: spawned with posix_spawn, their end seen through
 * a pidfd (no SIGCHLD handler, no blocking wait), the tail of their output kept for errors. */
#ifndef PADDOCK_CHILD_H
#define PADDOCK_CHILD_H

struct loop;

struct child_spec {
    const char *const *argv; /* argv[0] is looked up in PATH of envp */
    const char *const *envp; /* the whole environment: nothing is inherited */
    long timeout_ms;         /* 0: none; past it the child is killed (status -1) */
};

/* status: the exit code, 128+signal, or -1 when it timed out or could not start; output: the
 * last bytes (≤ 4 KiB) of its stdout and stderr, NUL-terminated, valid during the call. */
typedef void (*child_done_fn)(int status, const char *output, void *ud);

/* Starts argv; fn is called once, later, from the loop. Returns 0, or -1 with *err (malloc'd). */
int child_spawn(struct loop *l, const struct child_spec *spec, child_done_fn fn, void *ud,
                char **err);

#endif
