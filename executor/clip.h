/* Bounded capture of a command's output.
 *
 * A command may print gigabytes; an observation shows at most the first and last 15,000 chars
 * of its right-stripped text. So the capture keeps the first CLIP_HEAD_MAX bytes and a ring of
 * the last CLIP_TAIL_MAX bytes (64 KiB each: enough for 15,000 chars of up to 4 bytes each).
 * Trailing whitespace is held apart until something else follows, so right-stripping never
 * throws away the real tail, however much whitespace a command prints at the end. */
#ifndef PADDOCK_EXECUTOR_CLIP_H
#define PADDOCK_EXECUTOR_CLIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define CLIP_HEAD_MAX 65536
#define CLIP_TAIL_MAX 65536

/* First head_max bytes, last tail_max bytes, and how many there were in all. */
struct clip {
    char *head;
    size_t head_len, head_cap;
    char *ring;
    size_t ring_start; /* index of the oldest byte in ring */
    size_t ring_len;
    uint64_t total;
    size_t head_max, tail_max;
};

struct capture {
    struct clip body; /* committed output: never ends in whitespace */
    struct clip ws;   /* trailing whitespace not yet followed by anything else */
};

/* head_max/tail_max: 0 selects the defaults; tests pass small ones. */
void capture_init(struct capture *c, size_t head_max, size_t tail_max);
int capture_append(struct capture *c, const char *data, size_t n);
bool capture_is_empty(const struct capture *c);
/* Appends the right-stripped, UTF-8-repaired, middle-truncated text to out. */
int capture_render(const struct capture *c, struct buf *out);
/* Forgets everything and gives memory back. */
void capture_reset(struct capture *c);

#endif
