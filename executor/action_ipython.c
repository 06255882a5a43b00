/* The `run_ipython` action (IPythonRunCellAction), OpenHands' Jupyter plugin without Jupyter:
 * cells run in one persistent python3 process (ipython_runner.h) as the agent user.
 *
 * Before a cell the runner follows the bash shell: when the shell's working directory (from
 * its last marker) differs from the one pushed last, the runner chdirs there first. The
 * action's kernel_init_code runs once per runner process before its first cell (again after a
 * restart); its output is dropped. A cell that runs past its timeout gets SIGINT and the reply
 * says it timed out; the next cell waits for the interrupted one to end, at most
 * IPYTHON_INTERRUPT_GRACE seconds, after which the runner is killed and a new one starts.
 * While a cell runs, what it prints goes to the request's on_output as it is read
 * (`?paddock_stream=1`); the observation is the same either way. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "action.h"
#include "action_ipython.h"
#include "executor.h"
#include "ipython_runner.h"
#include "observation.h"
#include "text.h"
#include "which.h"

#define IPYTHON_INTERRUPT_GRACE 5.0 /* seconds an interrupted cell has to stop */
#define IPYTHON_NO_OUTPUT "[Code executed successfully with no output]"
#define IPYTHON_NO_PYTHON                                                                          \
    "ERROR: run_ipython needs python3, and there is none in PATH. Install Python in the image "    \
    "(e.g. apt-get install python3) or run Python through the `run` action."

struct ipython_args {
    char *code;
    size_t code_len;
    char *init_code; /* NULL when empty */
    size_t init_len;
    bool include_extra;
    double timeout;
    char timeout_text[48]; /* as Python prints the action's timeout: 5, 2.5, 120.0 */
};

enum ipython_step {
    STEP_NONE,  /* nothing sent */
    STEP_CHDIR, /* following the shell's directory */
    STEP_INIT,  /* kernel_init_code */
    STEP_CELL,  /* the cell itself */
};

struct ipython {
    struct executor *ex;
    struct ipython_runner runner;
    struct evloop_watch timer;
    struct action_req *req; /* the request being served, or waiting for an interrupted cell */
    const struct ipython_args *args;
    double deadline;
    enum ipython_step step;
    char *pushing;    /* the directory a STEP_CHDIR sends */
    char *pushed_cwd; /* the directory the runner was sent to last */
    bool init_done;   /* kernel_init_code ran in this runner */
    bool draining;    /* a timed-out cell was interrupted and has not ended yet */
    double grace_deadline;
    char python[4096]; /* the python3 started last */
};

int action_ipython_parse(const json_t *action, void **out, struct buf *err)
{
    const json_t *args = action_get_args(action, err);
    const char *code = NULL, *init = NULL;
    size_t code_len = 0, init_len = 0;
    struct ipython_args a = {.include_extra = true, .timeout = EXECUTOR_DEFAULT_TIMEOUT};
    snprintf(a.timeout_text, sizeof a.timeout_text, "%d", (int)EXECUTOR_DEFAULT_TIMEOUT);
    if (!args ||
        action_get_string(args, "code", "action.args.code", true, &code, &code_len, err) < 0 ||
        action_get_string(args, "kernel_init_code", "action.args.kernel_init_code", false, &init,
                          &init_len, err) < 0 ||
        action_get_bool(args, "include_extra", "action.args.include_extra", &a.include_extra, err) <
            0 ||
        action_get_timeout(action, &a.timeout, err) < 0)
        return -1;
    /* OpenHands formats the number it got: an int stays an int. */
    const json_t *t = json_object_get(action, "timeout");
    if (json_is_number(t) && isfinite(json_number_value(t)) && json_number_value(t) > 0) {
        if (json_is_integer(t))
            snprintf(a.timeout_text, sizeof a.timeout_text, "%" JSON_INTEGER_FORMAT,
                     json_integer_value(t));
        else
            text_format_float(a.timeout_text, sizeof a.timeout_text, a.timeout);
    }
    struct ipython_args *copy = malloc(sizeof *copy);
    if (!copy) {
        buf_printf(err, "Out of memory");
        return -1;
    }
    *copy = a;
    copy->code_len = code_len;
    copy->code = malloc(code_len + 1);
    if (init_len > 0) {
        copy->init_len = init_len;
        copy->init_code = malloc(init_len + 1);
        if (copy->init_code)
            memcpy(copy->init_code, init, init_len + 1);
    }
    if (!copy->code || (copy->init_len && !copy->init_code)) {
        free(copy->code);
        free(copy->init_code);
        free(copy);
        buf_printf(err, "Out of memory");
        return -1;
    }
    memcpy(copy->code, code, code_len + 1);
    *out = copy;
    return 0;
}

void action_ipython_free(void *p)
{
    struct ipython_args *a = p;
    free(a->code);
    free(a->init_code);
    free(a);
}

/* The bash shell's working directory, as its last marker said. */
static const char *shell_cwd(const struct ipython *r)
{
    const char *cwd = r->ex->shell.marker.cwd;
    return *cwd ? cwd : r->ex->cfg.working_dir;
}

static void arm(struct ipython *r)
{
    double when = INFINITY;
    if (r->req)
        when = r->deadline;
    if (r->draining && r->grace_deadline < when)
        when = r->grace_deadline;
    evloop_timer_at(&r->timer, when);
}

static void finish(struct ipython *r, json_t *obs)
{
    struct action_req *req = r->req;
    r->req = NULL;
    r->args = NULL;
    r->step = STEP_NONE;
    arm(r);
    req->result = obs;
    action_finish(r->ex, req);
}

/* The observation: text (or the cell's output when NULL), then the two info lines. */
static json_t *observe(struct ipython *r, const char *text, const char *note)
{
    const struct ipython_args *a = r->args;
    struct buf content = BUF_INIT;
    int rc = 0;
    if (text)
        rc = buf_append_str(&content, text);
    else if (!r->runner.saw_output && !note)
        rc = buf_append_str(&content, IPYTHON_NO_OUTPUT);
    else
        rc = capture_render(&r->runner.output, &content);
    if (rc == 0 && note)
        rc = buf_append_str(&content, note);
    if (rc == 0 && a->include_extra)
        rc = buf_printf(&content,
                        "\n[Jupyter current working directory: %s]"
                        "\n[Jupyter Python interpreter: %s]",
                        shell_cwd(r), r->runner.executable ? r->runner.executable : r->python);
    json_t *obs = rc == 0 ? observation_ipython(content.data ? content.data : "", content.len,
                                                a->code, a->code_len)
                          : NULL;
    buf_free(&content);
    return obs;
}

/* The runner's output while a cell of a request runs: to whoever watches the request (raw, as
 * the `run` action's; the observation drops colour codes). Not the directory or init steps',
 * nor what an interrupted cell prints after its reply. */
static void on_tap(void *ctx, const char *data, size_t n)
{
    struct ipython *r = ctx;
    if (r->req && r->step == STEP_CELL && r->req->on_output)
        r->req->on_output(r->req, data, n);
}

static json_t *errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static json_t *errorf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = NULL;
    if (vasprintf(&text, fmt, ap) < 0)
        text = NULL;
    va_end(ap);
    json_t *obs = observation_error(text ? text : "ERROR: Out of memory");
    free(text);
    return obs;
}

/* Sends what comes next for the request: the directory, the init code, or the cell. */
static json_t *next_step(struct ipython *r)
{
    const struct ipython_args *a = r->args;
    const char *cwd = shell_cwd(r);
    int rc;
    if (!r->pushed_cwd || strcmp(r->pushed_cwd, cwd) != 0) {
        free(r->pushing);
        r->pushing = strdup(cwd);
        r->step = STEP_CHDIR;
        rc = r->pushing ? ipython_runner_send(&r->runner, "chdir", cwd, strlen(cwd)) : -1;
    } else if (a->init_code && !r->init_done) {
        r->step = STEP_INIT;
        rc = ipython_runner_send(&r->runner, "cell", a->init_code, a->init_len);
    } else {
        ipython_runner_clear_output(&r->runner);
        r->step = STEP_CELL;
        rc = ipython_runner_send(&r->runner, "cell", a->code, a->code_len);
    }
    if (rc < 0) {
        ipython_runner_stop(&r->runner);
        r->step = STEP_NONE;
        return errorf("ERROR: Could not write to the Python runner.");
    }
    return NULL;
}

/* Starts serving r->req: a runner (started if needed), then its steps. NULL while it runs,
 * else the observation it ended with at once. */
static json_t *begin(struct ipython *r)
{
    if (!ipython_runner_running(&r->runner)) {
        free(r->pushed_cwd);
        r->pushed_cwd = NULL;
        r->init_done = false;
        if (!which_find_env(r->runner.opt.envp, "python3", r->python, sizeof r->python))
            return errorf("%s", IPYTHON_NO_PYTHON);
        /* Found as root; looked up again as the agent, who may see less. */
        if (ipython_runner_start(&r->runner, "python3") < 0)
            return errorf("ERROR: The Python runner could not be started (%s): %s", r->python,
                          strerror(errno));
    }
    arm(r);
    return next_step(r);
}

/* begin() for a request that already waited. */
static void resume(struct ipython *r)
{
    json_t *obs = begin(r);
    if (obs)
        finish(r, obs);
}

enum action_status action_ipython_start(struct executor *ex, struct action_req *req)
{
    struct ipython *r = ex->ipython;
    if (!r) {
        req->result = errorf("ERROR: run_ipython is not available: the executor was started "
                             "without the ipython plugin (--plugins ipython).");
        return ACTION_DONE;
    }
    r->req = req;
    r->args = req->args;
    r->deadline = evloop_now() + r->args->timeout;
    if (r->draining) {
        /* The interrupted cell ends first (or is killed at its grace deadline). */
        arm(r);
        return ACTION_PENDING;
    }
    json_t *obs = begin(r);
    if (!obs)
        return ACTION_PENDING;
    r->req = NULL;
    r->args = NULL;
    arm(r);
    req->result = obs;
    return ACTION_DONE;
}

void action_ipython_cancel(struct executor *ex, struct action_req *req)
{
    struct ipython *r = ex->ipython;
    if (r && r->req == req) {
        r->req = NULL;
        r->args = NULL;
        arm(r);
    }
}

static void on_runner(struct ipython_runner *runner, enum ipython_runner_event ev, void *ctx)
{
    struct ipython *r = ctx;
    (void)runner;
    switch (ev) {
    case IPYTHON_RUNNER_READY:
        break;
    case IPYTHON_RUNNER_DONE:
        if (r->draining) {
            r->draining = false;
            r->step = STEP_NONE;
            ipython_runner_clear_output(&r->runner);
            if (r->req)
                resume(r);
            else
                arm(r);
            return;
        }
        if (!r->req)
            return;
        switch (r->step) {
        case STEP_CHDIR:
            free(r->pushed_cwd);
            r->pushed_cwd = r->pushing;
            r->pushing = NULL;
            resume(r);
            break;
        case STEP_INIT:
            r->init_done = true;
            resume(r);
            break;
        case STEP_CELL:
            finish(r, observe(r, NULL, NULL));
            break;
        case STEP_NONE:
            break;
        }
        break;
    case IPYTHON_RUNNER_EXITED: {
        bool was_draining = r->draining;
        enum ipython_step step = r->step;
        r->draining = false;
        r->step = STEP_NONE;
        free(r->pushed_cwd);
        r->pushed_cwd = NULL;
        r->init_done = false;
        if (!r->req) {
            arm(r);
            return;
        }
        if (was_draining || step == STEP_NONE) {
            resume(r);
            return;
        }
        if (!r->runner.ready) {
            struct buf out = BUF_INIT;
            capture_render(&r->runner.output, &out);
            finish(r, errorf("ERROR: The Python runner could not be started (%s exited with "
                             "code %d)%s%s",
                             r->python, r->runner.exit_code, out.len ? ":\n" : ".",
                             out.len ? out.data : ""));
            buf_free(&out);
            return;
        }
        char note[256];
        snprintf(note, sizeof note,
                 "%s[The Python process exited with code %d: the next cell starts a new one, "
                 "without the variables and imports of this one.]",
                 capture_is_empty(&r->runner.output) ? "" : "\n", r->runner.exit_code);
        finish(r, observe(r, NULL, note));
        break;
    }
    }
}

static void on_timer(struct evloop_watch *w, uint32_t events)
{
    struct ipython *r = EVLOOP_CONTAINER_OF(w, struct ipython, timer);
    (void)events;
    evloop_timer_ack(w);
    if (!r->req && !r->draining)
        return;
    /* Completion wins over a timeout that falls due at the same moment. */
    ipython_runner_drain(&r->runner);
    double now = evloop_now();
    if (r->draining && now >= r->grace_deadline) {
        /* The interrupted cell did not stop: the runner goes, with its variables. */
        ipython_runner_stop(&r->runner);
        r->draining = false;
        r->step = STEP_NONE;
        if (r->req && now < r->deadline) {
            resume(r);
            return;
        }
    }
    if (r->req && now >= r->deadline) {
        if (r->step != STEP_NONE) {
            if (r->runner.ready) {
                ipython_runner_interrupt(&r->runner);
                r->draining = true;
                r->grace_deadline = now + IPYTHON_INTERRUPT_GRACE;
            } else {
                ipython_runner_stop(&r->runner); /* it never started properly */
            }
        }
        char text[96];
        snprintf(text, sizeof text, "[Execution timed out (%s seconds).]", r->args->timeout_text);
        finish(r, observe(r, text, NULL));
        return;
    }
    arm(r);
}

int action_ipython_init(struct executor *ex, struct buf *err)
{
    struct ipython *r = calloc(1, sizeof *r);
    if (!r) {
        buf_printf(err, "out of memory");
        return -1;
    }
    r->ex = ex;
    struct ipython_runner_options ro = {
        .envp = ex->shell.opt.envp,
        .workdir = ex->cfg.working_dir,
        .switch_user = ex->cfg.switch_user,
        .uid = ex->cfg.uid,
        .gid = ex->cfg.gid,
    };
    ipython_runner_init(&r->runner, ex->loop, &ro, on_runner, r);
    r->runner.tap = on_tap;
    r->runner.tap_ctx = r;
    if (evloop_timer_open(ex->loop, &r->timer, on_timer) < 0) {
        buf_printf(err, "cannot create the run_ipython timer: %s", strerror(errno));
        free(r);
        return -1;
    }
    ex->ipython = r;
    return 0;
}

void action_ipython_free_state(struct executor *ex)
{
    struct ipython *r = ex->ipython;
    if (!r)
        return;
    ipython_runner_free(&r->runner);
    evloop_timer_close(ex->loop, &r->timer);
    free(r->pushing);
    free(r->pushed_cwd);
    free(r);
    ex->ipython = NULL;
}

bool action_ipython_reaped(struct executor *ex, pid_t pid, int status)
{
    return ex->ipython && ipython_runner_reaped(&ex->ipython->runner, pid, status);
}
