/* The `run` action (CmdRunAction): commands, input and keys for the persistent shell, with
 * OpenHands' BashSession semantics (protocol §3.3-3.6). Completion is the shell's marker;
 * the only timer is the action's own deadline (hard timeout, or no new output for a while). */
#include <errno.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "action.h"
#include "action_run.h"
#include "cmdline.h"
#include "executor.h"
#include "observation.h"
#include "plugin.h"
#include "text.h"

#define TIMEOUT_TEMPLATE                                                                           \
    "You may wait longer to see additional output by sending empty command '', send other "        \
    "commands to interact with the current process, send keys (\"C-c\", \"C-z\", \"C-d\") to "     \
    "interrupt/kill the previous command before sending your new command, or use the timeout "     \
    "parameter in execute_bash for future commands."
#define CONTINUE_PREFIX "[Below is the output of the previous command.]\n"

struct run_args {
    char *command; /* trimmed, as OpenHands strips it */
    size_t len;
    bool is_input, blocking, hidden;
    double timeout;
};

struct run_state {
    struct executor *ex;
    struct loop_watch timer;
    /* The request waiting for the shell, and how it waits. */
    struct action_req *req;
    const struct run_args *args;
    bool continuation; /* it watches a command an earlier request started */
    int key;           /* special key it sent, or -1 */
    double started, hard_deadline;
    /* The command typed last was reported as still running (timeout or refusal). */
    bool reported_running;
    /* ... and has finished since, with nobody waiting: its marker is kept for `""`. */
    bool unreported;
    struct marker_info finished;
    /* Said once in the next observation: the shell was restarted. */
    struct buf note;
    /* uid -> name cache for metadata.username */
    long name_uid;
    char name[64];
};

int action_run_parse(const json_t *action, void **out, struct buf *err)
{
    const json_t *args = json_object_get(action, "args");
    if (!args) {
        buf_printf(err, "Missing field: action.args");
        return -1;
    }
    if (!json_is_object(args)) {
        buf_printf(err, "Invalid field: action.args (expected an object)");
        return -1;
    }
    const json_t *cmd = json_object_get(args, "command");
    if (!cmd) {
        buf_printf(err, "Missing field: action.args.command");
        return -1;
    }
    if (!json_is_string(cmd)) {
        buf_printf(err, "Invalid field: action.args.command (expected a string)");
        return -1;
    }
    struct run_args a = {.timeout = EXECUTOR_DEFAULT_TIMEOUT};
    if (action_get_bool(args, "is_input", "action.args.is_input", &a.is_input, err) < 0 ||
        action_get_bool(args, "blocking", "action.args.blocking", &a.blocking, err) < 0 ||
        action_get_bool(args, "hidden", "action.args.hidden", &a.hidden, err) < 0)
        return -1;
    const json_t *t = json_object_get(action, "timeout");
    if (t && !json_is_null(t)) {
        if (!json_is_number(t)) {
            buf_printf(err, "Invalid field: action.timeout (expected a number)");
            return -1;
        }
        double v = json_number_value(t);
        if (isfinite(v) && v > 0)
            a.timeout = v;
    }
    /* OpenHands strips the command before it does anything with it. */
    const char *s = json_string_value(cmd);
    size_t n = json_string_length(cmd);
    while (n > 0 && text_is_space((unsigned char)*s))
        s++, n--;
    n = text_rstrip_len(s, n);
    struct run_args *copy = malloc(sizeof *copy);
    char *text = malloc(n + 1);
    if (!copy || !text) {
        free(copy);
        free(text);
        buf_printf(err, "Out of memory");
        return -1;
    }
    memcpy(text, s, n);
    text[n] = '\0';
    *copy = a;
    copy->command = text;
    copy->len = n;
    *out = copy;
    return 0;
}

void action_run_free(void *p)
{
    struct run_args *a = p;
    free(a->command);
    free(a);
}

static const char *uid_name(struct run_state *r, long uid)
{
    if (uid != r->name_uid) {
        struct passwd *pw = getpwuid((uid_t)uid);
        if (pw && strlen(pw->pw_name) < sizeof r->name)
            snprintf(r->name, sizeof r->name, "%s", pw->pw_name);
        else if (r->ex->cfg.username && (uid_t)uid == r->ex->cfg.uid)
            snprintf(r->name, sizeof r->name, "%s", r->ex->cfg.username);
        else
            snprintf(r->name, sizeof r->name, "%ld", uid);
        r->name_uid = uid;
    }
    return r->name;
}

/* Builds the observation for args with the output nobody has seen yet, and forgets it. */
static json_t *observe(struct run_state *r, const struct run_args *a, struct cmd_metadata *md,
                       const char *suffix)
{
    struct shell *sh = &r->ex->shell;
    struct buf content = BUF_INIT, full_suffix = BUF_INIT;
    json_t *obs = NULL;
    if (capture_render(&sh->out, &content) < 0 || buf_append_str(&full_suffix, suffix) < 0 ||
        buf_append(&full_suffix, r->note.data, r->note.len) < 0)
        goto out;
    capture_reset(&sh->out);
    buf_reset(&r->note);
    md->suffix = full_suffix.data;
    obs = observation_cmd_output(content.data ? content.data : "", content.len, a->command, a->len,
                                 a->hidden, md);
out:
    buf_free(&content);
    buf_free(&full_suffix);
    return obs;
}

/* An observation of a command that finished, with the status its marker carried. */
static json_t *observe_completed(struct run_state *r, const struct run_args *a,
                                 const struct marker_info *m, int key)
{
    struct cmd_metadata md;
    char suffix[128];
    cmd_metadata_default(&md);
    md.exit_code = m->exit_code;
    md.pid = m->pid;
    md.username = uid_name(r, m->uid);
    md.hostname = m->hostname;
    md.working_dir = m->cwd;
    if (key >= 0)
        snprintf(suffix, sizeof suffix,
                 "\n[The command completed with exit code %d. CTRL+%c was sent.]", m->exit_code,
                 cmdline_special_key_name(a->command, a->len));
    else
        snprintf(suffix, sizeof suffix, "\n[The command completed with exit code %d.]",
                 m->exit_code);
    json_t *obs = observe(r, a, &md, suffix);
    if (obs)
        plugin_on_run_completed(r->ex, m, obs);
    return obs;
}

/* CmdOutputObservation with only content (the §3.6 errors). Output stays for later. */
static json_t *observe_message(struct run_state *r, const struct run_args *a, const char *content)
{
    struct cmd_metadata md;
    cmd_metadata_default(&md);
    md.suffix = r->note.len ? r->note.data : "";
    json_t *obs =
        observation_cmd_output(content, strlen(content), a->command, a->len, a->hidden, &md);
    buf_reset(&r->note);
    return obs;
}

static void disarm(struct run_state *r)
{
    struct itimerspec off = {0};
    timerfd_settime(r->timer.fd, 0, &off, NULL);
}

static void arm_at(struct run_state *r, double when)
{
    struct itimerspec its = {0};
    if (when < 0)
        when = 0;
    its.it_value.tv_sec = (time_t)when;
    its.it_value.tv_nsec = (long)((when - floor(when)) * 1e9);
    if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
        its.it_value.tv_nsec = 1; /* zero would disarm */
    timerfd_settime(r->timer.fd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* When the no-change timeout would fire; it applies to non-blocking actions only. */
static double soft_deadline(const struct run_state *r)
{
    double last = r->ex->shell.last_output;
    return (last > r->started ? last : r->started) + r->ex->cfg.no_change_timeout;
}

static void arm(struct run_state *r)
{
    double when = r->hard_deadline;
    if (!r->args->blocking && soft_deadline(r) < when)
        when = soft_deadline(r);
    arm_at(r, when);
}

static void finish(struct run_state *r, json_t *obs)
{
    struct action_req *req = r->req;
    r->req = NULL;
    r->args = NULL;
    disarm(r);
    req->result = obs;
    action_finish(r->ex, req);
}

static void finish_timeout(struct run_state *r, bool hard)
{
    const struct run_args *a = r->args;
    struct cmd_metadata md;
    struct buf suffix = BUF_INIT;
    char num[64];
    cmd_metadata_default(&md);
    md.prefix = r->continuation ? CONTINUE_PREFIX : "";
    if (hard) {
        text_format_float(num, sizeof num, a->timeout);
        buf_printf(&suffix, "\n[The command timed out after %s seconds. " TIMEOUT_TEMPLATE "]",
                   num);
    } else {
        text_format_number(num, sizeof num, r->ex->cfg.no_change_timeout);
        buf_printf(&suffix,
                   "\n[The command has no new output after %s seconds. " TIMEOUT_TEMPLATE "]", num);
    }
    r->reported_running = true;
    json_t *obs = observe(r, a, &md, suffix.data ? suffix.data : "");
    buf_free(&suffix);
    finish(r, obs);
}

static void on_timer(struct loop_watch *w, uint32_t events)
{
    struct run_state *r = LOOP_CONTAINER_OF(w, struct run_state, timer);
    uint64_t ticks;
    ssize_t ignored = read(w->fd, &ticks, sizeof ticks);
    (void)ignored;
    (void)events;
    if (!r->req)
        return;
    /* Completion wins over a timeout that falls due at the same moment. */
    shell_drain(&r->ex->shell);
    if (!r->req)
        return;
    double now = loop_now();
    if (now >= r->hard_deadline)
        finish_timeout(r, true);
    else if (!r->args->blocking && now >= soft_deadline(r))
        finish_timeout(r, false);
    else
        arm(r);
}

static enum action_status wait_for_shell(struct run_state *r, struct action_req *req,
                                         bool continuation, int key)
{
    r->req = req;
    r->args = req->args;
    r->continuation = continuation;
    r->key = key;
    r->started = loop_now();
    r->hard_deadline = r->started + r->args->timeout;
    arm(r);
    return ACTION_PENDING;
}

static enum action_status done(struct action_req *req, json_t *obs)
{
    req->result = obs;
    return ACTION_DONE;
}

enum action_status action_run_start(struct executor *ex, struct action_req *req)
{
    struct run_state *r = ex->run;
    struct shell *sh = &ex->shell;
    const struct run_args *a = req->args;
    int key = cmdline_special_key(a->command, a->len);

    if (ex->shell_broken)
        return done(req, observation_error("ERROR: The shell could not be started."));

    if (a->len == 0) {
        /* Watch the running command again (§3.4), or report it if it finished meanwhile. */
        if (sh->busy)
            return wait_for_shell(r, req, true, -1);
        if (r->unreported) {
            r->unreported = r->reported_running = false;
            return done(req, observe_completed(r, a, &r->finished, -1));
        }
        return done(req, observe_message(
                             r, a, "ERROR: No previous running command to retrieve logs from."));
    }

    if (a->is_input) {
        if (sh->busy) {
            int rc = key >= 0
                         ? shell_send(sh, (const char[]){(char)key}, 1)
                         : (shell_send(sh, a->command, a->len) < 0 ? -1 : shell_send(sh, "\n", 1));
            if (rc < 0)
                return done(req, observation_error("ERROR: Could not write to the shell."));
            return wait_for_shell(r, req, true, key);
        }
        if (r->unreported) {
            /* It already finished: report that rather than feed text to the shell. */
            r->unreported = r->reported_running = false;
            return done(req, observe_completed(r, a, &r->finished, -1));
        }
        return done(req,
                    observe_message(r, a, "ERROR: No previous running command to interact with."));
    }

    if (sh->busy) {
        /* §3.4: a new command while one runs is refused, with the old one's new output. */
        struct cmd_metadata md;
        struct buf suffix = BUF_INIT;
        cmd_metadata_default(&md);
        md.prefix = CONTINUE_PREFIX;
        buf_append_str(&suffix, "\n[Your command \"");
        buf_append(&suffix, a->command, a->len);
        buf_append_str(&suffix,
                       "\" is NOT executed. The previous command is still running - You "
                       "CANNOT send new commands until the previous command is completed. "
                       "By setting `is_input` to `true`, you can interact with the current "
                       "process: " TIMEOUT_TEMPLATE "]");
        json_t *obs = observe(r, a, &md, suffix.data ? suffix.data : "");
        buf_free(&suffix);
        return done(req, obs);
    }

    r->unreported = r->reported_running = false;
    int rc;
    if (key < 0) {
        rc = shell_type_command(sh, a->command, a->len);
    } else {
        /* A key for the idle shell itself, as OpenHands sends it: ^C gives a new prompt
         * (exit 130) and ^D ends the shell (it is restarted). Any other key would be lost
         * on the prompt and never answered, so only an empty line is typed for it. */
        rc = key == 0x03 || key == 0x04 ? shell_send(sh, (const char[]){(char)key}, 1)
                                        : shell_send(sh, "\n", 1);
        sh->busy = true;
    }
    if (rc < 0)
        return done(req, observation_error("ERROR: Could not write to the shell."));
    return wait_for_shell(r, req, false, key);
}

void action_run_cancel(struct executor *ex, struct action_req *req)
{
    struct run_state *r = ex->run;
    if (r->req == req) {
        r->req = NULL;
        r->args = NULL;
        disarm(r);
    }
}

void action_run_on_shell_event(struct executor *ex, enum shell_event ev)
{
    struct run_state *r = ex->run;
    struct shell *sh = &ex->shell;
    switch (ev) {
    case SHELL_EVENT_READY:
        break;
    case SHELL_EVENT_MARKER:
        if (r->req) {
            r->reported_running = false;
            finish(r, observe_completed(r, r->args, &sh->marker, r->key));
        } else if (r->reported_running) {
            r->unreported = true;
            r->finished = sh->marker;
        }
        break;
    case SHELL_EVENT_EXITED: {
        int st = sh->exit_status;
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
        buf_reset(&r->note);
        buf_printf(&r->note,
                   "\n[The shell exited with code %d and a new shell was started in %s: variables, "
                   "functions and background jobs of the old shell are gone.]",
                   code, ex->cfg.working_dir);
        r->unreported = r->reported_running = false;
        if (r->req) {
            /* `exit 3` and the like: the command ended, with the shell's status. */
            struct marker_info m = sh->marker;
            m.exit_code = code;
            finish(r, observe_completed(r, r->args, &m, -1));
        }
        break;
    }
    }
}

int action_run_init(struct executor *ex)
{
    struct run_state *r = calloc(1, sizeof *r);
    if (!r)
        return -1;
    r->ex = ex;
    r->name_uid = -1;
    r->timer.fn = on_timer;
    r->timer.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (r->timer.fd < 0 || loop_add(ex->loop, &r->timer, EPOLLIN) < 0) {
        if (r->timer.fd >= 0)
            close(r->timer.fd);
        free(r);
        return -1;
    }
    ex->run = r;
    return 0;
}

void action_run_free_state(struct executor *ex)
{
    struct run_state *r = ex->run;
    if (!r)
        return;
    loop_del(ex->loop, &r->timer);
    close(r->timer.fd);
    buf_free(&r->note);
    free(r);
    ex->run = NULL;
}
