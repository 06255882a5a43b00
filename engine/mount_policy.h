/* Which host paths a session may mount (volumes, workspace): a denylist, then an allowlist
 * (PADDOCK_VOLUME_ALLOW), both applied to the path with symlinks and ".." resolved. */
#ifndef PADDOCK_MOUNT_POLICY_H
#define PADDOCK_MOUNT_POLICY_H

#include <stdbool.h>

struct engine;

/* The allowlist when PADDOCK_VOLUME_ALLOW is unset: /tmp and the engine user's $HOME
 * (whose dot-directories and itself the denylist refuses). */
#define MOUNT_POLICY_DEFAULT_ALLOW "/tmp:$HOME"

/* 0 when path may be mounted: *resolved is its realpath (malloc'd), the one to mount. Else -1
 * and *why (malloc'd) says why, naming the path. want_dir: it must be a directory. */
int mount_policy_check(const struct engine *eng, const char *path, bool want_dir, char **resolved,
                       char **why);

#endif
