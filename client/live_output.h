/* A running action's output as it arrives, from any of the engine's sources (GET
 * /v1/actions/{id}/output, `action_output` events, a follow stream's `output` events): each
 * piece carries its byte offset in the action's output, so a piece seen twice (a reply and an
 * event that overlap) is taken once, and a gap (text the engine no longer kept, or events
 * skipped in a burst) is counted instead of silently joined. */
#ifndef PADDOCK_CLIENT_LIVE_OUTPUT_H
#define PADDOCK_CLIENT_LIVE_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

struct live_output {
    uint64_t next; /* the offset of the next byte not yet taken */
};

/* A piece of len bytes at offset: how many of its last bytes are new (0: all seen). *skip is
 * set to how many of its first bytes were seen before, *missed to how many bytes before it
 * never arrived. */
size_t live_output_place(struct live_output *lo, uint64_t offset, size_t len, size_t *skip,
                         uint64_t *missed);

#endif
