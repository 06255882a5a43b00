/* The Logs view's buffer: a ring of lines bounded by count and bytes. Following a chatty
 * container for hours must not grow the dashboard: the oldest lines go and are counted. */
#include "ui/logbuf.h"

#include <stdlib.h>
#include <string.h>

int logbuf_init(struct logbuf *b, size_t max_lines, size_t max_bytes)
{
    memset(b, 0, sizeof(*b));
    b->cap = max_lines ? max_lines : 1;
    b->max_bytes = max_bytes ? max_bytes : 1;
    b->ring = calloc(b->cap, sizeof(*b->ring));
    return b->ring ? 0 : -1;
}

static void logbuf_drop_oldest(struct logbuf *b)
{
    struct logbuf_line *l = &b->ring[b->head];
    b->bytes -= l->len;
    free(l->text);
    l->text = NULL;
    b->head = (b->head + 1) % b->cap;
    b->count--;
    b->dropped++;
}

void logbuf_clear(struct logbuf *b)
{
    while (b->count)
        logbuf_drop_oldest(b);
    b->dropped = 0;
    b->total = 0;
    for (int i = 0; i < 3; i++) {
        free(b->partial[i]);
        b->partial[i] = NULL;
        b->partial_len[i] = 0;
    }
}

void logbuf_free(struct logbuf *b)
{
    if (!b->ring)
        return;
    logbuf_clear(b);
    free(b->ring);
    b->ring = NULL;
}

static void logbuf_push(struct logbuf *b, char *text, size_t len, double at, int fd)
{
    while (b->count && (b->count == b->cap || b->bytes + len > b->max_bytes))
        logbuf_drop_oldest(b);
    struct logbuf_line *l = &b->ring[(b->head + b->count) % b->cap];
    *l = (struct logbuf_line){.text = text, .len = len, .at = at, .fd = fd};
    b->count++;
    b->bytes += len;
    b->total++;
}

/* Complete a line: the partial text of fd plus p[0..n). */
static void logbuf_finish(struct logbuf *b, int fd, const char *p, size_t n, double at)
{
    size_t have = b->partial_len[fd];
    if (n && p[n - 1] == '\r')
        n--;
    else if (!n && have && b->partial[fd][have - 1] == '\r')
        have--;
    char *t = malloc(have + n + 1);
    if (!t)
        return; /* out of memory: the line is lost, the buffer stays consistent */
    if (have)
        memcpy(t, b->partial[fd], have);
    memcpy(t + have, p, n);
    t[have + n] = '\0';
    free(b->partial[fd]);
    b->partial[fd] = NULL;
    b->partial_len[fd] = 0;
    logbuf_push(b, t, have + n, at, fd);
}

size_t logbuf_append(struct logbuf *b, int fd, const char *data, size_t len, double at)
{
    if (fd < 0 || fd > 2)
        fd = 1;
    size_t cut = b->max_bytes / 4 ? b->max_bytes / 4 : 1;
    size_t lines = 0;
    while (len) {
        const char *nl = memchr(data, '\n', len);
        size_t n = nl ? (size_t)(nl - data) : len;
        size_t have = b->partial_len[fd];
        if (have + n >= cut) {
            /* An endless line (no newline in megabytes): cut it, so memory stays bounded. */
            size_t take = cut - have;
            logbuf_finish(b, fd, data, take, at);
            lines++;
            data += take;
            len -= take;
            continue;
        }
        if (nl) {
            logbuf_finish(b, fd, data, n, at);
            lines++;
            data += n + 1;
            len -= n + 1;
        } else {
            char *p = realloc(b->partial[fd], have + n);
            if (!p)
                return lines;
            memcpy(p + have, data, n);
            b->partial[fd] = p;
            b->partial_len[fd] = have + n;
            len = 0;
        }
    }
    return lines;
}

const struct logbuf_line *logbuf_get(const struct logbuf *b, size_t i)
{
    return i < b->count ? &b->ring[(b->head + i) % b->cap] : NULL;
}

static unsigned char logbuf_lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

size_t logbuf_matches(const char *text, size_t len, const char *needle, size_t *starts, size_t max)
{
    size_t nl = needle ? strlen(needle) : 0, found = 0;
    if (!nl || nl > len)
        return 0;
    for (size_t i = 0; i + nl <= len && found < max;) {
        size_t k = 0;
        while (k < nl &&
               logbuf_lower((unsigned char)text[i + k]) == logbuf_lower((unsigned char)needle[k]))
            k++;
        if (k == nl) {
            starts[found++] = i;
            i += nl;
        } else {
            i++;
        }
    }
    return found;
}

long logbuf_find(const struct logbuf *b, const char *needle, size_t from, int dir)
{
    if (!b->count || !needle || !*needle)
        return -1;
    size_t start = from < b->count ? from : b->count - 1;
    for (size_t step = 0; step < b->count; step++) {
        size_t i =
            dir >= 0 ? (start + step) % b->count : (start + b->count - step % b->count) % b->count;
        const struct logbuf_line *l = logbuf_get(b, i);
        size_t pos;
        if (logbuf_matches(l->text, l->len, needle, &pos, 1))
            return (long)i;
    }
    return -1;
}
