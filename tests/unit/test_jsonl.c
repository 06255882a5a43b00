/* The newline-delimited JSON splitter: lines split across chunks, junk lines, the size cap. */
#include "engine/docker/jsonl.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

struct seen {
    int objects, junk;
    char ids[64];
    int stop_after;
};

static int on_line(json_t *obj, const char *line, size_t len, void *ud)
{
    struct seen *s = ud;
    if (!obj) {
        s->junk++;
        return 0;
    }
    s->objects++;
    const char *id = json_string_value(json_object_get(obj, "id"));
    if (id)
        strncat(s->ids, id, sizeof(s->ids) - strlen(s->ids) - 1);
    return s->stop_after && s->objects >= s->stop_after ? -1 : 0;
}

static void test_jsonl_lines_across_chunks(void **state)
{
    const char *stream = "{\"id\":\"a\"}\n{\"id\":\"b\"}\r\n\nnot json\n{\"id\":\"c\"}";
    /* Every split point must give the same lines. */
    for (size_t cut = 0; cut <= strlen(stream); cut++) {
        struct jsonl j = {0};
        struct seen s = {0};
        assert_int_equal(jsonl_feed(&j, stream, cut, on_line, &s), 0);
        assert_int_equal(jsonl_feed(&j, stream + cut, strlen(stream) - cut, on_line, &s), 0);
        assert_int_equal(jsonl_finish(&j, on_line, &s), 0);
        assert_int_equal(s.objects, 3);
        assert_int_equal(s.junk, 1);
        assert_string_equal(s.ids, "abc");
        jsonl_free(&j);
    }
}

static void test_jsonl_stop_and_cap(void **state)
{
    /* A stream that ended before any byte came (a build that failed at once). */
    struct jsonl none = {0};
    struct seen z = {0};
    assert_int_equal(jsonl_finish(&none, on_line, &z), 0);
    assert_int_equal(z.objects + z.junk, 0);
    jsonl_free(&none);

    struct jsonl j = {0};
    struct seen s = {.stop_after = 1};
    assert_int_equal(jsonl_feed(&j, "{\"id\":\"x\"}\n{\"id\":\"y\"}\n", 22, on_line, &s), -1);
    assert_string_equal(s.ids, "x");
    jsonl_free(&j);

    struct jsonl big = {0};
    struct seen t = {0};
    size_t chunk = 1024 * 1024;
    char *junk = malloc(chunk);
    memset(junk, 'z', chunk);
    int rc = 0;
    for (int i = 0; i < 8 && rc == 0; i++)
        rc = jsonl_feed(&big, junk, chunk, on_line, &t);
    assert_int_equal(rc, -1); /* refused before it grew past the cap */
    assert_true(big.pending.len <= JSONL_MAX_LINE);
    free(junk);
    jsonl_free(&big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jsonl_lines_across_chunks),
        cmocka_unit_test(test_jsonl_stop_and_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
