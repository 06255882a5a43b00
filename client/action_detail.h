/* An action shown whole (the Actions tab's Enter, History's observation): the engine's
 * GET /v1/actions/{id} reply as text to read, with what each line is so that a diff can be
 * coloured. Pure: no ncurses; the text is raw (it reaches the screen through draw_text). */
#ifndef PADDOCK_UI_ACTION_DETAIL_H
#define PADDOCK_UI_ACTION_DETAIL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum action_line {
    ACTION_LINE_PLAIN,
    ACTION_LINE_TITLE, /* a section's heading ("diff", "observation") */
    ACTION_LINE_FILE,  /* a diff's "--- a" / "+++ b" */
    ACTION_LINE_HUNK,  /* "@@ -1 +1,2 @@" */
    ACTION_LINE_ADD,   /* "+text" */
    ACTION_LINE_DEL,   /* "-text" */
};

#define ACTION_DETAIL_TITLES 4

struct action_detail {
    char *text; /* NUL-terminated; len bytes */
    size_t len;
    size_t diff_start, diff_end;        /* the diff's bytes (equal: none) */
    size_t diff_hunks;                  /* where its first "@@" line starts (diff_end: none) */
    size_t title[ACTION_DETAIL_TITLES]; /* offsets of heading lines */
    int ntitles;
};

/* One line of a unified diff (without its newline); in_hunks: after the first "@@" line, where
 * "---" and "+++" are a removed "--" line and an added "++" one, not file names. */
enum action_line action_detail_diff_line(const char *line, size_t len, bool in_hunks);

/* Build the text of an action reply: what it was (kind, state, exit code, duration, times),
 * its risk and reason, the approval (who decided, when, why), the command or path and its
 * arguments (a write's content as it was written), the diff (action_detail_diff_of), then the whole
 * observation. 0, or -1 when out of memory (*d then empty). */
int action_detail_build(json_t *action, struct action_detail *d);
void action_detail_free(struct action_detail *d);

/* What a file action changed, as a unified diff: an edit's is in its observation
 * (extras.diff, as OpenHands has it), a write's is recorded beside it by the engine (the
 * action's "diff"). NULL: none, or empty. */
const char *action_detail_diff_of(json_t *action);

/* What the line starting at off is (off must be the start of a line). */
enum action_line action_detail_line(const struct action_detail *d, size_t off);

#endif
