/* The Logs tab's pure parts: what a line looks like on screen (sanitized, wrapped), where the
 * view is in lines of several rows, search in what is shown, and the saved file. */
#include "ui/logview.h"

#include "common/sanitize.h"
#include "common/timeconv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

/* ---- timestamps ---- */

/* n decimal digits at s; -1 when one is not a digit. */
static long logview_digits(const char *s, int n)
{
    long v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

size_t logview_stamp_parse(const char *s, size_t len, double *at)
{
    /* "YYYY-MM-DDTHH:MM:SS" is 19 bytes; then the fraction, the zone and a space. */
    if (len < 21 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':')
        return 0;
    long y = logview_digits(s, 4), mo = logview_digits(s + 5, 2), d = logview_digits(s + 8, 2);
    long h = logview_digits(s + 11, 2), mi = logview_digits(s + 14, 2);
    long sec = logview_digits(s + 17, 2);
    if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 ||
        sec < 0 || sec > 60)
        return 0;
    size_t i = 19;
    double frac = 0;
    if (i < len && s[i] == '.') {
        double scale = 0.1;
        size_t k = ++i;
        while (i < len && i - k < 9 && s[i] >= '0' && s[i] <= '9') {
            frac += (s[i] - '0') * scale;
            scale /= 10;
            i++;
        }
        if (i == k)
            return 0;
    }
    long offset = 0;
    if (i < len && s[i] == 'Z') {
        i++;
    } else if (i + 6 <= len && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
        long oh = logview_digits(s + i + 1, 2), om = logview_digits(s + i + 4, 2);
        if (oh < 0 || oh > 23 || om < 0 || om > 59)
            return 0;
        offset = (oh * 60 + om) * 60 * (s[i] == '-' ? -1 : 1);
        i += 6;
    } else {
        return 0;
    }
    if (i >= len || s[i] != ' ')
        return 0;
    struct tm tm = {.tm_year = (int)y - 1900,
                    .tm_mon = (int)mo - 1,
                    .tm_mday = (int)d,
                    .tm_hour = (int)h,
                    .tm_min = (int)mi,
                    .tm_sec = (int)sec};
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return 0;
    *at = (double)(t - offset) + frac;
    return i + 1;
}

void logview_stamp_format(double at, char *buf, size_t size)
{
    if (!size)
        return;
    if (at <= 0) {
        snprintf(buf, size, "%*s", LOGVIEW_STAMP_COLS - 1, "");
        return;
    }
    struct tm tm;
    if (timeconv_to_local(at, &tm) < 0) {
        snprintf(buf, size, "%*s", LOGVIEW_STAMP_COLS - 1, "?");
        return;
    }
    int ms = (int)((at - floor(at)) * 1000); /* at is a time now: finite */
    snprintf(buf, size, "%02d:%02d:%02d.%03d", tm.tm_hour, tm.tm_min, tm.tm_sec,
             ms < 0     ? 0
             : ms > 999 ? 999
                        : ms);
}

size_t logview_append(struct logbuf *b, int fd, const char *text, size_t len, bool stamped,
                      double now)
{
    size_t lines = 0, pos = 0;
    while (pos < len) {
        double at = now;
        if (stamped && (pos == 0 || text[pos - 1] == '\n'))
            pos += logview_stamp_parse(text + pos, len - pos, &at);
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) + 1 : len;
        lines += logbuf_append(b, fd, text + pos, end - pos, at);
        pos = end;
    }
    return lines;
}

/* ---- what is shown ---- */

size_t logview_display(const char *text, size_t len, unsigned flags, char **buf, size_t *cap)
{
    /* The sanitizer's tokens take at most about four bytes per input byte. */
    size_t need = len * 4 + 64;
    if (need > *cap || !*buf) {
        char *p = realloc(*buf, need);
        if (!p) {
            if (*buf && *cap)
                (*buf)[0] = '\0';
            return 0;
        }
        *buf = p;
        *cap = need;
    }
    return sanitize_text_flags(text, len, *buf, *cap, flags & ~(unsigned)SANITIZE_MULTILINE);
}

size_t logview_wrap(const char *s, size_t len, int width, bool words, size_t first, size_t *starts,
                    size_t max)
{
    if (width < 1)
        width = 1;
    size_t row = 0, space = 0;
    int cols = 0, space_cols = 0; /* space: where the row's last space ends, and its column */
    if (first == 0 && max)
        starts[0] = 0;
    mbstate_t st;
    memset(&st, 0, sizeof(st));
    for (size_t i = 0; i < len;) {
        wchar_t wc;
        size_t k = mbrtowc(&wc, s + i, len - i, &st);
        int cw;
        if (k == (size_t)-1 || k == (size_t)-2 || k == 0) {
            memset(&st, 0, sizeof(st));
            k = 1;
            cw = 1;
        } else {
            cw = wcwidth(wc);
            if (cw < 0)
                cw = 1; /* drawn as `?` (ui/draw.c) */
        }
        if (cw > 0 && cols > 0 && cols + cw > width) {
            /* a word that does not fit goes to the next row whole, when the row keeps at
             * least half its width */
            bool at_space = words && space && space_cols >= width / 2;
            row++;
            if (row >= first && row - first < max)
                starts[row - first] = at_space ? space : i;
            cols = at_space ? cols - space_cols : 0;
            space = 0;
        }
        cols += cw;
        i += k;
        if (wc == L' ' && k == 1) {
            space = i;
            space_cols = cols;
        }
    }
    return row + 1;
}

/* ---- scrolling over lines of several rows ---- */

static bool logview_before(struct logview_pos a, struct logview_pos b)
{
    return a.line < b.line || (a.line == b.line && a.row < b.row);
}

struct logview_pos logview_bottom(size_t n, size_t height, logview_rows_fn rows, void *ud)
{
    struct logview_pos p = {0, 0};
    size_t need = height ? height : 1;
    for (size_t i = n; i > 0; i--) {
        size_t r = rows(i - 1, ud);
        if (r >= need) {
            p.line = i - 1;
            p.row = r - need;
            return p;
        }
        need -= r;
    }
    return p;
}

bool logview_at_bottom(struct logview_pos p, size_t n, size_t height, logview_rows_fn rows,
                       void *ud)
{
    if (p.line >= n)
        return true;
    size_t r = rows(p.line, ud);
    size_t below = r > p.row ? r - p.row : 1;
    for (size_t i = p.line + 1; i < n && below <= height; i++)
        below += rows(i, ud);
    return below <= height;
}

void logview_move(struct logview_pos *p, long delta, size_t n, size_t height, logview_rows_fn rows,
                  void *ud)
{
    struct logview_pos bottom = logview_bottom(n, height, rows, ud);
    if (!n || !logview_before(*p, bottom)) {
        if (delta >= 0 || !n) {
            *p = bottom;
            return;
        }
        *p = bottom; /* past the end (lines went, the width changed): up from the bottom */
    }
    size_t r = rows(p->line, ud);
    if (p->row >= r)
        p->row = r - 1;
    while (delta < 0) {
        if (p->row > 0) {
            size_t take = p->row < (size_t)-delta ? p->row : (size_t)-delta;
            p->row -= take;
            delta += (long)take;
        } else if (p->line > 0) {
            p->line--;
            p->row = rows(p->line, ud) - 1;
            delta++;
        } else {
            break;
        }
    }
    while (delta > 0 && logview_before(*p, bottom)) {
        size_t left = rows(p->line, ud) - 1 - p->row;
        if ((size_t)delta <= left) {
            p->row += (size_t)delta;
            delta = 0;
        } else {
            delta -= (long)left + 1;
            p->line++;
            p->row = 0;
        }
    }
    if (logview_before(bottom, *p))
        *p = bottom;
}

/* ---- saving ---- */

int logview_save(const struct logbuf *b, FILE *f, bool stamps)
{
    for (size_t i = 0; i < b->count; i++) {
        const struct logbuf_line *l = logbuf_get(b, i);
        if (stamps && l->at > 0) {
            struct tm tm;
            char when[40];
            if (timeconv_to_utc(l->at, &tm) == 0 &&
                strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm))
                fprintf(f, "%s.%03dZ ", when, (int)((l->at - floor(l->at)) * 1000));
        }
        if ((l->len && fwrite(l->text, 1, l->len, f) != l->len) || fputc('\n', f) == EOF)
            return -1;
    }
    if (fflush(f) != 0 || ferror(f)) {
        if (!errno)
            errno = EIO;
        return -1;
    }
    return 0;
}
