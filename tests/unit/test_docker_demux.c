/* Docker's stdout/stderr framing decoder (engine/docker/docker_internal.h): frames whose headers
 * and payloads are split at every possible place, several frames per chunk, empty frames. */
#include "engine/docker/docker_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

struct sink {
    char text[3][256];
    size_t len[3];
    int calls;
    int stop_after; /* return -1 on this call (0: never) */
};

static int on_piece(const char *p, size_t n, int fd, void *ud)
{
    struct sink *s = ud;
    assert_true(fd == 1 || fd == 2);
    assert_true(s->len[fd] + n < sizeof(s->text[fd]));
    memcpy(s->text[fd] + s->len[fd], p, n);
    s->len[fd] += n;
    s->calls++;
    return s->stop_after && s->calls == s->stop_after ? -1 : 0;
}

/* [type,0,0,0,len BE32] + payload */
static size_t frame(unsigned char *out, int type, const char *payload, size_t n)
{
    out[0] = (unsigned char)type;
    out[1] = out[2] = out[3] = 0;
    out[4] = (unsigned char)(n >> 24);
    out[5] = (unsigned char)(n >> 16);
    out[6] = (unsigned char)(n >> 8);
    out[7] = (unsigned char)n;
    memcpy(out + 8, payload, n);
    return 8 + n;
}

static size_t sample(unsigned char *buf)
{
    size_t n = 0;
    n += frame(buf + n, 1, "out one\n", 8);
    n += frame(buf + n, 2, "err\n", 4);
    n += frame(buf + n, 1, "", 0); /* empty frames happen; they carry nothing */
    n += frame(buf + n, 1, "out two\n", 8);
    n += frame(buf + n, 0, "in\n", 3); /* stdin echoed on stdout's stream */
    return n;
}

static void test_every_split(void **state)
{
    unsigned char buf[128];
    size_t n = sample(buf);
    for (size_t a = 0; a <= n; a++)
        for (size_t b = a; b <= n; b++) {
            struct sink s = {0};
            struct docker_demux dm = {0};
            const char *p = (const char *)buf;
            assert_int_equal(docker_demux_feed(&dm, p, a, on_piece, &s), 0);
            assert_int_equal(docker_demux_feed(&dm, p + a, b - a, on_piece, &s), 0);
            assert_int_equal(docker_demux_feed(&dm, p + b, n - b, on_piece, &s), 0);
            assert_int_equal(s.len[1], 19);
            assert_memory_equal(s.text[1], "out one\nout two\nin\n", 19);
            assert_int_equal(s.len[2], 4);
            assert_memory_equal(s.text[2], "err\n", 4);
        }
}

static void test_byte_by_byte(void **state)
{
    unsigned char buf[128];
    size_t n = sample(buf);
    struct sink s = {0};
    struct docker_demux dm = {0};
    for (size_t i = 0; i < n; i++)
        assert_int_equal(docker_demux_feed(&dm, (const char *)buf + i, 1, on_piece, &s), 0);
    assert_memory_equal(s.text[1], "out one\nout two\nin\n", 19);
    assert_memory_equal(s.text[2], "err\n", 4);
    assert_int_equal(s.calls, 8 + 4 + 8 + 3); /* one call per payload byte */
}

static void test_receiver_stops(void **state)
{
    unsigned char buf[128];
    size_t n = sample(buf);
    struct sink s = {.stop_after = 2};
    struct docker_demux dm = {0};
    assert_int_equal(docker_demux_feed(&dm, (const char *)buf, n, on_piece, &s), -1);
    assert_int_equal(s.calls, 2);
}

static void test_parse_version(void **state)
{
    assert_int_equal(docker_parse_version("1.41"), 1041);
    assert_int_equal(docker_parse_version("1.9"), 1009);
    assert_int_equal(docker_parse_version("2.0"), 2000);
    assert_int_equal(docker_parse_version("1.41x"), 0);
    assert_int_equal(docker_parse_version("141"), 0);
    assert_int_equal(docker_parse_version(""), 0);
    assert_int_equal(docker_parse_version(NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_split),
        cmocka_unit_test(test_byte_by_byte),
        cmocka_unit_test(test_receiver_stops),
        cmocka_unit_test(test_parse_version),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
