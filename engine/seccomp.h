/* paddock's own seccomp profile, sent with every sandbox's create (SecurityOpt "seccomp=<JSON>")
 * so a sandbox never depends on the profile the daemon happens to ship. Built from one table
 * (seccomp.c): every allowed call and every call removed on purpose, each with its reason
 * (docs/architecture.md "Seccomp"). */
#ifndef PADDOCK_SECCOMP_H
#define PADDOCK_SECCOMP_H

#include <jansson.h>
#include <stddef.h>

enum seccomp_action {
    SECCOMP_ALLOW,  /* allowed (when .op is set: only with that argument) */
    SECCOMP_REMOVE, /* refused with ENOSYS, as if this kernel lacked it */
};

struct seccomp_call {
    const char *name;
    enum seccomp_action action;
    int nr; /* x86_64 number of a removed call (for the probes); 0 for allowed ones */
    /* An argument condition (op non-NULL): allowed only when it holds. Several entries of one
     * name are alternatives. */
    unsigned index;
    unsigned long long value, value_two;
    const char *op;
    const char *why;
};

/* The table, in order; n_out gets its length. */
const struct seccomp_call *seccomp_calls(size_t *n_out);

/* The profile in Docker's JSON form (caller decrefs); NULL when out of memory. */
json_t *seccomp_profile(void);

/* "seccomp=<profile JSON>" for HostConfig.SecurityOpt (malloc'd); NULL when out of memory. */
char *seccomp_security_opt(void);

#endif
