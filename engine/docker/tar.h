/* A tiny ustar writer: a build context (Dockerfile, the executor, extra files) made in memory. */
#ifndef PADDOCK_TAR_H
#define PADDOCK_TAR_H

#include "common/buf.h"

#include <stddef.h>

struct tar {
    struct buf buf; /* the archive so far; complete after tar_finish */
};

/* Add a regular file (owner 0:0, mtime 0 so equal contents give equal archives). name is
 * relative, without "..", at most 255 bytes (split into ustar's prefix and name). Returns 0,
 * or -1 with a reason in *err (static text). */
int tar_add_file(struct tar *t, const char *name, const void *data, size_t len, unsigned mode,
                 const char **err);
/* Add a directory entry ("dir" or "dir/"). Same rules. */
int tar_add_dir(struct tar *t, const char *name, unsigned mode, const char **err);
/* Append the two zero blocks that end an archive. 0 or -1 (out of memory). */
int tar_finish(struct tar *t);
void tar_free(struct tar *t);

#endif
