/* Which platforms the daemon runs (platform.h): one table from Docker's architecture names
 * (Go's GOARCH) to the kernel's (uname's machine) and to the binfmt_misc handler an emulator
 * registers (qemu-user-static, tonistiigi/binfmt). */
#include "engine/platform.h"

#include "engine/base/util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct platform_arch {
    const char *docker;   /* GOARCH */
    const char *machines; /* uname machines that run it natively, space-separated */
    const char *binfmt;   /* the emulator's handler name */
};

static const struct platform_arch platform_arches[] = {
    {.docker = "amd64", .machines = "x86_64", .binfmt = "qemu-x86_64"},
    /* 64-bit x86 kernels run 32-bit binaries themselves. */
    {.docker = "386", .machines = "i386 i686 x86_64", .binfmt = "qemu-i386"},
    {.docker = "arm64", .machines = "aarch64 arm64", .binfmt = "qemu-aarch64"},
    {.docker = "arm", .machines = "armv7l armv6l armhf", .binfmt = "qemu-arm"},
    {.docker = "ppc64le", .machines = "ppc64le", .binfmt = "qemu-ppc64le"},
    {.docker = "s390x", .machines = "s390x", .binfmt = "qemu-s390x"},
    {.docker = "riscv64", .machines = "riscv64", .binfmt = "qemu-riscv64"},
    {.docker = "mips64le", .machines = "mips64", .binfmt = "qemu-mips64el"},
};

bool platform_valid(const char *platform)
{
    size_t len = strlen(platform), slashes = 0;
    if (len == 0 || len > 64 || platform[0] == '/' || platform[len - 1] == '/')
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = platform[i];
        if (c == '/') {
            if (platform[i + 1] == '/')
                return false;
            slashes++;
        } else if (!(islower((unsigned char)c) || isdigit((unsigned char)c) || c == '_')) {
            return false;
        }
    }
    return slashes == 1 || slashes == 2;
}

static bool platform_word_in(const char *word, const char *list)
{
    size_t n = strlen(word);
    for (const char *p = list; *p;) {
        size_t m = strcspn(p, " ");
        if (m == n && strncmp(p, word, n) == 0)
            return true;
        p += m;
        p += *p == ' ';
    }
    return false;
}

/* An enabled handler: its file's first line is "enabled". */
static bool platform_binfmt_enabled(const char *dir, const char *handler)
{
    char *path = util_strdupf("%s/%s", dir, handler);
    FILE *f = path ? fopen(path, "re") : NULL;
    free(path);
    if (!f)
        return false;
    char line[32] = "";
    bool on = fgets(line, sizeof(line), f) && strncmp(line, "enabled", 7) == 0;
    fclose(f);
    return on;
}

int platform_check(json_t *info, bool local, const char *binfmt_dir, const char *platform,
                   char **why)
{
    *why = NULL;
    const char *os_type = json_string_value(json_object_get(info, "OSType"));
    const char *machine = json_string_value(json_object_get(info, "Architecture"));
    char os[65], arch[65];
    size_t n = strcspn(platform, "/");
    snprintf(os, sizeof(os), "%.*s", (int)n, platform);
    snprintf(arch, sizeof(arch), "%.*s", (int)strcspn(platform + n + 1, "/"), platform + n + 1);
    if (os_type && strcmp(os, os_type) != 0) {
        *why = util_strdupf("\"platform\": \"%s\" cannot run on this Docker daemon: it runs %s "
                            "containers, not %s",
                            platform, os_type, os);
        return -1;
    }
    const struct platform_arch *a = NULL;
    for (size_t i = 0; i < sizeof(platform_arches) / sizeof(platform_arches[0]); i++)
        if (strcmp(platform_arches[i].docker, arch) == 0)
            a = &platform_arches[i];
    if (!a) {
        *why = util_strdupf("\"platform\": \"%s\": unknown architecture \"%s\" (known: amd64, "
                            "386, arm64, arm, ppc64le, s390x, riscv64, mips64le)",
                            platform, arch);
        return -1;
    }
    if (machine && platform_word_in(machine, a->machines))
        return 0;
    if (local && platform_binfmt_enabled(binfmt_dir, a->binfmt))
        return 0;
    *why = util_strdupf(
        "\"platform\": \"%s\" cannot run on this Docker daemon: it runs %s natively and %s; "
        "give no \"platform\" (the daemon's own), or register an emulator for %s (binfmt_misc "
        "handler %s, e.g. Debian's qemu-user-static) on the daemon's host",
        platform, machine ? machine : "an unknown architecture",
        local ? "has no enabled emulator for it" : "its emulators cannot be checked from here",
        arch, a->binfmt);
    return -1;
}
