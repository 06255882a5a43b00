/* Standard base64 (RFC 4648, with padding): data: URLs of the executor's images, PDFs and
 * videos; the engine's HTTP Basic credentials for git; the file contents of the operator's
 * reads (engine/browse.h), decoded by the CLI and the dashboard. */
#ifndef PADDOCK_COMMON_BASE64_H
#define PADDOCK_COMMON_BASE64_H

#include <stddef.h>

#include "common/buf.h"

/* Appends the encoding of data[0..n) to out. 0, or -1 out of memory (out unchanged). */
int base64_encode(struct buf *out, const unsigned char *data, size_t n);
/* Appends the bytes text[0..n) encodes (padding required). 0, or -1 when text is not base64
 * or out of memory (out unchanged). */
int base64_decode(struct buf *out, const char *text, size_t n);

#endif
