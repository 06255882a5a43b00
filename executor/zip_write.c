#include "zip_write.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "common/utf8.h"
#include "zip.h"

#define ZIP_WRITE_CHUNK 65536
#define ZIP_VERSION_DEFAULT 20 /* 2.0: deflate, directories */
#define ZIP_VERSION_ZIP64 45   /* 4.5: Zip64 */
#define ZIP_MAX32 0xffffffffu
#define ZIP_MAX16 0xffffu
/* Deflate grows incompressible data by at most 5 bytes per 16 KiB block (zlib's
 * deflateBound): 64 MiB of margin covers files up to the threshold. */
#define ZIP_DEFAULT_ZIP64_THRESHOLD (0xffffffffull - 64ull * 1024 * 1024)

struct zip_entry {
    char *name;
    uint16_t flags, method, version, time, date;
    uint32_t crc, attrs;
    uint64_t csize, usize, offset;
};

struct zip_writer {
    zip_sink_fn sink;
    void *ctx;
    int level;
    uint64_t offset; /* bytes written so far */
    uint64_t zip64_threshold;
    struct zip_entry *entries;
    size_t n, cap;
    z_stream z;
    bool z_ready;
    unsigned char in[ZIP_WRITE_CHUNK];
    unsigned char out[ZIP_WRITE_CHUNK];
};

static int emit(struct zip_writer *zw, const void *data, size_t n)
{
    if (n == 0)
        return 0;
    if (zw->sink(zw->ctx, data, n) < 0)
        return -1;
    zw->offset += n;
    return 0;
}

/* MS-DOS date and time (local time, 2-second steps, 1980 to 2107). */
static void dos_datetime(time_t t, uint16_t *time_out, uint16_t *date_out)
{
    struct tm tm;
    if (!localtime_r(&t, &tm) || tm.tm_year < 80) {
        *date_out = 1 << 5 | 1; /* 1980-01-01 */
        *time_out = 0;
        return;
    }
    if (tm.tm_year > 207)
        tm = (struct tm){
            .tm_year = 207, .tm_mon = 11, .tm_mday = 31, .tm_hour = 23, .tm_min = 59, .tm_sec = 58};
    *date_out = (uint16_t)((tm.tm_year - 80) << 9 | (tm.tm_mon + 1) << 5 | tm.tm_mday);
    *time_out = (uint16_t)(tm.tm_hour << 11 | tm.tm_min << 5 | tm.tm_sec / 2);
}

struct zip_writer *zip_writer_new(zip_sink_fn sink, void *ctx, int level)
{
    struct zip_writer *zw = calloc(1, sizeof *zw);
    if (!zw)
        return NULL;
    zw->sink = sink;
    zw->ctx = ctx;
    zw->level = level < -1 || level > 9 ? Z_DEFAULT_COMPRESSION : level;
    zw->zip64_threshold = ZIP_DEFAULT_ZIP64_THRESHOLD;
    return zw;
}

void zip_writer_set_zip64_threshold(struct zip_writer *zw, uint64_t bytes)
{
    zw->zip64_threshold = bytes;
}

/* A new entry in the list, filled from the arguments; NULL with errno. */
static struct zip_entry *entry_new(struct zip_writer *zw, const char *name, time_t mtime,
                                   mode_t mode)
{
    size_t nl = strlen(name);
    if (nl == 0 || nl > ZIP_MAX16) {
        errno = nl ? ENAMETOOLONG : EINVAL;
        return NULL;
    }
    if (zw->n == zw->cap) {
        size_t cap = zw->cap ? zw->cap * 2 : 64;
        struct zip_entry *p = realloc(zw->entries, cap * sizeof *p);
        if (!p)
            return NULL;
        zw->entries = p;
        zw->cap = cap;
    }
    struct zip_entry *e = &zw->entries[zw->n];
    *e = (struct zip_entry){.offset = zw->offset, .version = ZIP_VERSION_DEFAULT};
    e->name = strdup(name);
    if (!e->name)
        return NULL;
    if (utf8_valid(name, nl))
        e->flags |= ZIP_FLAG_UTF8;
    e->attrs = (uint32_t)(mode & 0xffff) << 16 | (S_ISDIR(mode) ? 0x10 : 0);
    dos_datetime(mtime, &e->time, &e->date);
    return e;
}

static int write_local_header(struct zip_writer *zw, const struct zip_entry *e, bool zip64)
{
    unsigned char h[ZIP_LOCAL_SIZE], extra[20], *p = h;
    bool desc = e->flags & ZIP_FLAG_DESCRIPTOR;
    uint32_t size32 = zip64 ? ZIP_MAX32 : desc ? 0 : (uint32_t)e->csize;
    p = zip_put32(p, ZIP_SIG_LOCAL);
    p = zip_put16(p, e->version);
    p = zip_put16(p, e->flags);
    p = zip_put16(p, e->method);
    p = zip_put16(p, e->time);
    p = zip_put16(p, e->date);
    p = zip_put32(p, desc ? 0 : e->crc);
    p = zip_put32(p, size32);
    p = zip_put32(p, zip64 ? ZIP_MAX32 : desc ? 0 : (uint32_t)e->usize);
    p = zip_put16(p, (uint16_t)strlen(e->name));
    zip_put16(p, zip64 ? sizeof extra : 0);
    if (zip64) {
        /* Sizes follow in the data descriptor; these are placeholders (as Python writes). */
        unsigned char *q = zip_put16(extra, ZIP_EXTRA_ZIP64);
        q = zip_put16(q, 16);
        q = zip_put64(q, 0);
        zip_put64(q, 0);
    }
    if (emit(zw, h, sizeof h) < 0 || emit(zw, e->name, strlen(e->name)) < 0)
        return -1;
    return zip64 ? emit(zw, extra, sizeof extra) : 0;
}

int zip_writer_add_dir(struct zip_writer *zw, const char *name, time_t mtime, mode_t mode)
{
    struct zip_entry *e = entry_new(zw, name, mtime, mode);
    if (!e)
        return -1;
    e->method = ZIP_METHOD_STORED; /* no data: crc and sizes are 0 and known */
    if (write_local_header(zw, e, false) < 0) {
        free(e->name);
        return -1;
    }
    zw->n++;
    return 0;
}

static ssize_t read_some(int fd, void *buf, size_t n)
{
    for (;;) {
        ssize_t r = read(fd, buf, n);
        if (r >= 0 || errno != EINTR)
            return r;
    }
}

/* Deflates up to max_size bytes of fd into the sink; fills crc and sizes. */
static int deflate_fd(struct zip_writer *zw, struct zip_entry *e, int fd, uint64_t max_size)
{
    if (!zw->z_ready) {
        if (deflateInit2(&zw->z, zw->level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
            errno = ENOMEM;
            return -1;
        }
        zw->z_ready = true;
    } else if (deflateReset(&zw->z) != Z_OK) {
        errno = EINVAL;
        return -1;
    }
    uLong crc = crc32(0, Z_NULL, 0);
    uint64_t left = max_size;
    int flush = Z_NO_FLUSH;
    while (flush != Z_FINISH) {
        size_t want = left < sizeof zw->in ? (size_t)left : sizeof zw->in;
        ssize_t n = want ? read_some(fd, zw->in, want) : 0;
        if (n < 0)
            return -1;
        left -= (uint64_t)n;
        if (n == 0 || left == 0)
            flush = Z_FINISH;
        crc = crc32(crc, zw->in, (uInt)n);
        e->usize += (uint64_t)n;
        zw->z.next_in = zw->in;
        zw->z.avail_in = (uInt)n;
        int rc;
        do {
            zw->z.next_out = zw->out;
            zw->z.avail_out = sizeof zw->out;
            rc = deflate(&zw->z, flush);
            if (rc == Z_STREAM_ERROR) {
                errno = EINVAL;
                return -1;
            }
            size_t have = sizeof zw->out - zw->z.avail_out;
            if (emit(zw, zw->out, have) < 0)
                return -1;
            e->csize += have;
        } while (zw->z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
    }
    e->crc = (uint32_t)crc;
    return 0;
}

int zip_writer_add_file(struct zip_writer *zw, const char *name, int fd, uint64_t max_size,
                        time_t mtime, mode_t mode)
{
    struct zip_entry *e = entry_new(zw, name, mtime, mode);
    if (!e)
        return -1;
    bool zip64 = max_size >= zw->zip64_threshold;
    e->method = ZIP_METHOD_DEFLATE;
    e->flags |= ZIP_FLAG_DESCRIPTOR;
    if (zip64)
        e->version = ZIP_VERSION_ZIP64;
    unsigned char d[24], *p = d;
    if (write_local_header(zw, e, zip64) < 0 || deflate_fd(zw, e, fd, max_size) < 0)
        goto fail;
    p = zip_put32(p, ZIP_SIG_DESCRIPTOR);
    p = zip_put32(p, e->crc);
    if (zip64) {
        p = zip_put64(p, e->csize);
        p = zip_put64(p, e->usize);
    } else {
        p = zip_put32(p, (uint32_t)e->csize);
        p = zip_put32(p, (uint32_t)e->usize);
    }
    if (emit(zw, d, (size_t)(p - d)) < 0)
        goto fail;
    zw->n++;
    return 0;
fail:;
    int saved = errno;
    free(e->name);
    errno = saved;
    return -1;
}

static int write_central(struct zip_writer *zw, const struct zip_entry *e)
{
    unsigned char h[ZIP_CENTRAL_SIZE], extra[4 + 24], *p = h, *x = extra + 4;
    bool big_u = e->usize >= ZIP_MAX32, big_c = e->csize >= ZIP_MAX32,
         big_o = e->offset >= ZIP_MAX32;
    /* Zip64 extra: only the fields whose 32-bit slot holds 0xffffffff, in this order. */
    if (big_u)
        x = zip_put64(x, e->usize);
    if (big_c)
        x = zip_put64(x, e->csize);
    if (big_o)
        x = zip_put64(x, e->offset);
    size_t extra_len = x == extra + 4 ? 0 : (size_t)(x - extra);
    if (extra_len) {
        zip_put16(extra, ZIP_EXTRA_ZIP64);
        zip_put16(extra + 2, (uint16_t)(extra_len - 4));
    }
    uint16_t version = extra_len ? ZIP_VERSION_ZIP64 : e->version;
    p = zip_put32(p, ZIP_SIG_CENTRAL);
    p = zip_put16(p, (uint16_t)(ZIP_HOST_UNIX << 8 | version));
    p = zip_put16(p, version);
    p = zip_put16(p, e->flags);
    p = zip_put16(p, e->method);
    p = zip_put16(p, e->time);
    p = zip_put16(p, e->date);
    p = zip_put32(p, e->crc);
    p = zip_put32(p, big_c ? ZIP_MAX32 : (uint32_t)e->csize);
    p = zip_put32(p, big_u ? ZIP_MAX32 : (uint32_t)e->usize);
    p = zip_put16(p, (uint16_t)strlen(e->name));
    p = zip_put16(p, (uint16_t)extra_len);
    p = zip_put16(p, 0); /* comment */
    p = zip_put16(p, 0); /* disk */
    p = zip_put16(p, 0); /* internal attributes */
    p = zip_put32(p, e->attrs);
    zip_put32(p, big_o ? ZIP_MAX32 : (uint32_t)e->offset);
    if (emit(zw, h, sizeof h) < 0 || emit(zw, e->name, strlen(e->name)) < 0)
        return -1;
    return emit(zw, extra, extra_len);
}

int zip_writer_finish(struct zip_writer *zw)
{
    uint64_t cd_offset = zw->offset;
    for (size_t i = 0; i < zw->n; i++)
        if (write_central(zw, &zw->entries[i]) < 0)
            return -1;
    uint64_t cd_size = zw->offset - cd_offset, n = zw->n;
    if (n >= ZIP_MAX16 || cd_size >= ZIP_MAX32 || cd_offset >= ZIP_MAX32) {
        unsigned char r[ZIP_END64_SIZE + ZIP_END64_LOCATOR_SIZE], *p = r;
        uint64_t end64_offset = zw->offset;
        p = zip_put32(p, ZIP_SIG_END64);
        p = zip_put64(p, ZIP_END64_SIZE - 12);
        p = zip_put16(p, ZIP_HOST_UNIX << 8 | ZIP_VERSION_ZIP64);
        p = zip_put16(p, ZIP_VERSION_ZIP64);
        p = zip_put32(p, 0);
        p = zip_put32(p, 0);
        p = zip_put64(p, n);
        p = zip_put64(p, n);
        p = zip_put64(p, cd_size);
        p = zip_put64(p, cd_offset);
        p = zip_put32(p, ZIP_SIG_END64_LOCATOR);
        p = zip_put32(p, 0);
        p = zip_put64(p, end64_offset);
        zip_put32(p, 1);
        if (emit(zw, r, sizeof r) < 0)
            return -1;
    }
    unsigned char end[ZIP_END_SIZE], *p = end;
    uint16_t n16 = n >= ZIP_MAX16 ? ZIP_MAX16 : (uint16_t)n;
    p = zip_put32(p, ZIP_SIG_END);
    p = zip_put16(p, 0);
    p = zip_put16(p, 0);
    p = zip_put16(p, n16);
    p = zip_put16(p, n16);
    p = zip_put32(p, cd_size >= ZIP_MAX32 ? ZIP_MAX32 : (uint32_t)cd_size);
    p = zip_put32(p, cd_offset >= ZIP_MAX32 ? ZIP_MAX32 : (uint32_t)cd_offset);
    zip_put16(p, 0);
    return emit(zw, end, sizeof end);
}

void zip_writer_free(struct zip_writer *zw)
{
    if (!zw)
        return;
    for (size_t i = 0; i < zw->n; i++)
        free(zw->entries[i].name);
    free(zw->entries);
    if (zw->z_ready)
        deflateEnd(&zw->z);
    free(zw);
}
