/* The growable byte buffer: one container for bytes in every part (engine, client, dashboard
 * and the static executor), as git has one strbuf. */
#ifndef PADDOCK_COMMON_BUF_H
#define PADDOCK_COMMON_BUF_H

#include <stddef.h>

struct buf {
    char *data; /* always NUL-terminated when non-NULL, so text can be used as a C string */
    size_t len;
    size_t cap;
};

#define BUF_INIT                                                                                   \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

/* All return 0, or -1 when memory runs out (the buffer is then unchanged). */
int buf_reserve(struct buf *b, size_t extra);
int buf_append(struct buf *b, const void *data, size_t n);
int buf_append_str(struct buf *b, const char *s);
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Drops the first n bytes (n <= len), keeping the storage. */
void buf_consume(struct buf *b, size_t n);
void buf_reset(struct buf *b);
void buf_free(struct buf *b);
/* Hands the bytes over to the caller (never NULL unless allocation failed) and empties b. */
char *buf_steal(struct buf *b);

#endif
