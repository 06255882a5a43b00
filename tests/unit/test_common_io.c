/* common/io.c: io_write_all and io_read_full move everything through a pipe smaller than the
 * data; pread at an offset; a short file, a closed reader and a bad descriptor are errors;
 * io_openat2 answers a confined lookup through ".." while the machine mounts (as Docker does
 * at every container start), where a bare openat2 fails now and then with EAGAIN. */
#include "common/io.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
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

/* A child mounts and unmounts a tmpfs without pause while this process opens d/../f beneath
 * a directory: every lookup must answer (f), none EAGAIN, and an escape still EXDEV. Without
 * the retry 0.5-1 % of the lookups fail on this 2-core machine. Needs root to mount. */
static void test_io_openat2_while_mounting(void **state)
{
    (void)state;
    char dir[] = "/tmp/paddock-test-openat2-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof(path), "%s/m", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/d", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/f", dir);
    int f = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    assert_true(f >= 0);
    close(f);
    char mnt[128];
    snprintf(mnt, sizeof(mnt), "%s/m", dir);
    if (mount("tmpfs", mnt, "tmpfs", 0, "size=64k") < 0) {
        skip(); /* not root: nothing here can mount, so nothing races either */
    }
    umount2(mnt, MNT_DETACH);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        for (;;) {
            if (mount("tmpfs", mnt, "tmpfs", 0, "size=64k") == 0)
                umount2(mnt, MNT_DETACH);
        }
    }
    int root = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    assert_true(root >= 0);
    struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_BENEATH};
    int failed = 0, err = 0;
    for (int i = 0; i < 20000; i++) {
        int fd = io_openat2(root, "d/../f", &how, sizeof(how));
        if (fd < 0) {
            failed++;
            err = errno;
        } else {
            close(fd);
        }
    }
    errno = 0;
    int out = io_openat2(root, "d/../../etc", &how, sizeof(how));
    int out_err = errno;
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    umount2(mnt, MNT_DETACH);
    close(root);
    snprintf(path, sizeof(path), "%s/f", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/d", dir);
    rmdir(path);
    rmdir(mnt);
    rmdir(dir);
    if (failed)
        fail_msg("%d of 20000 lookups failed, the last with %s", failed, strerror(err));
    assert_int_equal(out, -1);
    assert_int_equal(out_err, EXDEV);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_io_whole_through_a_pipe),
        cmocka_unit_test(test_io_write_all_errors),
        cmocka_unit_test(test_io_read_full_at),
        cmocka_unit_test(test_io_openat2_while_mounting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
