/* Processes of the agent (the shell, the Python runner, a browser): spawned as the agent
 * user, with the agent's environment, in a session of their own, with exactly the fds given;
 * stopped with everything they started. Also the pieces other forked children of the
 * executor share (closing inherited fds, becoming the agent). */
#ifndef PADDOCK_EXECUTOR_SPAWN_H
#define PADDOCK_EXECUTOR_SPAWN_H

#include <stdbool.h>
#include <sys/types.h>
#include <termios.h>

#define SPAWN_MAX_FDS 8

struct spawn_options {
    const char *path;  /* program; without a '/' it is looked up in envp's PATH, as the user */
    char *const *argv; /* NULL-terminated */
    char *const *envp;
    const char *workdir; /* chdir here, else to / */
    bool switch_user;    /* setgroups/setgid/setuid to uid/gid */
    uid_t uid;
    gid_t gid;
    /* fds[i] becomes fd i in the child; -1 is /dev/null. Every other fd is closed. */
    int fds[SPAWN_MAX_FDS];
    int nfds;
    /* Non-NULL: fd 0 is a terminal; it becomes the controlling terminal with these modes,
     * and, when switching users, the agent's (mode 0620) before the switch. */
    const struct termios *tty;
};

/* Returns the child's pid (it leads a new session and process group), or -1 with errno. If
 * execve fails, the child writes why to its fd 2 and exits 127. */
pid_t spawn_process(const struct spawn_options *o);

/* SIGKILL to the process group pgid (what the process started lives on in it), then to *pid,
 * which is reaped; *pid becomes -1. A pgid or *pid <= 0 is skipped (already reaped). */
void spawn_stop(pid_t pgid, pid_t *pid);

/* In a child: become the agent user. Async-signal-safe. -1 when that failed. */
int spawn_become_user(uid_t uid, gid_t gid);
/* In a child: close every fd from lowest up. Async-signal-safe. */
void spawn_close_from(int lowest);

#endif
