#include "diff.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "pytext.h"

struct line {
    const char *s;
    size_t n;
    uint64_t hash;
};

/* The new text's lines by content: b2j in difflib. */
struct slot {
    size_t rep; /* index of a line with this content; SIZE_MAX: empty slot */
    size_t *idx;
    size_t count, cap;
    bool popular;
};

struct matcher {
    struct line *a, *b;
    size_t na, nb;
    struct slot *slots;
    size_t mask;
    /* j2len of the previous and the current row, zero except at the touched indexes. */
    size_t *prev, *cur;
    size_t *prev_touched, *cur_touched;
    size_t n_prev_touched, n_cur_touched;
};

struct block {
    size_t i, j, k;
};

struct blocks {
    struct block *v;
    size_t n, cap;
};

static bool same(const struct line *x, const struct line *y)
{
    return x->hash == y->hash && x->n == y->n && memcmp(x->s, y->s, x->n) == 0;
}

/* str.split("\n"): n newlines give n + 1 lines. */
static struct line *split_lines(const char *s, size_t n, size_t *count)
{
    size_t lines = 1;
    for (size_t i = 0; i < n; i++)
        lines += s[i] == '\n';
    struct line *v = malloc(lines * sizeof *v);
    if (!v)
        return NULL;
    size_t k = 0, start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '\n') {
            v[k].s = s + start;
            v[k].n = i - start;
            v[k].hash = hash_fnv1a(s + start, i - start);
            k++;
            start = i + 1;
        }
    }
    *count = lines;
    return v;
}

static struct slot *slot_find(struct matcher *m, const struct line *l)
{
    for (size_t p = l->hash & m->mask;; p = (p + 1) & m->mask) {
        struct slot *s = &m->slots[p];
        if (s->rep == SIZE_MAX || same(&m->b[s->rep], l))
            return s;
    }
}

static int chain_b(struct matcher *m)
{
    size_t size = 16;
    while (size < m->nb * 2)
        size *= 2;
    m->slots = malloc(size * sizeof *m->slots);
    if (!m->slots)
        return -1;
    for (size_t i = 0; i < size; i++)
        m->slots[i] = (struct slot){.rep = SIZE_MAX};
    m->mask = size - 1;
    for (size_t j = 0; j < m->nb; j++) {
        struct slot *s = slot_find(m, &m->b[j]);
        if (s->rep == SIZE_MAX)
            s->rep = j;
        if (s->count == s->cap) {
            size_t cap = s->cap ? s->cap * 2 : 4;
            size_t *p = realloc(s->idx, cap * sizeof *p);
            if (!p)
                return -1;
            s->idx = p;
            s->cap = cap;
        }
        s->idx[s->count++] = j;
    }
    if (m->nb >= 200) {
        size_t ntest = m->nb / 100 + 1;
        for (size_t p = 0; p <= m->mask; p++)
            if (m->slots[p].rep != SIZE_MAX && m->slots[p].count > ntest)
                m->slots[p].popular = true;
    }
    return 0;
}

static struct block find_longest_match(struct matcher *m, size_t alo, size_t ahi, size_t blo,
                                       size_t bhi)
{
    size_t besti = alo, bestj = blo, bestsize = 0;
    for (size_t i = alo; i < ahi; i++) {
        const struct slot *s = slot_find(m, &m->a[i]);
        m->n_cur_touched = 0;
        if (s->rep != SIZE_MAX && !s->popular) {
            for (size_t x = 0; x < s->count; x++) {
                size_t j = s->idx[x];
                if (j < blo)
                    continue;
                if (j >= bhi)
                    break;
                size_t k = (j > 0 ? m->prev[j - 1] : 0) + 1;
                m->cur[j] = k;
                m->cur_touched[m->n_cur_touched++] = j;
                if (k > bestsize) {
                    besti = i - k + 1;
                    bestj = j - k + 1;
                    bestsize = k;
                }
            }
        }
        for (size_t x = 0; x < m->n_prev_touched; x++)
            m->prev[m->prev_touched[x]] = 0;
        size_t *t = m->prev;
        m->prev = m->cur;
        m->cur = t;
        t = m->prev_touched;
        m->prev_touched = m->cur_touched;
        m->cur_touched = t;
        m->n_prev_touched = m->n_cur_touched;
    }
    for (size_t x = 0; x < m->n_prev_touched; x++)
        m->prev[m->prev_touched[x]] = 0;
    m->n_prev_touched = 0;
    /* Popular lines are no anchors, but they do extend a match found around them. */
    while (besti > alo && bestj > blo && same(&m->a[besti - 1], &m->b[bestj - 1])) {
        besti--;
        bestj--;
        bestsize++;
    }
    while (besti + bestsize < ahi && bestj + bestsize < bhi &&
           same(&m->a[besti + bestsize], &m->b[bestj + bestsize]))
        bestsize++;
    return (struct block){besti, bestj, bestsize};
}

static int blocks_push(struct blocks *bl, struct block b)
{
    if (bl->n == bl->cap) {
        size_t cap = bl->cap ? bl->cap * 2 : 16;
        struct block *p = realloc(bl->v, cap * sizeof *p);
        if (!p)
            return -1;
        bl->v = p;
        bl->cap = cap;
    }
    bl->v[bl->n++] = b;
    return 0;
}

static int block_cmp(const void *x, const void *y)
{
    const struct block *p = x, *q = y;
    if (p->i != q->i)
        return p->i < q->i ? -1 : 1;
    if (p->j != q->j)
        return p->j < q->j ? -1 : 1;
    return p->k < q->k ? -1 : p->k > q->k;
}

/* get_matching_blocks(): sorted, adjacent blocks merged, ending with (na, nb, 0). */
static int matching_blocks(struct matcher *m, struct blocks *out)
{
    struct blocks queue = {0}, found = {0};
    int rc = -1;
    if (blocks_push(&queue, (struct block){0, m->na, 0}) < 0 ||
        blocks_push(&queue, (struct block){0, m->nb, 0}) < 0)
        goto out;
    /* The queue holds (alo, ahi) and (blo, bhi) as pairs of entries. */
    while (queue.n) {
        struct block bb = queue.v[--queue.n], aa = queue.v[--queue.n];
        size_t alo = aa.i, ahi = aa.j, blo = bb.i, bhi = bb.j;
        struct block x = find_longest_match(m, alo, ahi, blo, bhi);
        if (!x.k)
            continue;
        if (blocks_push(&found, x) < 0)
            goto out;
        if (alo < x.i && blo < x.j)
            if (blocks_push(&queue, (struct block){alo, x.i, 0}) < 0 ||
                blocks_push(&queue, (struct block){blo, x.j, 0}) < 0)
                goto out;
        if (x.i + x.k < ahi && x.j + x.k < bhi)
            if (blocks_push(&queue, (struct block){x.i + x.k, ahi, 0}) < 0 ||
                blocks_push(&queue, (struct block){x.j + x.k, bhi, 0}) < 0)
                goto out;
    }
    if (found.n)
        qsort(found.v, found.n, sizeof *found.v, block_cmp);
    struct block cur = {0, 0, 0};
    for (size_t x = 0; x < found.n; x++) {
        struct block b = found.v[x];
        if (cur.i + cur.k == b.i && cur.j + cur.k == b.j) {
            cur.k += b.k;
        } else {
            if (cur.k && blocks_push(out, cur) < 0)
                goto out;
            cur = b;
        }
    }
    if ((cur.k && blocks_push(out, cur) < 0) ||
        blocks_push(out, (struct block){m->na, m->nb, 0}) < 0)
        goto out;
    rc = 0;
out:
    free(queue.v);
    free(found.v);
    return rc;
}

/* One diff line, right-stripped as OpenHands strips it, after a "\n" unless first. */
static int emit(struct buf *out, bool *first, char tag, const char *s, size_t n)
{
    if (!*first && buf_append(out, "\n", 1) < 0)
        return -1;
    *first = false;
    if (tag && buf_append(out, &tag, 1) < 0)
        return -1;
    return buf_append(out, s, pytext_rstrip(s, n));
}

/* difflib's _format_range_unified. */
static int format_range(struct buf *out, size_t start, size_t stop)
{
    size_t beginning = start + 1, length = stop - start;
    if (length == 1)
        return buf_printf(out, "%zu", beginning);
    if (!length)
        beginning--;
    return buf_printf(out, "%zu,%zu", beginning, length);
}

/* With no context every change (replace, delete or insert between two matching blocks)
 * is its own hunk. */
static int emit_hunks(struct buf *out, struct matcher *m, const struct blocks *bl, const char *path)
{
    bool first = true;
    size_t i = 0, j = 0;
    for (size_t x = 0; x < bl->n; x++) {
        const struct block *b = &bl->v[x];
        if (i < b->i || j < b->j) {
            if (first) {
                struct buf head = BUF_INIT;
                int rc = buf_printf(&head, "--- %s", path);
                rc = rc < 0 ? rc : emit(out, &first, 0, head.data, head.len);
                buf_reset(&head);
                rc = rc < 0 ? rc : buf_printf(&head, "+++ %s", path);
                rc = rc < 0 ? rc : emit(out, &first, 0, head.data, head.len);
                buf_free(&head);
                if (rc < 0)
                    return -1;
            }
            if (buf_append_str(out, "\n@@ -") < 0 || format_range(out, i, b->i) < 0 ||
                buf_append_str(out, " +") < 0 || format_range(out, j, b->j) < 0 ||
                buf_append_str(out, " @@") < 0)
                return -1;
            for (size_t k = i; k < b->i; k++)
                if (emit(out, &first, '-', m->a[k].s, m->a[k].n) < 0)
                    return -1;
            for (size_t k = j; k < b->j; k++)
                if (emit(out, &first, '+', m->b[k].s, m->b[k].n) < 0)
                    return -1;
        }
        i = b->i + b->k;
        j = b->j + b->k;
    }
    return 0;
}

int diff_unified(struct buf *out, const char *path, const char *old, size_t old_len,
                 const char *new_text, size_t new_len)
{
    struct matcher m = {0};
    struct blocks bl = {0};
    int rc = -1;
    m.a = split_lines(old, old_len, &m.na);
    m.b = split_lines(new_text, new_len, &m.nb);
    if (!m.a || !m.b)
        goto out;
    m.prev = calloc(m.nb, sizeof *m.prev);
    m.cur = calloc(m.nb, sizeof *m.cur);
    m.prev_touched = malloc(m.nb * sizeof *m.prev_touched);
    m.cur_touched = malloc(m.nb * sizeof *m.cur_touched);
    if (!m.prev || !m.cur || !m.prev_touched || !m.cur_touched || chain_b(&m) < 0 ||
        matching_blocks(&m, &bl) < 0)
        goto out;
    rc = emit_hunks(out, &m, &bl, path);
out:
    if (m.slots)
        for (size_t p = 0; p <= m.mask; p++)
            free(m.slots[p].idx);
    free(m.slots);
    free(m.a);
    free(m.b);
    free(m.prev);
    free(m.cur);
    free(m.prev_touched);
    free(m.cur_touched);
    free(bl.v);
    return rc;
}
