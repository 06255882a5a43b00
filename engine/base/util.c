#include "engine/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
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

static int util_remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

int util_remove_tree(const char *path)
{
    int rc = nftw(path, util_remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
    return rc < 0 && errno == ENOENT ? 0 : rc;
}

bool util_is_hex_id(const char *s, size_t len_min, size_t len_max)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
            return false;
    return n >= len_min && n <= len_max;
}
