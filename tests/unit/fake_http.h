/* A fake HTTP/1.1 server on a unix socket, run by a loop (engine/base/loop.h): the plumbing of
 * the unit tests' fake Docker daemon (test_docker_fake.c, test_approvals_fake.c) and fake
 * executor. Each request (head and Content-Length body) goes to the route callback; a
 * connection marked raw (an upgraded exec stream) hands its bytes to on_raw instead. It never
 * asserts (it may run on a thread of its own): failures show as the client's errors. */
#ifndef PADDOCK_TEST_FAKE_HTTP_H
#define PADDOCK_TEST_FAKE_HTTP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct loop;
struct fake_http;

struct fake_conn {
    struct fake_http *srv;
    int fd;
    bool raw; /* upgraded: bytes go to on_raw */
    char *in; /* unread bytes (malloc'd, NUL-terminated) */
    size_t len;
    size_t cap;
};

/* method: "GET"; path: as requested ("/v1.45/containers/json?all=1"); head: the whole head;
 * body: the body, NUL-terminated. All borrowed for the call. */
typedef void (*fake_route_fn)(struct fake_conn *c, const char *method, const char *path,
                              const char *head, const char *body, void *ud);
/* Bytes arrived on a raw connection: c->in, c->len (the callback consumes them). */
typedef void (*fake_raw_fn)(struct fake_conn *c, void *ud);

/* Listens on path (an existing file there is removed first); NULL on failure. */
struct fake_http *fake_http_listen(struct loop *l, const char *path, fake_route_fn route,
                                   fake_raw_fn on_raw, void *ud);
/* Closes every connection and the socket, and removes its file. */
void fake_http_free(struct fake_http *s);

/* The whole of n bytes, or false. */
bool fake_http_put(int fd, const void *p, size_t n);
/* A complete reply with Content-Length; extra_headers: "Name: value\r\n" lines or NULL. */
void fake_http_reply(struct fake_conn *c, int code, const char *extra_headers, const char *body);
/* The head of a reply that never ends (chunked, no chunk yet): a stream the client follows,
 * for Docker's events and stats. The connection stays open until the client or free closes
 * it. */
void fake_http_hold(struct fake_conn *c);
void fake_http_close(struct fake_conn *c);

/* One request to the engine listening on sock: *status is its HTTP status, or -1 when it did
 * not answer within timeout_ms; the JSON reply (the caller's), or NULL. */
json_t *fake_engine_api(const char *sock, const char *method, const char *path, const char *body,
                        long timeout_ms, long *status);

/* engine_serve in a process of its own, on state_dir and sock, with executor, docker_host and
 * confirm (NULL: the engine's defaults). The test binary is executed again rather than only
 * forked: a fork of a process with threads (the fakes' loop) may inherit a lock another thread
 * held (ASan's allocator, stdio) and hang before the engine answers. The pid, or -1. */
int fake_engine_spawn(const char *state_dir, const char *sock, const char *executor,
                      const char *docker_host, const char *confirm);
/* First thing in main(): when argv is fake_engine_spawn's, runs the engine and exits. */
void fake_engine_main(int argc, char **argv);

#endif
