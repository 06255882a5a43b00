/* executor/multipart.c: an upload's Content-Type header and body, as any client of the
 * executor sends them. Input: a seed byte for the chunk sizes, the Content-Type value up to
 * the first '\n', then the body, fed in pieces of 1 to 64 bytes. Parts must be reported as
 * begin, data..., end, never interleaved. */
#include "multipart.h"

#include "fuzz_input.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct parts {
    bool open;
    size_t count, bytes;
};

static int on_begin(void *ctx, const char *name, const char *filename)
{
    struct parts *p = ctx;
    if (p->open || !name)
        abort();
    p->open = true;
    p->count++;
    return 0;
}

static int on_data(void *ctx, const char *d, size_t n)
{
    struct parts *p = ctx;
    if (!p->open || (n && !d))
        abort();
    p->bytes += n;
    return 0;
}

static int on_end(void *ctx)
{
    struct parts *p = ctx;
    if (!p->open)
        abort();
    p->open = false;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_input in = {data, size};
    uint32_t seed = fuzz_byte(&in) | 1u;
    const uint8_t *nl = memchr(in.p, '\n', in.n);
    size_t ct_len = nl ? (size_t)(nl - in.p) : in.n;
    char *ct = strndup((const char *)in.p, ct_len);
    if (!ct)
        return 0;
    in.p += ct_len + (nl != NULL);
    in.n -= ct_len + (nl != NULL);

    char boundary[MULTIPART_BOUNDARY_MAX + 1];
    if (multipart_boundary(ct, boundary, sizeof(boundary)) < 0)
        strcpy(boundary, "fuzz");
    free(ct);
    size_t blen = strlen(boundary);
    if (blen < 1 || blen > MULTIPART_BOUNDARY_MAX)
        abort();

    struct parts parts = {0};
    struct multipart mp;
    const struct multipart_handler h = {on_begin, on_data, on_end, &parts};
    multipart_init(&mp, boundary, &h);
    struct buf err = {0};
    while (in.n) {
        seed = seed * 1103515245u + 12345u;
        size_t n = fuzz_chunk(&in, (uint8_t)(seed >> 16), 64);
        if (multipart_feed(&mp, (const char *)in.p, n, &err) < 0)
            break;
        in.p += n;
        in.n -= n;
    }
    multipart_complete(&mp);
    multipart_free(&mp);
    buf_free(&err);
    return 0;
}
