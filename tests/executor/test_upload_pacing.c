/* endpoint_upload.c's back-pressure against a fake server and a fake child: the test owns the
 * read end of the pipe the upload writes its frames to, so it decides exactly when the child
 * "reads". The server's side is what MHD 0.9.75 does: it calls the data handler once per
 * chunk of a chunked body it has buffered, and goes on doing so after the handler suspended
 * the connection (process_request_body loops over the chunks without looking). A connection
 * held for want of room in the pipe must be let go whenever the stage drains, whichever call
 * drained it: else the upload stops for good, the executor idle and the child waiting on an
 * empty pipe. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_task.h"
#include "common/evloop.h"
#include "endpoint.h"
#include "executor.h"

#define PIPE_SIZE (1024 * 1024)

/* ---- the fakes -------------------------------------------------------------------------- */

static int child_read_fd = -1; /* the test's end of the upload pipe */
static unsigned replied;

const char *endpoint_query(struct request *rq, const char *key)
{
    (void)rq;
    return strcmp(key, "destination") == 0 ? "/nowhere" : NULL;
}

const char *endpoint_header(struct request *rq, const char *name)
{
    (void)rq;
    return strcmp(name, MHD_HTTP_HEADER_CONTENT_TYPE) == 0 ? "multipart/form-data; boundary=B"
                                                           : NULL;
}

enum MHD_Result endpoint_reply_json(struct request *rq, unsigned status, json_t *body)
{
    (void)rq;
    json_decref(body);
    replied = status;
    return MHD_YES;
}

enum MHD_Result endpoint_reply_detail(struct request *rq, unsigned status, const char *fmt, ...)
{
    (void)fmt;
    return endpoint_reply_json(rq, status, NULL);
}

void endpoint_suspend(struct request *rq)
{
    rq->suspended = true;
}

void endpoint_resume(struct request *rq)
{
    rq->suspended = false;
}

bool endpoint_stopping(const struct request *rq)
{
    (void)rq;
    return false;
}

enum MHD_Result endpoint_reply_stopping(struct request *rq)
{
    return endpoint_reply_json(rq, 503, NULL);
}

struct agent_task *agent_task_start(struct executor *ex, agent_task_fn fn, void *arg,
                                    unsigned flags, struct buf *err)
{
    (void)ex, (void)fn, (void)arg, (void)flags, (void)err;
    int fds[2];
    struct agent_task *t = calloc(1, sizeof *t);
    if (!t || pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0) {
        free(t);
        return NULL;
    }
    /* As large as agent_task.c makes it: the stage can then drain in one write. */
    fcntl(fds[1], F_SETPIPE_SZ, PIPE_SIZE);
    child_read_fd = fds[0];
    t->in_fd = fds[1];
    t->out_fd = -1;
    t->pid = -1;
    return t;
}

void agent_task_release(struct agent_task *t)
{
    if (t && t->in_fd >= 0)
        close(t->in_fd);
    free(t);
}

unsigned agent_task_fail(json_t **reply, unsigned status, const char *fmt, ...)
{
    (void)reply, (void)fmt;
    return status;
}

unsigned agent_task_fail_errno(json_t **reply, int err, const char *fmt, ...)
{
    (void)reply, (void)err, (void)fmt;
    return 500;
}

/* ---- helpers ---------------------------------------------------------------------------- */

struct fixture {
    struct executor ex;
    struct request rq;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    if (!f || !(f->ex.loop = evloop_new()))
        return -1;
    f->rq.ex = &f->ex;
    replied = 0;
    child_read_fd = -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    if (f->rq.state_free)
        f->rq.state_free(f->rq.state);
    if (child_read_fd >= 0)
        close(child_read_fd);
    evloop_free(f->ex.loop);
    free(f);
    return 0;
}

/* The child reads everything the pipe holds. */
static size_t child_reads_all(void)
{
    static char chunk[65536];
    size_t total = 0;
    ssize_t n;
    while ((n = read(child_read_fd, chunk, sizeof chunk)) > 0)
        total += (size_t)n;
    assert_true(n < 0 && errno == EAGAIN);
    return total;
}

/* One call of the data handler with n bytes of file content. */
static void feed(struct request *rq, char c, size_t n)
{
    char *data = malloc(n);
    assert_non_null(data);
    memset(data, c, n);
    assert_int_equal(endpoint_upload_data(rq, data, n), 0);
    free(data);
}

/* Starts the upload and fills the pipe and the stage past the high mark: the connection is
 * suspended, the pipe full. */
static void start_held_upload(struct request *rq)
{
    static const char head[] =
        "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f.bin\"\r\n\r\n";
    assert_int_equal(endpoint_upload_start(rq), MHD_YES);
    assert_int_equal(replied, 0);
    assert_int_equal(endpoint_upload_data(rq, head, strlen(head)), 0);
    assert_int_not_equal(child_read_fd, -1);
    feed(rq, 'x', PIPE_SIZE + 512 * 1024);
    assert_true(rq->suspended);
}

/* ---- tests ------------------------------------------------------------------------------ */

static void test_pipe_drained_by_loop_resumes(void **state)
{
    /* The plain case: the child reads, the pipe watch flushes the stage and resumes. */
    struct fixture *f = *state;
    start_held_upload(&f->rq);
    for (int turn = 0; turn < 8 && f->rq.suspended; turn++) {
        child_reads_all();
        assert_int_equal(evloop_run_once(f->ex.loop, 0), 0);
    }
    assert_false(f->rq.suspended);
}

static void test_stage_drained_by_next_chunk_resumes(void **state)
{
    /* The call for the next chunk, made while suspended, finds the pipe empty and writes the
     * whole stage: nothing is left to watch, so that call must resume the connection. */
    struct fixture *f = *state;
    start_held_upload(&f->rq);
    assert_true(child_reads_all() >= 1024 * 1024);
    feed(&f->rq, 'y', 100);
    assert_int_equal(evloop_run_once(f->ex.loop, 0), 0);
    assert_false(f->rq.suspended);
    /* The stage did go into the pipe: the 512 KiB held back and the new chunk. */
    assert_true(child_reads_all() >= 512 * 1024 + 100);
}

static void test_error_in_next_chunk_resumes(void **state)
{
    /* A broken body found in a call made while suspended: the child is dropped and the rest
     * of the body is to be read and discarded, so the connection must not stay held. */
    struct fixture *f = *state;
    start_held_upload(&f->rq);
    static const char bad[] = "\r\n--B\r\nno colon in this header line\r\n\r\n";
    assert_int_equal(endpoint_upload_data(&f->rq, bad, strlen(bad)), 0);
    assert_int_equal(evloop_run_once(f->ex.loop, 0), 0);
    assert_false(f->rq.suspended);
    assert_int_equal(endpoint_upload(&f->rq), MHD_YES);
    assert_int_equal(replied, 400);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pipe_drained_by_loop_resumes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stage_drained_by_next_chunk_resumes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_in_next_chunk_resumes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
