#include "pytext.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "common/utf8.h"
#include "text.h"

static bool is_space_cp(uint32_t c)
{
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
           c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
           c == 0x202F || c == 0x205F || c == 0x3000;
}

size_t pytext_space_at(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    size_t len;
    uint32_t c = utf8_decode_lax(s, n, &len);
    return is_space_cp(c) ? len : 0;
}

size_t pytext_lstrip(const char *s, size_t n)
{
    size_t i = 0, len;
    while (i < n && (len = pytext_space_at(s + i, n - i)) > 0)
        i += len;
    return i;
}

size_t pytext_rstrip(const char *s, size_t n)
{
    while (n > 0) {
        size_t start = utf8_prev(s, n);
        if (pytext_space_at(s + start, n - start) != n - start)
            break;
        n = start;
    }
    return n;
}

size_t pytext_line_end(const char *s, size_t n, size_t pos, size_t *next)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = pos; i < n; i++) {
        unsigned char c = p[i];
        if (c == '\n' || c == '\v' || c == '\f' || (c >= 0x1C && c <= 0x1E)) {
            *next = i + 1;
            return i;
        }
        if (c == '\r') {
            *next = i + 1 < n && p[i + 1] == '\n' ? i + 2 : i + 1;
            return i;
        }
        if (c == 0xC2 && i + 1 < n && p[i + 1] == 0x85) {
            *next = i + 2;
            return i;
        }
        if (c == 0xE2 && i + 2 < n && p[i + 1] == 0x80 && (p[i + 2] == 0xA8 || p[i + 2] == 0xA9)) {
            *next = i + 3;
            return i;
        }
    }
    *next = n;
    return n;
}

int pytext_universal_newlines(struct buf *out, const char *s, size_t n)
{
    if (buf_reserve(out, n) < 0)
        return -1;
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\r')
            continue;
        if (buf_append(out, s + run, i - run) < 0 || buf_append(out, "\n", 1) < 0)
            return -1;
        if (i + 1 < n && s[i + 1] == '\n')
            i++;
        run = i + 1;
    }
    return buf_append(out, s + run, n - run);
}

int pytext_truncate(struct buf *b, size_t max_chars, const char *notice)
{
    if (!b->data || utf8_count(b->data, b->len) <= max_chars)
        return 0;
    size_t cut = utf8_offset(b->data, b->len, max_chars);
    b->len = cut;
    b->data[cut] = '\0';
    return buf_append_str(b, notice);
}

/* str.isprintable() for the characters that matter in paths and messages: controls, the
 * non-ASCII spaces and separators, format characters and private use are not printable. */
static bool is_printable_cp(uint32_t c)
{
    if (c < 0x20 || (c >= 0x7F && c <= 0xA0) || c == 0xAD)
        return false;
    if (c == 0x1680 || (c >= 0x2000 && c <= 0x200F) || (c >= 0x2028 && c <= 0x202F) ||
        (c >= 0x205F && c <= 0x2064) || c == 0x3000 || c == 0xFEFF)
        return false;
    if ((c >= 0xD800 && c <= 0xF8FF) || c >= 0xF0000)
        return false;
    return true;
}

int pytext_repr_str(struct buf *out, const char *s, size_t n)
{
    bool has_single = memchr(s, '\'', n) != NULL, has_double = memchr(s, '"', n) != NULL;
    char quote = has_single && !has_double ? '"' : '\'';
    if (buf_append(out, &quote, 1) < 0)
        return -1;
    for (size_t i = 0; i < n;) {
        size_t len;
        uint32_t c = utf8_decode_lax(s + i, n - i, &len);
        int rc;
        if (c == (uint32_t)quote || c == '\\')
            rc = buf_printf(out, "\\%c", (char)c);
        else if (c == '\t')
            rc = buf_append_str(out, "\\t");
        else if (c == '\n')
            rc = buf_append_str(out, "\\n");
        else if (c == '\r')
            rc = buf_append_str(out, "\\r");
        else if (is_printable_cp(c))
            rc = buf_append(out, s + i, len);
        else if (c < 0x100)
            rc = buf_printf(out, "\\x%02x", (unsigned)c);
        else if (c < 0x10000)
            rc = buf_printf(out, "\\u%04x", (unsigned)c);
        else
            rc = buf_printf(out, "\\U%08x", (unsigned)c);
        if (rc < 0)
            return -1;
        i += len;
    }
    return buf_append(out, &quote, 1);
}

int pytext_repr_json(struct buf *out, const json_t *v)
{
    char num[64];
    switch (json_typeof(v)) {
    case JSON_NULL:
        return buf_append_str(out, "None");
    case JSON_TRUE:
        return buf_append_str(out, "True");
    case JSON_FALSE:
        return buf_append_str(out, "False");
    case JSON_INTEGER:
        return buf_printf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    case JSON_REAL:
        text_format_float(num, sizeof num, json_real_value(v));
        return buf_append_str(out, num);
    case JSON_STRING:
        return pytext_repr_str(out, json_string_value(v), json_string_length(v));
    case JSON_ARRAY: {
        size_t i;
        const json_t *item;
        if (buf_append_str(out, "[") < 0)
            return -1;
        json_array_foreach(v, i, item)
        {
            if ((i && buf_append_str(out, ", ") < 0) || pytext_repr_json(out, item) < 0)
                return -1;
        }
        return buf_append_str(out, "]");
    }
    case JSON_OBJECT: {
        const char *key;
        const json_t *item;
        bool first = true;
        if (buf_append_str(out, "{") < 0)
            return -1;
        json_object_foreach((json_t *)v, key, item)
        {
            if ((!first && buf_append_str(out, ", ") < 0) ||
                pytext_repr_str(out, key, strlen(key)) < 0 || buf_append_str(out, ": ") < 0 ||
                pytext_repr_json(out, item) < 0)
                return -1;
            first = false;
        }
        return buf_append_str(out, "}");
    }
    }
    return -1;
}

int pytext_str_json(struct buf *out, const json_t *v)
{
    if (json_is_string(v))
        return buf_append(out, json_string_value(v), json_string_length(v));
    return pytext_repr_json(out, v);
}

int pytext_repr_longs(struct buf *out, const long *v, size_t n)
{
    if (buf_append_str(out, "[") < 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (buf_printf(out, i ? ", %ld" : "%ld", v[i]) < 0)
            return -1;
    return buf_append_str(out, "]");
}

int pytext_parse_int(const char *s, size_t n, long *out)
{
    size_t i = pytext_lstrip(s, n);
    n = pytext_rstrip(s, n);
    if (i >= n)
        return -1;
    bool neg = false;
    if (s[i] == '+' || s[i] == '-')
        neg = s[i++] == '-';
    long v = 0;
    bool digit_before = false;
    for (; i < n; i++) {
        char c = s[i];
        if (c == '_') {
            /* Only between two digits. */
            if (!digit_before || i + 1 >= n || s[i + 1] < '0' || s[i + 1] > '9')
                return -1;
            digit_before = false;
            continue;
        }
        if (c < '0' || c > '9')
            return -1;
        if (v > (LONG_MAX - (c - '0')) / 10)
            return -1;
        v = v * 10 + (c - '0');
        digit_before = true;
    }
    if (!digit_before)
        return -1;
    *out = neg ? -v : v;
    return 0;
}
