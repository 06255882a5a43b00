/* The one sanitizer for untrusted text (anything that came from a container or the engine's
 * data) before it reaches the operator's terminal. Pure byte processing: no ncurses, no locale.
 *
 * Output is always valid UTF-8 made of printable characters only:
 * - printable UTF-8 is kept;
 * - C0 controls, DEL: caret notation (`^@` … `^_`, `^?`); CR is `^M`;
 *   `\t` is one space (with SANITIZE_MULTILINE: spaces to the next 8-column stop);
 * - `\n` is `⏎` (U+23CE) in single-line mode, kept with SANITIZE_MULTILINE;
 * - ESC and the whole sequence after it is replaced by one short token:
 *   CSI `^[[` + its (printable) parameters and final byte, at most 32 bytes of them, then `…`;
 *   OSC `^[]` + its number, then `…` when it had more (the payload is dropped);
 *   DCS/SOS/PM/APC `^[P`/`^[X`/`^[^`/`^[_`, then `…` when it had a body;
 *   other escapes `^[` + their printable intermediate and final bytes; a lone ESC is `^[`.
 *   String sequences end at BEL, ST (ESC \), CAN or SUB; an unterminated one runs to the end;
 * - invalid UTF-8 (raw C1 bytes 0x80–0x9F, overlongs, surrogates, > U+10FFFF, truncated
 *   sequences): `\xNN` per byte;
 * - C1 code points U+0080–U+009F, bidi controls, zero-width and other invisible characters
 *   (U+00AD, U+061C, U+200B–U+200F, U+2028–U+202E, U+2060–U+206F, U+FEFF, tags U+E0000…):
 *   `<U+XXXX>`.
 * Output is bounded by the buffer: when the input does not fit, the output ends (at a token
 * boundary) with `…[+N bytes]`, N the input bytes not shown; work stops there. */
#ifndef PADDOCK_UI_SANITIZE_H
#define PADDOCK_UI_SANITIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    SANITIZE_MULTILINE = 1u << 0, /* keep \n; expand \t to 8-column stops */
    SANITIZE_ASCII = 1u << 1,     /* for non-UTF-8 terminals: every non-ASCII character is
                                     <U+XXXX>, `⏎` is `^J`, `…` is `...` */
};

/* Single-line sanitizing into out (outsz bytes, NUL-terminated when outsz > 0). Returns the
 * bytes written, without the NUL. */
size_t sanitize_text(const char *in, size_t len, char *out, size_t outsz);

/* The same with SANITIZE_* flags. */
size_t sanitize_text_flags(const char *in, size_t len, char *out, size_t outsz, unsigned flags);

/* Allocating variant: at most max bytes of output (plus the NUL). NULL when out of memory. */
char *sanitize_dup(const char *in, size_t len, size_t max, unsigned flags);

/* Whether one code point may be drawn as it is (a terminal cell): printable, visible, not a
 * control, bidi or zero-width character. The embedded terminal draws the others as a mark. */
bool sanitize_codepoint_ok(uint32_t cp);

#endif
