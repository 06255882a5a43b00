/* The agent shell's environment: the container's, minus secrets, plus a known base. */
#ifndef PADDOCK_EXECUTOR_ENV_H
#define PADDOCK_EXECUTOR_ENV_H

#include <stdbool.h>
#include <stddef.h>

#include "common/buf.h"

#define ENV_DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

struct env_params {
    const char *home;
    const char *user;
    const char *shell;
    const char *hostname;
    const char *allow; /* PADDOCK_ENV_ALLOW: credential-named variables let through, or NULL */
};

/* A NULL-terminated, malloc'ed "K=V" array built from `inherited` (usually environ), without
 * the names that look like credentials (common/env_secret.h) unless p->allow lists them.
 * Returns NULL when memory runs out. */
char **env_build(char *const *inherited, const struct env_params *p);
void env_free(char **env);
/* The value of name in env, or NULL. */
const char *env_get(char *const *env, const char *name);

/* Variables added to the live shell (--env-file at start, POST /env later). Names are
 * upper-cased, as OpenHands' add_env_vars does. */
struct env_var {
    char *name;
    char *value;
    size_t len;
};

/* [A-Za-z_][A-Za-z0-9_]* */
bool env_name_valid(const char *name);
/* Names that would stop the shell from reporting (PROMPT_COMMAND, PS1, PS2). */
bool env_name_reserved(const char *name);
/* value as a double-quoted shell word that reads back exactly: \ " $ ` escaped, the rest
 * (newlines, UTF-8) as it is; NUL bytes dropped. Identical to json.dumps for plain text. */
int env_quote(struct buf *out, const char *value, size_t n);
/* value as a single-quoted shell word ('\'' for quotes; NUL bytes dropped). */
int env_squote(struct buf *out, const char *value, size_t n);
/* Appends (upper-cased) name=value to the array; a name given again replaces its value. */
int env_vars_add(struct env_var **vars, size_t *n, const char *name, size_t name_len,
                 const char *value, size_t value_len);
void env_vars_free(struct env_var *vars, size_t n);
/* The command that exports vars in the live shell and appends `export K=<quoted V>` to
 * ~/.bashrc for each K that has no line starting with `export K=` there yet (OpenHands'
 * rule). Its exit code is 0 only when all of that worked. */
int env_script_add(struct buf *out, const struct env_var *vars, size_t n);
/* Reads KEY=VALUE lines (docker's --env-file format: no quoting, `#` comments, blank lines;
 * a bare KEY takes its value from environ_ when set). -1 with a message on a bad line. */
int env_file_read(const char *path, char *const *environ_, struct env_var **vars, size_t *n,
                  struct buf *err);

#endif
