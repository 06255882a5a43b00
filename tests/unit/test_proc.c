/* proc_signal_in_pidns: a process inside the sandbox's pid namespace is signalled; one outside
 * it, one that is gone, or no pid at all is not. Real processes, no fake. */
#include "engine/base/proc.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* A child that waits on a pipe until its end closes (or a signal ends it). */
static pid_t child_start(int *wfd)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[1]);
        char c;
        while (read(p[0], &c, 1) < 0 && errno == EINTR)
            ;
        _exit(0);
    }
    close(p[0]);
    *wfd = p[1];
    return pid;
}

static int child_end(pid_t pid, int wfd)
{
    close(wfd);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return st;
}

static void test_signals_a_process_of_the_namespace(void **state)
{
    int w;
    pid_t pid = child_start(&w);
    char why[160] = "";
    assert_int_equal(proc_in_pidns_of(pid, getpid()), 1);
    assert_int_equal(proc_signal_in_pidns(pid, getpid(), SIGTERM, why, sizeof(why)), 0);
    int st = child_end(pid, w);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGTERM);
}

static void test_leaves_a_gone_pid_alone(void **state)
{
    int w;
    pid_t pid = child_start(&w);
    child_end(pid, w);
    char why[160] = "";
    assert_int_equal(proc_signal_in_pidns(pid, getpid(), SIGKILL, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "gone"));
    assert_int_equal(proc_signal_in_pidns(0, getpid(), SIGKILL, why, sizeof(why)), -1);
    assert_int_equal(proc_signal_in_pidns(1, getpid(), SIGKILL, why, sizeof(why)), -1);
}

/* The "sandbox" is a child in a pid namespace of its own; a process of the host (another
 * child of the test) is outside it and must not be signalled in its name. */
static void test_leaves_a_process_outside_the_sandbox_alone(void **state)
{
    int w;
    pid_t outside = child_start(&w);
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t sandbox = fork();
    assert_true(sandbox >= 0);
    if (sandbox == 0) {
        /* Only the test holds the write ends, so closing them ends the readers. */
        close(w);
        close(p[1]);
        /* A new pid namespace for this process's children: the first one is its init. */
        if (unshare(CLONE_NEWPID) < 0)
            _exit(77);
        pid_t init = fork();
        if (init == 0) {
            char c;
            while (read(p[0], &c, 1) < 0 && errno == EINTR)
                ;
            _exit(0);
        }
        int st;
        waitpid(init, &st, 0);
        _exit(0);
    }
    close(p[0]);
    /* The namespace's init, as this host sees it: the only child of the sandbox process. */
    pid_t init = -1;
    for (int i = 0; i < 500 && init < 0; i++) {
        char path[64], buf[64] = "";
        snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)sandbox, (int)sandbox);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fgets(buf, sizeof(buf), f) && atoi(buf) > 0)
                init = atoi(buf);
            fclose(f);
        }
        int st;
        if (init < 0 && waitpid(sandbox, &st, WNOHANG) == sandbox) {
            close(p[1]);
            child_end(outside, w);
            if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
                skip(); /* no CLONE_NEWPID here (not root) */
            fail_msg("the sandbox process ended early");
        }
        if (init < 0)
            usleep(10000);
    }
    assert_true(init > 0);
    char why[160] = "";
    assert_int_equal(proc_in_pidns_of(outside, init), 0);
    assert_int_equal(proc_signal_in_pidns(outside, init, SIGKILL, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "not in the sandbox"));
    /* Still alive: it ends only when its pipe closes, with status 0. */
    assert_int_equal(kill(outside, 0), 0);
    /* And the sandbox's own process is signalled. */
    assert_int_equal(proc_signal_in_pidns(init, init, SIGTERM, why, sizeof(why)), 0);
    close(p[1]);
    int st;
    assert_int_equal(waitpid(sandbox, &st, 0), sandbox);
    st = child_end(outside, w);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_signals_a_process_of_the_namespace),
        cmocka_unit_test(test_leaves_a_gone_pid_alone),
        cmocka_unit_test(test_leaves_a_process_outside_the_sandbox_alone),
    };
    return cmocka_run_group_tests_name("proc", tests, NULL, NULL);
}
