/* Child processes on the engine loop (see child.h). posix_spawn (vfork semantics) rather than
 * fork: nothing of the engine runs in the child between the spawn and the exec. */
#include "engine/base/child.h"

#include "engine/base/loop.h"
#include "engine/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILD_TAIL 4096

struct child {
    struct loop *loop;
    pid_t pid;
    int pidfd;
    int outfd;
    struct loop_timer *timer;
    bool timed_out;
    char tail[CHILD_TAIL];
    size_t tail_len;
    child_done_fn fn;
    void *ud;
};

/* Keep only the last CHILD_TAIL-1 bytes: errors come at the end. */
static void child_keep(struct child *c, const char *p, size_t n)
{
    size_t cap = CHILD_TAIL - 1;
    if (n >= cap) {
        memcpy(c->tail, p + n - cap, cap);
        c->tail_len = cap;
        return;
    }
    if (c->tail_len + n > cap) {
        size_t drop = c->tail_len + n - cap;
        memmove(c->tail, c->tail + drop, c->tail_len - drop);
        c->tail_len -= drop;
    }
    memcpy(c->tail + c->tail_len, p, n);
    c->tail_len += n;
}

/* Read what the pipe has now; true at EOF or error. */
static bool child_drain(struct child *c)
{
    char buf[4096];
    for (;;) {
        ssize_t n = read(c->outfd, buf, sizeof(buf));
        if (n > 0) {
            child_keep(c, buf, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        return n == 0 || errno != EAGAIN;
    }
}

static void child_on_output(int fd, uint32_t events, void *ud)
{
    struct child *c = ud;
    if (child_drain(c)) {
        loop_del_fd(c->loop, c->outfd);
        close(c->outfd);
        c->outfd = -1;
    }
}

static void child_on_exit(int fd, uint32_t events, void *ud)
{
    struct child *c = ud;
    int st = 0;
    pid_t r = waitpid(c->pid, &st, WNOHANG);
    if (r == 0 || (r < 0 && errno == EINTR))
        return; /* not yet */
    loop_del_fd(c->loop, c->pidfd);
    close(c->pidfd);
    if (c->outfd >= 0) {
        child_drain(c); /* what it wrote last; helpers still holding the pipe are not waited */
        loop_del_fd(c->loop, c->outfd);
        close(c->outfd);
    }
    if (c->timer)
        loop_timer_cancel(c->loop, c->timer);
    c->tail[c->tail_len] = '\0';
    int status = -1;
    if (r > 0 && !c->timed_out)
        status = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
    c->fn(status, c->tail, c->ud);
    free(c);
}

static void child_on_timeout(void *ud)
{
    struct child *c = ud;
    c->timer = NULL;
    c->timed_out = true;
    /* The whole group: git starts helpers (git-remote-http) of its own. */
    kill(-c->pid, SIGKILL);
    kill(c->pid, SIGKILL);
}

/* argv[0] along the PATH of envp (posix_spawnp would use the engine's own PATH). */
static char *child_which(const char *name, const char *const *envp)
{
    if (strchr(name, '/'))
        return strdup(name);
    const char *path = "/usr/local/bin:/usr/bin:/bin";
    for (size_t i = 0; envp[i]; i++)
        if (strncmp(envp[i], "PATH=", 5) == 0)
            path = envp[i] + 5;
    while (*path) {
        size_t n = strcspn(path, ":");
        char *cand = util_strdupf("%.*s/%s", (int)n, path, name);
        if (cand && n && access(cand, X_OK) == 0)
            return cand;
        free(cand);
        path += n;
        if (*path == ':')
            path++;
    }
    return NULL;
}

int child_spawn(struct loop *l, const struct child_spec *spec, child_done_fn fn, void *ud,
                char **err)
{
    char *exe = child_which(spec->argv[0], spec->envp);
    if (!exe) {
        *err = util_strdupf("%s not found in PATH", spec->argv[0]);
        return -1;
    }
    struct child *c = calloc(1, sizeof(*c));
    int pipefd[2] = {-1, -1};
    if (!c || pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) < 0) {
        *err = util_strdupf("cannot start %s: %s", spec->argv[0], strerror(errno));
        free(exe);
        free(c);
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    /* The engine blocks SIGINT/SIGTERM (signalfd) and ignores SIGPIPE (and SIGHUP under nohup):
     * the child must not; every signal goes back to its default. */
    sigset_t none, def;
    sigemptyset(&none);
    sigfillset(&def);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &def);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                      POSIX_SPAWN_SETPGROUP);
    int rc =
        posix_spawn(&c->pid, exe, &fa, &at, (char *const *)spec->argv, (char *const *)spec->envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(pipefd[1]);
    free(exe);
    if (rc != 0) {
        *err = util_strdupf("cannot start %s: %s", spec->argv[0], strerror(rc));
        close(pipefd[0]);
        free(c);
        return -1;
    }
    c->loop = l;
    c->outfd = pipefd[0];
    c->fn = fn;
    c->ud = ud;
    c->pidfd = (int)syscall(SYS_pidfd_open, c->pid, 0);
    if (c->pidfd < 0 || loop_add_fd(l, c->pidfd, EPOLLIN, child_on_exit, c) < 0 ||
        loop_add_fd(l, c->outfd, EPOLLIN, child_on_output, c) < 0) {
        /* Without a pidfd there is no way to hear of its end on the loop: stop it now. */
        *err = util_strdupf("cannot watch %s: %s", spec->argv[0], strerror(errno));
        kill(-c->pid, SIGKILL);
        kill(c->pid, SIGKILL);
        waitpid(c->pid, NULL, 0);
        if (c->pidfd >= 0) {
            loop_del_fd(l, c->pidfd);
            close(c->pidfd);
        }
        close(c->outfd);
        free(c);
        return -1;
    }
    if (spec->timeout_ms > 0)
        c->timer = loop_timer_add(l, spec->timeout_ms, child_on_timeout, c);
    return 0;
}
