/* A full disk under the state dir: the engine says so (507 with what to do), keeps serving,
 * loses nothing it acknowledged, and works again once there is space. Needs root (a small
 * tmpfs is mounted for the state dir); skipped (77) otherwise. */
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

static int setup(void **state)
{
    snprintf(mnt, sizeof(mnt), "/tmp/paddock-full-XXXXXX");
    if (!mkdtemp(mnt))
        return -1;
    /* 24 MiB: room for the store and the logs, small enough to fill in a moment. */
    if (mount("tmpfs", mnt, "tmpfs", MS_NOSUID | MS_NODEV, "size=24m,mode=0755") < 0) {
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
    /* No floor: this is what happens when the disk fills anyway (another process, a floor set
     * too low); test_disk.c has the floor. */
    eng->extra_env[0] = "PADDOCK_DISK_FLOOR=0";
    return engine_start(eng);
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
    return cmocka_run_group_tests_name("diskfull", tests, setup, teardown);
}
