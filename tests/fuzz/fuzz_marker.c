/* executor/marker.c: the shell's pty stream, which carries whatever the agent's commands
 * print, fake markers included. The tags are fixed (the real ones hold a random nonce); the
 * first byte seeds the read sizes. Output and markers together never exceed the input, and
 * a marker's texts are NUL-terminated within their fields. */
#include "marker.h"

#include "fuzz_input.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
    size_t output;
};

static void on_output(void *ctx, const char *d, size_t n)
{
    struct seen *s = ctx;
    s->output += n;
}

static void on_found(void *ctx, const struct marker_info *m)
{
    if (!memchr(m->hostname, '\0', sizeof(m->hostname)) ||
        !memchr(m->path, '\0', sizeof(m->path)) || !memchr(m->cwd, '\0', sizeof(m->cwd)))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_input in = {data, size};
    uint32_t seed = fuzz_byte(&in) | 1u;
    size_t total = in.n;
    struct marker_parser p;
    if (marker_parser_init(&p, "\036PDKn0nce{", "}n0nceKDP__") < 0)
        abort();
    struct seen s = {0};
    const struct marker_sink sink = {on_output, on_found, &s};
    while (in.n) {
        seed = seed * 1103515245u + 12345u;
        size_t n = fuzz_chunk(&in, (uint8_t)(seed >> 16), 200);
        if (marker_feed(&p, (const char *)in.p, n, &sink) < 0)
            break;
        in.p += n;
        in.n -= n;
    }
    marker_flush(&p, &sink);
    if (s.output > total)
        abort();
    marker_parser_free(&p);
    return 0;
}
