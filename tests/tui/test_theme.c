/* Theme files (ui/theme.c): the format, its errors (file and line), finding a theme in the
 * directories, and the themes shipped in themes/ (every one parses; dark.theme is the
 * built-in dark). PADDOCK_THEMES_SRC names the source tree's themes/ directory. */
#include "ui/theme.h"
#include "ui/vt.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse(const char *text, struct ui_theme *t, char **err)
{
    return theme_parse(text, strlen(text), "/x/my.theme", t, err);
}

/* The error of text, which must fail; the caller frees it. */
static char *parse_error(const char *text)
{
    struct ui_theme t;
    char *err = NULL;
    assert_int_equal(parse(text, &t, &err), -1);
    assert_non_null(err);
    return err;
}

static void assert_contains(const char *s, const char *part)
{
    if (!strstr(s, part))
        fail_msg("'%s' does not contain '%s'", s, part);
}

static void test_slot_names(void **state)
{
    (void)state;
    for (int i = 0; i < UI_C_COUNT; i++) {
        const char *n = theme_slot_name((enum ui_color)i);
        assert_non_null(n); /* a new UI_C_* slot needs its name in theme.c */
        for (int k = 0; k < i; k++)
            assert_string_not_equal(n, theme_slot_name((enum ui_color)k));
    }
    assert_null(theme_slot_name(UI_C_COUNT));
}

static void test_values(void **state)
{
    (void)state;
    struct ui_theme t;
    char *err = NULL;
    const char *text = "# a comment\n"
                       "  # an indented one\n"
                       "\n"
                       "header = black cyan bold, underline   # trailing comment\n"
                       "header.mono = reverse bold\n"
                       "footer\t=\tbright-red   default\r\n"
                       "ok = 208 #002b36\n"
                       "bad = default 0 none\n"
                       "help_key = white black italic standout dim blink\n";
    assert_int_equal(parse(text, &t, &err), 0);
    assert_null(err);
    assert_string_equal(t.name, "my"); /* from the file name */
    assert_int_equal(t.slot[UI_C_HEADER].fg, THEME_BLACK);
    assert_int_equal(t.slot[UI_C_HEADER].bg, THEME_CYAN);
    assert_int_equal(t.slot[UI_C_HEADER].attr, THEME_A_BOLD | THEME_A_UNDERLINE);
    assert_int_equal(t.slot[UI_C_HEADER].mono, THEME_A_REVERSE | THEME_A_BOLD);
    assert_int_equal(t.slot[UI_C_FOOTER].fg, 9);
    assert_int_equal(t.slot[UI_C_FOOTER].bg, -1);
    assert_int_equal(t.slot[UI_C_FOOTER].attr, THEME_A_NORMAL);
    assert_int_equal(t.slot[UI_C_OK].fg, 208);
    assert_int_equal(t.slot[UI_C_OK].bg, vt_rgb_to_256(0x00, 0x2b, 0x36));
    assert_int_equal(t.slot[UI_C_BAD].fg, -1);
    assert_int_equal(t.slot[UI_C_BAD].bg, 0);
    assert_int_equal(t.slot[UI_C_BAD].attr, THEME_A_NORMAL);
    assert_int_equal(t.slot[UI_C_HELP_KEY].attr,
                     THEME_A_ITALIC | THEME_A_STANDOUT | THEME_A_DIM | THEME_A_BLINK);
    /* a colour line leaves the slot's monochrome look as it was (dark's) */
    const struct ui_theme *dark = theme_find("dark");
    assert_int_equal(t.slot[UI_C_FOOTER].mono, dark->slot[UI_C_FOOTER].mono);
}

static void test_left_out_slots_are_dark(void **state)
{
    (void)state;
    struct ui_theme t;
    char *err = NULL;
    assert_int_equal(parse("title = red blue\n", &t, &err), 0);
    const struct ui_theme *dark = theme_find(NULL);
    assert_non_null(dark);
    assert_ptr_equal(theme_find("dark"), dark);
    assert_null(theme_find("light")); /* only dark is built in; the rest are files */
    for (int i = 0; i < UI_C_COUNT; i++) {
        if (i == UI_C_TITLE)
            continue;
        assert_memory_equal(&t.slot[i], &dark->slot[i], sizeof(t.slot[i]));
    }
    assert_int_equal(t.slot[UI_C_TITLE].fg, THEME_RED);
    assert_int_equal(t.slot[UI_C_TITLE].bg, THEME_BLUE);
    /* an empty file is dark under another name */
    assert_int_equal(theme_parse("", 0, "empty.theme", &t, &err), 0);
    assert_string_equal(t.name, "empty");
    assert_memory_equal(t.slot, dark->slot, sizeof(t.slot));
}

static void test_errors_name_file_and_line(void **state)
{
    (void)state;
    char *e = parse_error("header = black cyan\n\nhedaer = black cyan\n");
    assert_contains(e, "/x/my.theme:3: ");
    assert_contains(e, "unknown slot 'hedaer'");
    assert_contains(e, "header_alert"); /* the slots are listed */
    free(e);

    e = parse_error("footer = purple default\n");
    assert_contains(e, "/x/my.theme:1: unknown colour 'purple'");
    free(e);
    e = parse_error("footer = black #12345g\n");
    assert_contains(e, "unknown colour '#12345g'");
    free(e);
    e = parse_error("footer = black #1234567\n");
    assert_contains(e, "unknown colour");
    free(e);
    e = parse_error("footer = 256 black\n");
    assert_contains(e, "unknown colour '256'");
    free(e);
    e = parse_error("footer = -1 black\n");
    assert_contains(e, "unknown colour '-1'");
    free(e);
    e = parse_error("\n\nfooter = black red bolt\n");
    assert_contains(e, ":3: unknown attribute 'bolt'");
    free(e);
    e = parse_error("footer black red\n");
    assert_contains(e, ":1: expected 'SLOT = FOREGROUND BACKGROUND");
    free(e);
    e = parse_error("footer = black\n");
    assert_contains(e, "footer needs a foreground and a background");
    free(e);
    e = parse_error("footer =\n");
    assert_contains(e, "footer needs a foreground and a background");
    free(e);
    e = parse_error("footer.mono =\n");
    assert_contains(e, "footer.mono needs attributes");
    free(e);
    e = parse_error("footer.mono = black\n");
    assert_contains(e, "unknown attribute 'black'");
    free(e);
    e = parse_error("ok = green default\nwarn = yellow default\nok = red default\n");
    assert_contains(e, ":3: ok is set twice (line 1 first)");
    free(e);
    e = parse_error("footer = a b c d e f g h i j k l m\n");
    assert_contains(e, "too many words");
    free(e);

    struct ui_theme t;
    char *err = NULL;
    assert_int_equal(theme_parse("ok = red default\n\0x", 19, "nul.theme", &t, &err), -1);
    assert_contains(err, "nul.theme:2: not a text file");
    free(err);
}

static void test_failed_parse_leaves_out_untouched(void **state)
{
    (void)state;
    struct ui_theme t;
    memset(&t, 0x5A, sizeof(t));
    struct ui_theme before = t;
    char *err = NULL;
    assert_int_equal(parse("ok = red default\nbad = nope default\n", &t, &err), -1);
    free(err);
    assert_memory_equal(&t, &before, sizeof(t));
}

/* A directory of theme files for theme_load. */
static char tmpdir[64], tmpdir2[64];

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int dirs_setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/paddock-theme.XXXXXX");
    snprintf(tmpdir2, sizeof(tmpdir2), "/tmp/paddock-theme.XXXXXX");
    if (!mkdtemp(tmpdir) || !mkdtemp(tmpdir2))
        return -1;
    write_file(tmpdir, "ocean.theme", "normal = white blue\n");
    write_file(tmpdir, "broken.theme", "normal = white blue\nnormal.mono = shiny\n");
    write_file(tmpdir, "dark.theme", "normal = red default\n"); /* overrides the built-in */
    write_file(tmpdir, "notes.txt", "not a theme\n");
    write_file(tmpdir2, "ocean.theme", "normal = green default\n"); /* the first dir wins */
    write_file(tmpdir2, "forest.theme", "normal = green black\n");
    return 0;
}

static int dirs_teardown(void **state)
{
    (void)state;
    const char *names[] = {"ocean.theme", "broken.theme", "dark.theme", "notes.txt",
                           "forest.theme"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char p[256];
        snprintf(p, sizeof(p), "%s/%s", tmpdir, names[i]);
        unlink(p);
        snprintf(p, sizeof(p), "%s/%s", tmpdir2, names[i]);
        unlink(p);
    }
    rmdir(tmpdir);
    rmdir(tmpdir2);
    return 0;
}

static void test_load(void **state)
{
    (void)state;
    const char *dirs[] = {"/nonexistent/paddock-themes", tmpdir, tmpdir2, NULL};
    struct ui_theme t;
    char *err = NULL;

    assert_int_equal(theme_load("ocean", dirs, &t, &err), 0);
    assert_string_equal(t.name, "ocean");
    assert_int_equal(t.slot[UI_C_NORMAL].fg, THEME_WHITE);
    assert_int_equal(theme_load("forest", dirs, &t, &err), 0);
    assert_int_equal(t.slot[UI_C_NORMAL].bg, THEME_BLACK);
    /* a dark.theme in a directory wins over the built-in one */
    assert_int_equal(theme_load("dark", dirs, &t, &err), 0);
    assert_int_equal(t.slot[UI_C_NORMAL].fg, THEME_RED);
    /* no directories: the built-in dark, by name or by default */
    assert_int_equal(theme_load(NULL, NULL, &t, &err), 0);
    assert_memory_equal(t.slot, theme_find("dark")->slot, sizeof(t.slot));
    assert_int_equal(theme_load("dark", NULL, &t, &err), 0);
    assert_string_equal(t.name, "dark");

    /* a bad file: its path and line */
    assert_int_equal(theme_load("broken", dirs, &t, &err), -1);
    char want[128];
    snprintf(want, sizeof(want), "%s/broken.theme:2: unknown attribute 'shiny'", tmpdir);
    assert_contains(err, want);
    free(err);

    /* an unknown name: what there is, and where it looked */
    assert_int_equal(theme_load("nope", dirs, &t, &err), -1);
    assert_contains(err, "no theme 'nope' (have: broken, dark, forest, ocean;");
    assert_contains(err, tmpdir2);
    free(err);

    /* names are names, not paths */
    assert_int_equal(theme_load("..", dirs, &t, &err), -1);
    assert_contains(err, "is not a theme name");
    free(err);
    assert_int_equal(theme_load(".hidden", dirs, &t, &err), -1);
    free(err);
    assert_int_equal(theme_load("a b", dirs, &t, &err), -1);
    free(err);

    /* a path (with a '/') is read as a file */
    char path[128];
    snprintf(path, sizeof(path), "%s/ocean.theme", tmpdir2);
    assert_int_equal(theme_load(path, NULL, &t, &err), 0);
    assert_int_equal(t.slot[UI_C_NORMAL].fg, THEME_GREEN);
    snprintf(path, sizeof(path), "%s/missing.theme", tmpdir2);
    assert_int_equal(theme_load(path, NULL, &t, &err), -1);
    assert_contains(err, "no such theme file");
    free(err);

    char *list = theme_list(dirs);
    assert_string_equal(list, "broken, dark, forest, ocean");
    free(list);
    list = theme_list(NULL);
    assert_string_equal(list, "dark");
    free(list);
}

/* The themes in the source tree: each parses, dark.theme is exactly the built-in dark, and
 * the four the dashboard promises are there. */
static void test_shipped_themes(void **state)
{
    (void)state;
    const char *src = getenv("PADDOCK_THEMES_SRC");
    if (!src || !*src)
        fail_msg("PADDOCK_THEMES_SRC is not set (tests/tui/meson.build sets it)");
    const char *dirs[] = {src, NULL};
    const char *want[] = {"dark", "light", "high-contrast", "solarized"};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        struct ui_theme t;
        char *err = NULL;
        if (theme_load(want[i], dirs, &t, &err) < 0)
            fail_msg("%s", err);
        assert_string_equal(t.name, want[i]);
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s.theme", src, want[i]);
        assert_int_equal(access(path, R_OK), 0); /* a file, not the built-in */
        if (i == 0)
            assert_memory_equal(t.slot, theme_find("dark")->slot, sizeof(t.slot));
        else /* a theme of its own: not dark's look */
            assert_memory_not_equal(t.slot, theme_find("dark")->slot, sizeof(t.slot));
    }
    char *list = theme_list(dirs);
    assert_string_equal(list, "dark, high-contrast, light, solarized");
    free(list);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slot_names),
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_left_out_slots_are_dark),
        cmocka_unit_test(test_errors_name_file_and_line),
        cmocka_unit_test(test_failed_parse_leaves_out_untouched),
        cmocka_unit_test_setup_teardown(test_load, dirs_setup, dirs_teardown),
        cmocka_unit_test(test_shipped_themes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
