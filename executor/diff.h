/* The `diff` of an edit observation: a unified diff without context lines, line for line
 * what OpenHands produces (difflib.unified_diff(old.split("\n"), new.split("\n"), n=0),
 * every line right-stripped, joined with "\n").
 *
 * Which lines count as changed depends on the matching algorithm, so this is difflib's
 * SequenceMatcher: longest matching block first (earliest in the old text on ties), then
 * recursively left and right of it, with lines occurring more than 1% + 1 times in a new
 * text of 200 lines or more ignored as anchors ("autojunk"). */
#ifndef PADDOCK_EXECUTOR_DIFF_H
#define PADDOCK_EXECUTOR_DIFF_H

#include <stddef.h>

#include "common/buf.h"

/* Appends the diff of old -> new, both headed by path; nothing when they are equal.
 * Returns -1 when memory runs out. */
int diff_unified(struct buf *out, const char *path, const char *old, size_t old_len,
                 const char *new_text, size_t new_len);

#endif
