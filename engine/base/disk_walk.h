/* Measuring the space a directory tree takes, in small steps, on trees a sandbox writes: no
 * link is followed (every entry is looked at with fstatat(AT_SYMLINK_NOFOLLOW), every directory
 * opened with openat(O_NOFOLLOW | O_DIRECTORY) relative to its parent), no other filesystem
 * entered, nothing but directories opened, and the bytes counted are the blocks allocated
 * (st_blocks), so a sparse file counts what it takes. A hard-linked file counts once per name
 * (more, never less). The disk watchdog (engine/disk.c) runs it between other work on the loop. */
#ifndef PADDOCK_DISK_WALK_H
#define PADDOCK_DISK_WALK_H

#include <stdbool.h>

/* Deeper directories than this are not entered: the walk fails (disk_walk_step -1), since what
 * they hold cannot be counted. */
#define DISK_WALK_MAX_DEPTH 256

struct disk_walk;

/* An empty walk; NULL when out of memory. */
struct disk_walk *disk_walk_new(void);
/* Add the tree at path (a trusted path: its own components are not a sandbox's; what is under
 * it may be). A path that does not exist adds nothing. 0, or -1 with *err (malloc'd) when it
 * is not a directory or cannot be opened. */
int disk_walk_add(struct disk_walk *w, const char *path, char **err);
/* Look at up to budget more entries: 1 when there is more to do, 0 when done; -1 with *err
 * (malloc'd) when a tree cannot be opened or out of memory; -2 with *err when a tree is deeper
 * than DISK_WALK_MAX_DEPTH (what it holds cannot be counted). Entries that vanish or change
 * kind meanwhile are skipped. */
int disk_walk_step(struct disk_walk *w, unsigned budget, char **err);
/* Bytes counted so far, and entries looked at. */
long long disk_walk_bytes(const struct disk_walk *w);
long long disk_walk_entries(const struct disk_walk *w);
void disk_walk_free(struct disk_walk *w);

#endif
