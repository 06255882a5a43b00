/* The gitinfo plugin: the git branch and commit of a command's working directory in the
 * metadata of each completed `run` observation:
 *
 *   "git_branch": "main"       null on a detached HEAD or outside a repository
 *   "git_commit": "<hex id>"   null outside a repository or before the first commit
 *
 * Read from the repository's files (HEAD, commondir, refs, packed-refs); no git binary is
 * needed and nothing is written. When the shell runs as another user, the files are read by
 * a short-lived child running as that user, so the agent learns nothing it could not read. */
#ifndef PADDOCK_EXECUTOR_GITINFO_H
#define PADDOCK_EXECUTOR_GITINFO_H

#include <jansson.h>
#include <stdbool.h>

#include "marker.h"

#define GITINFO_NAME_MAX 256
#define GITINFO_ID_MAX 64 /* SHA-256 ids; SHA-1 ids have 40 digits */

struct gitinfo {
    bool repo;                       /* a repository was found */
    char branch[GITINFO_NAME_MAX];   /* "" when detached */
    char commit[GITINFO_ID_MAX + 1]; /* "" when unknown */
};

struct executor;

/* Looks the repository of dir up, as the calling process. */
void gitinfo_lookup(const char *dir, struct gitinfo *out);
/* Plugin hook: adds git_branch and git_commit to obs's metadata. */
void gitinfo_on_run(struct executor *ex, const struct marker_info *m, json_t *obs);

#endif
