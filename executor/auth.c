#include "auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* memset that the compiler may not drop (the buffer is freed or goes out of use next). */
static void wipe(void *p, size_t n)
{
    volatile unsigned char *v = p;
    while (n--)
        *v++ = 0;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

char *auth_key_load_file(const char *path, struct buf *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    struct stat st;
    if (fd < 0) {
        buf_printf(err, "cannot open the API key file %s: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        buf_printf(err, "the API key file %s is not a regular file", path);
        close(fd);
        return NULL;
    }
    if (st.st_uid != geteuid() || (st.st_mode & 077)) {
        buf_printf(err,
                   "the API key file %s must belong to uid %ld and be readable by it alone "
                   "(chmod 600); it is uid %ld, mode %03o",
                   path, (long)geteuid(), (long)st.st_uid, (unsigned)(st.st_mode & 0777));
        close(fd);
        return NULL;
    }
    char raw[AUTH_KEY_MAX + 2];
    size_t len = 0;
    for (;;) {
        ssize_t n = read(fd, raw + len, sizeof raw - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            buf_printf(err, "cannot read the API key file %s: %s", path, strerror(errno));
            close(fd);
            wipe(raw, sizeof raw);
            return NULL;
        }
        if (n == 0 || (len += (size_t)n) == sizeof raw - 1)
            break;
    }
    close(fd);
    size_t a = 0, b = len;
    while (a < b && is_space(raw[a]))
        a++;
    while (b > a && is_space(raw[b - 1]))
        b--;
    char *key = NULL;
    if (len > AUTH_KEY_MAX)
        buf_printf(err, "the API key in %s is longer than %d bytes", path, AUTH_KEY_MAX);
    else if (a == b)
        buf_printf(err, "the API key file %s is empty", path);
    else if (memchr(raw + a, '\0', b - a))
        buf_printf(err, "the API key in %s holds a NUL byte", path);
    else if (!(key = strndup(raw + a, b - a)))
        buf_printf(err, "out of memory");
    wipe(raw, sizeof raw);
    return key;
}

char *auth_key_take_env(void)
{
    char *v = getenv(AUTH_ENV);
    if (!v)
        return NULL;
    char *key = *v ? strdup(v) : NULL;
    /* The value lives in the memory /proc/<pid>/environ shows: blank it there too. */
    wipe(v, strlen(v));
    unsetenv(AUTH_ENV);
    return key;
}

bool auth_key_matches(const char *key, const char *given)
{
    if (!key)
        return true;
    if (!given)
        return false;
    size_t kl = strlen(key), gl = strlen(given);
    /* Every byte of the key is compared whatever the header holds. */
    unsigned diff = kl != gl;
    for (size_t i = 0; i < kl; i++)
        diff |= (unsigned char)key[i] ^ (unsigned char)(i < gl ? given[i] : 0);
    return diff == 0;
}

void auth_key_free(char *key)
{
    if (!key)
        return;
    wipe(key, strlen(key));
    free(key);
}
