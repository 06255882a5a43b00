/* ustar (POSIX.1-1988) archives in memory: 512-byte headers, data padded to 512 bytes. */
#include "engine/docker/tar.h"

#include <stdio.h>
#include <string.h>

#define TAR_BLOCK 512
/* 11 octal digits in the size field. */
#define TAR_MAX_SIZE 077777777777ULL

/* Store the name in ustar's name (100) and prefix (155) fields, split at a '/'. */
static int tar_put_name(unsigned char *h, const char *name, const char **err)
{
    size_t n = strlen(name);
    if (n == 0 || name[0] == '/') {
        *err = "tar: empty or absolute name";
        return -1;
    }
    for (const char *p = name; (p = strstr(p, "..")); p += 2)
        if ((p == name || p[-1] == '/') && (p[2] == '\0' || p[2] == '/')) {
            *err = "tar: name with a \"..\" component";
            return -1;
        }
    if (n <= 100) {
        memcpy(h, name, n);
        return 0;
    }
    /* The last '/' that leaves at most 100 bytes after it and 155 before it. */
    for (size_t i = n - 1; i > 0; i--) {
        if (name[i] != '/')
            continue;
        if (n - i - 1 > 100 || n - i - 1 == 0)
            break;
        if (i <= 155) {
            memcpy(h + 345, name, i);
            memcpy(h, name + i + 1, n - i - 1);
            return 0;
        }
    }
    *err = "tar: name too long for ustar";
    return -1;
}

static void tar_put_octal(unsigned char *field, size_t width, unsigned long long v)
{
    char tmp[24];
    snprintf(tmp, sizeof(tmp), "%0*llo", (int)(width - 1), v);
    memcpy(field, tmp, width - 1);
    field[width - 1] = '\0';
}

static int tar_add(struct tar *t, const char *name, char type, const void *data, size_t len,
                   unsigned mode, const char **err)
{
    unsigned char h[TAR_BLOCK] = {0};
    if (tar_put_name(h, name, err) < 0)
        return -1;
    if ((unsigned long long)len > TAR_MAX_SIZE) {
        *err = "tar: file too large for ustar";
        return -1;
    }
    tar_put_octal(h + 100, 8, mode & 07777);
    tar_put_octal(h + 108, 8, 0);
    tar_put_octal(h + 116, 8, 0);
    tar_put_octal(h + 124, 12, len);
    tar_put_octal(h + 136, 12, 0);
    h[156] = (unsigned char)type;
    memcpy(h + 257, "ustar", 6);
    memcpy(h + 263, "00", 2);
    memcpy(h + 265, "root", 4);
    memcpy(h + 297, "root", 4);
    /* The checksum is computed with its own field read as spaces. */
    memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (size_t i = 0; i < TAR_BLOCK; i++)
        sum += h[i];
    snprintf((char *)h + 148, 8, "%06o", sum);
    h[155] = ' ';
    static const unsigned char zeros[TAR_BLOCK];
    size_t pad = (TAR_BLOCK - len % TAR_BLOCK) % TAR_BLOCK;
    size_t before = t->buf.len;
    if (buf_append(&t->buf, h, sizeof(h)) < 0 || (len && buf_append(&t->buf, data, len) < 0) ||
        (pad && buf_append(&t->buf, zeros, pad) < 0)) {
        t->buf.len = before; /* no half entry */
        if (t->buf.data)
            t->buf.data[before] = '\0';
        *err = "tar: out of memory";
        return -1;
    }
    return 0;
}

int tar_add_file(struct tar *t, const char *name, const void *data, size_t len, unsigned mode,
                 const char **err)
{
    return tar_add(t, name, '0', data, len, mode, err);
}

int tar_add_dir(struct tar *t, const char *name, unsigned mode, const char **err)
{
    return tar_add(t, name, '5', NULL, 0, mode, err);
}

int tar_finish(struct tar *t)
{
    static const unsigned char zeros[2 * TAR_BLOCK];
    return buf_append(&t->buf, zeros, sizeof(zeros));
}

void tar_free(struct tar *t)
{
    buf_free(&t->buf);
}
