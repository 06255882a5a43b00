/* File access for the file actions: never blocks, never follows into anything but regular
 * files, bounded reads, Python-style error texts.
 *
 * These run in the file-action child (fsjob.c) with the agent's credentials, so what the
 * kernel lets the agent open is what they can open. Opening is O_NONBLOCK and the type is
 * checked on the open descriptor: a FIFO, socket or device is refused, never read. */
#ifndef PADDOCK_EXECUTOR_FILEIO_H
#define PADDOCK_EXECUTOR_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "common/buf.h"

/* Returned (negated errno aside) when the path is not a regular file or directory. */
#define FILEIO_ESPECIAL 100000

/* The first bytes binary detection looks at. */
#define FILEIO_SNIFF_BYTES 1024

/* Opens a regular file with open(2) flags (O_CREAT: mode 0666 minus the umask). Returns the
 * fd, or -errno (-EISDIR for a directory, -FILEIO_ESPECIAL for a FIFO, socket or device;
 * st then tells which). Never blocks on a FIFO, never takes a controlling tty. */
int fileio_open(const char *path, int flags, struct stat *st);
/* fileio_open(path, O_RDONLY, st). */
int fileio_open_read(const char *path, struct stat *st);
/* Reads the rest of fd into out. Returns 0, -errno, or -EFBIG when more than limit bytes. */
int fileio_read_all(int fd, size_t limit, struct buf *out);
/* Replaces the whole content of fd with data. Returns 0 or -errno; when there is no room for
 * data (ENOSPC, EDQUOT, EFBIG) the old content is left as it was. */
int fileio_replace(int fd, const char *data, size_t n);
/* Reads up to FILEIO_SNIFF_BYTES of path's start. Returns the count, or -errno. */
int fileio_sniff(const char *path, char *out);

/* "FIFO", "socket", "character device", "block device", "special file". */
const char *fileio_kind(mode_t mode);
/* Binary content by its first bytes (see fileio.c for the rule). */
bool fileio_is_binary(const char *data, size_t n);

/* Python's str() of an OSError: "[Errno 2] No such file or directory: '/a/b'". */
int fileio_oserror(struct buf *out, int err, const char *path);
/* strerror() with glibc's texts, so the static (musl) and host builds say the same. */
const char *fileio_strerror(int err);

#endif
