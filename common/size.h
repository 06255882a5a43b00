/* Sizes in bytes as people write and read them: "512m", "10g" in, "64.0 MiB" out. */
#ifndef PADDOCK_COMMON_SIZE_H
#define PADDOCK_COMMON_SIZE_H

#include <stddef.h>

/* "4096", "1024k", "512m", "2g", "1t" (binary units, case-insensitive, an optional trailing
 * b). The bytes, or -1 when malformed or too large. */
long long size_parse(const char *s);
/* bytes as "812 B", "64.0 MiB", "10.0 GiB" into out (n bytes); returns out. */
char *size_format(long long bytes, char *out, size_t n);

#endif
