#include "multipart.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

static bool is_lws(char c)
{
    return c == ' ' || c == '\t';
}

static const char *skip_lws(const char *p)
{
    while (is_lws(*p))
        p++;
    return p;
}

/* RFC 7230 token characters. */
static bool is_tchar(char c)
{
    return c > 0x20 && c < 0x7f && !strchr("\"(),/:;<=>?@[\\]{}", c);
}

/* One `; key=value` parameter from *p (a NUL-terminated header value after its first item).
 * value is a token or a quoted string (backslash escapes). Returns 1 with key and value, 0 at
 * the end, -1 on a syntax error. */
static int param_next(const char **p, struct buf *key, struct buf *value)
{
    const char *s = skip_lws(*p);
    buf_reset(key);
    buf_reset(value);
    if (!*s)
        return 0;
    if (*s != ';')
        return -1;
    s = skip_lws(s + 1);
    if (!*s) /* a trailing ';' */
        return *p = s, 0;
    const char *k = s;
    while (is_tchar(*s) && *s != '=')
        s++;
    if (s == k || buf_append(key, k, (size_t)(s - k)) < 0)
        return -1;
    s = skip_lws(s);
    if (*s != '=')
        return -1;
    s = skip_lws(s + 1);
    if (*s == '"') {
        for (s++; *s != '"'; s++) {
            if (!*s)
                return -1;
            if (*s == '\\' && s[1])
                s++;
            if (buf_append(value, s, 1) < 0)
                return -1;
        }
        s++;
    } else {
        const char *v = s;
        while (is_tchar(*s))
            s++;
        if (buf_append(value, v, (size_t)(s - v)) < 0)
            return -1;
    }
    if (!value->data && buf_append(value, "", 0) < 0)
        return -1;
    *p = s;
    return 1;
}

/* Case-insensitive match of the first item of a header value; returns what follows it. */
static const char *value_starts(const char *v, const char *word)
{
    size_t n = strlen(word);
    v = skip_lws(v);
    if (strncasecmp(v, word, n) != 0)
        return NULL;
    v += n;
    return *v == ';' || is_lws(*v) || !*v ? v : NULL;
}

int multipart_boundary(const char *content_type, char *out, size_t outlen)
{
    const char *p = content_type ? value_starts(content_type, "multipart/form-data") : NULL;
    struct buf key = BUF_INIT, value = BUF_INIT;
    int rc = -1, r;
    if (!p)
        return -1;
    while ((r = param_next(&p, &key, &value)) > 0) {
        if (strcasecmp(key.data, "boundary") != 0)
            continue;
        if (value.len >= 1 && value.len <= MULTIPART_BOUNDARY_MAX && value.len < outlen &&
            !strpbrk(value.data, "\r\n") && strlen(value.data) == value.len) {
            memcpy(out, value.data, value.len + 1);
            rc = 0;
        }
        break;
    }
    buf_free(&key);
    buf_free(&value);
    return rc;
}

void multipart_init(struct multipart *mp, const char *boundary, const struct multipart_handler *h)
{
    memset(mp, 0, sizeof *mp);
    mp->h = *h;
    size_t bl = strlen(boundary);
    if (bl > MULTIPART_BOUNDARY_MAX)
        bl = MULTIPART_BOUNDARY_MAX;
    memcpy(mp->delim, "\r\n--", 4);
    memcpy(mp->delim + 4, boundary, bl);
    mp->delim_len = 4 + bl;
    mp->delim[mp->delim_len] = '\0';
    /* KMP: fail[m] = length of the longest proper prefix of delim[0..m) that is also its
     * suffix, so a failed partial match falls back without re-reading input. */
    mp->fail[0] = mp->fail[1] = 0;
    for (size_t m = 2, k = 0; m <= mp->delim_len; m++) {
        while (k > 0 && mp->delim[k] != mp->delim[m - 1])
            k = mp->fail[k];
        if (mp->delim[k] == mp->delim[m - 1])
            k++;
        mp->fail[m] = k;
    }
    /* The body may begin with the delimiter without its CRLF: start as if one was read. */
    mp->state = MULTIPART_PREAMBLE;
    mp->match = 2;
}

static int emit(struct multipart *mp, const char *data, size_t n)
{
    if (n == 0 || mp->state == MULTIPART_PREAMBLE)
        return 0; /* the preamble is ignored */
    return mp->h.data(mp->h.ctx, data, n);
}

/* Scans for the delimiter, passing the bytes before it on. Returns the bytes consumed: all of
 * them, or up to and including a delimiter (then mp->match == delim_len). -1: a handler
 * failed. Bytes that matched part of the delimiter are held (only as mp->match) until the
 * match fails; they are then known to be delim[0..k) and are passed on from there. */
static ssize_t scan(struct multipart *mp, const char *p, size_t n)
{
    size_t pend = 0; /* start of bytes of p not yet passed on */
    bool have_pend = false;
    size_t i = 0;
    while (i < n) {
        char c = p[i];
        while (mp->match > 0 && mp->delim[mp->match] != c) {
            size_t k = mp->fail[mp->match];
            if (emit(mp, mp->delim, mp->match - k) != 0)
                return -1;
            mp->match = k;
        }
        if (mp->delim[mp->match] == c) {
            if (mp->match == 0 && have_pend) {
                if (emit(mp, p + pend, i - pend) != 0)
                    return -1;
                have_pend = false;
            }
            if (++mp->match == mp->delim_len)
                return (ssize_t)(i + 1);
            i++;
            continue;
        }
        if (!have_pend) {
            pend = i;
            have_pend = true;
        }
        /* Nothing matches until the next CR (delim[0]). */
        const char *cr = memchr(p + i + 1, '\r', n - i - 1);
        i = cr ? (size_t)(cr - p) : n;
    }
    if (have_pend && emit(mp, p + pend, n - pend) != 0)
        return -1;
    return (ssize_t)n;
}

static void strip_crlf_end(struct buf *b)
{
    while (b->len && (b->data[b->len - 1] == '\n' || b->data[b->len - 1] == '\r'))
        b->data[--b->len] = '\0';
}

/* RFC 5987 ext-value: charset'language'percent-encoded. UTF-8 and ASCII only. */
static int decode_ext_value(const char *v, struct buf *out)
{
    const char *q1 = strchr(v, '\''), *q2 = q1 ? strchr(q1 + 1, '\'') : NULL;
    if (!q2)
        return -1;
    size_t cl = (size_t)(q1 - v);
    if (!((cl == 5 && strncasecmp(v, "utf-8", 5) == 0) ||
          (cl == 8 && strncasecmp(v, "us-ascii", 8) == 0)))
        return -1;
    buf_reset(out);
    for (const char *s = q2 + 1; *s; s++) {
        char c = *s;
        if (c == '%' && isxdigit((unsigned char)s[1]) && isxdigit((unsigned char)s[2])) {
            char hex[3] = {s[1], s[2], 0};
            c = (char)strtol(hex, NULL, 16);
            s += 2;
        }
        if (buf_append(out, &c, 1) < 0)
            return -1;
    }
    return buf_append(out, "", 0);
}

/* Field name and file name from a part's header block (lines joined by CRLF). */
static int parse_headers(struct multipart *mp, char **name, char **filename, struct buf *err)
{
    struct buf key = BUF_INIT, value = BUF_INIT, ext = BUF_INIT, plain = BUF_INIT;
    bool have_plain = false, have_ext = false;
    int rc = 0;
    *name = *filename = NULL;
    char *save = NULL;
    for (char *line = strtok_r(mp->headers.data, "\r\n", &save); line;
         line = strtok_r(NULL, "\r\n", &save)) {
        char *colon = strchr(line, ':');
        if (!colon) {
            buf_printf(err, "malformed part header line");
            rc = -1;
            break;
        }
        *colon = '\0';
        if (strcasecmp(line, "Content-Disposition") != 0)
            continue;
        const char *p = value_starts(colon + 1, "form-data");
        if (!p)
            continue;
        int r;
        while ((r = param_next(&p, &key, &value)) > 0) {
            if (strcasecmp(key.data, "name") == 0) {
                free(*name);
                *name = strdup(value.data);
            } else if (strcasecmp(key.data, "filename") == 0) {
                have_plain = buf_append(&plain, value.data, value.len) == 0;
            } else if (strcasecmp(key.data, "filename*") == 0) {
                have_ext = decode_ext_value(value.data, &ext) == 0;
            }
        }
        if (r < 0) {
            buf_printf(err, "malformed Content-Disposition header");
            rc = -1;
            break;
        }
    }
    if (rc == 0 && (have_ext || have_plain)) {
        struct buf *f = have_ext ? &ext : &plain;
        *filename = f->data ? strdup(f->data) : strdup("");
        if (!*filename)
            rc = -1;
    }
    if (rc == 0 && !*name)
        *name = strdup("");
    if (rc == 0 && !*name)
        rc = -1;
    if (rc < 0 && !err->len)
        buf_printf(err, "out of memory");
    buf_free(&key);
    buf_free(&value);
    buf_free(&ext);
    buf_free(&plain);
    return rc;
}

static int begin_part(struct multipart *mp, struct buf *err)
{
    char *name, *filename;
    strip_crlf_end(&mp->headers);
    if (parse_headers(mp, &name, &filename, err) < 0) {
        free(name);
        free(filename);
        return -1;
    }
    buf_reset(&mp->headers);
    mp->in_part = true;
    int rc = mp->h.begin(mp->h.ctx, name, filename);
    free(name);
    free(filename);
    return rc != 0 ? -1 : 0;
}

/* After a delimiter: "--" (the end), or optional padding then CRLF (a part follows). */
static ssize_t after_delimiter(struct multipart *mp, const char *p, size_t n, struct buf *err)
{
    size_t i = 0;
    for (; i < n; i++) {
        char c = p[i];
        switch (mp->after) {
        case 0: /* first byte */
            if (c == '-') {
                mp->after = 1;
                continue;
            }
            mp->after = 2;
            __attribute__((fallthrough));
        case 2: /* padding, then CR */
            if (is_lws(c))
                continue;
            if (c == '\r') {
                mp->after = 3;
                continue;
            }
            buf_printf(err, "expected CRLF after a boundary");
            return -1;
        case 1: /* second '-' */
            if (c != '-') {
                buf_printf(err, "expected CRLF after a boundary");
                return -1;
            }
            mp->state = MULTIPART_DONE;
            return (ssize_t)n; /* the epilogue is ignored */
        case 3:                /* LF */
            if (c != '\n') {
                buf_printf(err, "expected CRLF after a boundary");
                return -1;
            }
            mp->after = 0;
            mp->state = MULTIPART_HEADERS;
            return (ssize_t)(i + 1);
        }
    }
    return (ssize_t)n;
}

/* Collects the header block up to the empty line. */
static ssize_t headers(struct multipart *mp, const char *p, size_t n, struct buf *err)
{
    for (size_t i = 0; i < n; i++) {
        if (mp->headers.len >= MULTIPART_HEADERS_MAX) {
            buf_printf(err, "part headers longer than %d bytes", MULTIPART_HEADERS_MAX);
            return -1;
        }
        if (buf_append(&mp->headers, p + i, 1) < 0) {
            buf_printf(err, "out of memory");
            return -1;
        }
        const char *h = mp->headers.data;
        size_t hl = mp->headers.len;
        bool blank_first = hl == 2 && memcmp(h, "\r\n", 2) == 0;
        if (blank_first || (hl >= 4 && memcmp(h + hl - 4, "\r\n\r\n", 4) == 0)) {
            if (begin_part(mp, err) < 0)
                return -1;
            mp->state = MULTIPART_DATA;
            mp->match = 0;
            return (ssize_t)(i + 1);
        }
    }
    return (ssize_t)n;
}

int multipart_feed(struct multipart *mp, const char *data, size_t n, struct buf *err)
{
    while (n > 0) {
        ssize_t used = 0;
        switch (mp->state) {
        case MULTIPART_PREAMBLE:
        case MULTIPART_DATA:
            used = scan(mp, data, n);
            if (used >= 0 && mp->match == mp->delim_len) {
                mp->match = 0;
                if (mp->state == MULTIPART_DATA && mp->h.end(mp->h.ctx) != 0)
                    return -1;
                mp->in_part = false;
                mp->state = MULTIPART_AFTER_DELIMITER;
                mp->after = 0;
            }
            break;
        case MULTIPART_AFTER_DELIMITER:
            used = after_delimiter(mp, data, n, err);
            break;
        case MULTIPART_HEADERS:
            used = headers(mp, data, n, err);
            break;
        case MULTIPART_DONE:
            return 0;
        }
        if (used < 0)
            return -1;
        data += used;
        n -= (size_t)used;
    }
    return 0;
}

bool multipart_complete(const struct multipart *mp)
{
    return mp->state == MULTIPART_DONE;
}

void multipart_free(struct multipart *mp)
{
    buf_free(&mp->headers);
}
