/* Risk of an action (research/security.md §5). The pipeline for a command line:
 * 1. guards: NUL, size (> 64 KiB), hidden characters (bidi, zero-width, controls; fullwidth
 *    letters are mapped to ASCII and flagged);
 * 2. risk_shell.c takes the line apart: commands, words with quoting undone, redirections,
 *    pipes, here-documents, and the text of substitutions;
 * 3. per command: wrappers skipped (sudo, env, nice, timeout, xargs...), the verb resolved
 *    (/bin/rm, \rm, 'r'm are rm), its rule from the table applied to its arguments and paths;
 *    sh -c, eval, python -c, here-documents fed to a shell and substitutions are classified
 *    the same way, recursively (depth 8, deeper is HIGH);
 * 4. across a pipeline: a download or a decoder feeding a shell or interpreter is HIGH, secrets
 *    feeding a network command are HIGH;
 * 5. the maximum wins; hidden characters raise MEDIUM to HIGH. The first reason of the highest
 *    level is kept.
 * File actions: writes outside the workspace, to system paths, shell rc files, git hooks, CI
 * workflows, package-manager configs and keys are HIGH; writes in the workspace MEDIUM; reads
 * LOW unless they read credentials. Written scripts are scanned like commands. */
#include "engine/risk.h"

#include "engine/risk_internal.h"

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
    int depth;
    bool obfuscated;
    /* facts across the whole action */
    bool fetch;     /* something downloads */
    bool runs_file; /* a shell or interpreter runs a script file */
};

/* Facts of one command, for the pipeline rules. */
struct rk_facts {
    bool fetch, decode, secret, netsend, consumer; /* consumer: a shell or interpreter on stdin */
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

static void rk_text(struct rk *k, const char *s, size_t len, struct rk_facts *all);

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

static bool rk_is_interp(const char *v)
{
    return rk_in(v, rk_interps) || strncmp(v, "python3.", 8) == 0 || strncmp(v, "python2.", 8) == 0;
}

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
    rk_normalize(k, p, norm, sz);
    if (strcmp(norm, "/") == 0)
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

/* Credentials: what reading, copying or sending is HIGH. */
static const char *rk_secret(const char *p)
{
    static const char *const parts[] = {"/.ssh/",
                                        ".aws/credentials",
                                        ".aws/config",
                                        ".config/gcloud",
                                        "/.azure",
                                        ".kube/config",
                                        ".docker/config.json",
                                        "/.netrc",
                                        ".git-credentials",
                                        "/.npmrc",
                                        "/.pypirc",
                                        "/.gnupg",
                                        "/etc/shadow",
                                        "/etc/gshadow",
                                        "/etc/sudoers",
                                        NULL};
    char tmp[1100];
    size_t pl = strlen(p);
    if (pl > 4 && strcmp(p + pl - 4, ".pub") == 0)
        return NULL;                      /* public keys are public */
    snprintf(tmp, sizeof(tmp), "/%s", p); /* "~/.ssh" and ".ssh/x" match "/.ssh/" too */
    for (const char *const *s = parts; *s; s++)
        if (strstr(tmp, *s))
            return *s[0] == '/' ? *s + 1 : *s;
    const char *b = rk_base(p);
    if ((strncmp(b, "id_rsa", 6) == 0 || strncmp(b, "id_ed25519", 10) == 0 ||
         strncmp(b, "id_ecdsa", 8) == 0 || strncmp(b, "id_dsa", 6) == 0) &&
        !strstr(b, ".pub"))
        return "a private key";
    if (strncmp(tmp, "//proc/", 7) == 0 && strstr(tmp, "/environ"))
        return "a process's environment";
    if (strcmp(b, ".ssh") == 0)
        return ".ssh";
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

/* A write to path (a redirection, tee, cp's destination...). */
static void rk_write(struct rk *k, const char *p, bool dyn, const char *how)
{
    char norm[1024];
    enum rk_where w = rk_where(k, p, dyn, norm, sizeof(norm));
    const char *sens;
    if (w == RK_DEVNULL)
        return;
    if (rk_net_device(p))
        rk_raise(k, 2, "opens a network connection through %.40s", p);
    else if (rk_raw_disk(p))
        rk_raise(k, 2, "writes to a raw disk device (%.60s)", p);
    else if ((sens = rk_sensitive_write(w == RK_HOMEDIR ? p : norm)))
        rk_raise(k, 2, "%s %.60s, which runs code later (%s)", how, p, sens);
    else if (w == RK_SYSTEM || w == RK_ROOT)
        rk_raise(k, 2, "%s a system path (%.80s)", how, norm);
    else if (w == RK_HOMEDIR)
        rk_raise(k, 2, "%s the home directory (%.80s)", how, p);
    else if (w == RK_OUTSIDE)
        rk_raise(k, 2, "%s outside the workspace (%.80s)", how, norm);
    else
        rk_raise(k, 1, "%s %.80s", how, p);
}

/* A read of path: credentials are HIGH. */
static bool rk_read(struct rk *k, const char *p, const char *verb)
{
    const char *s = rk_secret(p);
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

static void rule_rm(struct rk_cmd *x)
{
    bool rec = rk_flag(x, 'r', "--recursive") || rk_flag(x, 'R', NULL);
    bool dashdash = false;
    int targets = 0;
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        if (!dashdash && strcmp(a, "--") == 0) {
            dashdash = true;
            continue;
        }
        if (!dashdash && a[0] == '-' && a[1])
            continue;
        targets++;
        char norm[1024];
        enum rk_where w = rk_where(x->k, a, rk_arg_dyn(x, i), norm, sizeof(norm));
        static const char *const what[] = {[RK_INSIDE] = "in the workspace",
                                           [RK_WSROOT] = "the whole workspace",
                                           [RK_TMP] = "in a temporary directory",
                                           [RK_OUTSIDE] = "outside the workspace",
                                           [RK_HOMEDIR] = "in the home directory",
                                           [RK_SYSTEM] = "in a system directory",
                                           [RK_ROOT] = "the whole filesystem",
                                           [RK_DYNAMIC] = "a path built from a variable "
                                                          "(empty, it is /)",
                                           [RK_DEVNULL] = "a device"};
        bool grave = w == RK_WSROOT || w == RK_OUTSIDE || w == RK_HOMEDIR || w == RK_SYSTEM ||
                     w == RK_ROOT || w == RK_DYNAMIC;
        const char *shown = w == RK_DYNAMIC ? "" : norm;
        const char *open = *shown ? " (" : "", *close = *shown ? ")" : "";
        if (rec && grave)
            rk_raise(x->k, 2, "deletes recursively %s%s%.80s%s", what[w], open, shown, close);
        else if (grave && w != RK_DYNAMIC && w != RK_OUTSIDE)
            rk_raise(x->k, 2, "deletes files %s%s%.80s%s", what[w], open, shown, close);
        else
            rk_raise(x->k, 1, "deletes %s%s%s%s%.80s%s", rec ? "recursively " : "",
                     w == RK_DYNAMIC ? "" : "files ", what[w], open, shown, close);
    }
    if (!targets)
        rk_raise(x->k, 1, "deletes files");
}

static void rule_find(struct rk_cmd *x)
{
    bool acts = rk_has_arg(x, "-delete") || rk_has_arg(x, "-exec") || rk_has_arg(x, "-execdir") ||
                rk_has_arg(x, "-ok") || rk_has_arg(x, "-okdir");
    if (!acts) {
        if (rk_has_prefix_arg(x, "-fprint"))
            rk_raise(x->k, 1, "writes a file with find -fprint");
        return;
    }
    /* the -exec command is a command too */
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        if (strcmp(a, "-exec") && strcmp(a, "-execdir") && strcmp(a, "-ok") && strcmp(a, "-okdir"))
            continue;
        struct rs_str sub = {0};
        for (int j = i + 1; j <= rk_nargs(x); j++) {
            const char *b = rk_arg(x, j);
            if (strcmp(b, ";") == 0 || strcmp(b, "+") == 0)
                break;
            size_t bl = strlen(b);
            char *grown = realloc(sub.s, sub.len + bl + 4);
            if (!grown)
                break;
            sub.s = grown;
            memcpy(sub.s + sub.len, "'", 1);
            memcpy(sub.s + sub.len + 1, b, bl);
            memcpy(sub.s + sub.len + 1 + bl, "' ", 3);
            sub.len += bl + 3;
        }
        if (sub.s) {
            /* "{}" stands for every file found: a path under the start point */
            rk_text(x->k, sub.s, sub.len, NULL);
            free(sub.s);
        }
    }
    const char *start = rk_nargs(x) >= 1 && rk_arg(x, 1)[0] != '-' ? rk_arg(x, 1) : ".";
    char norm[1024];
    enum rk_where w = rk_where(x->k, start, rk_arg_dyn(x, 1), norm, sizeof(norm));
    if (w == RK_ROOT || w == RK_SYSTEM || w == RK_HOMEDIR || w == RK_OUTSIDE || w == RK_DYNAMIC)
        rk_raise(x->k, 2, "deletes or changes files found across %.80s", start);
    else
        rk_raise(x->k, 1, "deletes or changes files found under %.80s", start);
}

static void rule_dd(struct rk_cmd *x)
{
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
        if ((numeric && n == 4 && strchr("24567", mode[0])) ||
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

static void rule_curl(struct rk_cmd *x)
{
    static const char *const send[] = {
        "-d", "--data", "--data-binary", "--data-raw", "--data-urlencode", "--data-ascii",
        "-F", "--form", "--form-string", "-T",         "--upload-file",    "--json",
        NULL};
    bool sends = false;
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        if (rk_in(a, send) || strncmp(a, "--data", 6) == 0 || strncmp(a, "-d", 2) == 0 ||
            strncmp(a, "--form", 6) == 0)
            sends = true;
        const char *m = NULL;
        if ((strcmp(a, "-X") == 0 || strcmp(a, "--request") == 0) && i < rk_nargs(x))
            m = rk_arg(x, i + 1);
        else if (strncmp(a, "-X", 2) == 0 && a[2])
            m = a + 2;
        if (m && (strcasecmp(m, "POST") == 0 || strcasecmp(m, "PUT") == 0 ||
                  strcasecmp(m, "PATCH") == 0))
            sends = true;
    }
    rk_reads(x);
    x->f->netsend = true;
    x->k->fetch = true;
    x->f->fetch = true;
    if (sends)
        rk_raise(x->k, 2, "sends data out with curl");
    else if (rk_flag(x, 'o', "--output") || rk_flag(x, 'O', "--remote-name"))
        rk_raise(x->k, 1, "downloads a file from the network");
    else
        rk_raise(x->k, 1, "fetches from the network");
}

static void rule_wget(struct rk_cmd *x)
{
    x->f->netsend = true;
    x->k->fetch = true;
    x->f->fetch = true;
    if (rk_has_prefix_arg(x, "--post-") || rk_has_prefix_arg(x, "--body-") ||
        rk_has_prefix_arg(x, "--method=POST") || rk_has_prefix_arg(x, "--method=PUT"))
        rk_raise(x->k, 2, "sends data out with %s", x->verb);
    rk_reads(x);
    rk_raise(x->k, 1, "downloads from the network (%s)", x->verb);
}

static void rule_nc(struct rk_cmd *x)
{
    x->f->netsend = true;
    if (rk_flag(x, 'l', "--listen"))
        rk_raise(x->k, 1, "listens on a network port (%s)", x->verb);
    else
        rk_raise(x->k, 2, "opens a network connection out (%s)", x->verb);
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

static void rule_git(struct rk_cmd *x)
{
    int s = 1;
    /* git -C dir / -c k=v before the subcommand */
    while (s <= rk_nargs(x) && rk_arg(x, s)[0] == '-') {
        const char *a = rk_arg(x, s);
        if (strcmp(a, "-c") == 0 && s < rk_nargs(x)) {
            const char *kv = rk_arg(x, s + 1);
            if (strstr(kv, "hooksPath") || strstr(kv, "fsmonitor") || strstr(kv, "sshCommand"))
                rk_raise(x->k, 2, "makes git run other programs (-c %.40s)", kv);
            s++;
        } else if (strcmp(a, "-C") == 0) {
            s++;
        }
        s++;
    }
    const char *sub = s <= rk_nargs(x) ? rk_arg(x, s) : "";
    static const char *const low[] = {
        "status",   "diff", "log",     "show",     "blame",  "rev-parse", "ls-files", "describe",
        "shortlog", "grep", "ls-tree", "cat-file", "reflog", "help",      "version",  NULL};
    static const char *const local[] = {"commit", "checkout",    "reset",  "rebase", "merge",
                                        "stash",  "cherry-pick", "revert", "switch", "restore",
                                        "clean",  "add",         "rm",     "mv",     "tag",
                                        "init",   "am",          "apply",  NULL};
    static const char *const net[] = {"clone", "fetch", "pull", "submodule", "ls-remote", NULL};
    if (strcmp(sub, "push") == 0) {
        x->f->netsend = true;
        bool force = false;
        for (int i = s + 1; i <= rk_nargs(x); i++) {
            const char *a = rk_arg(x, i);
            if (strcmp(a, "-f") == 0 || strncmp(a, "--force", 7) == 0 ||
                strcmp(a, "--delete") == 0 || strcmp(a, "-d") == 0 || strcmp(a, "--mirror") == 0 ||
                (a[0] == '+' && a[1]) || (a[0] == ':' && a[1]))
                force = true;
        }
        if (force)
            rk_raise(x->k, 2, "rewrites or deletes history on a remote (git push --force)");
        else
            rk_raise(x->k, 2, "pushes to a remote repository");
    } else if (strcmp(sub, "remote") == 0 && s < rk_nargs(x) &&
               (strcmp(rk_arg(x, s + 1), "add") == 0 || strcmp(rk_arg(x, s + 1), "set-url") == 0)) {
        rk_raise(x->k, 2, "changes where git sends code (git remote %s)", rk_arg(x, s + 1));
    } else if (strcmp(sub, "filter-branch") == 0 || strcmp(sub, "filter-repo") == 0 ||
               (strcmp(sub, "update-ref") == 0 && rk_has_arg(x, "-d"))) {
        rk_raise(x->k, 2, "rewrites git history (git %s)", sub);
    } else if (strcmp(sub, "config") == 0) {
        for (int i = s + 1; i <= rk_nargs(x); i++)
            if (strstr(rk_arg(x, i), "hooksPath") || strstr(rk_arg(x, i), "fsmonitor") ||
                strstr(rk_arg(x, i), "sshCommand") || strstr(rk_arg(x, i), "credential"))
                rk_raise(x->k, 2, "makes git run other programs (git config %.40s)", rk_arg(x, i));
        if (!rk_has_arg(x, "--get") && !rk_has_arg(x, "-l") && !rk_has_arg(x, "--list"))
            rk_raise(x->k, 1, "changes git's configuration");
    } else if (strcmp(sub, "branch") == 0 || strcmp(sub, "remote") == 0) {
        if (rk_flag(x, 'D', NULL) || rk_flag(x, 'd', "--delete") || rk_has_arg(x, "rm") ||
            rk_has_arg(x, "remove"))
            rk_raise(x->k, 1, "deletes git branches or remotes");
    } else if (rk_in(sub, low) || !*sub) {
        /* read-only */
    } else if (rk_in(sub, net)) {
        x->k->fetch = true;
        rk_raise(x->k, 1, "fetches code from the network (git %s)", sub);
    } else if (rk_in(sub, local)) {
        rk_raise(x->k, 1, "changes the repository (git %s)", sub);
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
    if (strcmp(x->verb, "kill") == 0)
        rk_raise(x->k, 1, "stops a process (kill)");
    else
        rk_raise(x->k, 2, "kills processes by name (%s)", x->verb);
}

static void rule_syspkg(struct rk_cmd *x)
{
    static const char *const change[] = {
        "install", "remove", "purge", "upgrade", "dist-upgrade", "add", "del",
        "update",  "-S",     "-R",    "-U",      "reinstall",    NULL};
    for (int i = 1; i <= rk_nargs(x); i++)
        if (rk_in(rk_arg(x, i), change)) {
            x->k->fetch = true;
            rk_raise(x->k, 2, "installs or removes system packages (%s %s)", x->verb, rk_arg(x, i));
            return;
        }
}

static void rule_pip(struct rk_cmd *x, int from)
{
    bool install = false;
    for (int i = from; i <= rk_nargs(x); i++)
        if (strcmp(rk_arg(x, i), "install") == 0 || strcmp(rk_arg(x, i), "download") == 0)
            install = true;
    if (!install) {
        if (rk_has_arg(x, "uninstall"))
            rk_raise(x->k, 1, "removes Python packages");
        return;
    }
    x->k->fetch = true;
    for (int i = from; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        if (strcmp(a, "-i") == 0 || strncmp(a, "--index-url", 11) == 0 ||
            strncmp(a, "--extra-index-url", 17) == 0 || strncmp(a, "--trusted-host", 14) == 0 ||
            strncmp(a, "git+", 4) == 0 || strstr(a, "://") || strncmp(a, "-f", 2) == 0 ||
            strncmp(a, "--find-links", 12) == 0) {
            rk_raise(x->k, 2, "installs packages from an unvetted source (%.60s)", a);
            return;
        }
    }
    rk_raise(x->k, 1, "installs Python packages");
}

static void rule_pip_verb(struct rk_cmd *x)
{
    rule_pip(x, 1);
}

static void rule_npm(struct rk_cmd *x)
{
    if (rk_flag(x, 'g', "--global") || rk_has_prefix_arg(x, "--location=global"))
        rk_raise(x->k, 2, "installs packages globally (%s -g)", x->verb);
    if (rk_has_arg(x, "config") && (rk_has_arg(x, "registry") || rk_has_prefix_arg(x, "registry")))
        rk_raise(x->k, 2, "changes the package registry (%s config)", x->verb);
    static const char *const inst[] = {"install", "i", "ci", "add", "update", "upgrade", NULL};
    for (int i = 1; i <= rk_nargs(x); i++)
        if (rk_in(rk_arg(x, i), inst)) {
            x->k->fetch = true;
            rk_raise(x->k, 1, "installs packages (%s %s)", x->verb, rk_arg(x, i));
            return;
        }
    if (rk_nargs(x) >= 1 &&
        (strcmp(rk_arg(x, 1), "--version") == 0 || strcmp(rk_arg(x, 1), "-v") == 0 ||
         strcmp(rk_arg(x, 1), "ls") == 0 || strcmp(rk_arg(x, 1), "list") == 0 ||
         strcmp(rk_arg(x, 1), "view") == 0))
        return;
    rk_raise(x->k, 1, "runs project scripts (%s)", x->verb);
}

/* python -c CODE, perl -e CODE...: the code's shell calls are commands. */
static void rk_code(struct rk *k, const char *code, const char *lang, struct rk_facts *f)
{
    static const char *const calls[] = {"system(",    "popen(",   "subprocess",         "exec(",
                                        "execv",      "spawn",    "os.remove",          "rmtree",
                                        "unlink(",    "eval(",    "child_process",      "`",
                                        "shell_exec", "passthru", "Runtime.getRuntime", NULL};
    bool calls_out = false;
    for (const char *const *c = calls; *c; c++)
        if (strstr(code, *c))
            calls_out = true;
    /* every string literal may be a command: classify the ones it could run */
    if (calls_out) {
        const char *p = code;
        while ((p = strpbrk(p, "'\"`"))) {
            char q = *p;
            const char *end = strchr(p + 1, q);
            if (!end)
                break;
            rk_text(k, p + 1, (size_t)(end - p - 1), NULL);
            p = end + 1;
        }
        if (strstr(code, "rmtree") || strstr(code, "os.remove") || strstr(code, "unlink(")) {
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
        rk_raise(k, 1, "runs %s code", lang);
    }
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
        char path[512];
        snprintf(path, sizeof(path), "%.*s", (int)(end - p - 1), p + 1);
        if (rk_secret(path)) {
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
                rk_raise(x->k, 1, "runs %s module %.40s", lang, mod);
            return;
        }
        if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0)
            return;
        if (a[0] != '-') {
            x->k->runs_file = true;
            rk_raise(x->k, 1, "runs %.60s with %s", a, lang);
            return;
        }
        if (strcmp(a, "-") == 0)
            break;
    }
    /* no program named: it reads one from stdin */
    x->f->consumer = true;
    rk_raise(x->k, 1, "runs %s code from its input", lang);
}

static void rule_shell(struct rk_cmd *x)
{
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        if (a[0] == '-' && strchr(a, 'c') && a[1] != '-' && i < rk_nargs(x)) {
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
            rk_raise(x->k, 1, "runs the script %.60s", a);
            return;
        }
    }
    x->f->consumer = true;
    rk_raise(x->k, 1, "runs shell commands from its input (%s)", x->verb);
}

static void rule_eval(struct rk_cmd *x)
{
    struct rs_str all = {0};
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        size_t n = strlen(a);
        char *g = realloc(all.s, all.len + n + 2);
        if (!g)
            break;
        all.s = g;
        memcpy(all.s + all.len, a, n);
        all.len += n;
        all.s[all.len++] = ' ';
        all.s[all.len] = '\0';
        if (rk_arg_dyn(x, i))
            x->f->consumer = true; /* eval "$(...)" runs what it produced */
    }
    x->k->obfuscated = true;
    if (all.s) {
        rk_text(x->k, all.s, all.len, NULL);
        free(all.s);
    }
    rk_raise(x->k, 1, "evaluates text as commands (%s)", x->verb);
}

static void rule_source(struct rk_cmd *x)
{
    if (rk_nargs(x) >= 1 && (x->c->words[x->v + 1].subst & RS_SUBST_PROCESS))
        x->f->consumer = true;
    x->k->runs_file = true;
    rk_raise(x->k, 1, "runs a script in the shell (%s %.60s)", x->verb,
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
    else if (strcmp(x->verb, "openssl") == 0)
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
    for (int i = 1; i <= rk_nargs(x); i++)
        if (rk_arg(x, i)[0] != '-')
            rk_write(x->k, rk_arg(x, i), rk_arg_dyn(x, i),
                     strcmp(x->verb, "truncate") == 0 ? "truncates" : "creates or changes");
}

static void rule_sed(struct rk_cmd *x)
{
    rk_reads(x);
    if (rk_flag(x, 'i', "--in-place") || rk_has_prefix_arg(x, "--in-place")) {
        for (int i = 2; i <= rk_nargs(x); i++)
            if (rk_arg(x, i)[0] != '-')
                rk_write(x->k, rk_arg(x, i), rk_arg_dyn(x, i), "edits in place");
        rk_raise(x->k, 1, "edits files in place (sed -i)");
    }
}

static void rule_awk(struct rk_cmd *x)
{
    for (int i = 1; i <= rk_nargs(x); i++)
        if (strstr(rk_arg(x, i), "system(") || strstr(rk_arg(x, i), "| getline") ||
            strstr(rk_arg(x, i), "|getline"))
            rk_raise(x->k, 1, "runs commands from awk");
    rk_reads(x);
}

static void rule_read_only(struct rk_cmd *x)
{
    /* these show names and sizes, not contents */
    static const char *const names_only[] = {
        "ls",      "stat", "file", "du", "df", "tree",  "realpath", "readlink", "basename",
        "dirname", "test", "[",    "[[", "cd", "pushd", "which",    NULL};
    if (!rk_in(x->verb, names_only))
        rk_reads(x);
}

static void rule_env_dump(struct rk_cmd *x)
{
    if (rk_nargs(x) > 0 && strcmp(x->verb, "set") == 0)
        return; /* set -e and friends */
    x->f->secret = true;
    rk_raise(x->k, 1, "prints the environment (its secrets reach the agent)");
}

static void rule_alias(struct rk_cmd *x)
{
    if (rk_nargs(x) >= 1 && strchr(rk_arg(x, 1), '=')) {
        rk_raise(x->k, 2, "redefines a command (alias %.40s)", rk_arg(x, 1));
        const char *eq = strchr(rk_arg(x, 1), '=');
        rk_text(x->k, eq + 1, strlen(eq + 1), NULL);
    }
}

static void rule_export(struct rk_cmd *x)
{
    for (int i = 1; i <= rk_nargs(x); i++) {
        const char *a = rk_arg(x, i);
        if (strncmp(a, "LD_PRELOAD=", 11) == 0 || strncmp(a, "LD_LIBRARY_PATH=", 16) == 0)
            rk_raise(x->k, 2, "loads other libraries into every program (%.20s)", a);
        else if (strncmp(a, "PATH=", 5) == 0 || strncmp(a, "PROMPT_COMMAND=", 15) == 0 ||
                 strncmp(a, "BASH_ENV=", 9) == 0)
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
    rk_raise(x->k, 1, "runs project code (%s)", x->verb);
}

struct rk_rule {
    const char *const *verbs;
    void (*fn)(struct rk_cmd *x);
};

#define V(...) ((const char *const[]){__VA_ARGS__, NULL})
static const struct rk_rule rk_rules[] = {
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
    {V("nc", "ncat", "netcat", "socat", "telnet"), rule_nc},
    {V("ssh", "scp", "sftp", "ftp", "sshpass"), rule_remote},
    {V("rsync"), rule_rsync},
    {V("git"), rule_git},
    {V("docker", "podman", "nerdctl", "ctr", "crictl", "kubectl", "nsenter", "unshare", "mount",
       "umount", "chroot", "insmod", "rmmod", "modprobe", "kexec", "pivot_root", "capsh", "runc",
       "helm"),
     rule_escape},
    {V("sysctl"), rule_sysctl},
    {V("crontab", "at", "batch", "systemctl", "service", "launchctl"), rule_persist},
    {V("kill", "pkill", "killall", "killall5"), rule_kill},
    {V("apt", "apt-get", "aptitude", "dpkg", "yum", "dnf", "apk", "pacman", "zypper", "brew", "rpm",
       "snap", "flatpak"),
     rule_syspkg},
    {V("pip", "pip3", "pipx", "uv"), rule_pip_verb},
    {V("npm", "pnpm", "yarn", "npx", "bun", "gem", "cargo", "go"), rule_npm},
    {V("eval"), rule_eval},
    {V("source", "."), rule_source},
    {V("base64", "base32", "basenc", "xxd", "openssl", "uudecode", "rev"), rule_decoder},
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
    {V("tail", "watch", "top", "htop", "less", "more", "vi", "vim", "nano", "emacs"), rule_long},
    {V("make", "cmake", "ninja", "meson", "pytest", "tox", "mvn", "gradle", "ant", "bazel", "jest",
       "mocha", "ctest", "nox", "poetry", "pdm", "hatch", "deno"),
     rule_build},
    {V("ls", "cat", "head", "grep", "egrep", "fgrep", "rg", "ag", "ack", "wc", "stat", "file", "du",
       "df", "pwd", "id", "uname", "whoami", "date", "which", "type", "true", "false", "test", "[",
       "[[", "cd", "pushd", "popd", "sleep", "tree", "diff", "cmp", "sort", "uniq", "cut", "jq",
       "yq", "basename", "dirname", "realpath", "readlink", "hostname", "uptime", "free", "ps",
       "nproc", "seq", "tac", "nl", "od", "hexdump", "strings", "md5sum", "sha1sum", "sha256sum",
       "sha512sum", "cksum", "column", "fold", "fmt", "join", "paste", "tr", "expr", "bc", "man",
       "info", "lscpu", "lsblk", "locale", "getent", "groups", "history", "exit", "return", "shift",
       "wait", "read", "local", "unset", "shopt", "ulimit", "umask", "hash", "jobs", "fg", "bg",
       "dirs", "lsof", "ss", "netstat", "ip", "python-config", "zcat", "zless", "bzcat", "xzcat",
       "gzip", "gunzip", "zip", "unzip", "tar", "less", "clear", "reset", "tput", "stty", "tty",
       "whereis", "apropos", "cal", "do", "done", "then", "fi", "else", "elif", "if", "for",
       "while", "until", "case", "esac", "in", "{", "}", "!", "function", "select"),
     rule_read_only},
};
#undef V

/* Wrappers run the rest of the line: skipped, with what they add. */
static int rk_skip_wrappers(struct rk *k, const struct rs_cmd *c, int v, bool *privileged)
{
    for (int guard = 0; v < c->nwords && guard < 16; guard++) {
        const char *w = rk_base(c->words[v].s);
        /* VAR=value before the command */
        const char *eq = strchr(c->words[v].s, '=');
        if (eq && eq != c->words[v].s) {
            size_t n = (size_t)(eq - c->words[v].s);
            if (strspn(c->words[v].s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"
                                      "0123456789") == n) {
                if (strncmp(c->words[v].s, "LD_PRELOAD=", 11) == 0)
                    rk_raise(k, 2, "loads another library into the program (LD_PRELOAD)");
                v++;
                continue;
            }
        }
        if (strcmp(w, "sudo") == 0 || strcmp(w, "doas") == 0 || strcmp(w, "pkexec") == 0 ||
            strcmp(w, "run0") == 0) {
            *privileged = true;
            v++;
            while (v < c->nwords && c->words[v].s[0] == '-') {
                if (strchr("ugCgph", c->words[v].s[1]) && c->words[v].s[2] == '\0')
                    v++; /* -u user */
                v++;
            }
            continue;
        }
        if (strcmp(w, "env") == 0 && v + 1 < c->nwords) {
            v++;
            while (v < c->nwords && c->words[v].s[0] == '-') {
                if (strcmp(c->words[v].s, "-u") == 0 || strcmp(c->words[v].s, "-C") == 0)
                    v++;
                v++;
            }
            continue;
        }
        if (strcmp(w, "nice") == 0 || strcmp(w, "ionice") == 0 || strcmp(w, "stdbuf") == 0 ||
            strcmp(w, "timeout") == 0 || strcmp(w, "time") == 0 || strcmp(w, "command") == 0 ||
            strcmp(w, "builtin") == 0 || strcmp(w, "exec") == 0 || strcmp(w, "nohup") == 0 ||
            strcmp(w, "setsid") == 0 || strcmp(w, "xargs") == 0 || strcmp(w, "strace") == 0 ||
            strcmp(w, "ltrace") == 0 || strcmp(w, "chrt") == 0 || strcmp(w, "taskset") == 0 ||
            strcmp(w, "caffeinate") == 0 || strcmp(w, "unbuffer") == 0 || strcmp(w, "flock") == 0) {
            if (strcmp(w, "command") == 0 && v + 1 < c->nwords &&
                (strcmp(c->words[v + 1].s, "-v") == 0 || strcmp(c->words[v + 1].s, "-V") == 0))
                return c->nwords; /* command -v: a lookup */
            if (strcmp(w, "nohup") == 0 || strcmp(w, "setsid") == 0)
                rk_raise(k, 1, "starts a process that outlives the command (%s)", w);
            v++;
            /* their own options and operands (timeout's duration, nice's -n N, flock's file) */
            while (v < c->nwords &&
                   (c->words[v].s[0] == '-' ||
                    ((strcmp(w, "timeout") == 0 || strcmp(w, "flock") == 0 ||
                      strcmp(w, "taskset") == 0 || strcmp(w, "chrt") == 0) &&
                     strspn(c->words[v].s, "0123456789.smhdx") == strlen(c->words[v].s)))) {
                const char *o = c->words[v].s;
                if ((strcmp(o, "-n") == 0 || strcmp(o, "-c") == 0 || strcmp(o, "-s") == 0 ||
                     strcmp(o, "-k") == 0 || strcmp(o, "-o") == 0 || strcmp(o, "-e") == 0 ||
                     strcmp(o, "-I") == 0 || strcmp(o, "-P") == 0 || strcmp(o, "-L") == 0) &&
                    v + 1 < c->nwords)
                    v++;
                v++;
            }
            if (strcmp(w, "flock") == 0 && v < c->nwords)
                v++;
            continue;
        }
        if (strcmp(w, "busybox") == 0 || strcmp(w, "toybox") == 0) {
            v++;
            continue;
        }
        if (strcmp(w, "chroot") == 0) {
            rk_raise(k, 2, "reaches outside the sandbox (chroot)");
            v += 2;
            continue;
        }
        if (strcmp(w, "su") == 0) {
            *privileged = true;
            /* su -c 'cmd' */
            for (int i = v + 1; i + 1 < c->nwords; i++)
                if (strcmp(c->words[i].s, "-c") == 0 || strcmp(c->words[i].s, "--command") == 0)
                    rk_text(k, c->words[i + 1].s, strlen(c->words[i + 1].s), NULL);
            return c->nwords;
        }
        break;
    }
    return v;
}

static void rk_command(struct rk *k, const struct rs_cmd *c, struct rk_facts *f)
{
    bool privileged = false;
    int v = rk_skip_wrappers(k, c, 0, &privileged);
    if (privileged)
        rk_raise(k, 2, "runs as root (%s)", c->words[0].s);
    /* redirections first: they apply whatever the verb */
    for (int i = 0; i < c->nredirs; i++) {
        const struct rs_redir *r = &c->redirs[i];
        if (r->kind == RS_REDIR_OUT && r->target)
            rk_write(k, r->target, r->dyn, "writes");
        else if (r->kind == RS_REDIR_IN && r->target) {
            if (rk_net_device(r->target))
                rk_raise(k, 2, "opens a network connection through %.40s", r->target);
            else if (rk_read(k, r->target, "a redirection"))
                f->secret = true;
        }
    }
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
        f->consumer = true;
        return;
    }
    char verb[256];
    snprintf(verb, sizeof(verb), "%s", rk_base(vw->s));
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
    if (rk_in(verb, rk_shells)) {
        rule_shell(&x);
    } else if (rk_is_interp(verb)) {
        rule_interp(&x);
    } else {
        for (size_t i = 0; i < sizeof(rk_rules) / sizeof(rk_rules[0]); i++)
            if (rk_in(verb, rk_rules[i].verbs)) {
                rk_rules[i].fn(&x);
                goto stdin_text;
            }
        if (strchr(vw->s, '/'))
            rk_raise(k, 1, "runs %.60s", vw->s);
        else
            rk_raise(k, 1, "runs %.60s", verb);
    }
stdin_text:
    /* here-documents and here-strings: the input of the command */
    for (int i = 0; i < c->nredirs; i++) {
        const struct rs_redir *r = &c->redirs[i];
        const char *text = r->kind == RS_REDIR_HEREDOC      ? r->body
                           : r->kind == RS_REDIR_HERESTRING ? r->target
                                                            : NULL;
        if (!text)
            continue;
        if (rk_in(verb, rk_shells))
            rk_text(k, text, strlen(text), NULL);
        else if (rk_is_interp(verb))
            rk_code(k, text, verb, f);
    }
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
    if (memmem(s, len, ":(){", 4) || memmem(s, len, ":() {", 5))
        rk_raise(k, 2, "contains a fork bomb");
    if (l.defines_function)
        rk_raise(k, 2, "defines a shell function (it can shadow a command)");
    /* what substitutions run, and whether it downloads or decodes */
    struct rk_facts nested = {0};
    for (int i = 0; i < l.nnested; i++) {
        struct rk_facts nf = {0};
        rk_text(k, l.nested[i].text, strlen(l.nested[i].text), &nf);
        nested.fetch |= nf.fetch;
        nested.decode |= nf.decode;
        nested.secret |= nf.secret;
    }
    /* pipelines: facts flow left to right */
    struct rk_facts up = {0}; /* what feeds the current command's stdin */
    for (int i = 0; i < l.n; i++) {
        struct rk_facts f = {0};
        rk_command(k, &l.cmds[i], &f);
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
        } else {
            up = (struct rk_facts){0};
        }
    }
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
        size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        if (i + n > len || n == 1) {
            *hidden = true;
            i++;
            continue;
        }
        cp = c & (0xFF >> (n + 1));
        for (size_t j = 1; j < n; j++)
            cp = (cp << 6) | ((unsigned char)s[i + j] & 0x3F);
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

static void rk_file_write(struct rk *k, const char *path, const char *content)
{
    char norm[1024];
    enum rk_where w = rk_where(k, path, false, norm, sizeof(norm));
    const char *sens = rk_sensitive_write(w == RK_HOMEDIR ? path : norm);
    if (sens)
        rk_raise(k, 2, "writes %.80s, which runs code later (%s)", path, sens);
    else if (w == RK_INSIDE || w == RK_WSROOT)
        rk_raise(k, 1, "changes a file in the workspace (%.80s)", path);
    else if (w == RK_SYSTEM || w == RK_ROOT)
        rk_raise(k, 2, "writes a system path (%.80s)", norm);
    else if (w == RK_TMP)
        rk_raise(k, 1, "writes a temporary file (%.80s)", path);
    else
        rk_raise(k, 2, "writes outside the workspace (%.80s)", w == RK_HOMEDIR ? path : norm);
    /* a script written now runs later: its commands count now */
    size_t n = strlen(path);
    bool script = (content && strncmp(content, "#!", 2) == 0) ||
                  (n > 3 && strcmp(path + n - 3, ".sh") == 0) ||
                  (n > 5 && strcmp(path + n - 5, ".bash") == 0) ||
                  strcmp(rk_base(path), "Makefile") == 0;
    if (script && content) {
        struct rk inner;
        char ws[512];
        rk_init(&inner, k->ws, k->cwd, ws, sizeof(ws));
        rk_command_line(&inner, content, strlen(content));
        if (inner.level == 2)
            rk_raise(k, 2, "writes a script that %s", inner.reason);
    }
}

static const char *rk_str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

void risk_classify_action(const json_t *action, const char *workspace, const char *cwd,
                          struct risk_result *out)
{
    struct rk k;
    char ws[512];
    rk_init(&k, workspace, cwd, ws, sizeof(ws));
    const char *kind = rk_str(action, "action");
    json_t *args = json_object_get(action, "args");
    out->declared = -1;
    if (!kind) {
        rk_raise(&k, 1, "is not a known kind of action");
    } else if (strcmp(kind, "run") == 0) {
        /* the length from JSON: a NUL inside is seen, not a shorter command */
        json_t *jc = json_object_get(args, "command");
        const char *cmd = json_string_value(jc);
        rk_command_line(&k, cmd ? cmd : "", cmd ? json_string_length(jc) : 0);
    } else if (strcmp(kind, "run_ipython") == 0) {
        const char *code = rk_str(args, "code");
        code = code ? code : "";
        /* IPython's !cmd and %%bash lines are shell commands */
        struct rs_str shell = {0};
        for (const char *p = code; *p;) {
            const char *nl = strchr(p, '\n');
            size_t n = nl ? (size_t)(nl - p) : strlen(p);
            const char *q = p;
            while (q < p + n && (*q == ' ' || *q == '\t'))
                q++;
            if (q < p + n && *q == '!') {
                char *g = realloc(shell.s, shell.len + n + 2);
                if (g) {
                    shell.s = g;
                    memcpy(shell.s + shell.len, q + 1, (size_t)(p + n - q - 1));
                    shell.len += (size_t)(p + n - q - 1);
                    shell.s[shell.len++] = '\n';
                    shell.s[shell.len] = '\0';
                }
            }
            p += n + (nl ? 1 : 0);
        }
        if (shell.s) {
            rk_command_line(&k, shell.s, shell.len);
            free(shell.s);
        }
        rk_code(&k, code, "Python", NULL);
    } else if (strcmp(kind, "read") == 0) {
        const char *path = rk_str(args, "path");
        if (!path || !rk_read(&k, path, "read")) {
            char norm[1024];
            enum rk_where w = rk_where(&k, path ? path : "", false, norm, sizeof(norm));
            (void)w;
        }
    } else if (strcmp(kind, "write") == 0) {
        const char *path = rk_str(args, "path");
        rk_file_write(&k, path ? path : "", rk_str(args, "content"));
    } else if (strcmp(kind, "edit") == 0) {
        const char *path = rk_str(args, "path");
        const char *sub = rk_str(args, "command");
        if (sub && strcmp(sub, "view") == 0) {
            if (path)
                rk_read(&k, path, "the editor");
        } else {
            const char *text = rk_str(args, "file_text");
            if (!text)
                text = rk_str(args, "new_str");
            rk_file_write(&k, path ? path : "", text);
        }
    } else if (strcmp(kind, "browse") == 0 || strcmp(kind, "browse_interactive") == 0) {
        rk_raise(&k, 1, "visits a web page");
    } else {
        rk_raise(&k, 1, "is a %.40s action", kind);
    }
    rk_finish(&k, out);
    /* the agent may raise its own action's level, never lower it */
    json_t *d = json_object_get(args, "security_risk");
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
