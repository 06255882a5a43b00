/* Blocking descriptor I/O that every part needs the same way. */
#ifndef PADDOCK_COMMON_IO_H
#define PADDOCK_COMMON_IO_H

#include <stddef.h>

/* Writes all n bytes to fd, retrying after EINTR and short writes. 0, or -1 with errno set
 * (a write that makes no progress counts as a failure instead of spinning). */
int io_write_all(int fd, const void *data, size_t n);

#endif
