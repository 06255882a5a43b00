/* The colour pair cache (paircache.h): a direct index over every (fg, bg) of 257 × 257 values
 * to the slot holding it, and per slot its colours and when it was last used. */
#include "ui/paircache.h"

#include <stdint.h>
#include <stdlib.h>

#define PAIRCACHE_SIDE 257 /* -1 (default) and 0..255 */

struct paircache_slot {
    int key; /* index into where, -1 when free */
    uint64_t used_at;
};

struct paircache {
    int first, count, used;
    uint64_t clock;
    int *where; /* key → slot + 1, 0: not cached */
    struct paircache_slot *slot;
};

struct paircache *paircache_new(int first, int last)
{
    struct paircache *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->first = first;
    c->count = last >= first ? last - first + 1 : 0;
    c->where = calloc(PAIRCACHE_SIDE * PAIRCACHE_SIDE, sizeof(*c->where));
    c->slot = calloc(c->count ? (size_t)c->count : 1, sizeof(*c->slot));
    if (!c->where || !c->slot) {
        paircache_free(c);
        return NULL;
    }
    return c;
}

void paircache_free(struct paircache *c)
{
    if (!c)
        return;
    free(c->where);
    free(c->slot);
    free(c);
}

int paircache_get(struct paircache *c, int fg, int bg, bool *fresh)
{
    *fresh = false;
    if (!c->count || fg < -1 || fg > 255 || bg < -1 || bg > 255)
        return -1;
    int key = (fg + 1) * PAIRCACHE_SIDE + (bg + 1);
    int s = c->where[key] - 1;
    if (s < 0) {
        if (c->used < c->count) {
            s = c->used++;
        } else {
            /* full: the least recently used pair gets the new colours (a scan, only on a
             * miss of a full cache) */
            s = 0;
            for (int i = 1; i < c->count; i++)
                if (c->slot[i].used_at < c->slot[s].used_at)
                    s = i;
            c->where[c->slot[s].key] = 0;
        }
        c->slot[s].key = key;
        c->where[key] = s + 1;
        *fresh = true;
    }
    c->slot[s].used_at = ++c->clock;
    return c->first + s;
}

int paircache_used(const struct paircache *c)
{
    return c->used;
}
