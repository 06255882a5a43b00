#include "env.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"

static bool contains_ci(const char *s, size_t len, const char *word)
{
    size_t wl = strlen(word);
    for (size_t i = 0; i + wl <= len; i++) {
        size_t j = 0;
        while (j < wl && toupper((unsigned char)s[i + j]) == word[j])
            j++;
        if (j == wl)
            return true;
    }
    return false;
}

bool env_is_secret(const char *name, size_t len)
{
    static const char *const words[] = {"KEY",        "TOKEN",   "SECRET", "PASSW",
                                        "CREDENTIAL", "PRIVATE", "COOKIE"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (contains_ci(name, len, words[i]))
            return true;
    /* ..._AUTH, but not GIT_AUTHOR_NAME and friends. */
    return len >= 5 && contains_ci(name + len - 5, 5, "_AUTH");
}

/* Variables the executor sets itself, or that would change how the shell reports. */
static bool is_managed(const char *name, size_t len)
{
    static const char *const names[] = {"HOME",
                                        "USER",
                                        "LOGNAME",
                                        "SHELL",
                                        "TERM",
                                        "PAGER",
                                        "GIT_PAGER",
                                        "HOSTNAME",
                                        "PS1",
                                        "PS2",
                                        "PS3",
                                        "PS4",
                                        "ENV",
                                        "BASH_ENV",
                                        "HISTFILE",
                                        "TMOUT",
                                        "MAIL",
                                        "MAILCHECK",
                                        "MAILPATH",
                                        "PROMPT_COMMAND",
                                        "COLUMNS",
                                        "LINES",
                                        "NO_CHANGE_TIMEOUT_SECONDS"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0)
            return true;
    return false;
}

const char *env_get(char *const *env, const char *name)
{
    size_t len = strlen(name);
    for (; env && *env; env++)
        if (strncmp(*env, name, len) == 0 && (*env)[len] == '=')
            return *env + len + 1;
    return NULL;
}

static int push(char ***arr, size_t *n, size_t *cap, const char *name, const char *value)
{
    if (*n + 2 > *cap) {
        size_t nc = *cap ? *cap * 2 : 32;
        char **p = realloc(*arr, nc * sizeof *p);
        if (!p)
            return -1;
        *arr = p;
        *cap = nc;
    }
    struct buf b = BUF_INIT;
    if (buf_printf(&b, "%s=%s", name, value) < 0)
        return -1;
    (*arr)[(*n)++] = buf_steal(&b);
    (*arr)[*n] = NULL;
    return 0;
}

char **env_build(char *const *inherited, const struct env_params *p)
{
    char **arr = NULL;
    size_t n = 0, cap = 0;
    bool have_path = false, have_lang = false;
    if (push(&arr, &n, &cap, "TERM", "dumb") < 0)
        goto fail;
    for (char *const *e = inherited; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq || eq == *e)
            continue;
        size_t len = (size_t)(eq - *e);
        if (env_is_secret(*e, len) || is_managed(*e, len))
            continue;
        have_path |= len == 4 && memcmp(*e, "PATH", 4) == 0;
        have_lang |= len == 4 && memcmp(*e, "LANG", 4) == 0;
        char *copy = strdup(*e);
        if (!copy || push(&arr, &n, &cap, "", "") < 0) {
            free(copy);
            goto fail;
        }
        free(arr[n - 1]);
        arr[n - 1] = copy;
    }
    /* The image's PATH and LANG win; the base only fills gaps. */
    if ((!have_path && push(&arr, &n, &cap, "PATH", ENV_DEFAULT_PATH) < 0) ||
        (!have_lang && push(&arr, &n, &cap, "LANG", "C.UTF-8") < 0) ||
        push(&arr, &n, &cap, "PAGER", "cat") < 0 || push(&arr, &n, &cap, "GIT_PAGER", "cat") < 0 ||
        push(&arr, &n, &cap, "HOME", p->home) < 0 || push(&arr, &n, &cap, "USER", p->user) < 0 ||
        push(&arr, &n, &cap, "LOGNAME", p->user) < 0 ||
        push(&arr, &n, &cap, "SHELL", p->shell) < 0 ||
        push(&arr, &n, &cap, "HOSTNAME", p->hostname) < 0 ||
        /* Empty prompts from the start, so the first prompt prints nothing. */
        push(&arr, &n, &cap, "PS1", "") < 0 || push(&arr, &n, &cap, "PS2", "") < 0)
        goto fail;
    return arr;
fail:
    env_free(arr);
    return NULL;
}

void env_free(char **env)
{
    for (char **e = env; e && *e; e++)
        free(*e);
    free(env);
}

int env_which(char *const *env, const char *name, char *out, size_t outlen)
{
    const char *p = env_get(env, "PATH");
    if (!p)
        p = ENV_DEFAULT_PATH;
    while (*p) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        struct stat st;
        /* An empty entry means the current directory: never for the executor. */
        if (len > 0 && (size_t)snprintf(out, outlen, "%.*s/%s", (int)len, p, name) < outlen &&
            stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
            return 0;
        p += len + (colon ? 1 : 0);
    }
    return -1;
}
