/* Splits a command line into the top-level commands bash would read one after another.
 *
 * OpenHands refuses a `run` whose command holds more than one top-level command
 * (docs/protocol.md, "What happens"). Bash reads a command up to an unquoted newline, but a newline
 * does not end a command inside quotes, `$'...'`, `$(...)`, backticks, `${...}`, `{ }` and `( )`
 * groups, `if`/`case`/`for`/`while`/`until`/`select` blocks, `[[ ]]`, `(( ))`, array
 * assignments, after `&&`, `||`, `|` or a function header, and here-document bodies belong
 * to the command that opened them. Comments and blank lines belong to the command before
 * them (the first command also takes those before it).
 *
 * Only the structure is parsed: nothing is expanded, and constructs bash would reject are
 * reported as not parsing (the caller then sends the text as one command, as OpenHands
 * does when its parser fails). */
#ifndef PADDOCK_EXECUTOR_BASHSPLIT_H
#define PADDOCK_EXECUTOR_BASHSPLIT_H

#include <stddef.h>

#define BASHSPLIT_INVALID (-1) /* unclosed quote, here-document, substitution or block */
#define BASHSPLIT_NOMEM (-2)

/* One command: text[start, start + len), right-stripped. */
struct bashsplit_span {
    size_t start;
    size_t len;
};

/* Returns the number of top-level commands in text (0 for empty text), with *spans (malloc'ed,
 * the caller frees it) holding each one, or BASHSPLIT_INVALID / BASHSPLIT_NOMEM with *spans
 * NULL. */
int bashsplit_split(const char *text, size_t n, struct bashsplit_span **spans);

#endif
