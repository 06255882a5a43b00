/* Cloning a session's workspace from a git repository, on the engine loop. The token reaches
 * only the environment of the git child (GIT_CONFIG_* → an http.extraHeader): never argv,
 * never a file, never a message. */
#ifndef PADDOCK_GIT_H
#define PADDOCK_GIT_H

#include <stdbool.h>
#include <sys/types.h>

struct loop;

struct git_clone_spec {
    const char *url;   /* http(s)://host/path, no credentials in it */
    const char *token; /* NULL: anonymous */
    const char *ref;   /* branch, tag or full commit id; NULL: the remote's HEAD */
    const char *dir;   /* an existing empty directory */
    bool chown;        /* give the checkout to owner_uid:owner_gid afterwards */
    uid_t owner_uid;
    gid_t owner_gid;
    long timeout_ms; /* per git step */
};

/* err: NULL on success, else why (the token scrubbed out), valid during the call. */
typedef void (*git_done_fn)(const char *err, void *ud);

/* True for a URL git_clone_start accepts; else *why says what is wrong. */
bool git_url_valid(const char *url, const char **why);
/* True for a ref name or commit id safe to pass to git. */
bool git_ref_valid(const char *ref);

/* Starts the clone; fn is called once, later. Returns 0, or -1 with *err (malloc'd). */
int git_clone_start(struct loop *l, const struct git_clone_spec *spec, git_done_fn fn, void *ud,
                    char **err);

#endif
