/* The local backend's settings (the engine config's [local] section) and the engine's use of
 * them. The driver itself is driver_local (driver.h); a session chooses it with
 * "backend": "local" (session_config.c), which the operator must have enabled here. */
#ifndef PADDOCK_DRIVER_LOCAL_H
#define PADDOCK_DRIVER_LOCAL_H

#include <stdbool.h>
#include <stddef.h>

struct engine;
struct sandbox_driver;

struct local_options {
    bool enabled;
    const char *user;  /* the unprivileged user the executor runs as (required) */
    const char *root;  /* where workspaces are made (NULL: /var/lib/paddock-local) */
    bool unsandboxed;  /* allow running without bubblewrap (an operator's decision) */
    const char *bwrap; /* bubblewrap's path (NULL: /usr/bin/bwrap, then /usr/local/bin) */
};

/* Sandbox ids of this driver start with this: a stored session is the local driver's. */
#define LOCAL_ID_PREFIX "local-"

/* The driver of a sandbox id: driver_local for its ids, else the engine's. */
const struct sandbox_driver *local_driver_for(const struct engine *eng, const char *sandbox_id);

/* Check the settings and keep them in eng (nothing when !o->enabled). 0, or -1 with *err. */
int local_setup(struct engine *eng, const struct local_options *o, char **err);
void local_teardown(struct engine *eng);
/* Whether a session may use the local backend now: 0, or -1 with why (the setting to change, or
 * what is missing). */
int local_check_usable(const struct engine *eng, char *why, size_t n);
/* Remove the cgroups of sandboxes that are gone, which a removal left (processes that took
 * longer than its deadline to exit): one try each, never a wait. */
void local_gc(struct engine *eng);
/* The workspace of the sandbox id (a host path, malloc'd), or NULL. */
char *local_workspace(const struct engine *eng, const char *session_id);

#endif
