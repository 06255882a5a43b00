/* What the bench's parts share. */
#ifndef PADDOCK_BENCH_H
#define PADDOCK_BENCH_H

#include <curl/curl.h>
#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

struct timings {
    double *v;
    size_t n, cap;
};
void timings_add(struct timings *s, double x);
double timings_pct(struct timings *s, double p);
double now_ms(void);
/* A reply body as libcurl writes it (bench_on_body appends; p is NUL-terminated, malloc'd). */
struct bench_body {
    char *p;
    size_t n;
};
size_t bench_on_body(char *p, size_t sz, size_t n, void *ud);
/* One keep-alive request on handle e over a unix socket (req.c); the HTTP status (-1:
 * transport). */
long req_on(CURL *e, const char *sock, const char *method, const char *path, const char *payload,
            json_t **out);
long proc_status_kb(pid_t pid, const char *field);

/* The history part (history.c): a store of n actions, then pages and searches on it. */
void bench_history(const char *paddock, long n);

#endif
