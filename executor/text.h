/* Text rules of observations: whitespace, the 30,000-char cap, number format. */
#ifndef PADDOCK_EXECUTOR_TEXT_H
#define PADDOCK_EXECUTOR_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/buf.h"

/* OpenHands caps observation content at 30,000 chars: first 15,000 + marker + last 15,000. */
#define TEXT_MAX_CHARS 30000
#define TEXT_TRUNCATION_MARKER "\n[... Observation truncated due to length ...]\n"

/* Whitespace as Python's str.rstrip() sees it, restricted to single bytes. */
bool text_is_space(unsigned char c);
/* Length of s without trailing whitespace. */
size_t text_rstrip_len(const char *s, size_t n);

/* Cuts valid UTF-8 in b down to TEXT_MAX_CHARS as OpenHands does. Returns -1 on no memory. */
int text_truncate_middle(struct buf *b);

/* Python's repr() of a float, e.g. 1 -> "1.0", 2.5 -> "2.5", 120 -> "120.0". */
void text_format_float(char *out, size_t outlen, double v);
/* Python's str() of an int when v is whole ("10"), otherwise as text_format_float ("0.5"). */
void text_format_number(char *out, size_t outlen, double v);

#endif
