/* UTF-8 for every part: strict checks (RFC 3629: no overlongs, no surrogates, nothing past
 * U+10FFFF), decoding, encoding, counting and cutting at character boundaries, and repair. No
 * locale: display widths stay with the dashboard's wcwidth. */
#ifndef PADDOCK_COMMON_UTF8_H
#define PADDOCK_COMMON_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

/* A continuation byte (10xxxxxx): never the start of a character. */
static inline bool utf8_is_cont(unsigned char c)
{
    return (c & 0xC0) == 0x80;
}

/* The length of a character whose first byte is c: 1 (ASCII), 2..4 (a byte that can start a
 * well-formed character), or 0 (a continuation byte, C0/C1 (always overlong), F5..FF). */
size_t utf8_lead_len(unsigned char c);
/* The character at s[0..n), n >= 1: its length 1..4 when well-formed; 0 when ill-formed; -1
 * when the n bytes end inside a character that may still complete. On 0 and -1, *bad (when
 * not NULL) is the length of its maximal ill-formed subpart, the bytes one U+FFFD replaces
 * (as Python's bytes.decode("utf-8", "replace") does). */
int utf8_char_len(const char *s, size_t n, size_t *bad);
/* The well-formed character at s[0..n), n >= 1, into *cp: its length 1..4, or 0 when
 * ill-formed or incomplete (*cp is then the first byte's value, for callers that take a
 * stray byte as itself). */
size_t utf8_decode(const char *s, size_t n, uint32_t *cp);
/* The code point at s[0..n), n >= 1, and its length into *len, for text expected to be
 * UTF-8: a byte that starts no well-formed character counts as itself (length 1). */
uint32_t utf8_decode_lax(const char *s, size_t n, size_t *len);
/* cp as UTF-8 into out (room for 4 bytes): its length. A value with no UTF-8 form (a
 * surrogate, past U+10FFFF) is written as U+FFFD. (Not utf8_encode: the static jansson the
 * executor links exports that name.) */
size_t utf8_put(uint32_t cp, char *out);
/* Whether all of s[0..n) is well-formed (NUL bytes included). */
bool utf8_valid(const char *s, size_t n);

/* Characters in valid UTF-8 (the bytes that start one). */
size_t utf8_count(const char *s, size_t n);
/* Byte offset just after the first `chars` characters of valid UTF-8 (n if fewer). */
size_t utf8_offset(const char *s, size_t n, size_t chars);
/* Length of the character starting at s[0] as its bytes say: a lead byte (>= 0xC0) and the
 * continuation bytes after it, else 1 (n >= 1). */
size_t utf8_next(const char *s, size_t n);
/* Start of the last character of s[0..n) (0 when n is 0): back over at most three
 * continuation bytes. */
size_t utf8_prev(const char *s, size_t n);
/* The longest prefix of s[0..n) that splits no character: n, or the start of a last
 * character that the n bytes leave incomplete. */
size_t utf8_cut(const char *s, size_t n);

enum utf8_repair_flag {
    UTF8_REPAIR_NUL = 1,       /* NUL becomes U+FFFD too: the text goes on as a C string */
    UTF8_REPAIR_EACH_BYTE = 2, /* one U+FFFD per bad byte instead of per maximal subpart */
    UTF8_REPAIR_KEEP_TAIL = 4, /* an incomplete character at the end is left out and its
                                * length put in *tail (a stream: it starts the next chunk) */
};
/* Appends s[0..n) to out with each ill-formed sequence replaced by U+FFFD; flags are
 * UTF8_REPAIR_*. tail may be NULL without KEEP_TAIL. 0, or -1 out of memory. */
int utf8_repair(struct buf *out, const char *s, size_t n, unsigned flags, size_t *tail);

#endif
