/* The Terminal pane's colour pair cache (ui/paircache.c): one pair per (fg, bg), handed out
 * fresh once, only from its range, the least recently used one recycled when full. */
#include "ui/paircache.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

static void test_same_colours_same_pair(void **state)
{
    (void)state;
    struct paircache *c = paircache_new(20, 63);
    assert_non_null(c);
    bool fresh;
    int a = paircache_get(c, 1, -1, &fresh);
    assert_true(fresh);
    assert_int_equal(a, 20);
    assert_int_equal(paircache_get(c, 1, -1, &fresh), a);
    assert_false(fresh);
    int b = paircache_get(c, -1, 1, &fresh); /* swapped: another pair */
    assert_true(fresh);
    assert_int_not_equal(a, b);
    int d = paircache_get(c, 255, 255, &fresh);
    assert_true(fresh && d >= 20 && d <= 63);
    assert_int_equal(paircache_get(c, -1, -1, &fresh), 23);
    assert_int_equal(paircache_used(c), 4);
    paircache_free(c);
}

static void test_out_of_range(void **state)
{
    (void)state;
    struct paircache *c = paircache_new(20, 63);
    bool fresh = true;
    assert_int_equal(paircache_get(c, 256, 0, &fresh), -1);
    assert_false(fresh);
    assert_int_equal(paircache_get(c, 0, -2, &fresh), -1);
    assert_int_equal(paircache_used(c), 0);
    paircache_free(c);
    /* an empty range (a terminal with fewer pairs than the themes use) */
    c = paircache_new(20, 19);
    assert_non_null(c);
    assert_int_equal(paircache_get(c, 1, 2, &fresh), -1);
    paircache_free(c);
}

static void test_lru_recycling(void **state)
{
    (void)state;
    struct paircache *c = paircache_new(5, 7); /* three pairs */
    bool fresh;
    int a = paircache_get(c, 1, 0, &fresh);
    int b = paircache_get(c, 2, 0, &fresh);
    int d = paircache_get(c, 3, 0, &fresh);
    assert_int_equal(paircache_get(c, 1, 0, &fresh), a); /* a used again: b is the oldest */
    assert_false(fresh);
    int e = paircache_get(c, 4, 0, &fresh);
    assert_true(fresh);
    assert_int_equal(e, b);                              /* b's pair now has the new colours */
    assert_int_equal(paircache_get(c, 2, 0, &fresh), d); /* b again: d was the oldest */
    assert_true(fresh);
    assert_int_equal(paircache_get(c, 1, 0, &fresh), a); /* a kept all along */
    assert_false(fresh);
    assert_int_equal(paircache_used(c), 3);
    paircache_free(c);
}

/* An 8-colour terminal: every fg × bg of -1..7 (81) through 44 pairs, twice; each answer is
 * in the range and consistent with what was handed out fresh. */
static void test_small_terminal(void **state)
{
    (void)state;
    struct paircache *c = paircache_new(20, 63);
    int owner[64];
    for (int i = 0; i < 64; i++)
        owner[i] = -1000;
    for (int round = 0; round < 2; round++)
        for (int fg = -1; fg < 8; fg++)
            for (int bg = -1; bg < 8; bg++) {
                bool fresh;
                int p = paircache_get(c, fg, bg, &fresh);
                assert_true(p >= 20 && p <= 63);
                int key = (fg + 1) * 16 + bg + 1;
                if (fresh)
                    owner[p] = key;
                assert_int_equal(owner[p], key);
            }
    assert_int_equal(paircache_used(c), 44);
    paircache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_colours_same_pair),
        cmocka_unit_test(test_out_of_range),
        cmocka_unit_test(test_lru_recycling),
        cmocka_unit_test(test_small_terminal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
