#include "startup.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "action.h"
#include "action_run.h"
#include "executor.h"
#include "observation.h"

/* OpenHands' defaults for `git config --global user.name/user.email`. An existing
 * ~/.gitconfig is never touched (an executor run on a host must not rewrite its owner's
 * identity), and the defaults are written without starting git, which costs ~100 ms here. */
#define GIT_IDENTITY_COMMAND                                                                       \
    "if command -v git >/dev/null 2>&1 && [ ! -e ~/.gitconfig ]; then "                            \
    "if [ -z \"${GIT_USER_NAME}${GIT_USER_EMAIL}\" ]; then "                                       \
    "printf '[user]\\n\\tname = openhands\\n\\temail = openhands@all-hands.dev\\n' > "             \
    "~/.gitconfig; "                                                                               \
    "else git config --global user.name \"${GIT_USER_NAME:-openhands}\" && "                       \
    "git config --global user.email \"${GIT_USER_EMAIL:-openhands@all-hands.dev}\"; fi; fi"

static void step_done(struct action_req *req)
{
    *(bool *)req->owner = true;
}

/* Runs command as a hidden executor command and waits for it. NULL when stopping. */
static json_t *run_step(struct executor *ex, const char *command, double timeout)
{
    bool finished = false;
    struct action_req *req = action_run_internal_new(command, timeout);
    if (!req)
        return observation_error("ERROR: Out of memory.");
    req->done = step_done;
    req->owner = &finished;
    if (action_submit(ex, req))
        finished = true;
    while (!finished && !ex->stopping)
        if (evloop_run_once(ex->loop, -1) < 0)
            break;
    if (!finished)
        action_abort_all(ex); /* calls done: nothing refers to req afterwards */
    json_t *obs = req->result;
    req->result = NULL;
    action_req_free(req);
    return obs;
}

/* Logs a step that did not exit 0. */
static void check(const char *what, json_t *obs, struct buf *log)
{
    int code = action_run_exit_code(obs);
    if (code == 0)
        return;
    const char *content = json_string_value(json_object_get(obs, "content"));
    if (code >= 0)
        buf_printf(log, "%s: exit code %d%s%s\n", what, code, content && *content ? ": " : "",
                   content ? content : "");
    else /* a run observation without an exit code timed out: it was stopped */
        buf_printf(log, "%s: %s\n", what,
                   content && *content ? content : "did not finish in time and was stopped");
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int startup_run(struct executor *ex, const struct startup_params *p, struct buf *log)
{
    json_t *obs;
    if (p->nvars) {
        struct buf cmd = BUF_INIT;
        if (env_script_add(&cmd, p->vars, p->nvars) < 0) {
            buf_free(&cmd);
            buf_printf(log, "environment variables: out of memory\n");
        } else {
            obs = run_step(ex, cmd.data, STARTUP_STEP_TIMEOUT);
            buf_free(&cmd);
            if (!obs)
                return -1;
            check("environment variables", obs, log);
            json_decref(obs);
        }
    }

    obs = run_step(ex, GIT_IDENTITY_COMMAND, STARTUP_STEP_TIMEOUT);
    if (!obs)
        return -1;
    check("git identity", obs, log);
    json_decref(obs);

    /* The workspace's own set-up, sourced so what it exports stays in the session. */
    static const char *const scripts[] = {".paddock/setup.sh", ".openhands/setup.sh"};
    for (size_t i = 0; i < sizeof scripts / sizeof scripts[0]; i++) {
        struct buf path = BUF_INIT, cmd = BUF_INIT;
        buf_printf(&path, "%s/%s", p->working_dir, scripts[i]);
        bool found = path.data && is_file(path.data);
        if (found && buf_append_str(&cmd, ". ") == 0 &&
            env_squote(&cmd, path.data, path.len) == 0) {
            obs = run_step(ex, cmd.data, p->setup_timeout);
            if (obs) {
                buf_reset(&cmd);
                buf_printf(&cmd, "setup script %s", path.data);
                check(cmd.data, obs, log);
                json_decref(obs);
            }
        }
        buf_free(&path);
        buf_free(&cmd);
        if (found)
            return ex->stopping ? -1 : 0;
    }
    return 0;
}
