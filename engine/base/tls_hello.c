/* A TLS ClientHello's server name, read from hostile bytes (tls_hello.h). The layout follows
 * RFC 8446 §4.1.2 (ClientHello), §4.2 (extensions) and §5.1 (records), and RFC 6066 §3
 * (server_name). Where a server would refuse the hello (a second server_name, two host names, a
 * name type nobody defined, a record of another type in the middle) it is refused here too: a
 * hello that this parser and the destination's would read differently must not pass. */
#include "engine/base/tls_hello.h"

#include <stdint.h>
#include <string.h>

#define TLS_RECORD_HEADER 5
#define TLS_RECORD_MAX 16384 /* a record's payload (RFC 8446 §5.1: 2^14) */
#define TLS_CONTENT_FIRST 20 /* change_cipher_spec */
#define TLS_CONTENT_ALERT 21
#define TLS_CONTENT_HANDSHAKE 22
#define TLS_CONTENT_APPLICATION 23
#define TLS_CONTENT_LAST 24 /* heartbeat (RFC 6520) */
#define TLS_HANDSHAKE_CLIENT_HELLO 1
#define TLS_EXT_SERVER_NAME 0
#define TLS_EXT_EARLY_DATA 42
/* A ciphertext record's payload (RFC 5246 §6.2.3: 2^14 + 2048); past it no record makes sense */
#define TLS_RECORD_CIPHER_MAX (16384 + 2048)
#define TLS_NAME_TYPE_HOST 0

/* What is left of a field: every take checks it first. */
struct tls_cur {
    const unsigned char *p;
    size_t n;
};

static bool tls_cur_skip(struct tls_cur *c, size_t k)
{
    if (c->n < k)
        return false;
    c->p += k;
    c->n -= k;
    return true;
}

/* An unsigned number of width bytes (1 or 2), big-endian. */
static bool tls_cur_uint(struct tls_cur *c, size_t width, size_t *v)
{
    if (c->n < width)
        return false;
    *v = 0;
    for (size_t i = 0; i < width; i++)
        *v = *v << 8 | c->p[i];
    return tls_cur_skip(c, width);
}

/* A vector: its length in width bytes, then that many bytes, which *v gets. */
static bool tls_cur_vec(struct tls_cur *c, size_t width, struct tls_cur *v)
{
    size_t n;
    if (!tls_cur_uint(c, width, &n) || c->n < n)
        return false;
    *v = (struct tls_cur){.p = c->p, .n = n};
    return tls_cur_skip(c, n);
}

static enum tls_hello_status tls_hello_bad(struct tls_hello *h, const char *why)
{
    h->why = why;
    return TLS_HELLO_BAD;
}

/* The server_name extension's data: a list of exactly one host_name. */
static enum tls_hello_status tls_hello_server_name(struct tls_cur ext, struct tls_hello *h)
{
    struct tls_cur list;
    if (!tls_cur_vec(&ext, 2, &list) || ext.n)
        return tls_hello_bad(h, "a server_name list whose length disagrees with its extension's");
    if (!list.n)
        return tls_hello_bad(h, "an empty server_name list");
    while (list.n) {
        size_t type;
        struct tls_cur name;
        if (!tls_cur_uint(&list, 1, &type) || !tls_cur_vec(&list, 2, &name))
            return tls_hello_bad(h, "a server name that runs past its list");
        /* No other type was ever defined, and RFC 6066 allows one name per type. */
        if (type != TLS_NAME_TYPE_HOST)
            return tls_hello_bad(h, "a server name of a type other than host_name");
        if (h->has_name)
            return tls_hello_bad(h, "more than one host_name in server_name");
        if (!name.n)
            return tls_hello_bad(h, "an empty host_name");
        if (name.n > TLS_HELLO_NAME_MAX)
            return tls_hello_bad(h, "a host_name longer than 255 bytes");
        if (memchr(name.p, '\0', name.n))
            return tls_hello_bad(h, "a host_name holding a NUL byte");
        memcpy(h->name, name.p, name.n);
        h->name[name.n] = '\0';
        h->has_name = true;
    }
    return TLS_HELLO_DONE;
}

/* The ClientHello's body (after its 4-byte handshake header). */
static enum tls_hello_status tls_hello_body(struct tls_cur c, struct tls_hello *h)
{
    struct tls_cur v, exts;
    if (!tls_cur_skip(&c, 2 + 32)) /* legacy_version, random */
        return tls_hello_bad(h, "a ClientHello shorter than its version and random");
    if (!tls_cur_vec(&c, 1, &v) || v.n > 32)
        return tls_hello_bad(h, "a bad legacy_session_id");
    if (!tls_cur_vec(&c, 2, &v) || v.n < 2 || v.n % 2)
        return tls_hello_bad(h, "a bad cipher_suites list");
    if (!tls_cur_vec(&c, 1, &v) || v.n < 1)
        return tls_hello_bad(h, "a bad compression_methods list");
    if (!c.n)
        return TLS_HELLO_DONE; /* no extensions at all (TLS 1.2 and before): no name */
    if (!tls_cur_vec(&c, 2, &exts) || c.n)
        return tls_hello_bad(h, "an extensions length that disagrees with the ClientHello's");
    bool seen = false;
    while (exts.n) {
        size_t type;
        struct tls_cur ext;
        if (!tls_cur_uint(&exts, 2, &type) || !tls_cur_vec(&exts, 2, &ext))
            return tls_hello_bad(h, "an extension that runs past the ClientHello's end");
        if (type == TLS_EXT_EARLY_DATA)
            h->early_data = true;
        if (type != TLS_EXT_SERVER_NAME)
            continue;
        if (seen)
            return tls_hello_bad(h, "two server_name extensions");
        seen = true;
        if (tls_hello_server_name(ext, h) != TLS_HELLO_DONE)
            return TLS_HELLO_BAD;
    }
    return TLS_HELLO_DONE;
}

enum tls_hello_status tls_hello_parse(const unsigned char *data, size_t len, struct tls_hello *h)
{
    memset(h, 0, sizeof(*h));
    if (len == 0) {
        h->need = 1;
        return TLS_HELLO_MORE;
    }
    /* A TLS record of another type first (change_cipher_spec, alert, application_data,
     * heartbeat) starts no other protocol, and a server may read past it: Go's crypto/tls drops
     * a warning alert before the ClientHello and takes the hello after it, whose name would
     * reach the destination unchecked if this were passed on as no TLS. */
    if (data[0] >= TLS_CONTENT_FIRST && data[0] <= TLS_CONTENT_LAST &&
        data[0] != TLS_CONTENT_HANDSHAKE)
        return tls_hello_bad(h, "a TLS record of another type before the ClientHello");
    if (data[0] != TLS_CONTENT_HANDSHAKE)
        return TLS_HELLO_NOT_TLS;
    /* The handshake message gathered from the records' fragments: have counts every fragment
     * byte (only the first TLS_HELLO_MAX are kept: past them it is refused anyway), want is the
     * message's length with its header once that is known (0 before). */
    unsigned char msg[TLS_HELLO_MAX];
    size_t have = 0, want = 0, pos = 0;
    for (;;) {
        size_t rlen = 0;
        if (len - pos >= TLS_RECORD_HEADER) {
            const unsigned char *r = data + pos;
            if (r[0] != TLS_CONTENT_HANDSHAKE)
                return tls_hello_bad(h, "a record of another type before the ClientHello's end");
            if (r[1] != 3)
                return tls_hello_bad(h, "a record whose version is not TLS's (3.x)");
            rlen = (size_t)r[3] << 8 | r[4];
            if (rlen == 0)
                return tls_hello_bad(h, "an empty handshake record");
            if (rlen > TLS_RECORD_MAX)
                return tls_hello_bad(h, "a record longer than 2^14 bytes");
        }
        if (!rlen || len - pos - TLS_RECORD_HEADER < rlen) {
            /* This record is not all here. The least the input must hold before anything
             * changes: this record, and what the message still lacks after it in one more. */
            size_t need;
            if (!rlen)
                need = pos + TLS_RECORD_HEADER + (want > have ? want - have : 1);
            else
                need = pos + TLS_RECORD_HEADER + rlen +
                       (want > have + rlen ? TLS_RECORD_HEADER + want - have - rlen : 0);
            if (need > TLS_HELLO_RECORDS_MAX)
                return tls_hello_bad(h, "a ClientHello whose records exceed 24 KiB");
            h->need = need;
            return TLS_HELLO_MORE;
        }
        const unsigned char *frag = data + pos + TLS_RECORD_HEADER;
        pos += TLS_RECORD_HEADER + rlen;
        size_t keep = have < TLS_HELLO_MAX ? TLS_HELLO_MAX - have : 0;
        memcpy(msg + have, frag, rlen < keep ? rlen : keep);
        have += rlen;
        if (msg[0] != TLS_HANDSHAKE_CLIENT_HELLO)
            return tls_hello_bad(h, "a first handshake message that is no ClientHello");
        if (!want && have >= 4) {
            want = 4 + ((size_t)msg[1] << 16 | (size_t)msg[2] << 8 | msg[3]);
            if (want > TLS_HELLO_MAX)
                return tls_hello_bad(h, "a ClientHello longer than 16 KiB");
        }
        if (want && have > want)
            return tls_hello_bad(h, "bytes after the ClientHello in its record");
        if (want && have == want) {
            h->used = pos;
            return tls_hello_body((struct tls_cur){.p = msg + 4, .n = want - 4}, h);
        }
    }
}

/* ---- the handshake after the first hello ---- */

static enum tls_scan_status tls_scan_bad(struct tls_scan *s, const char *why)
{
    s->why = why;
    return s->status = TLS_SCAN_BAD;
}

static enum tls_scan_status tls_scan_done(struct tls_scan *s)
{
    return s->status = TLS_SCAN_DONE;
}

void tls_scan_start(struct tls_scan *s, bool early_data)
{
    memset(s, 0, sizeof(*s));
    s->early = early_data;
}

/* A whole record header: what its fragment is. */
static enum tls_scan_status tls_scan_record(struct tls_scan *s)
{
    const unsigned char *r = s->rhdr;
    size_t rlen = (size_t)r[3] << 8 | r[4];
    if (r[0] < TLS_CONTENT_FIRST || r[0] > TLS_CONTENT_APPLICATION)
        return tls_scan_bad(s, "a record of a type the handshake has not");
    if (r[1] != 3)
        return tls_scan_bad(s, "a record whose version is not TLS's (3.x)");
    if (rlen > TLS_RECORD_CIPHER_MAX)
        return tls_scan_bad(s, "a record longer than 2^14 + 2048 bytes");
    if (r[0] != TLS_CONTENT_HANDSHAKE && s->mhdr_have)
        return tls_scan_bad(s, "a record of another type inside a handshake message");
    if (r[0] == TLS_CONTENT_APPLICATION) {
        if (s->early)
            return tls_scan_bad(s, "application data after a ClientHello offering early data");
        return tls_scan_done(s);
    }
    if (r[0] == TLS_CONTENT_FIRST) {
        if (s->other)
            return tls_scan_done(s);
        s->ccs = true;
    }
    if (r[0] == TLS_CONTENT_HANDSHAKE && !rlen)
        return tls_scan_bad(s, "an empty handshake record");
    s->rtype = r[0];
    s->rec_left = rlen;
    return TLS_SCAN_MORE;
}

/* A handshake message ended: a ClientHello is parsed (by the first hello's parser). */
static enum tls_scan_status tls_scan_message_end(struct tls_scan *s)
{
    bool hello = s->mhdr[0] == TLS_HANDSHAKE_CLIENT_HELLO;
    s->mhdr_have = 0;
    if (!hello)
        return TLS_SCAN_MORE;
    memset(&s->hello, 0, sizeof(s->hello));
    if (tls_hello_body((struct tls_cur){.p = s->msg, .n = s->msg_have}, &s->hello) !=
        TLS_HELLO_DONE)
        return tls_scan_bad(s, s->hello.why);
    s->early = s->early || s->hello.early_data;
    return TLS_SCAN_HELLO;
}

/* n bytes of a handshake record's fragment; *took of them read (fewer when a hello ends). */
static enum tls_scan_status tls_scan_handshake(struct tls_scan *s, const unsigned char *p, size_t n,
                                               size_t *took)
{
    size_t k = 0;
    enum tls_scan_status st = TLS_SCAN_MORE;
    while (k < n && st == TLS_SCAN_MORE) {
        if (s->mhdr_have < 4) {
            if (!s->mhdr_have) {
                if (s->ccs && p[k] != TLS_HANDSHAKE_CLIENT_HELLO) {
                    st = tls_scan_done(s);
                    break;
                }
                s->msg_start = s->fed + k;
            }
            s->mhdr[s->mhdr_have++] = p[k++];
            if (s->mhdr_have < 4)
                continue;
            s->msg_left = (size_t)s->mhdr[1] << 16 | (size_t)s->mhdr[2] << 8 | s->mhdr[3];
            s->msg_have = 0;
            if (s->mhdr[0] != TLS_HANDSHAKE_CLIENT_HELLO)
                s->other = true;
            else if (s->msg_left > TLS_HELLO_MAX - 4)
                st = tls_scan_bad(s, "a ClientHello longer than 16 KiB");
            else if (!s->msg_left)
                st = tls_scan_message_end(s);
            continue;
        }
        size_t m = n - k < s->msg_left ? n - k : s->msg_left;
        if (s->mhdr[0] == TLS_HANDSHAKE_CLIENT_HELLO)
            memcpy(s->msg + s->msg_have, p + k, m);
        s->msg_have += m;
        s->msg_left -= m;
        k += m;
        if (!s->msg_left)
            st = tls_scan_message_end(s);
    }
    *took = k;
    return st;
}

enum tls_scan_status tls_scan_feed(struct tls_scan *s, const unsigned char *data, size_t len,
                                   size_t *used)
{
    size_t i = 0;
    enum tls_scan_status st = s->status;
    while (i < len && st == TLS_SCAN_MORE) {
        if (!s->rec_left) {
            s->rhdr[s->rhdr_have++] = data[i++];
            s->fed++;
            if (s->rhdr_have == TLS_RECORD_HEADER) {
                s->rhdr_have = 0;
                st = tls_scan_record(s);
            }
            continue;
        }
        size_t n = len - i < s->rec_left ? len - i : s->rec_left;
        if (s->rtype == TLS_CONTENT_HANDSHAKE)
            st = tls_scan_handshake(s, data + i, n, &n);
        i += n;
        s->fed += n;
        s->rec_left -= n;
    }
    *used = i;
    if (st == TLS_SCAN_BAD)
        return st;
    /* A ClientHello's bytes wait until it is whole and checked; the rest goes on at once. */
    s->passed = st == TLS_SCAN_MORE && s->mhdr_have && s->mhdr[0] == TLS_HANDSHAKE_CLIENT_HELLO
                    ? s->msg_start
                    : s->fed;
    if (s->fed - s->passed > TLS_HELLO_RECORDS_MAX)
        return tls_scan_bad(s, "a ClientHello whose records exceed 24 KiB");
    return st;
}
