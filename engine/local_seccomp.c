/* The seccomp table compiled to BPF with libseccomp (local_seccomp.h). The rules are the Docker
 * profile's (seccomp.c's seccomp_profile): allowed calls, allowed calls with an argument
 * condition, removed calls answering ENOSYS, everything else EPERM. */
#include "engine/local_seccomp.h"

#include "engine/base/util.h"
#include "engine/seccomp.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static const struct {
    const char *name;
    enum scmp_compare op;
} ops[] = {
    {.name = "SCMP_CMP_NE", .op = SCMP_CMP_NE},
    {.name = "SCMP_CMP_LT", .op = SCMP_CMP_LT},
    {.name = "SCMP_CMP_LE", .op = SCMP_CMP_LE},
    {.name = "SCMP_CMP_EQ", .op = SCMP_CMP_EQ},
    {.name = "SCMP_CMP_GE", .op = SCMP_CMP_GE},
    {.name = "SCMP_CMP_GT", .op = SCMP_CMP_GT},
    {.name = "SCMP_CMP_MASKED_EQ", .op = SCMP_CMP_MASKED_EQ},
};

static int op_find(const char *name, enum scmp_compare *out)
{
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        if (strcmp(ops[i].name, name) == 0) {
            *out = ops[i].op;
            return 0;
        }
    return -1;
}

/* Every rule of the table on ctx; a name this libseccomp does not know is a call it cannot
 * number, which then gets the default (EPERM), as under Docker's own libseccomp. */
static int rules_add(scmp_filter_ctx ctx, char **err)
{
    size_t n;
    const struct seccomp_call *t = seccomp_calls(&n);
    for (size_t i = 0; i < n; i++) {
        int nr = seccomp_syscall_resolve_name(t[i].name);
        if (nr == __NR_SCMP_ERROR)
            continue;
        uint32_t action = t[i].action == SECCOMP_REMOVE ? SCMP_ACT_ERRNO(ENOSYS) : SCMP_ACT_ALLOW;
        int rc;
        if (t[i].op) {
            struct scmp_arg_cmp cmp = {
                .arg = t[i].index, .datum_a = t[i].value, .datum_b = t[i].value_two};
            if (op_find(t[i].op, &cmp.op) < 0) {
                *err = util_strdupf("seccomp: %s: unknown comparison %s", t[i].name, t[i].op);
                return -1;
            }
            rc = seccomp_rule_add_array(ctx, action, nr, 1, &cmp);
        } else {
            rc = seccomp_rule_add(ctx, action, nr, 0);
        }
        if (rc < 0) {
            *err = util_strdupf("seccomp: the rule for %s: %s", t[i].name, strerror(-rc));
            return -1;
        }
    }
    return 0;
}

int local_seccomp_compile(void **bpf, size_t *len, char **err)
{
    *bpf = NULL;
    *len = 0;
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
    if (!ctx) {
        *err = strdup("seccomp: cannot make a filter (libseccomp)");
        return -1;
    }
    int rc = 0;
    /* The Docker profile's architectures: x86_64 with its x86 and x32 spellings. */
    if (seccomp_arch_native() == SCMP_ARCH_X86_64)
        rc = seccomp_arch_add(ctx, SCMP_ARCH_X86) < 0 || seccomp_arch_add(ctx, SCMP_ARCH_X32) < 0
                 ? -1
                 : 0;
    if (rc < 0)
        *err = strdup("seccomp: cannot add the x86 and x32 architectures");
    /* The engine sets no_new_privs itself (bubblewrap does for its child). */
    if (rc == 0 && seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) < 0) {
        *err = strdup("seccomp: cannot configure the filter");
        rc = -1;
    }
    if (rc == 0)
        rc = rules_add(ctx, err);
    int fd = rc == 0 ? memfd_create("paddock-seccomp", MFD_CLOEXEC) : -1;
    if (rc == 0 && (fd < 0 || seccomp_export_bpf(ctx, fd) < 0)) {
        *err = util_strdupf("seccomp: cannot export the filter: %s", strerror(errno));
        rc = -1;
    }
    seccomp_release(ctx);
    off_t size = rc == 0 ? lseek(fd, 0, SEEK_END) : -1;
    char *buf = size > 0 ? malloc((size_t)size) : NULL;
    if (rc == 0 && (!buf || pread(fd, buf, (size_t)size, 0) != size)) {
        *err = strdup("seccomp: cannot read the exported filter");
        rc = -1;
    }
    if (fd >= 0)
        close(fd);
    if (rc < 0) {
        free(buf);
        return -1;
    }
    *bpf = buf;
    *len = (size_t)size;
    return 0;
}

int local_seccomp_load(const void *bpf, size_t len)
{
    struct sock_fprog prog = {.len = (unsigned short)(len / sizeof(struct sock_filter)),
                              .filter = (struct sock_filter *)(uintptr_t)bpf};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return -1;
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0 ? -1 : 0;
}
