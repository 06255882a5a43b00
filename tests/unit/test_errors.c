/* The error codes: the table in engine/base/errors.c is well formed, and docs/architecture.md
 * ("Errors") lists exactly its rows (code, status, meaning), no more, no fewer. argv[1] is the
 * document. */
#include "engine/base/errors.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

static const char *doc_path;

struct doc_row {
    char code[64];
    unsigned status;
    char meaning[256];
};

/* The rows "| `code` | status | meaning |" of the section "## Errors"; returns their count. */
static size_t doc_rows(struct doc_row *rows, size_t max)
{
    FILE *f = fopen(doc_path, "r");
    assert_non_null(f);
    char line[1024];
    bool in_section = false;
    size_t n = 0;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "## ", 3) == 0) {
            in_section = strcmp(line, "## Errors\n") == 0;
            continue;
        }
        if (!in_section || strncmp(line, "| `", 3) != 0)
            continue;
        assert_true(n < max);
        struct doc_row *r = &rows[n++];
        const char *code = line + 3, *tick = strchr(code, '`');
        assert_non_null(tick);
        snprintf(r->code, sizeof(r->code), "%.*s", (int)(tick - code), code);
        char *end;
        r->status = (unsigned)strtoul(tick + 3, &end, 10); /* after "` | " */
        assert_true(end[0] == ' ' && end[1] == '|' && end[2] == ' ');
        const char *meaning = end + 3;
        size_t len = strlen(meaning);
        assert_true(len >= 3 && strcmp(meaning + len - 3, " |\n") == 0);
        snprintf(r->meaning, sizeof(r->meaning), "%.*s", (int)(len - 3), meaning);
    }
    fclose(f);
    return n;
}

static void test_table_is_well_formed(void **state)
{
    assert_null(err_name(ERR_NONE));
    assert_int_equal(err_status(ERR_NONE), 0);
    for (int e = ERR_NONE + 1; e < ERR_COUNT; e++) {
        /* Every enum value has its row: a new code without one fails here. */
        assert_non_null(err_table[e].name);
        assert_non_null(err_table[e].meaning);
        assert_true(err_table[e].status >= 400 && err_table[e].status < 600);
        for (int o = ERR_NONE + 1; o < e; o++)
            assert_string_not_equal(err_table[o].name, err_table[e].name);
        for (const char *c = err_table[e].name; *c; c++)
            assert_true((*c >= 'a' && *c <= 'z') || *c == '_');
    }
    assert_null(err_name(ERR_COUNT));
    assert_int_equal(err_status(ERR_COUNT), 500);
}

static void test_doc_lists_the_table(void **state)
{
    struct doc_row rows[2 * ERR_COUNT];
    size_t n = doc_rows(rows, sizeof(rows) / sizeof(rows[0]));
    for (size_t i = 0; i < n; i++) {
        int found = -1;
        for (int e = ERR_NONE + 1; e < ERR_COUNT; e++)
            if (strcmp(err_table[e].name, rows[i].code) == 0)
                found = e;
        if (found < 0)
            fail_msg("docs/architecture.md lists `%s`, which engine/base/errors.c does not have",
                     rows[i].code);
        assert_int_equal(rows[i].status, err_table[found].status);
        assert_string_equal(rows[i].meaning, err_table[found].meaning);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(rows[j].code, rows[i].code);
    }
    for (int e = ERR_NONE + 1; e < ERR_COUNT; e++) {
        bool listed = false;
        for (size_t i = 0; i < n; i++)
            listed = listed || strcmp(rows[i].code, err_table[e].name) == 0;
        if (!listed)
            fail_msg("docs/architecture.md (\"Errors\") does not list `%s`", err_table[e].name);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s docs/architecture.md\n", argv[0]);
        return 2;
    }
    doc_path = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_is_well_formed),
        cmocka_unit_test(test_doc_lists_the_table),
    };
    return cmocka_run_group_tests_name("errors", tests, NULL, NULL);
}
