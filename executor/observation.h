/* Observation JSON, shaped exactly as OpenHands serialises it. */
#ifndef PADDOCK_EXECUTOR_OBSERVATION_H
#define PADDOCK_EXECUTOR_OBSERVATION_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* CmdOutputMetadata; NULL strings are JSON null. */
struct cmd_metadata {
    int exit_code;
    long pid;
    const char *username;
    const char *hostname;
    const char *working_dir;
    const char *py_interpreter_path;
    const char *prefix;
    const char *suffix;
};

/* exit_code -1, pid -1, nulls, empty prefix and suffix. */
void cmd_metadata_default(struct cmd_metadata *md);

/* CmdOutputObservation (`run`). Text is UTF-8-repaired where it is not valid. */
json_t *observation_cmd_output(const char *content, size_t content_len, const char *command,
                               size_t command_len, bool hidden, const struct cmd_metadata *md);
/* ErrorObservation. */
json_t *observation_error(const char *content);
/* IPythonRunCellObservation (`run_ipython`): image_urls null, success true. */
json_t *observation_ipython(const char *content, size_t content_len, const char *code,
                            size_t code_len);

/* BrowserOutputObservation (`browse`) for a page loaded once: no screenshot, no DOM or
 * accessibility tree objects, the page's URL as the only open page. */
struct browser_result {
    const char *url;
    const char *trigger;    /* "browse" or "browse_interactive" */
    bool error;             /* the page could not be loaded */
    const char *error_text; /* last_browser_action_error */
};
json_t *observation_browser(const char *content, size_t content_len,
                            const struct browser_result *res, const char *message);

/* FileReadObservation (`read`): extras path and impl_source ("default" or "oh_aci"). */
json_t *observation_read(const char *content, size_t content_len, const char *path,
                         const char *impl_source);
/* FileWriteObservation (`write`): empty content, extras path. */
json_t *observation_write(const char *path);
/* FileEditObservation (`edit`) as the oh_aci editor fills it: old_content/new_content are the
 * action's old_str/new_str (NULL: null), prev_exist is never set (false), _diff_cache null. */
json_t *observation_edit(const char *content, size_t content_len, const char *path,
                         const char *old_str, size_t old_len, const char *new_str, size_t new_len,
                         const char *diff, size_t diff_len);

#endif
