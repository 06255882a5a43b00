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
