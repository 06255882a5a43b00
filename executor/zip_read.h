/* Unpacking a zip archive into a directory, refusing anything unsafe.
 *
 * The whole central directory is checked before anything is written: an archive with an
 * absolute name, a `..` component, a NUL byte, a symlink entry, encryption, an unsupported
 * method (only stored and deflate), more entries than the limit or a declared total size
 * over the limit is refused as a whole. While unpacking, an entry that inflates to more (or
 * less) than it declared, or whose CRC-32 differs, stops the extraction. Paths are walked one
 * component at a time from the destination's descriptor with O_NOFOLLOW, so no symlink (made
 * by the archive or already there) is ever followed out of the destination. An existing file
 * or symlink at an entry's path is replaced (unlinked, then created); an existing directory
 * is reused. Zip64 archives are read. */
#ifndef PADDOCK_EXECUTOR_ZIP_READ_H
#define PADDOCK_EXECUTOR_ZIP_READ_H

#include <stdint.h>

#include "common/buf.h"

struct zip_limits {
    uint64_t max_total;   /* sum of the entries' uncompressed sizes */
    uint64_t max_entries; /* entries, directories included */
};

enum zip_result {
    ZIP_OK = 0,
    ZIP_REFUSED = -1, /* not a zip, damaged, or unsafe: a message in err */
    ZIP_SYSTEM = -2,  /* a file system error: a message in err, errno set */
};

/* Unpacks the archive in zip_fd (read with pread, so any offset) below dest_dirfd. */
enum zip_result zip_extract(int zip_fd, int dest_dirfd, const struct zip_limits *lim,
                            struct buf *err);

#endif
