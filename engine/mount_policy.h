/* Which host paths a session may mount (volumes, workspace): a denylist, then an allowlist
 * (PADDOCK_VOLUME_ALLOW), both applied to the path with symlinks and ".." resolved. */
#ifndef PADDOCK_MOUNT_POLICY_H
#define PADDOCK_MOUNT_POLICY_H

#include <stdbool.h>
#include <sys/types.h>

struct engine;

/* What a checked path named when it was checked: Docker resolves the path again when it
 * mounts it, so what is mounted is compared with this after the start. */
struct mount_id {
    dev_t dev;
    ino_t ino;
    bool set;
};

/* The allowlist when PADDOCK_VOLUME_ALLOW is unset: /tmp and the engine user's $HOME
 * (whose dot-directories and itself the denylist refuses). */
#define MOUNT_POLICY_DEFAULT_ALLOW "/tmp:$HOME"

/* 0 when path may be mounted: *resolved is its realpath (malloc'd), the one to mount, and *id
 * (when not NULL) what it named, opened without following a link. Else -1 and *why (malloc'd)
 * says why, naming the path. want_dir: it must be a directory. */
int mount_policy_check(const struct engine *eng, const char *path, bool want_dir, char **resolved,
                       struct mount_id *id, char **why);

/* 0 when what the container whose first process is pid shows at target (resolved inside its
 * root) is id. Else -1 and *why (malloc'd): it differs, or cannot be seen (fail closed). */
int mount_policy_verify(pid_t pid, const char *target, const struct mount_id *id, char **why);

#endif
