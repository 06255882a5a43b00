/* The agent shell's environment: the container's, minus secrets, plus a known base. */
#ifndef PADDOCK_EXECUTOR_ENV_H
#define PADDOCK_EXECUTOR_ENV_H

#include <stdbool.h>
#include <stddef.h>

#define ENV_DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

struct env_params {
    const char *home;
    const char *user;
    const char *shell;
    const char *hostname;
};

/* True for names that look like credentials (API keys, tokens, passwords...). */
bool env_is_secret(const char *name, size_t len);
/* A NULL-terminated, malloc'ed "K=V" array built from `inherited` (usually environ).
 * Returns NULL when memory runs out. */
char **env_build(char *const *inherited, const struct env_params *p);
void env_free(char **env);
/* The value of name in env, or NULL. */
const char *env_get(char *const *env, const char *name);
/* The first executable file called name in env's PATH, into out. -1 when there is none. */
int env_which(char *const *env, const char *name, char *out, size_t outlen);

#endif
