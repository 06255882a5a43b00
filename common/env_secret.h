/* Which environment variable names look like credentials. One list for the engine (what a
 * create withholds from the sandbox) and the executor (what the agent's shell inherits). */
#ifndef PADDOCK_COMMON_ENV_SECRET_H
#define PADDOCK_COMMON_ENV_SECRET_H

#include <stdbool.h>
#include <stddef.h>

/* The word that makes the first len bytes of name look like a credential ("TOKEN" for
 * GITHUB_TOKEN, "_AUTH" for NPM_AUTH), or NULL when they do not. Case-insensitive. */
const char *env_secret_word(const char *name, size_t len);

/* True when the comma-separated list (NULL: empty) holds exactly the first len bytes of
 * name: the names a create let through on purpose (PADDOCK_ENV_ALLOW in the container). */
bool env_secret_allowed(const char *list, const char *name, size_t len);

#endif
