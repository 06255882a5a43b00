/* The seccomp profile inside a real sandbox: the profile is paddock's own (Seccomp: 2 and calls
 * Docker's default allows refused), every call engine/seccomp.c removes answers ENOSYS when
 * called by number from the agent's shell, argument-filtered calls refuse the forbidden
 * arguments with EPERM, and the calls a program needs still work. */
#include "engine/seccomp.h"
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Calls each (name, number, args) by number through libc's syscall() and prints
 * "name result errno", one a line; a child made by a clone that should have failed exits at
 * once. ptrace(PTRACE_TRACEME) runs in a forked child, which reports through its exit code. */
static const char probe_py[] =
    "import ctypes, os\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "def call(name, nr, *args):\n"
    "    args = [ctypes.c_long(a) for a in args] + [ctypes.c_long(0)] * (6 - len(args))\n"
    "    ctypes.set_errno(0)\n"
    "    r = libc.syscall(ctypes.c_long(nr), *args)\n"
    "    e = ctypes.get_errno()\n"
    "    if r == 0 and name == 'clone_newuser':\n"
    "        os._exit(0)\n"
    "    print(name, r, e, flush=True)\n"
    "for line in open('/proc/self/status'):\n"
    "    if line.startswith('Seccomp:'):\n"
    "        print('seccomp_mode', line.split()[1], 0)\n"
    "pid = os.fork()\n"
    "if pid == 0:\n"
    "    os._exit(0 if libc.syscall(ctypes.c_long(101), ctypes.c_long(0), ctypes.c_long(0),"
    " ctypes.c_long(0), ctypes.c_long(0)) == 0 else 1)\n"
    "print('ptrace_traceme', os.waitpid(pid, 0)[1], 0)\n"
    "for c in CALLS:\n"
    "    call(*c)\n";

/* Extra probes of allowed and argument-filtered calls: name, x86_64 number, arguments. */
static const char extra_calls[] =
    "('getpid', 39), ('uname_null', 63, 0),"
    "('socket_unix', 41, 1, 1, 0), ('socket_alg', 41, 38, 5, 0), ('socket_vsock', 41, 40, 1, 0),"
    "('personality_query', 135, 0xffffffff), ('personality_rie', 135, 0x0400000),"
    "('clone_newuser', 56, 0x10000000 | 17, 0, 0, 0, 0)";

/* One "name result errno" line of the output, or false. */
static bool probe_result(const char *out, const char *name, long *result, int *err)
{
    size_t len = strlen(name);
    for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, name, len) == 0 && p[len] == ' ')
            return sscanf(p + len, " %ld %d", result, err) == 2;
    }
    return false;
}

static char *hex(const char *s)
{
    size_t n = strlen(s);
    char *h = malloc(2 * n + 1);
    assert_non_null(h);
    for (size_t i = 0; i < n; i++)
        sprintf(h + 2 * i, "%02x", (unsigned char)s[i]);
    return h;
}

static void test_removed_calls(void **state)
{
    size_t n;
    const struct seccomp_call *t = seccomp_calls(&n);
    size_t cap = 4096;
    char *calls = malloc(cap);
    assert_non_null(calls);
    size_t len = (size_t)snprintf(calls, cap, "CALLS = [%s", extra_calls);
    size_t n_removed = 0;
    for (size_t i = 0; i < n; i++) {
        if (t[i].action != SECCOMP_REMOVE)
            continue;
        n_removed++;
        if (len + 128 > cap) {
            cap *= 2;
            calls = realloc(calls, cap);
            assert_non_null(calls);
        }
        len += (size_t)snprintf(calls + len, cap - len, ", ('%s', %d)", t[i].name, t[i].nr);
    }
    snprintf(calls + len, cap - len, "]\n");
    size_t plen = strlen(calls) + sizeof(probe_py);
    char *program = malloc(plen);
    assert_non_null(program);
    snprintf(program, plen, "%s%s", calls, probe_py);
    /* Hex: one line, nothing for the shell to quote. */
    char *h = hex(program);
    size_t clen = strlen(h) + 64;
    char *command = malloc(clen);
    assert_non_null(command);
    snprintf(command, clen, "python3 -c \"exec(bytes.fromhex('%s').decode())\"", h);

    json_t *s = session_new(harness_eng, NULL);
    const char *id = jstr(s, "id");
    json_t *obs = session_run(harness_eng, id, command);
    const char *out = jstr(obs, "content");
    assert_non_null(out);
    fprintf(stderr, "probe output:\n%s\n", out);

    long r;
    int e;
    assert_true(probe_result(out, "seccomp_mode", &r, &e));
    assert_int_equal(r, 2);
    for (size_t i = 0; i < n; i++) {
        if (t[i].action != SECCOMP_REMOVE)
            continue;
        if (!probe_result(out, t[i].name, &r, &e))
            fail_msg("no result for %s", t[i].name);
        if (r != -1 || e != 38)
            fail_msg("%s (%d) returned %ld errno %d, not ENOSYS: not removed", t[i].name, t[i].nr,
                     r, e);
    }
    /* Allowed: getpid, uname (EFAULT from the kernel, not the filter), AF_UNIX sockets, the
     * personality query, ptrace on oneself. */
    assert_true(probe_result(out, "getpid", &r, &e));
    assert_true(r > 0);
    assert_true(probe_result(out, "uname_null", &r, &e));
    assert_int_equal(e, 14);
    assert_true(probe_result(out, "socket_unix", &r, &e));
    assert_true(r >= 0);
    assert_true(probe_result(out, "personality_query", &r, &e));
    assert_true(r >= 0);
    assert_true(probe_result(out, "ptrace_traceme", &r, &e));
    assert_int_equal(r, 0);
    /* Refused by argument: EPERM, the profile's default. */
    const char *eperm[] = {"socket_alg", "socket_vsock", "personality_rie", "clone_newuser"};
    for (size_t i = 0; i < sizeof(eperm) / sizeof(eperm[0]); i++) {
        assert_true(probe_result(out, eperm[i], &r, &e));
        if (r != -1 || e != 1)
            fail_msg("%s returned %ld errno %d, not EPERM", eperm[i], r, e);
    }
    fprintf(stderr, "%zu removed calls answered ENOSYS\n", n_removed);
    json_decref(obs);
    session_delete(harness_eng, id);
    json_decref(s);
    free(command);
    free(h);
    free(program);
    free(calls);
}

/* The start-up probe reports the profile applied in GET /v1/info (polled: it runs in the
 * background from the engine's start). */
static void test_info_probe(void **state)
{
    json_t *info = NULL;
    const char *st = NULL;
    for (int i = 0; i < 600; i++) {
        json_decref(info);
        info = api_json(harness_eng, "GET", "/v1/info", NULL, 200);
        st = jstr(info, "seccomp.state");
        if (st && strcmp(st, "checking") != 0)
            break;
        usleep(50 * 1000);
    }
    char *d = json_dumps(json_object_get(info, "seccomp"), JSON_COMPACT);
    fprintf(stderr, "seccomp: %s\n", d);
    free(d);
    assert_non_null(st);
    assert_string_equal(st, "applied");
    assert_string_equal(jstr(info, "seccomp.profile"), "paddock");
    assert_true(json_integer_value(json_object_get(json_object_get(info, "seccomp"), "removed")) >
                40);
    assert_true(json_is_null(json_object_get(json_object_get(info, "seccomp"), "error")));
    json_decref(info);
    /* The probe's container is gone. */
    const char *labels[] = {"paddock.probe=seccomp", NULL};
    char *eid = engine_read_id(harness_eng);
    assert_non_null(eid);
    char *mine = malloc(strlen(eid) + 32);
    assert_non_null(mine);
    sprintf(mine, "paddock.engine=%s", eid);
    const char *both[] = {labels[0], mine, NULL};
    json_t *left = docker_containers_with_labels(both);
    assert_int_equal(json_array_size(left), 0);
    json_decref(left);
    free(mine);
    free(eid);
}

/* A probe container left by an engine killed mid-probe (made here with its labels and name) is
 * removed when the engine starts again. */
static void test_leftover_probe_removed(void **state)
{
    char *eid = engine_read_id(harness_eng);
    assert_non_null(eid);
    char body[512], path[160];
    snprintf(body, sizeof(body),
             "{\"Image\": \"%s\", \"Cmd\": [\"true\"], \"Labels\": {\"paddock.engine\": "
             "\"%s\", \"paddock.probe\": \"seccomp\", \"paddock.test\": \"1\"}}",
             HARNESS_IMAGE, eid);
    snprintf(path, sizeof(path), "/v1.41/containers/create?name=paddock-%.8s-seccomp-probe-1-0",
             eid);
    struct reply r;
    docker_body("POST", path, body, &r);
    assert_int_equal(r.status, 201);
    reply_free(&r);
    char *mine = malloc(strlen(eid) + 32);
    assert_non_null(mine);
    sprintf(mine, "paddock.engine=%s", eid);
    const char *labels[] = {"paddock.probe=seccomp", mine, NULL};
    json_t *left = docker_containers_with_labels(labels);
    assert_int_equal(json_array_size(left), 1);
    json_decref(left);

    assert_int_equal(engine_stop(harness_eng), 0);
    assert_int_equal(engine_start(harness_eng), 0);
    size_t n = 1;
    for (int i = 0; i < 600 && n; i++) {
        left = docker_containers_with_labels(labels);
        n = json_array_size(left);
        json_decref(left);
        if (n)
            usleep(50 * 1000);
    }
    assert_int_equal(n, 0);
    free(mine);
    free(eid);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_info_probe),
        cmocka_unit_test(test_removed_calls),
        cmocka_unit_test(test_leftover_probe_removed),
    };
    int failed = cmocka_run_group_tests_name("seccomp", tests, harness_group_setup_unsupervised,
                                             harness_group_teardown);
    return failed || harness_teardown_failed ? 1 : 0;
}
