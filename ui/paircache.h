/* Colour pairs for the Terminal pane's cells: a (fg, bg) → pair number cache over a range of
 * pairs the themes do not use, recycling the least recently used pair when the range is full
 * (an 8-colour terminal has 64 pairs; a 256-colour one up to 65536). Pure: the caller inits a
 * pair (init_extended_pair) when it is handed out fresh. */
#ifndef PADDOCK_UI_PAIRCACHE_H
#define PADDOCK_UI_PAIRCACHE_H

#include <stdbool.h>

struct paircache;

/* Pairs first..last (inclusive) are the cache's to hand out. NULL when out of memory. */
struct paircache *paircache_new(int first, int last);
void paircache_free(struct paircache *c);
/* The pair for fg, bg (each -1 = the default, or 0..255). *fresh: it was (re)assigned to
 * these colours now and needs initialising. -1 when the range is empty or a colour is out of
 * range. */
int paircache_get(struct paircache *c, int fg, int bg, bool *fresh);
/* How many pairs are in use. */
int paircache_used(const struct paircache *c);

#endif
