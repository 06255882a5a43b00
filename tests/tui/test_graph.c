/* Text graphs (ui/graph.c): braille dots, blocks, ASCII, sparklines, scales. */
#include "ui/graph.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <math.h>
#include <string.h>

#define ROWSZ 256

/* The braille dot mask of the cell at byte offset 3*col of a row. */
static unsigned braille_mask(const char *row, int col)
{
    const unsigned char *p = (const unsigned char *)row + 3 * col;
    unsigned cp = ((p[0] & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
    assert_true(cp >= 0x2800 && cp <= 0x28FF);
    return cp - 0x2800;
}

static void test_braille_levels(void **state)
{
    char rows[2 * ROWSZ];
    /* Two rows = 8 dot levels; left half of the cell 100 % (all 4 dots in both rows), right
     * half 50 % (the bottom row only). */
    double v[] = {100, 50};
    assert_int_equal(graph_render(v, 2, 100, 1, 2, GRAPH_BRAILLE, rows, ROWSZ), 2);
    assert_int_equal(braille_mask(rows, 0), 0x01 | 0x02 | 0x04 | 0x40); /* top: left */
    assert_int_equal(braille_mask(rows + ROWSZ, 0), 0x47 | 0x08 | 0x10 | 0x20 | 0x80); /* bottom */
    /* A value above zero always shows one dot; zero and NAN show none. */
    double w[] = {0.1, NAN};
    graph_render(w, 2, 100, 1, 1, GRAPH_BRAILLE, rows, ROWSZ);
    assert_int_equal(braille_mask(rows, 0), 0x40);
    /* Values above the scale are clipped, not wrapped. */
    double big[] = {1000, 1000};
    graph_render(big, 2, 100, 1, 1, GRAPH_BRAILLE, rows, ROWSZ);
    assert_int_equal(braille_mask(rows, 0), 0xFF);
}

static void test_right_aligned_and_newest(void **state)
{
    char rows[ROWSZ];
    /* Ten values into 3 cells of 2 samples: the newest 6 are shown. */
    double v[10] = {100, 100, 100, 100, 0, 0, 0, 0, 100, 0};
    assert_int_equal(graph_render(v, 10, 100, 3, 1, GRAPH_BRAILLE, rows, ROWSZ), 6);
    assert_int_equal(braille_mask(rows, 0), 0);
    assert_int_equal(braille_mask(rows, 1), 0);
    assert_int_equal(braille_mask(rows, 2), 0x47); /* left column full, right empty */
    /* Fewer values than room: padded on the left (oldest side). */
    double one[] = {100};
    assert_int_equal(graph_render(one, 1, 100, 3, 1, GRAPH_BLOCK, rows, ROWSZ), 1);
    assert_string_equal(rows, "  █");
}

static void test_block_and_ascii(void **state)
{
    char rows[2 * ROWSZ];
    double v[] = {0, 25, 50, 100};
    graph_render(v, 4, 100, 4, 2, GRAPH_BLOCK, rows, ROWSZ);
    assert_string_equal(rows, "   █");         /* top: only 100 % reaches it */
    assert_string_equal(rows + ROWSZ, " ▄██"); /* bottom: 25 % = 4/8 of one row */
    graph_render(v, 4, 100, 4, 2, GRAPH_ASCII, rows, ROWSZ);
    assert_string_equal(rows, "   #");
    assert_string_equal(rows + ROWSZ, " .##"); /* 25 % = half of one row */
    /* pure ASCII output */
    for (const char *p = rows; *p; p++)
        assert_true((unsigned char)*p < 0x80);
}

static void test_row_buffer_bound(void **state)
{
    char rows[8];
    memset(rows, 'x', sizeof(rows));
    double v[] = {100, 100, 100, 100};
    graph_render(v, 4, 100, 4, 1, GRAPH_BLOCK, rows, sizeof(rows));
    /* 8 bytes hold two 3-byte blocks and the NUL, never more */
    assert_string_equal(rows, "██");
}

static void test_sparkline(void **state)
{
    char out[64];
    double v[] = {0, 12.5, 100, 50};
    graph_sparkline(v, 4, 100, 5, true, out, sizeof(out));
    assert_string_equal(out, "  ▁█▄");
    graph_sparkline(v, 4, 100, 4, false, out, sizeof(out));
    assert_string_equal(out, " .#=");
    graph_sparkline(v, 4, 100, 2, true, out, sizeof(out)); /* the newest two */
    assert_string_equal(out, "█▄");
}

static void test_nice_max(void **state)
{
    double v[] = {3, 7.2, 1};
    assert_true(graph_nice_max(v, 3, 1) == 10);
    double w[] = {130};
    assert_true(graph_nice_max(w, 1, 100) == 200);
    assert_true(graph_nice_max(w, 0, 100) == 100);
    double x[] = {0.3};
    assert_true(graph_nice_max(x, 1, 0.1) == 0.5);
}

static void test_bucket(void **state)
{
    (void)state;
    const double v[] = {1, 3, NAN, NAN, 5, 7};
    double out[4];
    graph_bucket(v, 6, 3, false, out); /* two values a column: averages, a gap stays one */
    assert_true(fabs(out[0] - 2) < 1e-9);
    assert_true(isnan(out[1]));
    assert_true(fabs(out[2] - 6) < 1e-9);
    graph_bucket(v, 6, 3, true, out); /* peaks */
    assert_true(fabs(out[0] - 3) < 1e-9);
    assert_true(fabs(out[2] - 7) < 1e-9);
    graph_bucket(v, 2, 4, false, out); /* fewer values than columns: they stretch */
    assert_true(fabs(out[0] - 1) < 1e-9);
    assert_true(fabs(out[1] - 1) < 1e-9);
    assert_true(fabs(out[2] - 3) < 1e-9);
    assert_true(fabs(out[3] - 3) < 1e-9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_braille_levels),  cmocka_unit_test(test_right_aligned_and_newest),
        cmocka_unit_test(test_block_and_ascii), cmocka_unit_test(test_row_buffer_bound),
        cmocka_unit_test(test_sparkline),       cmocka_unit_test(test_nice_max),
        cmocka_unit_test(test_bucket),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
