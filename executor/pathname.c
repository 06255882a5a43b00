#include "pathname.h"

#include <string.h>

int pathname_normalize(struct buf *out, const char *path)
{
    size_t start = out->len;
    size_t n = strlen(path);
    size_t i = 0;
    if (n >= 1 && path[0] == '/') {
        /* POSIX keeps the meaning of exactly two leading slashes open, and so does pathlib. */
        bool two = n >= 2 && path[1] == '/' && (n == 2 || path[2] != '/');
        if (buf_append_str(out, two ? "//" : "/") < 0)
            return -1;
    }
    while (i < n) {
        while (i < n && path[i] == '/')
            i++;
        size_t j = i;
        while (j < n && path[j] != '/')
            j++;
        if (j > i && !(j - i == 1 && path[i] == '.')) {
            bool at_root = out->len == start || out->data[out->len - 1] == '/';
            if ((!at_root && buf_append(out, "/", 1) < 0) || buf_append(out, path + i, j - i) < 0)
                return -1;
        }
        i = j;
    }
    if (out->len == start)
        return buf_append(out, ".", 1);
    return 0;
}

bool pathname_is_absolute(const char *path)
{
    return path[0] == '/';
}

int pathname_join(struct buf *out, const char *base, const char *path)
{
    if (pathname_is_absolute(path))
        return pathname_normalize(out, path);
    struct buf joined = BUF_INIT;
    int rc = -1;
    if (buf_append_str(&joined, base) == 0 && buf_append(&joined, "/", 1) == 0 &&
        buf_append_str(&joined, path) == 0)
        rc = pathname_normalize(out, joined.data);
    buf_free(&joined);
    return rc;
}

const char *pathname_suffix(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    const char *dot = strrchr(name, '.');
    size_t len = strlen(name);
    if (!dot || dot == name || (size_t)(dot - name) >= len - 1)
        return path + strlen(path);
    return dot;
}

int pathname_dirname(struct buf *out, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return buf_append(out, "", 0);
    size_t n = (size_t)(slash - path);
    /* Keep the root's slashes ("/a" -> "/"). */
    while (n > 0 && path[n - 1] == '/')
        n--;
    if (n == 0)
        return buf_append(out, path, (size_t)(slash - path) + 1);
    return buf_append(out, path, n);
}
