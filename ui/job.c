/* A blocking operation (an export) run in a child process, so the dashboard's one loop keeps
 * drawing, taking keys and hearing events while it runs. The child reports over a pipe that
 * the loop polls with everything else:
 *   "p DONE TOTAL\n"   progress, at most every 100 ms
 *   "r RC "MESSAGE     the result, then end of file (MESSAGE may hold anything)
 * One job at a time. A child that ends without a result (killed, crashed) is said as such;
 * quitting the dashboard ends a running child by its PID and reaps it. */
#include "common/buf.h"
#include "common/io.h"
#include "ui/ui_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct ui_job {
    pid_t pid;
    int fd;         /* the pipe's read end (non-blocking) */
    char name[32];  /* "export": errors start with it */
    char what[200]; /* "exporting to DIR": progress starts with it */
    char unit[24];  /* what DONE and TOTAL count ("actions") */
    struct buf in;  /* bytes read and not yet taken */
    size_t done, total;
};

/* ---- the child's side ---- */

struct job_report {
    int fd;
    int64_t last_ms;
};

static void job_report_progress(void *ctx, size_t done, size_t total)
{
    struct job_report *rep = ctx;
    int64_t now = ui_now_ms();
    if (done != total && now - rep->last_ms < 100)
        return;
    rep->last_ms = now;
    char line[64];
    int n = snprintf(line, sizeof(line), "p %zu %zu\n", done, total);
    io_write_all(rep->fd, line, (size_t)n);
}

static _Noreturn void job_child(int fd, ui_job_fn fn, void *arg)
{
    /* The dashboard's handlers write to its signal pipe or restore the terminal: here a
     * SIGTERM must end us, and a crash must not touch the operator's screen. */
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGWINCH, SIGSEGV,
                               SIGBUS,  SIGFPE, SIGILL, SIGABRT,  SIGPIPE};
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        signal(sigs[i], sigs[i] == SIGPIPE ? SIG_IGN : SIG_DFL);
    /* The terminal is the dashboard's: nothing of ours reaches it through stdin or stdout
     * (stderr stays, where a sanitizer's report belongs). */
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, STDIN_FILENO);
        dup2(null, STDOUT_FILENO);
        close(null);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    struct job_report rep = {.fd = fd};
    char *msg = NULL;
    int rc = fn(arg, job_report_progress, &rep, &msg);
    char head[32];
    int n = snprintf(head, sizeof(head), "r %d ", rc);
    /* A failed write: the dashboard is gone, nobody to tell. */
    io_write_all(fd, head, (size_t)n);
    if (msg)
        io_write_all(fd, msg, strlen(msg));
    /* _exit: no atexit handlers, no stdio flush of the dashboard's buffers, no curses. */
    _exit(rc == 0 ? 0 : 1);
}

/* ---- the dashboard's side ---- */

int job_start(struct ui *ui, const char *name, const char *what, const char *unit, ui_job_fn fn,
              void *arg, char **err)
{
    *err = NULL;
    if (ui->job) {
        if (asprintf(err, "%s: %s is still running (%s); wait for it", name, ui->job->name,
                     ui->job->what) < 0)
            *err = NULL;
        return -1;
    }
    struct ui_job *job = calloc(1, sizeof(*job));
    int fds[2];
    if (!job || pipe2(fds, O_CLOEXEC) < 0) {
        if (asprintf(err, "%s: cannot start: %s", name, job ? strerror(errno) : "out of memory") <
            0)
            *err = NULL;
        free(job);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        if (asprintf(err, "%s: cannot start: %s", name, strerror(errno)) < 0)
            *err = NULL;
        close(fds[0]);
        close(fds[1]);
        free(job);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        job_child(fds[1], fn, arg);
    }
    close(fds[1]);
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    job->pid = pid;
    job->fd = fds[0];
    snprintf(job->name, sizeof(job->name), "%s", name);
    snprintf(job->what, sizeof(job->what), "%s", what);
    snprintf(job->unit, sizeof(job->unit), "%s", unit);
    ui->job = job;
    ui_set_status(ui, "%s ...", what);
    return 0;
}

int job_poll_fd(const struct ui *ui)
{
    return ui->job ? ui->job->fd : -1;
}

/* The newest complete progress line in the buffer; the lines are dropped, the result kept. */
static void job_take_progress(struct ui_job *job)
{
    size_t start = 0;
    for (;;) {
        if (job->in.len - start < 2 || job->in.data[start] != 'p')
            break;
        char *nl = memchr(job->in.data + start, '\n', job->in.len - start);
        if (!nl)
            break;
        *nl = '\0';
        size_t done, total;
        if (sscanf(job->in.data + start, "p %zu %zu", &done, &total) == 2) {
            job->done = done;
            job->total = total;
        }
        start = (size_t)(nl - job->in.data) + 1;
    }
    buf_consume(&job->in, start);
}

static void job_free(struct ui_job *job)
{
    if (job->fd >= 0)
        close(job->fd);
    buf_free(&job->in);
    free(job);
}

/* The child closed its end: its result, or why there is none. */
static unsigned job_finish(struct ui *ui)
{
    struct ui_job *job = ui->job;
    int status = 0;
    while (waitpid(job->pid, &status, 0) < 0 && errno == EINTR)
        ;
    int rc;
    int off = 0;
    if (job->in.len >= 2 && job->in.data[0] == 'r') {
        if (sscanf(job->in.data, "r %d %n", &rc, &off) >= 1 && off > 0) {
            const char *msg = job->in.data + off;
            if (rc == 0)
                ui_set_status(ui, "%s", *msg ? msg : "done");
            else
                ui_set_error(ui, "%s: %s", job->name, *msg ? msg : "failed");
        } else {
            off = 0;
        }
    }
    if (!off) {
        if (WIFSIGNALED(status))
            ui_set_error(ui, "%s: the worker process ended by signal %d, with no result", job->name,
                         WTERMSIG(status));
        else
            ui_set_error(ui, "%s: the worker process ended with no result (exit code %d)",
                         job->name, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    ui->job = NULL;
    job_free(job);
    return UI_DIRTY_FOOTER;
}

unsigned job_on_ready(struct ui *ui)
{
    struct ui_job *job = ui->job;
    if (!job)
        return 0;
    for (;;) {
        if (buf_reserve(&job->in, 4096) < 0)
            break; /* the next poll tries again */
        struct buf *in = &job->in;
        ssize_t n = read(job->fd, in->data + in->len, in->cap - in->len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break; /* EAGAIN: all read for now */
        if (n == 0)
            return job_finish(ui);
        in->len += (size_t)n;
        in->data[in->len] = '\0';
        job_take_progress(job);
    }
    if (!job->total) /* nothing to count yet: job_start's "WHAT ..." stays */
        return 0;
    ui_set_status(ui, "%s: %zu of %zu %s", job->what, job->done, job->total, job->unit);
    return UI_DIRTY_FOOTER;
}

void job_stop(struct ui *ui)
{
    struct ui_job *job = ui->job;
    if (!job)
        return;
    kill(job->pid, SIGTERM);
    while (waitpid(job->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    ui->job = NULL;
    job_free(job);
}
