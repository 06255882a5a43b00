/* The terminal connection (client/client_term.c): the upgrade reply's parser, and the state
 * machine against a fake engine on a unix socket in this process (the request as sent, nothing
 * typed goes out before the 101, bytes after the head delivered, refusals with their message,
 * the outgoing buffer under back-pressure, half-close, the end). */
#include "client/client_term.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* ---- the parser ---- */

static void test_parse_upgrade(void **state)
{
    (void)state;
    const char *r = "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n"
                    "x-paddock-terminal:  0a1b2c3d4e5f6789 \r\n\r\nhello";
    struct client_term_reply out;
    assert_int_equal(client_term_parse_reply(r, strlen(r), &out), 1);
    assert_int_equal(out.status, 101);
    assert_string_equal(out.tid, "0a1b2c3d4e5f6789");
    assert_int_equal(out.head_len, strlen(r) - 5);
    assert_int_equal(out.content_length, -1);
}

static void test_parse_partial(void **state)
{
    (void)state;
    const char *r = "HTTP/1.1 101 Switching Protocols\r\nX-Paddock-Terminal: ab\r\n\r\n";
    struct client_term_reply out;
    /* every prefix short of the blank line asks for more */
    for (size_t n = 0; n < strlen(r); n++)
        assert_int_equal(client_term_parse_reply(r, n, &out), 0);
    assert_int_equal(client_term_parse_reply(r, strlen(r), &out), 1);
    assert_string_equal(out.tid, "ab");
}

static void test_parse_refusal(void **state)
{
    (void)state;
    const char *r = "HTTP/1.1 409 Conflict\r\nContent-Type: application/json\r\n"
                    "Content-Length: 57\r\n\r\n{\"error\"";
    struct client_term_reply out;
    assert_int_equal(client_term_parse_reply(r, strlen(r), &out), 1);
    assert_int_equal(out.status, 409);
    assert_int_equal(out.content_length, 57);
    assert_string_equal(out.tid, "");
}

static void test_parse_bad(void **state)
{
    (void)state;
    struct client_term_reply out;
    assert_int_equal(client_term_parse_reply("SSH-2.0-x\r\n\r\n", 13, &out), -1);
    assert_int_equal(client_term_parse_reply("HTTX", 4, &out), -1);
    assert_int_equal(client_term_parse_reply("HTTP/1.1 abc\r\n\r\n", 16, &out), -1);
    assert_int_equal(client_term_parse_reply("HTTP/1.1 1012\r\n\r\n", 17, &out), -1);
    /* an id that could climb out of a URL path is no id */
    const char *r = "HTTP/1.1 101 OK\r\nX-Paddock-Terminal: ../../v1/x\r\n\r\n";
    assert_int_equal(client_term_parse_reply(r, strlen(r), &out), 1);
    assert_string_equal(out.tid, "");
    /* a head that never ends */
    size_t big = 20000;
    char *b = malloc(big);
    assert_non_null(b);
    memcpy(b, "HTTP/1.1 101 OK\r\n", 17);
    memset(b + 17, 'a', big - 17);
    assert_int_equal(client_term_parse_reply(b, big, &out), -1);
    free(b);
}

/* ---- the connection against a fake engine ---- */

struct fake {
    char dir[40], path[80];
    int listen_fd, peer;
};

static void fake_start(struct fake *f)
{
    snprintf(f->dir, sizeof(f->dir), "/tmp/paddock-term-test.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof(f->path), "%s/engine.sock", f->dir);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->path);
    f->listen_fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(f->listen_fd >= 0);
    assert_int_equal(bind(f->listen_fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(f->listen_fd, 4), 0);
    f->peer = -1;
}

static void fake_accept(struct fake *f)
{
    f->peer = accept(f->listen_fd, NULL, NULL);
    assert_true(f->peer >= 0);
}

/* A fake engine and a connection to it, accepted. */
static struct client_term *fake_open(struct fake *f, const char *path)
{
    fake_start(f);
    char *err = NULL;
    struct client_term *t = client_term_open(f->path, path, &err);
    assert_non_null(t);
    assert_null(err);
    fake_accept(f);
    return t;
}

static void fake_stop(struct fake *f)
{
    if (f->peer >= 0)
        close(f->peer);
    close(f->listen_fd);
    unlink(f->path);
    rmdir(f->dir);
}

static void fake_send(struct fake *f, const char *s)
{
    assert_int_equal(write(f->peer, s, strlen(s)), (ssize_t)strlen(s));
}

/* What the peer has received, waiting up to a second for at least want bytes. */
static size_t fake_recv(struct fake *f, char *buf, size_t sz, size_t want)
{
    size_t n = 0;
    while (n < want && n + 1 < sz) {
        struct pollfd p = {.fd = f->peer, .events = POLLIN};
        if (poll(&p, 1, 1000) <= 0)
            break;
        ssize_t r = read(f->peer, buf + n, sz - 1 - n);
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    buf[n] = '\0';
    return n;
}

/* Nothing more is waiting for the peer right now. */
static bool fake_quiet(struct fake *f)
{
    struct pollfd p = {.fd = f->peer, .events = POLLIN};
    return poll(&p, 1, 50) == 0;
}

struct got {
    char data[4096];
    size_t len;
};

static void on_data(const char *d, size_t n, void *ud)
{
    struct got *g = ud;
    assert_true(g->len + n < sizeof(g->data));
    memcpy(g->data + g->len, d, n);
    g->len += n;
    g->data[g->len] = '\0';
}

/* Pump until the state leaves from (or a second passes). */
static enum client_term_state pump_until_not(struct client_term *t, enum client_term_state from,
                                             struct got *g)
{
    enum client_term_state s = client_term_state(t);
    for (int i = 0; i < 100 && s == from; i++) {
        struct pollfd p = {.fd = client_term_fd(t), .events = client_term_events(t)};
        poll(&p, 1, 10);
        s = client_term_pump(t, p.revents, on_data, g);
    }
    return s;
}

static void test_upgrade_and_bytes(void **state)
{
    (void)state;
    struct fake f;
    fake_start(&f);
    char *err = NULL;
    struct client_term *t =
        client_term_open(f.path, "/v1/sessions/s1/terminal?rows=5&cols=7", &err);
    assert_non_null(t);
    assert_null(err);
    fake_accept(&f);
    struct got g = {0};
    assert_int_equal(client_term_pump(t, POLLOUT, on_data, &g), CLIENT_TERM_CONNECTING);
    /* typed before the 101: held back */
    assert_int_equal(client_term_send(t, "early", 5), 0);
    assert_int_equal(client_term_pending(t), 5);
    char req[2048];
    fake_recv(&f, req, sizeof(req), 1);
    for (int i = 0; i < 50 && !strstr(req, "\r\n\r\n"); i++)
        fake_recv(&f, req + strlen(req), sizeof(req) - strlen(req), 1);
    assert_non_null(strstr(req, "POST /v1/sessions/s1/terminal?rows=5&cols=7 HTTP/1.1\r\n"));
    assert_non_null(strstr(req, "Connection: Upgrade\r\n"));
    assert_non_null(strstr(req, "Upgrade: tcp\r\n"));
    assert_string_equal(strstr(req, "\r\n\r\n"), "\r\n\r\n"); /* nothing after the request */
    assert_true(fake_quiet(&f));
    /* the reply in pieces, the first output glued to the head */
    fake_send(&f, "HTTP/1.1 101 Switching Protocols\r\nX-Paddock-");
    assert_int_equal(pump_until_not(t, CLIENT_TERM_CONNECTING, &g), CLIENT_TERM_CONNECTING);
    fake_send(&f, "Terminal: 00ff\r\n\r\n$ ");
    assert_int_equal(pump_until_not(t, CLIENT_TERM_CONNECTING, &g), CLIENT_TERM_OPEN);
    assert_string_equal(client_term_id(t), "00ff");
    assert_string_equal(g.data, "$ ");
    char in[64];
    fake_recv(&f, in, sizeof(in), 5);
    assert_string_equal(in, "early"); /* sent once upgraded */
    assert_int_equal(client_term_send(t, "ls\r", 3), 0);
    fake_recv(&f, in, sizeof(in), 3);
    assert_string_equal(in, "ls\r");
    fake_send(&f, "a b c\r\n");
    g.len = 0;
    for (int i = 0; i < 100 && g.len < 7; i++) {
        struct pollfd p = {.fd = client_term_fd(t), .events = client_term_events(t)};
        poll(&p, 1, 10);
        client_term_pump(t, p.revents, on_data, &g);
    }
    assert_string_equal(g.data, "a b c\r\n");
    /* the command ends: the engine closes */
    close(f.peer);
    f.peer = -1;
    assert_int_equal(pump_until_not(t, CLIENT_TERM_OPEN, &g), CLIENT_TERM_CLOSED);
    assert_int_equal(client_term_fd(t), -1);
    assert_int_equal(client_term_send(t, "x", 1), -1);
    client_term_close(t);
    fake_stop(&f);
}

static void test_refused(void **state)
{
    (void)state;
    struct fake f;
    struct client_term *t = fake_open(&f, "/v1/sessions/s1/terminal");
    struct got g = {0};
    const char *body = "{\"error\":{\"code\":\"conflict\",\"message\":\"session s1 is paused\"}}";
    char head[200];
    snprintf(head, sizeof(head),
             "HTTP/1.1 409 Conflict\r\nContent-Length: %zu\r\n\r\n{\"error\":", strlen(body));
    fake_send(&f, head);
    assert_int_equal(pump_until_not(t, CLIENT_TERM_CONNECTING, &g), CLIENT_TERM_CONNECTING);
    fake_send(&f, body + 9); /* the rest of the body; the connection stays open */
    assert_int_equal(pump_until_not(t, CLIENT_TERM_CONNECTING, &g), CLIENT_TERM_FAILED);
    assert_string_equal(client_term_error(t), "session s1 is paused");
    assert_int_equal(g.len, 0);
    client_term_close(t);
    fake_stop(&f);
}

static void test_closed_before_reply(void **state)
{
    (void)state;
    struct fake f;
    struct client_term *t = fake_open(&f, "/v1/sessions/s1/terminal");
    fake_send(&f, "HTTP/1.1 101 Swi");
    close(f.peer);
    f.peer = -1;
    struct got g = {0};
    assert_int_equal(pump_until_not(t, CLIENT_TERM_CONNECTING, &g), CLIENT_TERM_FAILED);
    assert_non_null(strstr(client_term_error(t), "closed the connection"));
    client_term_close(t);
    fake_stop(&f);
}

static void test_no_engine(void **state)
{
    (void)state;
    char *err = NULL;
    assert_null(client_term_open("/nonexistent/paddock/engine.sock", "/", &err));
    assert_non_null(err);
    assert_non_null(strstr(err, "/nonexistent/paddock/engine.sock"));
    free(err);
}

/* A peer that does not read: what is typed waits in the buffer (POLLOUT asked), up to the
 * bound; once the peer reads, it all goes, in order; a half-close follows the last byte. */
static void test_backpressure_and_half_close(void **state)
{
    (void)state;
    struct fake f;
    struct client_term *t = fake_open(&f, "/t");
    struct got g = {0};
    fake_send(&f, "HTTP/1.1 101 Switching Protocols\r\nX-Paddock-Terminal: 1\r\n\r\n");
    assert_int_equal(pump_until_not(t, CLIENT_TERM_CONNECTING, &g), CLIENT_TERM_OPEN);
    char req[1024];
    fake_recv(&f, req, sizeof(req), 1);
    static char chunk[65536];
    size_t sent = 0;
    for (;;) {
        for (size_t i = 0; i < sizeof(chunk); i++)
            chunk[i] = (char)((sent + i) % 251);
        if (client_term_send(t, chunk, sizeof(chunk)) < 0)
            break;
        sent += sizeof(chunk);
        assert_true(sent <= CLIENT_TERM_OUT_MAX + (8u << 20)); /* the socket holds some */
    }
    assert_true(client_term_pending(t) > 0);
    assert_true(client_term_pending(t) <= CLIENT_TERM_OUT_MAX);
    assert_true(client_term_events(t) & POLLOUT);
    client_term_shutdown_write(t);
    /* the peer reads everything: the buffer drains as the loop pumps, then EOF */
    size_t got = 0;
    bool eof = false;
    fcntl(f.peer, F_SETFL, O_NONBLOCK);
    for (int i = 0; i < 10000 && !eof; i++) {
        struct pollfd p = {.fd = client_term_fd(t), .events = client_term_events(t)};
        poll(&p, 1, 0);
        client_term_pump(t, p.revents, on_data, &g);
        char buf[65536];
        ssize_t r = read(f.peer, buf, sizeof(buf));
        if (r == 0)
            eof = true;
        else if (r > 0)
            for (ssize_t k = 0; k < r; k++, got++)
                assert_int_equal((unsigned char)buf[k], got % 251); /* in order, none lost */
        else
            assert_true(errno == EAGAIN);
    }
    assert_true(eof);
    assert_int_equal(got, sent);
    assert_int_equal(client_term_pending(t), 0);
    assert_false(client_term_events(t) & POLLOUT);
    client_term_close(t);
    fake_stop(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_upgrade),
        cmocka_unit_test(test_parse_partial),
        cmocka_unit_test(test_parse_refusal),
        cmocka_unit_test(test_parse_bad),
        cmocka_unit_test(test_upgrade_and_bytes),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_closed_before_reply),
        cmocka_unit_test(test_no_engine),
        cmocka_unit_test(test_backpressure_and_half_close),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
