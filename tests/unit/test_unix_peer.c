/* unix_peer: what the engine finds at a socket path a sandbox can write, and who serves it. */
#include "engine/base/unix_peer.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static char base[64];
static int listener = -1;

static char *at(const char *rel)
{
    static char p[4][256];
    static int i;
    i = (i + 1) % 4;
    snprintf(p[i], sizeof(p[i]), "%s/%s", base, rel);
    return p[i];
}

/* base/run/sock: a socket this process serves; base/run-link: a link to base/run. */
static int setup(void **state)
{
    snprintf(base, sizeof(base), "/tmp/paddock-peer-XXXXXX");
    if (!mkdtemp(base) || mkdir(at("run"), 0700) < 0 || symlink(at("run"), at("run-link")) < 0)
        return -1;
    listener = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", at("run/sock"));
    if (bind(listener, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(listener, 8) < 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    close(listener);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
    return system(cmd) == 0 ? 0 : -1;
}

/* Connect through the O_PATH fd, as http.c does. */
static int connect_fd(int pfd)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", pfd);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_int_equal(connect(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
    return s;
}

static void assert_refused(const char *path, const char *want)
{
    char err[512] = "";
    bool refused = false;
    assert_int_equal(unix_peer_open(path, &refused, err, sizeof(err)), -1);
    assert_true(refused);
    if (!strstr(err, want))
        fprintf(stderr, "%s: \"%s\" does not say \"%s\"\n", path, err, want);
    assert_non_null(strstr(err, want));
}

static void test_a_socket_opens(void **state)
{
    char err[512] = "";
    bool refused = true;
    int pfd = unix_peer_open(at("run/sock"), &refused, err, sizeof(err));
    assert_true(pfd >= 0);
    assert_false(refused);
    int s = connect_fd(pfd);
    close(pfd);
    close(s);
}

static void test_what_is_not_a_socket_is_refused(void **state)
{
    assert_int_equal(symlink(at("run/sock"), at("run/link")), 0);
    assert_refused(at("run/link"), "is a symbolic link, not a socket");
    assert_int_equal(mkfifo(at("run/fifo"), 0600), 0);
    assert_refused(at("run/fifo"), "is a FIFO, not a socket");
    int fd = open(at("run/file"), O_WRONLY | O_CREAT, 0600);
    close(fd);
    assert_refused(at("run/file"), "is a regular file, not a socket");
    assert_int_equal(mkdir(at("run/dir"), 0700), 0);
    assert_refused(at("run/dir"), "is a directory, not a socket");
    /* the directory holding it is not followed either */
    assert_refused(at("run-link/sock"), "symbolic link");
}

static void test_nothing_there_is_not_a_refusal(void **state)
{
    char err[512] = "";
    bool refused = true;
    assert_int_equal(unix_peer_open(at("run/none"), &refused, err, sizeof(err)), -1);
    assert_false(refused);
    assert_non_null(strstr(err, "No such file"));
}

/* A process in a pid namespace of its own (its pid as this one sees it), or -1 when this
 * environment may not make one; *child is what to kill and wait for afterwards. */
static pid_t other_pidns(pid_t *child)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    *child = fork();
    assert_true(*child >= 0);
    if (*child == 0) {
        pid_t g = -1;
        if (unshare(CLONE_NEWPID) == 0 && (g = fork()) == 0) {
            close(p[1]);
            pause();
            _exit(0);
        }
        if (write(p[1], &g, sizeof(g)) != sizeof(g))
            _exit(1);
        if (g > 0)
            waitpid(g, NULL, 0);
        _exit(0);
    }
    close(p[1]);
    pid_t g = -1;
    if (read(p[0], &g, sizeof(g)) != sizeof(g))
        g = -1;
    close(p[0]);
    return g;
}

/* This process serves the socket: it runs this test's binary, in this pid namespace. */
static void test_the_peer_is_checked(void **state)
{
    char exe[512], err[512] = "";
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    assert_true(n > 0);
    exe[n] = '\0';
    bool refused;
    int pfd = unix_peer_open(at("run/sock"), &refused, err, sizeof(err));
    assert_true(pfd >= 0);
    int s = connect_fd(pfd);
    close(pfd);

    assert_int_equal(unix_peer_check(s, exe, getpid(), err, sizeof(err)), 0);
    /* another binary: a copy of the executor, a shell, python */
    assert_int_equal(unix_peer_check(s, "/bin/sh", getpid(), err, sizeof(err)), -1);
    assert_non_null(strstr(err, "which is not the executor"));
    /* a runtime image's baked copy: the same bytes pass, one byte changed does not */
    char cmd[1400];
    snprintf(cmd, sizeof(cmd),
             "cp '%s' '%s' && cp '%s' '%s' && printf x | dd of='%s' bs=1 seek=100 conv=notrunc "
             "2>/dev/null",
             exe, at("copy"), exe, at("changed"), at("changed"));
    assert_int_equal(system(cmd), 0);
    assert_int_equal(unix_peer_check(s, at("copy"), getpid(), err, sizeof(err)), 0);
    assert_int_equal(unix_peer_check(s, at("changed"), getpid(), err, sizeof(err)), -1);
    assert_non_null(strstr(err, "which is not the executor"));

    /* the container's first process gone: nothing to check against, not a refusal */
    pid_t dead = fork();
    if (dead == 0)
        _exit(0);
    waitpid(dead, NULL, 0);
    assert_int_equal(unix_peer_check(s, exe, dead, err, sizeof(err)), -2);
    assert_non_null(strstr(err, "is gone"));

    /* served from outside the container's pid namespace */
    pid_t child, other = other_pidns(&child);
    if (other > 0) {
        assert_int_equal(unix_peer_check(s, exe, other, err, sizeof(err)), -1);
        assert_non_null(strstr(err, "which is not in the sandbox's container"));
        kill(other, SIGKILL);
    } else {
        fprintf(stderr, "no pid namespace could be made here: that case is not checked\n");
    }
    waitpid(child, NULL, 0);
    close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_socket_opens, setup, teardown),
        cmocka_unit_test_setup_teardown(test_what_is_not_a_socket_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nothing_there_is_not_a_refusal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_peer_is_checked, setup, teardown),
    };
    return cmocka_run_group_tests_name("unix_peer", tests, NULL, NULL);
}
