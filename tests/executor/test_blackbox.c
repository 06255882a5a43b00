/* Black-box tests of paddock-executor: start the binary given as argv[1] on a unix socket in a
 * fresh temp dir, drive it over HTTP with libcurl, stop it by PID.
 * EXECUTOR_SHELL=/path/to/shell runs the same tests against another shell (busybox ash). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blackbox.h"

static const char *executor_path;
static struct bb ex;

static struct bb_reply run_full(const char *command, bool is_input, double timeout)
{
    char *body = bb_run_body(command, is_input, timeout, timeout >= 0);
    struct bb_reply r = bb_http(&ex, "POST", "/execute_action", body);
    free(body);
    assert_int_equal(r.status, 200);
    assert_non_null(r.json);
    return r;
}

static struct bb_reply run(const char *command)
{
    return run_full(command, false, 30);
}

static const char *content(const struct bb_reply *r)
{
    return json_string_value(json_object_get(r->json, "content"));
}

static json_t *meta(const struct bb_reply *r)
{
    return json_object_get(json_object_get(r->json, "extras"), "metadata");
}

static json_int_t exit_code(const struct bb_reply *r)
{
    return json_integer_value(json_object_get(meta(r), "exit_code"));
}

static const char *meta_str(const struct bb_reply *r, const char *key)
{
    return json_string_value(json_object_get(meta(r), key));
}

static void assert_prefix(const char *s, const char *prefix)
{
    assert_non_null(s);
    if (strncmp(s, prefix, strlen(prefix)) != 0)
        fail_msg("expected \"%s\" to start with \"%s\"", s, prefix);
}

/* ---- start and stop --------------------------------------------------------------------- */

static int start_executor(void **state)
{
    (void)state;
    return bb_start(&ex, executor_path);
}

static int stop_executor(void **state)
{
    (void)state;
    return bb_stop(&ex);
}

/* ---- tests ------------------------------------------------------------------------------ */

static void test_alive_and_server_info(void **state)
{
    (void)state;
    struct bb_reply r = bb_http(&ex, "GET", "/alive", NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(json_string_value(json_object_get(r.json, "status")), "ok");
    bb_reply_free(&r);
    r = bb_http(&ex, "GET", "/server_info", NULL);
    assert_int_equal(r.status, 200);
    assert_true(json_is_number(json_object_get(r.json, "uptime")));
    assert_true(json_is_number(json_object_get(r.json, "idle_time")));
    json_t *mem = json_object_get(json_object_get(r.json, "resources"), "memory");
    assert_true(json_integer_value(json_object_get(mem, "rss")) > 0);
    bb_reply_free(&r);
}

static void test_echo(void **state)
{
    (void)state;
    struct bb_reply r = run("echo hi");
    assert_string_equal(json_string_value(json_object_get(r.json, "observation")), "run");
    assert_string_equal(content(&r), "hi");
    assert_int_equal(exit_code(&r), 0);
    assert_true(json_is_true(json_object_get(r.json, "success")));
    assert_string_equal(json_string_value(json_object_get(r.json, "message")),
                        "Command `echo hi` executed with exit code 0.");
    json_t *extras = json_object_get(r.json, "extras");
    assert_string_equal(json_string_value(json_object_get(extras, "command")), "echo hi");
    assert_true(json_is_false(json_object_get(extras, "hidden")));
    assert_int_equal(json_integer_value(json_object_get(meta(&r), "pid")), -1);
    assert_string_equal(meta_str(&r, "prefix"), "");
    assert_string_equal(meta_str(&r, "suffix"), "\n[The command completed with exit code 0.]");
    assert_non_null(meta_str(&r, "username"));
    assert_non_null(meta_str(&r, "hostname"));
    assert_string_equal(meta_str(&r, "working_dir"), ex.work);
    assert_true(json_is_null(json_object_get(meta(&r), "py_interpreter_path")));
    bb_reply_free(&r);
}

static void test_cd_persists(void **state)
{
    (void)state;
    struct bb_reply r = run("cd /tmp");
    assert_int_equal(exit_code(&r), 0);
    assert_string_equal(meta_str(&r, "working_dir"), "/tmp");
    bb_reply_free(&r);
    r = run("pwd");
    assert_string_equal(content(&r), "/tmp");
    assert_string_equal(meta_str(&r, "working_dir"), "/tmp");
    bb_reply_free(&r);
    char back[160];
    snprintf(back, sizeof back, "cd %s", ex.work);
    r = run(back);
    assert_string_equal(meta_str(&r, "working_dir"), ex.work);
    bb_reply_free(&r);
}

static void test_export_persists(void **state)
{
    (void)state;
    struct bb_reply r = run("export X=1");
    bb_reply_free(&r);
    r = run("echo $X");
    assert_string_equal(content(&r), "1");
    bb_reply_free(&r);
}

static void test_exit_codes(void **state)
{
    (void)state;
    struct bb_reply r = run("sh -c 'exit 3'");
    assert_int_equal(exit_code(&r), 3);
    assert_true(json_is_false(json_object_get(r.json, "success")));
    assert_string_equal(json_string_value(json_object_get(r.json, "message")),
                        "Command `sh -c 'exit 3'` executed with exit code 3.");
    assert_string_equal(meta_str(&r, "suffix"), "\n[The command completed with exit code 3.]");
    bb_reply_free(&r);
    r = run("false");
    assert_int_equal(exit_code(&r), 1);
    bb_reply_free(&r);
    /* $? is the user's, not the marker's. */
    r = run("false");
    bb_reply_free(&r);
    r = run("echo $?");
    assert_string_equal(content(&r), "1");
    bb_reply_free(&r);
}

static void test_multiline_output(void **state)
{
    (void)state;
    struct bb_reply r = run("printf 'a\\nb\\n\\nc\\n\\n\\n'");
    assert_string_equal(content(&r), "a\nb\n\nc");
    bb_reply_free(&r);
    r = run("printf 'no newline'");
    assert_string_equal(content(&r), "no newline");
    bb_reply_free(&r);
}

static void test_multiline_command(void **state)
{
    (void)state;
    struct bb_reply r = run("echo a\necho b");
    assert_string_equal(content(&r), "a\nb");
    assert_int_equal(exit_code(&r), 0);
    bb_reply_free(&r);
    r = run("cat <<'EOF'\nhello 'there'\nEOF");
    assert_string_equal(content(&r), "hello 'there'");
    bb_reply_free(&r);
    r = run("for i in 1 2 3; do\n  echo $i\ndone");
    assert_string_equal(content(&r), "1\n2\n3");
    bb_reply_free(&r);
}

static void test_long_command(void **state)
{
    (void)state;
    char *cmd = malloc(7000), *want = malloc(7000);
    memset(want, 'x', 6000);
    want[6000] = '\0';
    snprintf(cmd, 7000, "echo '%s'", want);
    struct bb_reply r = run(cmd);
    assert_int_equal(exit_code(&r), 0);
    assert_string_equal(content(&r), want);
    bb_reply_free(&r);
    free(cmd);
    free(want);
}

static void test_invalid_utf8(void **state)
{
    (void)state;
    struct bb_reply r = run("printf '\\377\\376 ok'");
    assert_non_null(r.json); /* the reply is valid JSON */
    assert_string_equal(content(&r), "\xef\xbf\xbd\xef\xbf\xbd ok");
    bb_reply_free(&r);
}

static void test_big_output_truncated(void **state)
{
    (void)state;
    struct bb_reply r = run("seq 1 100000");
    const char *c = content(&r);
    assert_prefix(c, "1\n2\n3\n");
    bb_assert_contains(c, "\n[... Observation truncated due to length ...]\n");
    assert_string_equal(c + strlen(c) - 7, "\n100000");
    assert_int_equal(strlen(c),
                     30000 + strlen("\n[... Observation truncated due to length ...]\n"));
    bb_reply_free(&r);
}

static void test_background_pid(void **state)
{
    (void)state;
    struct bb_reply r = run("sleep 0.1 &");
    assert_int_equal(exit_code(&r), 0);
    assert_true(json_integer_value(json_object_get(meta(&r), "pid")) > 0);
    bb_reply_free(&r);
}

static void test_secrets_not_inherited(void **state)
{
    (void)state;
    struct bb_reply r = run("echo \"[$TEST_API_KEY]\" \"$TERM\" \"$PAGER\"");
    assert_string_equal(content(&r), "[] dumb cat");
    bb_reply_free(&r);
}

static void test_hard_timeout_then_ctrl_c(void **state)
{
    (void)state;
    double t0 = bb_now();
    struct bb_reply r = run_full("echo started; sleep 5", false, 1);
    double took = bb_now() - t0;
    assert_true(took >= 0.9 && took < 3);
    assert_int_equal(exit_code(&r), -1);
    assert_string_equal(content(&r), "started");
    assert_prefix(meta_str(&r, "suffix"), "\n[The command timed out after 1.0 seconds. ");
    bb_assert_contains(meta_str(&r, "suffix"), "send keys (\"C-c\", \"C-z\", \"C-d\")");
    assert_true(json_is_null(json_object_get(meta(&r), "working_dir")));
    assert_true(json_is_false(json_object_get(r.json, "success")));
    bb_reply_free(&r);

    /* A new command while it runs is refused. */
    r = run("echo new");
    assert_int_equal(exit_code(&r), -1);
    assert_string_equal(meta_str(&r, "prefix"), "[Below is the output of the previous command.]\n");
    assert_prefix(meta_str(&r, "suffix"), "\n[Your command \"echo new\" is NOT executed. ");
    bb_reply_free(&r);

    r = run_full("C-c", true, 5);
    assert_int_equal(exit_code(&r), 130);
    assert_string_equal(meta_str(&r, "suffix"),
                        "\n[The command completed with exit code 130. CTRL+C was sent.]");
    bb_reply_free(&r);

    r = run("echo after");
    assert_string_equal(content(&r), "after");
    assert_int_equal(exit_code(&r), 0);
    bb_reply_free(&r);
}

static void test_soft_timeout_and_continue(void **state)
{
    (void)state;
    /* Non-blocking, no output for 1 s (the executor runs with --no-change-timeout 1). */
    char *body = bb_run_body("echo begin; sleep 1.6; echo done", false, 30, false);
    struct bb_reply r = bb_http(&ex, "POST", "/execute_action", body);
    free(body);
    assert_int_equal(exit_code(&r), -1);
    assert_string_equal(content(&r), "begin");
    assert_prefix(meta_str(&r, "suffix"), "\n[The command has no new output after 1 seconds. ");
    bb_reply_free(&r);

    body = bb_run_body("", false, 30, false);
    r = bb_http(&ex, "POST", "/execute_action", body);
    free(body);
    assert_string_equal(content(&r), "done");
    assert_int_equal(exit_code(&r), 0);
    assert_string_equal(meta_str(&r, "prefix"), "");
    bb_reply_free(&r);
}

static void test_input_to_running_program(void **state)
{
    (void)state;
    struct bb_reply r = run_full("read -r line; echo \"got:$line\"", false, 0.5);
    assert_int_equal(exit_code(&r), -1);
    bb_reply_free(&r);
    r = run_full("hello", true, 5);
    assert_string_equal(content(&r), "got:hello");
    assert_int_equal(exit_code(&r), 0);
    bb_reply_free(&r);
}

static void test_keys_at_the_prompt(void **state)
{
    (void)state;
    /* Not input: a key for the idle shell. ^C gives a fresh prompt; ^Z must not hang. */
    struct bb_reply r = run_full("C-c", false, 5);
    assert_int_equal(exit_code(&r), 130);
    assert_string_equal(meta_str(&r, "suffix"),
                        "\n[The command completed with exit code 130. CTRL+C was sent.]");
    bb_reply_free(&r);
    r = run_full("C-z", false, 5);
    assert_true(exit_code(&r) >= 0);
    bb_assert_contains(meta_str(&r, "suffix"), "CTRL+Z was sent.");
    bb_reply_free(&r);
    r = run("echo fine");
    assert_string_equal(content(&r), "fine");
    bb_reply_free(&r);
}

static void test_output_ending_like_a_marker(void **state)
{
    (void)state;
    /* Output that ends in "_" or a partial marker tag is not held back at a timeout. */
    struct bb_reply r = run_full("printf 'loading__'; sleep 2", false, 0.5);
    assert_int_equal(exit_code(&r), -1);
    assert_string_equal(content(&r), "loading__");
    bb_reply_free(&r);
    r = run_full("C-c", true, 5);
    bb_reply_free(&r);
}

static void test_nothing_running(void **state)
{
    (void)state;
    struct bb_reply r = run_full("", false, 5);
    assert_string_equal(content(&r), "ERROR: No previous running command to retrieve logs from.");
    assert_int_equal(exit_code(&r), -1);
    bb_reply_free(&r);
    r = run_full("hello", true, 5);
    assert_string_equal(content(&r), "ERROR: No previous running command to interact with.");
    bb_reply_free(&r);
}

static void test_shell_exit_restarts(void **state)
{
    (void)state;
    struct bb_reply r = run("exit 3");
    assert_int_equal(exit_code(&r), 3);
    bb_assert_contains(meta_str(&r, "suffix"), "The shell exited with code 3");
    bb_reply_free(&r);
    r = run("echo alive; pwd");
    assert_int_equal(exit_code(&r), 0);
    char want[200];
    snprintf(want, sizeof want, "alive\n%s", ex.work);
    assert_string_equal(content(&r), want);
    bb_reply_free(&r);
}

static void expect_error(const char *method, const char *path, const char *body, long status,
                         const char *detail_part)
{
    struct bb_reply r = bb_http(&ex, method, path, body);
    assert_int_equal(r.status, status);
    assert_non_null(r.json);
    bb_assert_contains(json_string_value(json_object_get(r.json, "detail")), detail_part);
    bb_reply_free(&r);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("POST", "/execute_action", "{not json", 400, "Invalid JSON");
    expect_error("POST", "/execute_action", "", 400, "Invalid JSON");
    expect_error("POST", "/execute_action", "[]", 400, "expected a JSON object");
    expect_error("POST", "/execute_action", "{}", 400, "Missing field: action");
    expect_error("POST", "/execute_action", "{\"action\": 1}", 400, "Invalid field: action");
    expect_error("POST", "/execute_action", "{\"action\": {\"args\": {}}}", 400,
                 "Missing field: action.action");
    expect_error("POST", "/execute_action", "{\"action\": {\"action\": \"run\", \"args\": {}}}",
                 400, "Missing field: action.args.command");
    expect_error("POST", "/execute_action",
                 "{\"action\": {\"action\": \"run\", \"args\": {\"command\": 5}}}", 400,
                 "Invalid field: action.args.command");
    expect_error("POST", "/execute_action",
                 "{\"action\": {\"action\": \"run\", \"args\": {\"command\": \"ls\", \"is_input\": "
                 "\"yes\"}}}",
                 400, "Invalid field: action.args.is_input");
    expect_error(
        "POST", "/execute_action",
        "{\"action\": {\"action\": \"run\", \"args\": {\"command\": \"ls\"}, \"timeout\": \"x\"}}",
        400, "Invalid field: action.timeout");
    expect_error("POST", "/execute_action",
                 "{\"action\": {\"action\": \"frobnicate\", \"args\": {}}}", 400,
                 "Unsupported action type: frobnicate");
    expect_error("GET", "/nope", NULL, 404, "Not Found");
    expect_error("GET", "/execute_action", NULL, 405, "Method Not Allowed");
    expect_error("POST", "/alive", "{}", 405, "Method Not Allowed");
}

static size_t zeros(char *buf, size_t size, size_t nmemb, void *ctx)
{
    size_t *left = ctx, n = size * nmemb;
    if (n > *left)
        n = *left;
    memset(buf, ' ', n);
    *left -= n;
    return n;
}

static void test_body_too_large(void **state)
{
    (void)state;
    /* The 413 comes from the Content-Length alone: the 70 MB are never sent. */
    size_t left = 70u * 1024 * 1024;
    struct bb_reply r = {0};
    CURL *h = curl_easy_init();
    bb_setup(&ex, h, "POST", "/execute_action", NULL, &r);
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_READFUNCTION, zeros);
    curl_easy_setopt(h, CURLOPT_READDATA, &left);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)left);
    CURLcode rc = curl_easy_perform(h);
    assert_int_equal(rc, CURLE_OK);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
    assert_int_equal(r.status, 413);
    assert_true(left > 60u * 1024 * 1024);
    curl_easy_cleanup(h);
    bb_reply_free(&r);
}

static void test_concurrent_requests_in_order(void **state)
{
    (void)state;
    CURLM *multi = curl_multi_init();
    CURL *a = curl_easy_init(), *b = curl_easy_init();
    struct bb_reply ra = {0}, rb = {0};
    char *body_a = bb_run_body("sleep 0.6; echo a", false, 10, true);
    char *body_b = bb_run_body("echo b", false, 10, true);
    bb_setup(&ex, a, "POST", "/execute_action", body_a, &ra);
    bb_setup(&ex, b, "POST", "/execute_action", body_b, &rb);
    curl_multi_add_handle(multi, a);
    int running = 1;
    /* Let A reach the executor first (all of its body sent, then a moment for the executor
     * to read it), then send B while A runs. */
    double t0 = bb_now(), sent_at = 0;
    while (bb_now() - t0 < 5 && (!sent_at || bb_now() - sent_at < 0.1)) {
        curl_off_t up = 0;
        curl_multi_perform(multi, &running);
        curl_easy_getinfo(a, CURLINFO_SIZE_UPLOAD_T, &up);
        if (!sent_at && up >= (curl_off_t)strlen(body_a))
            sent_at = bb_now();
        curl_multi_poll(multi, NULL, 0, 10, NULL);
    }
    assert_true(sent_at > 0);
    curl_multi_add_handle(multi, b);
    CURL *order[2] = {NULL, NULL};
    int finished = 0;
    while (finished < 2 && bb_now() - t0 < 10) {
        curl_multi_perform(multi, &running);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(multi, &left)))
            if (msg->msg == CURLMSG_DONE) {
                assert_int_equal(msg->data.result, CURLE_OK);
                order[finished++] = msg->easy_handle;
            }
        if (finished < 2)
            curl_multi_poll(multi, NULL, 0, 100, NULL);
    }
    assert_int_equal(finished, 2);
    assert_ptr_equal(order[0], a);
    assert_ptr_equal(order[1], b);
    ra.json = json_loads(ra.body, 0, NULL);
    rb.json = json_loads(rb.body, 0, NULL);
    assert_string_equal(content(&ra), "a");
    assert_string_equal(content(&rb), "b");
    curl_multi_remove_handle(multi, a);
    curl_multi_remove_handle(multi, b);
    curl_easy_cleanup(a);
    curl_easy_cleanup(b);
    curl_multi_cleanup(multi);
    free(body_a);
    free(body_b);
    bb_reply_free(&ra);
    bb_reply_free(&rb);
}

static void test_slow_client_does_not_block(void **state)
{
    (void)state;
    /* A client that sends half a request and stalls. */
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", ex.sock);
    assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    const char *partial =
        "POST /execute_action HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"act";
    assert_int_equal(write(fd, partial, strlen(partial)), (ssize_t)strlen(partial));
    struct bb_reply r = run("echo still served");
    assert_string_equal(content(&r), "still served");
    bb_reply_free(&r);
    close(fd);
}

static void test_is_input_long_running_python_like(void **state)
{
    (void)state;
    /* cat echoes each input line; C-d ends it. */
    struct bb_reply r = run_full("cat", false, 0.3);
    assert_int_equal(exit_code(&r), -1);
    bb_reply_free(&r);
    r = run_full("line one", true, 0.3);
    assert_string_equal(content(&r), "line one");
    assert_string_equal(meta_str(&r, "prefix"), "[Below is the output of the previous command.]\n");
    bb_reply_free(&r);
    r = run_full("C-d", true, 5);
    assert_int_equal(exit_code(&r), 0);
    assert_string_equal(meta_str(&r, "suffix"),
                        "\n[The command completed with exit code 0. CTRL+D was sent.]");
    bb_reply_free(&r);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PATH-TO-paddock-executor\n", argv[0]);
        return 2;
    }
    executor_path = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alive_and_server_info),
        cmocka_unit_test(test_echo),
        cmocka_unit_test(test_cd_persists),
        cmocka_unit_test(test_export_persists),
        cmocka_unit_test(test_exit_codes),
        cmocka_unit_test(test_multiline_output),
        cmocka_unit_test(test_multiline_command),
        cmocka_unit_test(test_long_command),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_big_output_truncated),
        cmocka_unit_test(test_background_pid),
        cmocka_unit_test(test_secrets_not_inherited),
        cmocka_unit_test(test_hard_timeout_then_ctrl_c),
        cmocka_unit_test(test_soft_timeout_and_continue),
        cmocka_unit_test(test_input_to_running_program),
        cmocka_unit_test(test_is_input_long_running_python_like),
        cmocka_unit_test(test_keys_at_the_prompt),
        cmocka_unit_test(test_output_ending_like_a_marker),
        cmocka_unit_test(test_nothing_running),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_body_too_large),
        cmocka_unit_test(test_concurrent_requests_in_order),
        cmocka_unit_test(test_slow_client_does_not_block),
        cmocka_unit_test(test_shell_exit_restarts),
    };
    return cmocka_run_group_tests(tests, start_executor, stop_executor);
}
