/* The persistent shell: bash (or a POSIX sh) on a pty, and its end-of-command markers. */
#ifndef PADDOCK_EXECUTOR_SHELL_H
#define PADDOCK_EXECUTOR_SHELL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <termios.h>

#include "clip.h"
#include "common/buf.h"
#include "common/evloop.h"
#include "marker.h"

/* Wide like OpenHands' 1000-column tmux window, so tools format output as agents expect;
 * 1000 rows so nothing thinks it needs a pager. */
#define SHELL_COLS 1000
#define SHELL_ROWS 1000

enum shell_event {
    SHELL_EVENT_READY,  /* first marker after a start: the shell reads commands */
    SHELL_EVENT_MARKER, /* a command finished; sh->marker tells how */
    SHELL_EVENT_EXITED, /* the shell process ended; sh->exit_status is its wait status */
};

struct shell_options {
    const char *path;  /* shell binary */
    bool bash;         /* markers from PROMPT_COMMAND; otherwise from PS1 (busybox ash) */
    char *const *envp; /* environment of the shell */
    const char *workdir;
    const char *hostname; /* for PS1 shells, which have no $HOSTNAME */
    bool switch_user;     /* setgid/setuid to uid/gid in the child */
    uid_t uid;            /* the shell's uid (whether or not it switches) */
    gid_t gid;
    const char *script_dir; /* shell_script_dir_create()'s: where long commands are written */
};

/* Where the shell is in putting the tty modes back under a line editor (shell.c). */
enum shell_settle {
    SHELL_SETTLE_NONE,   /* nothing to do: markers are command ends */
    SHELL_SETTLE_TAG,    /* the settling line is typed; its tag says the editor let go */
    SHELL_SETTLE_PROMPT, /* modes set and the line ended; the next prompt ends it */
};

struct shell;
typedef void (*shell_event_fn)(struct shell *sh, enum shell_event ev, void *ctx);

struct shell {
    struct shell_options opt;
    struct evloop *loop;
    struct evloop_watch watch;
    int fd;     /* pty master, -1 when closed */
    pid_t pid;  /* -1 when no shell runs */
    bool ready; /* the first marker came */
    bool busy;  /* a command was typed and its marker has not come */
    bool lost;  /* its stdin is no longer the terminal: it is being replaced */
    bool writing;
    enum shell_settle settle; /* while not NONE, output is dropped and the command not over */
    struct termios tio;       /* the tty modes commands start with */
    struct termios tio_seen;  /* the modes as read back after they were last set */
    struct marker_parser parser;
    struct marker_info marker; /* the last marker */
    struct buf wq;             /* typed bytes the tty has not taken yet */
    struct capture out;        /* output nobody has seen yet */
    double last_output;        /* evloop_now() of the last output byte */
    int exit_status;           /* wait status of the last shell that ended */
    char nonce[33];
    char script[PATH_MAX]; /* the command file the shell sources, "" when none is left */
    shell_event_fn on_event;
    void *ctx;
    /* While set, each piece of output (markers taken out) is passed here too as it is read:
     * the running action's live output (action_run.c). */
    void (*tap)(void *tap_ctx, const char *data, size_t n);
    void *tap_ctx;
};

/* Returns -1 when no random nonce could be made. Nothing runs until shell_start(). */
int shell_init(struct shell *sh, struct evloop *loop, const struct shell_options *opt,
               shell_event_fn on_event, void *ctx);
/* Starts a shell process; READY follows once it prints its first marker. */
int shell_start(struct shell *sh);
/* Kills the shell and its session, without an EXITED event. */
void shell_stop(struct shell *sh);
void shell_free(struct shell *sh);

/* Makes the directory commands too long to type go to (out: its path) in parent (NULL:
 * /tmp), mode 0711: the shell's uid reaches its own files and lists nothing. Returns -1
 * with a message in err. */
int shell_script_dir_create(const char *parent, char *out, size_t outlen, struct buf *err);
/* Runs a command (see cmdline.h): short plain lines are typed; anything else is written to
 * a file of script_dir (the shell's uid, 0600) and a short line sources it in the shell, so
 * no command of any size goes through the shell's line reader. The shell is busy until its
 * marker. Returns -1 with a message in err. */
int shell_type_command(struct shell *sh, const char *cmd, size_t n, struct buf *err);
/* The executor's own command (start-up steps, POST /env): under bash, sourced from a script
 * and parsed with the aliases of the agent's rc file off (back on before it runs). */
int shell_type_hidden(struct shell *sh, const char *cmd, size_t n, struct buf *err);
/* Sends bytes to whatever reads the tty now. */
int shell_send(struct shell *sh, const char *data, size_t n);
/* Sends a key to the program on the tty. A key the tty turns into a signal (^C, ^\, ^Z while
 * ISIG is on) is a signal to the foreground job at once (TIOCSIG), and the bytes still queued
 * for the tty are dropped, as a terminal discards typed-ahead input on an interrupt: neither
 * a full tty nor a long queue can hold it back. Other keys are queued bytes. */
int shell_send_key(struct shell *sh, int key);
/* The tty's foreground process group (what a ^C reaches), or -1 when there is none. */
pid_t shell_foreground(const struct shell *sh);
/* Reads what the tty has right now (the caller is about to act on time). */
void shell_drain(struct shell *sh);
/* The reaper found the shell's wait status. */
void shell_reaped(struct shell *sh, int status);

/* The shell binary to use when none is forced: bash from PATH, else /bin/sh. */
int shell_find(const char *path_env, char *out, size_t outlen, bool *is_bash);

#endif
