/* Blocking descriptor I/O that every part needs the same way. */
#ifndef PADDOCK_COMMON_IO_H
#define PADDOCK_COMMON_IO_H

#include <stddef.h>
#include <sys/types.h>

/* Writes all n bytes to fd, retrying after EINTR and short writes. 0, or -1 with errno set
 * (a write that makes no progress counts as a failure instead of spinning). */
int io_write_all(int fd, const void *data, size_t n);
/* Reads exactly n bytes from fd, at offset off (pread) or, with off < 0, where fd stands
 * (read), retrying after EINTR and short reads. 0, or -1: errno set by a failed read, or 0
 * when the data ends first. */
int io_read_full(int fd, void *data, size_t n, off_t off);
/* openat2(2) (how: a struct open_how of size bytes), tried again while it fails with EAGAIN:
 * with RESOLVE_BENEATH or RESOLVE_IN_ROOT the kernel gives up on a ".." when any mount or
 * rename happened on the machine during the lookup (Docker mounts at every container start),
 * and asks the caller to retry. A descriptor, or -1 with errno set. */
int io_openat2(int dirfd, const char *path, const void *how, size_t size);

#endif
