/* `which` without a fork: the first executable NAME along a PATH. The one PATH search of the
 * executor (the shell, python3, a browser, py_interpreter_path). */
#ifndef PADDOCK_EXECUTOR_WHICH_H
#define PADDOCK_EXECUTOR_WHICH_H

#include <stdbool.h>
#include <stddef.h>

/* Looks for name in each entry of path_env (':'-separated). With a cwd, as the agent's shell
 * would: an empty entry is cwd and relative entries are taken from it. Without one (the
 * executor's own lookups), empty and relative entries are skipped. Executable means a
 * regular file with an execute bit that access(X_OK) allows. Returns true with the path in
 * out; false with out "". */
bool which_find(const char *path_env, const char *cwd, const char *name, char *out, size_t outlen);
/* which_find in the PATH of an environment array (the default PATH when it has none). */
bool which_find_env(char *const *envp, const char *name, char *out, size_t outlen);
/* OpenHands' py_interpreter_path (`which python`): python, else python3 (images that only
 * ship python3); "" when neither is found. */
void which_python(const char *path_env, const char *cwd, char *out, size_t outlen);

#endif
