#include "which.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "env.h"

/* A regular file with an execute bit. The executor may run as root, for whom access(X_OK)
 * says yes to a directory or a file without any x bit, so the mode bits decide too. */
static bool is_executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111) &&
           access(path, X_OK) == 0;
}

bool which_find(const char *path_env, const char *cwd, const char *name, char *out, size_t outlen)
{
    const char *p = path_env ? path_env : "";
    for (;;) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        int n = -1;
        if (len > 0 && p[0] == '/')
            n = snprintf(out, outlen, "%.*s/%s", (int)len, p, name);
        else if (cwd && *cwd && len == 0)
            n = snprintf(out, outlen, "%s/%s", cwd, name);
        else if (cwd && *cwd)
            n = snprintf(out, outlen, "%s/%.*s/%s", cwd, (int)len, p, name);
        if (n > 0 && (size_t)n < outlen && is_executable(out))
            return true;
        if (!colon)
            break;
        p = colon + 1;
    }
    if (outlen)
        out[0] = '\0';
    return false;
}

bool which_find_env(char *const *envp, const char *name, char *out, size_t outlen)
{
    const char *path = env_get(envp, "PATH");
    return which_find(path ? path : ENV_DEFAULT_PATH, NULL, name, out, outlen);
}

void which_python(const char *path_env, const char *cwd, char *out, size_t outlen)
{
    if (!which_find(path_env, cwd, "python", out, outlen))
        which_find(path_env, cwd, "python3", out, outlen);
}
