#include "common/utf8.h"

size_t utf8_lead_len(unsigned char c)
{
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        return 2;
    if (c >= 0xE0 && c <= 0xEF)
        return 3;
    if (c >= 0xF0 && c <= 0xF4)
        return 4;
    return 0;
}

int utf8_char_len(const char *s, size_t n, size_t *bad)
{
    const unsigned char *p = (const unsigned char *)s;
    unsigned char c = p[0];
    int need = (int)utf8_lead_len(c);
    unsigned char lo = 0x80, hi = 0xBF; /* the second byte's range; later ones 80..BF */
    if (need == 1)
        return 1;
    if (need == 0) {
        if (bad)
            *bad = 1;
        return 0;
    }
    if (c == 0xE0)
        lo = 0xA0; /* overlong */
    else if (c == 0xED)
        hi = 0x9F; /* surrogates */
    else if (c == 0xF0)
        lo = 0x90; /* overlong */
    else if (c == 0xF4)
        hi = 0x8F; /* past U+10FFFF */
    for (int i = 1; i < need; i++) {
        if ((size_t)i >= n) {
            if (bad)
                *bad = (size_t)i;
            return -1;
        }
        unsigned char lower = i == 1 ? lo : 0x80, upper = i == 1 ? hi : 0xBF;
        if (p[i] < lower || p[i] > upper) {
            if (bad)
                *bad = (size_t)i;
            return 0;
        }
    }
    return need;
}

size_t utf8_decode(const char *s, size_t n, uint32_t *cp)
{
    const unsigned char *p = (const unsigned char *)s;
    int len = utf8_char_len(s, n, NULL);
    if (len <= 0) {
        *cp = p[0];
        return 0;
    }
    static const unsigned char lead_mask[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
    uint32_t v = p[0] & lead_mask[len];
    for (int i = 1; i < len; i++)
        v = (v << 6) | (p[i] & 0x3F);
    *cp = v;
    return (size_t)len;
}

uint32_t utf8_decode_lax(const char *s, size_t n, size_t *len)
{
    uint32_t cp;
    *len = utf8_decode(s, n, &cp);
    if (!*len)
        *len = 1;
    return cp;
}

size_t utf8_put(uint32_t cp, char *out)
{
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        cp = 0xFFFD;
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

bool utf8_valid(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        int len = utf8_char_len(s + i, n - i, NULL);
        if (len <= 0)
            return false;
        i += (size_t)len;
    }
    return true;
}

size_t utf8_count(const char *s, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        if (!utf8_is_cont((unsigned char)s[i]))
            count++;
    return count;
}

size_t utf8_offset(const char *s, size_t n, size_t chars)
{
    for (size_t i = 0; i < n; i++)
        if (!utf8_is_cont((unsigned char)s[i]) && chars-- == 0)
            return i;
    return n;
}

size_t utf8_next(const char *s, size_t n)
{
    size_t k = 1;
    if ((unsigned char)s[0] >= 0xC0)
        while (k < n && utf8_is_cont((unsigned char)s[k]))
            k++;
    return k;
}

size_t utf8_prev(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    size_t start = n - 1;
    while (start > 0 && utf8_is_cont((unsigned char)s[start]) && n - start < 4)
        start--;
    return start;
}

size_t utf8_cut(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    size_t start = utf8_prev(s, n);
    unsigned char c = (unsigned char)s[start];
    size_t want = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return start + want > n ? start : n;
}

int utf8_repair(struct buf *out, const char *s, size_t n, unsigned flags, size_t *tail)
{
    static const char replacement[] = "\xEF\xBF\xBD";
    size_t i = 0, run = 0; /* run: start of the pending well-formed span */
    if (tail)
        *tail = 0;
    if (buf_reserve(out, n) < 0)
        return -1;
    while (i < n) {
        size_t bad = 1;
        int len = utf8_char_len(s + i, n - i, &bad);
        if (len < 0 && (flags & UTF8_REPAIR_KEEP_TAIL)) {
            if (tail)
                *tail = n - i;
            n = i;
            break;
        }
        if (len > 0 && !(s[i] == '\0' && (flags & UTF8_REPAIR_NUL))) {
            i += (size_t)len;
            continue;
        }
        if (len > 0 || (flags & UTF8_REPAIR_EACH_BYTE))
            bad = 1;
        if (buf_append(out, s + run, i - run) < 0 || buf_append(out, replacement, 3) < 0)
            return -1;
        i += bad;
        run = i;
    }
    return buf_append(out, s + run, n - run);
}
