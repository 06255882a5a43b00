#include "engine/base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

char *util_vstrdupf(const char *fmt, va_list ap)
{
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    return s;
}

char *util_strdupf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = util_vstrdupf(fmt, ap);
    va_end(ap);
    return s;
}

double util_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int util_random_hex(char *out, size_t nbytes)
{
    unsigned char b[64];
    if (nbytes > sizeof(b) || getrandom(b, nbytes, 0) != (ssize_t)nbytes)
        return -1;
    for (size_t i = 0; i < nbytes; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
    out[2 * nbytes] = '\0';
    return 0;
}

int util_mkdir_p(const char *path, unsigned mode)
{
    char *p = strdup(path);
    if (!p)
        return -1;
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, mode) < 0 && errno != EEXIST) {
            free(p);
            return -1;
        }
        *s = '/';
    }
    int rc = mkdir(p, mode) < 0 && errno != EEXIST ? -1 : 0;
    free(p);
    return rc;
}

/* Deeper directories are moved up into the top one first, so any depth is removed with a
 * bounded stack and number of open directories. */
#define UTIL_REMOVE_DEPTH 32

/* Move dir's entry name into top under a name of its own; 0 or -1. */
static int util_remove_hoist(int dir, const char *name, int top, unsigned *hoisted)
{
    for (int tries = 0; tries < 1000; tries++) {
        char to[32];
        snprintf(to, sizeof(to), ".paddock-rm-%u", (*hoisted)++);
        if (renameat2(dir, name, top, to, RENAME_NOREPLACE) == 0)
            return 0;
        if (errno != EEXIST)
            return -1;
    }
    return -1;
}

/* Remove what the directory dfd (taken) holds, never following a link nor leaving its
 * filesystem (dev). -1 when something could not be removed. */
static int util_remove_in(int top, int dfd, dev_t dev, int depth, unsigned *hoisted)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *n = e->d_name;
        if (n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0')))
            continue;
        /* Whatever is not a directory (a symlink included) goes by its own name. */
        if (unlinkat(dirfd(d), n, 0) == 0 || errno == ENOENT)
            continue;
        if (errno != EISDIR && errno != EPERM) {
            rc = -1;
            continue;
        }
        if (depth >= UTIL_REMOVE_DEPTH) {
            if (util_remove_hoist(dirfd(d), n, top, hoisted) < 0)
                rc = -1;
            continue;
        }
        int sub = openat(dirfd(d), n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (sub < 0 || fstat(sub, &st) < 0 || st.st_dev != dev) {
            if (sub >= 0)
                close(sub);
            rc = -1;
            continue;
        }
        if (util_remove_in(top, sub, dev, depth + 1, hoisted) < 0)
            rc = -1;
        if (unlinkat(dirfd(d), n, AT_REMOVEDIR) < 0 && errno != ENOENT)
            rc = -1;
    }
    closedir(d);
    return rc;
}

int util_remove_tree(const char *path)
{
    int top = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (top < 0) {
        if (errno == ENOENT)
            return 0;
        /* A link (or a file) where the tree was: remove it, not what it names. */
        if (errno == ENOTDIR || errno == ELOOP)
            return unlink(path) < 0 && errno != ENOENT ? -1 : 0;
        return -1;
    }
    struct stat st;
    int rc = fstat(top, &st);
    unsigned hoisted = 0, before;
    do { /* again while directories were moved up into top */
        before = hoisted;
        /* A description of its own: one dup'd from top would keep the last pass's offset. */
        int fd = rc == 0 ? openat(top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
        rc = fd < 0 ? -1 : util_remove_in(top, fd, st.st_dev, 0, &hoisted);
    } while (hoisted != before);
    close(top);
    if (rmdir(path) < 0 && errno != ENOENT)
        rc = -1;
    return rc;
}

bool util_is_hex_id(const char *s, size_t len_min, size_t len_max)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
            return false;
    return n >= len_min && n <= len_max;
}
