/* Newline-delimited JSON arriving in chunks (Docker's events, stats, build and pull streams). */
#ifndef PADDOCK_JSONL_H
#define PADDOCK_JSONL_H

#include "common/buf.h"

#include <jansson.h>
#include <stddef.h>

/* A line longer than this is refused: a stream that never sends '\n' must not grow forever. */
#define JSONL_MAX_LINE (4u * 1024 * 1024)

struct jsonl {
    struct buf pending; /* the unfinished last line */
};

/* Called for each complete non-empty line: obj is the parsed value (borrowed), or NULL when the
 * line is not JSON (then line/len hold the raw text). Return 0 to go on, -1 to stop feeding. */
typedef int (*jsonl_fn)(json_t *obj, const char *line, size_t len, void *ud);

/* Feed a chunk. Returns 0; -1 when fn stopped it or a line passed JSONL_MAX_LINE (or memory
 * ran out); the caller then drops the stream. */
int jsonl_feed(struct jsonl *j, const char *p, size_t n, jsonl_fn fn, void *ud);
/* A stream's end: hand over a last line that had no '\n'. Same return as jsonl_feed. */
int jsonl_finish(struct jsonl *j, jsonl_fn fn, void *ud);
void jsonl_free(struct jsonl *j);

#endif
