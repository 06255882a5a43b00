/* Placing pieces of a running action's output by their offset (live_output.h). */
#include "client/live_output.h"

size_t live_output_place(struct live_output *lo, uint64_t offset, size_t len, size_t *skip,
                         uint64_t *missed)
{
    *skip = 0;
    *missed = 0;
    if (offset + len <= lo->next)
        return 0;
    if (offset < lo->next)
        *skip = (size_t)(lo->next - offset);
    else
        *missed = offset - lo->next;
    lo->next = offset + len;
    return len - *skip;
}
