/* The `edit` action (FileEditAction) with impl_source "oh_aci": OpenHands' editor (editor.c)
 * run as the agent user (fsjob.c). The observation carries the editor's output (or
 * "ERROR:\n" + its error), the action's old_str/new_str, and the zero-context diff of the
 * file's text before and after. "llm_based_edit" runs on OpenHands' host side, not in the
 * sandbox, so it is refused. */
#include <stdlib.h>
#include <string.h>

#include "action.h"
#include "diff.h"
#include "editor.h"
#include "executor.h"
#include "fsjob.h"
#include "observation.h"
#include "pytext.h"

struct edit_args {
    char *path;
    char *command;
    char *file_text, *old_str, *new_str; /* NULL: null */
    size_t file_text_len, old_str_len, new_str_len;
    bool has_insert_line;
    long insert_line;
    char *insert_line_text; /* insert_line given as a string that int() rejects */
    double timeout;
};

void action_edit_free(void *p)
{
    struct edit_args *a = p;
    free(a->path);
    free(a->command);
    free(a->file_text);
    free(a->old_str);
    free(a->new_str);
    free(a->insert_line_text);
    free(a);
}

static int copy_string(const char *s, size_t n, char **out)
{
    if (!s)
        return 0;
    *out = malloc(n + 1);
    if (!*out)
        return -1;
    memcpy(*out, s, n);
    (*out)[n] = '\0';
    return 0;
}

/* insert_line: an integer, or a string OpenHands converts with int(). */
static int parse_insert_line(const json_t *args, struct edit_args *a, struct buf *err)
{
    const json_t *v = json_object_get(args, "insert_line");
    if (!v || json_is_null(v))
        return 0;
    if (json_is_integer(v)) {
        a->has_insert_line = true;
        a->insert_line = (long)json_integer_value(v);
        return 0;
    }
    if (!json_is_string(v)) {
        buf_printf(err, "Invalid field: action.args.insert_line (expected an integer or a string)");
        return -1;
    }
    if (pytext_parse_int(json_string_value(v), json_string_length(v), &a->insert_line) == 0) {
        a->has_insert_line = true;
        return 0;
    }
    if (copy_string(json_string_value(v), json_string_length(v), &a->insert_line_text) < 0) {
        buf_printf(err, "Out of memory");
        return -1;
    }
    return 0;
}

int action_edit_parse(const json_t *action, void **out, struct buf *err)
{
    const json_t *args = action_get_args(action, err);
    if (!args)
        return -1;
    const char *path = NULL, *command = "", *impl = "oh_aci", *file_text = NULL, *old_str = NULL,
               *new_str = NULL;
    size_t path_len = 0, command_len = 0, impl_len = 0;
    struct edit_args a = {.timeout = EXECUTOR_DEFAULT_TIMEOUT};
    if (action_get_string(args, "path", "action.args.path", true, &path, &path_len, err) < 0 ||
        action_get_string(args, "command", "action.args.command", false, &command, &command_len,
                          err) < 0 ||
        action_get_string(args, "impl_source", "action.args.impl_source", false, &impl, &impl_len,
                          err) < 0 ||
        action_get_string(args, "file_text", "action.args.file_text", false, &file_text,
                          &a.file_text_len, err) < 0 ||
        action_get_string(args, "old_str", "action.args.old_str", false, &old_str, &a.old_str_len,
                          err) < 0 ||
        action_get_string(args, "new_str", "action.args.new_str", false, &new_str, &a.new_str_len,
                          err) < 0 ||
        action_get_timeout(action, &a.timeout, err) < 0)
        return -1;
    if (strlen(path) != path_len) {
        buf_printf(err, "Invalid field: action.args.path (contains a NUL byte)");
        return -1;
    }
    if (strcmp(impl, "llm_based_edit") == 0) {
        buf_printf(err, "impl_source \"llm_based_edit\" is not run by the executor: OpenHands' "
                        "LLM-based editor runs on the host side (it reads and writes the file "
                        "with `read` and `write` actions); use impl_source \"oh_aci\" here");
        return -1;
    }
    if (strcmp(impl, "oh_aci") != 0) {
        buf_printf(err, "Invalid field: action.args.impl_source (expected \"oh_aci\")");
        return -1;
    }
    struct edit_args *copy = malloc(sizeof *copy);
    if (copy)
        *copy = a;
    if (!copy || copy_string(path, path_len, &copy->path) < 0 ||
        copy_string(command, command_len, &copy->command) < 0 ||
        copy_string(file_text, a.file_text_len, &copy->file_text) < 0 ||
        copy_string(old_str, a.old_str_len, &copy->old_str) < 0 ||
        copy_string(new_str, a.new_str_len, &copy->new_str) < 0 ||
        parse_insert_line(args, copy, err) < 0) {
        if (copy)
            action_edit_free(copy);
        if (!err->len)
            buf_printf(err, "Out of memory");
        return -1;
    }
    *out = copy;
    return 0;
}

static json_t *edit_in_child(const struct fsjob_env *env, const void *p)
{
    const struct edit_args *a = p;
    struct editor_result res = {0};
    struct buf content = BUF_INIT, diff = BUF_INIT;
    json_t *obs = NULL, *reply = NULL;
    if (a->insert_line_text) {
        /* OpenHands converts before calling the editor and stops here when int() fails. */
        if (buf_append_str(&content, "ERROR:\nInvalid insert_line value: '") < 0 ||
            buf_append_str(&content, a->insert_line_text) < 0 ||
            buf_append_str(&content, "'. Expected an integer.") < 0)
            goto out;
    } else {
        struct editor_env eenv = {.workspace_root = env->workdir,
                                  .history = env->history,
                                  .lint = env->auto_lint,
                                  .lint_path = getenv("PATH")};
        struct editor_args ea = {
            .command = a->command,
            .path = a->path,
            .file_text = a->file_text,
            .file_text_len = a->file_text_len,
            .old_str = a->old_str,
            .old_str_len = a->old_str_len,
            .new_str = a->new_str,
            .new_str_len = a->new_str_len,
            .has_insert_line = a->has_insert_line,
            .insert_line = a->insert_line,
        };
        if (editor_run(&eenv, &ea, &res) < 0 ||
            (res.failed && buf_append_str(&content, "ERROR:\n") < 0) ||
            buf_append(&content, res.output.data ? res.output.data : "", res.output.len) < 0)
            goto out;
        /* Only a successful call has contents to compare; the diff headers show the path as
         * the action gave it. */
        if (!res.failed &&
            diff_unified(&diff, a->path, res.old_content.data ? res.old_content.data : "",
                         res.old_content.len, res.new_content.data ? res.new_content.data : "",
                         res.new_content.len) < 0)
            goto out;
    }
    obs = observation_edit(content.data ? content.data : "", content.len, a->path, a->old_str,
                           a->old_str_len, a->new_str, a->new_str_len, diff.data ? diff.data : "",
                           diff.len);
    reply = fsjob_reply(obs);
    if (reply && !res.failed && res.history_op != EDITOR_HISTORY_NONE) {
        json_t *h = res.history_op == EDITOR_HISTORY_PUSH
                        ? json_pack("{s:s, s:s, s:s%}", "op", "push", "path", res.history_path.data,
                                    "text", res.history_text.data ? res.history_text.data : "",
                                    res.history_text.len)
                        : json_pack("{s:s, s:s}", "op", "pop", "path", res.history_path.data);
        if (!h || json_object_set_new(reply, "history", h) < 0) {
            json_decref(reply);
            reply = NULL;
        }
    }
out:
    editor_result_free(&res);
    buf_free(&content);
    buf_free(&diff);
    return reply;
}

enum action_status action_edit_start(struct executor *ex, struct action_req *req)
{
    const struct edit_args *a = req->args;
    return fsjob_start(ex, req, edit_in_child, a->timeout);
}
