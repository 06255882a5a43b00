#include "editor_history.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    char *text;
    size_t len;
    uint64_t seq; /* global age, for the byte cap */
};

struct file_history {
    char *path;
    struct entry entries[EDITOR_HISTORY_PER_FILE]; /* oldest first */
    size_t count;
    struct file_history *next;
};

struct editor_history {
    struct file_history *files;
    size_t bytes;
    uint64_t seq;
};

struct editor_history *editor_history_new(void)
{
    return calloc(1, sizeof(struct editor_history));
}

void editor_history_free(struct editor_history *h)
{
    if (!h)
        return;
    struct file_history *f = h->files;
    while (f) {
        struct file_history *next = f->next;
        for (size_t i = 0; i < f->count; i++)
            free(f->entries[i].text);
        free(f->path);
        free(f);
        f = next;
    }
    free(h);
}

static struct file_history *find(const struct editor_history *h, const char *path)
{
    for (struct file_history *f = h->files; f; f = f->next)
        if (strcmp(f->path, path) == 0)
            return f;
    return NULL;
}

static void drop_oldest_of(struct editor_history *h, struct file_history *f)
{
    h->bytes -= f->entries[0].len;
    free(f->entries[0].text);
    memmove(&f->entries[0], &f->entries[1], (f->count - 1) * sizeof f->entries[0]);
    f->count--;
}

/* Frees the globally oldest entry; false when there is none. */
static int drop_oldest(struct editor_history *h)
{
    struct file_history *oldest = NULL;
    for (struct file_history *f = h->files; f; f = f->next)
        if (f->count && (!oldest || f->entries[0].seq < oldest->entries[0].seq))
            oldest = f;
    if (!oldest)
        return 0;
    drop_oldest_of(h, oldest);
    return 1;
}

int editor_history_push(struct editor_history *h, const char *path, const char *text, size_t n)
{
    struct file_history *f = find(h, path);
    char *copy = malloc(n + 1);
    if (!copy)
        return -1;
    memcpy(copy, text, n);
    copy[n] = '\0';
    if (!f) {
        f = calloc(1, sizeof *f);
        if (!f || !(f->path = strdup(path))) {
            free(f);
            free(copy);
            return -1;
        }
        f->next = h->files;
        h->files = f;
    }
    if (f->count == EDITOR_HISTORY_PER_FILE)
        drop_oldest_of(h, f);
    f->entries[f->count++] = (struct entry){copy, n, h->seq++};
    h->bytes += n;
    /* The entry just pushed stays even if it alone is over the cap: it is the one undo
     * the agent is most likely to want. */
    while (h->bytes > EDITOR_HISTORY_MAX_BYTES && h->bytes > n)
        if (!drop_oldest(h))
            break;
    return 0;
}

const char *editor_history_last(const struct editor_history *h, const char *path, size_t *n)
{
    const struct file_history *f = find(h, path);
    if (!f || !f->count)
        return NULL;
    *n = f->entries[f->count - 1].len;
    return f->entries[f->count - 1].text;
}

void editor_history_pop(struct editor_history *h, const char *path)
{
    struct file_history *f = find(h, path);
    if (!f || !f->count)
        return;
    f->count--;
    h->bytes -= f->entries[f->count].len;
    free(f->entries[f->count].text);
}
