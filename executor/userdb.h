/* The session's user in the container's user database, and its working dir.
 *
 * The engine names the agent (--username: OpenHands' `openhands`, paddock's `agent`) and its
 * uid (--user-id), whatever the image calls that uid; whoami, id -un, getent, `~` expansion
 * and git's author guess ask /etc/passwd. At start, as container root and before the shell
 * exists, the executor makes the image's files say that, as OpenHands' `useradd` at start
 * does: the image's other entries stay. The files stay root's: the agent (never root when
 * this runs) cannot change them (docs/security.md, "The agent's name"). */
#ifndef PADDOCK_EXECUTOR_USERDB_H
#define PADDOCK_EXECUTOR_USERDB_H

#include <stdbool.h>
#include <sys/types.h>

#include "common/buf.h"

struct userdb_user {
    const char *name;
    uid_t uid;
    gid_t gid;
    const char *home;
    const char *shell;
};

/* A name passwd can hold: 1-32 of [A-Za-z0-9_.-], not starting with '-'. */
bool userdb_name_valid(const char *name);

/* Makes <etc>/passwd name u first for its uid: u's line (NAME:x:UID:GID:GECOS:HOME:SHELL, the
 * GECOS and shell of an entry of that name kept, else the shell of the uid's) replaces the first
 * line with its name or goes before the first line with its uid (else at the end), and other lines
 * of that name go; <etc>/group gets NAME:x:GID: when no group has the gid or the name. A file that
 * already says so is left alone; a changed one is replaced by rename (never written through a
 * symlink), with the old one's owner and mode. 1 changed, 0 nothing to change, -1 with err. */
int userdb_name_user(const char *etc, const struct userdb_user *u, struct buf *err);

/* Gives dir and everything under it on the same filesystem to uid:gid (symlinks themselves,
 * never followed), when dir is not uid's already: OpenHands' chown of its workspace. -1 with
 * err on the first failure. */
int userdb_own_tree(const char *dir, uid_t uid, gid_t gid, struct buf *err);

#endif
