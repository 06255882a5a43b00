#include "text.h"

#include "common/utf8.h"

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

int text_truncate_middle(struct buf *b)
{
    size_t count = utf8_count(b->data ? b->data : "", b->len);
    if (count <= TEXT_MAX_CHARS)
        return 0;
    size_t half = TEXT_MAX_CHARS / 2;
    size_t head = utf8_offset(b->data, b->len, half);
    size_t tail = utf8_offset(b->data, b->len, count - half);
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
