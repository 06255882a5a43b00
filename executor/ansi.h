/* Drops ANSI colour codes from a byte stream, as OpenHands' Jupyter output does: exactly the
 * sequences ESC [ n m, ESC [ n;n m and ESC [ n;n;n m (n: one or more digits). Anything else
 * passes unchanged. Sequences may be split across feeds anywhere. */
#ifndef PADDOCK_EXECUTOR_ANSI_H
#define PADDOCK_EXECUTOR_ANSI_H

#include <stddef.h>

#define ANSI_HELD_MAX 64

struct ansi_filter {
    char held[ANSI_HELD_MAX]; /* a possible colour code, not yet decided */
    size_t len;
    int state;
    int params; /* numbers seen in the held sequence */
};

typedef void (*ansi_out_fn)(void *ctx, const char *data, size_t n);

void ansi_filter_init(struct ansi_filter *f);
/* Passes the bytes of data that are not colour codes to out, in order. */
void ansi_filter_feed(struct ansi_filter *f, const char *data, size_t n, ansi_out_fn out,
                      void *ctx);
/* End of stream: bytes held back were not a colour code after all. */
void ansi_filter_flush(struct ansi_filter *f, ansi_out_fn out, void *ctx);

#endif
