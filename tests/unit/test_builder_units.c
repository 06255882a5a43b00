/* The builder's pure parts: the ustar writer (headers, checksums, padding, the end blocks;
 * python3's tarfile reads it back when python3 is there) and the runtime-image tags. */
#include "engine/builder.h"
#include "engine/docker/tar.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

static unsigned long octal(const unsigned char *p, size_t n)
{
    char tmp[16] = {0};
    memcpy(tmp, p, n < 15 ? n : 15);
    return strtoul(tmp, NULL, 8);
}

static void test_tar_layout(void **state)
{
    struct tar t = {0};
    const char *err = NULL;
    assert_int_equal(tar_add_file(&t, "Dockerfile", "FROM x\n", 7, 0644, &err), 0);
    assert_int_equal(tar_add_file(&t, "bin/tool",
                                  "\x7f"
                                  "ELF",
                                  4, 0755, &err),
                     0);
    assert_int_equal(tar_add_file(&t, "../evil", "x", 1, 0644, &err), -1);
    assert_non_null(err);
    assert_int_equal(tar_finish(&t), 0);
    const unsigned char *a = (const unsigned char *)t.buf.data;
    /* two entries of one header + one data block each, then two zero blocks */
    assert_int_equal(t.buf.len, 6 * 512);
    for (int e = 0; e < 2; e++) {
        const unsigned char *h = a + e * 1024;
        unsigned long sum = 0;
        for (int i = 0; i < 512; i++)
            sum += (i >= 148 && i < 156) ? ' ' : h[i];
        assert_int_equal(octal(h + 148, 8), sum);
        assert_memory_equal(h + 257, "ustar", 5);
    }
    assert_string_equal((const char *)a, "Dockerfile");
    assert_int_equal(octal(a + 124, 12), 7);
    assert_int_equal(octal(a + 1024 + 100, 8) & 0777, 0755);
    for (size_t i = 4 * 512; i < t.buf.len; i++)
        assert_int_equal(a[i], 0);

    if (access("/usr/bin/python3", X_OK) == 0) {
        char path[] = "/tmp/paddock-tar-test-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, t.buf.data, t.buf.len), (ssize_t)t.buf.len);
        close(fd);
        char cmd[256];
        snprintf(cmd, sizeof(cmd),
                 "/usr/bin/python3 -c \"import tarfile,sys; t=tarfile.open(sys.argv[1]); "
                 "print(','.join(m.name+':'+str(m.size) for m in t))\" %s",
                 path);
        FILE *p = popen(cmd, "r");
        char out[256] = "";
        assert_non_null(fgets(out, sizeof(out), p));
        pclose(p);
        unlink(path);
        assert_string_equal(out, "Dockerfile:7,bin/tool:4\n");
    }
    tar_free(&t);
}

static void test_tags_stable_and_distinct(void **state)
{
    unsigned char exe[32] = {1, 2, 3};
    json_t *steps = json_pack("[s]", "echo a");
    struct builder_tags t1, t2, t3, t4;
    assert_int_equal(builder_tags_compute("paddock/runtime", "0.1.0", "paddock/base:local",
                                          "sha256:aa", steps, NULL, exe, &t1),
                     0);
    assert_int_equal(builder_tags_compute("paddock/runtime", "0.1.0", "paddock/base:local",
                                          "sha256:aa", steps, NULL, exe, &t2),
                     0);
    assert_string_equal(t1.source, t2.source);
    assert_string_equal(t1.versioned, "paddock/runtime:pd_v0.1.0_paddock_s_base_t_local");
    /* another step: another lock (and source) */
    json_t *other = json_pack("[s]", "echo b");
    assert_int_equal(builder_tags_compute("paddock/runtime", "0.1.0", "paddock/base:local",
                                          "sha256:aa", other, NULL, exe, &t3),
                     0);
    assert_string_not_equal(t1.lock, t3.lock);
    /* another executor: same lock, another source */
    exe[0] = 9;
    assert_int_equal(builder_tags_compute("paddock/runtime", "0.1.0", "paddock/base:local",
                                          "sha256:aa", steps, NULL, exe, &t4),
                     0);
    assert_string_equal(t1.lock, t4.lock);
    assert_string_not_equal(t1.source, t4.source);
    /* the source tag starts with the lock tag */
    assert_int_equal(strncmp(t1.source, t1.lock, strlen(t1.lock)), 0);
    /* a platform asked: another lock; the same platform: the same one */
    struct builder_tags t5, t6;
    assert_int_equal(builder_tags_compute("paddock/runtime", "0.1.0", "paddock/base:local",
                                          "sha256:aa", steps, "linux/amd64", exe, &t5),
                     0);
    assert_int_equal(builder_tags_compute("paddock/runtime", "0.1.0", "paddock/base:local",
                                          "sha256:aa", steps, "linux/amd64", exe, &t6),
                     0);
    assert_string_not_equal(t4.lock, t5.lock);
    assert_string_equal(t5.lock, t6.lock);
    json_decref(steps);
    json_decref(other);

    char b36[17];
    unsigned char one[2] = {0, 36};
    builder_base36(one, 2, b36);
    assert_string_equal(b36, "01"); /* 36 = "10" in base 36, least significant digit first */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tar_layout),
        cmocka_unit_test(test_tags_stable_and_distinct),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
