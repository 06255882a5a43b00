/* Standard base64 (RFC 4648, with padding), for data: URLs of images, PDFs and videos. */
#ifndef PADDOCK_EXECUTOR_BASE64_H
#define PADDOCK_EXECUTOR_BASE64_H

#include <stddef.h>

#include "buf.h"

int base64_encode(struct buf *out, const unsigned char *data, size_t n);

#endif
