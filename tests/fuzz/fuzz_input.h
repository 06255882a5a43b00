/* Reading a fuzz input as the bytes a target decides with (chunk sizes, modes) followed by the
 * payload. Shared by the fuzz_*.c targets only. */
#ifndef PADDOCK_FUZZ_INPUT_H
#define PADDOCK_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

struct fuzz_input {
    const uint8_t *p;
    size_t n;
};

/* The next byte (0 once the input is used up). */
static inline uint8_t fuzz_byte(struct fuzz_input *in)
{
    if (in->n == 0)
        return 0;
    in->n--;
    return *in->p++;
}

/* A chunk of 1 to max bytes (fewer at the end) taken from the front, its length chosen by a
 * byte of the input itself so the fuzzer explores every split of a stream. */
static inline size_t fuzz_chunk(struct fuzz_input *in, uint8_t sel, size_t max)
{
    size_t want = 1 + (size_t)sel % (max ? max : 1);
    return want < in->n ? want : in->n;
}

#endif
