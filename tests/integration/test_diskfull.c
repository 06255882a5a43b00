/* A full disk under the state dir: the engine says so (507 with what to do), keeps serving,
 * loses nothing it acknowledged, and works again once there is space. And the store's floor
 * as the free space moves under a running engine: the check each action makes reuses a recent
 * reading only far above the floor (engine/disk.c), so near it and below it every action sees
 * the space as it is. Needs root (a small tmpfs is mounted for each state dir); skipped (77)
 * otherwise. */
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

static char mnt[64];
static struct engine_proc *eng;

/* Write zeros until the filesystem refuses; returns the bytes written. */
static long fill(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    static char block[64 * 1024];
    long total = 0;
    for (size_t sz = sizeof(block); sz >= 512; sz /= 2) {
        ssize_t n;
        while ((n = write(fd, block, sz)) > 0)
            total += n;
        assert_int_equal(errno, ENOSPC);
    }
    fsync(fd);
    close(fd);
    return total;
}

/* A file of about `bytes` zeros (whole MiB). */
static void write_mib(const char *path, long long bytes)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    static char block[1 << 20];
    for (long long done = 0; done + (long long)sizeof(block) <= bytes; done += sizeof(block))
        assert_int_equal(write(fd, block, sizeof(block)), (ssize_t)sizeof(block));
    close(fd);
}

static long long free_bytes(const char *path)
{
    struct statvfs v;
    assert_int_equal(statvfs(path, &v), 0);
    return (long long)v.f_bavail * (long long)v.f_frsize;
}

static struct reply run_raw(const char *id, const char *cmd)
{
    json_t *a = json_pack("{s:{s:s,s:{s:s}}}", "action", "action", "run", "args", "command", cmd);
    char *body = json_dumps(a, JSON_COMPACT);
    char *path = strdupf("/v1/sessions/%s/execute_action", id);
    struct reply r;
    api(eng, "POST", path, body, &r);
    free(path);
    free(body);
    json_decref(a);
    return r;
}

static void test_disk_full(void **state)
{
    json_t *sess = session_new(eng, NULL);
    const char *id = jstr(sess, "id");
    json_t *obs = session_run(eng, id, "echo before-full");
    assert_string_equal(jstr(obs, "content"), "before-full");
    json_decref(obs);

    char *filler = strdupf("%s/filler", mnt);
    long filled = fill(filler);
    assert_true(filled > 0);

    /* An action whose observation cannot be stored: a clear 507, no crash. */
    struct reply r = run_raw(id, "head -c 400000 /dev/zero | tr '\\0' x");
    if (r.status != 507)
        fail_msg("want 507 on a full disk, got %ld: %s", r.status, r.body ? r.body : r.err);
    assert_string_equal(jstr(r.json, "error.code"), "storage_full");
    assert_non_null(strstr(jstr(r.json, "error.message"), "free disk space under"));
    reply_free(&r);

    /* A new session cannot be recorded either: the same answer, and no container is left. */
    api(eng, "POST", "/v1/sessions", "{}", &r);
    assert_true(r.status == 507 || r.status == 500);
    reply_free(&r);

    /* The engine still serves. */
    api(eng, "GET", "/v1/info", NULL, &r);
    assert_int_equal(r.status, 200);
    reply_free(&r);

    /* Space again: everything works, and what was acknowledged before is still there. */
    assert_int_equal(unlink(filler), 0);
    obs = session_run(eng, id, "echo after-full");
    assert_string_equal(jstr(obs, "content"), "after-full");
    json_decref(obs);
    char *hist = strdupf("/v1/sessions/%s/actions", id);
    api(eng, "GET", hist, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "echo before-full"));
    assert_non_null(strstr(r.body, "echo after-full"));
    reply_free(&r);
    free(hist);
    session_delete(eng, id);
    free(filler);
    json_decref(sess);
}

#define FLOOR (32LL << 20)

/* The floor while the free space moves: refused as soon as it is below, run again as soon as
 * space is back. Without the rule that near the floor every check reads the free space again,
 * the action after the second file would run on the reading /v1/info just took. */
static void test_floor_follows_free_space(void **state)
{
    json_t *sess = session_new(eng, NULL);
    const char *id = jstr(sess, "id");
    json_t *obs = session_run(eng, id, "echo far-above");
    assert_string_equal(jstr(obs, "content"), "far-above");
    json_decref(obs);

    /* Down to 16 MiB above the floor: still runs; /v1/info reads the free space there. */
    char *near = strdupf("%s/near", mnt), *below = strdupf("%s/below", mnt);
    write_mib(near, free_bytes(mnt) - FLOOR - (16LL << 20));
    struct reply r;
    api(eng, "GET", "/v1/info", NULL, &r);
    assert_int_equal(r.status, 200);
    long long seen = json_integer_value(jpath(r.json, "disk.free"));
    reply_free(&r);
    assert_true(seen > FLOOR && seen < FLOOR + (64LL << 20));
    obs = session_run(eng, id, "echo near");
    assert_string_equal(jstr(obs, "content"), "near");
    json_decref(obs);

    /* 32 MiB more: below the floor, and the very next action is refused. */
    write_mib(below, 32LL << 20);
    assert_true(free_bytes(mnt) < FLOOR);
    r = run_raw(id, "echo refused");
    if (r.status != 507)
        fail_msg("action below the floor: want 507, got %ld: %s", r.status,
                 r.body ? r.body : r.err);
    assert_non_null(strstr(jstr(r.json, "error.message"), "below the engine's floor"));
    reply_free(&r);

    /* Space back: the very next action runs. */
    assert_int_equal(unlink(below), 0);
    obs = session_run(eng, id, "echo back");
    assert_string_equal(jstr(obs, "content"), "back");
    json_decref(obs);

    assert_int_equal(unlink(near), 0);
    session_delete(eng, id);
    free(near);
    free(below);
    json_decref(sess);
}

/* A tmpfs of `size` for the state dir, and the engine on it with the floor given. */
static int setup_on_tmpfs(const char *size, const char *floor_env)
{
    snprintf(mnt, sizeof(mnt), "/tmp/paddock-full-XXXXXX");
    if (!mkdtemp(mnt))
        return -1;
    char opts[64];
    snprintf(opts, sizeof(opts), "size=%s,mode=0755", size);
    if (mount("tmpfs", mnt, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
        fprintf(stderr, "mount tmpfs on %s: %s\n", mnt, strerror(errno));
        rmdir(mnt);
        return -1;
    }
    eng = engine_new();
    /* Move the state dir onto the tmpfs. */
    rmdir(eng->state_dir);
    free(eng->state_dir);
    free(eng->socket);
    free(eng->op_socket);
    eng->state_dir = strdupf("%s/state", mnt);
    eng->socket = strdupf("%s/engine.sock", eng->state_dir);
    eng->op_socket = strdupf("%s/operator.sock", eng->state_dir);
    assert_int_equal(mkdir(eng->state_dir, 0700), 0);
    eng->extra_env[0] = floor_env;
    return engine_start(eng);
}

/* 24 MiB: room for the store and the logs, small enough to fill in a moment. No floor: this is
 * what happens when the disk fills anyway (another process, a floor set too low); test_disk.c
 * has the floor. */
static int setup(void **state)
{
    return setup_on_tmpfs("24m", "PADDOCK_DISK_FLOOR=0");
}

/* 256 MiB with a floor of 32 MiB: far above it at the start. */
static int setup_floor(void **state)
{
    return setup_on_tmpfs("256m", "PADDOCK_DISK_FLOOR=33554432");
}

static int teardown(void **state)
{
    int code = eng ? engine_stop(eng) : 0;
    int left = engine_destroy(eng);
    umount2(mnt, MNT_DETACH);
    rmdir(mnt);
    if (code != 0 || left) {
        fprintf(stderr, "FAIL: engine exit %d, %d container(s) left\n", code, left);
        return -1;
    }
    return 0;
}

int main(void)
{
    harness_require();
    if (geteuid() != 0) {
        fprintf(stderr, "SKIP: needs root to mount a small tmpfs\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_disk_full),
    };
    const struct CMUnitTest floor_tests[] = {
        cmocka_unit_test(test_floor_follows_free_space),
    };
    int failed = cmocka_run_group_tests_name("diskfull", tests, setup, teardown);
    eng = NULL;
    return failed | cmocka_run_group_tests_name("diskfloor", floor_tests, setup_floor, teardown);
}
