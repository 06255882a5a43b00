/* engine/platform.c: which "os/arch[/variant]" strings are valid, and which the daemon runs:
 * natively, through an enabled binfmt_misc emulator (a temporary directory stands in for
 * /proc/sys/fs/binfmt_misc), or not at all (a message saying what it runs). */
#include "engine/platform.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_valid(void **state)
{
    assert_true(platform_valid("linux/amd64"));
    assert_true(platform_valid("linux/arm64/v8"));
    assert_true(platform_valid("linux/arm/v7"));
    assert_false(platform_valid("amd64"));
    assert_false(platform_valid("linux/"));
    assert_false(platform_valid("/amd64"));
    assert_false(platform_valid("linux//amd64"));
    assert_false(platform_valid("Linux/AMD64"));
    assert_false(platform_valid("linux/amd64/v1/x"));
    assert_false(platform_valid("linux/amd64;rm"));
    assert_false(platform_valid(""));
}

static void test_check(void **state)
{
    char dir[] = "/tmp/paddock-binfmt-XXXXXX";
    assert_non_null(mkdtemp(dir));
    json_t *info = json_pack("{s:s,s:s}", "OSType", "linux", "Architecture", "x86_64");
    char *why = NULL;
    assert_int_equal(platform_check(info, true, dir, "linux/amd64", &why), 0);
    assert_int_equal(platform_check(info, true, dir, "linux/386", &why), 0);
    /* no emulator: refused, saying what the daemon runs and what would help */
    assert_int_equal(platform_check(info, true, dir, "linux/arm64", &why), -1);
    assert_non_null(strstr(why, "cannot run on this Docker daemon"));
    assert_non_null(strstr(why, "x86_64"));
    assert_non_null(strstr(why, "qemu-aarch64"));
    free(why);
    /* a disabled emulator does not count; an enabled one does, for a local daemon only */
    char path[128];
    snprintf(path, sizeof(path), "%s/qemu-aarch64", dir);
    FILE *f = fopen(path, "w");
    fputs("disabled\ninterpreter /usr/bin/qemu-aarch64-static\n", f);
    fclose(f);
    assert_int_equal(platform_check(info, true, dir, "linux/arm64", &why), -1);
    free(why);
    f = fopen(path, "w");
    fputs("enabled\ninterpreter /usr/bin/qemu-aarch64-static\n", f);
    fclose(f);
    assert_int_equal(platform_check(info, true, dir, "linux/arm64/v8", &why), 0);
    assert_int_equal(platform_check(info, false, dir, "linux/arm64", &why), -1);
    assert_non_null(strstr(why, "cannot be checked"));
    free(why);
    /* another OS, an unknown architecture */
    assert_int_equal(platform_check(info, true, dir, "windows/amd64", &why), -1);
    assert_non_null(strstr(why, "runs linux containers"));
    free(why);
    assert_int_equal(platform_check(info, true, dir, "linux/vax", &why), -1);
    assert_non_null(strstr(why, "unknown architecture"));
    free(why);
    unlink(path);
    rmdir(dir);
    json_decref(info);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_check),
    };
    return cmocka_run_group_tests_name("platform", tests, NULL, NULL);
}
