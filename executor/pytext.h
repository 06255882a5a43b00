/* Python's str semantics over UTF-8 text, where OpenHands' output depends on them.
 *
 * The editor's messages and line handling come from Python code: str.strip(),
 * str.splitlines(), text files opened with universal newlines, repr() of values in error
 * messages, len() in code points. These functions reproduce those rules on UTF-8 bytes, so
 * that the texts the executor produces are the ones OpenHands produces. */
#ifndef PADDOCK_EXECUTOR_PYTEXT_H
#define PADDOCK_EXECUTOR_PYTEXT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/buf.h"

/* Length of the whitespace character (str.isspace) at s[0..n), or 0 when there is none. */
size_t pytext_space_at(const char *s, size_t n);
/* Offset of the first non-whitespace character (str.lstrip). */
size_t pytext_lstrip(const char *s, size_t n);
/* Length without trailing whitespace (str.rstrip). */
size_t pytext_rstrip(const char *s, size_t n);

/* str.splitlines(): the line starting at pos ends at the returned offset (its separator
 * excluded); *next is where the following line starts. Separators: \n, \r\n, \r, \v, \f,
 * \x1c-\x1e, U+0085, U+2028, U+2029. */
size_t pytext_line_end(const char *s, size_t n, size_t pos, size_t *next);

/* Appends s with "\r\n" and lone "\r" turned into "\n", as a text file opened with
 * universal newlines reads it. */
int pytext_universal_newlines(struct buf *out, const char *s, size_t n);

/* Cuts s (valid UTF-8 in b) after max_chars code points and appends notice, as
 * openhands-aci's maybe_truncate does; shorter text is left alone. */
int pytext_truncate(struct buf *b, size_t max_chars, const char *notice);

/* repr() of a str: quotes chosen as Python chooses them, escapes as Python writes them. */
int pytext_repr_str(struct buf *out, const char *s, size_t n);
/* repr() of a JSON value as Python holds it after json.loads (None, True, 1, 1.5, 'x',
 * [..], {..}). */
int pytext_repr_json(struct buf *out, const json_t *v);
/* str() of a JSON value: strings as they are, everything else as repr(). */
int pytext_str_json(struct buf *out, const json_t *v);
/* repr() of a list of ints: "[1, 2, 3]". */
int pytext_repr_longs(struct buf *out, const long *v, size_t n);

/* int(s) for a str: surrounding whitespace, a sign, ASCII digits with single underscores
 * between them. Returns -1 when Python would raise ValueError (or the value overflows). */
int pytext_parse_int(const char *s, size_t n, long *out);

#endif
