/* A streaming parser of multipart/form-data bodies (RFC 7578, RFC 2046 §5.1).
 *
 * Bytes are fed as they arrive, in pieces of any size; each part is reported as it begins
 * (its form field name and file name), then its content in pieces, then its end. Nothing but
 * one part's header block (at most MULTIPART_HEADERS_MAX bytes) is ever buffered: the
 * delimiter search keeps only how much of the delimiter matched so far. */
#ifndef PADDOCK_EXECUTOR_MULTIPART_H
#define PADDOCK_EXECUTOR_MULTIPART_H

#include <stdbool.h>
#include <stddef.h>

#include "common/buf.h"

#define MULTIPART_BOUNDARY_MAX 70   /* RFC 2046: 1 to 70 characters */
#define MULTIPART_HEADERS_MAX 16384 /* one part's header block */

struct multipart_handler {
    /* A part begins. name: the form field ("" when the part has none); filename: NULL when
     * the part is not a file (no filename parameter). */
    int (*begin)(void *ctx, const char *name, const char *filename);
    int (*data)(void *ctx, const char *data, size_t n);
    int (*end)(void *ctx);
    void *ctx;
};

enum multipart_state {
    MULTIPART_PREAMBLE,
    MULTIPART_AFTER_DELIMITER,
    MULTIPART_HEADERS,
    MULTIPART_DATA,
    MULTIPART_DONE,
};

struct multipart {
    struct multipart_handler h;
    enum multipart_state state;
    char delim[4 + MULTIPART_BOUNDARY_MAX + 1]; /* "\r\n--" boundary */
    size_t delim_len;
    size_t fail[4 + MULTIPART_BOUNDARY_MAX + 1]; /* KMP failure function of delim */
    size_t match;                                /* delimiter bytes matched so far */
    int after;                                   /* progress through "--" or padding + CRLF */
    struct buf headers;
    bool in_part;
};

/* The boundary parameter of a Content-Type header value `multipart/form-data; boundary=X`
 * (token or quoted string). Returns 0, or -1 when the value is not multipart/form-data with a
 * valid boundary. */
int multipart_boundary(const char *content_type, char *out, size_t outlen);

/* boundary: 1 to MULTIPART_BOUNDARY_MAX bytes. */
void multipart_init(struct multipart *mp, const char *boundary, const struct multipart_handler *h);
/* Returns 0, or -1 with a message in err when the body is malformed or a handler returned
 * nonzero (then err holds nothing from here). After an error, feed no more. */
int multipart_feed(struct multipart *mp, const char *data, size_t n, struct buf *err);
/* True once the closing delimiter has been seen (what follows it is ignored). */
bool multipart_complete(const struct multipart *mp);
void multipart_free(struct multipart *mp);

#endif
