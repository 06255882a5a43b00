/* How a command is typed into the shell's tty.
 *
 * The tty runs in canonical mode, where one line holds at most 4095 bytes and a few control
 * bytes act as signals. A plain one-line command is typed as it is. Anything else (several
 * lines, a line longer than CMDLINE_DIRECT_MAX, control bytes, a trailing backslash) is typed
 * as ONE command, `eval '...'`, whose quoted text is split into short physical lines with
 * backslash-newline continuations; control bytes travel as $'\ooo'. So no line is cut, the
 * shell sees the exact text, and a multi-line input ends in exactly one prompt marker. */
#ifndef PADDOCK_EXECUTOR_CMDLINE_H
#define PADDOCK_EXECUTOR_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/buf.h"

#define CMDLINE_DIRECT_MAX 4000 /* bash: longest line typed as it is */
#define CMDLINE_CHUNK 1024      /* longest physical line in eval form */
/* busybox ash reads a line into a buffer of CONFIG_FEATURE_EDITING_MAX_LEN (128 at the
 * least) and prints PS1 (our marker!) again to read the rest of a longer one. So every line
 * typed into a PS1 shell stays under this. */
#define CMDLINE_SH_LINE_MAX 120

/* True when cmd can be typed as it is (a line of at most max_line bytes) plus a newline. */
bool cmdline_is_direct(const char *cmd, size_t n, size_t max_line);
/* Appends what to type for cmd, final newline included; no physical line is longer than
 * max_line (at least 32). */
int cmdline_encode(struct buf *out, const char *cmd, size_t n, size_t max_line);
/* OpenHands' special keys: the trimmed text is exactly "C-x". Returns the control byte, or -1
 * when cmd is not a special key. */
int cmdline_special_key(const char *cmd, size_t n);
/* The key's letter for the "CTRL+X was sent" note (the last char, upper-cased). */
char cmdline_special_key_name(const char *cmd, size_t n);

#endif
