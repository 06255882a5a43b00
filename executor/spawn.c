#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int spawn_become_user(uid_t uid, gid_t gid)
{
    if (setgroups(1, &gid) < 0 || setgid(gid) < 0 || setuid(uid) < 0)
        return -1;
    return getuid() == uid && geteuid() == uid && getgid() == gid && getegid() == gid ? 0 : -1;
}

void spawn_close_from(int lowest)
{
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)lowest, ~0U, 0) == 0)
        return;
#endif
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536)
        max = 65536;
    for (int fd = lowest; fd < max; fd++)
        close(fd);
}

static void say(const char *a, const char *b, const char *c)
{
    const char *parts[] = {"paddock-executor: ", a, b, c, "\n"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        ssize_t ignored = write(2, parts[i], strlen(parts[i]));
        (void)ignored;
    }
}

/* execve of the first o->path in the PATH of o->envp that the agent can run, as a shell
 * would look it up. Returns with errno set when none. */
static void exec_from_path(const struct spawn_options *o)
{
    const char *p = NULL;
    char file[4096];
    bool denied = false;
    for (char *const *e = o->envp; e && *e && !p; e++)
        if (strncmp(*e, "PATH=", 5) == 0)
            p = *e + 5;
    size_t name_len = strlen(o->path);
    while (p && *p) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        if (len > 0 && len + 1 + name_len < sizeof file) {
            memcpy(file, p, len);
            file[len] = '/';
            memcpy(file + len + 1, o->path, name_len + 1);
            execve(file, o->argv, o->envp);
            denied |= errno == EACCES;
        }
        p += len + (colon ? 1 : 0);
    }
    errno = denied ? EACCES : ENOENT;
}

/* In the child: only async-signal-safe calls from here to exec. */
static void child_exec(const struct spawn_options *o)
{
    int moved[SPAWN_MAX_FDS];
    sigset_t none;
    setsid();
    /* Out of the way first, so that fds[i] may be any small number, then into place. */
    for (int i = 0; i < o->nfds; i++) {
        int src = o->fds[i] >= 0 ? o->fds[i] : open("/dev/null", O_RDWR | O_CLOEXEC);
        moved[i] = src < 0 ? -1 : fcntl(src, F_DUPFD_CLOEXEC, SPAWN_MAX_FDS);
        if (moved[i] < 0)
            _exit(126);
    }
    for (int i = 0; i < o->nfds; i++)
        if (dup2(moved[i], i) < 0)
            _exit(126);
    spawn_close_from(o->nfds);
    if (o->tty) {
        if (ioctl(0, TIOCSCTTY, 0) < 0)
            _exit(126);
        tcsetattr(0, TCSANOW, o->tty);
        /* The agent must own its tty (stty, /dev/tty) and nothing of the executor's. chmod
         * before chown: once the agent owns it, changing its mode would need CAP_FOWNER. */
        if (o->switch_user && (fchmod(0, 0620) < 0 || fchown(0, o->uid, o->gid) < 0)) {
            say("cannot give the terminal to the agent user", "", "");
            _exit(126);
        }
    }
    if (o->switch_user && spawn_become_user(o->uid, o->gid) < 0) {
        say("cannot switch to the agent user", "", "");
        _exit(126);
    }
    if (!o->workdir || chdir(o->workdir) < 0)
        if (chdir("/") < 0)
            _exit(126);
    for (int sig = 1; sig < NSIG; sig++)
        signal(sig, SIG_DFL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (strchr(o->path, '/'))
        execve(o->path, o->argv, o->envp);
    else
        exec_from_path(o);
    say("cannot run ", o->path,
        errno == ENOENT   ? ": not found"
        : errno == EACCES ? ": permission denied"
                          : ": exec failed");
    _exit(127);
}

void spawn_stop(pid_t pgid, pid_t *pid)
{
    if (pgid > 0)
        kill(-pgid, SIGKILL);
    if (*pid > 0) {
        kill(*pid, SIGKILL);
        waitpid(*pid, NULL, 0);
        *pid = -1;
    }
}

pid_t spawn_process(const struct spawn_options *o)
{
    if (o->nfds < 0 || o->nfds > SPAWN_MAX_FDS)
        return errno = EINVAL, -1;
    pid_t pid = fork();
    if (pid == 0)
        child_exec(o);
    return pid;
}
