/* The sanitizer for untrusted text; the rules are in sanitize.h. */
#include "common/sanitize.h"

#include "common/utf8.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SANITIZE_CSI_BODY_MAX 32 /* bytes of CSI parameters shown before `…` */
#define SANITIZE_OSC_NUM_MAX 8   /* digits of an OSC number shown */

struct sanitize_buf {
    char *out;
    size_t cap;  /* usable bytes, without the NUL */
    size_t soft; /* cap minus room for the truncation marker */
    size_t len;
    unsigned flags;
    size_t col;   /* code points since the last kept newline (tab stops) */
    bool cut_set; /* first token that passed soft: where the marker would go */
    size_t cut_out;
    size_t cut_in;
    bool overflow; /* a token did not fit in cap: stop */
};

/* Characters that are invisible or reorder text: shown as <U+XXXX>. Sorted ranges. */
static const struct {
    uint32_t lo, hi;
} sanitize_invisible[] = {
    {0x0080, 0x009F},   /* C1 controls */
    {0x00AD, 0x00AD},   /* soft hyphen */
    {0x034F, 0x034F},   /* combining grapheme joiner */
    {0x061C, 0x061C},   /* Arabic letter mark (bidi) */
    {0x115F, 0x1160},   /* Hangul fillers */
    {0x17B4, 0x17B5},   /* Khmer inherent vowels */
    {0x180B, 0x180E},   /* Mongolian variation selectors, vowel separator */
    {0x200B, 0x200F},   /* zero-width space/non-joiner/joiner, LRM, RLM */
    {0x2028, 0x202E},   /* line/paragraph separators, bidi embeddings and overrides */
    {0x2060, 0x206F},   /* word joiner, invisible operators, bidi isolates, deprecated */
    {0x3164, 0x3164},   /* Hangul filler */
    {0xFEFF, 0xFEFF},   /* zero-width no-break space (BOM) */
    {0xFFA0, 0xFFA0},   /* halfwidth Hangul filler */
    {0xFFF0, 0xFFFB},   /* specials, interlinear annotation */
    {0xFFFE, 0xFFFF},   /* noncharacters */
    {0x1D173, 0x1D17A}, /* musical format controls */
    {0xE0000, 0xE0FFF}, /* tags ("ASCII smuggling"), variation selectors supplement */
};

static bool sanitize_is_invisible(uint32_t cp)
{
    for (size_t i = 0; i < sizeof(sanitize_invisible) / sizeof(sanitize_invisible[0]); i++) {
        if (cp < sanitize_invisible[i].lo)
            return false;
        if (cp <= sanitize_invisible[i].hi)
            return true;
    }
    return false;
}

bool sanitize_codepoint_ok(uint32_t cp)
{
    return cp >= 0x20 && cp != 0x7F && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF) &&
           !sanitize_is_invisible(cp);
}

/* Append one token, never split; in_pos is where the token started in the input. */
static void sanitize_emit(struct sanitize_buf *b, const char *p, size_t n, size_t in_pos)
{
    if (b->overflow)
        return;
    if (!b->cut_set && b->len + n > b->soft) {
        b->cut_set = true;
        b->cut_out = b->len;
        b->cut_in = in_pos;
    }
    if (b->len + n > b->cap) {
        b->overflow = true;
        return;
    }
    memcpy(b->out + b->len, p, n);
    b->len += n;
    b->col += utf8_count(p, n);
}

static void sanitize_emit_str(struct sanitize_buf *b, const char *s, size_t in_pos)
{
    sanitize_emit(b, s, strlen(s), in_pos);
}

static const char *sanitize_ellipsis(const struct sanitize_buf *b)
{
    return (b->flags & SANITIZE_ASCII) ? "..." : "\xE2\x80\xA6";
}

/* A string sequence (OSC, DCS, SOS, PM, APC) starting at in[i] (after its introducer): the
 * index just past its terminator, or len when unterminated. */
static size_t sanitize_string_end(const unsigned char *in, size_t len, size_t i)
{
    for (; i < len; i++) {
        unsigned char c = in[i];
        if (c == 0x07 || c == 0x18 || c == 0x1A)
            return i + 1;
        if (c == 0x1B) {
            if (i + 1 < len && in[i + 1] == '\\')
                return i + 2;
            return i; /* ESC starts the next sequence: aborts this one */
        }
    }
    return len;
}

/* ESC at in[i]: emit one token for the whole sequence, return the index after it. */
static size_t sanitize_escape(struct sanitize_buf *b, const unsigned char *in, size_t len, size_t i)
{
    char tok[8 + SANITIZE_CSI_BODY_MAX + 8];
    size_t t = 0, j = i + 1;
    tok[t++] = '^';
    tok[t++] = '[';
    if (j >= len) {
        sanitize_emit(b, tok, t, i);
        return j;
    }
    unsigned char d = in[j];
    if (d == '[') {
        /* CSI: parameters/intermediates 0x20-0x3F, then a final byte 0x40-0x7E. */
        tok[t++] = '[';
        size_t k = j + 1;
        while (k < len && in[k] >= 0x20 && in[k] <= 0x3F)
            k++;
        if (k < len && in[k] >= 0x40 && in[k] <= 0x7E)
            k++;
        size_t body = k - (j + 1);
        size_t show = body > SANITIZE_CSI_BODY_MAX ? SANITIZE_CSI_BODY_MAX : body;
        memcpy(tok + t, in + j + 1, show);
        t += show;
        if (show < body) {
            const char *e = sanitize_ellipsis(b);
            memcpy(tok + t, e, strlen(e));
            t += strlen(e);
        }
        sanitize_emit(b, tok, t, i);
        return k;
    }
    if (d == ']' || d == 'P' || d == 'X' || d == '^' || d == '_') {
        tok[t++] = (char)d;
        size_t start = j + 1, k = start;
        if (d == ']')
            while (k < len && k - start < SANITIZE_OSC_NUM_MAX && in[k] >= '0' && in[k] <= '9')
                tok[t++] = (char)in[k++];
        size_t end = sanitize_string_end(in, len, start);
        /* Anything besides the shown number and the terminator was dropped: say so. */
        size_t body_end = end;
        if (end > start && end <= len) {
            unsigned char last = in[end - 1];
            if (last == 0x07 || last == 0x18 || last == 0x1A)
                body_end = end - 1;
            else if (last == '\\' && end >= start + 2 && in[end - 2] == 0x1B)
                body_end = end - 2;
        }
        if (body_end > k) {
            const char *e = sanitize_ellipsis(b);
            memcpy(tok + t, e, strlen(e));
            t += strlen(e);
        }
        sanitize_emit(b, tok, t, i);
        return end;
    }
    if (d >= 0x20 && d <= 0x2F) {
        /* nF: intermediates, then a final byte 0x30-0x7E. */
        size_t k = j;
        while (k < len && in[k] >= 0x20 && in[k] <= 0x2F && t < 8 + SANITIZE_CSI_BODY_MAX)
            tok[t++] = (char)in[k++];
        while (k < len && in[k] >= 0x20 && in[k] <= 0x2F)
            k++;
        if (k < len && in[k] >= 0x30 && in[k] <= 0x7E)
            tok[t++] = (char)in[k++];
        sanitize_emit(b, tok, t, i);
        return k;
    }
    if (d >= 0x30 && d <= 0x7E) {
        tok[t++] = (char)d;
        sanitize_emit(b, tok, t, i);
        return j + 1;
    }
    sanitize_emit(b, tok, t, i); /* lone ESC; what follows is handled on its own */
    return j;
}

size_t sanitize_text_flags(const char *in_chars, size_t len, char *out, size_t outsz,
                           unsigned flags)
{
    if (outsz == 0)
        return 0;
    const unsigned char *in = (const unsigned char *)(in_chars ? in_chars : "");
    if (!in_chars)
        len = 0;
    struct sanitize_buf b = {.out = out, .cap = outsz - 1, .flags = flags};
    /* Room for the longest marker this input can need. */
    char marker[64];
    int mlen = snprintf(marker, sizeof(marker), "%s[+%zu bytes]", sanitize_ellipsis(&b), len);
    b.soft = b.cap >= (size_t)mlen ? b.cap - (size_t)mlen : b.cap;

    size_t i = 0;
    while (i < len && !b.overflow) {
        unsigned char c = in[i];
        char tok[16];
        if (c == 0x1B) {
            i = sanitize_escape(&b, in, len, i);
            continue;
        }
        if (c == '\n') {
            if (flags & SANITIZE_MULTILINE) {
                sanitize_emit(&b, "\n", 1, i);
                b.col = 0;
            } else {
                sanitize_emit_str(&b, (flags & SANITIZE_ASCII) ? "^J" : "\xE2\x8F\x8E", i);
            }
            i++;
            continue;
        }
        if (c == '\t') {
            size_t n = (flags & SANITIZE_MULTILINE) ? 8 - b.col % 8 : 1;
            sanitize_emit(&b, "        ", n, i);
            i++;
            continue;
        }
        if (c < 0x20 || c == 0x7F) {
            tok[0] = '^';
            tok[1] = c == 0x7F ? '?' : (char)(c + 0x40);
            sanitize_emit(&b, tok, 2, i);
            i++;
            continue;
        }
        if (c < 0x80) {
            sanitize_emit(&b, (const char *)in + i, 1, i);
            i++;
            continue;
        }
        uint32_t cp = 0;
        size_t n = utf8_decode((const char *)in + i, len - i, &cp);
        if (n == 0) {
            snprintf(tok, sizeof(tok), "\\x%02X", c);
            sanitize_emit_str(&b, tok, i);
            i++;
            continue;
        }
        if ((flags & SANITIZE_ASCII) || sanitize_is_invisible(cp)) {
            snprintf(tok, sizeof(tok), "<U+%04X>", (unsigned)cp);
            sanitize_emit_str(&b, tok, i);
        } else {
            sanitize_emit(&b, (const char *)in + i, n, i);
        }
        i += n;
    }
    if (b.overflow) {
        b.len = b.cut_out;
        int m = snprintf(marker, sizeof(marker), "%s[+%zu bytes]", sanitize_ellipsis(&b),
                         len - b.cut_in);
        if (m > 0 && b.len + (size_t)m <= b.cap) {
            memcpy(out + b.len, marker, (size_t)m);
            b.len += (size_t)m;
        }
    }
    out[b.len] = '\0';
    return b.len;
}

size_t sanitize_text(const char *in, size_t len, char *out, size_t outsz)
{
    return sanitize_text_flags(in, len, out, outsz, 0);
}

char *sanitize_dup(const char *in, size_t len, size_t max, unsigned flags)
{
    /* Tokens expand at most 8 bytes per input byte (`<U+XXXX>` for 1..4 bytes, `\xNN` for 1). */
    size_t need = len <= (SIZE_MAX - 64) / 8 ? len * 8 + 64 : SIZE_MAX;
    size_t sz = (need < max ? need : max) + 1;
    char *out = malloc(sz);
    if (!out)
        return NULL;
    size_t n = sanitize_text_flags(in, len, out, sz, flags);
    char *shrunk = realloc(out, n + 1);
    return shrunk ? shrunk : out;
}
