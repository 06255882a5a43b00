/* Sizes in bytes (size.h). */
#include "common/size.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long long size_parse(const char *s)
{
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(s, &end, 10);
    if (errno)
        return -1;
    int shift = 0;
    const char *units = "kmgt";
    const char *u = *end ? strchr(units, tolower((unsigned char)*end)) : NULL;
    if (u) {
        shift = 10 * (int)(u - units + 1);
        end++;
    }
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end || n > (unsigned long long)(INT64_MAX >> shift))
        return -1;
    return (long long)(n << shift);
}

char *size_format(long long bytes, char *out, size_t n)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    if (bytes < 1024) {
        snprintf(out, n, "%lld B", bytes);
        return out;
    }
    double v = (double)bytes / 1024;
    size_t i = 0;
    while (v >= 1024 && i + 1 < sizeof(units) / sizeof(units[0])) {
        v /= 1024;
        i++;
    }
    snprintf(out, n, "%.1f %s", v, units[i]);
    return out;
}
