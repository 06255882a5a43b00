/* Path names as OpenHands spells them: Python's pathlib (PurePosixPath) rules.
 *
 * OpenHands reports paths after pathlib has normalised them (str(Path(p))): repeated
 * slashes collapse, "." components and a trailing slash go, ".." stays, exactly two
 * leading slashes stay. Messages and observations must show the same spelling. */
#ifndef PADDOCK_EXECUTOR_PATHNAME_H
#define PADDOCK_EXECUTOR_PATHNAME_H

#include <stdbool.h>

#include "common/buf.h"

/* Appends str(PurePosixPath(path)); "" becomes ".". */
int pathname_normalize(struct buf *out, const char *path);
bool pathname_is_absolute(const char *path);
/* Appends str(Path(base) / path): path itself when absolute, else base joined with it. */
int pathname_join(struct buf *out, const char *base, const char *path);
/* PurePath.suffix: ".gz" for "a.tar.gz", "" for ".bashrc" or "a.". Points into path. */
const char *pathname_suffix(const char *path);
/* os.path.dirname of a normalised absolute path: "/a/b" -> "/a", "/a" -> "/". */
int pathname_dirname(struct buf *out, const char *path);

#endif
