/* The regression side of the fuzz targets: the same LLVMFuzzerTestOneInput, built with the
 * normal compiler (and the ASan build's sanitizers), run over every file of the directories
 * named on the command line: the seed corpus, then the crashes found so far. A crash or a
 * sanitizer finding fails the test. The first directory (the seeds) must hold inputs, so a
 * renamed corpus cannot pass silently; the others may be missing or empty (a target that
 * never crashed has no regression inputs). */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *data = malloc(cap);
    size_t n;
    while (data && (n = fread(data + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            uint8_t *more = realloc(data, cap *= 2);
            if (!more)
                free(data);
            data = more;
        }
    }
    fclose(f);
    if (!data) {
        fprintf(stderr, "%s: out of memory\n", path);
        return -1;
    }
    /* an exact-size copy, so a read past the input's end is a finding as under libFuzzer */
    uint8_t *exact = malloc(len ? len : 1);
    if (exact)
        memcpy(exact, data, len);
    free(data);
    if (!exact)
        return -1;
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    int total = 0;
    for (int i = 1; i < argc; i++) {
        DIR *d = opendir(argv[i]);
        if (!d && i > 1 && errno == ENOENT)
            continue;
        if (!d) {
            perror(argv[i]);
            return 1;
        }
        char **names = NULL;
        size_t count = 0;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            char **more = realloc(names, (count + 1) * sizeof(*names));
            if (!more || !(more[count] = strdup(e->d_name))) {
                fprintf(stderr, "out of memory\n");
                return 1;
            }
            names = more;
            count++;
        }
        closedir(d);
        if (count == 0 && i == 1) {
            fprintf(stderr, "%s: no inputs\n", argv[i]);
            return 1;
        }
        qsort(names, count, sizeof(*names), name_cmp);
        for (size_t k = 0; k < count; k++) {
            char path[4096];
            snprintf(path, sizeof(path), "%s/%s", argv[i], names[k]);
            if (replay_file(path) < 0)
                return 1;
            free(names[k]);
            total++;
        }
        free(names);
    }
    printf("%d inputs replayed\n", total);
    return 0;
}
