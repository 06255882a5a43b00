#include "text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool text_is_space(unsigned char c)
{
    /* Python counts the ASCII separators 0x1c-0x1f as whitespace too. */
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

size_t text_rstrip_len(const char *s, size_t n)
{
    while (n > 0 && text_is_space((unsigned char)s[n - 1]))
        n--;
    return n;
}

/* Length of the well-formed sequence at s[0..n), or 0 with *bad set to the length of the
 * maximal ill-formed subpart to replace by one U+FFFD. */
static size_t utf8_sequence_len(const unsigned char *s, size_t n, size_t *bad)
{
    unsigned char c = s[0];
    size_t need;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        need = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        if (c == 0xE0)
            lo = 0xA0; /* overlong */
        else if (c == 0xED)
            hi = 0x9F; /* surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        if (c == 0xF0)
            lo = 0x90; /* overlong */
        else if (c == 0xF4)
            hi = 0x8F; /* beyond U+10FFFF */
    } else {
        *bad = 1;
        return 0;
    }
    for (size_t i = 1; i < need; i++) {
        unsigned char lower = i == 1 ? lo : 0x80, upper = i == 1 ? hi : 0xBF;
        if (i >= n || s[i] < lower || s[i] > upper) {
            *bad = i;
            return 0;
        }
    }
    return need;
}

int text_utf8_repair(struct buf *out, const char *s, size_t n)
{
    static const char replacement[] = "\xEF\xBF\xBD";
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, run = 0; /* run: start of the pending well-formed span */
    if (buf_reserve(out, n) < 0)
        return -1;
    while (i < n) {
        if (p[i] < 0x80) {
            i++;
            continue;
        }
        size_t bad = 0, len = utf8_sequence_len(p + i, n - i, &bad);
        if (len) {
            i += len;
            continue;
        }
        if (buf_append(out, s + run, i - run) < 0 || buf_append(out, replacement, 3) < 0)
            return -1;
        i += bad;
        run = i;
    }
    return buf_append(out, s + run, n - run);
}

size_t text_utf8_count(const char *s, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            count++;
    return count;
}

size_t text_utf8_offset(const char *s, size_t n, size_t chars)
{
    size_t i = 0;
    while (i < n) {
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            if (chars == 0)
                return i;
            chars--;
        }
        i++;
    }
    return n;
}

int text_truncate_middle(struct buf *b)
{
    size_t count = text_utf8_count(b->data ? b->data : "", b->len);
    if (count <= TEXT_MAX_CHARS)
        return 0;
    size_t half = TEXT_MAX_CHARS / 2;
    size_t head = text_utf8_offset(b->data, b->len, half);
    size_t tail = text_utf8_offset(b->data, b->len, count - half);
    struct buf out = BUF_INIT;
    if (buf_append(&out, b->data, head) < 0 || buf_append_str(&out, TEXT_TRUNCATION_MARKER) < 0 ||
        buf_append(&out, b->data + tail, b->len - tail) < 0) {
        buf_free(&out);
        return -1;
    }
    buf_free(b);
    *b = out;
    return 0;
}

void text_format_float(char *out, size_t outlen, double v)
{
    if (isnan(v)) {
        snprintf(out, outlen, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(out, outlen, v < 0 ? "-inf" : "inf");
        return;
    }
    /* Shortest digits that read back as the same double, laid out as Python's repr(): fixed
     * notation for exponents -4..15 with at least one decimal, scientific otherwise. */
    char sci[40];
    int prec = 1;
    for (; prec <= 17; prec++) {
        snprintf(sci, sizeof sci, "%.*e", prec - 1, v);
        if (strtod(sci, NULL) == v)
            break;
    }
    int exp = atoi(strchr(sci, 'e') + 1);
    if (exp >= -4 && exp < 16) {
        int decimals = prec - 1 - exp;
        snprintf(out, outlen, "%.*f", decimals < 1 ? 1 : decimals, v);
    } else {
        snprintf(out, outlen, "%s", sci);
    }
}

void text_format_number(char *out, size_t outlen, double v)
{
    if (v == floor(v) && fabs(v) < 1e15)
        snprintf(out, outlen, "%.0f", v);
    else
        text_format_float(out, outlen, v);
}
