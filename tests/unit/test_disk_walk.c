/* disk_walk on a tree a sandbox wrote into: blocks counted (a sparse file counts what it takes),
 * links never followed (at any depth, nor to a big tree beside it), steps of a bounded size,
 * too deep a tree refused rather than undercounted; and the size strings (common/size.h). */
#include "common/size.h"
#include "engine/base/disk_walk.h"

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
    snprintf(base, sizeof(base), "/tmp/paddock-diskwalk-XXXXXX");
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

static void write_file(const char *path, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    static char block[64 * 1024];
    memset(block, 'x', sizeof(block));
    while (n > 0) {
        size_t k = n < sizeof(block) ? n : sizeof(block);
        assert_int_equal(write(fd, block, k), (ssize_t)k);
        n -= k;
    }
    assert_int_equal(fsync(fd), 0);
    close(fd);
}

/* The whole walk, budget entries a step; the bytes, or -1 (rc in *rc). */
static long long walk(const char *path, unsigned budget, int *rc, long long *steps)
{
    struct disk_walk *w = disk_walk_new();
    char *err = NULL;
    assert_int_equal(disk_walk_add(w, path, &err), 0);
    int r;
    long long n = 0;
    while ((r = disk_walk_step(w, budget, &err)) > 0)
        n++;
    free(err);
    long long bytes = disk_walk_bytes(w);
    disk_walk_free(w);
    if (rc)
        *rc = r;
    if (steps)
        *steps = n;
    return r == 0 ? bytes : -1;
}

static void test_counts_blocks_not_links(void **state)
{
    assert_int_equal(mkdir(at("tree"), 0755), 0);
    assert_int_equal(mkdir(at("tree/a"), 0755), 0);
    assert_int_equal(mkdir(at("tree/a/b"), 0755), 0);
    write_file(at("tree/a/b/one"), 1 << 20);
    write_file(at("tree/two"), 1 << 20);
    long long base_bytes = walk(at("tree"), 1000, NULL, NULL);
    assert_true(base_bytes >= 2 << 20);
    assert_true(base_bytes < (2 << 20) + (1 << 20));

    /* A big tree beside it, and links to it (and to /) at the top and deeper down. */
    assert_int_equal(mkdir(at("big"), 0755), 0);
    write_file(at("big/huge"), 8 << 20);
    assert_int_equal(symlink(at("big"), at("tree/link-dir")), 0);
    assert_int_equal(symlink(at("big/huge"), at("tree/a/link-file")), 0);
    assert_int_equal(symlink("/", at("tree/a/b/root")), 0);
    long long with_links = walk(at("tree"), 1000, NULL, NULL);
    assert_true(with_links < base_bytes + (64 << 10));

    /* A sparse file counts what it takes, not its length. */
    int fd = open(at("tree/sparse"), O_WRONLY | O_CREAT, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, 1LL << 30), 0);
    close(fd);
    assert_true(walk(at("tree"), 1000, NULL, NULL) < base_bytes + (64 << 10));

    /* Small steps give the same total. */
    long long steps = 0;
    assert_int_equal(walk(at("tree"), 1, NULL, &steps), walk(at("tree"), 1000, NULL, NULL));
    assert_true(steps >= 5);
}

static void test_root_is_a_link_or_missing(void **state)
{
    assert_int_equal(mkdir(at("real"), 0755), 0);
    write_file(at("real/f"), 1 << 20);
    assert_int_equal(symlink(at("real"), at("rootlink")), 0);
    /* A root that is a link is not opened: an error, not the target's size. */
    int rc = 0;
    assert_int_equal(walk(at("rootlink"), 100, &rc, NULL), -1);
    assert_int_equal(rc, -1);
    /* A missing root adds nothing. */
    assert_int_equal(walk(at("nothing-here"), 100, &rc, NULL), 0);
    assert_int_equal(rc, 0);
}

static void test_too_deep_refused(void **state)
{
    assert_int_equal(mkdir(at("deep"), 0755), 0);
    int fd = open(at("deep"), O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    for (int i = 0; i < DISK_WALK_MAX_DEPTH + 5; i++) {
        assert_int_equal(mkdirat(fd, "d", 0755), 0);
        int next = openat(fd, "d", O_RDONLY | O_DIRECTORY);
        close(fd);
        assert_true(next >= 0);
        fd = next;
    }
    close(fd);
    int rc = 0;
    assert_int_equal(walk(at("deep"), 100000, &rc, NULL), -1);
    assert_int_equal(rc, -2);
}

static void test_size_strings(void **state)
{
    assert_int_equal(size_parse("4096"), 4096);
    assert_int_equal(size_parse("64m"), 64LL << 20);
    assert_int_equal(size_parse("10G"), 10LL << 30);
    assert_int_equal(size_parse("1gb"), 1LL << 30);
    assert_int_equal(size_parse("2t"), 2LL << 40);
    assert_int_equal(size_parse(""), -1);
    assert_int_equal(size_parse("-1"), -1);
    assert_int_equal(size_parse("1x"), -1);
    assert_int_equal(size_parse("99999999999999999999"), -1);
    assert_int_equal(size_parse(NULL), -1);
    char b[32];
    assert_string_equal(size_format(812, b, sizeof(b)), "812 B");
    assert_string_equal(size_format(64LL << 20, b, sizeof(b)), "64.0 MiB");
    assert_string_equal(size_format(10LL << 30, b, sizeof(b)), "10.0 GiB");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_blocks_not_links),
        cmocka_unit_test(test_root_is_a_link_or_missing),
        cmocka_unit_test(test_too_deep_refused),
        cmocka_unit_test(test_size_strings),
    };
    return cmocka_run_group_tests_name("disk_walk", tests, setup, teardown);
}
