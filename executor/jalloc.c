/* A request's JSON is a few dozen small values (the request, the observation, the reply), all
 * freed once it is answered. musl's allocator, the static executor's, is slow at that and
 * gives a size class's page back to the kernel when its last block is freed: every command
 * mapped, faulted in and unmapped a page for jansson's hash tables. Small blocks are kept for
 * the next request instead, on one list per 16-byte size class. The executor has one thread. */
#include "jalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"

/* The size class in front of each block: 16 bytes, so the block keeps malloc's alignment. */
#define JALLOC_HEAD 16
#define JALLOC_CLASSES (JALLOC_MAX / JALLOC_HEAD)
#define JALLOC_LARGE 0

static void *jalloc_lists[JALLOC_CLASSES + 1]; /* block starts; next in the block's body */
static size_t jalloc_counts[JALLOC_CLASSES + 1];

void *jalloc_malloc(size_t n)
{
    size_t cls = n > JALLOC_MAX ? JALLOC_LARGE : n == 0 ? 1 : (n + JALLOC_HEAD - 1) / JALLOC_HEAD;
    unsigned char *block = jalloc_lists[cls];
    if (cls != JALLOC_LARGE && block) {
        memcpy(&jalloc_lists[cls], block + JALLOC_HEAD, sizeof(void *));
        jalloc_counts[cls]--;
        return block + JALLOC_HEAD;
    }
    size_t body = cls == JALLOC_LARGE ? n : cls * JALLOC_HEAD;
    if (body > SIZE_MAX - JALLOC_HEAD || !(block = malloc(JALLOC_HEAD + body)))
        return NULL;
    memcpy(block, &cls, sizeof cls);
    return block + JALLOC_HEAD;
}

void jalloc_free(void *p)
{
    if (!p)
        return;
    unsigned char *block = (unsigned char *)p - JALLOC_HEAD;
    size_t cls;
    memcpy(&cls, block, sizeof cls);
    if (cls == JALLOC_LARGE || cls > JALLOC_CLASSES || jalloc_counts[cls] >= JALLOC_KEEP) {
        free(block);
        return;
    }
    memcpy(p, &jalloc_lists[cls], sizeof(void *));
    jalloc_lists[cls] = block;
    jalloc_counts[cls]++;
}

size_t jalloc_kept(void)
{
    size_t n = 0;
    for (size_t i = 0; i <= JALLOC_CLASSES; i++)
        n += jalloc_counts[i];
    return n;
}

#if defined(__GLIBC__)
size_t jalloc_hold_classes(size_t upto)
{
    (void)upto;
    return 0;
}
#else
/* musl's size classes (mallocng, musl 1.2.1 on: __malloc_size_classes in Debian 12's libc.a),
 * in 16-byte units: a class of c units holds requests of up to c * 16 - 4 bytes (a slot's
 * header is 4). */
static const unsigned short jalloc_musl_classes[] = {
    1,   2,   3,   4,    5,    6,    7,    8,    9,    10,   12,   15,   18,   20,   25,   31,
    36,  42,  50,  63,   72,   84,   102,  127,  146,  170,  204,  255,  292,  340,  409,  511,
    584, 682, 818, 1023, 1169, 1364, 1637, 2047, 2340, 2730, 3276, 4095, 4680, 5460, 6552, 8191};
#define JALLOC_HOLD_SLOTS (sizeof jalloc_musl_classes / sizeof jalloc_musl_classes[0])
static void *jalloc_held[JALLOC_HOLD_SLOTS];
#define JALLOC_HOLD_FILL 32

size_t jalloc_hold_classes(size_t upto)
{
    size_t n = 0;
    for (size_t i = 0; i < JALLOC_HOLD_SLOTS && !jalloc_held[i]; i++) {
        size_t size = (size_t)jalloc_musl_classes[i] * 16 - 4;
        if (size > upto)
            break;
        void *fill[JALLOC_HOLD_FILL];
        size_t k = JALLOC_HOLD_BYTES / size, got = 0;
        k = k < 1 ? 1 : k > JALLOC_HOLD_FILL ? JALLOC_HOLD_FILL : k;
        while (got < k && (fill[got] = malloc(size)))
            got++;
        if (!got)
            break;
        jalloc_held[i] = fill[got - 1]; /* in the class's newest, largest group */
        for (size_t j = 0; j + 1 < got; j++)
            free(fill[j]);
        n++;
    }
    return n;
}
#endif

void jalloc_install(void)
{
#if !defined(__SANITIZE_ADDRESS__)
    json_set_alloc_funcs(jalloc_malloc, jalloc_free);
    jalloc_hold_classes(JALLOC_HOLD_MAX);
#endif
}

static int jalloc_append(const char *data, size_t n, void *ud)
{
    return buf_append(ud, data, n);
}

char *jalloc_dumps(const json_t *v, size_t flags)
{
    struct buf b = BUF_INIT;
    if (!v || json_dump_callback(v, jalloc_append, &b, flags) != 0) {
        buf_free(&b);
        return NULL;
    }
    return buf_steal(&b);
}
