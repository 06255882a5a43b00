#include "skills.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "editor.h"
#include "editor_history.h"
#include "executor.h"
#include "fileio.h"
#include "pathname.h"
#include "pytext.h"

#define SKILLS_MODULE "agentskills.py"

/* Replaces the first placeholder (quotes included) in text with repr(value). */
static int fill(struct buf *text, const char *placeholder, const char *value)
{
    char *at = strstr(text->data, placeholder);
    struct buf out = BUF_INIT;
    if (!at)
        return -1;
    size_t head = (size_t)(at - text->data);
    if (buf_append(&out, text->data, head) < 0 || pytext_repr_str(&out, value, strlen(value)) < 0 ||
        buf_append_str(&out, at + strlen(placeholder)) < 0) {
        buf_free(&out);
        return -1;
    }
    buf_free(text);
    *text = out;
    return 0;
}

static int write_module(const char *dir, const struct buf *text, struct buf *err)
{
    char path[128];
    snprintf(path, sizeof path, "%s/" SKILLS_MODULE, dir);
    /* The directory is new and root's: nothing the agent made can be in the way. */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 || fchmod(fd, 0644) < 0 || fileio_replace(fd, text->data, text->len) < 0) {
        buf_printf(err, "agent_skills: cannot write %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

int skills_prepare(struct executor *ex, struct buf *err)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        buf_printf(err, "agent_skills: cannot find the executor's own path: %s", strerror(errno));
        return -1;
    }
    self[n] = '\0';
    char dir[] = "/tmp/paddock-skills.XXXXXX";
    /* Readable by every uid the shell may run as, writable by the executor alone. */
    if (!mkdtemp(dir) || chmod(dir, 0755) < 0) {
        buf_printf(err, "agent_skills: cannot make %s: %s", dir, strerror(errno));
        return -1;
    }
    struct buf text = BUF_INIT;
    if (buf_append_str(&text, skills_module_source) < 0 || fill(&text, "'@EXECUTOR@'", self) < 0 ||
        fill(&text, "'@WORKDIR@'", ex->cfg.working_dir) < 0) {
        buf_free(&text);
        rmdir(dir);
        buf_printf(err, "agent_skills: out of memory");
        return -1;
    }
    int rc = write_module(dir, &text, err);
    buf_free(&text);
    const char *old = getenv("PYTHONPATH");
    struct buf path = BUF_INIT;
    if (rc == 0 && (buf_printf(&path, "%s%s%s", dir, old && *old ? ":" : "", old ? old : "") < 0 ||
                    setenv("PYTHONPATH", path.data, 1) < 0 || !(ex->skills_dir = strdup(dir)))) {
        buf_printf(err, "agent_skills: out of memory");
        rc = -1;
    }
    buf_free(&path);
    if (rc < 0) {
        char file[128];
        snprintf(file, sizeof file, "%s/" SKILLS_MODULE, dir);
        unlink(file);
        rmdir(dir);
    }
    return rc;
}

void skills_free(struct executor *ex)
{
    if (!ex->skills_dir)
        return;
    char file[PATH_MAX];
    snprintf(file, sizeof file, "%s/" SKILLS_MODULE, ex->skills_dir);
    unlink(file);
    rmdir(ex->skills_dir);
    free(ex->skills_dir);
    ex->skills_dir = NULL;
}

/* ---- paddock-executor --file-editor --------------------------------------------------- */

static const char *string_arg(const json_t *args, const char *name, size_t *len)
{
    const json_t *v = json_object_get(args, name);
    if (!json_is_string(v))
        return NULL;
    if (len)
        *len = json_string_length(v);
    return json_string_value(v);
}

/* A JSON string of n bytes, or null when s is NULL (or not UTF-8, which the editor's text
 * never is). */
static json_t *str_or_null(const char *s, size_t n)
{
    json_t *v = s ? json_stringn(s, n) : NULL;
    return v ? v : json_null();
}

/* The fields of openhands-aci's result (ToolResult on a failure, else CLIResult), in its
 * order, for the module's <oh_aci_output_...> block. A directory's view has error "" (the
 * stderr of its find), a file's null. */
static json_t *aci_fields(const struct editor_args *ea, const struct editor_result *res)
{
    if (res->failed)
        return json_pack("{s:n, s:o}", "output", "error",
                         str_or_null(res->output.data ? res->output.data : "", res->output.len));
    struct buf path = BUF_INIT;
    struct stat st;
    bool dir = strcmp(ea->command, "view") == 0 && stat(ea->path, &st) == 0 && S_ISDIR(st.st_mode);
    json_t *f = NULL;
    if (pathname_normalize(&path, ea->path) == 0)
        f = json_pack(
            "{s:o, s:o, s:s, s:b, s:o, s:o}", "output",
            str_or_null(res->output.data ? res->output.data : "", res->output.len), "error",
            dir ? json_string("") : json_null(), "path", path.data, "prev_exist",
            strcmp(ea->command, "create") != 0, "old_content",
            str_or_null(res->has_old ? (res->old_content.data ? res->old_content.data : "") : NULL,
                        res->old_content.len),
            "new_content",
            str_or_null(res->has_new ? (res->new_content.data ? res->new_content.data : "") : NULL,
                        res->new_content.len));
    buf_free(&path);
    return f;
}

static json_t *edit_once(const json_t *req, struct editor_history *history)
{
    const json_t *args = json_object_get(req, "args");
    const char *key;
    json_t *v;
    json_object_foreach(json_object_get(req, "history"), key, v)
    {
        if (json_is_string(v) &&
            editor_history_push(history, key, json_string_value(v), json_string_length(v)) < 0)
            return NULL;
    }
    const char *path = string_arg(args, "path", NULL);
    const char *command = string_arg(args, "command", NULL);
    struct editor_args ea = {
        .command = command ? command : "",
        .path = path ? path : "",
        .file_text = string_arg(args, "file_text", &ea.file_text_len),
        .old_str = string_arg(args, "old_str", &ea.old_str_len),
        .new_str = string_arg(args, "new_str", &ea.new_str_len),
        .has_insert_line = json_is_integer(json_object_get(args, "insert_line")),
        .insert_line = (long)json_integer_value(json_object_get(args, "insert_line")),
    };
    const json_t *range = json_object_get(args, "view_range");
    ea.view_range = range && !json_is_null(range) ? range : NULL;
    const char *workdir = string_arg(req, "workdir", NULL);
    struct editor_env env = {.workspace_root = workdir ? workdir : "/", .history = history};
    struct editor_result res = {0};
    struct buf out = BUF_INIT;
    json_t *reply = NULL;
    if (editor_run(&env, &ea, &res) < 0 || (res.failed && buf_append_str(&out, "ERROR:\n") < 0) ||
        buf_append(&out, res.output.data ? res.output.data : "", res.output.len) < 0)
        goto done;
    reply = json_pack("{s:s%, s:o}", "output", out.data ? out.data : "", out.len, "result",
                      aci_fields(&ea, &res));
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
done:
    editor_result_free(&res);
    buf_free(&out);
    return reply;
}

int skills_file_editor_main(void)
{
    json_error_t jerr;
    json_t *req = json_loadf(stdin, JSON_ALLOW_NUL, &jerr);
    if (!json_is_object(req)) {
        fprintf(stderr, "paddock-executor: --file-editor: the request is not a JSON object: %s\n",
                jerr.text);
        json_decref(req);
        return 2;
    }
    struct editor_history *history = editor_history_new();
    json_t *reply = history ? edit_once(req, history) : NULL;
    editor_history_free(history);
    json_decref(req);
    if (!reply) {
        fprintf(stderr, "paddock-executor: --file-editor: out of memory\n");
        return 1;
    }
    int rc = json_dumpf(reply, stdout, JSON_COMPACT) < 0 || fflush(stdout) != 0 ? 1 : 0;
    json_decref(reply);
    return rc;
}
