/* Host mount policy (docs/architecture.md, "Mount policy"). A path is refused when it equals a
 * denied path or contains one (mounting /home/op exposes ~/.ssh: the ancestor rule), and, for the
 * "tree" entries, when it lies inside one. Then it must lie strictly inside an allowed prefix.
 * Everything is compared after realpath(), so symlinks and ".." cannot walk around it. */
#include "engine/mount_policy.h"

#include "common/buf.h"
#include "common/io.h"
#include "engine/base/util.h"
#include "engine/driver.h"
#include "engine/engine_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A directory with more entries than this is not scanned further for sockets. */
#define MOUNT_SCAN_MAX 4096

struct mount_deny {
    const char *path;
    bool tree; /* also refuse what lies inside it */
    const char *what;
};

static const struct mount_deny mount_deny_fixed[] = {
    {"/", false, "the host's root"},
    {"/etc", true, "host configuration"},
    {"/proc", true, "the kernel's process filesystem"},
    {"/sys", true, "the kernel's sysfs"},
    {"/dev", true, "host devices"},
    {"/boot", true, "the host's boot files"},
    {"/run", true, "runtime state and sockets (Docker's among them)"},
    {"/var/run", true, "runtime state and sockets (Docker's among them)"},
    {"/var/lib/docker", true, "Docker's data"},
    {"/var/lib/containerd", true, "containerd's data"},
    {"/usr", true, "host programs"},
    {"/bin", true, "host programs"},
    {"/sbin", true, "host programs"},
    {"/lib", true, "host libraries"},
    {"/lib32", true, "host libraries"},
    {"/lib64", true, "host libraries"},
    {"/libx32", true, "host libraries"},
    {"/home", false, "every user's home"},
    {"/root", true, "root's home"},
};

/* a lies strictly inside b. */
static bool mount_is_under(const char *a, const char *b)
{
    size_t n = strlen(b);
    if (n == 1 && b[0] == '/')
        return a[0] == '/' && a[1] != '\0';
    return strncmp(a, b, n) == 0 && a[n] == '/';
}

/* realpath, or a copy of p when it does not resolve (a denied path that does not exist). */
static char *mount_resolve(const char *p)
{
    char *r = realpath(p, NULL);
    return r ? r : strdup(p);
}

static char *mount_home(void)
{
    const char *h = getenv("HOME");
    if (!h || h[0] != '/') {
        struct passwd *pw = getpwuid(geteuid());
        h = pw ? pw->pw_dir : NULL;
    }
    return h && h[0] == '/' ? mount_resolve(h) : NULL;
}

/* The reason cand is refused by rule (denied path already resolved), or NULL. */
static char *mount_deny_reason(const char *cand, const char *rule, bool tree, const char *what)
{
    if (strcmp(cand, rule) == 0)
        return util_strdupf("is denied (%s)", what);
    if (mount_is_under(rule, cand))
        return util_strdupf("contains %s, which is denied (%s)", rule, what);
    if (tree && mount_is_under(cand, rule))
        return util_strdupf("is inside %s, which is denied (%s)", rule, what);
    return NULL;
}

static char *mount_denied(const struct engine *eng, const char *cand, const char *home)
{
    char *why = NULL;
    for (size_t i = 0; !why && i < sizeof(mount_deny_fixed) / sizeof(mount_deny_fixed[0]); i++) {
        const struct mount_deny *d = &mount_deny_fixed[i];
        char *rule = mount_resolve(d->path);
        /* When the engine runs as root, /root is $HOME: its non-dot subdirs are allowed. */
        if (rule && !(home && strcmp(rule, home) == 0))
            why = mount_deny_reason(cand, rule, d->tree, d->what);
        free(rule);
    }
    const char *sock = eng->driver ? eng->driver->address(eng) : NULL;
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    const char *agent = getenv("SSH_AUTH_SOCK");
    struct mount_deny dyn[] = {
        {home, false, "your home directory (its dot-files hold credentials)"},
        {eng->state_dir, true, "the engine's state dir"},
        {eng->executor_path, false, "the executor binary"},
        {eng->socket_path, false, "the engine's API socket"},
        {sock, false, "the Docker socket"},
        {"/var/run/docker.sock", false, "the Docker socket"},
        {xdg && xdg[0] == '/' ? xdg : NULL, true, "your runtime dir (its sockets)"},
        {agent && agent[0] == '/' ? agent : NULL, false, "your ssh agent's socket"},
    };
    for (size_t i = 0; !why && i < sizeof(dyn) / sizeof(dyn[0]); i++) {
        if (!dyn[i].path)
            continue;
        char *rule = mount_resolve(dyn[i].path);
        if (rule)
            why = mount_deny_reason(cand, rule, dyn[i].tree, dyn[i].what);
        free(rule);
    }
    if (!why && home && mount_is_under(cand, home)) {
        const char *first = cand + strlen(home) + (strcmp(home, "/") ? 1 : 0);
        if (first[0] == '.')
            why = util_strdupf("is a dot-directory of your home (credentials and configuration "
                               "live there)");
    }
    return why;
}

/* Inside one allowed prefix: NULL; else why, listing the prefixes. */
static char *mount_not_allowed(const char *cand, const char *home)
{
    const char *env = getenv("PADDOCK_VOLUME_ALLOW");
    char *list = strdup(env && *env ? env : MOUNT_POLICY_DEFAULT_ALLOW);
    struct buf shown = {0};
    bool ok = false;
    char *save = NULL;
    for (char *p = list ? strtok_r(list, ":", &save) : NULL; p && !ok;
         p = strtok_r(NULL, ":", &save)) {
        const char *prefix = strcmp(p, "$HOME") == 0 ? home : p;
        if (!prefix || prefix[0] != '/')
            continue;
        char *r = realpath(prefix, NULL);
        if (!r)
            continue;
        if (shown.len)
            buf_append(&shown, ", ", 2);
        buf_append(&shown, r, strlen(r));
        ok = mount_is_under(cand, r);
        free(r);
    }
    free(list);
    char *why = ok ? NULL
                   : util_strdupf("is not inside an allowed prefix (%s; set PADDOCK_VOLUME_ALLOW "
                                  "to colon-separated prefixes)",
                                  shown.len ? shown.data : "none exists");
    buf_free(&shown);
    return why;
}

/* A socket in the directory itself: read-only mounts do not stop connect(). */
static char *mount_socket_inside(int dir_fd)
{
    int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    if (!d) {
        char *why = util_strdupf("cannot be read: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return why;
    }
    char *why = NULL;
    struct dirent *e;
    for (int n = 0; !why && n < MOUNT_SCAN_MAX && (e = readdir(d)); n++) {
        bool sock = e->d_type == DT_SOCK;
        if (e->d_type == DT_UNKNOWN) {
            struct stat st;
            sock =
                fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode);
        }
        if (sock)
            why = util_strdupf("contains the unix socket %.200s (a mounted socket can be "
                               "connected to, even read-only)",
                               e->d_name);
    }
    closedir(d);
    return why;
}

int mount_policy_check(const struct engine *eng, const char *path, bool want_dir, char **resolved,
                       struct mount_id *id, char **why)
{
    *resolved = NULL;
    *why = NULL;
    if (path[0] != '/') {
        *why = util_strdupf("%.300s is not an absolute path", path);
        return -1;
    }
    char *r = realpath(path, NULL);
    if (!r) {
        *why = util_strdupf("%.300s: %s", path, strerror(errno));
        return -1;
    }
    char *home = mount_home();
    char *reason = NULL;
    struct stat st;
    /* realpath's result has no link in it: one that appeared since was swapped in. What is
     * checked from here on is this open inode, not the name. */
    struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
    int fd = io_openat2(AT_FDCWD, r, &how, sizeof(how));
    if (fd < 0 && errno == ELOOP)
        reason = strdup("changed while it was checked (a symbolic link appeared in its path)");
    else if (fd < 0 || fstat(fd, &st) < 0)
        reason = util_strdupf("cannot be read: %s", strerror(errno));
    else if (S_ISSOCK(st.st_mode))
        reason = strdup("is a unix socket");
    else if (want_dir && !S_ISDIR(st.st_mode))
        reason = strdup("is not a directory");
    else if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
        reason = strdup("is neither a directory nor a regular file");
    if (!reason)
        reason = mount_denied(eng, r, home);
    if (!reason)
        reason = mount_not_allowed(r, home);
    if (!reason && S_ISDIR(st.st_mode))
        reason = mount_socket_inside(fd);
    if (fd >= 0)
        close(fd);
    free(home);
    if (!reason) {
        *resolved = r;
        if (id)
            *id = (struct mount_id){.dev = st.st_dev, .ino = st.st_ino, .set = true};
        return 0;
    }
    if (strcmp(r, path) == 0)
        *why = util_strdupf("%.300s %s", path, reason);
    else
        *why = util_strdupf("%.300s (resolved: %.300s) %s", path, r, reason);
    free(reason);
    free(r);
    return -1;
}

int mount_policy_verify(pid_t pid, const char *target, const struct mount_id *id, char **why)
{
    *why = NULL;
    char root[64];
    snprintf(root, sizeof(root), "/proc/%ld/root", (long)pid);
    /* A bind mount shows its source's own inode at the target; the target is resolved inside
     * the container's root so that a link in the image cannot point the look elsewhere. */
    int rfd = pid > 0 ? open(root, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
    if (rfd < 0) {
        *why = util_strdupf("cannot look into the container to check what is mounted at %.300s "
                            "(%s)",
                            target, pid > 0 ? strerror(errno) : "no process");
        return -1;
    }
    struct open_how how = {.flags = O_PATH | O_CLOEXEC,
                           .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
    int fd = io_openat2(rfd, target, &how, sizeof(how));
    struct stat st;
    int rc = fd >= 0 ? fstat(fd, &st) : -1;
    int e = errno;
    if (fd >= 0)
        close(fd);
    close(rfd);
    if (rc < 0) {
        *why = util_strdupf("cannot check what is mounted at %.300s: %s", target, strerror(e));
        return -1;
    }
    if (st.st_dev != id->dev || st.st_ino != id->ino) {
        *why = util_strdupf("what Docker mounted at %.300s is not the directory that was checked "
                            "(its path was changed between the check and the mount)",
                            target);
        return -1;
    }
    return 0;
}
