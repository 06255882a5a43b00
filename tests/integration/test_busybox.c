/* The static executor serves a session in a busybox-only image (no libc, no bash): the engine
 * bind-mounts it and the run action falls back to ash with the same protocol. */
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

static char image[96];

static int build_image(void **state)
{
    snprintf(image, sizeof(image), "paddock/test-busybox:%d", (int)getpid());
    char *script = strdupf("%s/scripts/build-image", getenv("PADDOCK_SRC"));
    char *argv[] = {"/bin/bash", script, "--busybox", image, "--test-label", NULL};
    struct proc_result res;
    proc_run(argv, NULL, 120000, &res);
    if (res.status != 0)
        fprintf(stderr, "build-image failed (%d): %s\n", res.status, res.err);
    assert_int_equal(res.status, 0);
    proc_result_free(&res);
    free(script);
    return 0;
}

static int remove_image(void **state)
{
    char *path = strdupf("/v1.41/images/%s?force=1", image);
    struct reply r;
    docker("DELETE", path, &r);
    reply_free(&r);
    free(path);
    return 0;
}

static void test_busybox_session(void **state)
{
    struct engine_proc *e = engine_new();
    assert_int_equal(engine_start(e), 0);
    char *body = strdupf("{\"image\": \"%s\"}", image);
    json_t *s = session_new(e, body);
    const char *id = jstr(s, "id");

    json_t *o = session_run(e, id, "echo hi");
    assert_string_equal(jstr(o, "content"), "hi");
    assert_int_equal(json_integer_value(jpath(o, "extras.metadata.exit_code")), 0);
    json_decref(o);

    /* no bash in this image: the shell is busybox ash */
    o = session_run(e, id, "test -e /bin/bash || echo no-bash");
    assert_string_equal(jstr(o, "content"), "no-bash");
    json_decref(o);

    o = session_run(e, id, "cd /tmp");
    json_decref(o);
    o = session_run(e, id, "pwd");
    assert_string_equal(jstr(o, "content"), "/tmp");
    assert_string_equal(jstr(o, "extras.metadata.working_dir"), "/tmp");
    json_decref(o);

    o = session_run(e, id, "sh -c 'exit 3'");
    assert_int_equal(json_integer_value(jpath(o, "extras.metadata.exit_code")), 3);
    json_decref(o);

    /* No python3 in this image: run_ipython answers with a clear error observation. */
    char *path = strdupf("/v1/sessions/%s/execute_action", id);
    struct reply r;
    api(e, "POST", path,
        "{\"action\": {\"action\": \"run_ipython\", \"args\": {\"code\": \"print(1)\"}}}", &r);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(jstr(r.json, "content"), "run_ipython needs python3"));
    reply_free(&r);
    free(path);

    session_delete(e, id);
    json_decref(s);
    free(body);
    assert_int_equal(engine_stop(e), 0);
    assert_int_equal(engine_destroy(e), 0);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_busybox_session, build_image, remove_image),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
