/* Small helpers shared by the engine modules. */
#ifndef PADDOCK_UTIL_H
#define PADDOCK_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* malloc'd printf; NULL only when out of memory. */
char *util_strdupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *util_vstrdupf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
/* Wall-clock seconds since the epoch, with fractions. */
double util_now(void);
/* n random bytes as 2n lowercase hex chars into out (size >= 2n+1). Returns 0 or -1. */
int util_random_hex(char *out, size_t nbytes);
/* mkdir -p with mode; 0 or -1 (errno set). */
int util_mkdir_p(const char *path, unsigned mode);
/* rm -rf of a directory tree we created, which a sandbox may have written into: no link is
 * followed (at any depth, nor at path itself: a link there is removed, not its target), no
 * other filesystem entered, any depth handled. 0 or -1. */
int util_remove_tree(const char *path);
/* True for [0-9a-f]{len_min..len_max}. */
bool util_is_hex_id(const char *s, size_t len_min, size_t len_max);

#endif
