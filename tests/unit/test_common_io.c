/* common/io.c: io_write_all delivers everything through a pipe smaller than the data, and
 * reports the errors of a closed reader and a bad descriptor. */
#include "common/io.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#define BIG (1024 * 1024) /* far more than a pipe holds: the writes are partial */

static void test_io_write_all_whole(void **state)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    char *data = malloc(BIG);
    assert_non_null(data);
    for (size_t i = 0; i < BIG; i++)
        data[i] = (char)(i * 7 + i / 251);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        _exit(io_write_all(p[1], data, BIG) == 0 ? 0 : 1);
    }
    close(p[1]);
    char *got = malloc(BIG + 1);
    assert_non_null(got);
    size_t n = 0;
    for (;;) {
        ssize_t r = read(p[0], got + n, BIG + 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        assert_true(r >= 0);
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(p[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(n, BIG);
    assert_memory_equal(got, data, BIG);
    free(got);
    free(data);
}

static void test_io_write_all_errors(void **state)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    close(p[0]);
    signal(SIGPIPE, SIG_IGN);
    errno = 0;
    assert_int_equal(io_write_all(p[1], "x", 1), -1);
    assert_int_equal(errno, EPIPE);
    close(p[1]);
    errno = 0;
    assert_int_equal(io_write_all(p[1], "x", 1), -1);
    assert_int_equal(errno, EBADF);
    assert_int_equal(io_write_all(p[1], "", 0), 0); /* nothing to write: no call at all */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_io_write_all_whole),
        cmocka_unit_test(test_io_write_all_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
