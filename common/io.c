#include "common/io.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

/* Each retry is a fresh lookup; a machine mounting without pause could starve one for ever. */
#define IO_OPENAT2_TRIES 256

int io_write_all(int fd, const void *data, size_t n)
{
    const char *p = data;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        if (w == 0) {
            errno = EIO;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int io_read_full(int fd, void *data, size_t n, off_t off)
{
    char *p = data;
    for (size_t got = 0; got < n;) {
        ssize_t r =
            off < 0 ? read(fd, p + got, n - got) : pread(fd, p + got, n - got, off + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0)
                errno = 0;
            return -1;
        }
        got += (size_t)r;
    }
    return 0;
}

int io_openat2(int dirfd, const char *path, const void *how, size_t size)
{
    for (int i = 0;; i++) {
        long fd = syscall(SYS_openat2, dirfd, path, how, size);
        if (fd >= 0 || errno != EAGAIN || i + 1 == IO_OPENAT2_TRIES)
            return (int)fd;
    }
}
