#include "action.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/timeconv.h"
#include "common/utf8.h"
#include "executor.h"
#include "fsjob.h"
#include "plugin.h"

/* The dataclass fields of OpenHands' actions (args), per type. */
static const char *const run_fields[] = {"command", "is_input", "blocking", "is_static",
                                         "cwd",     "hidden",   NULL};
static const char *const read_fields[] = {"path",        "start",      "end",
                                          "impl_source", "view_range", NULL};
static const char *const write_fields[] = {"path", "content", "start", "end", NULL};
static const char *const edit_fields[] = {"path",    "command",     "file_text", "old_str",
                                          "new_str", "insert_line", "content",   "start",
                                          "end",     "impl_source", NULL};
static const char *const ipython_fields[] = {"code", "include_extra", "kernel_init_code", NULL};
static const char *const browse_fields[] = {"url", "return_axtree", NULL};
static const char *const browse_interactive_fields[] = {
    "browser_actions", "browsergym_send_msg_to_user", "return_axtree", NULL};
/* Every action's, and the legacy names OpenHands' decoder still takes (and drops or
 * renames). */
static const char *const shared_fields[] = {
    "thought",     "security_risk",  "confirmation_state",      "is_confirmed",
    "keep_prompt", "task_completed", "translated_ipython_code", NULL};

static const struct action_type action_types[] = {
    {"run", action_run_parse, action_run_start, action_run_cancel, action_run_free, run_fields},
    {"read", action_read_parse, action_read_start, fsjob_cancel, action_read_free, read_fields},
    {"write", action_write_parse, action_write_start, fsjob_cancel, action_write_free,
     write_fields},
    {"edit", action_edit_parse, action_edit_start, fsjob_cancel, action_edit_free, edit_fields},
    {"run_ipython", action_ipython_parse, action_ipython_start, action_ipython_cancel,
     action_ipython_free, ipython_fields},
    {"browse", action_browse_parse, action_browse_start, action_browse_cancel, action_browse_free,
     browse_fields},
    {"browse_interactive", action_browse_interactive_parse, action_browse_start,
     action_browse_cancel, action_browse_free, browse_interactive_fields},
};

static bool in_list(const char *const *list, const char *key)
{
    for (; *list; list++)
        if (strcmp(*list, key) == 0)
            return true;
    return false;
}

/* -1 with a message naming the first args key the type does not take. */
static int check_fields(const struct action_type *type, const json_t *action, struct buf *err)
{
    const json_t *args = json_object_get(action, "args");
    const char *key;
    const json_t *value;
    if (!json_is_object(args))
        return 0; /* the parser says what is wrong with it */
    json_object_foreach((json_t *)args, key, value)
    {
        (void)value;
        if (!in_list(type->fields, key) && !in_list(shared_fields, key)) {
            buf_printf(err, "Unknown field: action.args.%s (%s takes: ", key, type->name);
            for (const char *const *f = type->fields; *f; f++)
                buf_printf(err, "%s%s", f == type->fields ? "" : ", ", *f);
            buf_printf(err, ")");
            return -1;
        }
    }
    return 0;
}

const struct action_type *action_type_find(const char *name)
{
    for (size_t i = 0; i < sizeof action_types / sizeof action_types[0]; i++)
        if (strcmp(action_types[i].name, name) == 0)
            return &action_types[i];
    return NULL;
}

int action_get_bool(const json_t *obj, const char *key, const char *path, bool *out,
                    struct buf *err)
{
    const json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_boolean(v)) {
        buf_printf(err, "Invalid field: %s (expected a boolean)", path);
        return -1;
    }
    *out = json_is_true(v);
    return 0;
}

const json_t *action_get_args(const json_t *action, struct buf *err)
{
    const json_t *args = json_object_get(action, "args");
    if (!args) {
        buf_printf(err, "Missing field: action.args");
        return NULL;
    }
    if (!json_is_object(args)) {
        buf_printf(err, "Invalid field: action.args (expected an object)");
        return NULL;
    }
    return args;
}

int action_get_string(const json_t *obj, const char *key, const char *path, bool required,
                      const char **out, size_t *len, struct buf *err)
{
    const json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) {
        if (required)
            buf_printf(err, "Missing field: %s", path);
        return required ? -1 : 0;
    }
    if (!json_is_string(v)) {
        buf_printf(err, "Invalid field: %s (expected a string)", path);
        return -1;
    }
    *out = json_string_value(v);
    *len = json_string_length(v);
    return 0;
}

int action_get_long(const json_t *obj, const char *key, const char *path, long *out,
                    struct buf *err)
{
    const json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_integer(v)) {
        buf_printf(err, "Invalid field: %s (expected an integer)", path);
        return -1;
    }
    *out = (long)json_integer_value(v);
    return 0;
}

int action_get_timeout(const json_t *action, double *out, struct buf *err)
{
    const json_t *t = json_object_get(action, "timeout");
    if (!t || json_is_null(t))
        return 0;
    if (!json_is_number(t)) {
        buf_printf(err, "Invalid field: action.timeout (expected a number)");
        return -1;
    }
    double v = json_number_value(t);
    if (v > TIMECONV_TIMEOUT_MAX) {
        /* no timer holds a deadline like 1e300: refused rather than never firing */
        buf_printf(err, "Invalid field: action.timeout (at most %.0f seconds)",
                   TIMECONV_TIMEOUT_MAX);
        return -1;
    }
    if (isfinite(v) && v > 0)
        *out = v;
    return 0;
}

/* The argument that says what the action is about, cut at a character, on one line. */
static void summarize(struct action_req *req, const json_t *action)
{
    static const char *const keys[] = {"command", "path", "code", "url", "browser_actions"};
    const json_t *args = json_object_get(action, "args");
    const char *text = NULL;
    size_t n = 0;
    for (size_t i = 0; !text && i < sizeof keys / sizeof keys[0]; i++) {
        const json_t *v = json_object_get(args, keys[i]);
        if (json_is_string(v)) {
            text = json_string_value(v);
            n = json_string_length(v);
        }
    }
    if (!text)
        return;
    bool cut = n >= sizeof req->summary;
    if (cut)
        n = utf8_cut(text, sizeof req->summary - 4);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        req->summary[i] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
    }
    if (cut)
        memcpy(req->summary + n, "...", 3), n += 3;
    req->summary[n] = '\0';
}

void action_log(struct executor *ex, const struct action_req *req)
{
    if (ex->quiet)
        return;
    char outcome[48];
    const json_t *obs = req->result;
    const json_t *ec =
        json_object_get(json_object_get(json_object_get(obs, "extras"), "metadata"), "exit_code");
    const char *kind = json_string_value(json_object_get(obs, "observation"));
    if (!obs)
        snprintf(outcome, sizeof outcome, "not finished (the executor stops)");
    else if (json_is_integer(ec))
        snprintf(outcome, sizeof outcome, "exit %lld", (long long)json_integer_value(ec));
    else if (kind && strcmp(kind, "error") == 0)
        snprintf(outcome, sizeof outcome, "error");
    else
        snprintf(outcome, sizeof outcome, "ok");
    reqlog_line(&ex->log, STDOUT_FILENO, false, "paddock-executor: %s \"%s\" %s, %.0f ms",
                req->type->name, req->summary, outcome, (evloop_now() - req->received) * 1e3);
}

struct action_req *action_req_new(const json_t *body, struct buf *err)
{
    if (!json_is_object(body)) {
        buf_printf(err, "Invalid request body: expected a JSON object");
        return NULL;
    }
    const json_t *action = json_object_get(body, "action");
    if (!action) {
        buf_printf(err, "Missing field: action");
        return NULL;
    }
    if (!json_is_object(action)) {
        buf_printf(err, "Invalid field: action (expected an object)");
        return NULL;
    }
    const json_t *kind = json_object_get(action, "action");
    if (!kind) {
        buf_printf(err, "Missing field: action.action");
        return NULL;
    }
    if (!json_is_string(kind)) {
        buf_printf(err, "Invalid field: action.action (expected a string)");
        return NULL;
    }
    const struct action_type *type = action_type_find(json_string_value(kind));
    if (!type) {
        buf_printf(err, "Unsupported action type: %s", json_string_value(kind));
        return NULL;
    }
    struct action_req *req = calloc(1, sizeof *req);
    if (!req) {
        buf_printf(err, "Out of memory");
        return NULL;
    }
    req->type = type;
    req->received = evloop_now();
    summarize(req, action);
    if (check_fields(type, action, err) < 0 || type->parse(action, &req->args, err) < 0) {
        free(req);
        return NULL;
    }
    return req;
}

void action_req_free(struct action_req *req)
{
    if (!req)
        return;
    if (req->args)
        req->type->free_args(req->args);
    json_decref(req->result);
    free(req);
}

/* Every action so far needs the shell; while it restarts, requests wait in the queue. */
static bool can_start(const struct executor *ex)
{
    return !ex->queue.running && (ex->shell.ready || ex->shell_broken) && !ex->stopping;
}

/* Starts req; true when it finished at once. */
static bool start(struct executor *ex, struct action_req *req)
{
    /* An action type of a plugin that is off: an ErrorObservation says which plugin. */
    req->result = plugin_check_action(ex, req->type->name);
    if (req->result)
        return true;
    ex->queue.running = req;
    if (req->type->start(ex, req) == ACTION_PENDING)
        return false;
    ex->queue.running = NULL;
    return true;
}

bool action_submit(struct executor *ex, struct action_req *req)
{
    struct action_queue *q = &ex->queue;
    if (!q->head && can_start(ex))
        return start(ex, req);
    req->next = NULL;
    if (q->tail)
        q->tail->next = req;
    else
        q->head = req;
    q->tail = req;
    return false;
}

void action_pump(struct executor *ex)
{
    struct action_queue *q = &ex->queue;
    while (q->head && can_start(ex)) {
        struct action_req *req = q->head;
        q->head = req->next;
        if (!q->head)
            q->tail = NULL;
        req->next = NULL;
        if (start(ex, req))
            req->done(req);
    }
}

void action_finish(struct executor *ex, struct action_req *req)
{
    if (ex->queue.running == req)
        ex->queue.running = NULL;
    req->done(req);
    action_pump(ex);
}

void action_abort_all(struct executor *ex)
{
    struct action_queue *q = &ex->queue;
    struct action_req *req = q->running;
    if (req) {
        q->running = NULL;
        req->type->cancel(ex, req);
        req->done(req);
    }
    while ((req = q->head)) {
        q->head = req->next;
        req->next = NULL;
        req->done(req);
    }
    q->tail = NULL;
}
