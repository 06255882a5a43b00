/* OpenHands' file editor (openhands-aci OHEditor 0.3.2): view, create, str_replace, insert,
 * undo_edit, with its exact messages.
 *
 * Runs inside the file-action child (fsjob.c) as the agent user: every stat, open, read
 * and write below is the agent's own. It never touches the undo history: it reads it from
 * env and says in the result what to push or pop, and the executor applies that when the
 * child reports back. */
#ifndef PADDOCK_EXECUTOR_EDITOR_H
#define PADDOCK_EXECUTOR_EDITOR_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/buf.h"
#include "editor_encoding.h"
#include "editor_history.h"

#define EDITOR_MAX_FILE_SIZE (10u * 1024 * 1024) /* bytes; larger files are refused */
#define EDITOR_MAX_RESPONSE_CHARS 16000          /* longer output is clipped with a NOTE */
#define EDITOR_SNIPPET_CONTEXT 4                 /* lines around an edit in its snippet */

#define EDITOR_TEXT_CLIPPED                                                                        \
    "<response clipped><NOTE>Due to the max output limit, only part of this file has been "        \
    "shown to you. You should retry this tool after you have searched inside the file with "       \
    "`grep -n` in order to find the line numbers of what you are looking for.</NOTE>"
#define EDITOR_DIR_CLIPPED                                                                         \
    "<response clipped><NOTE>Due to the max output limit, only part of this directory has been "   \
    "shown to you. You should use `ls -la` instead to view large directories "                     \
    "incrementally.</NOTE>"
#define EDITOR_OUTPUT_CLIPPED                                                                      \
    "<response clipped><NOTE>Due to the max output limit, only part of the full response has "     \
    "been shown to you.</NOTE>"

struct editor_env {
    const char *workspace_root; /* for the "Maybe you meant" hint: the executor's working dir */
    const struct editor_history *history;
    bool lint; /* OpenHands' enable_linting: str_replace, insert (and create) lint (lint.h) */
    const char *lint_path; /* the PATH linters are looked for along; NULL: the default */
};

/* One call. NULL strings are JSON null (Python None). */
struct editor_args {
    const char *command;
    const char *path;
    const char *file_text;
    size_t file_text_len;
    const char *old_str;
    size_t old_str_len;
    const char *new_str;
    size_t new_str_len;
    bool has_insert_line;
    long insert_line;
    const json_t *view_range; /* NULL: not given */
};

enum editor_history_op {
    EDITOR_HISTORY_NONE,
    EDITOR_HISTORY_PUSH,
    EDITOR_HISTORY_POP,
};

struct editor_result {
    struct buf output; /* what the tool says, or its error message */
    bool failed;       /* output is an error (shown as "ERROR:\n" + output) */
    /* The file's text before and after, for the observation's diff. */
    bool has_old, has_new;
    struct buf old_content, new_content;
    enum editor_history_op history_op;
    struct buf history_path; /* the normalised path: the history's key */
    struct buf history_text; /* for a push */
};

/* Returns 0 (res filled, possibly with failed set) or -1 when memory runs out. */
int editor_run(const struct editor_env *env, const struct editor_args *a,
               struct editor_result *res);
void editor_result_free(struct editor_result *res);

/* ---- shared by editor.c and editor_view.c ---------------------------------------------- */

/* Sets res to a tool error; returns 0, or -1 when memory runs out. */
int editor_fail(struct editor_result *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A file's text as Python's editor reads it: decoded, universal newlines. */
struct editor_text {
    struct buf text;
    enum editor_encoding enc;
};

/* validate_file + read_file: 0 with t filled, 1 when res got a tool error, -1 on no memory. */
int editor_read_text(const char *path, struct editor_text *t, struct editor_result *res);
/* _make_output: "Here's the result of running `cat -n` on <desc>:\n" + numbered lines. */
int editor_make_output(struct buf *out, const char *content, size_t n, const char *desc,
                       long start_line);
/* Lines as a Python text file iterates them. */
size_t editor_count_lines(const char *text, size_t n);
/* True for the extensions OpenHands' view converts to Markdown (.pdf, .docx, .mp3, ...). */
bool editor_is_supported_binary(const char *path);

/* editor_view.c */
int editor_view(const char *path, const json_t *view_range, struct editor_result *res);

#endif
