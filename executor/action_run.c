/* The `run` action (CmdRunAction): commands, input and keys for the persistent shell, with
 * OpenHands' BashSession semantics (openhands/runtime/utils/bash.py; docs/protocol.md, "The
 * `run` action"); `is_static` commands in a fresh shell of their own; and the hidden commands the
 * executor runs itself (start-up steps, POST /env). Completion is the shell's marker; the only
 * timer is the action's own deadline (hard timeout, or no new output for a while). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "action.h"
#include "action_run.h"
#include "bashsplit.h"
#include "cmdline.h"
#include "executor.h"
#include "observation.h"
#include "plugin.h"
#include "text.h"
#include "which.h"

#define TIMEOUT_TEMPLATE                                                                           \
    "You may wait longer to see additional output by sending empty command '', send other "        \
    "commands to interact with the current process, send keys (\"C-c\", \"C-z\", \"C-d\") to "     \
    "interrupt/kill the previous command before sending your new command, or use the timeout "     \
    "parameter in execute_bash for future commands."
/* A ^C that brought no prompt is looked at again this often, and sent again at most this many
 * times (interrupt_check). */
#define RUN_INTERRUPT_RECHECK 0.5 /* seconds */
#define RUN_INTERRUPT_RESENDS 3
#define CONTINUE_PREFIX "[Below is the output of the previous command.]\n"

struct run_args {
    char *command; /* trimmed, as OpenHands strips it */
    size_t len;
    bool is_input, blocking, hidden;
    bool is_static;
    char *cwd;     /* is_static: where it runs (NULL: the working dir) */
    bool internal; /* the executor's own hidden command */
    double timeout;
};

/* A shell for one is_static command. Freed from the timer, never from inside its own
 * callbacks (the event that ends it comes from the middle of its read loop). */
struct static_shell {
    struct shell sh;
    struct run_state *r;
    bool typed;
    struct static_shell *next; /* on the dead list */
    char dir[PATH_MAX];
};

struct run_state {
    struct executor *ex;
    struct evloop_watch timer;
    double timer_armed; /* when the timerfd fires (INFINITY: disarmed); see timer_set */
    /* The request waiting for a shell, which shell, and how it waits. */
    struct action_req *req;
    const struct run_args *args;
    struct shell *sh;
    bool continuation; /* it watches a command an earlier request started */
    int key;           /* special key it sent, or -1 */
    double started, hard_deadline;
    /* The command typed last was reported as still running (timeout or refusal). */
    bool reported_running;
    /* ... and has finished since, with nobody waiting: its marker is kept for `""`. */
    bool unreported;
    struct marker_info finished;
    /* A ^C sent to a running command: the foreground process group it reached, when to look
     * again (INFINITY: not watching) and how often it was sent again. */
    pid_t intr_pgrp;
    double intr_at;
    int intr_resends;
    /* Said once in the next observation: the shell was restarted. */
    struct buf note;
    /* An internal command runs: the agent's unseen output waits here meanwhile. */
    struct capture saved;
    bool saved_active;
    struct static_shell *live; /* the is_static shell of the running request */
    struct static_shell *dead; /* finished ones, freed on the next timer tick */
    /* uid -> name cache for metadata.username */
    long name_uid;
    char name[64];
    char python[PATH_MAX];
    struct which_cache python_cache; /* metadata.py_interpreter_path after each command */
};

int action_run_parse(const json_t *action, void **out, struct buf *err)
{
    const json_t *args = action_get_args(action, err);
    const char *s = NULL, *cwd = NULL;
    size_t n = 0, cwd_len = 0;
    struct run_args a = {.timeout = EXECUTOR_DEFAULT_TIMEOUT};
    if (!args || action_get_string(args, "command", "action.args.command", true, &s, &n, err) < 0 ||
        action_get_bool(args, "is_input", "action.args.is_input", &a.is_input, err) < 0 ||
        action_get_bool(args, "blocking", "action.args.blocking", &a.blocking, err) < 0 ||
        action_get_bool(args, "hidden", "action.args.hidden", &a.hidden, err) < 0 ||
        action_get_bool(args, "is_static", "action.args.is_static", &a.is_static, err) < 0 ||
        action_get_string(args, "cwd", "action.args.cwd", false, &cwd, &cwd_len, err) < 0 ||
        action_get_timeout(action, &a.timeout, err) < 0)
        return -1;
    /* OpenHands strips the command before it does anything with it. */
    while (n > 0 && text_is_space((unsigned char)*s))
        s++, n--;
    n = text_rstrip_len(s, n);
    struct run_args *copy = malloc(sizeof *copy);
    char *text = malloc(n + 1);
    char *dir = cwd_len > 0 ? strdup(cwd) : NULL;
    if (!copy || !text || (cwd_len > 0 && !dir)) {
        free(copy);
        free(text);
        free(dir);
        buf_printf(err, "Out of memory");
        return -1;
    }
    memcpy(text, s, n);
    text[n] = '\0';
    *copy = a;
    copy->command = text;
    copy->len = n;
    copy->cwd = dir;
    *out = copy;
    return 0;
}

void action_run_free(void *p)
{
    struct run_args *a = p;
    free(a->command);
    free(a->cwd);
    free(a);
}

struct action_req *action_run_internal_new(const char *command, double timeout)
{
    struct action_req *req = calloc(1, sizeof *req);
    struct run_args *a = calloc(1, sizeof *a);
    char *text = strdup(command);
    if (!req || !a || !text) {
        free(req);
        free(a);
        free(text);
        return NULL;
    }
    *a = (struct run_args){.command = text,
                           .len = strlen(text),
                           .blocking = true,
                           .hidden = true,
                           .internal = true,
                           .timeout = timeout};
    req->type = action_type_find("run");
    req->args = a;
    return req;
}

int action_run_exit_code(const json_t *obs)
{
    const json_t *md = json_object_get(json_object_get(obs, "extras"), "metadata");
    const json_t *code = json_object_get(md, "exit_code");
    if (!json_is_string(json_object_get(obs, "observation")) ||
        strcmp(json_string_value(json_object_get(obs, "observation")), "run") != 0 ||
        !json_is_integer(code))
        return -1;
    return (int)json_integer_value(code);
}

static const char *uid_name(struct run_state *r, long uid)
{
    if (uid != r->name_uid) {
        /* The agent's own name first: its uid may have several passwd names. */
        struct passwd *pw = getpwuid((uid_t)uid);
        if (r->ex->cfg.username && (uid_t)uid == r->ex->cfg.uid &&
            strlen(r->ex->cfg.username) < sizeof r->name)
            snprintf(r->name, sizeof r->name, "%s", r->ex->cfg.username);
        else if (pw && strlen(pw->pw_name) < sizeof r->name)
            snprintf(r->name, sizeof r->name, "%s", pw->pw_name);
        else
            snprintf(r->name, sizeof r->name, "%ld", uid);
        r->name_uid = uid;
    }
    return r->name;
}

/* A terminal shows no NUL byte (`printf 'x\0y'` reads `xy` in OpenHands' tmux pane), so the
 * observation has none either; what they hid from the right-strip goes too. */
static void drop_nul(struct buf *b)
{
    size_t w = 0;
    for (size_t i = 0; i < b->len; i++)
        if (b->data[i] != '\0')
            b->data[w++] = b->data[i];
    if (b->data && w < b->len) {
        b->len = text_rstrip_len(b->data, w);
        b->data[b->len] = '\0';
    }
}

/* Builds the observation for args with the output nobody has seen yet, and forgets it.
 * Lines beyond OpenHands' 10,000-line window add the "truncated" prefix after md->prefix. */
static json_t *observe(struct run_state *r, const struct run_args *a, struct cmd_metadata *md,
                       const char *suffix)
{
    struct shell *sh = r->sh;
    struct buf content = BUF_INIT, full_suffix = BUF_INIT, prefix = BUF_INIT;
    json_t *obs = NULL;
    size_t shown = capture_shown_lines(&sh->out);
    /* OpenHands caps every observation but a hidden command's (its client keeps those out
     * of the agent's history instead). */
    int rendered = a->hidden ? capture_render_uncapped(&sh->out, &content)
                             : capture_render(&sh->out, &content);
    if (rendered < 0 || buf_append_str(&full_suffix, suffix) < 0 ||
        buf_append_str(&prefix, md->prefix ? md->prefix : "") < 0)
        goto out;
    if (shown && buf_printf(&prefix,
                            "[Previous command outputs are truncated. Showing the last %zu lines "
                            "of the output below.]\n",
                            shown) < 0)
        goto out;
    if (!a->internal) {
        /* The executor's own commands leave the restart note for the agent. */
        if (buf_append(&full_suffix, r->note.data, r->note.len) < 0)
            goto out;
        buf_reset(&r->note);
    }
    capture_clear(&sh->out);
    drop_nul(&content);
    md->prefix = prefix.data ? prefix.data : "";
    md->suffix = full_suffix.data;
    obs = observation_cmd_output(content.data ? content.data : "", content.len, a->command, a->len,
                                 a->hidden, md);
out:
    buf_free(&content);
    buf_free(&full_suffix);
    buf_free(&prefix);
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
    which_python_cached(&r->python_cache, m->path, m->cwd, r->python, sizeof r->python);
    md.py_interpreter_path = r->python;
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

/* CmdOutputObservation with only content (the idle shell's "ERROR:" replies; their command is "").
 * Output stays for later. */
static json_t *observe_message(struct run_state *r, const struct run_args *a, const char *content)
{
    struct cmd_metadata md;
    cmd_metadata_default(&md);
    md.suffix = r->note.len ? r->note.data : "";
    json_t *obs = observation_cmd_output(content, strlen(content), "", 0, a->hidden, &md);
    buf_reset(&r->note);
    return obs;
}

/* More than one top-level command is refused with the commands listed. NULL when the
 * command is one (or does not parse: it is then sent as it is). */
static json_t *refuse_multiple(const struct run_args *a)
{
    struct bashsplit_span *spans;
    int count = bashsplit_split(a->command, a->len, &spans);
    json_t *obs = NULL;
    if (count > 1) {
        struct buf text = BUF_INIT;
        int rc =
            buf_append_str(&text, "ERROR: Cannot execute multiple commands at once.\n"
                                  "Please run each command separately OR chain them into a single "
                                  "command via && or ;\nProvided commands:");
        for (int i = 0; i < count && rc == 0; i++)
            rc = buf_printf(&text, "\n(%d) %.*s", i + 1, (int)spans[i].len,
                            a->command + spans[i].start);
        obs = observation_error(rc == 0 ? text.data : "ERROR: Out of memory.");
        buf_free(&text);
    }
    free(spans);
    return obs;
}

/* The timer fires at `when` or earlier. A later time than the one set leaves the timerfd as
 * it is (on_timer wakes early, finds nothing due and sets it again), so a quick command costs
 * no timerfd call: the deadline its predecessor set is earlier than its own, and disarming
 * is left to that early wakeup. */
static void timer_set(struct run_state *r, double when)
{
    if (when >= r->timer_armed)
        return;
    evloop_timer_at(&r->timer, when);
    r->timer_armed = when;
}

/* When the no-change timeout would fire; it applies to non-blocking actions only. */
static double soft_deadline(const struct run_state *r)
{
    double last = r->sh->last_output;
    return (last > r->started ? last : r->started) + r->ex->cfg.no_change_timeout;
}

static void arm(struct run_state *r)
{
    double when = r->hard_deadline;
    if (!r->args->blocking && soft_deadline(r) < when)
        when = soft_deadline(r);
    if (r->intr_at < when)
        when = r->intr_at;
    timer_set(r, when);
}

/* A ^C can miss: sent while the foreground job has just exited and the shell has not yet
 * taken the tty back (a loop between its commands), it reaches no live process and the loop
 * runs on (seen with busybox ash). A ^C that reached its job leaves the same job in the
 * foreground (it caught it: a REPL) or brings the prompt. So while no prompt came, a new
 * foreground job that is not the shell itself gets the ^C again, a bounded number of times. */
static void interrupt_watch(struct run_state *r, pid_t reached)
{
    r->intr_pgrp = reached;
    r->intr_resends = 0;
    r->intr_at = evloop_now() + RUN_INTERRUPT_RECHECK;
    arm(r);
}

static void interrupt_check(struct run_state *r, double now)
{
    struct shell *sh = r->sh;
    pid_t fg = shell_foreground(sh);
    if (sh->busy && fg > 0 && fg != r->intr_pgrp && fg != sh->pid) {
        shell_send_key(sh, 0x03);
        r->intr_pgrp = fg;
        r->intr_resends++;
    }
    r->intr_at = r->intr_resends < RUN_INTERRUPT_RESENDS ? now + RUN_INTERRUPT_RECHECK : INFINITY;
}

/* The is_static shell is done with: onto the dead list, freed from the timer. */
static void retire_static(struct run_state *r)
{
    struct static_shell *s = r->live;
    if (!s)
        return;
    r->live = NULL;
    s->next = r->dead;
    r->dead = s;
}

static void free_dead(struct run_state *r)
{
    while (r->dead) {
        struct static_shell *s = r->dead;
        r->dead = s->next;
        shell_free(&s->sh);
        free(s);
    }
}

/* An internal command is over: the agent's unseen output comes back. */
static void restore_output(struct run_state *r)
{
    if (!r->saved_active)
        return;
    capture_reset(&r->ex->shell.out);
    r->ex->shell.out = r->saved;
    r->saved_active = false;
}

/* The shell's output while a request waits on it: to whoever watches the request. */
static void on_tap(void *ctx, const char *data, size_t n)
{
    struct run_state *r = ctx;
    if (r->req && r->req->on_output)
        r->req->on_output(r->req, data, n);
}

static void untap(struct run_state *r)
{
    r->sh->tap = NULL;
    r->sh->tap_ctx = NULL;
}

static void finish(struct run_state *r, json_t *obs)
{
    struct action_req *req = r->req;
    bool was_static = r->live && r->sh == &r->live->sh;
    untap(r);
    r->req = NULL;
    r->args = NULL;
    r->intr_at = INFINITY; /* the timer is left: with no request, on_timer does nothing */
    restore_output(r);
    r->sh = &r->ex->shell;
    if (was_static)
        retire_static(r);
    req->result = obs;
    action_finish(r->ex, req);
    /* A timer tick frees the finished static shell (a request started meanwhile re-arms
     * its own deadline from that tick). */
    if (r->dead)
        timer_set(r, evloop_now());
}

static void set_restart_note(struct run_state *r, int code)
{
    buf_reset(&r->note);
    if (r->ex->shell.lost)
        buf_printf(&r->note,
                   "\n[The shell's standard input was closed or redirected, so a new shell was "
                   "started in %s: variables, functions and background jobs of the old shell are "
                   "gone.]",
                   r->ex->cfg.working_dir);
    else
        buf_printf(&r->note,
                   "\n[The shell exited with code %d and a new shell was started in %s: "
                   "variables, functions and background jobs of the old shell are gone.]",
                   code, r->ex->cfg.working_dir);
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
    bool main_shell = r->sh == &r->ex->shell;
    if (main_shell && !a->internal)
        r->reported_running = true;
    json_t *obs = observe(r, a, &md, suffix.data ? suffix.data : "");
    buf_free(&suffix);
    if (a->internal) {
        /* Nobody can continue an executor command: kill the shell that runs it and start a
         * clean one. The agent's next observation says so. */
        struct shell *sh = &r->ex->shell;
        restore_output(r);
        shell_stop(sh);
        set_restart_note(r, 128 + SIGKILL);
        if (shell_start(sh) < 0)
            r->ex->shell_broken = true;
    }
    finish(r, obs);
}

static void on_timer(struct evloop_watch *w, uint32_t events)
{
    struct run_state *r = EVLOOP_CONTAINER_OF(w, struct run_state, timer);
    (void)events;
    evloop_timer_ack(w);
    r->timer_armed = INFINITY;
    free_dead(r);
    if (!r->req)
        return;
    /* Completion wins over a timeout that falls due at the same moment. */
    shell_drain(r->sh);
    if (!r->req)
        return;
    double now = evloop_now();
    if (now >= r->intr_at)
        interrupt_check(r, now);
    if (now >= r->hard_deadline)
        finish_timeout(r, true);
    else if (!r->args->blocking && now >= soft_deadline(r))
        finish_timeout(r, false);
    else
        arm(r);
}

static enum action_status wait_for_shell(struct run_state *r, struct action_req *req,
                                         struct shell *sh, bool continuation, int key)
{
    r->req = req;
    r->args = req->args;
    r->sh = sh;
    r->continuation = continuation;
    r->key = key;
    r->started = evloop_now();
    r->hard_deadline = r->started + r->args->timeout;
    r->intr_at = INFINITY;
    sh->tap = on_tap;
    sh->tap_ctx = r;
    arm(r);
    return ACTION_PENDING;
}

static enum action_status done(struct action_req *req, json_t *obs)
{
    req->result = obs;
    return ACTION_DONE;
}

/* Types a command, or a key as OpenHands sends it to an idle shell: ^C gives a new prompt
 * (exit 130) and ^D ends the shell. Any other key would be lost on the prompt and never
 * answered, so only an empty line is typed for it. busybox ash, interrupted at its prompt,
 * now and then prints the old prompt (the old exit code) once more before the new one, so a
 * PS1 shell gets the same result from a command instead of a real ^C. */
static int type_into(struct shell *sh, const struct run_args *a, int key, struct buf *err)
{
    if (key < 0)
        return shell_type_command(sh, a->command, a->len, err);
    if (key == 0x03 && !sh->opt.bash)
        return shell_type_command(sh, "(exit 130)", 10, err);
    int rc = key == 0x03 || key == 0x04 ? shell_send(sh, (const char[]){(char)key}, 1)
                                        : shell_send(sh, "\n", 1);
    if (rc < 0)
        buf_printf(err, "cannot write to the shell's terminal");
    sh->busy = true;
    return rc;
}

/* The ErrorObservation of a command that could not be handed to the shell. */
static json_t *refuse_typing(struct buf *err)
{
    struct buf msg = BUF_INIT;
    buf_printf(&msg, "ERROR: Could not pass the command to the shell: %s.",
               err->data ? err->data : "unknown error");
    json_t *obs = observation_error(msg.data ? msg.data : "ERROR: Out of memory.");
    buf_free(&msg);
    buf_free(err);
    return obs;
}

/* ---- is_static: a fresh shell for one command -------------------------------------------- */

static void on_static_event(struct shell *sh, enum shell_event ev, void *ctx)
{
    struct static_shell *s = ctx;
    struct run_state *r = s->r;
    if (!r->req || r->sh != sh)
        return;
    switch (ev) {
    case SHELL_EVENT_READY:
        if (!s->typed) {
            struct buf err = BUF_INIT;
            s->typed = true;
            if (type_into(sh, r->args, r->key, &err) < 0)
                finish(r, refuse_typing(&err));
        }
        break;
    case SHELL_EVENT_MARKER:
        finish(r, observe_completed(r, r->args, &sh->marker, r->key));
        break;
    case SHELL_EVENT_EXITED: {
        int st = sh->exit_status;
        if (!s->typed) {
            finish(r, observation_error("ERROR: The shell could not be started."));
            break;
        }
        struct marker_info m = sh->marker;
        m.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
        finish(r, observe_completed(r, r->args, &m, r->key));
        break;
    }
    }
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static enum action_status start_static(struct run_state *r, struct action_req *req)
{
    const struct run_args *a = req->args;
    const char *wd = r->ex->cfg.working_dir;
    int key = cmdline_special_key(a->command, a->len);
    json_t *refused;
    /* A fresh shell has nothing running (so the idle shell's "ERROR:" replies), and the
     * one-command rule holds. */
    if (a->len == 0)
        return done(req, observe_message(
                             r, a, "ERROR: No previous running command to retrieve logs from."));
    if (a->is_input)
        return done(req,
                    observe_message(r, a, "ERROR: No previous running command to interact with."));
    if ((refused = refuse_multiple(a)))
        return done(req, refused);

    struct static_shell *s = calloc(1, sizeof *s);
    if (!s)
        return done(req, observation_error("ERROR: Out of memory."));
    s->r = r;
    int n = !a->cwd            ? snprintf(s->dir, sizeof s->dir, "%s", wd)
            : a->cwd[0] == '/' ? snprintf(s->dir, sizeof s->dir, "%s", a->cwd)
                               : snprintf(s->dir, sizeof s->dir, "%s/%s", wd, a->cwd);
    if (n < 0 || (size_t)n >= sizeof s->dir || !is_dir(s->dir)) {
        struct buf msg = BUF_INIT;
        buf_printf(&msg, "ERROR: Cannot run the command in %s: not a directory.",
                   a->cwd ? a->cwd : wd);
        json_t *obs = observation_error(msg.data ? msg.data : "ERROR: Out of memory.");
        buf_free(&msg);
        free(s);
        return done(req, obs);
    }
    struct shell_options so = r->ex->shell.opt;
    so.workdir = s->dir;
    if (shell_init(&s->sh, r->ex->loop, &so, on_static_event, s) < 0) {
        free(s);
        return done(req, observation_error("ERROR: The shell could not be started."));
    }
    if (shell_start(&s->sh) < 0) {
        shell_free(&s->sh);
        free(s);
        return done(req, observation_error("ERROR: The shell could not be started."));
    }
    r->live = s;
    return wait_for_shell(r, req, &s->sh, false, key);
}

/* ---- the executor's own hidden commands -------------------------------------------------- */

static enum action_status start_internal(struct run_state *r, struct action_req *req)
{
    struct shell *sh = &r->ex->shell;
    const struct run_args *a = req->args;
    if (r->ex->shell_broken)
        return done(req, observation_error("ERROR: The shell could not be started."));
    if (sh->busy)
        return done(req, observation_error(ACTION_RUN_BUSY));
    /* Output the agent has not seen yet is not this command's: set it aside. */
    r->saved = sh->out;
    capture_init(&sh->out, 0, 0);
    r->saved_active = true;
    struct buf err = BUF_INIT;
    if (shell_type_hidden(sh, a->command, a->len, &err) < 0) {
        restore_output(r);
        return done(req, refuse_typing(&err));
    }
    return wait_for_shell(r, req, sh, false, -1);
}

/* ---- the persistent shell ---------------------------------------------------------------- */

enum action_status action_run_start(struct executor *ex, struct action_req *req)
{
    struct run_state *r = ex->run;
    struct shell *sh = &ex->shell;
    const struct run_args *a = req->args;
    int key = cmdline_special_key(a->command, a->len);
    json_t *refused;

    r->sh = sh;
    if (a->internal)
        return start_internal(r, req);
    if (a->is_static)
        return start_static(r, req);
    if (ex->shell_broken)
        return done(req, observation_error("ERROR: The shell could not be started."));

    if (a->len == 0) {
        /* Watch the running command again, or report it if it finished meanwhile. */
        if (sh->busy)
            return wait_for_shell(r, req, sh, true, -1);
        if (r->unreported) {
            r->unreported = r->reported_running = false;
            return done(req, observe_completed(r, a, &r->finished, -1));
        }
        return done(req, observe_message(
                             r, a, "ERROR: No previous running command to retrieve logs from."));
    }
    if (a->is_input && !sh->busy && !r->unreported)
        return done(req,
                    observe_message(r, a, "ERROR: No previous running command to interact with."));

    /* The one-command rule, checked (as OpenHands does) for input to a running program too. */
    if ((refused = refuse_multiple(a)))
        return done(req, refused);

    if (a->is_input) {
        if (!sh->busy) {
            /* It already finished: report that rather than feed text to the shell. */
            r->unreported = r->reported_running = false;
            return done(req, observe_completed(r, a, &r->finished, -1));
        }
        /* A key is a keystroke or, for ^C ^\\ ^Z, a signal that nothing queued holds back. */
        pid_t reached = shell_foreground(sh);
        int rc = key >= 0 ? shell_send_key(sh, key)
                          : (shell_send(sh, a->command, a->len) < 0 ? -1 : shell_send(sh, "\n", 1));
        if (rc < 0)
            return done(req, observation_error("ERROR: Could not write to the shell."));
        enum action_status st = wait_for_shell(r, req, sh, true, key);
        if (key == 0x03)
            interrupt_watch(r, reached);
        return st;
    }

    if (sh->busy) {
        /* A new command while one runs is refused, with the old one's new output. */
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
    struct buf err = BUF_INIT;
    if (type_into(sh, a, key, &err) < 0)
        return done(req, refuse_typing(&err));
    return wait_for_shell(r, req, sh, false, key);
}

void action_run_cancel(struct executor *ex, struct action_req *req)
{
    struct run_state *r = ex->run;
    if (r->req == req) {
        untap(r);
        r->req = NULL;
        r->args = NULL;
        r->intr_at = INFINITY;
        restore_output(r);
        retire_static(r);
        r->sh = &ex->shell;
    }
}

void action_run_on_shell_event(struct executor *ex, enum shell_event ev)
{
    struct run_state *r = ex->run;
    struct shell *sh = &ex->shell;
    bool waiting = r->req && r->sh == sh;
    switch (ev) {
    case SHELL_EVENT_READY:
        break;
    case SHELL_EVENT_MARKER:
        if (waiting) {
            if (!r->args->internal)
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
        set_restart_note(r, code);
        r->unreported = r->reported_running = false;
        if (waiting) {
            /* `exit 3` and the like: the command ended, with the shell's status. */
            struct marker_info m = sh->marker;
            m.exit_code = code;
            finish(r, observe_completed(r, r->args, &m, -1));
        }
        break;
    }
    }
}

bool action_run_child_exited(struct executor *ex, pid_t pid, int status)
{
    struct run_state *r = ex->run;
    if (!r)
        return false;
    if (r->live && r->live->sh.pid == pid) {
        shell_reaped(&r->live->sh, status);
        return true;
    }
    /* A finished one: its pid must not be signalled again once it may be reused. */
    for (struct static_shell *s = r->dead; s; s = s->next)
        if (s->sh.pid == pid) {
            shell_reaped(&s->sh, status);
            return true;
        }
    return false;
}

int action_run_init(struct executor *ex)
{
    struct run_state *r = calloc(1, sizeof *r);
    if (!r)
        return -1;
    r->ex = ex;
    r->sh = &ex->shell;
    r->name_uid = -1;
    r->intr_at = INFINITY;
    r->timer_armed = INFINITY;
    if (evloop_timer_open(ex->loop, &r->timer, on_timer) < 0) {
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
    retire_static(r);
    free_dead(r);
    if (r->saved_active) {
        capture_reset(&r->saved);
        r->saved_active = false;
    }
    evloop_timer_close(ex->loop, &r->timer);
    buf_free(&r->note);
    which_cache_free(&r->python_cache);
    free(r);
    ex->run = NULL;
}
