/* Standard base64 (RFC 4648, with padding): data: URLs of the executor's images, PDFs and
 * videos; the engine's HTTP Basic credentials for git. */
#ifndef PADDOCK_COMMON_BASE64_H
#define PADDOCK_COMMON_BASE64_H

#include <stddef.h>

#include "common/buf.h"

/* Appends the encoding of data[0..n) to out. 0, or -1 out of memory (out unchanged). */
int base64_encode(struct buf *out, const unsigned char *data, size_t n);

#endif
