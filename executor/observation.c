#include "observation.h"

#include <string.h>

#include "common/buf.h"
#include "common/utf8.h"
#include "text.h"

void cmd_metadata_default(struct cmd_metadata *md)
{
    *md = (struct cmd_metadata){.exit_code = -1, .pid = -1, .prefix = "", .suffix = ""};
}

/* A JSON string of any bytes: valid UTF-8 stays, anything else is repaired. */
static json_t *string_of(const char *s, size_t n)
{
    json_t *v = json_stringn(s, n);
    if (v)
        return v;
    struct buf fixed = BUF_INIT;
    if (utf8_repair(&fixed, s, n, 0, NULL) == 0)
        v = json_stringn(fixed.data ? fixed.data : "", fixed.len);
    buf_free(&fixed);
    return v;
}

static json_t *nullable(const char *s)
{
    return s ? string_of(s, strlen(s)) : json_null();
}

json_t *observation_cmd_output(const char *content, size_t content_len, const char *command,
                               size_t command_len, bool hidden, const struct cmd_metadata *md)
{
    struct buf msg = BUF_INIT;
    if (buf_append_str(&msg, "Command `") < 0 || buf_append(&msg, command, command_len) < 0 ||
        buf_printf(&msg, "` executed with exit code %d.", md->exit_code) < 0) {
        buf_free(&msg);
        return NULL;
    }
    json_t *obs = json_pack(
        "{s:s, s:o, s:{s:o, s:b, s:{s:i, s:I, s:o, s:o, s:o, s:o, s:o, s:o}}, s:o, s:b}",
        "observation", "run", "content", string_of(content, content_len), "extras", "command",
        string_of(command, command_len), "hidden", hidden, "metadata", "exit_code", md->exit_code,
        "pid", (json_int_t)md->pid, "username", nullable(md->username), "hostname",
        nullable(md->hostname), "working_dir", nullable(md->working_dir), "py_interpreter_path",
        nullable(md->py_interpreter_path), "prefix", nullable(md->prefix), "suffix",
        nullable(md->suffix), "message", string_of(msg.data, msg.len), "success",
        md->exit_code == 0);
    buf_free(&msg);
    return obs;
}

json_t *observation_error(const char *content)
{
    return json_pack("{s:s, s:o, s:{s:s}, s:o}", "observation", "error", "content",
                     string_of(content, strlen(content)), "extras", "error_id", "", "message",
                     string_of(content, strlen(content)));
}

/* "I read the file <path>." and the like. */
static json_t *message_about(const char *what, const char *path)
{
    struct buf msg = BUF_INIT;
    json_t *v = NULL;
    if (buf_printf(&msg, "I %s %s.", what, path) == 0)
        v = string_of(msg.data, msg.len);
    buf_free(&msg);
    return v;
}

json_t *observation_read(const char *content, size_t content_len, const char *path,
                         const char *impl_source)
{
    return json_pack("{s:s, s:o, s:{s:o, s:s}, s:o}", "observation", "read", "content",
                     string_of(content, content_len), "extras", "path",
                     string_of(path, strlen(path)), "impl_source", impl_source, "message",
                     message_about("read the file", path));
}

json_t *observation_write(const char *path)
{
    return json_pack("{s:s, s:s, s:{s:o}, s:o}", "observation", "write", "content", "", "extras",
                     "path", string_of(path, strlen(path)), "message",
                     message_about("wrote to the file", path));
}

static json_t *nullable_n(const char *s, size_t n)
{
    return s ? string_of(s, n) : json_null();
}

json_t *observation_edit(const char *content, size_t content_len, const char *path,
                         const char *old_str, size_t old_len, const char *new_str, size_t new_len,
                         const char *diff, size_t diff_len)
{
    return json_pack("{s:s, s:o, s:{s:o, s:b, s:o, s:o, s:s, s:o, s:n}, s:o}", "observation",
                     "edit", "content", string_of(content, content_len), "extras", "path",
                     string_of(path, strlen(path)), "prev_exist", 0, "old_content",
                     nullable_n(old_str, old_len), "new_content", nullable_n(new_str, new_len),
                     "impl_source", "oh_aci", "diff", string_of(diff, diff_len), "_diff_cache",
                     "message", message_about("edited the file", path));
}

json_t *observation_ipython(const char *content, size_t content_len, const char *code,
                            size_t code_len)
{
    return json_pack("{s:s, s:o, s:{s:o, s:n}, s:s, s:b}", "observation", "run_ipython", "content",
                     string_of(content, content_len), "extras", "code", string_of(code, code_len),
                     "image_urls", "message", "Code executed in IPython cell.", "success", 1);
}

json_t *observation_browser(const char *content, size_t content_len,
                            const struct browser_result *res, const char *message)
{
    struct buf action = BUF_INIT;
    if (buf_printf(&action, "goto(\"%s\")", res->url) < 0)
        return NULL;
    json_t *obs = json_pack(
        "{s:s, s:o, s:{s:o, s:s, s:s, s:n, s:s, s:b, s:[], s:[o], s:i, s:{}, s:{}, s:{}, s:o, "
        "s:o, s:s, s:b}, s:o}",
        "observation", "browse", "content", string_of(content, content_len), "extras", "url",
        nullable(res->url), "trigger_by_action", res->trigger, "screenshot", "", "screenshot_path",
        "set_of_marks", "", "error", res->error, "goal_image_urls", "open_pages_urls",
        nullable(res->url), "active_page_index", 0, "dom_object", "axtree_object",
        "extra_element_properties", "last_browser_action", string_of(action.data, action.len),
        "last_browser_action_error", nullable(res->error_text), "focused_element_bid", "",
        "filter_visible_only", 0, "message", nullable(message));
    buf_free(&action);
    return obs;
}
