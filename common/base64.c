#include "common/base64.h"

int base64_encode(struct buf *out, const unsigned char *data, size_t n)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (buf_reserve(out, (n + 2) / 3 * 4) < 0)
        return -1;
    char *p = out->data + out->len;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        unsigned v = (unsigned)data[i] << 16 | (unsigned)data[i + 1] << 8 | data[i + 2];
        *p++ = alphabet[v >> 18 & 63];
        *p++ = alphabet[v >> 12 & 63];
        *p++ = alphabet[v >> 6 & 63];
        *p++ = alphabet[v & 63];
    }
    if (i < n) {
        unsigned v = (unsigned)data[i] << 16 | (i + 1 < n ? (unsigned)data[i + 1] << 8 : 0);
        *p++ = alphabet[v >> 18 & 63];
        *p++ = alphabet[v >> 12 & 63];
        *p++ = i + 1 < n ? alphabet[v >> 6 & 63] : '=';
        *p++ = '=';
    }
    out->len = (size_t)(p - out->data);
    out->data[out->len] = '\0';
    return 0;
}

static int base64_value(unsigned char c)
{
    return c >= 'A' && c <= 'Z'   ? c - 'A'
           : c >= 'a' && c <= 'z' ? c - 'a' + 26
           : c >= '0' && c <= '9' ? c - '0' + 52
           : c == '+'             ? 62
           : c == '/'             ? 63
                                  : -1;
}

int base64_decode(struct buf *out, const char *text, size_t n)
{
    if (n % 4 || buf_reserve(out, n / 4 * 3) < 0)
        return -1;
    size_t start = out->len;
    for (size_t i = 0; i < n; i += 4) {
        int v[4];
        int pad = 0;
        for (int k = 0; k < 4; k++) {
            unsigned char c = (unsigned char)text[i + k];
            /* '=' only at the end: one or two of them. */
            if (c == '=' && i + 4 == n && k >= 2 && (k == 3 || text[i + 3] == '=')) {
                v[k] = 0;
                pad++;
            } else if ((v[k] = base64_value(c)) < 0) {
                out->len = start;
                return -1;
            }
        }
        unsigned w =
            (unsigned)v[0] << 18 | (unsigned)v[1] << 12 | (unsigned)v[2] << 6 | (unsigned)v[3];
        char bytes[3] = {(char)(w >> 16), (char)(w >> 8 & 255), (char)(w & 255)};
        buf_append(out, bytes, (size_t)(3 - pad));
    }
    return 0;
}
