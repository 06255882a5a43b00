/* Risk of an action (docs/risk.md). The pipeline for a command line:
 * 1. guards: NUL, size (> 64 KiB), hidden characters (bidi, zero-width, controls; fullwidth
 *    letters are mapped to ASCII and flagged; a verb with non-ASCII letters is flagged);
 * 2. risk_shell.c takes the line apart: commands, words with quoting undone, redirections,
 *    pipes, here-documents, and the text of substitutions; an unterminated quote,
 *    substitution or here-document is MEDIUM (the shell would wait or read it otherwise);
 * 3. per command: reserved words (if, then, do, {, !) and wrappers (sudo, env, nice, timeout,
 *    xargs...) skipped, the verb resolved (/bin/rm, \rm, 'r'm are rm) and looked up in the
 *    rule table (a sorted index built once), its rule applied to its arguments and paths;
 *    sh -c, eval, python -c, here-documents fed to a shell and substitutions are classified
 *    the same way, recursively (depth 8, deeper is HIGH); `cd` moves where later relative
 *    paths in the line point (cd "$D" or cd -: anywhere);
 * 4. across a pipeline: a download or a decoder feeding a shell or interpreter is HIGH,
 *    secrets feeding a network command are HIGH, literal text (echo, printf, a here-document)
 *    fed to a shell or interpreter is classified as what it runs, paths fed to xargs rm are
 *    judged by where they come from (find under the workspace, or anything);
 * 5. the maximum wins; hidden characters raise MEDIUM to HIGH. The first reason of the highest
 *    level is kept.
 * Choices (the levels are defined in docs/risk.md and held to tests/risk/corpus.jsonl): a
 * relative path with no known cwd is taken as in the workspace (the executor's shell starts
 * there; the engine passes NULL today); `rm -r` of the workspace root, its .git or everything
 * in it is HIGH, of sources in it MEDIUM, of build outputs LOW; writes and edits in the
 * workspace, builds and tests are LOW (the task's own work: the "medium" policy confirms
 * network access, installs and changes outside instead); `less` and `tail -f` are MEDIUM (they
 * never end in a non-interactive shell).
 * File actions: writes outside the workspace, to system paths, shell rc files, git hooks, CI
 * workflows, package-manager configs and keys are HIGH; writes in the workspace LOW; reads
 * LOW unless they read credentials (or a .env outside the workspace). Written scripts (#!, .sh,
 * .py...) are scanned like commands, or as code when the #! or the name says which. */
#include "engine/risk/risk.h"

#include "common/utf8.h"
#include "engine/risk/risk_internal.h"

#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define RISK_MAX_LEN (64 * 1024)
#define RISK_MAX_DEPTH 8

struct rk {
    int level;
    char reason[200];
    const char *ws;  /* workspace root, no trailing slash */
    const char *cwd; /* NULL: the workspace */
    char cwdbuf[1024];
    bool cwd_home, cwd_unknown; /* after `cd ~` or `cd "$D"` earlier in the line */
    int depth;
    bool obfuscated;
    /* facts across the whole action */
    bool fetch;           /* something downloads code or decodes text into a file */
    bool runs_file;       /* a shell or interpreter runs a script file */
    bool xargs;           /* the current command's arguments come from its input */
    bool endless;         /* a `while true` loop was seen */
    int input_found;      /* its input lists files found by find: 1 + enum rk_where, or 0 */
    bool piped_in;        /* the current command's stdin is a pipe */
    bool var_fetch;       /* a variable was assigned a download command (x='curl ...') */
    char secret_var[48];  /* a variable named like a secret used in the line ($GITHUB_TOKEN) */
    char nested_verb[32]; /* the first word of the line's last substitution ($(pyenv init -)) */
    char funcs[RS_MAX_FUNCS][32]; /* shell functions the line defines (their bodies are judged) */
    int nfuncs;
};

/* Facts of one command, for the pipeline rules. */
struct rk_facts {
    bool fetch, decode, secret, netsend;
    bool shell;    /* a shell that runs what its input says (sh -i, /bin/sh) */
    char peer[80]; /* a raw connection's far end (nc, telnet, socat, openssl s_client) */
    bool consumer; /* a shell or interpreter that runs its input */
    char lang[24]; /* the consumer's language when it is an interpreter, "" for a shell */
    int found;     /* find's start point: 1 + enum rk_where, or 0 */
    bool loop, bg; /* an endless loop; a background job */
};

static void rk_raise(struct rk *k, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void rk_raise(struct rk *k, int level, const char *fmt, ...)
{
    if (level <= k->level && k->reason[0])
        return;
    if (level < k->level)
        return;
    k->level = level;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(k->reason, sizeof(k->reason), fmt, ap);
    va_end(ap);
}

/* Like rk_raise, but a more precise reason replaces the one found at the same level. */
static void rk_name(struct rk *k, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void rk_name(struct rk *k, int level, const char *fmt, ...)
{
    if (level < k->level)
        return;
    k->level = level;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(k->reason, sizeof(k->reason), fmt, ap);
    va_end(ap);
}

static void rk_text(struct rk *k, const char *s, size_t len, struct rk_facts *all);
static void rk_script_scan(struct rk *k, const char *path, const char *content);

/* ---- names ---- */

static bool rk_in(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(s, *list) == 0)
            return true;
    return false;
}

static const char *const rk_shells[] = {"sh",  "bash", "dash", "zsh", "ksh",
                                        "ash", "mksh", "fish", NULL};
static const char *const rk_interps[] = {"python", "python2", "python3", "perl",    "ruby", "node",
                                         "nodejs", "php",     "lua",     "Rscript", NULL};

static const char *rk_base(const char *w)
{
    const char *slash = strrchr(w, '/');
    return slash && slash[1] ? slash + 1 : w;
}

/* ---- paths ---- */

enum rk_where {
    RK_INSIDE,  /* in the workspace */
    RK_WSROOT,  /* the workspace itself */
    RK_TMP,     /* /tmp, /var/tmp, /dev/shm */
    RK_OUTSIDE, /* elsewhere */
    RK_HOMEDIR, /* ~ or under it */
    RK_SYSTEM,  /* a system directory or under one */
    RK_ROOT,    /* / */
    RK_DYNAMIC, /* built from a variable: could be anything, even empty */
    RK_DEVNULL, /* /dev/null and the standard streams */
};

static const char *const rk_system_dirs[] = {
    "/etc",  "/usr", "/bin",  "/sbin", "/lib",   "/lib32", "/lib64", "/libx32",
    "/boot", "/var", "/opt",  "/root", "/home",  "/srv",   "/dev",   "/proc",
    "/sys",  "/run", "/snap", "/mnt",  "/media", NULL};

/* Lexical normalisation: relative to cwd (or the workspace), "." and ".." resolved. */
static void rk_normalize(const struct rk *k, const char *p, char *out, size_t sz)
{
    char tmp[1024];
    if (p[0] == '/')
        snprintf(tmp, sizeof(tmp), "%s", p);
    else
        snprintf(tmp, sizeof(tmp), "%s/%s", k->cwd ? k->cwd : k->ws, p);
    size_t n = 0;
    out[0] = '\0';
    char *save = NULL;
    for (char *seg = strtok_r(tmp, "/", &save); seg; seg = strtok_r(NULL, "/", &save)) {
        if (strcmp(seg, ".") == 0)
            continue;
        if (strcmp(seg, "..") == 0) {
            char *slash = strrchr(out, '/');
            n = slash ? (size_t)(slash - out) : 0;
            out[n] = '\0';
            continue;
        }
        int w = snprintf(out + n, sz - n, "/%s", seg);
        if (w < 0 || (size_t)w >= sz - n)
            break;
        n += (size_t)w;
    }
    if (!n)
        snprintf(out, sz, "/");
}

static bool rk_under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static enum rk_where rk_where(const struct rk *k, const char *p, bool dyn, char *norm, size_t sz)
{
    snprintf(norm, sz, "%s", p);
    if (dyn)
        return RK_DYNAMIC;
    if (!*p)
        return RK_DYNAMIC;
    if (p[0] == '~')
        return RK_HOMEDIR;
    if (strcmp(p, "/dev/null") == 0 || strcmp(p, "/dev/stdout") == 0 ||
        strcmp(p, "/dev/stderr") == 0 || strcmp(p, "/dev/tty") == 0)
        return RK_DEVNULL;
    /* a glob at the top (slash star) is the root */
    if (p[0] == '/' && (strcmp(p, "/*") == 0 || strcmp(p, "/.") == 0))
        return RK_ROOT;
    if (p[0] != '/' && k->cwd_home) { /* after `cd ~` */
        snprintf(norm, sz, "~/%s", p);
        return RK_HOMEDIR;
    }
    if (p[0] != '/' && k->cwd_unknown) { /* after `cd "$D"`: anywhere */
        snprintf(norm, sz, "?/%s", p);
        return RK_OUTSIDE;
    }
    rk_normalize(k, p, norm, sz);
    if (strcmp(norm, "/") == 0 || strcmp(norm, "/*") == 0)
        return RK_ROOT;
    if (strcmp(norm, k->ws) == 0)
        return RK_WSROOT;
    if (rk_under(norm, k->ws))
        return RK_INSIDE;
    if (rk_under(norm, "/tmp") || rk_under(norm, "/var/tmp") || rk_under(norm, "/dev/shm"))
        return RK_TMP;
    for (const char *const *d = rk_system_dirs; *d; d++)
        if (rk_under(norm, *d))
            return RK_SYSTEM;
    return RK_OUTSIDE;
}

/* Whether path holds the component sequence part ("/.aws", "/.kube/config") as whole
 * components: "/.azure" matches "~/.azure/x", not ".azure-pipelines.yml". A part ending in
 * '*' matches as a prefix ("/etc/shadow*": shadow-, shadow.bak). */
static bool rk_has_part(const char *path, const char *part)
{
    size_t n = strlen(part);
    bool prefix = n && part[n - 1] == '*';
    if (prefix)
        n--;
    for (const char *at = path; (at = strstr(at, prefix ? "/" : part));) {
        if (strncmp(at, part, n) == 0 && (prefix || at[n] == '/' || at[n] == '\0'))
            return true;
        at++;
    }
    return false;
}

/* Credentials: what reading, copying or sending is HIGH. */
static const char *rk_secret(const char *p)
{
    static const char *const parts[] = {"/.ssh",           "/.aws",
                                        "/.config/gcloud", "/.azure",
                                        "/.kube/config",   "/.docker/config.json",
                                        "/.netrc",         "/.git-credentials",
                                        "/.npmrc",         "/.pypirc",
                                        "/.gnupg",         "/.password-store",
                                        "/etc/shadow*",    "/etc/gshadow*",
                                        "/etc/sudoers*",   NULL};
    char tmp[1100];
    size_t pl = strlen(p);
    if (pl > 4 && strcmp(p + pl - 4, ".pub") == 0)
        return NULL;                      /* public keys are public */
    snprintf(tmp, sizeof(tmp), "/%s", p); /* "~/.ssh" and ".ssh/x" match "/.ssh" too */
    for (const char *const *s = parts; *s; s++)
        if (rk_has_part(tmp, *s))
            return *s + 1;
    const char *b = rk_base(p);
    if ((strncmp(b, "id_rsa", 6) == 0 || strncmp(b, "id_ed25519", 10) == 0 ||
         strncmp(b, "id_ecdsa", 8) == 0 || strncmp(b, "id_dsa", 6) == 0) &&
        !strstr(b, ".pub"))
        return "a private key";
    if (strncmp(tmp, "//proc/", 7) == 0 && strstr(tmp, "/environ"))
        return "a process's environment";
    return NULL;
}

/* Files whose change runs code later or outside the sandbox's view: writing them is HIGH. */
static const char *rk_sensitive_write(const char *norm)
{
    static const char *const parts[] = {
        "/.git/hooks/", "/.github/workflows/", "/.gitlab-ci", "/.vscode/tasks.json",
        "/.ssh/",       "/etc/profile.d/",     "/etc/cron",   "/var/spool/cron",
        "/etc/sudoers", "/proc/sys/",          "/sys/",       NULL};
    static const char *const names[] = {".bashrc",
                                        ".bash_profile",
                                        ".bash_login",
                                        ".bash_logout",
                                        ".profile",
                                        ".zshrc",
                                        ".zprofile",
                                        ".zshenv",
                                        "authorized_keys",
                                        "pip.conf",
                                        ".npmrc",
                                        ".pypirc",
                                        ".yarnrc.yml",
                                        ".yarnrc",
                                        ".netrc",
                                        ".git-credentials",
                                        NULL};
    for (const char *const *s = parts; *s; s++)
        if (strstr(norm, *s))
            return *s;
    const char *b = rk_base(norm);
    if (rk_in(b, names))
        return b;
    size_t n = strlen(norm);
    if (n >= 11 && strcmp(norm + n - 11, "/.git/config") == 0)
        return ".git/config";
    if (n > 4 && strcmp(norm + n - 4, ".pem") == 0)
        return "a .pem key";
    if (strncmp(b, "id_", 3) == 0 && !strstr(b, "."))
        return "a key file";
    if (strstr(norm, "/.config/") && (strstr(norm, "/root/") == norm || strstr(norm, "/home/")))
        return "a user configuration";
    return NULL;
}

static bool rk_raw_disk(const char *p)
{
    static const char *const devs[] = {"/dev/sd",   "/dev/hd",     "/dev/vd",    "/dev/xvd",
                                       "/dev/nvme", "/dev/mmcblk", "/dev/disk/", "/dev/mapper/",
                                       "/dev/md",   NULL};
    for (const char *const *d = devs; *d; d++)
        if (strncmp(p, *d, strlen(*d)) == 0)
            return true;
    return false;
}

static bool rk_net_device(const char *p)
{
    return strncmp(p, "/dev/tcp/", 9) == 0 || strncmp(p, "/dev/udp/", 9) == 0;
}

/* The loopback: the agent's own servers, inside the sandbox. */
static bool rk_local_host(const char *h)
{
    return strcmp(h, "localhost") == 0 || strncmp(h, "127.", 4) == 0 || strcmp(h, "0.0.0.0") == 0 ||
           strcmp(h, "::1") == 0 || strcmp(h, "[::1]") == 0 || strncmp(h, "localhost:", 10) == 0;
}

/* Hosts an agent's tools talk to by design: a token sent there is used, not stolen. */
static bool rk_known_host(const char *h)
{
    static const char *const hosts[] = {"github.com",         "api.github.com",
                                        "gitlab.com",         "bitbucket.org",
                                        "pypi.org",           "files.pythonhosted.org",
                                        "registry.npmjs.org", "registry.yarnpkg.com",
                                        "crates.io",          "proxy.golang.org",
                                        "api.openai.com",     "api.anthropic.com",
                                        "huggingface.co",     NULL};
    return rk_in(h, hosts);
}

/* The host of a URL or host[:port] word ("https://u@h:1/x" is h), in out; false when the
 * word names none. */
static bool rk_url_host(const char *w, char *out, size_t sz)
{
    const char *p = strstr(w, "://");
    if (p)
        p += 3;
    else if (strncmp(w, "localhost", 9) == 0 || (isdigit((unsigned char)w[0]) && strchr(w, '.')))
        p = w; /* localhost:3000, 127.0.0.1:8000 (not a number such as --max-time's) */
    else
        return false;
    const char *at = strpbrk(p, "@/");
    if (at && *at == '@')
        p = at + 1;
    size_t n = strcspn(p, ":/?#");
    if (*p == '[')
        n = strcspn(p, "]") + 1;
    if (!n)
        return false;
    snprintf(out, sz, "%.*s", (int)n, p);
    return true;
}

/* /dev/tcp/HOST/PORT as "HOST:PORT". */
static void rk_dev_peer(const char *p, char *out, size_t sz)
{
    const char *h = p + 9, *slash = strchr(h, '/');
    if (slash)
        snprintf(out, sz, "%.*s:%s", (int)(slash - h), h, slash + 1);
    else
        snprintf(out, sz, "%s", h);
}

/* A connection through bash's /dev/tcp or /dev/udp: a shell redirected there is a reverse
 * shell. */
static void rk_net_dev(struct rk *k, const char *p, bool shell)
{
    char peer[128];
    rk_dev_peer(p, peer, sizeof(peer));
    if (rk_local_host(peer))
        rk_raise(k, 1, "opens a connection to the sandbox itself (%.60s)", peer);
    else if (shell)
        rk_raise(k, 2, "opens a shell to %.80s", peer);
    else
        rk_raise(k, 2, "opens a network connection to %.80s", peer);
}

/* The shell's history files. */
static bool rk_history_file(const char *p)
{
    static const char *const names[] = {".bash_history", ".zsh_history", ".history",
                                        ".sh_history",   ".ash_history", NULL};
    return rk_in(rk_base(p), names);
}

/* The variables that say where and how much history the shell keeps. */
static bool rk_history_var(const char *name, size_t n)
{
    static const char *const vars[] = {"HISTFILE", "HISTSIZE",   "HISTFILESIZE",
                                       "SAVEHIST", "HISTIGNORE", NULL};
    for (const char *const *v = vars; *v; v++)
        if (strlen(*v) == n && strncmp(name, *v, n) == 0)
            return true;
    return false;
}

/* NAME=VALUE that stops the history: HISTFILE=/dev/null or empty, a size of 0, HISTIGNORE
 * matching everything. HISTSIZE=10000 keeps more, not less. */
static bool rk_history_off(const char *assign)
{
    const char *eq = strchr(assign, '=');
    if (!eq || !rk_history_var(assign, (size_t)(eq - assign)))
        return false;
    const char *v = eq + 1;
    if (strncmp(assign, "HISTFILE=", 9) == 0)
        return !*v || strcmp(v, "/dev/null") == 0;
    if (strncmp(assign, "HISTIGNORE=", 11) == 0)
        return strcmp(v, "*") == 0 || strcmp(v, "*:*") == 0;
    return !*v || strspn(v, "0") == strlen(v);
}

/* A write to path (a redirection, tee, cp's destination...). */
static void rk_write(struct rk *k, const char *p, bool dyn, const char *how)
{
    char norm[1024];
    enum rk_where w = rk_where(k, p, dyn, norm, sizeof(norm));
    const char *sens;
    if (w == RK_DEVNULL)
        return;
    if (rk_net_device(p))
        rk_net_dev(k, p, false);
    else if (rk_raw_disk(p))
        rk_raise(k, 2, "writes to a raw disk device (%.60s)", p);
    else if ((sens = rk_sensitive_write(w == RK_HOMEDIR ? p : norm)))
        rk_raise(k, 2, "%s %.60s, which runs code later (%s)", how, p, sens);
    else if (rk_history_file(p))
        rk_raise(k, 2, "%s the shell history (%.60s)", how, p);
    else if (rk_under(norm, "/var/log"))
        rk_raise(k, 2, "%s system logs (%.80s)", how, norm);
    else if (w == RK_SYSTEM || w == RK_ROOT)
        rk_raise(k, 2, "%s a system path (%.80s)", how, norm);
    else if (w == RK_HOMEDIR)
        rk_raise(k, 2, "%s the home directory (%.80s)", how, p);
    else if (w == RK_OUTSIDE)
        rk_raise(k, 2, "%s a path outside the workspace (%.80s)", how, norm);
    else if (w == RK_TMP || w == RK_DYNAMIC)
        rk_raise(k, 1, "%s %.80s", how, p);
    else
        rk_raise(k, 0, "%s %.80s", how, p); /* editing in the workspace */
}

/* A database file by its name: emptying or overwriting one destroys data. */
static bool rk_database_file(const char *p)
{
    static const char *const ext[] = {".db", ".sqlite", ".sqlite3", ".db3", ".mdb", ".ibd", NULL};
    const char *dot = strrchr(rk_base(p), '.');
    return dot && rk_in(dot, ext);
}

/* A read of path: credentials are HIGH, and so is a .env file outside the workspace (the
 * project's own .env is the agent's to read). */
static bool rk_read(struct rk *k, const char *p, const char *verb)
{
    const char *s = rk_secret(p);
    const char *b = rk_base(p);
    if (!s && (strcmp(b, ".env") == 0 || strncmp(b, ".env.", 5) == 0)) {
        char norm[1024];
        enum rk_where w = rk_where(k, p, false, norm, sizeof(norm));
        if (w != RK_INSIDE && w != RK_WSROOT)
            s = ".env";
    }
    if (!s)
        return false;
    rk_raise(k, 2, "reads credentials (%.60s) with %s", p, verb);
    return true;
}

/* ---- commands ---- */

struct rk_cmd {
    struct rk *k;
    const struct rs_cmd *c;
    int v;            /* index of the verb word */
    const char *verb; /* its base name */
    struct rk_facts *f;
};

static const char *rk_arg(const struct rk_cmd *x, int i)
{
    return x->v + i < x->c->nwords ? x->c->words[x->v + i].s : NULL;
}

static bool rk_arg_dyn(const struct rk_cmd *x, int i)
{
    return x->v + i < x->c->nwords && x->c->words[x->v + i].dyn;
}

static int rk_nargs(const struct rk_cmd *x)
{
    return x->c->nwords - x->v - 1;
}

/* A short flag letter in any "-xyz" word, or a long flag. */
static bool rk_flag(const struct rk_cmd *x, char letter, const char *longname)
{
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        if (strcmp(a, "--") == 0)
            break;
        if (longname && strcmp(a, longname) == 0)
            return true;
        if (letter && a[0] == '-' && a[1] != '-' && strchr(a + 1, letter))
            return true;
    }
    return false;
}

static bool rk_has_arg(const struct rk_cmd *x, const char *s)
{
    for (int i = 1; i <= rk_nargs(x); i++)
        if (strcmp(rk_arg(x, i), s) == 0)
            return true;
    return false;
}

static bool rk_has_prefix_arg(const struct rk_cmd *x, const char *prefix)
{
    for (int i = 1; i <= rk_nargs(x); i++)
        if (strncmp(rk_arg(x, i), prefix, strlen(prefix)) == 0)
            return true;
    return false;
}

/* Every non-flag argument that is a path: reads of credentials. */
static void rk_reads(struct rk_cmd *x)
{
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        const char *at = a[0] == '@' ? a + 1 : a; /* curl -d @file */
        if (rk_read(x->k, at, x->verb))
            x->f->secret = true;
    }
}

static const char *const rk_where_what[] = {[RK_INSIDE] = "in the workspace",
                                            [RK_WSROOT] = "the whole workspace",
                                            [RK_TMP] = "in a temporary directory",
                                            [RK_OUTSIDE] = "outside the workspace",
                                            [RK_HOMEDIR] = "in the home directory",
                                            [RK_SYSTEM] = "in a system directory",
                                            [RK_ROOT] = "the whole filesystem",
                                            [RK_DYNAMIC] =
                                                "a path built from a variable (empty, it is /)",
                                            [RK_DEVNULL] = "a device"};

static bool rk_grave(enum rk_where w)
{
    return w == RK_WSROOT || w == RK_OUTSIDE || w == RK_HOMEDIR || w == RK_SYSTEM || w == RK_ROOT ||
           w == RK_DYNAMIC;
}

/* `... | xargs rm`: the paths come from the input. Files found by find under the workspace
 * stay there; anything else (echo /, a list) could be any path. */
static void rk_rm_input(struct rk_cmd *x, bool rec)
{
    enum rk_where w = x->k->input_found ? (enum rk_where)(x->k->input_found - 1) : RK_DYNAMIC;
    if (w == RK_DYNAMIC && rec)
        rk_raise(x->k, 2, "deletes recursively whatever paths its input names (xargs rm)");
    else if (w != RK_DYNAMIC && rk_grave(w))
        rk_raise(x->k, 2, "deletes files found by find (%s) through xargs rm", rk_where_what[w]);
    else
        rk_raise(x->k, 1, "deletes %sthe files its input names (xargs rm)",
                 rec ? "recursively " : "");
}

/* What a build makes and a clean removes: deleting it is routine. */
static bool rk_build_output(const char *norm)
{
    static const char *const names[] = {
        "build",         "dist",        "target",      "out",   "node_modules",  "__pycache__",
        ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox",  ".nox",          "coverage",
        "htmlcov",       ".coverage",   ".next",       ".nuxt", ".parcel-cache", ".cache",
        ".gradle",       "bin",         "obj",         ".eggs", ".turbo",        "_build",
        ".venv",         "venv",        NULL};
    const char *b = rk_base(norm);
    size_t n = strlen(b);
    return rk_in(b, names) || strncmp(b, "cmake-build-", 12) == 0 ||
           (n > 9 && strcmp(b + n - 9, ".egg-info") == 0) ||
           (n > 4 && (strcmp(b + n - 4, ".pyc") == 0 || strcmp(b + n - 2, ".o") == 0));
}

/* A glob naming everything in a directory: *, .*, .[!.]*, .??* */
static bool rk_glob_all(const char *norm)
{
    static const char *const globs[] = {"*", ".*", ".[!.]*", ".[^.]*", ".??*", NULL};
    return rk_in(rk_base(norm), globs);
}

static void rule_rm(struct rk_cmd *x)
{
    bool rec = rk_flag(x, 'r', "--recursive") || rk_flag(x, 'R', NULL);
    bool dashdash = false;
    int targets = 0;
    if (x->k->xargs)
        rk_rm_input(x, rec);
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        if (!dashdash && strcmp(a, "--") == 0) {
            dashdash = true;
            continue;
        }
        if (!dashdash && a[0] == '-' && a[1])
            continue;
        targets++;
        if (x->k->xargs && strstr(a, "{}"))
            continue; /* xargs -I{}: the input's paths, judged above */
        char norm[1024];
        enum rk_where w = rk_where(x->k, a, rk_arg_dyn(x, i), norm, sizeof(norm));
        const char *const *what = rk_where_what;
        bool grave = rk_grave(w);
        const char *shown = w == RK_DYNAMIC ? "" : norm;
        const char *open = *shown ? " (" : "", *close = *shown ? ")" : "";
        bool in_ws = w == RK_INSIDE || w == RK_WSROOT;
        char parent[1024];
        snprintf(parent, sizeof(parent), "%s", norm);
        char *slash = strrchr(parent, '/');
        if (slash)
            *slash = '\0';
        if (in_ws && rk_has_part(norm, "/.git"))
            rk_raise(x->k, 2, "deletes the repository's history (%.80s)", a);
        else if (in_ws && rk_glob_all(norm) && strcmp(parent, x->k->ws) == 0)
            rk_raise(x->k, 2, "deletes everything in the workspace (%.80s)", a);
        else if (rk_history_file(norm))
            rk_raise(x->k, 2, "deletes the shell history (%.80s)", a);
        else if (rec && grave)
            rk_raise(x->k, 2, "deletes recursively %s%s%.80s%s", what[w], open, shown, close);
        else if (grave && w != RK_DYNAMIC && w != RK_OUTSIDE)
            rk_raise(x->k, 2, "deletes files %s%s%.80s%s", what[w], open, shown, close);
        else if (in_ws && (!rec || rk_build_output(norm)))
            rk_raise(x->k, 0, "deletes %s in the workspace (%.80s)",
                     rec ? "build outputs" : "files", a);
        else
            rk_raise(x->k, 1, "deletes %s%s%s%s%.80s%s", rec ? "recursively " : "",
                     w == RK_DYNAMIC ? "" : "files ", what[w], open, shown, close);
    }
    if (!targets)
        rk_raise(x->k, 1, "deletes files");
}

/* Appends word to a command line being rebuilt, single-quoted so it stays one word. */
static void rk_put_quoted(struct buf *b, const char *w)
{
    if (buf_reserve(b, strlen(w) * 4 + 3) < 0)
        return; /* room for all of it: the appends below cannot fail */
    buf_append(b, "'", 1);
    for (const char *p = w; *p; p++)
        buf_append(b, *p == '\'' ? "'\\''" : p, *p == '\'' ? 4 : 1);
    buf_append(b, "' ", 2);
}

static void rule_find(struct rk_cmd *x)
{
    /* the start points: every word before the expression (none: "."); the worst one counts.
     * What it finds under the workspace root is in the workspace. */
    char norm[1024];
    enum rk_where w = rk_where(x->k, ".", false, norm, sizeof(norm));
    const char *start = ".";
    bool first = true;
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        if (first && (strcmp(a, "-H") == 0 || strcmp(a, "-L") == 0 || strcmp(a, "-P") == 0))
            continue;
        if (a[0] == '-' || a[0] == '(' || a[0] == '!')
            break;
        enum rk_where here = rk_where(x->k, a, rk_arg_dyn(x, i), norm, sizeof(norm));
        if (first || (rk_grave(here) && !rk_grave(w)) || here == RK_ROOT) {
            w = here;
            start = a;
        }
        first = false;
    }
    if (w == RK_WSROOT)
        w = RK_INSIDE;
    x->f->found = 1 + (int)w;
    bool acts = rk_has_arg(x, "-delete") || rk_has_arg(x, "-exec") || rk_has_arg(x, "-execdir") ||
                rk_has_arg(x, "-ok") || rk_has_arg(x, "-okdir");
    if (!acts) {
        if (rk_has_prefix_arg(x, "-fprint"))
            rk_raise(x->k, 1, "writes a file with find -fprint");
        return;
    }
    /* without a test on names or dates it acts on every file under its start */
    static const char *const tests[] = {"-name",   "-iname",     "-path",  "-ipath", "-regex",
                                        "-iregex", "-newer",     "-mtime", "-mmin",  "-size",
                                        "-empty",  "-wholename", "-user",  NULL};
    bool filtered = false;
    const char *name = NULL;
    for (int i = 1; i <= rk_nargs(x); i++) {
        if (rk_in(rk_arg(x, i), tests))
            filtered = true;
        if (strcmp(rk_arg(x, i), "-name") == 0 && i < rk_nargs(x))
            name = rk_arg(x, i + 1);
    }
    /* the -exec command is a command too ({} is what it found: the -name pattern under the
     * start point, or any file there); a bounded number of them, each read once */
    char found[1100];
    snprintf(found, sizeof(found), "%s/%s", start, name ? name : "x");
    int execs = 0;
    bool destroys = rk_has_arg(x, "-delete");
    for (int i = 1; i <= rk_nargs(x) && execs < 16; i++) {
        const char *a = rk_arg(x, i);
        if (strcmp(a, "-exec") && strcmp(a, "-execdir") && strcmp(a, "-ok") && strcmp(a, "-okdir"))
            continue;
        execs++;
        struct buf sub = {0};
        int j = i + 1;
        for (; j <= rk_nargs(x); j++) {
            const char *b = rk_arg(x, j);
            if (strcmp(b, ";") == 0 || strcmp(b, "+") == 0)
                break;
            if (j == i + 1 &&
                (strcmp(rk_base(b), "rm") == 0 || strcmp(rk_base(b), "shred") == 0 ||
                 strcmp(rk_base(b), "truncate") == 0 || strcmp(rk_base(b), "unlink") == 0))
                destroys = true;
            rk_put_quoted(&sub, strcmp(b, "{}") == 0 ? found : b);
        }
        if (sub.data) {
            rk_text(x->k, sub.data, sub.len, NULL);
            free(sub.data);
        }
        i = j;
    }
    if (rk_grave(w))
        rk_raise(x->k, 2, "deletes or changes files found across %.80s", start);
    else if (destroys && !filtered && w == RK_INSIDE)
        rk_raise(x->k, 2, "destroys every file under %.80s", start);
    else
        rk_raise(x->k, w == RK_INSIDE ? 0 : 1, "deletes or changes files found under %.80s", start);
}

/* "100G", "1T", "4096": bytes (saturating); -1 when not a size. */
static double rk_size(const char *s)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || v < 0)
        return -1;
    static const char units[] = "KMGTPE";
    int c = *end & ~0x20;
    const char *u = c ? strchr(units, c) : NULL;
    if (u)
        for (long i = 0; i <= u - units; i++)
            v *= 1024;
    return v;
}

#define RK_HUGE (1024.0 * 1024 * 1024) /* a file this big fills a sandbox's disk */

static void rule_dd(struct rk_cmd *x)
{
    double bs = 512, count = -1;
    bool endless_source = false, to_file = false;
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        if (strncmp(a, "bs=", 3) == 0 || strncmp(a, "obs=", 4) == 0)
            bs = rk_size(strchr(a, '=') + 1);
        else if (strncmp(a, "count=", 6) == 0)
            count = rk_size(a + 6);
        else if (strcmp(a, "if=/dev/zero") == 0 || strcmp(a, "if=/dev/urandom") == 0 ||
                 strcmp(a, "if=/dev/random") == 0)
            endless_source = true;
        else if (strncmp(a, "of=", 3) == 0 && strncmp(a, "of=/dev/", 8) != 0)
            to_file = true; /* devices are judged below */
    }
    if (to_file && ((endless_source && count < 0) || (count > 0 && bs * count >= RK_HUGE)))
        rk_raise(x->k, 2, "fills the disk with dd");
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        if (strncmp(a, "of=", 3) == 0) {
            rk_write(x->k, a + 3, rk_arg_dyn(x, i), "dd writes");
            if (strncmp(a + 3, "/dev/", 5) == 0 && strcmp(a + 3, "/dev/null") != 0)
                rk_raise(x->k, 2, "writes raw data to a device (%.60s)", a + 3);
        } else if (strncmp(a, "if=", 3) == 0) {
            rk_read(x->k, a + 3, "dd");
        }
    }
    rk_raise(x->k, 1, "copies raw data with dd");
}

static void rule_disk(struct rk_cmd *x)
{
    rk_raise(x->k, 2, "formats or repartitions a disk (%s)", x->verb);
}

static void rule_shred(struct rk_cmd *x)
{
    for (int i = 1; i <= rk_nargs(x); i++)
        if (strncmp(rk_arg(x, i), "/dev/", 5) == 0)
            rk_raise(x->k, 2, "destroys a device's data (%.60s)", rk_arg(x, i));
    for (int i = 1; i <= rk_nargs(x); i++)
        if (rk_arg(x, i)[0] != '-')
            rk_write(x->k, rk_arg(x, i), rk_arg_dyn(x, i), "destroys");
}

static void rule_chmod(struct rk_cmd *x)
{
    const char *mode = NULL;
    for (int i = 1; i <= rk_nargs(x); i++)
        if (rk_arg(x, i)[0] != '-' || strchr("rwxst", rk_arg(x, i)[1]) != NULL) {
            mode = rk_arg(x, i);
            break;
        }
    if (mode) {
        size_t n = strspn(mode, "01234567");
        bool numeric = n == strlen(mode) && n >= 3;
        /* the digit before the last three holds setuid (4) and setgid (2): 4755, 04755 */
        if ((numeric && n >= 4 && strchr("234567", mode[n - 4])) ||
            (!numeric && strchr(mode, 's') && strpbrk(mode, "+=")))
            rk_raise(x->k, 2, "sets a setuid or setgid bit (chmod %.20s)", mode);
        else if ((numeric && strcmp(mode + n - 3, "777") == 0) || strcmp(mode, "a+rwx") == 0)
            rk_raise(x->k, 1, "makes files writable by everyone (chmod %.20s)", mode);
    }
    bool first = true;
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        if (a[0] == '-' || (first && a == mode)) {
            first = false;
            continue;
        }
        rk_write(x->k, a, rk_arg_dyn(x, i), "changes permissions of");
    }
}

static void rule_chown(struct rk_cmd *x)
{
    for (int i = 1; i <= rk_nargs(x); i++)
        if (strncmp(rk_arg(x, i), "root", 4) == 0 || strncmp(rk_arg(x, i), "0:", 2) == 0)
            rk_raise(x->k, 2, "gives files to root (%s %.40s)", x->verb, rk_arg(x, i));
    for (int i = 2; i <= rk_nargs(x); i++)
        if (rk_arg(x, i)[0] != '-')
            rk_write(x->k, rk_arg(x, i), rk_arg_dyn(x, i), "changes the owner of");
}

static void rule_privilege(struct rk_cmd *x)
{
    rk_raise(x->k, 2, "changes users, groups or capabilities (%s)", x->verb);
}

/* The host a network command names: its first non-option word naming one. */
static bool rk_cmd_host(struct rk_cmd *x, char *host, size_t sz)
{
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        if (a[0] != '-' && rk_url_host(a, host, sz))
            return true;
    }
    return false;
}

static bool rk_cmd_has_dyn(struct rk_cmd *x)
{
    for (int i = 1; i <= rk_nargs(x); i++)
        if (rk_arg_dyn(x, i))
            return true;
    return false;
}

/* A variable named like a secret ($GITHUB_TOKEN) sent to a host that is not one the tools
 * talk to by design. */
static void rk_send_secret_var(struct rk_cmd *x, const char *host)
{
    if (x->k->secret_var[0] && rk_cmd_has_dyn(x) && !rk_known_host(host))
        rk_raise(x->k, 2, "sends $%s to %.60s", x->k->secret_var, host);
}

static void rule_curl(struct rk_cmd *x)
{
    static const char *const send[] = {
        "-d", "--data", "--data-binary", "--data-raw", "--data-urlencode", "--data-ascii",
        "-F", "--form", "--form-string", "-T",         "--upload-file",    "--json",
        NULL};
    bool sends = false;
    const char *file = NULL; /* what it uploads: @file, -T file ("-": its input) */
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        bool opt = rk_in(a, send) || strncmp(a, "--data", 6) == 0 || strncmp(a, "--form", 6) == 0 ||
                   strncmp(a, "--upload-file", 13) == 0 || strncmp(a, "--json", 6) == 0;
        /* short options together: -sd @f, -sSLF x=@f, -fT f */
        if (a[0] == '-' && a[1] && a[1] != '-' && strpbrk(a + 1, "dFT"))
            opt = true;
        if (opt) {
            sends = true;
            const char *v = i < rk_nargs(x) ? rk_arg(x, i + 1) : "";
            const char *at = strchr(v, '@');
            if (a[strlen(a) - 1] == 'T' || strcmp(a, "--upload-file") == 0)
                file = v;
            else if (at && (at == v || at[-1] == '='))
                file = at + 1;
        }
        const char *m = NULL;
        if ((strcmp(a, "-X") == 0 || strcmp(a, "--request") == 0) && i < rk_nargs(x))
            m = rk_arg(x, i + 1);
        else if (strncmp(a, "-X", 2) == 0 && a[2])
            m = a + 2;
        else if (strncmp(a, "--request=", 10) == 0)
            m = a + 10;
        if (m && (strcasecmp(m, "POST") == 0 || strcasecmp(m, "PUT") == 0 ||
                  strcasecmp(m, "PATCH") == 0))
            sends = true;
    }
    rk_reads(x);
    x->k->fetch = true;
    x->f->fetch = true;
    char host[128] = "";
    if (!rk_cmd_host(x, host, sizeof(host)) || !rk_local_host(host))
        x->f->netsend = true;
    if (host[0] && rk_local_host(host)) {
        rk_raise(x->k, 0, "talks to a server in the sandbox (%.60s)", host);
        return;
    }
    const char *to = host[0] ? host : "the network";
    rk_send_secret_var(x, to);
    if (file && (strcmp(file, "-") == 0 || strcmp(file, "/dev/stdin") == 0))
        rk_raise(x->k, x->k->piped_in ? 2 : 1, "sends its input to %.60s", to);
    else if (file)
        rk_raise(x->k, 2, "uploads %.60s to %.60s", file, to);
    else if (sends)
        rk_raise(x->k, 1, "sends data to %.60s", to);
    else if (rk_flag(x, 'o', "--output") || rk_flag(x, 'O', "--remote-name"))
        rk_raise(x->k, 1, "downloads a file from %.60s", to);
    else
        rk_raise(x->k, 1, "fetches from %.60s", to);
}

static void rule_wget(struct rk_cmd *x)
{
    x->k->fetch = true;
    x->f->fetch = true;
    char host[128] = "";
    bool local = rk_cmd_host(x, host, sizeof(host)) && rk_local_host(host);
    x->f->netsend = !local;
    const char *to = host[0] ? host : "the network";
    for (int i = 1; i <= rk_nargs(x); i++)
        if (strncmp(rk_arg(x, i), "--post-file=", 12) == 0 ||
            strncmp(rk_arg(x, i), "--body-file=", 12) == 0)
            rk_raise(x->k, local ? 0 : 2, "uploads %.60s to %.60s", strchr(rk_arg(x, i), '=') + 1,
                     to);
    if (!local)
        rk_send_secret_var(x, to);
    if (rk_has_prefix_arg(x, "--post-") || rk_has_prefix_arg(x, "--body-") ||
        rk_has_prefix_arg(x, "--method=POST") || rk_has_prefix_arg(x, "--method=PUT"))
        rk_raise(x->k, local ? 0 : 1, "sends data to %.60s with %s", to, x->verb);
    rk_reads(x);
    rk_raise(x->k, local ? 0 : 1, "downloads from %.60s (%s)", to, x->verb);
}

/* A raw connection's far end for the pipeline rule (a shell piped through it). */
static void rk_peer(struct rk_cmd *x, const char *host, const char *port)
{
    if (host && !rk_local_host(host))
        snprintf(x->f->peer, sizeof(x->f->peer), "%.60s%s%.10s", host, port ? ":" : "",
                 port ? port : "");
}

static void rule_nc(struct rk_cmd *x)
{
    static const char *const exec_opts[] = {"-e", "-c", "--exec", "--sh-exec", "--lua-exec", NULL};
    static const char *const value_opts[] = {"-w", "-q", "-i", "-s", "-x", "-X", "-W",
                                             "-T", "-O", "-I", "-P", "-g", "-G", NULL};
    const char *host = NULL, *port = NULL, *exec = NULL;
    bool listen = false;
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i), *next = i < rk_nargs(x) ? rk_arg(x, i + 1) : NULL;
        if (rk_in(a, exec_opts) && next) {
            exec = next;
            i++;
        } else if (strncmp(a, "--exec=", 7) == 0 || strncmp(a, "--sh-exec=", 10) == 0) {
            exec = strchr(a, '=') + 1;
        } else if (strcmp(a, "--listen") == 0) {
            listen = true;
        } else if (a[0] == '-' && a[1] && a[1] != '-') {
            listen |= strchr(a, 'l') != NULL;
            if (a[strlen(a) - 1] == 'p' && next) {
                port = next;
                i++;
            } else if (rk_in(a, value_opts)) {
                i++;
            }
        } else if (a[0] != '-') {
            if (!host && !listen)
                host = a;
            else if (!port)
                port = a;
        }
    }
    x->f->netsend = true;
    bool input = x->k->piped_in;
    for (int i = 0; i < x->c->nredirs; i++)
        input |= x->c->redirs[i].kind == RS_REDIR_IN;
    if (exec && listen)
        rk_raise(x->k, 2, "serves a shell on port %.10s (%s -e %.40s)", port ? port : "?", x->verb,
                 exec);
    else if (exec)
        rk_raise(x->k, 2, "opens a shell to %.60s:%.10s (%s -e)", host ? host : "?",
                 port ? port : "?", x->verb);
    else if (listen)
        rk_raise(x->k, 1, "listens on a network port (%s)", x->verb);
    else if (host && rk_local_host(host))
        rk_raise(x->k, 0, "connects to a server in the sandbox (%s %.40s)", x->verb, host);
    else if (input)
        rk_raise(x->k, 2, "sends data to %.60s:%.10s (%s)", host ? host : "?", port ? port : "?",
                 x->verb);
    else
        rk_raise(x->k, 1, "opens a connection to %.60s:%.10s (%s)", host ? host : "?",
                 port ? port : "?", x->verb);
    rk_peer(x, host, port);
}

/* socat ADDRESS ADDRESS: EXEC: or SYSTEM: on one side is a shell served to the other. */
static void rule_socat(struct rk_cmd *x)
{
    bool shell = false;
    char peer[96] = "", listen[16] = "";
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        if (strncasecmp(a, "exec:", 5) == 0 || strncasecmp(a, "system:", 7) == 0)
            shell = true;
        static const char *const out[] = {"tcp:",
                                          "tcp4:",
                                          "tcp6:",
                                          "tcp-connect:",
                                          "udp:",
                                          "openssl:",
                                          "openssl-connect:",
                                          "udp-connect:",
                                          NULL};
        for (const char *const *o = out; *o; o++)
            if (strncasecmp(a, *o, strlen(*o)) == 0)
                snprintf(peer, sizeof(peer), "%.*s", (int)strcspn(a + strlen(*o), ","),
                         a + strlen(*o));
        if (strncasecmp(a, "tcp-listen:", 11) == 0 || strncasecmp(a, "tcp4-listen:", 12) == 0)
            snprintf(listen, sizeof(listen), "%.*s", (int)strcspn(strchr(a, ':') + 1, ","),
                     strchr(a, ':') + 1);
    }
    x->f->netsend = true;
    if (shell && peer[0])
        rk_raise(x->k, 2, "opens a shell to %.80s (socat)", peer);
    else if (shell && listen[0])
        rk_raise(x->k, 2, "serves a shell on port %s (socat)", listen);
    else
        rk_raise(x->k, 1, "relays a network connection (socat)");
    if (peer[0] && !rk_local_host(peer))
        snprintf(x->f->peer, sizeof(x->f->peer), "%s", peer);
}

/* The first two operands of a client that takes HOST [PORT] (ztcp, telnet); NULL when absent. */
static void rk_host_port(struct rk_cmd *x, const char **host, const char **port)
{
    for (int i = 1; i <= rk_nargs(x); i++)
        if (rk_arg(x, i)[0] != '-') {
            if (!*host)
                *host = rk_arg(x, i);
            else if (!*port)
                *port = rk_arg(x, i);
        }
}

/* zsh's ztcp HOST PORT: a raw connection whose descriptor a shell is then redirected to. */
static void rule_ztcp(struct rk_cmd *x)
{
    const char *host = NULL, *port = NULL;
    rk_host_port(x, &host, &port);
    x->f->netsend = true;
    if (!host || rk_local_host(host))
        rk_raise(x->k, 1, "opens or closes a raw connection (ztcp)");
    else
        rk_raise(x->k, 2, "opens a network connection to %.60s:%.10s (zsh ztcp)", host,
                 port ? port : "?");
}

static void rule_telnet(struct rk_cmd *x)
{
    const char *host = NULL, *port = NULL;
    rk_host_port(x, &host, &port);
    x->f->netsend = true;
    if (host && rk_local_host(host))
        rk_raise(x->k, 0, "connects to a server in the sandbox (telnet %.40s)", host);
    else
        rk_raise(x->k, 1, "opens a connection to %.60s:%.10s (telnet)", host ? host : "?",
                 port ? port : "23");
    rk_peer(x, host, port);
}

static void rule_remote(struct rk_cmd *x)
{
    x->f->netsend = true;
    rk_raise(x->k, 2, "connects to another host (%s)", x->verb);
}

static void rule_rsync(struct rk_cmd *x)
{
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        if (a[0] != '-' && (strchr(a, ':') || strncmp(a, "rsync://", 8) == 0)) {
            x->f->netsend = true;
            rk_raise(x->k, 2, "copies files to or from another host (rsync %.60s)", a);
        }
    }
    rk_reads(x);
    const char *dst = rk_nargs(x) >= 1 ? rk_arg(x, rk_nargs(x)) : NULL;
    if (dst && dst[0] != '-')
        rk_write(x->k, dst, rk_arg_dyn(x, rk_nargs(x)),
                 rk_has_prefix_arg(x, "--delete") ? "mirrors with deletes into" : "copies into");
}

/* git settings whose value is a program git runs (keys are case-insensitive). */
static bool rk_git_runs(const char *key)
{
    static const char *const keys[] = {
        "hookspath",   "fsmonitor", "sshcommand", "pager",      "editor",   "external",
        "askpass",     ".program",  "textconv",   "credential", "gitproxy", "uploadpack",
        "receivepack", ".clean",    ".smudge",    ".process",   NULL};
    for (const char *const *k = keys; *k; k++)
        if (strcasestr(key, *k))
            return true;
    return false;
}

/* A pager setting that runs nothing but a pager (OpenHands' runtime sets core.pager "" so git
 * never waits on one): not "makes git run other programs". */
static bool rk_git_plain_pager(const char *key, const char *value)
{
    if (!value || (strcasecmp(key, "core.pager") != 0 && strncasecmp(key, "pager.", 6) != 0))
        return false;
    static const char *const plain[] = {"", "cat", "less", "more", "false", "true", NULL};
    for (const char *const *p = plain; *p; p++)
        if (strcmp(value, *p) == 0)
            return true;
    /* less with options only: "less -R", "less -FRX" */
    return strncmp(value, "less -", 6) == 0 &&
           strspn(value + 5, " -ABCEFGIJKLMNPQRSTVWXabcdefghijklmnpqrstuvwx") == strlen(value + 5);
}

/* git alias.x '!cmd' runs cmd in a shell. */
static void rk_git_alias(struct rk *k, const char *key, const char *value)
{
    if (strncasecmp(key, "alias.", 6) == 0 && value && value[0] == '!') {
        rk_raise(k, 1, "defines a git alias that runs shell commands");
        rk_text(k, value + 1, strlen(value + 1), NULL);
    }
}

static void rule_git(struct rk_cmd *x)
{
    int s = 1;
    /* git -C dir / -c k=v before the subcommand */
    while (s <= rk_nargs(x) && rk_arg(x, s)[0] == '-') {
        const char *a = rk_arg(x, s);
        if (strcmp(a, "-c") == 0 && s < rk_nargs(x)) {
            const char *kv = rk_arg(x, s + 1);
            const char *eq = strchr(kv, '=');
            char key[128];
            snprintf(key, sizeof(key), "%.*s", eq ? (int)(eq - kv) : (int)strlen(kv), kv);
            if (rk_git_runs(key) && !rk_git_plain_pager(key, eq ? eq + 1 : NULL))
                rk_raise(x->k, 2, "makes git run other programs (-c %.40s)", kv);
            rk_git_alias(x->k, key, eq ? eq + 1 : NULL);
            s++;
        } else if (strcmp(a, "-C") == 0) {
            s++;
        }
        s++;
    }
    const char *sub = s <= rk_nargs(x) ? rk_arg(x, s) : "";
    static const char *const low[] = {
        "status",   "diff",        "log",          "show",    "blame",    "rev-parse",
        "ls-files", "describe",    "shortlog",     "grep",    "ls-tree",  "cat-file",
        "help",     "version",     "add",          "commit",  "checkout", "switch",
        "restore",  "stash",       "merge",        "tag",     "init",     "am",
        "apply",    "cherry-pick", "revert",       "mv",      "rm",       "worktree",
        "notes",    "bisect",      "format-patch", "archive", "fsck",     "count-objects",
        "config",   NULL};
    static const char *const local_rewrite[] = {"reset", "rebase", "clean", NULL};
    static const char *const net[] = {"clone", "fetch", "pull", "submodule", "ls-remote", NULL};
    if (strcmp(sub, "push") == 0) {
        x->f->netsend = true;
        bool force = false;
        const char *url = NULL;
        for (int i = s + 1; i <= rk_nargs(x); i++) {
            const char *a = rk_arg(x, i);
            if (strcmp(a, "-f") == 0 || strncmp(a, "--force", 7) == 0 ||
                strcmp(a, "--delete") == 0 || strcmp(a, "-d") == 0 || strcmp(a, "--mirror") == 0 ||
                (a[0] == '+' && a[1]) || (a[0] == ':' && a[1]))
                force = true;
            if (a[0] != '-' && !url && (strstr(a, "://") || (strchr(a, '@') && strchr(a, ':'))))
                url = a;
        }
        char host[128];
        if (force)
            rk_raise(x->k, 2, "rewrites or deletes history on a remote (git push --force)");
        else if (url && rk_url_host(url, host, sizeof(host)) && !rk_known_host(host))
            rk_raise(x->k, 2, "pushes the repository to %.60s", host);
        else if (url)
            rk_raise(x->k, 2, "pushes the repository to %.60s", url);
        else
            rk_raise(x->k, 1, "pushes commits to a configured remote");
    } else if (strcmp(sub, "remote") == 0 && s < rk_nargs(x) &&
               (strcmp(rk_arg(x, s + 1), "add") == 0 || strcmp(rk_arg(x, s + 1), "set-url") == 0)) {
        rk_raise(x->k, 1, "changes where git fetches and pushes (git remote %s)", rk_arg(x, s + 1));
    } else if (strcmp(sub, "filter-branch") == 0 || strcmp(sub, "filter-repo") == 0 ||
               (strcmp(sub, "update-ref") == 0 && rk_has_arg(x, "-d"))) {
        rk_raise(x->k, 2, "rewrites git history (git %s)", sub);
    } else if ((strcmp(sub, "reflog") == 0 && rk_has_arg(x, "expire")) ||
               (strcmp(sub, "gc") == 0 && rk_has_prefix_arg(x, "--prune=now")) ||
               (strcmp(sub, "prune") == 0 && rk_has_prefix_arg(x, "--expire"))) {
        rk_raise(x->k, 2, "destroys the commits git could recover (git %s)", sub);
    } else if (strcmp(sub, "config") == 0) {
        for (int i = s + 1; i <= rk_nargs(x); i++) {
            if (rk_arg(x, i)[0] == '-')
                continue;
            if (rk_git_runs(rk_arg(x, i)) &&
                !rk_git_plain_pager(rk_arg(x, i), i < rk_nargs(x) ? rk_arg(x, i + 1) : NULL))
                rk_raise(x->k, 2, "makes git run other programs (git config %.40s)", rk_arg(x, i));
            rk_git_alias(x->k, rk_arg(x, i), i < rk_nargs(x) ? rk_arg(x, i + 1) : NULL);
            break; /* the key; what follows is its value */
        }
        if (!rk_has_arg(x, "--get") && !rk_has_arg(x, "-l") && !rk_has_arg(x, "--list"))
            rk_raise(x->k, 0, "changes git's configuration");
    } else if (strcmp(sub, "branch") == 0 || strcmp(sub, "remote") == 0) {
        if (rk_flag(x, 'D', NULL) || rk_has_arg(x, "rm") || rk_has_arg(x, "remove"))
            rk_raise(x->k, 1, "deletes git branches or remotes");
    } else if (strcmp(sub, "reflog") == 0 || strcmp(sub, "gc") == 0) {
        rk_raise(x->k, 0, "maintains the repository (git %s)", sub);
    } else if (rk_in(sub, net)) {
        /* a fresh clone's scripts are downloaded code; pull updates the project's own */
        if (strcmp(sub, "clone") == 0 || strcmp(sub, "submodule") == 0)
            x->k->fetch = true;
        rk_raise(x->k, 1, "fetches code from the network (git %s)", sub);
    } else if (rk_in(sub, local_rewrite) ||
               (strcmp(sub, "commit") == 0 && rk_has_arg(x, "--amend"))) {
        if (strcmp(sub, "reset") != 0 || rk_has_arg(x, "--hard") || rk_has_arg(x, "--keep") ||
            rk_has_arg(x, "--merge"))
            rk_raise(x->k, 1, "rewrites local history or discards changes (git %s)", sub);
        else
            rk_raise(x->k, 0, "unstages changes (git reset)");
    } else if (rk_in(sub, low) || !*sub) {
        rk_raise(x->k, 0, "local version control (git %s)", sub);
    } else {
        rk_raise(x->k, 1, "runs git %.40s", sub);
    }
}

static void rule_escape(struct rk_cmd *x)
{
    if (strcmp(x->verb, "mount") == 0 && rk_nargs(x) == 0)
        return; /* listing mounts */
    rk_raise(x->k, 2, "reaches outside the sandbox (%s)", x->verb);
}

static void rule_sysctl(struct rk_cmd *x)
{
    for (int i = 1; i <= rk_nargs(x); i++)
        if (strchr(rk_arg(x, i), '=') || strcmp(rk_arg(x, i), "-w") == 0 ||
            strcmp(rk_arg(x, i), "--write") == 0 || strcmp(rk_arg(x, i), "-p") == 0)
            rk_raise(x->k, 2, "changes kernel settings (sysctl)");
}

static void rule_persist(struct rk_cmd *x)
{
    if (strcmp(x->verb, "crontab") == 0 && rk_has_arg(x, "-l"))
        return;
    if (strcmp(x->verb, "systemctl") == 0 || strcmp(x->verb, "service") == 0) {
        static const char *const change[] = {"enable",        "start", "restart", "reload",
                                             "mask",          "link",  "edit",    "set-property",
                                             "daemon-reload", "stop",  "disable", NULL};
        for (int i = 1; i <= rk_nargs(x); i++)
            if (rk_in(rk_arg(x, i), change)) {
                rk_raise(x->k, 2, "starts or changes services (%s %s)", x->verb, rk_arg(x, i));
                return;
            }
        return;
    }
    rk_raise(x->k, 2, "schedules commands to run later (%s)", x->verb);
}

static void rule_kill(struct rk_cmd *x)
{
    /* kill -9 -1 (every process), kill 1 (init) */
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        if ((strcmp(a, "-1") == 0 && i == rk_nargs(x)) || strcmp(a, "1") == 0) {
            rk_raise(x->k, 2, "kills every process or init (kill %.20s)", a);
            return;
        }
    }
    if (strcmp(x->verb, "kill") == 0) {
        rk_raise(x->k, 1, "stops a process (kill)");
        return;
    }
    if (strcmp(x->verb, "killall5") == 0) {
        rk_raise(x->k, 2, "kills every process (killall5)");
        return;
    }
    /* pkill -f "http.server": the agent stopping its own server. A pattern that matches
     * everything, or the sandbox's executor, is another matter. */
    const char *pat = NULL;
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        if ((strcmp(a, "-u") == 0 || strcmp(a, "-U") == 0 || strcmp(a, "-s") == 0 ||
             strcmp(a, "-g") == 0 || strcmp(a, "-P") == 0 || strcmp(a, "-t") == 0) &&
            i < rk_nargs(x)) {
            i++;
            continue;
        }
        if (a[0] != '-')
            pat = a;
    }
    if (pat && (strstr(pat, "paddock") || strstr(pat, "executor")))
        rk_raise(x->k, 2, "kills the sandbox's executor (%s %.40s)", x->verb, pat);
    else if (!pat || !*pat || strcmp(pat, ".") == 0 || strcmp(pat, ".*") == 0 ||
             strcmp(pat, "*") == 0 || strcmp(pat, "^") == 0)
        rk_raise(x->k, 2, "kills every process it can (%s)", x->verb);
    else
        rk_raise(x->k, 1, "stops processes by name (%s %.40s)", x->verb, pat);
}

static void rule_syspkg(struct rk_cmd *x)
{
    static const char *const change[] = {
        "install", "remove", "purge", "upgrade", "dist-upgrade", "add", "del",
        "update",  "-S",     "-R",    "-U",      "reinstall",    NULL};
    for (int i = 1; i <= rk_nargs(x); i++)
        if (rk_in(rk_arg(x, i), change)) {
            rk_raise(x->k, 1, "installs or removes system packages (%s %s)", x->verb, rk_arg(x, i));
            return;
        }
}

/* An install source other than the default registry: an index, a URL, git, a tarball;
 * pip's -i and -f too. */
static bool rk_unvetted_source(const char *a, bool pip)
{
    size_t n = strlen(a);
    return (pip && (strcmp(a, "-i") == 0 || strncmp(a, "-f", 2) == 0)) ||
           strncmp(a, "--index", 7) == 0 || strncmp(a, "--extra-index-url", 17) == 0 ||
           strncmp(a, "--trusted-host", 14) == 0 || strncmp(a, "--find-links", 12) == 0 ||
           strncmp(a, "--registry", 10) == 0 || strncmp(a, "git+", 4) == 0 || strstr(a, "://") ||
           strncmp(a, "github:", 7) == 0 || (n > 4 && strcmp(a + n - 4, ".tgz") == 0) ||
           (n > 7 && strcmp(a + n - 7, ".tar.gz") == 0);
}

static void rule_pip(struct rk_cmd *x, int from)
{
    bool install = false;
    for (int i = from; i <= rk_nargs(x); i++)
        if (strcmp(rk_arg(x, i), "install") == 0 || strcmp(rk_arg(x, i), "download") == 0 ||
            strcmp(rk_arg(x, i), "sync") == 0 || strcmp(rk_arg(x, i), "add") == 0)
            install = true;
    if (!install) {
        if (rk_has_arg(x, "uninstall") || rk_has_arg(x, "remove"))
            rk_raise(x->k, 1, "removes Python packages");
        if (rk_has_arg(x, "config") && (rk_has_arg(x, "set") || rk_has_arg(x, "edit"))) {
            for (int i = from; i <= rk_nargs(x); i++)
                if (strstr(rk_arg(x, i), "index") || strstr(rk_arg(x, i), "trusted-host") ||
                    strstr(rk_arg(x, i), "find-links"))
                    rk_raise(x->k, 2, "changes the package index (%s config %.40s)", x->verb,
                             rk_arg(x, i));
            rk_raise(x->k, 1, "changes pip's configuration");
        }
        return;
    }
    for (int i = from; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        if (rk_unvetted_source(a, true)) {
            rk_raise(x->k, 2, "installs packages from an unvetted source (%.60s)", a);
            return;
        }
    }
    rk_raise(x->k, 1, "installs Python packages");
}

static void rule_pip_verb(struct rk_cmd *x)
{
    /* uv run, pipx run, uvx: fetch a tool if needed and run it */
    if (strcmp(x->verb, "uvx") == 0 || (rk_nargs(x) >= 1 && strcmp(rk_arg(x, 1), "run") == 0) ||
        (rk_nargs(x) >= 2 && strcmp(rk_arg(x, 1), "tool") == 0 &&
         strcmp(rk_arg(x, 2), "run") == 0)) {
        rk_raise(x->k, 1, "runs code (%s %.40s)", x->verb, rk_nargs(x) >= 1 ? rk_arg(x, 1) : "");
        return;
    }
    rule_pip(x, 1);
    if (strcmp(x->verb, "uv") == 0 && rk_nargs(x) >= 1 && strcmp(rk_arg(x, 1), "pip") != 0)
        rk_raise(x->k, 1, "runs uv %.40s", rk_arg(x, 1));
}

static void rule_npm(struct rk_cmd *x)
{
    if (rk_flag(x, 'g', "--global") || rk_has_prefix_arg(x, "--location=global"))
        rk_raise(x->k, 1, "installs packages globally (%s -g)", x->verb);
    if (rk_has_arg(x, "config") && (rk_has_arg(x, "registry") || rk_has_prefix_arg(x, "registry")))
        rk_raise(x->k, 2, "changes the package registry (%s config)", x->verb);
    static const char *const inst[] = {"install", "i",   "ci",       "add", "update",
                                       "upgrade", "get", "download", NULL};
    for (int i = 1; i <= rk_nargs(x); i++)
        if (rk_in(rk_arg(x, i), inst)) {
            for (int j = i + 1; j <= rk_nargs(x); j++)
                if (rk_unvetted_source(rk_arg(x, j), false))
                    rk_raise(x->k, 2, "installs packages from an unvetted source (%.60s)",
                             rk_arg(x, j));
            rk_raise(x->k, 1, "installs packages (%s %s)", x->verb, rk_arg(x, i));
            return;
        }
    if (rk_nargs(x) >= 1 &&
        (strcmp(rk_arg(x, 1), "--version") == 0 || strcmp(rk_arg(x, 1), "-v") == 0 ||
         strcmp(rk_arg(x, 1), "ls") == 0 || strcmp(rk_arg(x, 1), "list") == 0 ||
         strcmp(rk_arg(x, 1), "view") == 0 || strcmp(rk_arg(x, 1), "version") == 0))
        return;
    /* building, testing and the project's own scripts */
    rk_raise(x->k, 0, "builds, tests or runs the project (%s)", x->verb);
}

/* Every string literal of code classified as a command line, adjacent ones joined: the
 * list ['rm', '-rf', '/'] and the sum "rm -rf " + "/" are one line each. */
static void rk_code_strings(struct rk *k, const char *code)
{
    struct buf line = {0};
    const char *p = code;
    while ((p = strpbrk(p, "'\"`"))) {
        char q = *p;
        const char *end = strchr(p + 1, q);
        if (!end)
            break;
        buf_append(&line, p + 1, (size_t)(end - p - 1));
        p = end + 1;
        size_t gap = strspn(p, " \t\n,+.");
        if (p[gap] && strchr("'\"`", p[gap])) {
            if (memchr(p, ',', gap))
                buf_append(&line, " ", 1); /* list items are words */
            p += gap;
            continue;
        }
        if (line.len)
            rk_text(k, line.data, line.len, NULL);
        buf_reset(&line);
    }
    free(line.data);
}

/* The far end a piece of code connects to: the first string literal naming a host (an address
 * or a dotted name that is not a file) and the first port-like number after a ',', '=', '(' or
 * ':'. "?" when not written out (read from the environment). */
static void rk_code_peer(const char *code, char *out, size_t sz)
{
    char host[80] = "", port[8] = "";
    for (const char *p = code; (p = strpbrk(p, "'\"")) && !host[0];) {
        const char *end = strchr(p + 1, *p);
        if (!end)
            break;
        size_t n = (size_t)(end - p - 1);
        const char *t = p + 1;
        bool hostlike = n > 3 && n < 64 && memchr(t, '.', n) &&
                        strspn(t, "abcdefghijklmnopqrstuvwxyz"
                                  "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                  "0123456789.-:") == n;
        const char *dot = memrchr(t, '.', n);
        /* module and file names (socket.py, x.so) are not hosts */
        if (hostlike && (isdigit((unsigned char)t[0]) ||
                         (dot && end - dot > 2 && end - dot < 6 && !memchr(t, ':', n))))
            snprintf(host, sizeof(host), "%.*s", (int)strcspn(t, ":\"'"), t);
        if (hostlike && memchr(t, ':', n))
            snprintf(port, sizeof(port), "%.6s", (const char *)memchr(t, ':', n) + 1);
        p = end + 1;
    }
    for (const char *p = code; *p && !port[0]; p++) {
        if (!strchr(",=(:", *p))
            continue;
        const char *q = p + 1;
        while (*q == ' ' || *q == '"' || *q == '\'')
            q++;
        size_t d = strspn(q, "0123456789");
        if (d >= 2 && d <= 5 && !isalnum((unsigned char)q[d]) && q[d] != '.' && atoi(q) <= 65535)
            snprintf(port, sizeof(port), "%.*s", (int)d, q);
    }
    /* a dotted name must be a host: 'os.dup2' is not */
    snprintf(out, sz, "%s%s%s", host[0] ? host : "?", port[0] ? ":" : "", port);
}

/* Code that opens a socket and hands it a shell is a reverse shell; one that sends the
 * environment to the network sends its secrets out. */
static void rk_code_socket(struct rk *k, const char *code, const char *lang)
{
    static const char *const sockets[] = {"socket",      "Socket",           "fsockopen",
                                          "net.connect", "createConnection", "/inet/tcp/",
                                          "/dev/tcp/",   "IO::Socket",       NULL};
    static const char *const shells[] = {"/bin/sh",  "/bin/bash",     "pty.spawn", "dup2",
                                         "\"sh\"",   "'sh'",          "\"bash\"",  "'bash'",
                                         "sh -i",    "bash -i",       "cmd.exe",   "system$_",
                                         "IO.popen", "child_process", NULL};
    static const char *const network[] = {"urlopen", "requests.", "http.client", "urllib",
                                          "fetch(",  "LWP::",     "Net::HTTP",   "socket",
                                          "Socket",  "axios",     "httpx.",      NULL};
    static const char *const envs[] = {"os.environ", "process.env", "ENV[", "%ENV",
                                       "getenv",     "environ",     NULL};
    bool sock = false, shell = false, net = false, env = false;
    for (const char *const *w = sockets; *w && !sock; w++)
        sock = strstr(code, *w) != NULL;
    for (const char *const *w = shells; *w && !shell; w++)
        shell = strstr(code, *w) != NULL;
    for (const char *const *w = network; *w && !net; w++)
        net = strstr(code, *w) != NULL;
    for (const char *const *w = envs; *w && !env; w++)
        env = strstr(code, *w) != NULL;
    char peer[96];
    rk_code_peer(code, peer, sizeof(peer));
    if (sock && shell)
        rk_raise(k, 2, "opens a shell to %s from %s code", peer, lang);
    else if (net && env && !rk_local_host(peer))
        rk_raise(k, 2, "sends the environment to %s from %s code", peer, lang);
    else if (sock && strcmp(peer, "?") != 0 && !rk_local_host(peer))
        rk_raise(k, 1, "opens a network connection to %s from %s code", peer, lang);
}

/* python -c CODE, perl -e CODE...: the code's shell calls are commands. */
static void rk_code(struct rk *k, const char *code, const char *lang, struct rk_facts *f)
{
    static const char *const calls[] = {
        "system(",       "popen(",    "subprocess", "exec(",      "execv",
        "spawn",         "os.remove", "rmtree",     "unlink(",    "eval(",
        "child_process", "`",         "shell_exec", "passthru",   "Runtime.getRuntime",
        "os.execute",    "rmSync",    "rmdirSync",  "unlinkSync", "fs.rm(",
        "exec ",         "system ",   "proc_open",  "IO.popen",   NULL};
    bool calls_out = false;
    for (const char *const *c = calls; *c; c++)
        if (strstr(code, *c))
            calls_out = true;
    /* every string literal may be a command: classify the ones it could run */
    if (calls_out) {
        rk_code_strings(k, code);
        if (strstr(code, "rmtree") || strstr(code, "os.remove") || strstr(code, "unlink(") ||
            strstr(code, "rmSync") || strstr(code, "rmdirSync") || strstr(code, "unlinkSync") ||
            strstr(code, "fs.rm(")) {
            const char *p2 = code;
            while ((p2 = strpbrk(p2, "'\""))) {
                char q = *p2;
                const char *end = strchr(p2 + 1, q);
                if (!end)
                    break;
                char path[512];
                snprintf(path, sizeof(path), "%.*s", (int)(end - p2 - 1), p2 + 1);
                char norm[1024];
                enum rk_where w = rk_where(k, path, false, norm, sizeof(norm));
                if (path[0] && (w == RK_ROOT || w == RK_SYSTEM || w == RK_HOMEDIR ||
                                w == RK_WSROOT || w == RK_OUTSIDE))
                    rk_raise(k, 2, "deletes %.60s from %s code", path, lang);
                p2 = end + 1;
            }
        }
        rk_raise(k, 1, "runs commands from %s code", lang);
    } else {
        rk_raise(k, 0, "runs %s code", lang);
    }
    rk_code_socket(k, code, lang);
    if (strstr(code, "b64decode") || strstr(code, "base64") || strstr(code, "decode("))
        if (calls_out)
            rk_raise(k, 2, "decodes hidden text and runs it in %s", lang);
    if (strstr(code, "urlopen") || strstr(code, "requests.") || strstr(code, "http.client") ||
        strstr(code, "urllib") || strstr(code, "fetch(") || strstr(code, "LWP::") ||
        strstr(code, "Net::HTTP")) {
        k->fetch = true;
        if (f)
            f->fetch = true;
        if (calls_out)
            rk_raise(k, 2, "downloads and runs code in %s", lang);
        else
            rk_raise(k, 1, "reaches the network from %s code", lang);
    }
    /* credentials read from code */
    const char *p = code;
    while ((p = strpbrk(p, "'\""))) {
        char q = *p;
        const char *end = strchr(p + 1, q);
        if (!end)
            break;
        /* only a literal with a slash or a dot can name a credential file */
        size_t n = (size_t)(end - p - 1);
        char path[512];
        if ((memchr(p + 1, '/', n) || memchr(p + 1, '.', n) || memchr(p + 1, '_', n)) &&
            snprintf(path, sizeof(path), "%.*s", (int)n, p + 1) > 0 && rk_secret(path)) {
            rk_raise(k, 2, "reads credentials (%.60s) from %s code", path, lang);
            if (f)
                f->secret = true;
        }
        p = end + 1;
    }
}

static void rule_interp(struct rk_cmd *x)
{
    const char *lang = x->verb;
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        if ((strcmp(a, "-c") == 0 || strcmp(a, "-e") == 0 || strcmp(a, "-E") == 0 ||
             strcmp(a, "--eval") == 0 || strcmp(a, "-r") == 0) &&
            i < rk_nargs(x)) {
            rk_code(x->k, rk_arg(x, i + 1), lang, x->f);
            if (rk_arg_dyn(x, i + 1)) { /* python3 -c "$(curl ...)" runs what was made */
                x->f->consumer = true;
                snprintf(x->f->lang, sizeof(x->f->lang), "%s", lang);
            }
            return;
        }
        if (strcmp(a, "-m") == 0 && i < rk_nargs(x)) {
            const char *mod = rk_arg(x, i + 1);
            if (strcmp(mod, "pip") == 0) {
                rule_pip(x, i + 2);
                return;
            }
            if (strcmp(mod, "http.server") == 0)
                rk_raise(x->k, 1, "starts a web server (python -m http.server)");
            else
                rk_raise(x->k, 0, "runs %s module %.40s", lang, mod);
            return;
        }
        if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0 || strcmp(a, "-v") == 0)
            return;
        if (a[0] != '-') {
            x->k->runs_file = true;
            if (x->c->words[x->v + i].subst & RS_SUBST_PROCESS) {
                x->f->consumer = true; /* python3 <(curl ...) */
                snprintf(x->f->lang, sizeof(x->f->lang), "%s", lang);
            }
            char norm[1024];
            enum rk_where w = rk_where(x->k, a, rk_arg_dyn(x, i), norm, sizeof(norm));
            /* the project's own code; a script elsewhere is unknown */
            rk_raise(x->k, w == RK_INSIDE || w == RK_DYNAMIC ? 0 : 1, "runs %.60s with %s", a,
                     lang);
            return;
        }
        if (strcmp(a, "-") == 0)
            break;
    }
    /* no program named: it reads one from stdin */
    x->f->consumer = true;
    snprintf(x->f->lang, sizeof(x->f->lang), "%s", lang);
    rk_raise(x->k, 1, "runs %s code from its input", lang);
}

static void rule_shell(struct rk_cmd *x)
{
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        if (a[0] == '-' && strchr(a, 'c') && a[1] != '-' && i < rk_nargs(x)) {
            if (strcmp(rk_arg(x, i + 1), "--") == 0 && i + 1 < rk_nargs(x))
                i++; /* sh -c -- 'cmd' */
            const char *body = rk_arg(x, i + 1);
            if (rk_arg_dyn(x, i + 1))
                x->f->consumer = true; /* sh -c "$(curl ...)": runs text made at run time */
            rk_text(x->k, body, strlen(body), NULL);
            if (rk_arg_dyn(x, i + 1))
                rk_raise(x->k, 1, "runs a command line built at run time (%s -c)", x->verb);
            return;
        }
        if (a[0] != '-') {
            x->k->runs_file = true;
            if (x->c->words[x->v + i].subst & RS_SUBST_PROCESS)
                x->f->consumer = true; /* sh <(curl ...) */
            char norm[1024];
            enum rk_where w = rk_where(x->k, a, rk_arg_dyn(x, i), norm, sizeof(norm));
            rk_raise(x->k, w == RK_INSIDE ? 0 : 1, "runs the script %.60s", a);
            return;
        }
    }
    x->f->consumer = true;
    x->f->shell = true;
    rk_raise(x->k, 1, "runs shell commands from its input (%s)", x->verb);
}

/* eval "$(pyenv init -)": tools whose output is their own shell setup. */
static bool rk_setup_tool(const struct rk_cmd *x)
{
    static const char *const tools[] = {"pyenv",  "rbenv",    "nodenv",    "goenv",     "direnv",
                                        "conda",  "brew",     "ssh-agent", "dircolors", "fnm",
                                        "zoxide", "starship", "opam",      "luarocks",  "mise",
                                        "rtx",    "asdf",     "jenv",      "plenv",     NULL};
    return rk_in(x->k->nested_verb, tools);
}

static void rule_eval(struct rk_cmd *x)
{
    struct buf all = {0};
    bool literal = false;
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        if (buf_append_str(&all, a) < 0 || buf_append(&all, " ", 1) < 0)
            break;
        if (rk_arg_dyn(x, i))
            x->f->consumer = true; /* eval "$(...)" runs what it produced */
        else
            literal = true;
    }
    /* text written out only to be evaluated hides what runs; a tool's setup does not */
    if (literal || !rk_setup_tool(x))
        x->k->obfuscated = true;
    if (all.data) {
        rk_text(x->k, all.data, all.len, NULL);
        free(all.data);
    }
    rk_raise(x->k, 1, "evaluates text as commands (%s)", x->verb);
}

static void rule_source(struct rk_cmd *x)
{
    /* source <(curl ...), . /dev/stdin: it runs what it is fed */
    if (rk_nargs(x) < 1 || (x->c->words[x->v + 1].subst & RS_SUBST_PROCESS) ||
        strcmp(rk_arg(x, 1), "/dev/stdin") == 0 || strcmp(rk_arg(x, 1), "-") == 0)
        x->f->consumer = true;
    x->k->runs_file = true;
    char norm[1024];
    enum rk_where w = rk_nargs(x) >= 1
                          ? rk_where(x->k, rk_arg(x, 1), rk_arg_dyn(x, 1), norm, sizeof(norm))
                          : RK_DYNAMIC;
    rk_raise(x->k, w == RK_INSIDE && !x->f->consumer ? 0 : 1,
             "runs a script in the shell (%s %.60s)", x->verb,
             rk_nargs(x) >= 1 ? rk_arg(x, 1) : "");
}

static void rule_decoder(struct rk_cmd *x)
{
    bool decodes = false;
    if (strcmp(x->verb, "base64") == 0 || strcmp(x->verb, "base32") == 0 ||
        strcmp(x->verb, "basenc") == 0)
        decodes = rk_flag(x, 'd', "--decode") || rk_flag(x, 'D', NULL);
    else if (strcmp(x->verb, "xxd") == 0)
        decodes = rk_flag(x, 'r', "-revert");
    else if (strcmp(x->verb, "openssl") == 0 && rk_has_arg(x, "s_client")) {
        for (int i = 1; i < rk_nargs(x); i++)
            if (strcmp(rk_arg(x, i), "-connect") == 0) {
                const char *peer = rk_arg(x, i + 1);
                x->f->netsend = true;
                rk_raise(x->k, rk_local_host(peer) ? 0 : 1,
                         "opens a TLS connection to %.60s (openssl s_client)", peer);
                if (!rk_local_host(peer))
                    snprintf(x->f->peer, sizeof(x->f->peer), "%.60s", peer);
            }
        return;
    } else if (strcmp(x->verb, "openssl") == 0)
        decodes = rk_has_arg(x, "-d") || rk_has_arg(x, "-base64") || rk_has_arg(x, "base64");
    else
        decodes = true; /* uudecode, rev */
    if (decodes)
        x->f->decode = true;
    rk_reads(x);
}

static void rule_printf(struct rk_cmd *x)
{
    if (rk_nargs(x) >= 1 &&
        (strstr(rk_arg(x, 1), "\\x") || strstr(rk_arg(x, 1), "\\0") || strstr(rk_arg(x, 1), "\\1")))
        x->f->decode = true;
}

static void rule_tee(struct rk_cmd *x)
{
    for (int i = 1; i <= rk_nargs(x); i++)
        if (rk_arg(x, i)[0] != '-')
            rk_write(x->k, rk_arg(x, i), rk_arg_dyn(x, i), "writes");
}

static void rule_copy(struct rk_cmd *x)
{
    int last = 0, n = 0;
    for (int i = 1; i <= rk_nargs(x); i++)
        if (rk_arg(x, i)[0] != '-') {
            last = i;
            n++;
        }
    if (!last)
        return;
    rk_reads(x);
    if (n >= 2)
        rk_write(x->k, rk_arg(x, last), rk_arg_dyn(x, last),
                 strcmp(x->verb, "mv") == 0 ? "moves files into" : "copies files into");
    else
        rk_raise(x->k, 1, "%s files", x->verb);
}

static void rule_touch(struct rk_cmd *x)
{
    if (strcmp(x->verb, "fallocate") == 0)
        for (int i = 1; i < rk_nargs(x); i++)
            if ((strcmp(rk_arg(x, i), "-l") == 0 || strcmp(rk_arg(x, i), "--length") == 0) &&
                rk_size(rk_arg(x, i + 1)) >= RK_HUGE)
                rk_raise(x->k, 2, "fills the disk (fallocate -l %.20s)", rk_arg(x, i + 1));
    bool truncate = strcmp(x->verb, "truncate") == 0;
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        if (truncate && (strcmp(a, "-s") == 0 || strcmp(a, "--size") == 0 || strcmp(a, "-r") == 0 ||
                         strcmp(a, "--reference") == 0)) {
            i++; /* its value */
            continue;
        }
        if (a[0] == '-')
            continue;
        if (truncate && rk_database_file(a))
            rk_raise(x->k, 2, "empties a database (%.80s)", a);
        if (rk_arg_dyn(x, i) && strcmp(x->verb, "mkdir") == 0) {
            rk_raise(x->k, 0, "creates a directory"); /* wherever it is, it destroys nothing */
            continue;
        }
        /* touch adds no code to a shell's rc file (OpenHands' add_env_vars touches ~/.bashrc
         * before it appends an export). */
        static const char *const rc[] = {".bashrc", ".bash_profile", ".profile", ".zshrc", NULL};
        if (strcmp(x->verb, "touch") == 0 && !rk_arg_dyn(x, i) && rk_in(rk_base(a), rc)) {
            rk_raise(x->k, 0, "creates %.60s when missing (its content stays)", a);
            continue;
        }
        rk_write(x->k, a, rk_arg_dyn(x, i), truncate ? "truncates" : "creates or changes");
    }
}

static void rule_sed(struct rk_cmd *x)
{
    rk_reads(x);
    if (rk_flag(x, 'i', "--in-place") || rk_has_prefix_arg(x, "--in-place")) {
        /* the script is the first operand unless -e or -f gave it */
        bool script = !rk_has_arg(x, "-e") && !rk_has_arg(x, "-f") &&
                      !rk_has_prefix_arg(x, "--expression") && !rk_has_prefix_arg(x, "--file");
        for (int i = 1; i <= rk_nargs(x); i++) {
            const char *a = rk_arg(x, i);
            if (strcmp(a, "-e") == 0 || strcmp(a, "-f") == 0) {
                i++;
            } else if (a[0] != '-') {
                if (script)
                    script = false;
                else
                    rk_write(x->k, a, rk_arg_dyn(x, i), "edits in place");
            }
        }
        rk_raise(x->k, 0, "edits files in place (sed -i)");
    }
}

static void rule_awk(struct rk_cmd *x)
{
    /* gawk's /inet/tcp/LPORT/HOST/PORT special files are sockets */
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *net = strstr(rk_arg(x, i), "/inet/");
        if (!net)
            continue;
        char peer[96];
        const char *h = net + 6 + strcspn(net + 6, "/"); /* after tcp */
        h = *h ? h + 1 + strcspn(h + 1, "/") : h;        /* after the local port */
        snprintf(peer, sizeof(peer), "%.*s", (int)strcspn(*h ? h + 1 : h, "\" "), *h ? h + 1 : h);
        for (char *c = strchr(peer, '/'); c; c = strchr(c, '/'))
            *c = ':';
        if (strstr(rk_arg(x, i), "getline"))
            rk_raise(x->k, 2, "opens a shell to %s (awk /inet)", peer);
        else
            rk_raise(x->k, 2, "opens a network connection to %s (awk /inet)", peer);
    }
    for (int i = 1; i <= rk_nargs(x); i++)
        if (strstr(rk_arg(x, i), "system(") || strstr(rk_arg(x, i), "| getline") ||
            strstr(rk_arg(x, i), "|getline") || strstr(rk_arg(x, i), "print |") ||
            strstr(rk_arg(x, i), "print|")) {
            rk_raise(x->k, 1, "runs commands from awk");
            rk_code_strings(x->k, rk_arg(x, i));
        }
    rk_reads(x);
}

static void rule_read_only(struct rk_cmd *x)
{
    /* these show names and sizes, not contents */
    static const char *const names_only[] = {"ls",   "stat",     "file",     "du",       "df",
                                             "tree", "realpath", "readlink", "basename", "dirname",
                                             "test", "[",        "[[",       "which",    NULL};
    if (!rk_in(x->verb, names_only))
        rk_reads(x);
    /* cat /dev/urandom > f never ends (head -c N ends, unless N is huge) */
    bool endless =
        rk_has_arg(x, "/dev/zero") || rk_has_arg(x, "/dev/urandom") || rk_has_arg(x, "/dev/random");
    if (strcmp(x->verb, "cat") != 0) {
        bool huge = false;
        for (int i = 1; strcmp(x->verb, "head") == 0 && i < rk_nargs(x); i++)
            huge |= strcmp(rk_arg(x, i), "-c") == 0 && rk_size(rk_arg(x, i + 1)) >= RK_HUGE;
        endless &= huge;
    }
    for (int i = 0; endless && i < x->c->nredirs; i++)
        if (x->c->redirs[i].kind == RS_REDIR_OUT && x->c->redirs[i].target &&
            strcmp(x->c->redirs[i].target, "/dev/null") != 0)
            rk_raise(x->k, 2, "fills a file or the disk without end (%s %s)", x->verb,
                     rk_has_arg(x, "/dev/zero") ? "/dev/zero" : "/dev/urandom");
}

/* cd changes what later relative paths in the line mean. */
static void rule_cd(struct rk_cmd *x)
{
    struct rk *k = x->k;
    int i = 1;
    while (i <= rk_nargs(x) && rk_arg(x, i)[0] == '-' && rk_arg(x, i)[1])
        i++;
    const char *t = i <= rk_nargs(x) ? rk_arg(x, i) : "~";
    if (strcmp(x->verb, "popd") == 0 || strcmp(t, "-") == 0 || rk_arg_dyn(x, i)) {
        k->cwd_unknown = true;
        k->cwd_home = false;
        return;
    }
    if (t[0] == '~') {
        k->cwd_home = true;
        k->cwd_unknown = false;
        return;
    }
    if (k->cwd_home || k->cwd_unknown) {
        if (t[0] != '/')
            return; /* still somewhere we cannot name */
        k->cwd_home = k->cwd_unknown = false;
    }
    char norm[1024];
    rk_normalize(k, t, norm, sizeof(norm));
    memcpy(k->cwdbuf, norm, sizeof(k->cwdbuf));
    k->cwd = k->cwdbuf;
}

/* dig, nslookup, host: a query is a message out; a long or computed name carries data. */
static void rule_dns(struct rk_cmd *x)
{
    x->f->netsend = true;
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        size_t label = 0, longest = 0;
        for (const char *p = a; *p; p++) {
            label = *p == '.' ? 0 : label + 1;
            longest = label > longest ? label : longest;
        }
        if (x->c->words[x->v + i].subst || longest >= 40) {
            rk_raise(x->k, 2, "sends data out inside a DNS name (%s)", x->verb);
            return;
        }
    }
    rk_raise(x->k, 1, "queries DNS (%s)", x->verb);
}

/* tar, zip, unzip, gzip...: unpacking and packing write files; listing reads. */
static void rule_archive(struct rk_cmd *x)
{
    const char *v = x->verb;
    rk_reads(x);
    if (strcmp(v, "tar") == 0 || strcmp(v, "bsdtar") == 0) {
        const char *mode = rk_nargs(x) >= 1 ? rk_arg(x, 1) : "";
        bool old = mode[0] != '-'; /* tar xzf a.tgz */
        bool extract =
            (old && strchr(mode, 'x')) || rk_flag(x, 'x', "--extract") || rk_has_arg(x, "--get");
        bool create = (old && (strchr(mode, 'c') || strchr(mode, 'r') || strchr(mode, 'u'))) ||
                      rk_flag(x, 'c', "--create") || rk_flag(x, 'r', "--append");
        const char *dir = NULL, *file = NULL;
        for (int i = 1; i <= rk_nargs(x); i++) {
            const char *a = rk_arg(x, i);
            if ((strcmp(a, "-C") == 0 || strcmp(a, "--directory") == 0) && i < rk_nargs(x))
                dir = rk_arg(x, i + 1);
            else if (strncmp(a, "--directory=", 12) == 0)
                dir = a + 12;
            else if (strncmp(a, "--file=", 7) == 0)
                file = a + 7;
            else if (((a[0] == '-' && a[1] != '-') || (i == 1 && old)) && strchr(a, 'f') &&
                     i < rk_nargs(x))
                file = rk_arg(x, i + 1);
        }
        if (extract) {
            rk_write(x->k, dir ? dir : ".", false, "unpacks an archive into");
            if (rk_flag(x, 'P', "--absolute-names"))
                rk_raise(x->k, 2, "unpacks an archive at absolute paths (tar -P)");
        } else if (create && file && strcmp(file, "-") != 0) {
            rk_write(x->k, file, false, "writes an archive to");
        }
        return;
    }
    if (strcmp(v, "unzip") == 0) {
        if (rk_flag(x, 'l', NULL) || rk_flag(x, 't', NULL) || rk_flag(x, 'v', NULL) ||
            rk_flag(x, 'Z', NULL) || rk_flag(x, 'p', NULL))
            return;
        const char *dir = ".";
        for (int i = 1; i < rk_nargs(x); i++)
            if (strcmp(rk_arg(x, i), "-d") == 0)
                dir = rk_arg(x, i + 1);
        rk_write(x->k, dir, false, "unpacks an archive into");
        return;
    }
    if (strcmp(v, "zip") == 0) {
        for (int i = 1; i <= rk_nargs(x); i++)
            if (rk_arg(x, i)[0] != '-') {
                rk_write(x->k, rk_arg(x, i), rk_arg_dyn(x, i), "writes an archive to");
                return;
            }
        return;
    }
    /* gzip and friends replace their files unless they write to stdout or only look */
    if (rk_flag(x, 'c', "--stdout") || rk_flag(x, 'l', "--list") || rk_flag(x, 't', "--test") ||
        rk_has_arg(x, "--to-stdout"))
        return;
    for (int i = 1; i <= rk_nargs(x); i++)
        if (rk_arg(x, i)[0] != '-')
            rk_write(x->k, rk_arg(x, i), rk_arg_dyn(x, i), "compresses or uncompresses");
}

static void rule_env_dump(struct rk_cmd *x)
{
    if (rk_nargs(x) > 0 && strcmp(x->verb, "set") == 0) {
        if (rk_has_arg(x, "history") && (rk_has_arg(x, "+o") || rk_has_arg(x, "+H")))
            rk_raise(x->k, 2, "stops the shell history (set +o history)");
        return; /* set -e and friends */
    }
    x->f->secret = true;
    rk_raise(x->k, 1, "prints the environment (its secrets reach the agent)");
}

static void rule_alias(struct rk_cmd *x)
{
    if (rk_nargs(x) >= 1 && strchr(rk_arg(x, 1), '=')) {
        rk_raise(x->k, 0, "defines an alias (%.40s)", rk_arg(x, 1));
        const char *eq = strchr(rk_arg(x, 1), '=');
        rk_text(x->k, eq + 1, strlen(eq + 1), NULL);
    }
}

static void rule_export(struct rk_cmd *x)
{
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        const char *eq = strchr(a, '=');
        if (strncmp(a, "LD_PRELOAD=", 11) == 0)
            rk_raise(x->k, 2, "loads other libraries into every program (%.20s)", a);
        else if (eq && rk_history_off(a))
            rk_raise(x->k, 2, "stops the shell history (%.40s)", a);
        else if (strncmp(a, "PROMPT_COMMAND=", 15) == 0 || strncmp(a, "BASH_ENV=", 9) == 0)
            rk_raise(x->k, 1, "changes what the shell runs (%.20s)", a);
    }
}

static void rule_fill(struct rk_cmd *x)
{
    if (x->c->nredirs)
        rk_raise(x->k, 2, "fills a file or the disk without end (%s)", x->verb);
}

static void rule_long(struct rk_cmd *x)
{
    if (strcmp(x->verb, "tail") == 0 && !rk_flag(x, 'f', "--follow") && !rk_flag(x, 'F', NULL)) {
        rk_reads(x);
        return;
    }
    rk_raise(x->k, 1, "runs until stopped (%s)", x->verb);
}

static void rule_build(struct rk_cmd *x)
{
    /* poetry install, pdm add: package installs; their run, build and test are the project */
    static const char *const inst[] = {"install", "add", "update", "sync", "lock", NULL};
    if ((strcmp(x->verb, "poetry") == 0 || strcmp(x->verb, "pdm") == 0 ||
         strcmp(x->verb, "hatch") == 0) &&
        rk_nargs(x) >= 1 && rk_in(rk_arg(x, 1), inst))
        rk_raise(x->k, 1, "installs Python packages (%s %s)", x->verb, rk_arg(x, 1));
    rk_raise(x->k, 0, "builds or tests the project (%s)", x->verb);
}

static void rule_miner(struct rk_cmd *x)
{
    rk_raise(x->k, 2, "runs a cryptocurrency miner (%s)", x->verb);
}

/* Listing the rules reads; anything else changes what reaches the sandbox or leaves it. */
static void rule_firewall(struct rk_cmd *x)
{
    static const char *const reads[] = {"-L",   "-S",      "--list",     "--list-rules",
                                        "list", "status",  "-nL",        "-vL",
                                        "-nvL", "--state", "--list-all", NULL};
    for (int i = 1; i <= rk_nargs(x); i++)
        if (rk_in(rk_arg(x, i), reads))
            return;
    const char *what = rk_nargs(x) >= 1 ? rk_arg(x, 1) : "";
    if (rk_has_arg(x, "-F") || rk_has_arg(x, "--flush") || rk_has_arg(x, "flush") ||
        rk_has_arg(x, "disable") || rk_has_arg(x, "-X") || rk_has_arg(x, "--panic-off"))
        rk_raise(x->k, 2, "flushes or disables the firewall (%s %.20s)", x->verb, what);
    else
        rk_raise(x->k, 2, "changes the firewall (%s %.20s)", x->verb, what);
}

/* history -c, -d, -w FILE: the record of what the shell ran. */
static void rule_history(struct rk_cmd *x)
{
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        if (a[0] == '-' && strpbrk(a + 1, "cdw")) {
            rk_raise(x->k, 2, "clears the shell history (history %.10s)", a);
            return;
        }
    }
}

static void rule_unset(struct rk_cmd *x)
{
    for (int i = 1; i <= rk_nargs(x); i++)
        if (rk_history_var(rk_arg(x, i), strlen(rk_arg(x, i))))
            rk_raise(x->k, 2, "stops the shell history (unset %.20s)", rk_arg(x, i));
}

static void rule_journal(struct rk_cmd *x)
{
    if (rk_has_prefix_arg(x, "--vacuum") || rk_has_arg(x, "--rotate") || rk_has_arg(x, "--flush"))
        rk_raise(x->k, 2, "deletes the system journal (journalctl %.30s)", rk_arg(x, 1));
}

/* A database client: statements that drop or empty tables destroy data. */
static void rule_database(struct rk_cmd *x)
{
    static const char *const kills[] = {"drop table",   "drop database", "drop schema",
                                        "truncate",     "flushall",      "flushdb",
                                        "dropdatabase", "delete from",   NULL};
    for (int i = 1; i <= rk_nargs(x); i++)
        for (const char *const *k = kills; *k; k++)
            if (strcasestr(rk_arg(x, i), *k)) {
                rk_raise(x->k, 2, "drops or empties database tables (%s: %.40s)", x->verb,
                         rk_arg(x, i));
                return;
            }
    for (int i = 0; i < x->c->nredirs; i++) {
        const struct rs_redir *r = &x->c->redirs[i];
        const char *t = r->kind == RS_REDIR_HEREDOC      ? r->body
                        : r->kind == RS_REDIR_HERESTRING ? r->target
                                                         : NULL;
        for (const char *const *k = kills; t && *k; k++)
            if (strcasestr(t, *k)) {
                rk_raise(x->k, 2, "drops or empties database tables (%s)", x->verb);
                return;
            }
    }
    rk_raise(x->k, 1, "queries or changes a database (%s)", x->verb);
}

/* What a word before the command does (a rule's `wrap`). */
enum rk_wrap {
    RK_WRAP_NONE = 0,
    RK_WRAP_RESERVED, /* if, then, do, {, !: a command follows */
    RK_WRAP_NOCMD,    /* for x in ..., case ... in: no command in this one */
    RK_WRAP_FUNCTION, /* function name { ... } */
    RK_WRAP_PRIV,     /* sudo, doas, pkexec: the rest runs as root */
    RK_WRAP_ENV,      /* env [-i] [-u NAME] [VAR=x] cmd (alone: prints the environment) */
    RK_WRAP_OPTS,     /* nice, timeout, xargs...: their options, then the command */
    RK_WRAP_APPLET,   /* busybox rm */
    RK_WRAP_CHROOT,   /* chroot DIR cmd */
    RK_WRAP_SU,       /* su [-c CMD] */
};

#define V(...) ((const char *const[]){__VA_ARGS__, NULL})
static const struct {
    const char *const *words;
    enum rk_wrap wrap;
} rk_wrappers[] = {
    {V("if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "fi", "done", "esac"),
     RK_WRAP_RESERVED},
    {V("for", "select", "case", "in"), RK_WRAP_NOCMD},
    {V("function"), RK_WRAP_FUNCTION},
    {V("sudo", "doas", "pkexec", "run0"), RK_WRAP_PRIV},
    {V("env"), RK_WRAP_ENV},
    {V("nice", "ionice", "stdbuf", "timeout", "time", "command", "builtin", "exec", "nohup",
       "setsid", "xargs", "strace", "ltrace", "chrt", "taskset", "caffeinate", "unbuffer", "flock"),
     RK_WRAP_OPTS},
    {V("busybox", "toybox"), RK_WRAP_APPLET},
    {V("chroot"), RK_WRAP_CHROOT},
    {V("su"), RK_WRAP_SU},
};

/* The rule table: the verbs, and the function that judges their arguments. */
struct rk_rule {
    const char *const *verbs;
    void (*fn)(struct rk_cmd *x);
};

static const struct rk_rule rk_rules[] = {
    {rk_shells, rule_shell},
    {rk_interps, rule_interp},
    {V("rm", "unlink", "rmdir"), rule_rm},
    {V("find"), rule_find},
    {V("dd"), rule_dd},
    {V("mkfs", "mkswap", "wipefs", "fdisk", "sfdisk", "parted", "gdisk", "sgdisk", "cfdisk",
       "blkdiscard", "mke2fs", "losetup"),
     rule_disk},
    {V("shred"), rule_shred},
    {V("chmod"), rule_chmod},
    {V("chown", "chgrp"), rule_chown},
    {V("setcap", "usermod", "useradd", "userdel", "groupadd", "gpasswd", "passwd", "chpasswd",
       "visudo", "adduser", "deluser"),
     rule_privilege},
    {V("curl"), rule_curl},
    {V("wget", "aria2c", "fetch", "http", "https", "lftp"), rule_wget},
    {V("nc", "ncat", "netcat"), rule_nc},
    {V("socat"), rule_socat},
    {V("telnet"), rule_telnet},
    {V("ztcp"), rule_ztcp},
    {V("xmrig", "minerd", "cpuminer", "cgminer", "bfgminer", "ethminer", "t-rex", "nbminer",
       "lolminer", "phoenixminer", "xmr-stak", "nanominer", "gminer"),
     rule_miner},
    {V("iptables", "ip6tables", "iptables-legacy", "iptables-nft", "ip6tables-legacy", "nft", "ufw",
       "firewall-cmd", "iptables-restore"),
     rule_firewall},
    {V("history"), rule_history},
    {V("unset"), rule_unset},
    {V("journalctl"), rule_journal},
    {V("sqlite3", "psql", "mysql", "mariadb", "mongo", "mongosh", "redis-cli"), rule_database},
    {V("gcc", "cc", "g++", "c++", "clang", "clang++", "tsc", "ruff", "black", "mypy", "flake8",
       "pylint", "eslint", "prettier", "isort", "rustc", "javac", "swift", "dotnet", "zig", "patch",
       "gofmt", "rustfmt", "clang-format", "shellcheck"),
     rule_build},
    {V("ssh", "scp", "sftp", "ftp", "sshpass"), rule_remote},
    {V("rsync"), rule_rsync},
    {V("git"), rule_git},
    {V("docker", "podman", "nerdctl", "ctr", "crictl", "kubectl", "nsenter", "unshare", "mount",
       "umount", "insmod", "rmmod", "modprobe", "kexec", "pivot_root", "capsh", "runc", "helm"),
     rule_escape},
    {V("sysctl"), rule_sysctl},
    {V("crontab", "at", "batch", "systemctl", "service", "launchctl"), rule_persist},
    {V("kill", "pkill", "killall", "killall5"), rule_kill},
    {V("apt", "apt-get", "aptitude", "dpkg", "yum", "dnf", "apk", "pacman", "zypper", "brew", "rpm",
       "snap", "flatpak"),
     rule_syspkg},
    {V("pip", "pip3", "pipx", "uv", "uvx"), rule_pip_verb},
    {V("npm", "pnpm", "yarn", "npx", "bun", "gem", "cargo", "go"), rule_npm},
    {V("eval"), rule_eval},
    {V("source", "."), rule_source},
    {V("base64", "base32", "basenc", "xxd", "openssl", "uudecode", "rev", "tr"), rule_decoder},
    {V("printf", "echo"), rule_printf},
    {V("tee"), rule_tee},
    {V("cp", "mv", "install", "ln", "scp"), rule_copy},
    {V("touch", "mkdir", "truncate", "mkfifo", "fallocate"), rule_touch},
    {V("sed"), rule_sed},
    {V("awk", "gawk", "mawk", "nawk"), rule_awk},
    {V("printenv", "env", "set", "compgen"), rule_env_dump},
    {V("alias"), rule_alias},
    {V("export", "declare", "typeset", "readonly"), rule_export},
    {V("yes"), rule_fill},
    {V("cd", "pushd", "popd"), rule_cd},
    {V("dig", "nslookup", "host", "drill", "kdig", "delv"), rule_dns},
    {V("tar", "bsdtar", "zip", "unzip", "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd",
       "unzstd", "lz4"),
     rule_archive},
    {V("tail", "watch", "top", "htop", "less", "more", "vi", "vim", "nano", "emacs"), rule_long},
    {V("make", "cmake", "ninja", "meson", "pytest", "tox", "mvn", "gradle", "ant", "bazel", "jest",
       "mocha", "ctest", "nox", "poetry", "pdm", "hatch", "deno"),
     rule_build},
    {V("ls", "cat", "head", "grep", "egrep", "fgrep", "rg", "ag", "ack", "wc", "stat", "file", "du",
       "df", "pwd", "id", "uname", "whoami", "date", "which", "type", "true", "false", "test", "[",
       "[[", ":", "sleep", "tree", "diff", "cmp", "sort", "uniq", "cut", "jq", "yq", "basename",
       "dirname", "realpath", "readlink", "hostname", "uptime", "free", "ps", "nproc", "seq", "tac",
       "nl", "od", "hexdump", "strings", "md5sum", "sha1sum", "sha256sum", "sha512sum", "cksum",
       "column", "fold", "fmt", "join", "paste", "expr", "bc", "man", "info", "lscpu", "lsblk",
       "locale", "getent", "groups", "exit", "return", "shift", "wait", "read", "local", "shopt",
       "ulimit", "umask", "hash", "jobs", "fg", "bg", "dirs", "lsof", "ss", "netstat", "ip",
       "python-config", "zcat", "zless", "bzcat", "xzcat", "clear", "reset", "tput", "stty", "tty",
       "whereis", "apropos", "cal"),
     rule_read_only},
};
#undef V

/* Both tables looked up by word: a sorted index built once (~340 words; every command of
 * every action is looked up). The first rule naming a verb wins. */
struct rk_verb {
    const char *name;
    const struct rk_rule *rule;
    enum rk_wrap wrap;
};
static struct rk_verb rk_index[1024];
static size_t rk_nindex;
static pthread_once_t rk_index_once = PTHREAD_ONCE_INIT;

static int rk_verb_cmp(const void *a, const void *b)
{
    return strcmp(((const struct rk_verb *)a)->name, ((const struct rk_verb *)b)->name);
}

static struct rk_verb *rk_index_add(const char *name)
{
    for (size_t j = 0; j < rk_nindex; j++)
        if (strcmp(rk_index[j].name, name) == 0)
            return &rk_index[j];
    if (rk_nindex == sizeof(rk_index) / sizeof(rk_index[0]))
        return NULL;
    rk_index[rk_nindex] = (struct rk_verb){.name = name};
    return &rk_index[rk_nindex++];
}

static void rk_index_build(void)
{
    for (size_t i = 0; i < sizeof(rk_wrappers) / sizeof(rk_wrappers[0]); i++)
        for (const char *const *v = rk_wrappers[i].words; *v; v++) {
            struct rk_verb *e = rk_index_add(*v);
            if (e && !e->wrap)
                e->wrap = rk_wrappers[i].wrap;
        }
    for (size_t i = 0; i < sizeof(rk_rules) / sizeof(rk_rules[0]); i++)
        for (const char *const *v = rk_rules[i].verbs; *v; v++) {
            struct rk_verb *e = rk_index_add(*v);
            if (e && !e->rule)
                e->rule = &rk_rules[i];
        }
    qsort(rk_index, rk_nindex, sizeof(rk_index[0]), rk_verb_cmp);
}

static const struct rk_verb *rk_word_find(const char *word)
{
    pthread_once(&rk_index_once, rk_index_build);
    struct rk_verb key = {.name = word};
    return bsearch(&key, rk_index, rk_nindex, sizeof(rk_index[0]), rk_verb_cmp);
}

static const struct rk_rule *rk_rule_find(const char *verb)
{
    const struct rk_verb *e = rk_word_find(verb);
    return e ? e->rule : NULL;
}

/* Options of wrappers that take a value (nice -n 10, timeout -s KILL, xargs -I{}). */
static bool rk_wrap_opt_arg(const char *o)
{
    static const char *const opts[] = {"-n", "-c", "-s", "-k", "-o", "-e",
                                       "-I", "-P", "-L", "-a", "-d", NULL};
    return rk_in(o, opts);
}

/* x='curl -s http://h/p': a command line kept in a variable runs when the variable is the
 * verb or is evaluated; what it would do counts now, and a download in it feeds what reads
 * the variable's command. */
static void rk_assigned(struct rk *k, const char *value)
{
    char verb[64];
    snprintf(verb, sizeof(verb), "%.*s", (int)strcspn(value, " \t"), value);
    if (!strchr(value, ' ') || !rk_rule_find(rk_base(verb)))
        return;
    struct rk_facts f = {0};
    rk_text(k, value, strlen(value), &f);
    k->var_fetch |= f.fetch;
}

/* A function the line defines: calling it runs its body, which is judged where it is. */
static void rk_function(struct rk *k, const char *name)
{
    if (*name && k->nfuncs < RS_MAX_FUNCS)
        snprintf(k->funcs[k->nfuncs++], sizeof(k->funcs[0]), "%s", name);
}

static bool rk_is_function(const struct rk *k, const char *name)
{
    for (int i = 0; i < k->nfuncs; i++)
        if (strcmp(k->funcs[i], name) == 0)
            return true;
    return false;
}

/* Reserved words, assignments and wrappers run the rest of the line: skipped, with what they
 * add. Returns the index of the verb (nwords: none). */
static int rk_skip_wrappers(struct rk *k, const struct rs_cmd *c, int v, bool *privileged)
{
    /* each pass consumes at least one word: no bound needed */
    while (v < c->nwords) {
        const char *word = c->words[v].s, *w = rk_base(word);
        /* VAR=value before the command */
        const char *eq = strchr(word, '=');
        if (eq && eq != word &&
            strspn(word, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_0123456789") ==
                (size_t)(eq - word)) {
            if (strncmp(word, "LD_PRELOAD=", 11) == 0)
                rk_raise(k, 2, "loads another library into the program (LD_PRELOAD)");
            if (rk_history_off(word))
                rk_raise(k, 2, "stops the shell history (%.40s)", word);
            rk_assigned(k, eq + 1);
            v++;
            continue;
        }
        const struct rk_verb *e = rk_word_find(w);
        enum rk_wrap wrap = e ? e->wrap : RK_WRAP_NONE;
        /* reserved words only as written: /bin/if is a program */
        if ((wrap == RK_WRAP_RESERVED || wrap == RK_WRAP_NOCMD || wrap == RK_WRAP_FUNCTION) &&
            w != word)
            wrap = RK_WRAP_NONE;
        const char *next = v + 1 < c->nwords ? c->words[v + 1].s : NULL;
        switch (wrap) {
        case RK_WRAP_NONE:
            return v;
        case RK_WRAP_RESERVED:
            /* while true / while : / until false: a loop that never ends by itself */
            if (next && ((strcmp(word, "while") == 0 &&
                          (strcmp(next, "true") == 0 || strcmp(next, ":") == 0)) ||
                         (strcmp(word, "until") == 0 && strcmp(next, "false") == 0))) {
                k->endless = true;
                rk_raise(k, 1, "loops without end");
            }
            v++;
            break;
        case RK_WRAP_NOCMD:
            return c->nwords;
        case RK_WRAP_FUNCTION:
            /* function name { body }: the body's commands are judged as they are */
            if (next)
                rk_function(k, next);
            v += 2;
            break;
        case RK_WRAP_PRIV:
            *privileged = true;
            v++;
            while (v < c->nwords && c->words[v].s[0] == '-') {
                const char *o = c->words[v].s;
                if (o[1] && strchr("ugCgph", o[1]) && o[2] == '\0')
                    v++; /* -u user */
                v++;
            }
            break;
        case RK_WRAP_ENV:
            if (!next)
                return v; /* env alone prints the environment */
            v++;
            while (v < c->nwords && c->words[v].s[0] == '-') {
                if (strcmp(c->words[v].s, "-u") == 0 || strcmp(c->words[v].s, "-C") == 0)
                    v++;
                v++;
            }
            break;
        case RK_WRAP_OPTS: {
            if (strcmp(w, "command") == 0 && next &&
                (strcmp(next, "-v") == 0 || strcmp(next, "-V") == 0))
                return c->nwords; /* command -v: a lookup */
            if (strcmp(w, "nohup") == 0 || strcmp(w, "setsid") == 0)
                rk_raise(k, 1, "starts a process that outlives the command (%s)", w);
            if (strcmp(w, "xargs") == 0)
                k->xargs = true;
            /* their options and operands (timeout's duration, nice's -n N, flock's file) */
            bool operand = strcmp(w, "timeout") == 0 || strcmp(w, "flock") == 0 ||
                           strcmp(w, "taskset") == 0 || strcmp(w, "chrt") == 0;
            v++;
            while (v < c->nwords && (c->words[v].s[0] == '-' ||
                                     (operand && strspn(c->words[v].s, "0123456789.smhdx") ==
                                                     strlen(c->words[v].s)))) {
                if (rk_wrap_opt_arg(c->words[v].s) && v + 1 < c->nwords)
                    v++;
                v++;
            }
            if (strcmp(w, "flock") == 0 && v < c->nwords)
                v++;
            break;
        }
        case RK_WRAP_APPLET:
            v++;
            break;
        case RK_WRAP_CHROOT:
            rk_raise(k, 2, "reaches outside the sandbox (chroot)");
            v += 2;
            break;
        case RK_WRAP_SU:
            *privileged = true;
            /* su -c 'cmd' */
            for (int i = v + 1; i + 1 < c->nwords; i++)
                if (strcmp(c->words[i].s, "-c") == 0 || strcmp(c->words[i].s, "--command") == 0)
                    rk_text(k, c->words[i + 1].s, strlen(c->words[i + 1].s), NULL);
            return c->nwords;
        }
    }
    return v;
}

/* cat > x.py <<EOF ... EOF: a script written now runs later; its code counts now. */
static void rk_heredoc_script(struct rk *k, const struct rk_cmd *x, const char *text)
{
    const struct rs_cmd *c = x->c;
    for (int i = 0; i < c->nredirs; i++)
        if (c->redirs[i].kind == RS_REDIR_OUT && c->redirs[i].target)
            rk_script_scan(k, c->redirs[i].target, text);
    for (int i = x->v + 1; strcmp(x->verb, "tee") == 0 && i < c->nwords; i++)
        if (c->words[i].s[0] != '-')
            rk_script_scan(k, c->words[i].s, text);
}

/* Variables whose value makes later shells or programs run other code: an rc line setting
 * one stays HIGH (names by prefix). */
static bool rk_env_runs_code(const char *name, size_t n)
{
    static const char *const runs[] = {
        "LD_",        "PROMPT_COMMAND", "BASH_ENV",    "ENV",      "PS",        "PATH",
        "PYTHON",     "NODE_OPTIONS",   "PERL5",       "RUBYOPT",  "GIT_",      "PAGER",
        "EDITOR",     "VISUAL",         "SHELLOPTS",   "BASHOPTS", "IFS",       "HIST",
        "JAVA_TOOL_", "_JAVA_OPTIONS",  "GCONV_PATH",  "MANPAGER", "LESSOPEN",  "BROWSER",
        "CDPATH",     "FIGNORE",        "GLOBIGNORE",  "TERMINFO", "LOCPATH",   "MALLOC_",
        "NLSPATH",    "RES_OPTIONS",    "HOSTALIASES", "TMPDIR",   "LESSCLOSE", NULL};
    for (const char *const *r = runs; *r; r++)
        if (n >= strlen(*r) && strncmp(name, *r, strlen(*r)) == 0)
            return true;
    return false;
}

/* `echo "export NAME=\"literal\"" >> ~/.bashrc`: OpenHands' add_env_vars keeps a variable
 * for later shells so. A literal value (no expansion, nothing after it) of a variable that
 * runs nothing only sets the environment; anything else is left to rk_write. */
static bool rk_rc_export(const struct rs_cmd *c, int v, const struct rs_redir *r)
{
    static const char *const rc[] = {".bashrc", ".bash_profile", ".profile", ".zshrc", NULL};
    if (v + 2 != c->nwords || strcmp(c->words[v].s, "echo") != 0 || c->words[v + 1].dyn ||
        !rk_in(rk_base(r->target), rc))
        return false;
    const char *t = c->words[v + 1].s;
    if (strncmp(t, "export ", 7) != 0)
        return false;
    const char *name = t + 7;
    size_t n = strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
    if (n == 0 || (name[0] >= '0' && name[0] <= '9') || name[n] != '=' || rk_env_runs_code(name, n))
        return false;
    const char *val = name + n + 1;
    if (*val == '"') { /* double quotes: literal without $ and `, escapes skipped */
        const char *q = val + 1;
        for (; *q && *q != '"'; q++) {
            if (*q == '$' || *q == '`')
                return false;
            if (*q == '\\' && q[1])
                q++;
        }
        return *q == '"' && q[1] == '\0';
    }
    if (*val == '\'') {
        const char *q = strchr(val + 1, '\'');
        return q && q[1] == '\0';
    }
    return strspn(val,
                  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:@%+,=-") ==
           strlen(val);
}

static void rk_command(struct rk *k, const struct rs_cmd *c, struct rk_facts *f)
{
    bool privileged = false;
    k->xargs = false;
    int v = rk_skip_wrappers(k, c, 0, &privileged);
    if (privileged)
        rk_raise(k, 2, "runs as root (%s)", c->words[0].s);
    /* redirections first: they apply whatever the verb. A shell whose streams go to
     * /dev/tcp is a reverse shell. */
    bool is_shell = v < c->nwords && rk_in(rk_base(c->words[v].s), rk_shells);
    for (int i = 0; i < c->nredirs; i++) {
        const struct rs_redir *r = &c->redirs[i];
        if (r->target && rk_net_device(r->target) &&
            (r->kind == RS_REDIR_OUT || r->kind == RS_REDIR_IN))
            rk_net_dev(k, r->target, is_shell);
        else if (r->kind == RS_REDIR_OUT && r->target && rk_database_file(r->target) &&
                 !(v < c->nwords && rk_rule_find(rk_base(c->words[v].s)) &&
                   rk_rule_find(rk_base(c->words[v].s))->fn == rule_database))
            rk_raise(k, 2, "overwrites a database (%.80s)", r->target);
        else if (r->kind == RS_REDIR_OUT && r->target && !r->dyn && rk_rc_export(c, v, r))
            rk_raise(k, 1, "keeps an environment variable for later shells (%.60s)", r->target);
        else if (r->kind == RS_REDIR_OUT && r->target)
            rk_write(k, r->target, r->dyn, "writes");
        else if (r->kind == RS_REDIR_IN && r->target && rk_read(k, r->target, "a redirection"))
            f->secret = true;
    }
    /* a mining pool's address, whatever runs it */
    for (int i = v; i < c->nwords; i++)
        if (strstr(c->words[i].s, "stratum+")) {
            rk_raise(k, 2, "runs a cryptocurrency miner (pool %.60s)", c->words[i].s);
            break;
        }
    if (c->background && k->endless)
        rk_raise(k, 2, "starts background processes in an endless loop");
    if (c->background)
        rk_raise(k, 1, "starts a background process");
    if (v >= c->nwords)
        return;
    const struct rs_word *vw = &c->words[v];
    if (vw->dyn && !*vw->s) {
        /* $x -rf /: the verb is unknown */
        bool grave = false;
        for (int i = v + 1; i < c->nwords; i++) {
            const char *a = c->words[i].s;
            if ((a[0] == '-' && (strchr(a, 'r') || strchr(a, 'f'))) || strcmp(a, "/") == 0 ||
                a[0] == '~')
                grave = true;
        }
        if (grave)
            rk_raise(k, 2, "runs a command hidden in a variable with destructive arguments");
        else
            rk_raise(k, 1, "runs a command named by a variable");
        /* $a$b -c 'cmd': likely a shell; its command line counts */
        for (int i = v + 1; i + 1 < c->nwords; i++)
            if (strcmp(c->words[i].s, "-c") == 0)
                rk_text(k, c->words[i + 1].s, strlen(c->words[i + 1].s), NULL);
        f->consumer = true;
        f->fetch |= k->var_fetch; /* x='curl ...'; $x | sh */
        return;
    }
    char verb[256];
    snprintf(verb, sizeof(verb), "%s", rk_base(vw->s));
    /* a verb with non-ASCII letters (a Cyrillic р in рm) is disguised */
    for (const char *p = vw->s; *p; p++)
        if ((unsigned char)*p >= 0x80)
            k->obfuscated = true;
    if (vw->dyn) {
        /* ${x:-rm}: the default is what most likely runs; unknown either way */
        rk_raise(k, 1, "runs a command named by a variable (%.40s)", verb);
    }
    /* mkfs.ext4 and friends */
    if (strncmp(verb, "mkfs.", 5) == 0)
        verb[4] = '\0';
    struct rk_cmd x = {.k = k, .c = c, .v = v, .verb = verb, .f = f};
    /* --help and --version are reads, whatever the verb */
    if (c->nwords - v == 2 &&
        (strcmp(c->words[v + 1].s, "--help") == 0 || strcmp(c->words[v + 1].s, "--version") == 0 ||
         strcmp(c->words[v + 1].s, "-h") == 0))
        return;
    /* python3.12 is python3 */
    if (strncmp(verb, "python3.", 8) == 0 || strncmp(verb, "python2.", 8) == 0)
        verb[7] = '\0';
    if (strncmp(verb, "xmrig", 5) == 0) { /* xmrig.exe, xmrig-6.21 */
        rk_raise(k, 2, "runs a cryptocurrency miner (%.40s)", verb);
        return;
    }
    if (rk_is_function(k, vw->s)) {
        rk_raise(k, 0, "calls the shell function %.40s defined in the line", vw->s);
        return;
    }
    const struct rk_rule *rule = rk_rule_find(verb);
    bool shell = rule && rule->fn == rule_shell, interp = rule && rule->fn == rule_interp;
    if (rule) {
        rule->fn(&x);
    } else if (strchr(vw->s, '/')) {
        k->runs_file = true; /* ./install.sh */
        char norm[1024];
        enum rk_where w = rk_where(k, vw->s, false, norm, sizeof(norm));
        rk_raise(k, w == RK_INSIDE ? 0 : 1, "runs %.60s", vw->s);
    } else {
        rk_raise(k, 1, "runs %.60s", verb);
    }
    /* a host's sockets (docker.sock, containerd.sock) are a way out of the sandbox; the
     * project's own (/tmp/app.sock, ./run/x.sock) are not */
    if (!rule || rule->fn != rule_read_only)
        for (int i = v + 1; i < c->nwords; i++) {
            const char *sock = strstr(c->words[i].s, ".sock");
            if (!sock || isalnum((unsigned char)sock[5]))
                continue;
            const char *path = sock; /* back to the start of the path: unix:/x.sock */
            while (path > c->words[i].s && !strchr(" :=\"'(,", path[-1]))
                path--;
            char where[1024], norm[1024];
            snprintf(where, sizeof(where), "%.*s", (int)(sock + 5 - path), path);
            enum rk_where w = rk_where(k, where, false, norm, sizeof(norm));
            if (w != RK_INSIDE && w != RK_TMP) {
                rk_raise(k, 2, "talks to a host socket (%.60s)", where);
                break;
            }
        }
    /* what a download or a decoder writes to a file is code the line may run */
    for (int i = 0; i < c->nredirs && (f->fetch || f->decode); i++)
        if (c->redirs[i].kind == RS_REDIR_OUT && c->redirs[i].target &&
            strcmp(c->redirs[i].target, "/dev/null") != 0)
            k->fetch = true;
    /* here-documents and here-strings: the input of the command */
    for (int i = 0; i < c->nredirs; i++) {
        const struct rs_redir *r = &c->redirs[i];
        const char *text = r->kind == RS_REDIR_HEREDOC      ? r->body
                           : r->kind == RS_REDIR_HERESTRING ? r->target
                                                            : NULL;
        if (!text)
            continue;
        if (shell)
            rk_text(k, text, strlen(text), NULL);
        else if (interp)
            rk_code(k, text, verb, f);
        else if (strcmp(verb, "cat") == 0 || strcmp(verb, "tee") == 0)
            rk_heredoc_script(k, &x, text);
    }
}

/* printf's and echo -e's escapes undone: \n, \t, \\, \xHH, \0NNN. */
static void rk_put_unescaped(struct buf *b, const char *s, bool esc)
{
    static const char from[] = "ntrabfv\\", to[] = "\n\t\r\a\b\f\v\\";
    for (const char *p = s; *p; p++) {
        const char *e = esc && p[0] == '\\' && p[1] ? strchr(from, p[1]) : NULL;
        if (e && *e) {
            buf_append(b, &to[e - from], 1);
            p++;
        } else if (esc && p[0] == '\\' && (p[1] == 'x' || (p[1] >= '0' && p[1] <= '7'))) {
            bool hex = p[1] == 'x';
            int v = 0, n = 0;
            const char *q = hex ? p + 2 : p + 1;
            while (n < 3 && (hex ? isxdigit((unsigned char)*q) && n < 2 : *q >= '0' && *q <= '7')) {
                v = v * (hex ? 16 : 8) +
                    (isdigit((unsigned char)*q) ? *q - '0' : (*q | 0x20) - 'a' + 10);
                q++;
                n++;
            }
            char c = (char)v;
            if (c)
                buf_append(b, &c, 1);
            p = q - 1;
        } else {
            buf_append(b, p, 1);
        }
    }
}

/* The text a command prints when it is written out in the line: echo's words, printf's
 * format and arguments, cat's here-document or here-string. */
static bool rk_said(const struct rs_cmd *c, struct buf *out)
{
    buf_reset(out);
    if (c->nwords < 1 || c->words[0].dyn)
        return false;
    const char *v = rk_base(c->words[0].s);
    bool echo = strcmp(v, "echo") == 0, printf_ = strcmp(v, "printf") == 0;
    if (strcmp(v, "cat") == 0)
        for (int i = 0; i < c->nredirs; i++) {
            const struct rs_redir *r = &c->redirs[i];
            if (r->kind == RS_REDIR_HEREDOC && r->body)
                buf_append(out, r->body, strlen(r->body));
            else if (r->kind == RS_REDIR_HERESTRING && r->target) {
                buf_append(out, r->target, strlen(r->target));
                buf_append(out, "\n", 1);
            }
        }
    if (echo || printf_) {
        int i = 1;
        bool esc = printf_;
        for (; echo && i < c->nwords && c->words[i].s[0] == '-' && c->words[i].s[1] &&
               strspn(c->words[i].s + 1, "neE") == strlen(c->words[i].s + 1);
             i++)
            esc |= strchr(c->words[i].s, 'e') != NULL;
        /* printf '%s' TEXT prints TEXT */
        if (printf_ && i + 1 < c->nwords && strncmp(c->words[i].s, "%s", 2) == 0 &&
            strspn(c->words[i].s + 2, "\\n") == strlen(c->words[i].s + 2))
            i++;
        for (int first = i; i < c->nwords; i++) {
            if (i > first)
                buf_append(out, " ", 1);
            rk_put_unescaped(out, c->words[i].s, esc);
        }
        buf_append(out, "\n", 1);
    }
    return out->len > 0;
}

/* A command list (a line, a sh -c string, a substitution). */
static void rk_text(struct rk *k, const char *s, size_t len, struct rk_facts *all)
{
    if (++k->depth > RISK_MAX_DEPTH) {
        rk_raise(k, 2, "nests commands too deep to analyse");
        k->depth--;
        return;
    }
    struct rs_list l;
    rs_list_parse(&l, s, len);
    if (l.obfuscated)
        k->obfuscated = true;
    for (int i = 0; i < l.nfuncs; i++)
        rk_function(k, l.funcs[i]);
    if (memmem(s, len, ":(){", 4) || memmem(s, len, ":() {", 5))
        rk_raise(k, 2, "contains a fork bomb");
    /* the shell would wait for more, or read it differently: unknown, so confirm */
    if (l.unterminated)
        rk_raise(k, 1,
                 "could not be parsed (an unterminated quote, substitution or here-document)");
    /* what substitutions run, and whether it downloads or decodes */
    struct rk_facts nested = {0};
    for (int i = 0; i < l.nnested; i++) {
        struct rk_facts nf = {0};
        const char *t = l.nested[i].text + strspn(l.nested[i].text, " \t\n");
        snprintf(k->nested_verb, sizeof(k->nested_verb), "%.*s", (int)strcspn(t, " \t\n;|&)"), t);
        rk_text(k, l.nested[i].text, strlen(l.nested[i].text), &nf);
        nested.fetch |= nf.fetch;
        nested.decode |= nf.decode;
        nested.secret |= nf.secret;
    }
    /* pipelines: facts flow left to right */
    struct rk_facts up = {0}; /* what feeds the current command's stdin */
    struct buf said = {0};    /* and the text, when it is in the line (echo 'rm -rf /' | sh) */
    bool has_said = false;
    bool pl_shell = false; /* the pipeline so far has a shell reading its input */
    char pl_peer[80] = ""; /* and a raw connection to this far end */
    for (int i = 0; i < l.n; i++) {
        struct rk_facts f = {0};
        k->input_found = up.found;
        k->piped_in = i > 0 && l.cmds[i - 1].link == RS_LINK_PIPE;
        rk_command(k, &l.cmds[i], &f);
        pl_shell |= f.shell;
        if (f.peer[0] && !pl_peer[0])
            snprintf(pl_peer, sizeof(pl_peer), "%s", f.peer);
        /* sh -i | nc host port (and back through a fifo): a reverse shell */
        if (pl_shell && pl_peer[0])
            rk_name(k, 2, "opens a shell to %s", pl_peer);
        if (f.consumer && has_said) {
            if (f.lang[0])
                rk_code(k, said.data, f.lang, NULL);
            else
                rk_text(k, said.data, said.len, NULL);
        }
        if (f.consumer && (up.fetch || nested.fetch))
            rk_raise(k, 2, "runs a download in a shell or interpreter");
        if (f.consumer && (up.decode || nested.decode))
            rk_raise(k, 2, "decodes hidden text and runs it");
        if (f.netsend && (up.secret || nested.secret))
            rk_raise(k, 2, "sends secrets or the environment out");
        if (all) {
            all->fetch |= f.fetch;
            all->decode |= f.decode;
            all->secret |= f.secret;
        }
        if (l.cmds[i].link == RS_LINK_PIPE) {
            up.fetch |= f.fetch;
            up.decode |= f.decode;
            up.secret |= f.secret;
            up.found = f.found ? f.found : up.found; /* find . | grep x | xargs rm */
            has_said = rk_said(&l.cmds[i], &said);
        } else {
            up = (struct rk_facts){0};
            has_said = false;
            pl_shell = false;
            pl_peer[0] = '\0';
        }
    }
    free(said.data);
    if (all) {
        all->fetch |= nested.fetch;
        all->decode |= nested.decode;
        all->secret |= nested.secret;
    }
    rs_list_free(&l);
    k->depth--;
}

/* ---- hidden characters ---- */

/* A copy fit for parsing: fullwidth ASCII mapped back, invisible and bidi characters and
 * controls dropped; *hidden says whether any were there. */
static char *rk_clean(const char *s, size_t len, bool *hidden)
{
    char *out = malloc(len + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80) {
            if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) {
                *hidden = true;
                i++;
                continue;
            }
            out[o++] = (char)c;
            i++;
            continue;
        }
        uint32_t cp = 0;
        size_t n = utf8_decode(s + i, len - i, &cp);
        if (n == 0) { /* not UTF-8 (the API hands over valid JSON strings) */
            *hidden = true;
            i++;
            continue;
        }
        if (cp >= 0xFF01 && cp <= 0xFF5E) {
            out[o++] = (char)(cp - 0xFF01 + 0x21);
            *hidden = true;
        } else if (cp == 0x3000) {
            out[o++] = ' ';
            *hidden = true;
        } else if ((cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) ||
                   (cp >= 0x2060 && cp <= 0x206F) || cp == 0xFEFF || cp == 0x00AD ||
                   (cp >= 0x80 && cp <= 0x9F) || (cp >= 0xE0000 && cp <= 0xE007F)) {
            *hidden = true;
        } else {
            memcpy(out + o, s + i, n);
            o += n;
        }
        i += n;
    }
    out[o] = '\0';
    return out;
}

static void rk_finish(struct rk *k, struct risk_result *out)
{
    if (k->obfuscated) {
        if (k->level >= 1) {
            char r[260];
            snprintf(r, sizeof(r), "%.150s, hidden by unusual characters or quoting", k->reason);
            k->level = 2;
            snprintf(k->reason, sizeof(k->reason), "%.199s", r);
        } else {
            rk_raise(k, 1, "contains hidden or unusual characters");
        }
    }
    out->level = (enum risk_level)k->level;
    snprintf(out->reason, sizeof(out->reason), "%s",
             k->reason[0] ? k->reason : "read-only inspection");
}

static void rk_init(struct rk *k, const char *workspace, const char *cwd, char *wsbuf, size_t sz)
{
    memset(k, 0, sizeof(*k));
    snprintf(wsbuf, sz, "%s", workspace && *workspace ? workspace : "/workspace");
    size_t n = strlen(wsbuf);
    while (n > 1 && wsbuf[n - 1] == '/')
        wsbuf[--n] = '\0';
    k->ws = wsbuf;
    k->cwd = cwd && cwd[0] == '/' ? cwd : NULL;
}

/* The first variable the line uses whose name says it holds a secret ($GITHUB_TOKEN,
 * ${AWS_SECRET_ACCESS_KEY}): sent to an unknown host, it leaves the sandbox. */
static void rk_secret_var(struct rk *k, const char *s)
{
    static const char *const marks[] = {"TOKEN",      "SECRET", "PASSWORD",   "PASSWD",
                                        "API_KEY",    "APIKEY", "ACCESS_KEY", "PRIVATE_KEY",
                                        "CREDENTIAL", "AUTH",   NULL};
    for (const char *p = s; (p = strchr(p, '$'));) {
        p++;
        if (*p == '{')
            p++;
        size_t n = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
        char name[48];
        snprintf(name, sizeof(name), "%.*s", (int)n, p);
        for (char *c = name; *c; c++)
            *c = (char)toupper((unsigned char)*c);
        for (const char *const *m = marks; n && *m; m++)
            if (strstr(name, *m)) {
                snprintf(k->secret_var, sizeof(k->secret_var), "%.*s", (int)n, p);
                return;
            }
    }
}

static void rk_command_line(struct rk *k, const char *cmd, size_t len)
{
    if (memchr(cmd, '\0', len)) {
        rk_raise(k, 2, "contains a NUL byte");
        return;
    }
    if (len > RISK_MAX_LEN) {
        rk_raise(k, 2, "is too long to analyse (%zu bytes)", len);
        return;
    }
    bool hidden = false;
    char *clean = rk_clean(cmd, len, &hidden);
    if (!clean) {
        rk_raise(k, 2, "could not be analysed (out of memory)");
        return;
    }
    if (hidden)
        k->obfuscated = true;
    rk_secret_var(k, clean);
    rk_text(k, clean, strlen(clean), NULL);
    if (k->fetch && k->runs_file)
        rk_raise(k, 2, "downloads and runs a script in the same action");
    free(clean);
}

void risk_classify_command(const char *cmd, const char *workspace, const char *cwd,
                           struct risk_result *out)
{
    struct rk k;
    char ws[512];
    rk_init(&k, workspace, cwd, ws, sizeof(ws));
    out->declared = -1;
    rk_command_line(&k, cmd ? cmd : "", cmd ? strlen(cmd) : 0);
    rk_finish(&k, out);
}

/* ---- file actions ---- */

/* A script written now runs later: its commands count now. A #! line naming an interpreter,
 * or the file's extension, makes it that language's code. A HIGH script makes the write HIGH. */
static void rk_script_scan(struct rk *k, const char *path, const char *content)
{
    static const struct {
        const char *ext, *lang;
    } exts[] = {{".py", "python"}, {".pl", "perl"},  {".rb", "ruby"},
                {".js", "node"},   {".mjs", "node"}, {".php", "php"}};
    size_t n = strlen(path);
    char lang[24] = "";
    if (content && strncmp(content, "#!", 2) == 0) {
        size_t line = strcspn(content, "\n");
        static const char *const interps[] = {"python", "perl", "ruby", "node", "php", NULL};
        for (const char *const *i = interps; *i && !lang[0]; i++) {
            const char *at = strstr(content, *i);
            if (at && (size_t)(at - content) < line)
                snprintf(lang, sizeof(lang), "%s", *i);
        }
    }
    const char *dot = strrchr(rk_base(path), '.');
    for (size_t i = 0; dot && !lang[0] && i < sizeof exts / sizeof exts[0]; i++)
        if (strcmp(dot, exts[i].ext) == 0)
            snprintf(lang, sizeof(lang), "%s", exts[i].lang);
    bool script = lang[0] || (content && strncmp(content, "#!", 2) == 0) ||
                  (n > 3 && strcmp(path + n - 3, ".sh") == 0) ||
                  (n > 5 && strcmp(path + n - 5, ".bash") == 0) ||
                  strcmp(rk_base(path), "Makefile") == 0;
    if (!script || !content || strlen(content) > RISK_MAX_LEN)
        return;
    struct rk inner;
    char ws[512];
    rk_init(&inner, k->ws, k->cwd, ws, sizeof(ws));
    if (lang[0])
        rk_code(&inner, content, lang, NULL);
    else
        rk_command_line(&inner, content, strlen(content));
    if (inner.level == 2)
        rk_raise(k, 2, "writes a script that %s", inner.reason);
}

static void rk_file_write(struct rk *k, const char *path, const char *content)
{
    char norm[1024];
    enum rk_where w = rk_where(k, path, false, norm, sizeof(norm));
    const char *sens = rk_sensitive_write(w == RK_HOMEDIR ? path : norm);
    if (sens)
        rk_raise(k, 2, "writes %.80s, which runs code later (%s)", path, sens);
    else if (w == RK_INSIDE || w == RK_WSROOT)
        rk_raise(k, 0, "changes a file in the workspace (%.80s)", path);
    else if (w == RK_SYSTEM || w == RK_ROOT)
        rk_raise(k, 2, "writes a system path (%.80s)", norm);
    else if (w == RK_TMP)
        rk_raise(k, 1, "writes a temporary file (%.80s)", path);
    else
        rk_raise(k, 2, "writes outside the workspace (%.80s)", w == RK_HOMEDIR ? path : norm);
    rk_script_scan(k, path, content);
}

/* The shell commands in an IPython cell: %%bash / %%sh / %%script sh cells, and lines
 * `!cmd`, `!!cmd`, `x = !cmd`, `%system cmd`, `%sx cmd`. */
static void rk_ipython_shell(const char *code, struct buf *out)
{
    const char *p = code + strspn(code, " \t\n");
    static const char *const cells[] = {"%%bash",       "%%sh",     "%%script bash", "%%script sh",
                                        "%%script zsh", "%%system", "%%!",           NULL};
    for (const char *const *c = cells; *c; c++)
        if (strncmp(p, *c, strlen(*c)) == 0) {
            const char *body = strchr(p, '\n');
            if (body)
                buf_append(out, body + 1, strlen(body + 1));
            return;
        }
    for (p = code; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        const char *q = p, *e = p + n;
        while (q < e && (*q == ' ' || *q == '\t'))
            q++;
        /* x = !cmd */
        const char *eq = q;
        while (eq < e && (isalnum((unsigned char)*eq) || *eq == '_' || *eq == ','))
            eq++;
        while (eq < e && *eq == ' ')
            eq++;
        if (eq > q && eq < e && *eq == '=' && eq + 1 < e) {
            const char *r = eq + 1;
            while (r < e && *r == ' ')
                r++;
            if (r < e && (*r == '!' || *r == '%'))
                q = r;
        }
        const char *cmd = NULL;
        if (q < e && *q == '!')
            cmd = q + strspn(q, "!");
        else if (e - q > 8 && strncmp(q, "%system ", 8) == 0)
            cmd = q + 8;
        else if (e - q > 4 && strncmp(q, "%sx ", 4) == 0)
            cmd = q + 4;
        if (cmd && cmd < e) {
            buf_append(out, cmd, (size_t)(e - cmd));
            buf_append(out, "\n", 1);
        }
        p = nl ? nl + 1 : e;
    }
}

static const char *rk_str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

void risk_classify_run(struct rk *k, const json_t *args)
{
    /* the length from JSON: a NUL inside is seen, not a shorter command */
    json_t *jc = json_object_get(args, "command");
    const char *cmd = json_string_value(jc);
    rk_command_line(k, cmd ? cmd : "", cmd ? json_string_length(jc) : 0);
}

void risk_classify_ipython(struct rk *k, const json_t *args)
{
    json_t *jc = json_object_get(args, "code");
    const char *code = json_string_value(jc);
    size_t len = code ? json_string_length(jc) : 0;
    code = code ? code : "";
    if (memchr(code, '\0', len)) {
        rk_raise(k, 2, "contains a NUL byte");
    } else if (len > RISK_MAX_LEN) {
        rk_raise(k, 2, "is too long to analyse (%zu bytes)", len);
    } else {
        struct buf shell = {0};
        rk_ipython_shell(code, &shell);
        if (shell.data) {
            rk_command_line(k, shell.data, shell.len);
            free(shell.data);
        }
        rk_code(k, code, "Python", NULL);
    }
}

void risk_classify_read(struct rk *k, const json_t *args)
{
    const char *path = rk_str(args, "path");
    if (!path || !rk_read(k, path, "read")) {
        char norm[1024];
        enum rk_where w = rk_where(k, path ? path : "", false, norm, sizeof(norm));
        (void)w;
    }
}

void risk_classify_write(struct rk *k, const json_t *args)
{
    const char *path = rk_str(args, "path");
    rk_file_write(k, path ? path : "", rk_str(args, "content"));
}

void risk_classify_edit(struct rk *k, const json_t *args)
{
    const char *path = rk_str(args, "path");
    const char *sub = rk_str(args, "command");
    if (sub && strcmp(sub, "view") == 0) {
        if (path)
            rk_read(k, path, "the editor");
    } else {
        const char *text = rk_str(args, "file_text");
        if (!text)
            text = rk_str(args, "new_str");
        rk_file_write(k, path ? path : "", text);
    }
}

void risk_classify_browse(struct rk *k, const json_t *args)
{
    /* a file:// URL is a read; others go out to the network */
    const char *url = rk_str(args, "url");
    if (url && strncasecmp(url, "file://", 7) == 0)
        rk_read(k, url + 7, "the browser");
    rk_raise(k, 1, "visits a web page");
}

void risk_classify_action(const json_t *action, risk_kind_fn *classify, const char *workspace,
                          const char *cwd, struct risk_result *out)
{
    struct rk k;
    char ws[512];
    rk_init(&k, workspace, cwd, ws, sizeof(ws));
    const char *kind = rk_str(action, "action");
    json_t *args = json_object_get(action, "args");
    out->declared = -1;
    if (!kind)
        rk_raise(&k, 1, "is not a known kind of action");
    else if (classify)
        classify(&k, args);
    else
        rk_raise(&k, 1, "is a %.40s action", kind);
    rk_finish(&k, out);
    /* the agent may raise its own action's level, never lower it */
    json_t *d = json_object_get(args, "security_risk");
    if (!d) /* OpenHands puts it in args; a flatter client may not */
        d = json_object_get(action, "security_risk");
    int declared = json_is_integer(d)  ? (int)json_integer_value(d)
                   : json_is_string(d) ? risk_level_parse(json_string_value(d))
                                       : -1;
    if (declared >= 0 && declared <= 2) {
        out->declared = declared;
        if (declared > (int)out->level) {
            out->level = (enum risk_level)declared;
            snprintf(out->reason, sizeof(out->reason), "the agent declared it %s",
                     declared == 2 ? "HIGH" : "MEDIUM");
        }
    }
}

const char *risk_level_name(enum risk_level l)
{
    static const char *const names[] = {"low", "medium", "high"};
    return (unsigned)l < 3 ? names[l] : "high";
}

int risk_level_parse(const char *s)
{
    for (int i = 0; s && i < 3; i++)
        if (strcasecmp(s, risk_level_name((enum risk_level)i)) == 0)
            return i;
    return -1;
}
