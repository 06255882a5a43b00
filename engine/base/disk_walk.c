/* Measuring a tree without following what a sandbox can write (disk_walk.h). */
#include "engine/base/disk_walk.h"

#include "engine/base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* An open directory on the stack. */
struct disk_walk_dir {
    DIR *dir;
    dev_t dev; /* the tree's filesystem: a directory on another one is not entered */
};

struct disk_walk {
    struct disk_walk_dir stack[DISK_WALK_MAX_DEPTH + 1];
    int depth; /* entries used in stack */
    char **roots;
    int n_roots, next_root;
    long long bytes, entries;
};

struct disk_walk *disk_walk_new(void)
{
    return calloc(1, sizeof(struct disk_walk));
}

int disk_walk_add(struct disk_walk *w, const char *path, char **err)
{
    char **r = realloc(w->roots, (size_t)(w->n_roots + 1) * sizeof(*r));
    if (!r || !(r[w->n_roots] = strdup(path))) {
        if (r)
            w->roots = r;
        *err = util_strdupf("out of memory");
        return -1;
    }
    w->roots = r;
    w->n_roots++;
    return 0;
}

/* Open the next root onto the empty stack: 1 when one was opened, 0 when none is left, -1 with
 * *err. */
static int disk_walk_open_root(struct disk_walk *w, char **err)
{
    while (w->next_root < w->n_roots) {
        const char *path = w->roots[w->next_root++];
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT)
            continue;
        struct stat st;
        DIR *d = NULL;
        if (fd < 0 || fstat(fd, &st) < 0 || !(d = fdopendir(fd))) {
            *err = util_strdupf("cannot open %s: %s", path, strerror(errno));
            if (fd >= 0)
                close(fd);
            return -1;
        }
        w->bytes += (long long)st.st_blocks * 512;
        w->entries++;
        w->stack[0] = (struct disk_walk_dir){.dir = d, .dev = st.st_dev};
        w->depth = 1;
        return 1;
    }
    return 0;
}

static void disk_walk_pop(struct disk_walk *w)
{
    closedir(w->stack[--w->depth].dir);
}

int disk_walk_step(struct disk_walk *w, unsigned budget, char **err)
{
    while (budget > 0) {
        if (w->depth == 0) {
            int rc = disk_walk_open_root(w, err);
            if (rc <= 0)
                return rc;
        }
        struct disk_walk_dir *top = &w->stack[w->depth - 1];
        errno = 0;
        struct dirent *e = readdir(top->dir);
        if (!e) {
            disk_walk_pop(w);
            continue;
        }
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        budget--;
        int dfd = dirfd(top->dir);
        struct stat st;
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue; /* gone meanwhile */
        w->bytes += (long long)st.st_blocks * 512;
        w->entries++;
        if (!S_ISDIR(st.st_mode) || st.st_dev != top->dev)
            continue;
        if (w->depth > DISK_WALK_MAX_DEPTH - 1) {
            *err = util_strdupf("directories nest deeper than %d levels: what they hold cannot "
                                "be measured",
                                DISK_WALK_MAX_DEPTH);
            return -2;
        }
        /* O_NOFOLLOW: a directory swapped for a link since the fstatat is not entered. */
        int fd = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            continue;
        struct stat now;
        if (fstat(fd, &now) < 0 || now.st_dev != top->dev) {
            close(fd); /* swapped for a directory elsewhere since the fstatat */
            continue;
        }
        DIR *d = fdopendir(fd);
        if (!d) {
            close(fd);
            *err = util_strdupf("out of memory");
            return -1;
        }
        w->stack[w->depth++] = (struct disk_walk_dir){.dir = d, .dev = top->dev};
    }
    return w->depth > 0 || w->next_root < w->n_roots ? 1 : 0;
}

long long disk_walk_bytes(const struct disk_walk *w)
{
    return w->bytes;
}

long long disk_walk_entries(const struct disk_walk *w)
{
    return w->entries;
}

void disk_walk_free(struct disk_walk *w)
{
    if (!w)
        return;
    while (w->depth > 0)
        disk_walk_pop(w);
    for (int i = 0; i < w->n_roots; i++)
        free(w->roots[i]);
    free(w->roots);
    free(w);
}
