#include "editor_encoding.h"

#include "common/utf8.h"

#include <stdbool.h>
#include <stdint.h>

/* cp1251 bytes 0x80-0xBF as Unicode (0x98 has none); 0xC0-0xFF are U+0410-U+044F. */
static const uint16_t cp1251_high[64] = {
    0x0402, 0x0403, 0x201A, 0x0453, 0x201E, 0x2026, 0x2020, 0x2021, /* 0x80 */
    0x20AC, 0x2030, 0x0409, 0x2039, 0x040A, 0x040C, 0x040B, 0x040F, /* 0x88 */
    0x0452, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, /* 0x90 */
    0x0000, 0x2122, 0x0459, 0x203A, 0x045A, 0x045C, 0x045B, 0x045F, /* 0x98 */
    0x00A0, 0x040E, 0x045E, 0x0408, 0x00A4, 0x0490, 0x00A6, 0x00A7, /* 0xA0 */
    0x0401, 0x00A9, 0x0404, 0x00AB, 0x00AC, 0x00AD, 0x00AE, 0x0407, /* 0xA8 */
    0x00B0, 0x00B1, 0x0406, 0x0456, 0x0491, 0x00B5, 0x00B6, 0x00B7, /* 0xB0 */
    0x0451, 0x2116, 0x0454, 0x00BB, 0x0458, 0x0405, 0x0455, 0x0457, /* 0xB8 */
};

static uint32_t cp1251_to_unicode(unsigned char c)
{
    if (c < 0x80)
        return c;
    if (c >= 0xC0)
        return 0x0410 + (c - 0xC0);
    return cp1251_high[c - 0x80];
}

/* The byte for a code point, or -1. */
static int unicode_to_cp1251(uint32_t cp)
{
    if (cp < 0x80)
        return (int)cp;
    if (cp >= 0x0410 && cp <= 0x044F)
        return (int)(0xC0 + (cp - 0x0410));
    for (int i = 0; i < 64; i++)
        if (cp1251_high[i] == cp && cp != 0)
            return 0x80 + i;
    return -1;
}

/* A letter in either reading: ASCII letters, or a high byte that is a letter in cp1251
 * (0xC0-0xFF, Ё 0xA8, ё 0xB8) - the same bytes are mostly letters in latin-1 too. */
static bool is_high_letter(unsigned char c)
{
    return c >= 0xC0 || c == 0xA8 || c == 0xB8;
}

static bool is_ascii_letter(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

enum editor_encoding editor_encoding_detect(const char *data, size_t n)
{
    const unsigned char *s = (const unsigned char *)data;
    if (utf8_valid(data, n))
        return EDITOR_ENC_UTF8;
    long cyrillic = 0, latin = 0;
    bool has_0x98 = false;
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c == 0x98)
            has_0x98 = true;
        if (c >= 0x80 && c <= 0x9F)
            cyrillic++;
        if (!is_ascii_letter(c) && !is_high_letter(c)) {
            i++;
            continue;
        }
        /* A word: a run of letters of either kind. */
        size_t high = 0, ascii = 0;
        while (i < n && (is_ascii_letter(s[i]) || is_high_letter(s[i]))) {
            if (is_ascii_letter(s[i]))
                ascii++;
            else
                high++;
            i++;
        }
        if (high && ascii)
            latin += (long)high;
        else if (high >= 2)
            cyrillic += (long)high;
    }
    return cyrillic > latin && !has_0x98 ? EDITOR_ENC_CP1251 : EDITOR_ENC_LATIN1;
}

const char *editor_encoding_name(enum editor_encoding enc)
{
    switch (enc) {
    case EDITOR_ENC_CP1251:
        return "cp1251";
    case EDITOR_ENC_LATIN1:
        return "latin-1";
    default:
        return "utf-8";
    }
}

int editor_encoding_decode(enum editor_encoding enc, const char *data, size_t n, struct buf *out)
{
    if (enc == EDITOR_ENC_UTF8)
        return buf_append(out, data, n);
    if (buf_reserve(out, n * 2) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)data[i];
        uint32_t cp = enc == EDITOR_ENC_CP1251 ? cp1251_to_unicode(c) : c;
        char u[4];
        if (buf_append(out, u, utf8_put(cp, u)) < 0)
            return -1;
    }
    return 0;
}

static int byte_for(enum editor_encoding enc, uint32_t cp)
{
    if (enc == EDITOR_ENC_CP1251)
        return unicode_to_cp1251(cp);
    return cp < 0x100 ? (int)cp : -1;
}

static int encode_error(enum editor_encoding enc, uint32_t cp, size_t first, size_t last,
                        struct buf *err)
{
    /* Python names cp1251's codec "charmap"; both report a run of unencodable characters. */
    const char *codec = enc == EDITOR_ENC_CP1251 ? "charmap" : "latin-1";
    const char *reason =
        enc == EDITOR_ENC_CP1251 ? "character maps to <undefined>" : "ordinal not in range(256)";
    int rc;
    if (first == last) {
        const char *fmt =
            cp < 0x100     ? "'%s' codec can't encode character '\\x%02x' in position %zu: %s"
            : cp < 0x10000 ? "'%s' codec can't encode character '\\u%04x' in position %zu: %s"
                           : "'%s' codec can't encode character '\\U%08x' in position %zu: %s";
        rc = buf_printf(err, fmt, codec, (unsigned)cp, first, reason);
    } else {
        rc = buf_printf(err, "'%s' codec can't encode characters in position %zu-%zu: %s", codec,
                        first, last, reason);
    }
    return rc < 0 ? -1 : 1;
}

int editor_encoding_encode(enum editor_encoding enc, const char *text, size_t n, struct buf *out,
                           struct buf *err)
{
    if (enc == EDITOR_ENC_UTF8)
        return buf_append(out, text, n);
    if (buf_reserve(out, n) < 0)
        return -1;
    size_t i = 0, pos = 0; /* pos: index in code points, as Python counts */
    while (i < n) {
        size_t len;
        uint32_t cp = utf8_decode_lax(text + i, n - i, &len);
        int b = byte_for(enc, cp);
        if (b < 0) {
            size_t first = pos, last = pos;
            uint32_t first_cp = cp;
            i += len;
            while (i < n) {
                uint32_t c2 = utf8_decode_lax(text + i, n - i, &len);
                if (byte_for(enc, c2) >= 0)
                    break;
                i += len;
                last++;
            }
            return encode_error(enc, first_cp, first, last, err);
        }
        char c = (char)b;
        if (buf_append(out, &c, 1) < 0)
            return -1;
        i += len;
        pos++;
    }
    return 0;
}
