#include "env.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/env_secret.h"

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
                                        "NO_CHANGE_TIMEOUT_SECONDS",
                                        "PADDOCK_ENV_ALLOW"};
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
        /* A credential-named variable reaches the shell only when the create named it. */
        if ((env_secret_word(*e, len) && !env_secret_allowed(p->allow, *e, len)) ||
            is_managed(*e, len))
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
        push(&arr, &n, &cap, "HOSTNAME", p->hostname) < 0)
        goto fail;
    /* No PS1: the shell starts with its default prompt, so rc files that return early when
     * PS1 is empty ("not interactive") still run; the init line empties it. */
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

bool env_name_valid(const char *name)
{
    if (!name || !(*name == '_' || isalpha((unsigned char)*name)))
        return false;
    for (const char *c = name + 1; *c; c++)
        if (!(*c == '_' || isalnum((unsigned char)*c)))
            return false;
    return true;
}

bool env_name_reserved(const char *name)
{
    return strcmp(name, "PROMPT_COMMAND") == 0 || strcmp(name, "PS1") == 0 ||
           strcmp(name, "PS2") == 0;
}

int env_quote(struct buf *out, const char *v, size_t n)
{
    if (buf_append(out, "\"", 1) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (v[i] == '\0')
            continue; /* no shell string holds NUL */
        if (strchr("\\\"$`", v[i]) && buf_append(out, "\\", 1) < 0)
            return -1;
        if (buf_append(out, v + i, 1) < 0)
            return -1;
    }
    return buf_append(out, "\"", 1);
}

int env_squote(struct buf *out, const char *s, size_t n)
{
    if (buf_append(out, "'", 1) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\0')
            continue;
        if (s[i] == '\'' ? buf_append_str(out, "'\\''") < 0 : buf_append(out, s + i, 1) < 0)
            return -1;
    }
    return buf_append(out, "'", 1);
}

int env_script_add(struct buf *out, const struct env_var *vars, size_t n)
{
    struct buf line = BUF_INIT;
    int rc = 0;
    if (n == 0)
        return buf_append_str(out, ":");
    /* The live shell first; then ~/.bashrc, where a key goes only when no line starts with
     * "export KEY=" yet. Builtins only: images without grep work too, and a .bashrc whose
     * last line has no newline does not get the new line glued to it. */
    rc |= buf_append_str(out, "export");
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc |= buf_printf(out, " %s=", vars[i].name);
        rc |= env_quote(out, vars[i].value, vars[i].len);
    }
    rc |= buf_append_str(
        out, " && __pdkenv_add() { __pdkenv_f=0 __pdkenv_e=0; if [ -f ~/.bashrc ]; "
             "then while IFS= read -r "
             "__pdkenv_l || { [ -n \"$__pdkenv_l\" ] && __pdkenv_e=1; }; do case "
             "$__pdkenv_l in \"export $1=\"*) "
             "__pdkenv_f=1;; esac; [ \"$__pdkenv_e\" = 1 ] && break; done < ~/.bashrc; fi; "
             "[ \"$__pdkenv_f\" = 1 ] || "
             "{ [ \"$__pdkenv_e\" = 0 ] || echo; printf '%s\\n' \"$2\"; } >> ~/.bashrc; }");
    for (size_t i = 0; i < n && rc == 0; i++) {
        buf_reset(&line);
        rc |= buf_printf(&line, "export %s=", vars[i].name);
        rc |= env_quote(&line, vars[i].value, vars[i].len);
        rc |= buf_printf(out, " && __pdkenv_add %s ", vars[i].name);
        if (rc == 0)
            rc |= env_squote(out, line.data, line.len);
    }
    rc |= buf_append_str(
        out, "; __pdkenv_r=$?; unset -f __pdkenv_add; unset __pdkenv_f __pdkenv_e __pdkenv_l; "
             "[ \"$__pdkenv_r\" = 0 ]");
    buf_free(&line);
    return rc ? -1 : 0;
}

void env_vars_free(struct env_var *vars, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(vars[i].name);
        free(vars[i].value);
    }
    free(vars);
}

int env_vars_add(struct env_var **vars, size_t *n, const char *name, size_t name_len,
                 const char *value, size_t value_len)
{
    char *k = malloc(name_len + 1), *v = malloc(value_len + 1);
    struct env_var *p = realloc(*vars, (*n + 1) * sizeof *p);
    if (!k || !v || !p) {
        free(k);
        free(v);
        if (p)
            *vars = p;
        return -1;
    }
    *vars = p;
    for (size_t i = 0; i < name_len; i++)
        k[i] = (char)toupper((unsigned char)name[i]);
    k[name_len] = '\0';
    memcpy(v, value, value_len);
    v[value_len] = '\0';
    /* A key given twice keeps its last value, in its first place. */
    for (size_t i = 0; i < *n; i++)
        if (strcmp(p[i].name, k) == 0) {
            free(k);
            free(p[i].value);
            p[i].value = v;
            p[i].len = value_len;
            return 0;
        }
    p[*n] = (struct env_var){k, v, value_len};
    (*n)++;
    return 0;
}

int env_file_read(const char *path, char *const *environ_, struct env_var **vars, size_t *n,
                  struct buf *err)
{
    FILE *f = fopen(path, "re");
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t len;
    int rc = 0;
    if (!f) {
        buf_printf(err, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        const char *k = line;
        while (*k == ' ' || *k == '\t')
            k++;
        if (*k == '\0' || *k == '#')
            continue;
        const char *eq = strchr(k, '=');
        size_t klen = eq ? (size_t)(eq - k) : strlen(k);
        char name[256];
        if (klen == 0 || klen >= sizeof name) {
            buf_printf(err, "%s:%zu: invalid variable name", path, lineno);
            rc = -1;
            break;
        }
        memcpy(name, k, klen);
        name[klen] = '\0';
        if (!env_name_valid(name)) {
            buf_printf(err, "%s:%zu: invalid variable name: %s", path, lineno, name);
            rc = -1;
            break;
        }
        const char *value = eq ? eq + 1 : env_get(environ_, name);
        if (!value)
            continue; /* a bare NAME takes the executor's value, if it has one */
        if (env_vars_add(vars, n, name, klen, value, strlen(value)) < 0) {
            buf_printf(err, "out of memory");
            rc = -1;
        } else if (env_name_reserved((*vars)[*n - 1].name)) {
            buf_printf(err, "%s:%zu: reserved variable name: %s", path, lineno, name);
            rc = -1;
        }
    }
    if (rc == 0 && ferror(f)) {
        buf_printf(err, "cannot read %s: %s", path, strerror(errno));
        rc = -1;
    }
    free(line);
    fclose(f);
    return rc;
}
