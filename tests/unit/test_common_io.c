/* common/io.c: io_write_all and io_read_full move everything through a pipe smaller than the
 * data; pread at an offset; a short file, a closed reader and a bad descriptor are errors. */
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

static void test_io_whole_through_a_pipe(void **state)
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
    char *got = malloc(BIG);
    assert_non_null(got);
    assert_int_equal(io_read_full(p[0], got, BIG, -1), 0);
    char more;
    errno = EINVAL;
    assert_int_equal(io_read_full(p[0], &more, 1, -1), -1); /* the writer is done: the end */
    assert_int_equal(errno, 0);
    close(p[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
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

static void test_io_read_full_at(void **state)
{
    char path[] = "/tmp/paddock-test-io-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    assert_int_equal(io_write_all(fd, "0123456789", 10), 0);
    char b[5] = {0};
    assert_int_equal(io_read_full(fd, b, 4, 3), 0);
    assert_string_equal(b, "3456");
    assert_int_equal(io_read_full(fd, b, 4, 0), 0);
    assert_string_equal(b, "0123");
    errno = EINVAL;
    assert_int_equal(io_read_full(fd, b, 4, 8), -1); /* two bytes left there */
    assert_int_equal(errno, 0);
    /* the position is untouched by pread: read goes on at the end of what was written */
    assert_int_equal(io_read_full(fd, b, 1, -1), -1);
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    assert_int_equal(io_read_full(fd, b, 2, -1), 0);
    assert_memory_equal(b, "01", 2);
    close(fd);
    assert_int_equal(io_read_full(fd, b, 1, 0), -1);
    assert_int_equal(errno, EBADF);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_io_whole_through_a_pipe),
        cmocka_unit_test(test_io_write_all_errors),
        cmocka_unit_test(test_io_read_full_at),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
