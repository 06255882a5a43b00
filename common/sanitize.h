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
 * boundary) with `…[+N bytes]`, N the input bytes not shown; work stops there.
 *
 * The replay mode (sanitize_replay_*) is the same parser with another rule for what it finds:
 * it filters output that will be written as it is to a terminal later (the asciinema cast).
 * It keeps what changes how the screen looks and drops everything else, in a stream of chunks:
 * - valid UTF-8 text is kept (C1 code points U+0080–U+009F excepted); each invalid byte is
 *   U+FFFD (a stray 0x80–0x9F is a C1 control, below), so the output is always valid UTF-8;
 * - C0: BS, HT, LF and CR are kept; every other C0 control and DEL is dropped;
 * - CSI sequences of at most SANITIZE_SEQ_MAX parameter bytes, without intermediates, are
 *   kept when their final byte moves the cursor, erases, inserts, deletes, scrolls or sets
 *   colours: A–G, H, f, d, e, a, `, I, Z, J, K, X, P, @, L, M, S, b, g, r, m (any parameters);
 *   T with at most one parameter (more is xterm's mouse tracking); s and u without any
 *   (with a prefix they are kitty's keyboard modes); h/l with 4 only (insert mode); DEC private
 *   h/l (`?`) only for 6 (origin), 7 (autowrap), 25 (cursor shown), 47, 1047, 1048, 1049
 *   (alternate screen, saved cursor), every parameter of the sequence in that list;
 * - ESC 7, 8, D, E, M, H (save/restore cursor, index, next line, reverse index, tab stop) and
 *   ESC ( 0 / ESC ( B (line-drawing and ASCII character sets) are kept;
 * - dropped whole, with their bodies: OSC (titles, clipboard, colours, hyperlinks,
 *   notifications), DCS, SOS, PM, APC; every other CSI (window manipulation and title stacks
 *   `t`, reports and queries `n` `c` `x`, mouse, focus, bracketed paste and keyboard modes,
 *   printing `i`, anything with an intermediate or another prefix) and escape (RIS `ESC c`,
 *   keypad modes, character set switches and shifts);
 * - C1 controls, as raw bytes (0x80–0x9F where they are not part of a UTF-8 character) or as
 *   UTF-8 code points, are what their 7-bit forms are: CSI (0x9B) is parsed and kept by the
 *   rules above (written in its 7-bit form), OSC/DCS/SOS/PM/APC are dropped with their bodies,
 *   ST (0x9C) ends a string, the others are dropped;
 * - string sequences end at BEL, ST (ESC \ or C1), CAN, SUB, an ESC that starts another
 *   sequence, after SANITIZE_STRING_MAX bytes of body (what follows is text again: an
 *   unterminated OSC hides at most that much), or at sanitize_replay_finish;
 * - a sequence or UTF-8 character split across chunks is held until it is complete;
 *   sanitize_replay_finish drops what is left open (a partial character is U+FFFD).
 * Whatever the input, the output holds no sequence besides those kept above. */
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

enum {
    SANITIZE_SEQ_MAX = 64,      /* bytes of a sequence's parameters kept by the parser */
    SANITIZE_STRING_MAX = 4096, /* replay: body bytes after which a string sequence ends */
};

struct sanitize_token;

/* The parser's state between chunks (private to sanitize.c; a complete type so callers can
 * hold one). */
struct sanitize_scan {
    unsigned char state, intro, lead;
    bool c1;   /* C1 controls introduce sequences (replay) */
    bool stop; /* the sink wants nothing more */
    unsigned char u8[4];
    unsigned char u8_len, u8_need, str_cont;
    unsigned char seq[SANITIZE_SEQ_MAX];
    size_t seq_len, seq_total, body, string_max;
    size_t pos, tok_pos, esc_pos;
    bool (*sink)(void *ctx, const struct sanitize_token *t);
    void *ctx;
};

/* Replay filtering into write(ctx, bytes, n), chunk by chunk. */
struct sanitize_replay {
    struct sanitize_scan scan;
    void (*write)(void *ctx, const char *p, size_t n);
    void *ctx;
};
void sanitize_replay_init(struct sanitize_replay *r,
                          void (*write)(void *ctx, const char *p, size_t n), void *ctx);
void sanitize_replay_feed(struct sanitize_replay *r, const char *in, size_t len);
/* The end of the stream: what is left open is dropped; r may then be fed again. */
void sanitize_replay_finish(struct sanitize_replay *r);
/* One chunk, finished: a malloc'd NUL-terminated copy (its length in *outlen when not
 * NULL), or NULL when out of memory. */
char *sanitize_replay_dup(const char *in, size_t len, size_t *outlen);

#endif
