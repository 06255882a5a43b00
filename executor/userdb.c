#include "userdb.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/io.h"

/* The user database is small; anything larger is not one. */
#define USERDB_MAX_FILE (4u * 1024 * 1024)

bool userdb_name_valid(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > 32 || name[0] == '-')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return false;
    }
    return true;
}

/* A passwd or group field must not hold the separators. */
static bool field_valid(const char *s)
{
    return !strpbrk(s, ":\n");
}

/* The file name in dirfd, read whole (without following a symlink). A missing file is empty
 * with root's 0644. 0, or -1 with err. */
static int read_db(int dirfd, const char *etc, const char *name, struct buf *text, struct stat *st,
                   struct buf *err)
{
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 && errno == ENOENT) {
        *st = (struct stat){.st_mode = S_IFREG | 0644};
        return 0;
    }
    if (fd < 0 || fstat(fd, st) < 0 || !S_ISREG(st->st_mode) ||
        (size_t)st->st_size > USERDB_MAX_FILE) {
        buf_printf(err, "%s/%s: %s", etc, name,
                   fd < 0 ? strerror(errno) : "not a regular file of a user database's size");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    int rc = buf_reserve(text, (size_t)st->st_size + 1);
    if (rc == 0 && st->st_size > 0)
        rc = io_read_full(fd, text->data, (size_t)st->st_size, 0);
    if (rc == 0) {
        text->len = (size_t)st->st_size;
        text->data[text->len] = '\0';
    } else {
        buf_printf(err, "cannot read %s/%s: %s", etc, name, errno ? strerror(errno) : "it shrank");
    }
    close(fd);
    return rc;
}

/* Replaces name in dirfd with text: a new file with the old one's owner and mode, renamed over
 * it (rename replaces a symlink, never writes through it). */
static int write_db(int dirfd, const char *etc, const char *name, const struct buf *text,
                    const struct stat *st, struct buf *err)
{
    char tmp[64];
    snprintf(tmp, sizeof tmp, ".%s.paddock", name);
    unlinkat(dirfd, tmp, 0); /* a leftover of an executor that died here */
    int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        buf_printf(err, "cannot write %s/%s: %s", etc, name, strerror(errno));
        return -1;
    }
    int rc = io_write_all(fd, text->data, text->len) < 0 ||
                     fchown(fd, st->st_uid, st->st_gid) < 0 || fchmod(fd, st->st_mode & 07777) < 0
                 ? -1
                 : 0;
    int e = errno;
    if (close(fd) < 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    if (rc < 0) {
        unlinkat(dirfd, tmp, 0);
        buf_printf(err, "cannot write %s/%s: %s", etc, name, strerror(e));
        return -1;
    }
    if (renameat(dirfd, tmp, dirfd, name) < 0) {
        int re = errno;
        unlinkat(dirfd, tmp, 0);
        buf_printf(err, "cannot replace %s/%s: %s", etc, name, strerror(re));
        return -1;
    }
    return 0;
}

/* Field i (0-based) of a ':'-separated line of len n: its start and length, or false. */
static bool line_field(const char *line, size_t n, int i, const char **f, size_t *flen)
{
    const char *p = line, *end = line + n;
    for (; i > 0; i--) {
        const char *c = memchr(p, ':', (size_t)(end - p));
        if (!c)
            return false;
        p = c + 1;
    }
    const char *c = memchr(p, ':', (size_t)(end - p));
    *f = p;
    *flen = c ? (size_t)(c - p) : (size_t)(end - p);
    return true;
}

static bool field_is(const char *line, size_t n, int i, const char *want)
{
    const char *f;
    size_t flen;
    return line_field(line, n, i, &f, &flen) && flen == strlen(want) && memcmp(f, want, flen) == 0;
}

static bool field_is_id(const char *line, size_t n, int i, unsigned long id)
{
    char want[24];
    snprintf(want, sizeof want, "%lu", id);
    return field_is(line, n, i, want);
}

/* The line at *pos (without its '\n'; a last line without one counts), *pos moved past it;
 * NULL at the end. */
static const char *line_next(const struct buf *t, size_t *pos, size_t *n)
{
    if (*pos >= t->len)
        return NULL;
    const char *line = t->data + *pos;
    const char *nl = memchr(line, '\n', t->len - *pos);
    *n = nl ? (size_t)(nl - line) : t->len - *pos;
    *pos += *n + (nl ? 1 : 0);
    return line;
}

static int passwd_text(const struct buf *old, const struct userdb_user *u, struct buf *out)
{
    /* The GECOS and shell of an entry of that name stay (the image's description of its
     * user), else the shell of the uid's first entry. */
    const char *gecos = "", *shell = u->shell;
    size_t gecos_len = 0, shell_len = strlen(u->shell);
    bool named = false, by_uid = false;
    size_t pos = 0, n;
    for (const char *line; !named && (line = line_next(old, &pos, &n));) {
        const char *f;
        size_t flen;
        bool same_name = field_is(line, n, 0, u->name);
        if (!same_name && (by_uid || !field_is_id(line, n, 2, u->uid)))
            continue;
        if (same_name && line_field(line, n, 4, &gecos, &gecos_len))
            named = true;
        if (line_field(line, n, 6, &f, &flen) && flen) {
            shell = f;
            shell_len = flen;
        }
        by_uid = true;
    }
    struct buf mine = BUF_INIT;
    if (buf_printf(&mine, "%s:x:%lu:%lu:%.*s:%s:%.*s\n", u->name, (unsigned long)u->uid,
                   (unsigned long)u->gid, (int)gecos_len, gecos, u->home, (int)shell_len,
                   shell) < 0)
        return -1;
    bool placed = false;
    int rc = 0;
    pos = 0;
    for (const char *line; (line = line_next(old, &pos, &n));) {
        bool same_name = field_is(line, n, 0, u->name);
        if (!placed && (same_name || field_is_id(line, n, 2, u->uid))) {
            rc |= buf_append(out, mine.data, mine.len);
            placed = true;
        }
        if (!same_name)
            rc |= buf_append(out, line, n) | buf_append(out, "\n", 1);
    }
    if (!placed)
        rc |= buf_append(out, mine.data, mine.len);
    buf_free(&mine);
    return rc ? -1 : 0;
}

static int group_text(const struct buf *old, const struct userdb_user *u, struct buf *out)
{
    bool have = false;
    size_t pos = 0, n;
    for (const char *line; (line = line_next(old, &pos, &n));)
        have = have || field_is(line, n, 0, u->name) || field_is_id(line, n, 2, u->gid);
    if (buf_append(out, old->data ? old->data : "", old->len) < 0)
        return -1;
    if (have)
        return 0;
    if (old->len && old->data[old->len - 1] != '\n' && buf_append(out, "\n", 1) < 0)
        return -1;
    return buf_printf(out, "%s:x:%lu:\n", u->name, (unsigned long)u->gid) < 0 ? -1 : 0;
}

int userdb_name_user(const char *etc, const struct userdb_user *u, struct buf *err)
{
    if (!userdb_name_valid(u->name) || !field_valid(u->home) || !field_valid(u->shell)) {
        buf_printf(err, "'%s' (home %s, shell %s) cannot be written into a passwd line", u->name,
                   u->home, u->shell);
        return -1;
    }
    int dirfd = open(etc, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dirfd < 0) {
        buf_printf(err, "%s: %s", etc, strerror(errno));
        return -1;
    }
    static const char *const files[] = {"passwd", "group"};
    int (*const make[])(const struct buf *, const struct userdb_user *,
                        struct buf *) = {passwd_text, group_text};
    int changed = 0;
    for (size_t i = 0; i < 2 && changed >= 0; i++) {
        struct buf old = BUF_INIT, text = BUF_INIT;
        struct stat st;
        if (read_db(dirfd, etc, files[i], &old, &st, err) < 0) {
            changed = -1;
        } else if (make[i](&old, u, &text) < 0) {
            buf_printf(err, "out of memory");
            changed = -1;
        } else if (text.len != old.len || memcmp(text.data, old.data ? old.data : "", old.len)) {
            changed = write_db(dirfd, etc, files[i], &text, &st, err) < 0 ? -1 : 1;
        }
        buf_free(&old);
        buf_free(&text);
    }
    close(dirfd);
    return changed;
}

/* nftw has no user data: one walk at a time (start-up). */
static uid_t own_uid;
static gid_t own_gid;
static int own_errno;
static char own_failed[4096];

static int own_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)type;
    (void)ftw;
    if ((st->st_uid == own_uid && st->st_gid == own_gid) ||
        fchownat(AT_FDCWD, path, own_uid, own_gid, AT_SYMLINK_NOFOLLOW) == 0)
        return 0;
    own_errno = errno;
    snprintf(own_failed, sizeof own_failed, "%s", path);
    return 1;
}

int userdb_own_tree(const char *dir, uid_t uid, gid_t gid, struct buf *err)
{
    struct stat st;
    if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
        buf_printf(err, "%s: %s", dir, errno ? strerror(errno) : "not a directory");
        return -1;
    }
    if (st.st_uid == uid)
        return 0;
    own_uid = uid;
    own_gid = gid;
    own_errno = 0;
    /* FTW_PHYS: symlinks are entries, not followed; FTW_MOUNT: a mount inside (an operator's
     * volume) is not walked into. */
    int rc = nftw(dir, own_one, 32, FTW_PHYS | FTW_MOUNT);
    if (rc != 0) {
        buf_printf(err, "cannot give %s to uid %lu: %s", rc > 0 ? own_failed : dir,
                   (unsigned long)uid, strerror(rc > 0 ? own_errno : errno));
        return -1;
    }
    return 0;
}
