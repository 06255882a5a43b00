/* Bytes from containers as valid UTF-8 for JSON and the store. */
#ifndef PADDOCK_UTF8_H
#define PADDOCK_UTF8_H

#include <stddef.h>

/* Length of a well-formed sequence at p (1..4), 0 when p starts an invalid one, or -1 when the
 * n bytes end inside a sequence that may still complete. */
int utf8_seq_len(const unsigned char *p, size_t n);
/* Copy of p with each invalid byte and each NUL replaced by U+FFFD; malloc'd, NUL-terminated,
 * its length in *out_len. With keep_tail, an incomplete sequence at the end is left out and
 * its length put in *tail (for a stream: prepend those bytes to the next chunk). */
char *utf8_repair(const char *p, size_t n, int keep_tail, size_t *out_len, size_t *tail);

#endif
