/* A minimal server-sent-events client for the engine's GET /v1/events on a raw unix socket:
 * HTTP/1.1, chunked transfer decoding, event parsing (cmocka assertions on protocol errors). */
#ifndef PADDOCK_TESTS_SSE_H
#define PADDOCK_TESTS_SSE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct sse {
    int fd;
    char *raw; /* bytes not yet decoded */
    size_t rlen;
    int status; /* HTTP status, 0 before the headers */
    bool chunked;
    char *data; /* decoded body not yet split into events */
    size_t dlen;
    json_t *events; /* [{"type", "data"}...] in arrival order */
    bool eof;
};

/* Connect and send the request; the headers arrive with the first sse_pump. */
struct sse *sse_open(const char *sock);
void sse_close(struct sse *s);
/* Read what arrives within ms milliseconds (returns early once events are there). */
void sse_pump(struct sse *s, long ms);
/* The first event of this type whose data has key == want (and key2 == want2 when key2 is not
 * NULL), waiting up to ms; NULL (after printing what came) when none. */
json_t *sse_wait(struct sse *s, const char *type, const char *key, const char *want,
                 const char *key2, const char *want2, long ms);

#endif
