/* common/sanitize.c: container output on its way to the operator's terminal. The first byte
 * picks the flags, the output size and the replay chunking; the rest is the text. Checked:
 * what sanitize_text writes is valid UTF-8 with no control byte (only '\n' with
 * SANITIZE_MULTILINE) and fits the buffer; what the replay filter writes is valid UTF-8 whose
 * only C0 bytes are BS, HT, LF, CR and the ESC of a sequence it keeps. */
#include "common/sanitize.h"

#include "fuzz_input.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool check_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : 4;
        if ((c >= 0x80 && c < 0xc2) || c > 0xf4 || i + len > n)
            return false;
        uint32_t cp = len == 1 ? c : c & (0x7f >> len);
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return false;
            cp = cp << 6 | (s[i + k] & 0x3f);
        }
        static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += len;
    }
    return true;
}

static void check_text(const char *out, size_t n, size_t outsz, unsigned flags)
{
    if ((outsz && (n >= outsz || out[n] != '\0')) || (!outsz && n))
        abort();
    if (!check_utf8((const unsigned char *)out, n))
        abort();
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)out[i];
        if ((c < 0x20 && !(c == '\n' && (flags & SANITIZE_MULTILINE))) || c == 0x7f)
            abort();
        if ((flags & SANITIZE_ASCII) && c >= 0x80)
            abort();
    }
}

struct replay_out {
    char *data;
    size_t len, cap;
};

static void replay_write(void *ctx, const char *p, size_t n)
{
    struct replay_out *o = ctx;
    if (o->len + n > o->cap) {
        size_t cap = 2 * (o->len + n);
        char *more = realloc(o->data, cap);
        if (!more)
            abort();
        o->data = more;
        o->cap = cap;
    }
    memcpy(o->data + o->len, p, n);
    o->len += n;
}

static void check_replay(const struct replay_out *o)
{
    if (!check_utf8((const unsigned char *)o->data, o->len))
        abort();
    for (size_t i = 0; i < o->len; i++) {
        unsigned char c = (unsigned char)o->data[i];
        if (c == 0x7f ||
            (c < 0x20 && c != '\b' && c != '\t' && c != '\n' && c != '\r' && c != 0x1b))
            abort();
        /* an ESC is always followed by the rest of a kept sequence, never a string's start */
        if (c == 0x1b && (i + 1 == o->len || strchr("]PX^_", o->data[i + 1])))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_input in = {data, size};
    uint8_t mode = fuzz_byte(&in);
    unsigned flags = mode & 3;
    static const size_t sizes[] = {0, 1, 2, 8, 33, 200, 4096};
    size_t outsz = sizes[(mode >> 2) % (sizeof(sizes) / sizeof(sizes[0]))];
    const char *text = (const char *)in.p;

    char *out = malloc(outsz ? outsz : 1);
    if (!out)
        return 0;
    size_t n = sanitize_text_flags(text, in.n, out, outsz, flags);
    check_text(out, n, outsz, flags);
    free(out);

    char *dup = sanitize_dup(text, in.n, 256, flags);
    if (dup) {
        check_text(dup, strlen(dup), strlen(dup) + 1, flags);
        free(dup);
    }

    /* replay, in chunks, twice with a finish between (the filter may be fed again) */
    struct replay_out o = {0};
    struct sanitize_replay r;
    sanitize_replay_init(&r, replay_write, &o);
    uint32_t seed = mode | 1u;
    for (int round = 0; round < 2; round++) {
        struct fuzz_input rest = in;
        while (rest.n) {
            seed = seed * 1103515245u + 12345u;
            size_t k = fuzz_chunk(&rest, (uint8_t)(seed >> 16), 61);
            sanitize_replay_feed(&r, (const char *)rest.p, k);
            rest.p += k;
            rest.n -= k;
        }
        sanitize_replay_finish(&r);
        check_replay(&o);
    }
    free(o.data);

    size_t dlen = 0;
    char *rd = sanitize_replay_dup(text, in.n, &dlen);
    if (rd) {
        struct replay_out one = {rd, dlen, dlen};
        if (rd[dlen] != '\0')
            abort();
        check_replay(&one);
        free(rd);
    }
    return 0;
}
