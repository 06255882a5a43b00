/* Text graphs. Braille cells are U+2800 plus a dot mask; the left column's dots are bits
 * 0,1,2,6 from the top, the right column's 3,4,5,7. */
#include "ui/graph.h"

#include "common/utf8.h"

#include <math.h>
#include <string.h>

static const unsigned char graph_dot[2][4] = {{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}};
static const char *const graph_eighths[9] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
static const char graph_ascii_spark[] = " .:-=+*#";

/* The value as filled sub-levels out of levels (NAN or negative: 0). */
static int graph_level(double v, double max, int levels)
{
    if (!(v > 0) || !(max > 0))
        return 0;
    double l = v / max * levels;
    if (l >= levels)
        return levels;
    int n = (int)lround(l);
    return n == 0 ? 1 : n; /* a value above zero always shows */
}

static size_t graph_put(char *p, size_t room, const char *s)
{
    size_t n = strlen(s);
    if (n >= room)
        return 0;
    memcpy(p, s, n);
    return n;
}

static void graph_braille(char *out, unsigned mask)
{
    out[utf8_put(0x2800u + mask, out)] = '\0'; /* U+2800..U+28FF: 3 bytes */
}

size_t graph_render(const double *values, size_t n, double max, int width, int height,
                    enum graph_mode mode, char *rows, size_t rowsz)
{
    if (width < 1 || height < 1 || rowsz < 2)
        return 0;
    int per_cell = mode == GRAPH_BRAILLE ? 2 : 1;
    size_t slots = (size_t)width * (size_t)per_cell;
    size_t shown = n < slots ? n : slots;
    const double *v = values + (n - shown);
    size_t pad = slots - shown; /* empty slots on the left */
    int sub = mode == GRAPH_BRAILLE ? 4 : mode == GRAPH_BLOCK ? 8 : 2;
    int levels = sub * height;
    for (int r = 0; r < height; r++) {
        char *p = rows + (size_t)r * rowsz;
        size_t len = 0;
        /* sub-levels below this row's bottom */
        int base = (height - 1 - r) * sub;
        for (int c = 0; c < width; c++) {
            char cell[8];
            if (mode == GRAPH_BRAILLE) {
                unsigned mask = 0;
                for (int k = 0; k < 2; k++) {
                    size_t slot = (size_t)c * 2 + (size_t)k;
                    if (slot < pad)
                        continue;
                    int fill = graph_level(v[slot - pad], max, levels) - base;
                    for (int d = 0; d < 4 && d < fill; d++)
                        mask |= graph_dot[k][3 - d];
                }
                graph_braille(cell, mask);
            } else {
                int fill =
                    (size_t)c < pad ? 0 : graph_level(v[(size_t)c - pad], max, levels) - base;
                fill = fill < 0 ? 0 : fill > sub ? sub : fill;
                if (mode == GRAPH_BLOCK)
                    strcpy(cell, graph_eighths[fill]);
                else
                    strcpy(cell, fill == 2 ? "#" : fill == 1 ? "." : " ");
            }
            size_t w = graph_put(p + len, rowsz - len, cell);
            if (!w)
                break;
            len += w;
        }
        p[len] = '\0';
    }
    return shown;
}

void graph_sparkline(const double *values, size_t n, double max, int width, bool utf8, char *out,
                     size_t outsz)
{
    if (!outsz)
        return;
    size_t len = 0;
    size_t shown = width > 0 && n > (size_t)width ? (size_t)width : n;
    const double *v = values + (n - shown);
    for (int c = 0; c < width; c++) {
        size_t slot = (size_t)c;
        size_t pad = (size_t)width - shown;
        int l = slot < pad ? 0 : graph_level(v[slot - pad], max, 8);
        const char *g;
        char a[2] = {0};
        if (utf8) {
            g = l == 0 ? " " : graph_eighths[l];
        } else {
            a[0] = graph_ascii_spark[l == 0 ? 0 : (l * 7 + 7) / 8]; /* 1..8 → 1..7 */
            g = a;
        }
        size_t w = graph_put(out + len, outsz - len, g);
        if (!w)
            break;
        len += w;
    }
    out[len] = '\0';
}

void graph_bucket(const double *values, size_t n, size_t cols, bool peak, double *out)
{
    for (size_t c = 0; c < cols; c++) {
        size_t a = c * n / cols, b = (c + 1) * n / cols;
        if (b <= a)
            b = a + 1;
        double sum = 0, best = NAN;
        size_t k = 0;
        for (size_t i = a; i < b && i < n; i++) {
            if (isnan(values[i]))
                continue;
            sum += values[i];
            k++;
            if (isnan(best) || values[i] > best)
                best = values[i];
        }
        out[c] = k == 0 ? NAN : peak ? best : sum / (double)k;
    }
}

double graph_nice_max(const double *values, size_t n, double at_least)
{
    double m = at_least > 0 ? at_least : 1;
    for (size_t i = 0; i < n; i++)
        if (values[i] > m)
            m = values[i];
    double p = pow(10, floor(log10(m)));
    static const double steps[] = {1, 2, 5, 10};
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
        if (steps[i] * p >= m)
            return steps[i] * p;
    return 10 * p;
}
