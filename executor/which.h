/* `which` without a fork: the first executable NAME along a PATH. */
#ifndef PADDOCK_EXECUTOR_WHICH_H
#define PADDOCK_EXECUTOR_WHICH_H

#include <stdbool.h>
#include <stddef.h>

/* Looks for name in each entry of path_env (':'-separated; an empty entry is the current
 * directory, relative entries are taken from cwd). Returns true with the path in out. */
bool which_find(const char *path_env, const char *cwd, const char *name, char *out, size_t outlen);
/* OpenHands' py_interpreter_path (`which python`): python, else python3 (images that only
 * ship python3); "" when neither is found. */
void which_python(const char *path_env, const char *cwd, char *out, size_t outlen);

#endif
