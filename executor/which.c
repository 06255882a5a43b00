#include "which.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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

/* The directory of one PATH entry (p, len bytes) into out, as which_find takes it: false
 * when the entry is skipped (relative or empty without a cwd) or too long. */
static bool entry_dir(const char *p, size_t len, const char *cwd, char *out, size_t outlen)
{
    int n = -1;
    if (len > 0 && p[0] == '/')
        n = snprintf(out, outlen, "%.*s", (int)len, p);
    else if (cwd && *cwd && len == 0)
        n = snprintf(out, outlen, "%s", cwd);
    else if (cwd && *cwd)
        n = snprintf(out, outlen, "%s/%.*s", cwd, (int)len, p);
    return n > 0 && (size_t)n < outlen;
}

bool which_find(const char *path_env, const char *cwd, const char *name, char *out, size_t outlen)
{
    const char *p = path_env ? path_env : "";
    for (;;) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        if (entry_dir(p, len, cwd, out, outlen)) {
            size_t dl = strlen(out);
            int n = snprintf(out + dl, outlen - dl, "/%s", name);
            if (n > 0 && (size_t)n < outlen - dl && is_executable(out))
                return true;
        }
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

/* ---- the cached lookup ---- */

/* What stat says of a directory or of the answer; a missing one is all zero but errno. */
static void stamp_take(const char *path, struct which_stamp *s)
{
    struct stat st;
    memset(s, 0, sizeof *s);
    if (stat(path, &st) != 0) {
        s->missing = true;
        return;
    }
    s->dev = st.st_dev;
    s->ino = st.st_ino;
    s->mode = st.st_mode;
    s->mtime_sec = st.st_mtim.tv_sec;
    s->mtime_nsec = st.st_mtim.tv_nsec;
    s->ctime_sec = st.st_ctim.tv_sec;
    s->ctime_nsec = st.st_ctim.tv_nsec;
}

static bool stamp_same(const struct which_stamp *a, const struct which_stamp *b)
{
    return a->missing == b->missing && a->dev == b->dev && a->ino == b->ino && a->mode == b->mode &&
           a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec &&
           a->ctime_sec == b->ctime_sec && a->ctime_nsec == b->ctime_nsec;
}

/* Changed too recently to be trusted: a file system stamps times at a clock tick's resolution,
 * so a change in the same tick as this stamp would not show next time. Nanosecond stamps move
 * every tick (milliseconds): WHICH_RACY_NS. Whole-second ones (both nanosecond parts zero) may
 * be a second or two coarse: WHICH_RACY_SECONDS. A time in the future is never trusted.
 * Docker's --init makes its mount point in /usr/sbin as the container is created, so with
 * seconds alone every command of a sandbox's first seconds looked up python in full. */
static bool time_recent(long long sec, long nsec, const struct timespec *now)
{
    if (sec < (long long)now->tv_sec - 1)
        return false; /* over a second ago: WHICH_RACY_NS is less */
    if (sec > (long long)now->tv_sec)
        return true;
    /* within a second of now: nanoseconds without overflow, whatever the stamp says */
    long long ago = ((long long)now->tv_sec - sec) * 1000000000LL + (now->tv_nsec - nsec);
    return ago <= WHICH_RACY_NS;
}

static bool stamp_recent(const struct which_stamp *s, const struct timespec *now)
{
    if (s->missing)
        return false;
    if (s->mtime_nsec == 0 && s->ctime_nsec == 0)
        return s->mtime_sec >= (long long)now->tv_sec - WHICH_RACY_SECONDS ||
               s->ctime_sec >= (long long)now->tv_sec - WHICH_RACY_SECONDS;
    return time_recent(s->mtime_sec, s->mtime_nsec, now) ||
           time_recent(s->ctime_sec, s->ctime_nsec, now);
}

/* Every stamp is old enough to be trusted (see stamp_recent). */
static bool stamps_settled(const struct which_cache *c)
{
    struct timespec now;
    if (c->trust_recent)
        return true;
    if (clock_gettime(CLOCK_REALTIME, &now) < 0)
        return false;
    for (size_t i = 0; i < c->ndirs; i++)
        if (stamp_recent(&c->dirs[i], &now))
            return false;
    for (size_t i = 0; i < c->nfiles; i++)
        if (stamp_recent(&c->files[i].st, &now))
            return false;
    return !c->answer[0] || !stamp_recent(&c->answer_stamp, &now);
}

static bool has_relative_entry(const char *path_env)
{
    for (const char *p = path_env;; p++) {
        if (*p != '/')
            return true; /* empty or relative: the cwd takes part */
        p = strchr(p, ':');
        if (!p)
            return false;
    }
}

/* Calls fn for each directory the lookup reads, in PATH order; stops when it returns false. */
static bool each_dir(const char *path_env, const char *cwd,
                     bool (*fn)(struct which_cache *, const char *), struct which_cache *c)
{
    char dir[PATH_MAX];
    for (const char *p = path_env;;) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        if (entry_dir(p, len, cwd, dir, sizeof dir) && !fn(c, dir))
            return false;
        if (!colon)
            return true;
        p = colon + 1;
    }
}

static bool dir_record(struct which_cache *c, const char *dir)
{
    if (c->ndirs == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        struct which_stamp *p = realloc(c->dirs, cap * sizeof *p);
        if (!p)
            return false;
        c->dirs = p;
        c->cap = cap;
    }
    stamp_take(dir, &c->dirs[c->ndirs++]);
    return true;
}

/* A python or python3 there that the lookup passed over (not executable, not a regular
 * file): chmod +x changes only its own ctime, so it is watched too. So is a dangling symlink
 * (stat: missing): its target made elsewhere changes no directory along PATH. Rare: none is
 * usual. */
static bool dir_note_rejected(struct which_cache *c, const char *dir)
{
    static const char *const names[] = {"python", "python3"};
    for (size_t i = 0; i < 2; i++) {
        char path[PATH_MAX];
        struct which_stamp st;
        int n = snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        /* An executable one that is not the answer comes after it: it cannot become it. */
        if (n < 0 || (size_t)n >= sizeof path || strcmp(path, c->answer) == 0 ||
            is_executable(path))
            continue;
        stamp_take(path, &st);
        struct stat link;
        if (st.missing && lstat(path, &link) != 0)
            continue;
        struct which_file *p = realloc(c->files, (c->nfiles + 1) * sizeof *p);
        if (!p)
            return false;
        c->files = p;
        if (!(p[c->nfiles].path = strdup(path)))
            return false;
        p[c->nfiles++].st = st;
    }
    return true;
}

static bool dir_unchanged(struct which_cache *c, const char *dir)
{
    struct which_stamp now;
    if (c->checked >= c->ndirs)
        return false;
    stamp_take(dir, &now);
    return stamp_same(&now, &c->dirs[c->checked++]);
}

/* The cached answer still holds: same PATH (and cwd when it takes part), no directory along
 * it changed (a file added, removed, renamed: the directory's mtime; the directory replaced
 * or made: its inode or existence), the answer is the same file with the same mode, and so
 * is each candidate the lookup passed over. */
static bool cache_holds(struct which_cache *c, const char *path_env, const char *cwd)
{
    if (!c->valid || strcmp(c->path_env, path_env) != 0 ||
        (c->cwd && strcmp(c->cwd, cwd ? cwd : "") != 0))
        return false;
    c->checked = 0;
    if (!each_dir(path_env, c->cwd, dir_unchanged, c) || c->checked != c->ndirs)
        return false;
    struct which_stamp now;
    if (c->answer[0]) {
        stamp_take(c->answer, &now);
        if (!stamp_same(&now, &c->answer_stamp))
            return false;
    }
    for (size_t i = 0; i < c->nfiles; i++) {
        stamp_take(c->files[i].path, &now);
        if (!stamp_same(&now, &c->files[i].st))
            return false;
    }
    return true;
}

static void cache_clear(struct which_cache *c)
{
    free(c->path_env);
    free(c->cwd);
    for (size_t i = 0; i < c->nfiles; i++)
        free(c->files[i].path);
    free(c->files);
    c->path_env = c->cwd = NULL;
    c->files = NULL;
    c->nfiles = c->ndirs = 0;
    c->valid = false;
}

void which_python_cached(struct which_cache *c, const char *path_env, const char *cwd, char *out,
                         size_t outlen)
{
    const char *path = path_env ? path_env : "";
    if (!cache_holds(c, path, cwd)) {
        cache_clear(c);
        /* The stamps come first: a change during the lookup then shows next time. */
        c->path_env = strdup(path);
        bool rel = has_relative_entry(path);
        if (rel)
            c->cwd = strdup(cwd ? cwd : "");
        bool ok = c->path_env && (!rel || c->cwd) && each_dir(path, cwd, dir_record, c);
        which_python(path, cwd, c->answer, sizeof c->answer);
        if (c->answer[0])
            stamp_take(c->answer, &c->answer_stamp);
        c->valid = ok && each_dir(path, cwd, dir_note_rejected, c) && stamps_settled(c);
    }
    snprintf(out, outlen, "%s", c->answer);
}

void which_cache_free(struct which_cache *c)
{
    cache_clear(c);
    free(c->dirs);
    memset(c, 0, sizeof *c);
}
