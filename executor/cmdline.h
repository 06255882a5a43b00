/* How a command reaches the shell.
 *
 * The tty runs in canonical mode, where one line holds at most 4095 bytes and a few control
 * bytes act as signals, and the shell reads what is typed through its line reader, whose cost
 * grows with the square of a line's length. A plain short one-line command is typed as it is.
 * Anything else (several lines, a longer line, control bytes, a trailing backslash) is
 * written to a file the shell sources (shell.c), so it never goes through the tty. */
#ifndef PADDOCK_EXECUTOR_CMDLINE_H
#define PADDOCK_EXECUTOR_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>

#define CMDLINE_DIRECT_MAX 4000 /* bash: longest line typed as it is */
/* busybox ash reads a line into a buffer of CONFIG_FEATURE_EDITING_MAX_LEN (128 at the
 * least) and prints PS1 (our marker!) again to read the rest of a longer one. So every line
 * typed into a PS1 shell stays under this. */
#define CMDLINE_SH_LINE_MAX 120

/* True when cmd can be typed as it is (a line of at most max_line bytes) plus a newline. */
bool cmdline_is_direct(const char *cmd, size_t n, size_t max_line);
/* OpenHands' special keys: the trimmed text is exactly "C-x". Returns the control byte, or -1
 * when cmd is not a special key. */
int cmdline_special_key(const char *cmd, size_t n);
/* The key's letter for the "CTRL+X was sent" note (the last char, upper-cased). */
char cmdline_special_key_name(const char *cmd, size_t n);

#endif
