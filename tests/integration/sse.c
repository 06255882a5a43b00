/* The SSE client of sse.h. */
#include "sse.h"

#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void buf_append(char **b, size_t *len, const char *p, size_t n)
{
    char *nb = realloc(*b, *len + n + 1);
    assert_non_null(nb);
    memcpy(nb + *len, p, n);
    *len += n;
    nb[*len] = '\0';
    *b = nb;
}

static void buf_consume(char **b, size_t *len, size_t n)
{
    memmove(*b, *b + n, *len - n);
    *len -= n;
    (*b)[*len] = '\0';
}

struct sse *sse_open(const char *sock, const char *path)
{
    struct sse *s = calloc(1, sizeof(*s));
    assert_non_null(s);
    s->events = json_array();
    s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(s->fd >= 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
    assert_int_equal(connect(s->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    char *req = strdupf("GET %s HTTP/1.1\r\nHost: localhost\r\n"
                        "Accept: text/event-stream\r\n\r\n",
                        path);
    assert_int_equal(send(s->fd, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
    free(req);
    fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) | O_NONBLOCK);
    return s;
}

struct sse *sse_open_tcp(int port, const char *path, const char *token)
{
    struct sse *s = calloc(1, sizeof(*s));
    assert_non_null(s);
    s->events = json_array();
    s->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(s->fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(s->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    char *req = strdupf("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\n"
                        "Accept: text/event-stream\r\n\r\n",
                        path, port, token);
    assert_int_equal(send(s->fd, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
    free(req);
    fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) | O_NONBLOCK);
    return s;
}

void sse_close(struct sse *s)
{
    close(s->fd);
    free(s->raw);
    free(s->data);
    json_decref(s->events);
    free(s);
}

static void sse_parse_events(struct sse *s)
{
    char *end;
    while (s->dlen && (end = strstr(s->data, "\n\n"))) {
        size_t n = (size_t)(end - s->data) + 2;
        char *block = strndup(s->data, n - 2), *save = NULL;
        buf_consume(&s->data, &s->dlen, n);
        char *type = NULL, *data = NULL;
        for (char *l = strtok_r(block, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
            if (l[0] == ':')
                continue; /* comment: hello, ping */
            if (strncmp(l, "event: ", 7) == 0)
                type = l + 7;
            else if (strncmp(l, "data: ", 6) == 0)
                data = l + 6;
            else
                fail_msg("unexpected line in the event stream: %s", l);
        }
        if (type || data) {
            assert_non_null(type);
            assert_non_null(data);
            json_error_t e;
            json_t *j = json_loads(data, 0, &e);
            if (!j)
                fail_msg("event data is not JSON (%s): %s", e.text, data);
            json_array_append_new(s->events, json_pack("{s:s,s:o}", "type", type, "data", j));
        }
        free(block);
    }
}

static void sse_decode(struct sse *s)
{
    if (!s->status) {
        char *h = s->raw ? strstr(s->raw, "\r\n\r\n") : NULL;
        if (!h)
            return;
        *h = '\0';
        assert_int_equal(strncmp(s->raw, "HTTP/1.1 ", 9), 0);
        s->status = atoi(s->raw + 9);
        assert_int_equal(s->status, 200);
        assert_non_null(strcasestr(s->raw, "\r\nContent-Type: text/event-stream"));
        s->chunked = strcasestr(s->raw, "\r\nTransfer-Encoding: chunked") != NULL;
        buf_consume(&s->raw, &s->rlen, (size_t)(h - s->raw) + 4);
    }
    if (!s->chunked) {
        if (s->rlen)
            buf_append(&s->data, &s->dlen, s->raw, s->rlen);
        s->rlen = 0;
    } else {
        for (;;) {
            char *crlf = s->rlen ? strstr(s->raw, "\r\n") : NULL;
            if (!crlf)
                break;
            size_t size = strtoul(s->raw, NULL, 16);
            size_t head = (size_t)(crlf - s->raw) + 2;
            if (s->rlen < head + size + 2)
                break;
            if (size == 0) {
                s->eof = true;
                buf_consume(&s->raw, &s->rlen, s->rlen);
                break;
            }
            buf_append(&s->data, &s->dlen, s->raw + head, size);
            buf_consume(&s->raw, &s->rlen, head + size + 2);
        }
    }
    sse_parse_events(s);
}

/* Read what arrives within ms milliseconds. */
void sse_pump(struct sse *s, long ms)
{
    double deadline = now_ms() + ms;
    while (!s->eof) {
        long left = (long)(deadline - now_ms());
        if (left <= 0)
            break;
        struct pollfd p = {.fd = s->fd, .events = POLLIN};
        int n = poll(&p, 1, (int)left);
        if (n <= 0)
            continue;
        char buf[8192];
        ssize_t k = read(s->fd, buf, sizeof(buf));
        if (k > 0) {
            buf_append(&s->raw, &s->rlen, buf, (size_t)k);
            sse_decode(s);
        } else if (k == 0) {
            s->eof = true;
        } else if (errno != EAGAIN && errno != EINTR) {
            s->eof = true;
        }
        if (s->events && json_array_size(s->events))
            break; /* let the caller look */
    }
}

/* The first event of this type whose data has key == want (string), waiting up to ms. */
json_t *sse_wait(struct sse *s, const char *type, const char *key, const char *want,
                 const char *key2, const char *want2, long ms)
{
    double deadline = now_ms() + ms;
    for (;;) {
        size_t i;
        json_t *ev;
        json_array_foreach(s->events, i, ev)
        {
            json_t *d = json_object_get(ev, "data");
            if (strcmp(jstr(ev, "type"), type) != 0)
                continue;
            const char *v = jstr(d, key);
            if (!v || strcmp(v, want) != 0)
                continue;
            if (key2 && (!jstr(d, key2) || strcmp(jstr(d, key2), want2) != 0))
                continue;
            return d;
        }
        long left = (long)(deadline - now_ms());
        if (left <= 0 || s->eof)
            break;
        sse_pump(s, left < 200 ? left : 200);
    }
    char *all = json_dumps(s->events, JSON_COMPACT);
    fprintf(stderr, "no `%s` event with %s=%s%s%s%s within %ld ms; events so far: %s\n", type, key,
            want, key2 ? " and " : "", key2 ? key2 : "", key2 ? want2 : "", ms, all);
    free(all);
    return NULL;
}
