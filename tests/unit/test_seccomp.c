/* Unit tests of engine/seccomp.c: the profile is Docker's JSON form, every removed call answers
 * ENOSYS and is allowed by no rule, the calls the issue names are removed, every entry says
 * why, and the calls a shell and Python need are allowed. */
#include "engine/seccomp.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

static const struct seccomp_call *find(const char *name)
{
    size_t n;
    const struct seccomp_call *t = seccomp_calls(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(t[i].name, name) == 0)
            return &t[i];
    return NULL;
}

/* Whether the rule's names array holds name. */
static bool rule_names(json_t *rule, const char *name)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(rule, "names"), i, v)
    {
        if (strcmp(json_string_value(v), name) == 0)
            return true;
    }
    return false;
}

static void test_profile_shape(void **state)
{
    json_t *p = seccomp_profile();
    assert_non_null(p);
    assert_string_equal(json_string_value(json_object_get(p, "defaultAction")), "SCMP_ACT_ERRNO");
    assert_int_equal(json_integer_value(json_object_get(p, "defaultErrnoRet")), 1);
    json_t *arch = json_array_get(json_object_get(p, "archMap"), 0);
    assert_string_equal(json_string_value(json_object_get(arch, "architecture")),
                        "SCMP_ARCH_X86_64");
    assert_int_equal(json_array_size(json_object_get(arch, "subArchitectures")), 2);

    size_t n, i;
    const struct seccomp_call *t = seccomp_calls(&n);
    json_t *rules = json_object_get(p, "syscalls"), *rule;
    for (size_t k = 0; k < n; k++) {
        assert_non_null(t[k].why);
        assert_true(strlen(t[k].why) > 3);
        bool allowed = false, enosys = false;
        json_array_foreach(rules, i, rule)
        {
            if (!rule_names(rule, t[k].name))
                continue;
            const char *action = json_string_value(json_object_get(rule, "action"));
            if (strcmp(action, "SCMP_ACT_ALLOW") == 0)
                allowed = true;
            else if (strcmp(action, "SCMP_ACT_ERRNO") == 0 &&
                     json_integer_value(json_object_get(rule, "errnoRet")) == 38)
                enosys = true;
        }
        if (t[k].action == SECCOMP_REMOVE) {
            assert_true(t[k].nr > 0);
            assert_false(allowed);
            assert_true(enosys);
        } else {
            assert_true(allowed);
            assert_false(enosys);
        }
        /* A name appears once, unless its entries are argument alternatives. */
        for (size_t j = k + 1; j < n; j++)
            if (strcmp(t[j].name, t[k].name) == 0)
                assert_true(t[j].op && t[k].op);
    }
    json_decref(p);
}

static void test_issue_calls_removed(void **state)
{
    const char *removed[] = {"io_uring_setup",
                             "io_uring_enter",
                             "io_uring_register",
                             "userfaultfd",
                             "add_key",
                             "request_key",
                             "keyctl",
                             "bpf",
                             "perf_event_open",
                             "kexec_load",
                             "init_module",
                             "open_by_handle_at",
                             "unshare",
                             "setns",
                             "mount"};
    for (size_t i = 0; i < sizeof(removed) / sizeof(removed[0]); i++) {
        const struct seccomp_call *c = find(removed[i]);
        assert_non_null(c);
        assert_int_equal(c->action, SECCOMP_REMOVE);
    }
    const char *allowed[] = {"read",  "write",  "execve", "openat", "mmap", "futex",
                             "wait4", "ptrace", "kill",   "pipe2",  "rseq", "arch_prctl"};
    for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
        const struct seccomp_call *c = find(allowed[i]);
        assert_non_null(c);
        assert_int_equal(c->action, SECCOMP_ALLOW);
        assert_null(c->op);
    }
    /* clone only without namespace flags. */
    const struct seccomp_call *c = find("clone");
    assert_non_null(c);
    assert_string_equal(c->op, "SCMP_CMP_MASKED_EQ");
    assert_true(c->value & 0x10000000ULL); /* CLONE_NEWUSER */
    assert_int_equal(c->value_two, 0);
}

static void test_security_opt(void **state)
{
    char *opt = seccomp_security_opt();
    assert_non_null(opt);
    assert_int_equal(strncmp(opt, "seccomp={", 9), 0);
    json_error_t e;
    json_t *p = json_loads(opt + 8, 0, &e);
    assert_non_null(p);
    json_t *want = seccomp_profile();
    assert_true(json_equal(p, want));
    json_decref(p);
    json_decref(want);
    free(opt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile_shape),
        cmocka_unit_test(test_issue_calls_removed),
        cmocka_unit_test(test_security_opt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
