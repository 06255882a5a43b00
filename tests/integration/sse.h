/* A minimal server-sent-events client for integration tests: HTTP/1.1 on a unix socket,
 * chunked transfer decoding, events parsed into JSON. */
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

/* GET path on the engine socket; asserts the connection. */
struct sse *sse_open(const char *sock, const char *path);
/* GET path on 127.0.0.1:port with "Authorization: Bearer <token>". */
struct sse *sse_open_tcp(int port, const char *path, const char *token);
void sse_close(struct sse *s);
/* Read what arrives within ms milliseconds (returns early once any event is in). */
void sse_pump(struct sse *s, long ms);
/* The first event of this type whose data has key == want (and key2 == want2 when key2 is
 * given), waiting up to ms; NULL (after printing what came) when none did. */
json_t *sse_wait(struct sse *s, const char *type, const char *key, const char *want,
                 const char *key2, const char *want2, long ms);

#endif
