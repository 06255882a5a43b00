/* common/base64.c: the file contents of the operator's reads, base64 as the sandbox's executor
 * sent them, decoded by the CLI and the dashboard. Any text decodes or is refused, a decoded
 * text is 3/4 of its length at most, and every byte string survives encoding and decoding. */
#include "common/base64.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct buf out = {0};
    if (base64_decode(&out, (const char *)data, size) == 0 && out.len > size / 4 * 3)
        abort();
    buf_free(&out);

    struct buf enc = {0}, dec = {0};
    if (base64_encode(&enc, data, size) == 0) {
        if (base64_decode(&dec, enc.data ? enc.data : "", enc.len) < 0 || dec.len != size ||
            (size && memcmp(dec.data, data, size) != 0))
            abort();
    }
    buf_free(&enc);
    buf_free(&dec);
    return 0;
}
