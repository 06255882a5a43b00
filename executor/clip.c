#include "clip.h"

#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "text.h"

static void clip_init(struct clip *c, size_t head_max, size_t tail_max)
{
    memset(c, 0, sizeof *c);
    c->head_max = head_max;
    c->tail_max = tail_max;
}

static void clip_free(struct clip *c)
{
    free(c->head);
    free(c->ring);
    clip_init(c, c->head_max, c->tail_max);
}

/* Bytes were lost between head and ring. */
static bool clip_has_gap(const struct clip *c)
{
    return c->total > (uint64_t)c->head_len + c->ring_len;
}

static int ring_push(struct clip *c, const char *data, size_t n)
{
    if (!c->ring && !(c->ring = malloc(c->tail_max)))
        return -1;
    if (n >= c->tail_max) {
        memcpy(c->ring, data + n - c->tail_max, c->tail_max);
        c->ring_start = 0;
        c->ring_len = c->tail_max;
        return 0;
    }
    for (size_t i = 0; i < n;) {
        size_t end = (c->ring_start + c->ring_len) % c->tail_max;
        size_t room = c->tail_max - end;
        size_t k = n - i < room ? n - i : room;
        memcpy(c->ring + end, data + i, k);
        i += k;
        c->ring_len += k;
        if (c->ring_len > c->tail_max) {
            c->ring_start = (c->ring_start + c->ring_len - c->tail_max) % c->tail_max;
            c->ring_len = c->tail_max;
        }
    }
    return 0;
}

static int clip_append(struct clip *c, const char *data, size_t n)
{
    if (n == 0)
        return 0;
    if (c->head_len < c->head_max) {
        size_t k = c->head_max - c->head_len;
        if (k > n)
            k = n;
        /* Grow the head by doubling, so a short output costs little memory. */
        size_t want = c->head_len + k;
        if (want > c->head_cap) {
            size_t cap = c->head_cap ? c->head_cap : 256;
            while (cap < want)
                cap *= 2;
            if (cap > c->head_max)
                cap = c->head_max;
            char *p = realloc(c->head, cap);
            if (!p)
                return -1;
            c->head = p;
            c->head_cap = cap;
        }
        memcpy(c->head + c->head_len, data, k);
        c->head_len += k;
        data += k;
        n -= k;
        c->total += k;
    }
    if (n == 0)
        return 0;
    if (ring_push(c, data, n) < 0)
        return -1;
    c->total += n;
    return 0;
}

/* Appends the ring's bytes to out, oldest first. */
static int ring_copy(const struct clip *c, struct buf *out)
{
    if (c->ring_len == 0)
        return 0;
    size_t first = c->tail_max - c->ring_start;
    if (first > c->ring_len)
        first = c->ring_len;
    if (buf_append(out, c->ring + c->ring_start, first) < 0 ||
        buf_append(out, c->ring, c->ring_len - first) < 0)
        return -1;
    return 0;
}

/* Appends src (whitespace held back) to dst, keeping dst's head/ring invariants. */
static int clip_commit(struct clip *dst, const struct clip *src)
{
    if (clip_append(dst, src->head, src->head_len) < 0)
        return -1;
    if (clip_has_gap(src)) {
        /* The bytes src dropped are lost for dst too: the ring restarts after them. */
        dst->total += src->total - src->head_len - src->ring_len;
        dst->ring_start = dst->ring_len = 0;
    }
    if (src->ring_len) {
        struct buf tmp = BUF_INIT;
        int rc = ring_copy(src, &tmp);
        if (rc == 0)
            rc = clip_append(dst, tmp.data, tmp.len);
        buf_free(&tmp);
        return rc;
    }
    return 0;
}

void capture_init(struct capture *c, size_t head_max, size_t tail_max)
{
    memset(c, 0, sizeof *c);
    clip_init(&c->body, head_max ? head_max : CLIP_HEAD_MAX, tail_max ? tail_max : CLIP_TAIL_MAX);
    clip_init(&c->ws, c->body.head_max, c->body.tail_max);
    capture_set_window(c, 0, 0);
}

void capture_set_window(struct capture *c, size_t lines_max, size_t recent_max)
{
    c->lines_max = lines_max ? lines_max : CAPTURE_LINES_MAX;
    c->recent_max = recent_max ? recent_max : CAPTURE_RECENT_MAX;
}

void capture_no_window(struct capture *c)
{
    c->windowless = true;
}

/* Grows the recent ring (oldest byte first again) while it is below its maximum. */
static int recent_grow(struct capture *c, size_t want)
{
    size_t cap = c->recent_cap ? c->recent_cap : 4096;
    while (cap < want && cap < c->recent_max)
        cap *= 2;
    if (cap > c->recent_max)
        cap = c->recent_max;
    if (cap <= c->recent_cap)
        return 0;
    char *p = malloc(cap);
    if (!p)
        return -1;
    size_t first = c->recent_cap - c->recent_start;
    if (first > c->recent_len)
        first = c->recent_len;
    if (c->recent_len) {
        memcpy(p, c->recent + c->recent_start, first);
        memcpy(p + first, c->recent, c->recent_len - first);
    }
    free(c->recent);
    c->recent = p;
    c->recent_cap = cap;
    c->recent_start = 0;
    return 0;
}

static int recent_push(struct capture *c, const char *data, size_t n)
{
    if (c->recent_len + n > c->recent_cap && recent_grow(c, c->recent_len + n) < 0)
        return -1;
    size_t cap = c->recent_cap;
    if (n >= cap) {
        memcpy(c->recent, data + n - cap, cap);
        c->recent_start = 0;
        c->recent_len = cap;
        return 0;
    }
    for (size_t i = 0; i < n;) {
        size_t end = (c->recent_start + c->recent_len) % cap;
        size_t k = n - i < cap - end ? n - i : cap - end;
        memcpy(c->recent + end, data + i, k);
        i += k;
        c->recent_len += k;
        if (c->recent_len > cap) {
            c->recent_start = (c->recent_start + c->recent_len - cap) % cap;
            c->recent_len = cap;
        }
    }
    return 0;
}

/* Makes room for one more line start. The ring grows by doubling up to lines_max + 1, so a
 * short output does not pay for 11,000 entries; it never wraps before it is full-sized, so
 * growing keeps its order. */
static int lines_reserve(struct capture *c)
{
    size_t max = c->lines_max + 1;
    if (c->nl_len < c->nl_cap || c->nl_cap == max)
        return 0;
    size_t cap = c->nl_cap ? c->nl_cap * 2 : 64;
    if (cap > max)
        cap = max;
    uint64_t *p = realloc(c->nl, cap * sizeof *p);
    if (!p)
        return -1;
    c->nl = p;
    c->nl_cap = cap;
    return 0;
}

/* Remembers where each line of data starts; data begins at stream position base. */
static int lines_push(struct capture *c, const char *data, size_t n, uint64_t base)
{
    for (const char *p = data; (p = memchr(p, '\n', (size_t)(data + n - p))); p++) {
        if (lines_reserve(c) < 0)
            return -1;
        c->nl[(c->nl_start + c->nl_len) % c->nl_cap] = base + (uint64_t)(p - data) + 1;
        if (c->nl_len < c->nl_cap)
            c->nl_len++;
        else
            c->nl_start = (c->nl_start + 1) % c->nl_cap;
        c->newlines++;
    }
    return 0;
}

static uint64_t nl_at(const struct capture *c, size_t i)
{
    return c->nl[(c->nl_start + i) % c->nl_cap];
}

/* Where the shown window starts (stream position) and how many lines it has; false when
 * the output has no more than lines_max lines. */
static bool window_start(const struct capture *c, uint64_t *start, size_t *lines)
{
    if (c->windowless)
        return false;
    uint64_t last_nl = c->nl_len ? nl_at(c, c->nl_len - 1) : 0;
    uint64_t total_lines = c->newlines + (c->total > last_nl ? 1 : 0);
    if (total_lines <= c->lines_max)
        return false;
    /* Line m (0-based) starts just after newline number m (1-based); the ring holds
     * newlines first .. c->newlines. */
    uint64_t first = c->newlines - c->nl_len + 1;
    uint64_t base = c->total - c->recent_len;
    for (uint64_t m = total_lines - c->lines_max; m <= c->newlines; m++) {
        uint64_t pos = nl_at(c, (size_t)(m - first));
        if (pos >= base) {
            *start = pos;
            *lines = (size_t)(total_lines - m);
            return true;
        }
    }
    /* The last line alone is longer than what is kept. */
    *start = base;
    *lines = 1;
    return true;
}

int capture_append(struct capture *c, const char *data, size_t n)
{
    if (n == 0)
        return 0;
    if (!c->windowless && (recent_push(c, data, n) < 0 || lines_push(c, data, n, c->total) < 0))
        return -1;
    c->total += n;
    size_t keep = text_rstrip_len(data, n);
    if (keep == 0)
        return clip_append(&c->ws, data, n);
    if (c->ws.total) {
        if (clip_commit(&c->body, &c->ws) < 0)
            return -1;
        clip_free(&c->ws);
    }
    if (clip_append(&c->body, data, keep) < 0)
        return -1;
    return clip_append(&c->ws, data + keep, n - keep);
}

bool capture_is_empty(const struct capture *c)
{
    return c->body.total == 0 && c->ws.total == 0;
}

size_t capture_shown_lines(const struct capture *c)
{
    uint64_t start;
    size_t lines;
    return window_start(c, &start, &lines) ? lines : 0;
}

/* The window of the last lines, from the recent ring; capped: cut to 30,000 chars. */
static int render_window(const struct capture *c, uint64_t start, bool capped, struct buf *out)
{
    struct buf raw = BUF_INIT, text = BUF_INIT;
    size_t skip = (size_t)(start - (c->total - c->recent_len));
    size_t from = (c->recent_start + skip) % c->recent_cap;
    size_t len = c->recent_len - skip;
    size_t first = c->recent_cap - from < len ? c->recent_cap - from : len;
    int rc = -1;
    if (buf_append(&raw, "", 0) < 0 || buf_append(&raw, c->recent + from, first) < 0 ||
        buf_append(&raw, c->recent, len - first) < 0 ||
        utf8_repair(&text, raw.data, text_rstrip_len(raw.data, raw.len), 0, NULL) < 0 ||
        (capped && text_truncate_middle(&text) < 0) || buf_append(out, text.data, text.len) < 0)
        goto done;
    rc = 0;
done:
    buf_free(&raw);
    buf_free(&text);
    return rc;
}

int capture_render_uncapped(const struct capture *c, struct buf *out)
{
    uint64_t start;
    size_t lines;
    if (window_start(c, &start, &lines))
        return render_window(c, start, false, out);
    if (!c->windowless && c->total && c->total == c->recent_len)
        return render_window(c, 0, false, out);
    return capture_render(c, out);
}

int capture_render(const struct capture *c, struct buf *out)
{
    const struct clip *b = &c->body;
    struct buf raw = BUF_INIT, text = BUF_INIT;
    int rc = -1;
    uint64_t start;
    size_t lines;
    if (window_start(c, &start, &lines))
        return render_window(c, start, true, out);
    if (b->total == 0)
        return buf_append(out, "", 0);
    if (!clip_has_gap(b)) {
        if (buf_append(&raw, b->head, b->head_len) < 0 || ring_copy(b, &raw) < 0 ||
            utf8_repair(&text, raw.data, raw.len, 0, NULL) < 0 || text_truncate_middle(&text) < 0 ||
            buf_append(out, text.data, text.len) < 0)
            goto done;
        rc = 0;
        goto done;
    }
    /* Bytes were dropped, so the text is certainly longer than the cap: head and tail each
     * hold more than half of it. */
    size_t half = TEXT_MAX_CHARS / 2;
    if (utf8_repair(&text, b->head, b->head_len, 0, NULL) < 0)
        goto done;
    size_t head_end = utf8_offset(text.data, text.len, half);
    if (buf_append(out, text.data, head_end) < 0 || buf_append_str(out, TEXT_TRUNCATION_MARKER) < 0)
        goto done;
    buf_reset(&text);
    if (ring_copy(b, &raw) < 0 || utf8_repair(&text, raw.data, raw.len, 0, NULL) < 0)
        goto done;
    size_t count = utf8_count(text.data, text.len);
    size_t tail_start = count > half ? utf8_offset(text.data, text.len, count - half) : 0;
    if (buf_append(out, text.data + tail_start, text.len - tail_start) < 0)
        goto done;
    rc = 0;
done:
    buf_free(&raw);
    buf_free(&text);
    return rc;
}

void capture_clear(struct capture *c)
{
    /* The rings a short output used stay for the next command: each is one allocation that
     * musl's allocator otherwise maps and unmaps again at every command. */
    char *recent = c->recent_cap <= CAPTURE_KEEP_BYTES ? c->recent : NULL;
    size_t recent_cap = recent ? c->recent_cap : 0;
    uint64_t *nl = c->nl_cap * sizeof *c->nl <= CAPTURE_KEEP_BYTES ? c->nl : NULL;
    size_t nl_cap = nl ? c->nl_cap : 0;
    if (recent)
        c->recent = NULL;
    if (nl)
        c->nl = NULL;
    capture_reset(c);
    c->recent = recent;
    c->recent_cap = recent_cap;
    c->nl = nl;
    c->nl_cap = nl_cap;
}

void capture_reset(struct capture *c)
{
    clip_free(&c->body);
    clip_free(&c->ws);
    free(c->recent);
    free(c->nl);
    c->recent = NULL;
    c->nl = NULL;
    c->recent_cap = c->recent_start = c->recent_len = 0;
    c->nl_start = c->nl_len = c->nl_cap = 0;
    c->total = c->newlines = 0;
}
