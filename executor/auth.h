/* The session API key (OpenHands' X-Session-API-Key): where it comes from, and the check.
 *
 * The key is read once at start, from a file that only the executor's uid can read
 * (--api-key-file), or from the SESSION_API_KEY environment variable, which is then wiped and
 * removed from the executor's environment so no child (the agent's shell) inherits it. */
#ifndef PADDOCK_EXECUTOR_AUTH_H
#define PADDOCK_EXECUTOR_AUTH_H

#include <stdbool.h>

#include "common/buf.h"

#define AUTH_HEADER "X-Session-API-Key"
#define AUTH_ENV "SESSION_API_KEY"
#define AUTH_KEY_MAX 4096

/* Reads the key from path: a regular file owned by the effective uid, with no permission for
 * group or others; surrounding whitespace is dropped and an empty key is an error.
 * Returns a malloc'ed key, or NULL with a message. */
char *auth_key_load_file(const char *path, struct buf *err);
/* Takes the key from the environment: returns a malloc'ed copy (NULL when unset or empty)
 * after overwriting the value in place and unsetting the variable. */
char *auth_key_take_env(void);
/* Constant-time comparison of the configured key with a header value (NULL: no header). */
bool auth_key_matches(const char *key, const char *given);
/* Overwrites and frees a key. */
void auth_key_free(char *key);

#endif
