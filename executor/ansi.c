#include "ansi.h"

#include <stdbool.h>
#include <string.h>

enum {
    ANSI_TEXT,   /* nothing held */
    ANSI_ESC,    /* ESC held */
    ANSI_CSI,    /* ESC [ or a ';' held: a digit must follow */
    ANSI_NUMBER, /* in a number: more digits, ';' or 'm' */
};

void ansi_filter_init(struct ansi_filter *f)
{
    memset(f, 0, sizeof *f);
}

void ansi_filter_flush(struct ansi_filter *f, ansi_out_fn out, void *ctx)
{
    if (f->len)
        out(ctx, f->held, f->len);
    f->len = 0;
    f->state = ANSI_TEXT;
    f->params = 0;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Where c takes a held sequence: the next state, -1 for "not a colour code", or ANSI_TEXT
 * with *done for a complete code. */
static int next_state(const struct ansi_filter *f, char c, bool *done)
{
    *done = false;
    switch (f->state) {
    case ANSI_ESC:
        return c == '[' ? ANSI_CSI : -1;
    case ANSI_CSI:
        return is_digit(c) ? ANSI_NUMBER : -1;
    case ANSI_NUMBER:
        if (is_digit(c))
            return ANSI_NUMBER;
        if (c == ';' && f->params < 3)
            return ANSI_CSI;
        if (c == 'm') {
            *done = true;
            return ANSI_TEXT;
        }
        return -1;
    default:
        return -1;
    }
}

void ansi_filter_feed(struct ansi_filter *f, const char *data, size_t n, ansi_out_fn out, void *ctx)
{
    size_t run = 0; /* start of the plain text not passed on yet */
    for (size_t i = 0; i < n; i++) {
        char c = data[i];
        if (f->state != ANSI_TEXT) {
            bool done;
            int next = next_state(f, c, &done);
            if (done) {
                /* A colour code: dropped. */
                f->len = 0;
                f->state = ANSI_TEXT;
                f->params = 0;
                run = i + 1;
                continue;
            }
            if (next >= 0 && f->len < ANSI_HELD_MAX) {
                if (f->state == ANSI_CSI)
                    f->params++;
                f->state = next;
                f->held[f->len++] = c;
                continue;
            }
            /* Not a colour code: what was held is text, and c starts afresh. */
            ansi_filter_flush(f, out, ctx);
            run = i;
        }
        if (c == '\033') {
            if (i > run)
                out(ctx, data + run, i - run);
            f->state = ANSI_ESC;
            f->held[f->len++] = c;
        }
    }
    if (f->state == ANSI_TEXT && n > run)
        out(ctx, data + run, n - run);
}
