#include "engine/base/unix_peer.h"

#include "engine/base/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5; older headers lack it */
#endif

static const char *unix_peer_kind(mode_t m)
{
    static const struct {
        mode_t type;
        const char *what;
    } kinds[] = {
        {.type = S_IFLNK, .what = "a symbolic link"}, {.type = S_IFIFO, .what = "a FIFO"},
        {.type = S_IFREG, .what = "a regular file"},  {.type = S_IFDIR, .what = "a directory"},
        {.type = S_IFCHR, .what = "a device"},        {.type = S_IFBLK, .what = "a device"},
    };
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if ((m & S_IFMT) == kinds[i].type)
            return kinds[i].what;
    return "not a socket";
}

/* fd of the directory holding path's last component: its parent's parent is opened as given
 * (the engine's own dirs), the directory itself without following a link. */
static int unix_peer_open_dir(const char *path, const char **name, char *err, size_t errlen)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path || !slash[1]) {
        snprintf(err, errlen, "%s: not a socket path inside a directory", path);
        errno = EINVAL;
        return -1;
    }
    *name = slash + 1;
    char dir[4096];
    size_t dlen = (size_t)(slash - path);
    if (dlen >= sizeof(dir)) {
        snprintf(err, errlen, "%s: path too long", path);
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(dir, path, dlen);
    dir[dlen] = '\0';
    char *dslash = strrchr(dir, '/');
    const char *leaf = dir;
    int top = AT_FDCWD;
    if (dslash) {
        leaf = dslash + 1;
        *dslash = '\0';
        top = open(dir[0] ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (top < 0) {
            int saved = errno;
            snprintf(err, errlen, "cannot open %s: %s", dir[0] ? dir : "/", strerror(saved));
            errno = saved == ENOTDIR || saved == ELOOP ? ENOENT : saved; /* the engine's own */
            return -1;
        }
    }
    int fd = openat(top, leaf, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int saved = errno;
    if (top >= 0)
        close(top);
    if (fd < 0)
        snprintf(err, errlen, "cannot open the socket's directory %.*s: %s", (int)dlen, path,
                 saved == ENOTDIR || saved == ELOOP ? "not a directory (a symbolic link?)"
                                                    : strerror(saved));
    errno = saved;
    return fd;
}

int unix_peer_open(const char *path, bool *refused, char *err, size_t errlen)
{
    *refused = false;
    const char *name;
    int dfd = unix_peer_open_dir(path, &name, err, errlen);
    if (dfd < 0) {
        *refused = errno == ENOTDIR || errno == ELOOP;
        return -1;
    }
    int pfd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    int saved = errno;
    close(dfd);
    if (pfd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(saved));
        return -1;
    }
    struct stat st = {0};
    if (fstat(pfd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
        snprintf(err, errlen, "%s is %s, not a socket: refused without connecting", path,
                 unix_peer_kind(st.st_mode));
        *refused = true;
        close(pfd);
        return -1;
    }
    return pfd;
}

static int unix_peer_pid(int fd, pid_t *pid, char *err, size_t errlen)
{
    struct ucred cr;
    socklen_t len = sizeof(cr);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || cr.pid <= 0) {
        snprintf(err, errlen, "cannot tell who serves the socket (SO_PEERCRED: %s)",
                 strerror(errno));
        return -1;
    }
    *pid = cr.pid;
    return 0;
}

/* Whether the file at a (the server's /proc/PID/exe) holds exactly the size bytes of file b.
 * A runtime image bakes a copy of the executor in (engine/builder.c; its tag carries the
 * binary's digest): that copy is the same program. A copy grants nothing the mounted binary
 * does not: whoever can run one can run the other. */
static bool unix_peer_same_bytes(const char *a, const char *b, off_t size)
{
    int fa = open(a, O_RDONLY | O_CLOEXEC), fb = open(b, O_RDONLY | O_CLOEXEC);
    struct stat st;
    bool same = fa >= 0 && fb >= 0 && fstat(fa, &st) == 0 && st.st_size == size;
    char ba[65536], bb[sizeof(ba)];
    for (off_t off = 0; same && off < size;) {
        ssize_t n = pread(fa, ba, sizeof(ba), off);
        same = n > 0 && pread(fb, bb, (size_t)n, off) == n && memcmp(ba, bb, (size_t)n) == 0;
        off += n > 0 ? n : 0;
    }
    if (fa >= 0)
        close(fa);
    if (fb >= 0)
        close(fb);
    return same;
}

static int unix_peer_check_process(pid_t pid, const char *exe, pid_t init, char *err, size_t errlen)
{
    struct stat want, have;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)init);
    if (stat(path, &want) < 0) {
        snprintf(err, errlen, "the sandbox's first process (pid %d) is gone: %s", (int)init,
                 strerror(errno));
        return -2;
    }
    /* An exiting process (an executor killed for memory) has no namespaces nor exe left: the
     * request fails, but nothing says the sandbox did it. */
    int in = proc_in_pidns_of(pid, init);
    if (in < 0) {
        snprintf(err, errlen, "its server, process %d, is exiting or gone (%s)", (int)pid,
                 strerror(errno));
        return -2;
    }
    if (!in) {
        snprintf(err, errlen, "it is served by process %d, which is not in the sandbox's container",
                 (int)pid);
        return -1;
    }
    snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
    if (stat(exe, &want) < 0) {
        snprintf(err, errlen, "cannot stat the executor binary %s: %s", exe, strerror(errno));
        return -1;
    }
    if (stat(path, &have) < 0) {
        snprintf(err, errlen, "its server, process %d, is exiting or gone (%s)", (int)pid,
                 strerror(errno));
        return -2;
    }
    if ((have.st_dev != want.st_dev || have.st_ino != want.st_ino) &&
        !unix_peer_same_bytes(path, exe, want.st_size)) {
        snprintf(err, errlen,
                 "it is served by process %d in the sandbox, which is not the executor (%s)",
                 (int)pid, exe);
        return -1;
    }
    return 0;
}

int unix_peer_check(int fd, const char *exe, pid_t init, char *err, size_t errlen)
{
    pid_t pid;
    if (unix_peer_pid(fd, &pid, err, errlen) < 0)
        return -1;
    int pidfd = -1;
    socklen_t len = sizeof(pidfd);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) < 0)
        pidfd = -1; /* an older kernel: the pid alone */
    int rc = unix_peer_check_process(pid, exe, init, err, errlen);
    if (rc == 0 && pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0) {
        snprintf(err, errlen, "its server, process %d, exited while it was checked", (int)pid);
        rc = -2;
    }
    if (pidfd >= 0)
        close(pidfd);
    return rc;
}
