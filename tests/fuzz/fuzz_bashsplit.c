/* executor/bashsplit.c: the command text of a `run` action, as the agent sent it. Every span
 * must lie inside the text, in order, and without overlap. */
#include "bashsplit.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct bashsplit_span *spans = NULL;
    int n = bashsplit_split((const char *)data, size, &spans);
    if (n < 0 && spans)
        abort();
    size_t end = 0;
    for (int i = 0; i < n; i++) {
        if (spans[i].start < end || spans[i].start > size || spans[i].len > size - spans[i].start)
            abort();
        end = spans[i].start + spans[i].len;
    }
    free(spans);
    return 0;
}
