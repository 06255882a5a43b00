#include "zip_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "common/io.h"
#include "common/utf8.h"
#include "fileio.h"
#include "text.h"
#include "zip.h"

#define ZIP_READ_CHUNK 65536
#define ZIP_MAX32 0xffffffffu
#define ZIP_MAX16 0xffffu
#define ZIP_END_SEARCH (ZIP_END_SIZE + 0xffff) /* the record plus the longest comment */

struct zip_item {
    const unsigned char *name; /* in the central directory buffer, not NUL-terminated */
    size_t name_len;
    char *path; /* normalized: no empty or "." components, no trailing '/' */
    bool dir;
    mode_t mode;
    uint16_t flags, method;
    uint32_t crc;
    uint64_t csize, usize, offset;
};

struct zip_job {
    int fd, root;
    uint64_t size;
    uint64_t cd_offset, cd_size, count;
    unsigned char *cd;
    struct zip_item *items;
    size_t n;
    struct buf *err;
    unsigned char in[ZIP_READ_CHUNK], out[ZIP_READ_CHUNK];
};

/* An entry name for a message: control bytes as '?', invalid UTF-8 as U+FFFD (so the
 * message is valid JSON text). */
static void append_name(struct buf *err, const unsigned char *name, size_t n)
{
    struct buf clean = BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        char c = name[i] < 0x20 || name[i] == 0x7f ? '?' : (char)name[i];
        buf_append(&clean, &c, 1);
    }
    if (clean.data)
        utf8_repair(err, clean.data, clean.len, 0, NULL);
    buf_free(&clean);
}

static enum zip_result refuse(struct zip_job *j, const struct zip_item *it, const char *why)
{
    buf_reset(j->err);
    buf_printf(j->err, "%s", why);
    if (it) {
        buf_append_str(j->err, ": ");
        append_name(j->err, it->name, it->name_len);
    }
    return ZIP_REFUSED;
}

/* errno is kept for the caller. */
static enum zip_result system_error(struct zip_job *j, const struct zip_item *it, const char *what)
{
    int saved = errno;
    buf_reset(j->err);
    buf_printf(j->err, "%s", what);
    if (it) {
        buf_append_str(j->err, " ");
        append_name(j->err, it->name, it->name_len);
    }
    buf_printf(j->err, ": %s", strerror(saved));
    errno = saved;
    return ZIP_SYSTEM;
}

/* The end of central directory record (and its Zip64 version when the 16/32-bit fields are
 * saturated): where the central directory is and how many entries it has. */
static enum zip_result find_directory(struct zip_job *j)
{
    size_t tail = j->size < ZIP_END_SEARCH ? (size_t)j->size : ZIP_END_SEARCH;
    if (tail < ZIP_END_SIZE)
        return refuse(j, NULL, "Not a zip archive (too short)");
    unsigned char *buf = malloc(tail);
    if (!buf)
        return errno = ENOMEM, system_error(j, NULL, "Cannot read the archive");
    uint64_t base = j->size - tail;
    if (io_read_full(j->fd, buf, tail, (off_t)base) < 0) {
        free(buf);
        return system_error(j, NULL, "Cannot read the archive");
    }
    const unsigned char *e = NULL;
    for (size_t i = tail - ZIP_END_SIZE + 1; i-- > 0;)
        if (zip_get32(buf + i) == ZIP_SIG_END) {
            e = buf + i;
            break;
        }
    if (!e) {
        free(buf);
        return refuse(j, NULL, "Not a zip archive (no end of central directory record)");
    }
    uint64_t end_pos = base + (uint64_t)(e - buf);
    uint16_t disk = zip_get16(e + 4), cd_disk = zip_get16(e + 6);
    j->count = zip_get16(e + 10);
    j->cd_size = zip_get32(e + 12);
    j->cd_offset = zip_get32(e + 16);
    free(buf);
    if (disk != 0 || cd_disk != 0)
        return refuse(j, NULL, "Multi-disk zip archives are not supported");
    if (j->count == ZIP_MAX16 || j->cd_size == ZIP_MAX32 || j->cd_offset == ZIP_MAX32) {
        unsigned char loc[ZIP_END64_LOCATOR_SIZE], rec[ZIP_END64_SIZE];
        if (end_pos >= ZIP_END64_LOCATOR_SIZE &&
            io_read_full(j->fd, loc, sizeof loc, (off_t)(end_pos - ZIP_END64_LOCATOR_SIZE)) == 0 &&
            zip_get32(loc) == ZIP_SIG_END64_LOCATOR) {
            uint64_t rec_off = zip_get64(loc + 8);
            if (rec_off > end_pos || io_read_full(j->fd, rec, sizeof rec, (off_t)rec_off) < 0 ||
                zip_get32(rec) != ZIP_SIG_END64)
                return refuse(j, NULL, "Damaged zip archive (Zip64 end record)");
            j->count = zip_get64(rec + 32);
            j->cd_size = zip_get64(rec + 40);
            j->cd_offset = zip_get64(rec + 48);
            end_pos = rec_off;
        }
    }
    if (j->cd_offset > end_pos || j->cd_size > end_pos - j->cd_offset)
        return refuse(j, NULL, "Damaged zip archive (central directory out of bounds)");
    return ZIP_OK;
}

/* Fills usize, csize, offset from a Zip64 extra field where the 32-bit fields are full. */
static enum zip_result read_zip64_extra(struct zip_job *j, struct zip_item *it,
                                        const unsigned char *x, size_t xl)
{
    while (xl >= 4) {
        uint16_t id = zip_get16(x), len = zip_get16(x + 2);
        if ((size_t)len + 4 > xl)
            break;
        if (id == ZIP_EXTRA_ZIP64) {
            const unsigned char *q = x + 4, *end = x + 4 + len;
            uint64_t *fields[] = {&it->usize, &it->csize, &it->offset};
            for (size_t f = 0; f < 3; f++) {
                if (*fields[f] != ZIP_MAX32)
                    continue;
                if (end - q < 8)
                    return refuse(j, it, "Damaged zip archive (short Zip64 field)");
                *fields[f] = zip_get64(q);
                q += 8;
            }
            return ZIP_OK;
        }
        x += 4 + len;
        xl -= 4 + (size_t)len;
    }
    return ZIP_OK;
}

/* The entry's name as a relative path, or a refusal. An empty result (a name such as "./")
 * means nothing to create. */
static enum zip_result normalize_name(struct zip_job *j, struct zip_item *it)
{
    const char *name = (const char *)it->name;
    size_t n = it->name_len;
    if (n == 0)
        return refuse(j, NULL, "Refusing a zip entry with an empty name");
    if (memchr(name, '\0', n))
        return refuse(j, it, "Refusing a zip entry whose name holds a NUL byte");
    if (name[0] == '/')
        return refuse(j, it, "Refusing a zip entry with an absolute path");
    it->path = malloc(n + 1);
    if (!it->path)
        return errno = ENOMEM, system_error(j, NULL, "Cannot read the archive");
    size_t out = 0;
    for (size_t i = 0; i < n;) {
        size_t k = i;
        while (k < n && name[k] != '/')
            k++;
        size_t len = k - i;
        if (len == 2 && name[i] == '.' && name[i + 1] == '.')
            return refuse(j, it, "Refusing a zip entry with a '..' component");
        if (len > 0 && !(len == 1 && name[i] == '.')) {
            if (out)
                it->path[out++] = '/';
            memcpy(it->path + out, name + i, len);
            out += len;
        }
        i = k + 1;
    }
    it->path[out] = '\0';
    if (name[n - 1] == '/')
        it->dir = true;
    return ZIP_OK;
}

static enum zip_result read_directory(struct zip_job *j, const struct zip_limits *lim)
{
    if (j->count > lim->max_entries) {
        buf_reset(j->err);
        buf_printf(j->err, "Refusing a zip archive with %llu entries (limit %llu)",
                   (unsigned long long)j->count, (unsigned long long)lim->max_entries);
        return ZIP_REFUSED;
    }
    j->cd = malloc(j->cd_size ? j->cd_size : 1);
    j->items = calloc(j->count ? j->count : 1, sizeof *j->items);
    if (!j->cd || !j->items)
        return errno = ENOMEM, system_error(j, NULL, "Cannot read the archive");
    if (io_read_full(j->fd, j->cd, j->cd_size, (off_t)j->cd_offset) < 0)
        return refuse(j, NULL, "Damaged zip archive (cannot read the central directory)");
    const unsigned char *p = j->cd, *end = j->cd + j->cd_size;
    uint64_t total = 0;
    for (uint64_t i = 0; i < j->count; i++) {
        if (end - p < ZIP_CENTRAL_SIZE || zip_get32(p) != ZIP_SIG_CENTRAL)
            return refuse(j, NULL, "Damaged zip archive (central directory)");
        size_t nl = zip_get16(p + 28), xl = zip_get16(p + 30), cl = zip_get16(p + 32);
        if ((size_t)(end - p) < ZIP_CENTRAL_SIZE + nl + xl + cl)
            return refuse(j, NULL, "Damaged zip archive (central directory)");
        struct zip_item *it = &j->items[j->n++];
        uint16_t made_by = zip_get16(p + 4);
        uint32_t attrs = zip_get32(p + 38);
        it->name = p + ZIP_CENTRAL_SIZE;
        it->name_len = nl;
        it->flags = zip_get16(p + 8);
        it->method = zip_get16(p + 10);
        it->crc = zip_get32(p + 16);
        it->csize = zip_get32(p + 20);
        it->usize = zip_get32(p + 24);
        it->offset = zip_get32(p + 42);
        enum zip_result r = read_zip64_extra(j, it, p + ZIP_CENTRAL_SIZE + nl, xl);
        if (r == ZIP_OK)
            r = normalize_name(j, it);
        if (r != ZIP_OK)
            return r;
        if (made_by >> 8 == ZIP_HOST_UNIX && attrs >> 16) {
            it->mode = (mode_t)(attrs >> 16);
            if (S_ISLNK(it->mode))
                return refuse(j, it, "Refusing a symlink entry in a zip archive");
            if (S_ISDIR(it->mode))
                it->dir = true;
        }
        if (it->flags & ZIP_FLAG_ENCRYPTED)
            return refuse(j, it, "Encrypted zip entries are not supported");
        if (!it->dir && it->method != ZIP_METHOD_STORED && it->method != ZIP_METHOD_DEFLATE) {
            buf_reset(j->err);
            buf_printf(j->err, "Unsupported compression method %u in zip entry: ", it->method);
            append_name(j->err, it->name, it->name_len);
            return ZIP_REFUSED;
        }
        if (!it->dir && it->method == ZIP_METHOD_STORED && it->csize != it->usize)
            return refuse(j, it, "Damaged zip archive (stored entry sizes differ)");
        if (it->usize > lim->max_total - total) {
            buf_reset(j->err);
            buf_printf(j->err,
                       "Refusing a zip archive that unpacks to more than %llu bytes (zip bomb?)",
                       (unsigned long long)lim->max_total);
            return ZIP_REFUSED;
        }
        total += it->usize;
        p += ZIP_CENTRAL_SIZE + nl + xl + cl;
    }
    return ZIP_OK;
}

/* Opens the directory `name` below at without following a symlink, creating it if absent. */
static enum zip_result open_dir(struct zip_job *j, const struct zip_item *it, int at,
                                const char *name, int *out)
{
    int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        if (mkdirat(at, name, 0755) < 0 && errno != EEXIST)
            return system_error(j, it, "Cannot create the directory for");
        fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
        struct stat st;
        int saved = errno;
        if ((saved == ELOOP || saved == ENOTDIR) &&
            fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
            return refuse(j, it, "Refusing to follow a symlink while unpacking");
        errno = saved;
        return system_error(j, it, "Cannot open the directory for");
    }
    *out = fd;
    return ZIP_OK;
}

/* Opens every directory of it->path but the last component (creating them); *leaf points at
 * the last component inside it->path. The caller closes *dir unless it is j->root. */
static enum zip_result open_parent(struct zip_job *j, struct zip_item *it, int *dir, char **leaf)
{
    int cur = j->root;
    char *s = it->path, *slash;
    while ((slash = strchr(s, '/'))) {
        int next;
        *slash = '\0';
        enum zip_result r = open_dir(j, it, cur, s, &next);
        *slash = '/';
        if (cur != j->root)
            close(cur);
        if (r != ZIP_OK)
            return r;
        cur = next;
        s = slash + 1;
    }
    *dir = cur;
    *leaf = s;
    return ZIP_OK;
}

/* Copies (stored) or inflates (deflate) the entry's data into out_fd, checking its size and
 * CRC-32 against the central directory. */
static enum zip_result unpack_data(struct zip_job *j, const struct zip_item *it, uint64_t off,
                                   int out_fd)
{
    z_stream z = {0};
    bool inflating = it->method == ZIP_METHOD_DEFLATE;
    if (inflating && inflateInit2(&z, -15) != Z_OK)
        return errno = ENOMEM, system_error(j, it, "Cannot unpack");
    uLong crc = crc32(0, Z_NULL, 0);
    uint64_t left = it->csize, produced = 0;
    enum zip_result r = ZIP_OK;
    for (;;) {
        if (z.avail_in == 0 && left > 0) {
            size_t want = left < sizeof j->in ? (size_t)left : sizeof j->in;
            if (io_read_full(j->fd, j->in, want, (off_t)off) < 0) {
                r = refuse(j, it, "Damaged zip archive (truncated entry)");
                break;
            }
            off += want;
            left -= want;
            z.next_in = j->in;
            z.avail_in = (uInt)want;
        }
        size_t have;
        int zr = Z_OK;
        if (inflating) {
            z.next_out = j->out;
            z.avail_out = sizeof j->out;
            zr = inflate(&z, Z_NO_FLUSH);
            if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
                r = refuse(j, it, "Damaged zip archive (invalid deflate data)");
                break;
            }
            have = sizeof j->out - z.avail_out;
        } else {
            have = z.avail_in;
            memcpy(j->out, j->in, have);
            z.avail_in = 0;
        }
        if (have > it->usize - produced) {
            r = refuse(j, it, "Refusing a zip entry that unpacks to more than its declared size");
            break;
        }
        if (have && io_write_all(out_fd, j->out, have) < 0) {
            r = system_error(j, it, "Cannot write");
            break;
        }
        crc = crc32(crc, j->out, (uInt)have);
        produced += have;
        if (zr == Z_STREAM_END || (!inflating && left == 0))
            break;
        if (inflating && zr == Z_BUF_ERROR && z.avail_in == 0 && left == 0) {
            r = refuse(j, it, "Damaged zip archive (truncated deflate data)");
            break;
        }
    }
    if (inflating)
        inflateEnd(&z);
    if (r == ZIP_OK && produced != it->usize)
        r = refuse(j, it, "Damaged zip archive (entry size differs from the directory)");
    if (r == ZIP_OK && (uint32_t)crc != it->crc)
        r = refuse(j, it, "Damaged zip archive (CRC-32 mismatch)");
    return r;
}

static enum zip_result unpack_file(struct zip_job *j, struct zip_item *it, int dir,
                                   const char *leaf)
{
    /* The local header: its name must be the directory's; the data follows it. */
    unsigned char h[ZIP_LOCAL_SIZE];
    if (it->offset > j->cd_offset || io_read_full(j->fd, h, sizeof h, (off_t)it->offset) < 0 ||
        zip_get32(h) != ZIP_SIG_LOCAL)
        return refuse(j, it, "Damaged zip archive (local header)");
    size_t nl = zip_get16(h + 26), xl = zip_get16(h + 28);
    char *lname = malloc(nl + 1);
    if (!lname)
        return errno = ENOMEM, system_error(j, it, "Cannot unpack");
    bool same = nl == it->name_len &&
                io_read_full(j->fd, lname, nl, (off_t)(it->offset + ZIP_LOCAL_SIZE)) == 0 &&
                memcmp(lname, it->name, nl) == 0;
    free(lname);
    if (!same)
        return refuse(j, it, "Damaged zip archive (local and central names differ)");
    uint64_t data = it->offset + ZIP_LOCAL_SIZE + nl + xl;
    if (data > j->cd_offset || it->csize > j->cd_offset - data)
        return refuse(j, it, "Damaged zip archive (entry data out of bounds)");

    mode_t mode = it->mode ? (it->mode & 0777) | 0600 : 0644;
    int fd = openat(dir, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0 && errno == EEXIST) {
        /* Replace a file or symlink that is there; never write through it. */
        struct stat st;
        if (fstatat(dir, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
            return errno = EISDIR, system_error(j, it, "Cannot unpack");
        if (unlinkat(dir, leaf, 0) < 0)
            return system_error(j, it, "Cannot replace");
        fd = openat(dir, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    }
    if (fd < 0)
        return system_error(j, it, "Cannot create");
    enum zip_result r = unpack_data(j, it, data, fd);
    int saved = errno;
    if (close(fd) < 0 && r == ZIP_OK)
        r = system_error(j, it, "Cannot write");
    if (r != ZIP_OK) {
        saved = errno;
        unlinkat(dir, leaf, 0); /* no half-written files */
    }
    errno = saved;
    return r;
}

static enum zip_result unpack(struct zip_job *j)
{
    for (size_t i = 0; i < j->n; i++) {
        struct zip_item *it = &j->items[i];
        if (!it->path[0])
            continue;
        int dir;
        char *leaf;
        enum zip_result r = open_parent(j, it, &dir, &leaf);
        if (r != ZIP_OK)
            return r;
        if (it->dir) {
            int fd;
            r = open_dir(j, it, dir, leaf, &fd);
            if (r == ZIP_OK)
                close(fd);
        } else {
            r = unpack_file(j, it, dir, leaf);
        }
        int saved = errno;
        if (dir != j->root)
            close(dir);
        errno = saved;
        if (r != ZIP_OK)
            return r;
    }
    return ZIP_OK;
}

enum zip_result zip_extract(int zip_fd, int dest_dirfd, const struct zip_limits *lim,
                            struct buf *err)
{
    struct zip_job *j = calloc(1, sizeof *j);
    struct stat st;
    if (!j) {
        buf_printf(err, "Cannot read the archive: out of memory");
        errno = ENOMEM;
        return ZIP_SYSTEM;
    }
    j->fd = zip_fd;
    j->root = dest_dirfd;
    j->err = err;
    enum zip_result r;
    if (fstat(zip_fd, &st) < 0)
        r = system_error(j, NULL, "Cannot read the archive");
    else {
        j->size = (uint64_t)st.st_size;
        r = find_directory(j);
    }
    if (r == ZIP_OK)
        r = read_directory(j, lim);
    if (r == ZIP_OK)
        r = unpack(j);
    int saved = errno;
    for (size_t i = 0; i < j->n; i++)
        free(j->items[i].path);
    free(j->items);
    free(j->cd);
    free(j);
    errno = saved;
    return r;
}
