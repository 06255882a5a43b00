/* UTF-8 validation and repair (RFC 3629: no overlongs, no surrogates, ≤ U+10FFFF). */
#include "engine/base/utf8.h"

#include <stdlib.h>
#include <string.h>

int utf8_seq_len(const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    int len;
    unsigned lo = 0x80, hi = 0xBF;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    /* The second byte has the narrowed range; later ones 80..BF. */
    for (int i = 1; i < len; i++) {
        if ((size_t)i >= n)
            return -1;
        unsigned b = p[i];
        if (i == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF))
            return 0;
    }
    return len;
}

char *utf8_repair(const char *p, size_t n, int keep_tail, size_t *out_len, size_t *tail)
{
    const unsigned char *u = (const unsigned char *)p;
    char *out = malloc(n * 3 + 1); /* each bad byte becomes 3 bytes at most */
    size_t o = 0, i = 0;
    if (tail)
        *tail = 0;
    if (!out)
        return NULL;
    while (i < n) {
        int len = utf8_seq_len(u + i, n - i);
        if (len < 0 && keep_tail) {
            if (tail)
                *tail = n - i;
            break;
        }
        if (len <= 0 || u[i] == 0) {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
            continue;
        }
        memcpy(out + o, p + i, (size_t)len);
        o += (size_t)len;
        i += (size_t)len;
    }
    out[o] = '\0';
    if (out_len)
        *out_len = o;
    return out;
}
