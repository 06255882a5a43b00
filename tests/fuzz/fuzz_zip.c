/* executor/zip_read.c: an archive uploaded to the executor, unpacked for real into a scratch
 * directory (removed after each input). Limits are small so a deflate bomb costs little; the
 * reader must refuse or unpack, never write outside the directory: nothing may appear beside
 * it. */
#include "zip_read.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[256]; /* <tmp>/paddock-fuzz-zip-XXXXXX, holding dest/ only */

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(path) < 0 ? -1 : 0;
}

static void cleanup(void)
{
    nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void setup_root(void)
{
    const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(root, sizeof(root), "%s/paddock-fuzz-zip-XXXXXX", tmp);
    if (!mkdtemp(root))
        abort();
    atexit(cleanup);
}

/* dest/ has been removed: anything left in root was written outside the destination. */
static void check_root(void)
{
    DIR *d = opendir(root);
    if (!d)
        abort();
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            abort();
    closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!root[0])
        setup_root();
    int zfd = memfd_create("fuzz.zip", MFD_CLOEXEC);
    if (zfd < 0 || (size && write(zfd, data, size) != (ssize_t)size))
        abort();
    char dest[300];
    snprintf(dest, sizeof(dest), "%s/dest", root);
    if (mkdir(dest, 0700) < 0)
        abort();
    int dfd = open(dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        abort();
    const struct zip_limits lim = {.max_total = 1 << 20, .max_entries = 64};
    struct buf err = {0};
    zip_extract(zfd, dfd, &lim, &err);
    buf_free(&err);
    close(dfd);
    close(zfd);
    nftw(dest, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    check_root();
    return 0;
}
