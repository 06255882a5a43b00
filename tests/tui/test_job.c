/* ui/job.c: a blocking operation in a child process. Real children, real pipes: the test
 * plays the loop (poll the job's descriptor, hand readiness to job_on_ready) and reads what
 * the footer would say. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "ui/ui_internal.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* What a job does, chosen by the test; gate is a pipe the child waits on (read end). */
struct job_plan {
    int rc;
    const char *msg;
    size_t done, total; /* one progress report before the gate, when total > 0 */
    int gate;           /* -1: no waiting */
    int die_by;         /* a signal the child sends itself at the end, or 0 */
    size_t flood;       /* this many progress reports first (a pipe's worth and more) */
};

static int job_plan_run(void *arg, ui_progress_fn progress, void *ctx, char **msg)
{
    const struct job_plan *p = arg;
    for (size_t i = 0; i < p->flood; i++)
        progress(ctx, i, p->flood + 1);
    if (p->total)
        progress(ctx, p->done, p->total);
    if (p->gate >= 0) {
        char c;
        while (read(p->gate, &c, 1) < 0 && errno == EINTR)
            ;
    }
    if (p->die_by)
        raise(p->die_by);
    *msg = p->msg ? strdup(p->msg) : NULL;
    return p->rc;
}

/* Feed readiness until the footer changes to something containing want, or the job ends
 * (want NULL). 5 s at most. */
static void job_pump(struct ui *ui, const char *want)
{
    for (int i = 0; i < 500; i++) {
        if (want ? strstr(ui->status, want) != NULL : ui->job == NULL)
            return;
        int fd = job_poll_fd(ui);
        assert_true(fd >= 0);
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 10) > 0)
            job_on_ready(ui);
    }
    fail_msg("footer never said \"%s\" (it says \"%s\")", want ? want : "(job ended)", ui->status);
}

static void no_children_left(void)
{
    errno = 0;
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
    assert_int_equal(errno, ECHILD);
}

static void test_job_result_success(void **state)
{
    (void)state;
    struct ui ui = {0};
    struct job_plan plan = {.rc = 0, .msg = "exported 3 actions to /x", .gate = -1};
    char *err = NULL;
    assert_int_equal(
        job_start(&ui, "export", "exporting to /x", "actions", job_plan_run, &plan, &err), 0);
    assert_null(err);
    assert_true(job_poll_fd(&ui) >= 0);
    job_pump(&ui, NULL);
    assert_string_equal(ui.status, "exported 3 actions to /x");
    assert_false(ui.status_error);
    assert_int_equal(job_poll_fd(&ui), -1);
    no_children_left();
}

static void test_job_result_failure_names_the_job(void **state)
{
    (void)state;
    struct ui ui = {0};
    struct job_plan plan = {.rc = -1, .msg = "/nope/a.json: No such file or directory", .gate = -1};
    char *err = NULL;
    assert_int_equal(
        job_start(&ui, "export", "exporting to /nope", "actions", job_plan_run, &plan, &err), 0);
    job_pump(&ui, NULL);
    assert_string_equal(ui.status, "export: /nope/a.json: No such file or directory");
    assert_true(ui.status_error);
    no_children_left();
}

/* Progress shows while the child works; the loop is never blocked by it; a second job is
 * refused meanwhile and the running one is unaffected. */
static void test_job_progress_and_one_at_a_time(void **state)
{
    (void)state;
    struct ui ui = {0};
    int gate[2];
    assert_int_equal(pipe(gate), 0);
    struct job_plan plan = {.rc = 0, .msg = "done it", .done = 5, .total = 10, .gate = gate[0]};
    char *err = NULL;
    assert_int_equal(
        job_start(&ui, "export", "exporting to /y", "actions", job_plan_run, &plan, &err), 0);
    job_pump(&ui, "exporting to /y: 5 of 10 actions");
    assert_false(ui.status_error);
    /* Nothing more to read: job_on_ready returns at once, the job still running. */
    job_on_ready(&ui);
    assert_non_null(ui.job);

    struct job_plan other = {.rc = 0, .msg = "other", .gate = -1};
    assert_int_equal(
        job_start(&ui, "export", "exporting to /z", "actions", job_plan_run, &other, &err), -1);
    assert_non_null(err);
    assert_string_equal(err, "export: export is still running (exporting to /y); wait for it");
    free(err);

    assert_int_equal(write(gate[1], "g", 1), 1);
    job_pump(&ui, NULL);
    assert_string_equal(ui.status, "done it");
    close(gate[0]);
    close(gate[1]);
    no_children_left();
}

/* 200,000 reports in a burst: the child sends at most one each 100 ms (and the last), so
 * the pipe never fills and the result still arrives whole. */
static void test_job_progress_flood(void **state)
{
    (void)state;
    struct ui ui = {0};
    struct job_plan plan = {.rc = 0, .msg = "flooded", .gate = -1, .flood = 200000};
    char *err = NULL;
    assert_int_equal(job_start(&ui, "export", "big", "actions", job_plan_run, &plan, &err), 0);
    job_pump(&ui, NULL);
    assert_string_equal(ui.status, "flooded");
    no_children_left();
}

static void test_job_child_killed(void **state)
{
    (void)state;
    struct ui ui = {0};
    struct job_plan plan = {.rc = 0, .msg = "never said", .gate = -1, .die_by = SIGKILL};
    char *err = NULL;
    assert_int_equal(
        job_start(&ui, "export", "exporting to /k", "actions", job_plan_run, &plan, &err), 0);
    job_pump(&ui, NULL);
    assert_true(ui.status_error);
    assert_string_equal(ui.status, "export: the worker process ended by signal 9, with no result");
    no_children_left();
}

/* The dashboard quits during a job: the child is ended by its PID and reaped. */
static void test_job_stop_ends_the_child(void **state)
{
    (void)state;
    struct ui ui = {0};
    int gate[2];
    assert_int_equal(pipe(gate), 0);
    struct job_plan plan = {.rc = 0, .msg = "x", .done = 1, .total = 2, .gate = gate[0]};
    char *err = NULL;
    assert_int_equal(job_start(&ui, "export", "slow", "actions", job_plan_run, &plan, &err), 0);
    job_pump(&ui, "slow: 1 of 2 actions");
    job_stop(&ui);
    assert_null(ui.job);
    assert_int_equal(job_poll_fd(&ui), -1);
    no_children_left();
    job_stop(&ui); /* nothing running: nothing happens */
    close(gate[0]);
    close(gate[1]);
}

int main(void)
{
    /* A dashboard's own signal handlers do not matter here; a child's SIGPIPE must not end
     * the test when a pipe's reader is gone. */
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_job_result_success),
        cmocka_unit_test(test_job_result_failure_names_the_job),
        cmocka_unit_test(test_job_progress_and_one_at_a_time),
        cmocka_unit_test(test_job_progress_flood),
        cmocka_unit_test(test_job_child_killed),
        cmocka_unit_test(test_job_stop_ends_the_child),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
