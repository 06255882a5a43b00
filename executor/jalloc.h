/* jansson's memory, kept on free lists, and JSON text from it that free() takes. */
#ifndef PADDOCK_EXECUTOR_JALLOC_H
#define PADDOCK_EXECUTOR_JALLOC_H

#include <jansson.h>
#include <stddef.h>

/* Blocks of up to JALLOC_MAX bytes go back to a free list of their 16-byte size class, up to
 * JALLOC_KEEP per class (1 MiB at most in all); larger ones, and those beyond, to free(). */
#define JALLOC_MAX 512
#define JALLOC_KEEP 128

/* musl's allocator (mallocng) carves each size class into groups of slots, sizes a new group by
 * how much of the class is in use, and unmaps a group when its last slot is freed: a class that
 * a request used alone (libmicrohttpd's 184-byte response, a 128-byte buffer) mapped, faulted in
 * and unmapped a page at every request, 4 page faults a command. jalloc_hold_classes takes, for
 * each of musl's classes up to upto bytes, up to JALLOC_HOLD_BYTES of blocks (the later ones land
 * in larger groups), keeps the last for the process's life and frees the rest: each class keeps
 * one large group. About 90 KB of RSS for the classes up to 8 KiB. Returns how many classes it
 * took; does nothing under glibc (which keeps freed memory itself). */
#define JALLOC_HOLD_MAX (8 * 1024)
#define JALLOC_HOLD_BYTES (16 * 1024)
size_t jalloc_hold_classes(size_t upto);

/* Routes jansson's allocations through the free lists. Called first thing in main, before any
 * JSON value exists (one made before would be freed through them). Under AddressSanitizer it
 * does nothing: the lists would hide a use after free. */
void jalloc_install(void);
/* jansson's allocator, for tests (jalloc_install sets these). */
void *jalloc_malloc(size_t n);
void jalloc_free(void *p);
/* How many blocks the lists hold now (tests). */
size_t jalloc_kept(void);

/* json_dumps(v, flags), but the text is malloc'd, for free() and for libmicrohttpd to free: with
 * jalloc installed, json_dumps' own result may only go to jalloc_free. NULL on failure. */
char *jalloc_dumps(const json_t *v, size_t flags);

#endif
