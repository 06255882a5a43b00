/* A terminal emulator for the Terminal pane: libvterm (0.1.4) parses what the sandbox's shell
 * writes into a grid of cells; the Terminal tab draws the cells (ui/tab_terminal.c). Nothing the
 * sandbox writes reaches the operator's terminal as bytes: titles, OSC 52 clipboard writes,
 * cursor moves and queries stay inside this grid, and every code point drawn passes
 * sanitize_codepoint_ok. Keys go the other way through libvterm, which encodes them as the
 * shell's modes ask (application cursor keys, bracketed paste). */
#ifndef PADDOCK_UI_VT_H
#define PADDOCK_UI_VT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VT_MAX_CHARS 5 /* a base character and combining marks (ncurses' CCHARW_MAX) */

struct vt;

struct vt_cell {
    uint32_t ch[VT_MAX_CHARS]; /* 0-terminated when shorter; ch[0] == ' ' for an empty cell */
    int width;                 /* 1, 2 (a wide character), 0 (the right half of one: skip) */
    int fg, bg;                /* 0..255 (RGB is mapped to the nearest), -1: the default */
    bool bold, underline, italic, blink, reverse;
    /* it carried an invisible, bidi or control code point (dropped): drawn marked */
    bool suspicious;
};

/* NULL when out of memory. scrollback: lines kept above the screen. */
struct vt *vt_new(int rows, int cols, size_t scrollback);
void vt_free(struct vt *v);
/* Bytes from the sandbox. Damage is flushed once per call. */
void vt_write(struct vt *v, const char *data, size_t len);
/* The pane's new inner size (the caller also resizes the remote tty). */
void vt_resize(struct vt *v, int rows, int cols);
void vt_size(const struct vt *v, int *rows, int *cols);

/* A key from the operator: an ncurses key code (is_keycode: KEY_UP...) or a character
 * (UTF-32); alt: it came after ESC. Encoded into the output buffer. */
void vt_key(struct vt *v, int key, bool is_keycode, bool alt);
/* Pasted text (bracketed when the shell asked for it). */
void vt_paste(struct vt *v, const char *text, size_t len);
/* Bytes to send to the sandbox (keys, answers to terminal queries), and how many went. */
const char *vt_output(const struct vt *v, size_t *len);
void vt_output_consume(struct vt *v, size_t n);

/* The cell at row (0 = the top of the screen; -1 = the newest scrollback line, -2 the one
 * above...), col. Outside: an empty cell. */
void vt_cell(const struct vt *v, int row, int col, struct vt_cell *out);
size_t vt_scrollback(const struct vt *v);
bool vt_row_dirty(const struct vt *v, int row);
void vt_dirty_clear(struct vt *v);
void vt_dirty_all(struct vt *v);
void vt_cursor(const struct vt *v, int *row, int *col, bool *visible);
/* The title the shell set (raw bytes: draw them sanitized), "" when none. */
const char *vt_title(const struct vt *v);
/* Whether a bell rang since the last call. */
bool vt_take_bell(struct vt *v);

/* Nearest xterm-256 index of an RGB colour (the 6x6x6 cube or the grey ramp). */
int vt_rgb_to_256(uint8_t r, uint8_t g, uint8_t b);
/* A 0..255 index on a terminal with ncolors colours: kept (256+), 8..15 → 0..7 with bold
 * for the foreground (16), the nearest of 0..7 (8). */
int vt_color_fold(int idx, int ncolors, bool *bold);

#endif
