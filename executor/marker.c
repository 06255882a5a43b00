#include "marker.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int marker_parser_init(struct marker_parser *p, const char *begin, const char *end)
{
    size_t bl = strlen(begin), el = strlen(end);
    memset(p, 0, sizeof *p);
    if (bl == 0 || el == 0 || bl >= MARKER_TAG_MAX || el >= MARKER_TAG_MAX)
        return -1;
    memcpy(p->begin, begin, bl + 1);
    memcpy(p->end, end, el + 1);
    p->begin_len = bl;
    p->end_len = el;
    return 0;
}

void marker_parser_free(struct marker_parser *p)
{
    buf_free(&p->pending);
    p->in_body = false;
}

/* Parses a whole decimal number (optional sign) from s[0..n). */
static int parse_long(const char *s, size_t n, long *out)
{
    char tmp[32];
    if (n == 0 || n >= sizeof tmp)
        return -1;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    char *end;
    errno = 0;
    long v = strtol(tmp, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

/* Copies s[0..n) into out (size outlen), cut to fit. */
static void copy_cut(char *out, size_t outlen, const char *s, size_t n)
{
    if (n >= outlen)
        n = outlen - 1;
    memcpy(out, s, n);
    out[n] = '\0';
}

void marker_info_copy(struct marker_info *dst, const struct marker_info *src)
{
    dst->exit_code = src->exit_code;
    dst->pid = src->pid;
    dst->uid = src->uid;
    dst->stdin_tty = src->stdin_tty;
    dst->shell_pid = src->shell_pid;
    memcpy(dst->hostname, src->hostname, strnlen(src->hostname, sizeof src->hostname - 1) + 1);
    memcpy(dst->path, src->path, strnlen(src->path, sizeof src->path - 1) + 1);
    memcpy(dst->cwd, src->cwd, strnlen(src->cwd, sizeof src->cwd - 1) + 1);
}

int marker_parse_body(const char *body, size_t n, struct marker_info *out)
{
    const char *field[5];
    size_t flen[5];
    const char *p = body, *stop = body + n;
    for (int i = 0; i < 5; i++) {
        const char *semi = memchr(p, ';', (size_t)(stop - p));
        if (!semi)
            return -1;
        field[i] = p;
        flen[i] = (size_t)(semi - p);
        p = semi + 1;
    }
    const char *sep1 = memchr(p, MARKER_SEP, (size_t)(stop - p));
    const char *sep2 = sep1 ? memchr(sep1 + 1, MARKER_SEP, (size_t)(stop - sep1 - 1)) : NULL;
    if (!sep2)
        return -1;
    long rc, pid = -1, uid, tty, shell_pid;
    if (parse_long(field[0], flen[0], &rc) < 0 || parse_long(field[2], flen[2], &uid) < 0 ||
        parse_long(field[3], flen[3], &tty) < 0 || parse_long(field[4], flen[4], &shell_pid) < 0)
        return -1;
    /* $! is empty until something was put in the background. */
    if (flen[1] && parse_long(field[1], flen[1], &pid) < 0)
        return -1;
    out->exit_code = (int)rc;
    out->pid = pid;
    out->uid = uid;
    out->stdin_tty = tty != 0;
    out->shell_pid = shell_pid;
    copy_cut(out->hostname, sizeof out->hostname, p, (size_t)(sep1 - p));
    copy_cut(out->path, sizeof out->path, sep1 + 1, (size_t)(sep2 - sep1 - 1));
    copy_cut(out->cwd, sizeof out->cwd, sep2 + 1, (size_t)(stop - sep2 - 1));
    return 0;
}

static void emit(const struct marker_sink *sink, const char *data, size_t n)
{
    if (n)
        sink->output(sink->ctx, data, n);
}

/* Length of the longest proper prefix of tag that data ends with. */
static size_t partial_suffix(const char *data, size_t n, const char *tag, size_t tag_len)
{
    size_t k = tag_len - 1 < n ? tag_len - 1 : n;
    for (; k > 0; k--)
        if (memcmp(data + n - k, tag, k) == 0)
            return k;
    return 0;
}

int marker_feed(struct marker_parser *p, const char *data, size_t n, const struct marker_sink *sink)
{
    /* own holds input the parser had to take out of p->pending; data may point into it. */
    struct buf own = BUF_INIT;
    int rc = 0;
    if (!p->in_body && p->pending.len) {
        if (buf_append(&own, p->pending.data, p->pending.len) < 0 ||
            buf_append(&own, data, n) < 0) {
            rc = -1;
            goto out;
        }
        buf_reset(&p->pending);
        data = own.data;
        n = own.len;
    }
    while (n > 0) {
        if (!p->in_body) {
            const char *hit = memmem(data, n, p->begin, p->begin_len);
            if (hit) {
                emit(sink, data, (size_t)(hit - data));
                n -= (size_t)(hit - data) + p->begin_len;
                data = hit + p->begin_len;
                p->in_body = true;
                continue;
            }
            size_t k = partial_suffix(data, n, p->begin, p->begin_len);
            emit(sink, data, n - k);
            if (k && buf_append(&p->pending, data + n - k, k) < 0)
                rc = -1;
            goto out;
        }
        size_t old = p->pending.len;
        if (buf_append(&p->pending, data, n) < 0) {
            rc = -1;
            goto out;
        }
        size_t from = old >= p->end_len - 1 ? old - (p->end_len - 1) : 0;
        const char *body = p->pending.data;
        const char *hit = memmem(body + from, p->pending.len - from, p->end, p->end_len);
        if (!hit) {
            if (p->pending.len <= MARKER_BODY_MAX + p->end_len)
                goto out;
            /* Too long to be a marker: it was output after all; rescan it as such. */
            emit(sink, p->begin, p->begin_len);
            p->in_body = false;
        } else {
            size_t blen = (size_t)(hit - body);
            p->in_body = false;
            if (marker_parse_body(body, blen, &p->info) == 0) {
                sink->found(sink->ctx, &p->info);
                /* Keep only what follows the marker. */
                size_t used = blen + p->end_len;
                memmove(p->pending.data, p->pending.data + used, p->pending.len - used);
                p->pending.len -= used;
            } else {
                /* Not a well-formed body: the begin tag was output; rescan the rest. */
                emit(sink, p->begin, p->begin_len);
            }
        }
        buf_free(&own);
        own = p->pending;
        p->pending = (struct buf)BUF_INIT;
        data = own.data;
        n = own.len;
    }
out:
    buf_free(&own);
    return rc;
}

void marker_flush(struct marker_parser *p, const struct marker_sink *sink)
{
    if (p->in_body)
        emit(sink, p->begin, p->begin_len);
    emit(sink, p->pending.data, p->pending.len);
    buf_reset(&p->pending);
    p->in_body = false;
}
