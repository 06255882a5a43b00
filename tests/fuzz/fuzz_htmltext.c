/* executor/htmltext.c: a web page the browse action fetched, any bytes a site serves. The
 * text may only shrink a page or decode its references: it never holds a NUL byte the page
 * did not have and stays within a small multiple of the input. */
#include "htmltext.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct buf out = {0};
    if (htmltext_render(&out, (const char *)data, size) == 0) {
        /* a reference (&#x10FFFF; is 4 bytes of UTF-8) never outgrows its spelling */
        if (out.len > 4 * size + 4)
            abort();
        if (memchr(out.data ? out.data : "", '\0', out.len) && !memchr(data, '\0', size))
            abort();
    }
    buf_free(&out);
    return 0;
}
