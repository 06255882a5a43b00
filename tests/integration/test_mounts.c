/* The mount policy checks a path, and Docker resolves it again when it mounts it. A child swaps
 * a permitted directory under /tmp with a symlink to a denied one (the engine's state dir) in a
 * loop (renameat2 RENAME_EXCHANGE) while sessions are created with it as their workspace. A
 * create may be refused; a session that becomes ready must show the permitted directory at
 * /workspace (its marker file and inode), never the denied one (its marker or its inode: the
 * agent cannot list the 0700 state dir, but stat shows what is mounted).
 * The same swap while a session is stopped: its resume is refused.
 * PADDOCK_MOUNT_SWAP_CREATES sets the number of creates (default 60; 500 for a manual run, with
 * a larger meson test timeout). */
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SWAP_CREATES_DEFAULT 60
#define DENIED_MARKER "denied-marker-b7f3"
#define ALLOWED_MARKER "allowed-marker-b7f3"

/* Exchange a and b until killed (or until the parent dies). */
static pid_t swapper_start(const char *a, const char *b)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (;;)
            if (renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) < 0)
                _exit(2);
    }
    return pid;
}

static int swap_creates(void)
{
    const char *n = getenv("PADDOCK_MOUNT_SWAP_CREATES");
    int v = n ? atoi(n) : 0;
    return v > 0 ? v : SWAP_CREATES_DEFAULT;
}

static void test_swap_loop_never_mounts_a_denied_dir(void **state)
{
    (void)state;
    struct engine_proc *e = harness_eng;
    char base[] = "/tmp/paddock-mswap-XXXXXX";
    assert_non_null(mkdtemp(base));
    char *ok = strdupf("%s/ok", base);
    char *link = strdupf("%s/link", base);
    char *allowed = strdupf("%s/%s", ok, ALLOWED_MARKER);
    char *denied = strdupf("%s/%s", e->state_dir, DENIED_MARKER);
    assert_int_equal(mkdir(ok, 0755), 0);
    int fd = open(allowed, O_WRONLY | O_CREAT | O_EXCL, 0644);
    assert_true(fd >= 0);
    close(fd);
    fd = open(denied, O_WRONLY | O_CREAT | O_EXCL, 0644);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(symlink(e->state_dir, link), 0);
    /* The state dir is 0700 root: the agent cannot list it, but sees its inode number. */
    struct stat ok_st, denied_st;
    assert_int_equal(stat(ok, &ok_st), 0);
    assert_int_equal(stat(e->state_dir, &denied_st), 0);

    /* Without the loop the path is permitted: the attack relies on that. */
    char *body = strdupf("{\"workspace\": \"%s\"}", ok);
    json_t *s = session_new(e, body);
    session_delete(e, jstr(s, "id"));
    json_decref(s);

    pid_t swapper = swapper_start(ok, link);
    int creates = swap_creates(), ready = 0, refused = 0, caught = 0, mounted_denied = 0;
    for (int i = 0; i < creates; i++) {
        struct reply r;
        api(e, "POST", "/v1/sessions", body, &r);
        const char *id = jstr(r.json, "id");
        if (r.status != 201) {
            /* A refusal names its reason: the policy (400) or the post-start check (409). */
            if (r.status != 400 && r.status != 409)
                fprintf(stderr, "create %d → HTTP %ld %s\n", i, r.status, r.body ? r.body : r.err);
            assert_true(r.status == 400 || r.status == 409);
            refused++;
            caught += r.status == 409;
            reply_free(&r);
            continue;
        }
        engine_track(e, id);
        ready++;
        json_t *obs = session_run(e, id, "stat -c 'inode=%i' /workspace; ls -a /workspace");
        const char *out = jstr(obs, "content");
        assert_non_null(out);
        char *ino_ok = strdupf("inode=%llu\n", (unsigned long long)ok_st.st_ino);
        char *ino_denied = strdupf("inode=%llu\n", (unsigned long long)denied_st.st_ino);
        if (strstr(out, DENIED_MARKER) || strstr(out, ino_denied)) {
            mounted_denied++;
        } else if (!strstr(out, ALLOWED_MARKER) || !strstr(out, ino_ok)) {
            fprintf(stderr, "create %d: /workspace is neither dir: %s\n", i, out);
            fail();
        }
        free(ino_ok);
        free(ino_denied);
        json_decref(obs);
        session_delete(e, id);
        reply_free(&r);
    }
    kill(swapper, SIGKILL);
    int st;
    assert_int_equal(waitpid(swapper, &st, 0), swapper);
    assert_true(WIFSIGNALED(st)); /* it swapped until the end */
    fprintf(stderr,
            "swap loop: %d creates, %d ready, %d refused (%d of them after the start), %d "
            "mounted the denied dir\n",
            creates, ready, refused, caught, mounted_denied);
    assert_int_equal(mounted_denied, 0);

    unlink(denied);
    struct stat lst;
    /* The exchange left the dir under either name. */
    if (lstat(ok, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        unlink(ok);
        assert_int_equal(rename(link, ok), 0);
    } else {
        unlink(link);
    }
    unlink(allowed);
    rmdir(ok);
    rmdir(base);
    free(body);
    free(ok);
    free(link);
    free(allowed);
    free(denied);
}

/* A stopped session's bind is swapped for a link to the state dir before its resume: Docker
 * would resolve the recorded path again. The resume is refused and the session stays stopped;
 * swapped back, it resumes. */
static void test_resume_after_a_swap_is_refused(void **state)
{
    (void)state;
    struct engine_proc *e = harness_eng;
    char base[] = "/tmp/paddock-mswap-XXXXXX";
    assert_non_null(mkdtemp(base));
    char *ok = strdupf("%s/ok", base);
    char *link = strdupf("%s/link", base);
    assert_int_equal(mkdir(ok, 0755), 0);
    assert_int_equal(symlink(e->state_dir, link), 0);
    char *body = strdupf("{\"workspace\": \"%s\"}", ok);
    json_t *s = session_new(e, body);
    const char *id = jstr(s, "id");
    char *stop = strdupf("/v1/sessions/%s/stop", id);
    char *resume = strdupf("/v1/sessions/%s/resume", id);
    json_decref(api_json(e, "POST", stop, NULL, 200));

    assert_int_equal(renameat2(AT_FDCWD, ok, AT_FDCWD, link, RENAME_EXCHANGE), 0);
    struct reply r;
    api(e, "POST", resume, NULL, &r);
    if (r.status != 409)
        fprintf(stderr, "resume after the swap → HTTP %ld %s\n", r.status, r.body ? r.body : r.err);
    assert_int_equal(r.status, 409);
    assert_non_null(strstr(jstr(r.json, "error.message"), "mount policy"));
    reply_free(&r);
    json_t *after = session_wait_state(e, id, "stopped", 10000);
    assert_non_null(after);
    json_decref(after);

    assert_int_equal(renameat2(AT_FDCWD, ok, AT_FDCWD, link, RENAME_EXCHANGE), 0);
    json_decref(api_json(e, "POST", resume, NULL, 200));
    json_t *o = session_run(e, id, "echo back");
    assert_string_equal(jstr(o, "content"), "back");
    json_decref(o);
    session_delete(e, id);
    json_decref(s);
    unlink(link);
    rmdir(ok);
    rmdir(base);
    free(stop);
    free(resume);
    free(body);
    free(ok);
    free(link);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_swap_loop_never_mounts_a_denied_dir),
        cmocka_unit_test(test_resume_after_a_swap_is_refused),
    };
    int failed = cmocka_run_group_tests_name("mounts", tests, harness_group_setup_unsupervised,
                                             harness_group_teardown_clean);
    return failed || harness_teardown_failed ? 1 : 0;
}
