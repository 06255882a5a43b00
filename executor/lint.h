/* Auto-lint (OpenHands' enable_auto_lint): after the editor changed a source file, the file's
 * text before and after goes through a linter for its language, and the errors the change
 * introduced are told in OpenHands' editor wording (openhands-aci OHEditor._run_linting).
 *
 * Runs in the file-action child, as the agent: the texts are written to a private temporary
 * directory, each linter run is bounded in time (LINT_TIMEOUT_MS) and output. An error is
 * the change's when no error with the same message sat on the same line before it (lines
 * mapped across the change, so one that only moved is not blamed). */
#ifndef PADDOCK_EXECUTOR_LINT_H
#define PADDOCK_EXECUTOR_LINT_H

#include <stddef.h>

#include "common/buf.h"

#define LINT_TIMEOUT_MS 10000 /* per linter run */

/* Appends "No linting issues found in the changes." or "Linting issues found in the
 * changes:\n- Line L, Column C: MESSAGE\n..." for the change of path from old to new_text.
 * A file type without a linter here, or a linter missing from the image, finds no issues.
 * path_env: where linters are looked for. Returns -1 when memory runs out. */
int lint_changes(struct buf *out, const char *path_env, const char *path, const char *old,
                 size_t old_len, const char *new_text, size_t new_len);

#endif
