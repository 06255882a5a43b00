/* util_remove_tree on a tree a sandbox wrote into: links are removed, never followed (at any
 * depth, nor at the root), and any depth goes. */
#include "engine/base/util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char base[64];

static int setup(void **state)
{
    snprintf(base, sizeof(base), "/tmp/paddock-rmtree-XXXXXX");
    return mkdtemp(base) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
    return system(cmd) == 0 ? 0 : -1;
}

static char *at(const char *rel)
{
    static char p[8][512];
    static int i;
    i = (i + 1) % 8;
    snprintf(p[i], sizeof(p[i]), "%s/%s", base, rel);
    return p[i];
}

static void write_file(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "x", 1), 1);
    close(fd);
}

/* The host's files a sandbox points links at: they stay. */
static void make_victim(void)
{
    assert_int_equal(mkdir(at("victim"), 0700), 0);
    write_file(at("victim/keep"));
    assert_int_equal(mkdir(at("victim/dir"), 0700), 0);
    write_file(at("victim/dir/keep"));
}

static void assert_victim_intact(void)
{
    struct stat st;
    assert_int_equal(stat(at("victim/keep"), &st), 0);
    assert_int_equal(stat(at("victim/dir/keep"), &st), 0);
}

static void test_links_inside_are_not_followed(void **state)
{
    make_victim();
    assert_int_equal(mkdir(at("tree"), 0700), 0);
    assert_int_equal(mkdir(at("tree/sub"), 0700), 0);
    write_file(at("tree/sub/file"));
    assert_int_equal(symlink(at("victim"), at("tree/link-dir")), 0);
    assert_int_equal(symlink(at("victim/keep"), at("tree/sub/link-file")), 0);
    assert_int_equal(symlink(at("victim/dir"), at("tree/sub/link-dir")), 0);
    assert_int_equal(mkfifo(at("tree/fifo"), 0600), 0);
    assert_int_equal(util_remove_tree(at("tree")), 0);
    struct stat st;
    assert_int_equal(lstat(at("tree"), &st), -1);
    assert_victim_intact();
}

static void test_a_link_at_the_root_is_removed_not_followed(void **state)
{
    make_victim();
    assert_int_equal(symlink(at("victim"), at("root-link")), 0);
    assert_int_equal(util_remove_tree(at("root-link")), 0);
    struct stat st;
    assert_int_equal(lstat(at("root-link"), &st), -1);
    assert_victim_intact();
}

static void test_any_depth(void **state)
{
    /* Deeper than PATH_MAX allows by name, made relative to each new directory. */
    assert_int_equal(mkdir(at("deep"), 0700), 0);
    int fd = open(at("deep"), O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    for (int i = 0; i < 400; i++) {
        assert_int_equal(mkdirat(fd, "dddddddddd", 0700), 0);
        int sub = openat(fd, "dddddddddd", O_RDONLY | O_DIRECTORY);
        assert_true(sub >= 0);
        if (i % 100 == 0) {
            int f = openat(sub, "file", O_WRONLY | O_CREAT, 0600);
            assert_true(f >= 0);
            close(f);
        }
        close(fd);
        fd = sub;
    }
    close(fd);
    assert_int_equal(util_remove_tree(at("deep")), 0);
    struct stat st;
    assert_int_equal(lstat(at("deep"), &st), -1);
}

static void test_missing_is_fine(void **state)
{
    assert_int_equal(util_remove_tree(at("nothing-here")), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_links_inside_are_not_followed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_link_at_the_root_is_removed_not_followed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_any_depth, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_is_fine, setup, teardown),
    };
    return cmocka_run_group_tests_name("remove_tree", tests, NULL, NULL);
}
