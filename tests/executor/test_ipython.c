/* Black-box tests of run_ipython, plugins and browse (OpenHands' tests/runtime/test_ipython.py
 * and more): the executor given as argv[1], started with --plugins, driven over HTTP. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include "bb.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define NO_OUTPUT "[Code executed successfully with no output]"

static struct bb ex;

static char interpreter[4096]; /* sys.executable of python3 from our PATH */

/* The first line a shell command prints, into out; -1 when it fails or prints nothing. */
static int command_line(const char *cmd, char *out, size_t outlen)
{
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    bool got = fgets(out, (int)outlen, p) != NULL;
    int status = pclose(p);
    if (!got || status != 0)
        return -1;
    out[strcspn(out, "\n")] = '\0';
    return out[0] ? 0 : -1;
}

/* {"action": "run_ipython", "args": {"code": code, ...}, "timeout": timeout}: include_extra
 * -1 leaves it out, timeout < 0 too, init NULL too. */
static struct bb_reply cell_full(const char *code, int include_extra, double timeout,
                                 const char *init)
{
    json_t *args = json_pack("{s:s, s:s}", "code", code, "thought", "");
    if (include_extra >= 0)
        json_object_set_new(args, "include_extra", json_boolean(include_extra));
    if (init)
        json_object_set_new(args, "kernel_init_code", json_string(init));
    json_t *action = json_pack("{s:s, s:o}", "action", "run_ipython", "args", args);
    if (timeout >= 0)
        json_object_set_new(action, "timeout", json_real(timeout));
    return bb_execute(&ex, action);
}

static struct bb_reply cell(const char *code)
{
    return cell_full(code, -1, 30, NULL);
}

/* The content a cell should have: its output and the two info lines. */
static char *with_extra(const char *output, const char *cwd)
{
    char *s = NULL;
    if (asprintf(&s,
                 "%s\n[Jupyter current working directory: %s]\n[Jupyter Python interpreter: %s]",
                 output, cwd ? cwd : ex.work, interpreter) < 0)
        abort();
    return s;
}

static void assert_ipython_obs(const struct bb_reply *r, const char *code)
{
    assert_string_equal(bb_observation(r), "run_ipython");
    assert_string_equal(bb_message(r), "Code executed in IPython cell.");
    assert_true(json_is_true(json_object_get(r->json, "success")));
    json_t *extras = json_object_get(r->json, "extras");
    assert_string_equal(json_string_value(json_object_get(extras, "code")), code);
    assert_true(json_is_null(json_object_get(extras, "image_urls")));
}

/* Runs code and checks the whole content: output, then the info lines for cwd. */
static void expect_cell_in(const char *code, const char *output, const char *cwd)
{
    struct bb_reply r = cell(code);
    assert_ipython_obs(&r, code);
    char *want = with_extra(output, cwd);
    assert_string_equal(bb_content(&r), want);
    free(want);
    bb_reply_free(&r);
}

static void expect_cell(const char *code, const char *output)
{
    expect_cell_in(code, output, NULL);
}

/* The output part of a cell's content (without the info lines). */
static struct bb_reply cell_bare(const char *code)
{
    return cell_full(code, 0, 30, NULL);
}

static void expect_error_obs(struct bb_reply *r, const char *text)
{
    assert_string_equal(bb_observation(r), "error");
    assert_string_equal(bb_content(r), text);
    assert_string_equal(bb_message(r), text);
    bb_reply_free(r);
}

/* ---- one executor with --plugins ipython gitinfo ---------------------------------------- */

static int start_ipython(void **state)
{
    static const char *const args[] = {"--plugins", "ipython", "gitinfo", NULL};
    (void)state;
    struct bb_options o = {.args = args};
    return bb_start(&ex, &o);
}

static int stop_any(void **state)
{
    (void)state;
    return bb_stop(&ex);
}

static void test_print(void **state)
{
    (void)state;
    expect_cell("print(1)", "1");
    /* OpenHands' own check: the output is right-stripped before the info lines. */
    expect_cell("print('Hello, `World`!\\n')", "Hello, `World`!");
    expect_cell("print('a')\nprint('b')", "a\nb");
    expect_cell("import sys\nprint('out')\nprint('err', file=sys.stderr)", "out\nerr");
}

static void test_last_expression_value(void **state)
{
    (void)state;
    expect_cell("6 * 7", "42");
    expect_cell("'a' + 'b'", "'ab'");
    expect_cell("print('first')\n[1, 2]", "first\n[1, 2]");
    /* Only the last expression shows; a trailing ; or None shows nothing. */
    expect_cell("1\n2", "2");
    expect_cell("3;", NO_OUTPUT);
    expect_cell("None", NO_OUTPUT);
    expect_cell("for i in range(2):\n    i", NO_OUTPUT);
}

static void test_state_persists(void **state)
{
    (void)state;
    expect_cell("kept = 41\ndef inc(v):\n    return v + 1", NO_OUTPUT);
    expect_cell("inc(kept)", "42");
    expect_cell("import json", NO_OUTPUT);
    expect_cell("json.dumps({'k': kept})", "'{\"k\": 41}'");
    /* Cells run in __main__: classes defined in a cell pickle. */
    expect_cell("import pickle\nclass Thing:\n    pass\ntype(pickle.loads(pickle.dumps(Thing())))",
                "<class '__main__.Thing'>");
}

static void test_traceback(void **state)
{
    (void)state;
    struct bb_reply r = cell_bare("def boom():\n    return 1 / 0\nboom()");
    const char *c = bb_content(&r);
    bb_assert_prefix(c, "Traceback (most recent call last):\n");
    bb_assert_contains(c, "in boom\n    return 1 / 0\n");
    assert_string_equal(c + strlen(c) - strlen("ZeroDivisionError: division by zero"),
                        "ZeroDivisionError: division by zero");
    /* None of the runner's own frames. */
    if (strstr(c, "paddock"))
        fail_msg("runner frames in the traceback: %s", c);
    bb_reply_free(&r);

    r = cell_bare("import pymsgbox");
    bb_assert_contains(bb_content(&r), "ModuleNotFoundError: No module named 'pymsgbox'");
    bb_reply_free(&r);

    r = cell_bare("def broken(:");
    bb_assert_contains(bb_content(&r), "SyntaxError");
    bb_reply_free(&r);

    /* The runner lives on after errors. */
    expect_cell("print('still here')", "still here");
}

static void test_no_output(void **state)
{
    (void)state;
    expect_cell("with open('test.txt', 'w') as f: f.write('Hello, world!')", NO_OUTPUT);
    struct bb_reply r = bb_run(&ex, "cat test.txt && rm test.txt");
    assert_string_equal(bb_content(&r), "Hello, world!");
    bb_reply_free(&r);
}

static void test_cwd_follows_bash(void **state)
{
    (void)state;
    char sub[200], cmd[256];
    snprintf(sub, sizeof sub, "%s/sub", ex.work);
    expect_cell("import os\nprint(os.getcwd())", ex.work);
    struct bb_reply r = bb_run(&ex, "mkdir -p sub && cd sub");
    assert_int_equal(bb_exit_code(&r), 0);
    bb_reply_free(&r);
    expect_cell_in("print(os.getcwd())", sub, sub);
    expect_cell_in("open('here.txt', 'w').close()", NO_OUTPUT, sub);
    bb_expect_run(&ex, "ls", BB_ANY_EXIT, "here.txt");

    /* Python may go elsewhere; it follows bash again only when bash moves. */
    expect_cell_in("os.chdir('/')\nprint(os.getcwd())", "/", sub);
    expect_cell_in("print(os.getcwd())", "/", sub);
    bb_expect_run(&ex, "cd /tmp", BB_ANY_EXIT, NULL);
    expect_cell_in("print(os.getcwd())", "/tmp", "/tmp");

    snprintf(cmd, sizeof cmd, "cd %s && rm -r sub", ex.work);
    bb_expect_run(&ex, cmd, 0, NULL);
    expect_cell("print(os.getcwd())", ex.work);
}

static void test_include_extra_false(void **state)
{
    (void)state;
    struct bb_reply r = cell_bare("print(1)");
    assert_ipython_obs(&r, "print(1)");
    assert_string_equal(bb_content(&r), "1");
    bb_reply_free(&r);
    r = cell_bare("quiet = 1");
    assert_string_equal(bb_content(&r), NO_OUTPUT);
    bb_reply_free(&r);
    /* include_extra true is the default. */
    r = cell_full("print(2)", 1, 30, NULL);
    char *want = with_extra("2", NULL);
    assert_string_equal(bb_content(&r), want);
    free(want);
    bb_reply_free(&r);
}

static void test_timeout_interrupts(void **state)
{
    (void)state;
    expect_cell("survivor = 7", NO_OUTPUT);
    double t0 = bb_now();
    struct bb_reply r = cell_full("import time\nprint('partial')\ntime.sleep(20)", -1, 1, NULL);
    assert_true(bb_now() - t0 >= 0.9); /* not early; the text says it timed out */
    char *want = with_extra("[Execution timed out (1.0 seconds).]", NULL);
    assert_string_equal(bb_content(&r), want);
    free(want);
    assert_ipython_obs(&r, "import time\nprint('partial')\ntime.sleep(20)");
    bb_reply_free(&r);

    /* The runner was interrupted, not killed: state is intact and it answers at once. */
    expect_cell("print(survivor)", "7");

    /* An integer timeout prints as an integer, as Python would. */
    json_t *action = json_pack("{s:s, s:{s:s, s:b}, s:i}", "action", "run_ipython", "args", "code",
                               "while True: pass", "include_extra", 0, "timeout", 1);
    r = bb_execute(&ex, action);
    assert_string_equal(bb_content(&r), "[Execution timed out (1 seconds).]");
    bb_reply_free(&r);
    expect_cell("print(survivor + 1)", "8");
}

static void test_timeout_kills_a_stubborn_cell(void **state)
{
    (void)state;
    expect_cell("doomed = 1", NO_OUTPUT);
    /* It swallows the interrupt: after the grace period the runner is replaced. */
    struct bb_reply r = cell_full("import time\nwhile True:\n    try:\n        time.sleep(30)\n"
                                  "    except KeyboardInterrupt:\n        pass",
                                  0, 0.5, NULL);
    assert_string_equal(bb_content(&r), "[Execution timed out (0.5 seconds).]");
    bb_reply_free(&r);
    r = cell_bare("print('fresh')\nprint('doomed' in globals())");
    assert_string_equal(bb_content(&r), "fresh\nFalse");
    bb_reply_free(&r);
}

static void test_pip_magic(void **state)
{
    (void)state;
    char version[256];
    if (command_line("python3 -m pip --version 2>/dev/null", version, sizeof version) < 0)
        skip();
    struct bb_reply r = cell_bare("%pip --version");
    bb_assert_prefix(bb_content(&r), version); /* the line pip itself prints */
    bb_assert_contains(bb_content(&r),
                       "\nNote: you may need to restart the kernel to use updated packages.");
    bb_reply_free(&r);
    /* Magics and shell escapes mix with Python in one cell. */
    r = cell_bare("answer = 42\n!echo shell says hi\nprint(answer)");
    assert_string_equal(bb_content(&r), "shell says hi\n42");
    bb_reply_free(&r);
    r = cell_bare("%nosuchmagic");
    assert_string_equal(bb_content(&r),
                        "UsageError: Line magic function `%nosuchmagic` not found.");
    bb_reply_free(&r);
}

static void test_ansi_stripped(void **state)
{
    (void)state;
    expect_cell("print('\\x1b[1;31mred\\x1b[0m plain \\x1b[38;5;32mcolour\\x1b[0m')",
                "red plain colour");
}

static void test_kernel_init_code(void **state)
{
    (void)state;
    /* It runs once per runner, before the first cell that brings it; its output is dropped. */
    struct bb_reply r = cell_full("print(from_init)", 0, 30, "from_init = 5\nprint('init ran')");
    assert_string_equal(bb_content(&r), "5");
    bb_reply_free(&r);
    r = cell_full("print(from_init)", 0, 30, "from_init = 99");
    assert_string_equal(bb_content(&r), "5");
    bb_reply_free(&r);
}

static void test_runner_exit_restarts(void **state)
{
    (void)state;
    struct bb_reply r = cell_bare("lost = 1\nimport os\nprint('bye', flush=True)\nos._exit(3)");
    assert_string_equal(bb_content(&r),
                        "bye\n[The Python process exited with code 3: the next cell starts a new "
                        "one, without the variables and imports of this one.]");
    bb_reply_free(&r);
    r = cell_bare("print('lost' in globals())");
    assert_string_equal(bb_content(&r), "False");
    bb_reply_free(&r);
    /* It follows bash's directory again from the start. */
    expect_cell("import os\nprint(os.getcwd())", ex.work);
}

static void test_big_output_truncated(void **state)
{
    (void)state;
    struct bb_reply r = cell_bare("for i in range(1, 100001):\n    print(i)");
    const char *c = bb_content(&r);
    bb_assert_prefix(c, "1\n2\n3\n");
    bb_assert_contains(c, "\n[... Observation truncated due to length ...]\n");
    assert_string_equal(c + strlen(c) - 7, "\n100000");
    bb_reply_free(&r);
}

/* The frames of a ?paddock_stream=1 reply so far: the `o` payloads joined into out (malloc'd),
 * and the `r` frame's status and payload once it is complete (*result malloc'd, else NULL). */
static void stream_parse(const struct bb_reply *st, char **out, long *status, char **result,
                         size_t *result_len)
{
    size_t at = 0, out_len = 0;
    *out = calloc(1, st->len + 1);
    assert_non_null(*out);
    *result = NULL;
    while (at < st->len) {
        const char *nl = memchr(st->body + at, '\n', st->len - at);
        if (!nl)
            return;
        unsigned long long n = 0;
        bool is_out = st->body[at] == 'o';
        if (is_out)
            assert_int_equal(sscanf(st->body + at, "o %llu", &n), 1);
        else
            assert_int_equal(sscanf(st->body + at, "r %ld %llu", status, &n), 2);
        size_t head = (size_t)(nl + 1 - st->body);
        if (st->len - head < n)
            return;
        if (is_out) {
            memcpy(*out + out_len, nl + 1, n);
            out_len += n;
        } else {
            assert_null(*result); /* one result, last */
            *result = malloc(n + 1);
            assert_non_null(*result);
            memcpy(*result, nl + 1, n);
            (*result)[n] = '\0';
            *result_len = n;
        }
        at = head + n;
    }
}

/* ?paddock_stream=1: a cell's stdout and stderr come as `o` frames while it runs (raw, colour
 * codes and all), not its init code's; the `r` frame is the plain reply byte for byte. The
 * cell waits for a file the test makes only after it saw the first lines. */
static void test_cell_streams(void **state)
{
    (void)state;
    /* A fresh runner, so that the init code below runs before this cell. */
    struct bb_reply r = cell_bare("import os\nos._exit(0)");
    bb_reply_free(&r);
    const char *code = "import os, sys, time\n"
                       "print('first-out')\n"
                       "print('first-err', file=sys.stderr)\n"
                       "print('\\x1b[31mred\\x1b[0m')\n"
                       "while not os.path.exists('go'):\n"
                       "    time.sleep(0.05)\n"
                       "print('second')";
    json_t *action = json_pack("{s:s, s:{s:s, s:s}, s:i}", "action", "run_ipython", "args", "code",
                               code, "kernel_init_code", "print('init-ran')", "timeout", 60);
    json_t *req = json_pack("{s:o}", "action", action);
    char *body = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    char go[256];
    snprintf(go, sizeof go, "%s/go", ex.work);
    unlink(go);

    CURLM *multi = curl_multi_init();
    CURL *h = curl_easy_init();
    struct bb_reply st = {0};
    bb_setup(&ex, h, "POST", "/execute_action?paddock_stream=1", body, &st);
    curl_multi_add_handle(multi, h);
    char *out = NULL, *result = NULL;
    size_t result_len = 0;
    long status = 0;
    bool made_go = false, done = false;
    double deadline = bb_now() + 30;
    while (!done && bb_now() < deadline) {
        int running = 0, left = 0;
        curl_multi_perform(multi, &running);
        CURLMsg *msg;
        while ((msg = curl_multi_info_read(multi, &left)))
            if (msg->msg == CURLMSG_DONE) {
                assert_int_equal(msg->data.result, CURLE_OK);
                done = true;
            }
        free(out);
        free(result);
        stream_parse(&st, &out, &status, &result, &result_len);
        if (!made_go && strstr(out, "first-err\n")) {
            /* Seen while the cell still waits: no result yet. */
            assert_null(result);
            bb_write_file(go, "", 0);
            made_go = true;
        }
        if (!done)
            curl_multi_poll(multi, NULL, 0, 100, NULL);
    }
    assert_true(made_go);
    assert_true(done);
    long http = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &http);
    assert_int_equal(http, 200);
    assert_string_equal(out, "first-out\nfirst-err\n\x1b[31mred\x1b[0m\nsecond\n");
    assert_non_null(result);
    assert_int_equal(status, 200);

    /* The same cell again, plainly (the file is there now): the same bytes. */
    struct bb_reply plain = bb_http(&ex, "POST", "/execute_action", body);
    assert_int_equal(plain.status, 200);
    assert_int_equal(result_len, plain.len);
    assert_memory_equal(result, plain.body, plain.len);
    bb_assert_contains(bb_content(&plain), "first-out\nfirst-err\nred\nsecond\n");

    bb_reply_free(&plain);
    curl_multi_remove_handle(multi, h);
    curl_easy_cleanup(h);
    curl_multi_cleanup(multi);
    bb_reply_free(&st);
    free(out);
    free(result);
    free(body);
    unlink(go);
}

static void test_bad_requests(void **state)
{
    (void)state;
    struct {
        const char *body, *detail;
    } cases[] = {
        {"{\"action\": {\"action\": \"run_ipython\", \"args\": {}}}",
         "Missing field: action.args.code"},
        {"{\"action\": {\"action\": \"run_ipython\", \"args\": {\"code\": 1}}}",
         "Invalid field: action.args.code (expected a string)"},
        {"{\"action\": {\"action\": \"run_ipython\", \"args\": {\"code\": \"1\", "
         "\"include_extra\": \"yes\"}}}",
         "Invalid field: action.args.include_extra (expected a boolean)"},
        {"{\"action\": {\"action\": \"run_ipython\", \"args\": {\"code\": \"1\"}, "
         "\"timeout\": \"x\"}}",
         "Invalid field: action.timeout (expected a number)"},
        {"{\"action\": {\"action\": \"browse\", \"args\": {}}}", "Missing field: action.args.url"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct bb_reply r = bb_http(&ex, "POST", "/execute_action", cases[i].body);
        assert_int_equal(r.status, 400);
        assert_string_equal(json_string_value(json_object_get(r.json, "detail")), cases[i].detail);
        bb_reply_free(&r);
    }
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void expect_git(const char *branch, const char *commit)
{
    struct bb_reply r = bb_run(&ex, "true");
    json_t *md = bb_meta(&r);
    json_t *b = json_object_get(md, "git_branch"), *c = json_object_get(md, "git_commit");
    assert_non_null(b);
    assert_non_null(c);
    if (branch)
        assert_string_equal(json_string_value(b), branch);
    else
        assert_true(json_is_null(b));
    if (commit)
        assert_string_equal(json_string_value(c), commit);
    else
        assert_true(json_is_null(c));
    bb_reply_free(&r);
}

static void test_gitinfo(void **state)
{
    (void)state;
    static const char sha1[] = "0123456789abcdef0123456789abcdef01234567";
    static const char sha2[] = "89abcdef0123456789abcdef0123456789abcdef";
    char git[200], cmd[512];
    snprintf(git, sizeof git, "%s/.git", ex.work);
    snprintf(cmd, sizeof cmd, "mkdir -p %s/refs/heads/feature %s/sub", git, ex.work);
    assert_int_equal(system(cmd), 0);
    expect_git(NULL, NULL); /* no HEAD yet: an empty .git is a repository of nothing */

    write_file(git, "HEAD", "ref: refs/heads/feature/x\n");
    expect_git("feature/x", NULL); /* unborn branch */
    write_file(git, "refs/heads/feature/x", sha1);
    expect_git("feature/x", sha1);

    /* Packed refs, as after a clone or gc. */
    snprintf(cmd, sizeof cmd, "rm %s/refs/heads/feature/x", git);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd,
             "# pack-refs with: peeled fully-peeled sorted\n%s refs/heads/feature/w\n%s "
             "refs/heads/feature/x\n^%s\n",
             sha1, sha2, sha1);
    write_file(git, "packed-refs", cmd);
    expect_git("feature/x", sha2);

    /* From a subdirectory, and detached. */
    struct bb_reply r = bb_run(&ex, "cd sub");
    bb_reply_free(&r);
    write_file(git, "HEAD", sha1);
    expect_git(NULL, sha1);

    bb_expect_run(&ex, "cd /", BB_ANY_EXIT, NULL);
    expect_git(NULL, NULL);
    snprintf(cmd, sizeof cmd, "cd %s && rm -rf .git sub", ex.work);
    bb_expect_run(&ex, cmd, 0, NULL);
}

static void test_browse_without_browser(void **state)
{
    (void)state;
    char found[512];
    if (command_line("command -v chromium chromium-browser google-chrome google-chrome-stable "
                     "chrome 2>/dev/null",
                     found, sizeof found) == 0)
        skip(); /* covered with a PATH of our own in test_no_python_no_browser */
    struct bb_reply r = bb_execute(
        &ex, json_pack("{s:s, s:{s:s}}", "action", "browse", "args", "url", "https://example.com"));
    expect_error_obs(&r, "Browser functionality is not supported or disabled.");
    r = bb_execute(&ex, json_pack("{s:s, s:{s:s}}", "action", "browse_interactive", "args",
                                  "browser_actions", "goto(\"https://example.com\")"));
    expect_error_obs(&r, "Browser functionality is not supported or disabled.");
}

/* ---- browse with a stand-in browser ----------------------------------------------------- */

/* `chromium --headless ... --dump-dom URL` as a shell script: a fixed page naming the URL,
 * its arguments and its uid; URLs with "slow" hang, with "empty" print nothing. */
static const char stub_browser[] =
    "#!/bin/sh\n"
    "for last; do :; done\n"
    "case \"$last\" in *slow*) exec sleep 30 ;; *empty*) exit 1 ;; esac\n"
    "printf '<html><head><title>T</title><style>p{}</style><script>var x = \"<p>no</p>\";"
    "</script></head>\\n<body><h1>Hello &amp; welcome</h1><p>A   para with <b>bold</b>\\n"
    " text &#233;&#x2014;</p><ul><li>one</li><li>two</li></ul><!-- hidden -->"
    "<div>url=%s args=%s uid=%s</div></body></html>' \"$last\" \"$*\" \"$(id -u)\"\n";

static char stub_dir[64];
static char stub_path[4200];

/* A directory with the stand-in browser (readable by anyone), first in a PATH. */
static int make_stub_browser(void)
{
    char file[128];
    snprintf(stub_dir, sizeof stub_dir, "/tmp/paddock-browser.XXXXXX");
    if (!mkdtemp(stub_dir) || chmod(stub_dir, 0755) < 0)
        return -1;
    snprintf(file, sizeof file, "%s/chromium", stub_dir);
    FILE *f = fopen(file, "w");
    if (!f)
        return -1;
    fputs(stub_browser, f);
    fclose(f);
    if (chmod(file, 0755) < 0)
        return -1;
    snprintf(stub_path, sizeof stub_path, "%s:%s", stub_dir, getenv("PATH"));
    return 0;
}

static void remove_stub_browser(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", stub_dir);
    if (stub_dir[0] && system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", stub_dir);
    stub_dir[0] = '\0';
}

static int start_with_browser(void **state)
{
    (void)state;
    if (make_stub_browser() < 0)
        return -1;
    struct bb_options o = {.path_env = stub_path};
    return bb_start(&ex, &o);
}

static int stop_with_browser(void **state)
{
    int rc = stop_any(state);
    remove_stub_browser();
    return rc;
}

static struct bb_reply browse(const char *url, double timeout)
{
    json_t *action =
        json_pack("{s:s, s:{s:s, s:s}}", "action", "browse", "args", "url", url, "thought", "");
    if (timeout > 0)
        json_object_set_new(action, "timeout", json_real(timeout));
    return bb_execute(&ex, action);
}

static void assert_browser_obs(const struct bb_reply *r, const char *url, const char *trigger,
                               bool error)
{
    json_t *x = json_object_get(r->json, "extras");
    char msg[300];
    snprintf(msg, sizeof msg, "Visited %s", url);
    assert_string_equal(bb_observation(r), "browse");
    assert_string_equal(bb_message(r), msg);
    assert_string_equal(json_string_value(json_object_get(x, "url")), url);
    assert_string_equal(json_string_value(json_object_get(x, "trigger_by_action")), trigger);
    assert_int_equal(json_is_true(json_object_get(x, "error")), error);
    assert_string_equal(json_string_value(json_array_get(json_object_get(x, "open_pages_urls"), 0)),
                        url);
    assert_string_equal(json_string_value(json_object_get(x, "screenshot")), "");
    assert_true(json_is_object(json_object_get(x, "dom_object")));
}

static void test_browse_with_browser(void **state)
{
    (void)state;
    char want[1024];
    struct bb_reply r = browse("https://example.com/a?b=1", -1);
    assert_browser_obs(&r, "https://example.com/a?b=1", "browse", false);
    snprintf(want, sizeof want,
             "Hello & welcome\n\nA para with bold text \xc3\xa9\xe2\x80\x94\n\none\ntwo\n\n"
             "url=https://example.com/a?b=1 args=--headless --no-sandbox --disable-gpu "
             "--disable-dev-shm-usage --dump-dom https://example.com/a?b=1 uid=%d",
             (int)geteuid());
    assert_string_equal(bb_content(&r), want);
    assert_string_equal(json_string_value(json_object_get(json_object_get(r.json, "extras"),
                                                          "last_browser_action")),
                        "goto(\"https://example.com/a?b=1\")");
    bb_reply_free(&r);

    /* A path is a file:// URL; browse_interactive takes its goto(). */
    r = bb_execute(&ex, json_pack("{s:s, s:{s:s}}", "action", "browse_interactive", "args",
                                  "browser_actions", "goto('/etc/hostname')"));
    assert_browser_obs(&r, "/etc/hostname", "browse_interactive", false);
    bb_assert_contains(bb_content(&r), "url=file:///etc/hostname ");
    bb_reply_free(&r);
    r = bb_execute(&ex, json_pack("{s:s, s:{s:s}}", "action", "browse_interactive", "args",
                                  "browser_actions", "click('12')"));
    expect_error_obs(&r, "ERROR: browse_interactive supports only goto(\"<url>\") here: there is "
                         "no live browser page to click, type into or scroll.");

    /* Failures are BrowserOutputObservations with error set. */
    r = browse("https://slow.example.com", 1);
    assert_browser_obs(&r, "https://slow.example.com", "browse", true);
    assert_string_equal(bb_content(&r),
                        "ERROR: The browser did not load https://slow.example.com within 1.0 "
                        "seconds.");
    bb_reply_free(&r);
    r = browse("https://empty.example.com", -1);
    assert_browser_obs(&r, "https://empty.example.com", "browse", true);
    assert_string_equal(bb_content(&r), "ERROR: The browser returned no page for "
                                        "https://empty.example.com.");
    bb_reply_free(&r);
    bb_expect_run(&ex, "echo fine", BB_ANY_EXIT, "fine");
}

/* ---- executors of their own ------------------------------------------------------------- */

static void test_unknown_plugin(void **state)
{
    (void)state;
    int status;
    /* No socket could come up at that path: the plugin check must fail first. */
    static const char *const a1[] = {"--socket",  "/nonexistent/paddock.sock",
                                     "--plugins", "ipython",
                                     "nosuch",    "--working-dir",
                                     "/tmp",      NULL};
    char *err = bb_executor_stderr(a1, &status);
    assert_int_equal(status, 2);
    assert_string_equal(err, "paddock-executor: unknown plugin 'nosuch' (known: ipython, jupyter, "
                             "agent_skills, gitinfo)\n");
    free(err);
    static const char *const a2[] = {"--socket", "/nonexistent/paddock.sock", "--plugins=vscode",
                                     NULL};
    err = bb_executor_stderr(a2, &status);
    assert_int_equal(status, 2);
    bb_assert_prefix(err, "paddock-executor: unknown plugin 'vscode' (known: ");
    free(err);
}

static int start_plain(void **state)
{
    (void)state;
    return bb_start(&ex, NULL);
}

static void test_without_plugin(void **state)
{
    (void)state;
    struct bb_reply r = cell("print(1)");
    expect_error_obs(&r, "ERROR: run_ipython is not available: the executor was started without "
                         "the ipython plugin (--plugins ipython).");
    /* No gitinfo either. */
    r = bb_run(&ex, "true");
    assert_null(json_object_get(bb_meta(&r), "git_branch"));
    bb_reply_free(&r);
}

static int start_without_python(void **state)
{
    static const char *const args[] = {"--plugins", "ipython", NULL};
    (void)state;
    /* Nothing in PATH: no python3, no browser (the shell is /bin/bash, found without PATH). */
    struct bb_options o = {.args = args, .path_env = "/nonexistent-paddock-bin"};
    return bb_start(&ex, &o);
}

static void test_no_python_no_browser(void **state)
{
    (void)state;
    struct bb_reply r = cell("print(1)");
    expect_error_obs(&r, "ERROR: run_ipython needs python3, and there is none in PATH. Install "
                         "Python in the image (e.g. apt-get install python3) or run Python "
                         "through the `run` action.");
    r = bb_execute(
        &ex, json_pack("{s:s, s:{s:s}}", "action", "browse", "args", "url", "https://example.com"));
    expect_error_obs(&r, "Browser functionality is not supported or disabled.");
    /* The shell is unaffected. */
    bb_expect_run(&ex, "echo ok", BB_ANY_EXIT, "ok");
}

static char broken_dir[64];

static int start_with_broken_python(void **state)
{
    static const char *const args[] = {"--plugins", "ipython", NULL};
    char file[128], path[4200];
    (void)state;
    snprintf(broken_dir, sizeof broken_dir, "/tmp/paddock-python.XXXXXX");
    if (!mkdtemp(broken_dir))
        return -1;
    snprintf(file, sizeof file, "%s/python3", broken_dir);
    FILE *f = fopen(file, "w");
    if (!f)
        return -1;
    fputs("#!/bin/sh\necho 'this python is broken' >&2\nexit 4\n", f);
    fclose(f);
    if (chmod(file, 0755) < 0)
        return -1;
    snprintf(path, sizeof path, "%s:%s", broken_dir, getenv("PATH"));
    struct bb_options o = {.args = args, .path_env = path};
    return bb_start(&ex, &o);
}

static int stop_broken_python(void **state)
{
    char cmd[128];
    int rc = stop_any(state);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", broken_dir);
    if (system(cmd) != 0)
        rc = -1;
    return rc;
}

static void test_broken_python(void **state)
{
    (void)state;
    char want[512];
    snprintf(want, sizeof want,
             "ERROR: The Python runner could not be started (%s/python3 exited with code 4):\n"
             "this python is broken",
             broken_dir);
    for (int i = 0; i < 2; i++) { /* and again: each cell tries anew */
        struct bb_reply r = cell("print(1)");
        expect_error_obs(&r, want);
    }
}

static char venv[64];

/* A venv at <tmp>/v made by the shell command setup (every %1$s is the temp dir), and an
 * executor with its bin first in PATH. When setup fails the test skips (venv is ""). */
static int start_in_venv(const char *setup, const char *const *args)
{
    char cmd[2048], path[256];
    snprintf(venv, sizeof venv, "/tmp/paddock-venv.XXXXXX");
    if (!mkdtemp(venv))
        return -1;
    snprintf(cmd, sizeof cmd, setup, venv);
    if (system(cmd) != 0) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", venv);
        venv[0] = '\0';
        return system(cmd) == 0 ? 0 : -1;
    }
    snprintf(path, sizeof path, "%s/v/bin:/usr/bin:/bin", venv);
    snprintf(interpreter, sizeof interpreter, "%s/v/bin/python3", venv);
    return bb_start(&ex, &(struct bb_options){.args = args, .path_env = path});
}

static int start_venv_without_pip(void **state)
{
    static const char *const args[] = {"--plugins", "agent_skills", "jupyter", NULL};
    (void)state;
    return start_in_venv("python3 -m venv --without-pip %1$s/v >/dev/null 2>&1", args);
}

static int stop_venv(void **state)
{
    char cmd[128];
    int rc = venv[0] && ex.pid > 0 ? bb_stop(&ex) : 0;
    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", venv);
    if (venv[0] && system(cmd) != 0)
        rc = -1;
    return rc;
}

static void test_jupyter_alias_and_missing_pip(void **state)
{
    (void)state;
    if (!venv[0])
        skip();
    /* --plugins agent_skills jupyter, as OpenHands starts its server. */
    expect_cell("import sys\nprint(sys.prefix == sys.base_prefix)", "False");
    char want[5000];
    snprintf(want, sizeof want,
             "ERROR: pip is not installed for %s, so %%pip cannot run. Install pip first "
             "(python3 -m ensurepip, or the package manager of the image, e.g. apt-get install "
             "python3-pip).",
             interpreter);
    expect_cell("%pip install pymsgbox==1.0.9", want);
}

static int start_as_agent(void **state)
{
    static const char *const args[] = {"--plugins", "ipython", "gitinfo",
                                       "--user-id", "65534",   NULL};
    (void)state;
    if (geteuid() != 0)
        return 0; /* the tests skip */
    if (make_stub_browser() < 0)
        return -1;
    struct bb_options o = {.args = args, .path_env = stub_path, .dir_mode = 0755};
    return bb_start(&ex, &o);
}

static int stop_as_agent(void **state)
{
    int rc = ex.pid > 0 ? stop_any(state) : 0;
    remove_stub_browser();
    return rc;
}

static void test_runs_as_the_agent(void **state)
{
    (void)state;
    if (ex.pid <= 0)
        skip();
    struct bb_reply r =
        cell_bare("import os\nprint(os.getuid(), os.geteuid())\nprint(os.getcwd())");
    char want[256];
    snprintf(want, sizeof want, "65534 65534\n%s", ex.work);
    assert_string_equal(bb_content(&r), want);
    bb_reply_free(&r);
    struct passwd *pw = getpwuid(65534);
    if (pw) {
        r = cell_bare("print(os.environ['USER'])");
        assert_string_equal(bb_content(&r), pw->pw_name);
        bb_reply_free(&r);
    }
    r = cell_bare("open('mine.txt', 'w').close()");
    bb_reply_free(&r);
    bb_expect_run(&ex, "stat -c %u mine.txt", BB_ANY_EXIT, "65534");

    /* gitinfo reads as the agent: a repository it cannot read is none. */
    char dir[200], cmd[1024];
    snprintf(dir, sizeof dir, "%s/locked", ex.dir);
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/.git && chmod 755 %s && chmod 700 %s/.git && "
             "echo 'ref: refs/heads/secret' > %s/.git/HEAD",
             dir, dir, dir, dir);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "cd %s", dir);
    r = bb_run(&ex, cmd);
    assert_int_equal(bb_exit_code(&r), 0);
    assert_true(json_is_null(json_object_get(bb_meta(&r), "git_branch")));
    bb_reply_free(&r);
    snprintf(cmd, sizeof cmd, "chmod 755 %s/.git", dir);
    assert_int_equal(system(cmd), 0);
    r = bb_run(&ex, "true");
    assert_string_equal(bb_meta_str(&r, "git_branch"), "secret");
    bb_reply_free(&r);

    /* The browser runs as the agent too. */
    r = browse("https://example.com", -1);
    bb_assert_contains(bb_content(&r), " uid=65534");
    bb_reply_free(&r);
}

/* ---- more of OpenHands' test_ipython.py --------------------------------------------------- */

static void test_user_and_chdir(void **state)
{
    (void)state;
    /* test_ipython_multi_user: the runner's USER is the agent's name. */
    struct passwd *pw = getpwuid(geteuid());
    assert_non_null(pw);
    expect_cell("import os; print(os.environ['USER'])", pw->pw_name);
    /* test_ipython_chdir: an absolute path from os.path.abspath, there and back. */
    struct bb_reply r = cell_bare("import os\nos.makedirs('test_dir', exist_ok=True)\n"
                                  "abs_path = os.path.abspath('test_dir')\nprint(abs_path)");
    const char *dir = bb_path(ex.work, "test_dir");
    assert_string_equal(bb_content(&r), dir);
    bb_reply_free(&r);
    r = cell_bare("os.chdir(abs_path)\nprint(os.getcwd())");
    assert_string_equal(bb_content(&r), dir);
    bb_reply_free(&r);
    r = cell_bare("import shutil\nos.chdir('..')\nshutil.rmtree('test_dir', ignore_errors=True)\n"
                  "print(os.path.exists(abs_path))");
    assert_string_equal(bb_content(&r), "False");
    bb_reply_free(&r);
}

/* With pip (offline: ensurepip), and a wheel made by hand to install from a file. */
static int start_venv_with_pip(void **state)
{
    static const char *const args[] = {"--plugins", "ipython", NULL};
    (void)state;
    return start_in_venv(
        "python3 -m venv %1$s/v >/dev/null 2>&1 && %1$s/v/bin/python3 -m pip --version "
        ">/dev/null 2>&1 && python3 - %1$s <<'EOF'\n"
        "import sys, zipfile\n"
        "with zipfile.ZipFile(sys.argv[1] + '/paddock_probe-1.0-py3-none-any.whl', 'w') as z:\n"
        "    z.writestr('paddock_probe/__init__.py', 'VALUE = 42\\n')\n"
        "    d = 'paddock_probe-1.0.dist-info/'\n"
        "    z.writestr(d + 'METADATA', 'Metadata-Version: 2.1\\nName: paddock-probe\\n"
        "Version: 1.0\\n')\n"
        "    z.writestr(d + 'WHEEL', 'Wheel-Version: 1.0\\nGenerator: paddock\\n"
        "Root-Is-Purelib: true\\nTag: py3-none-any\\n')\n"
        "    z.writestr(d + 'RECORD', 'paddock_probe/__init__.py,,\\n' + d + 'METADATA,,\\n' "
        "+ d + 'WHEEL,,\\n' + d + 'RECORD,,\\n')\n"
        "EOF",
        args);
}

static void test_package_install(void **state)
{
    (void)state;
    if (!venv[0])
        skip();
    /* test_ipython_package_install, offline: a wheel file instead of PyPI. */
    struct bb_reply r = cell_bare("import paddock_probe");
    bb_assert_contains(bb_content(&r), "ModuleNotFoundError: No module named 'paddock_probe'");
    bb_reply_free(&r);
    char code[256];
    snprintf(code, sizeof code, "%%pip install --no-index %s/paddock_probe-1.0-py3-none-any.whl",
             venv);
    r = cell_bare(code);
    bb_assert_contains(bb_content(&r), "Successfully installed paddock-probe-1.0");
    bb_reply_free(&r);
    /* In the running process, without a restart. */
    r = cell_full("import paddock_probe", -1, 30, NULL);
    char *want = NULL;
    assert_true(asprintf(&want,
                         NO_OUTPUT "\n[Jupyter current working directory: %s]\n[Jupyter Python "
                                   "interpreter: %s/v/bin/python3]",
                         ex.work, venv) > 0);
    assert_string_equal(bb_content(&r), want);
    free(want);
    bb_reply_free(&r);
    r = cell_bare("print(paddock_probe.VALUE)");
    assert_string_equal(bb_content(&r), "42");
    bb_reply_free(&r);
}

/* ---- agent_skills: the agentskills module on PYTHONPATH ---------------------------------- */

static int start_skills(void **state)
{
    static const char *const args[] = {"--plugins", "agent_skills", "jupyter", NULL};
    (void)state;
    struct bb_options o = {.args = args};
    return bb_start(&ex, &o);
}

static void test_agent_skills(void **state)
{
    (void)state;
    char *setup = NULL;
    assert_true(asprintf(&setup, "printf 'a\\nb\\nc\\n' > %s/s.txt", ex.work) > 0);
    bb_expect_run(&ex, setup, 0, "");
    free(setup);
    char *code = NULL, *want = NULL;
    assert_true(asprintf(&code, "from agentskills import *\nopen_file('%s/s.txt', 2, 3)", ex.work) >
                0);
    assert_true(asprintf(&want,
                         "[File: %s/s.txt (3 lines total)]\n(this is the beginning of the file)\n"
                         "1|a\n2|b\n3|c\n(this is the end of the file)",
                         ex.work) > 0);
    struct bb_reply r = cell_bare(code);
    assert_string_equal(bb_content(&r), want);
    bb_reply_free(&r);
    free(code);
    free(want);
    /* file_editor: the executor's editor in a process of its own, undo kept by the module;
     * it returns openhands-aci's <oh_aci_output_ID> block (its fields, then the text). */
    assert_true(
        asprintf(&code,
                 "import json, re\n"
                 "def block(s):\n"
                 "    m = re.fullmatch(r'<(oh_aci_output_[0-9a-f]{32})>\\n(\\{.*\\})\\n</\\1>', "
                 "s, re.S)\n"
                 "    d = json.loads(m.group(2))\n"
                 "    print(list(d), d.get('prev_exist'), repr(d.get('old_content')), "
                 "repr(d.get('new_content')))\n"
                 "    print(d['formatted_output_and_error'].splitlines()[0])\n"
                 "    return m.group(2)\n"
                 "r = block(file_editor('create', '%s/n.py', file_text='x = 1\\n'))\n"
                 "r2 = block(file_editor('str_replace', '%s/n.py', old_str='1', "
                 "new_str='2'))\n"
                 "r3 = block(file_editor('undo_edit', '%s/n.py'))\n"
                 "r4 = block(file_editor('view', '%s/none.py'))\n"
                 "print(r.startswith('{\"output\": \"File created'), '\",\"error\": null,' in r)\n"
                 "print(open('%s/n.py').read().strip())",
                 ex.work, ex.work, ex.work, ex.work, ex.work) > 0);
    assert_true(
        asprintf(&want,
                 "['output', 'error', 'path', 'prev_exist', 'old_content', 'new_content', "
                 "'formatted_output_and_error'] False None 'x = 1\\n'\n"
                 "File created successfully at: %s/n.py\n"
                 "['output', 'error', 'path', 'prev_exist', 'old_content', 'new_content', "
                 "'formatted_output_and_error'] True 'x = 1\\n' 'x = 2\\n'\n"
                 "The file %s/n.py has been edited. Here's the result of running `cat -n` on a "
                 "snippet of %s/n.py:\n"
                 "['output', 'error', 'path', 'prev_exist', 'old_content', 'new_content', "
                 "'formatted_output_and_error'] True 'x = 2\\n' 'x = 1\\n'\n"
                 "Last edit to %s/n.py undone successfully. Here's the result of running `cat -n` "
                 "on %s/n.py:\n"
                 "['output', 'error', 'formatted_output_and_error'] None None None\n"
                 "ERROR:\n"
                 "True True\n"
                 "x = 1",
                 ex.work, ex.work, ex.work, ex.work, ex.work) > 0);
    r = cell_bare(code);
    assert_string_equal(bb_content(&r), want);
    bb_reply_free(&r);
    free(code);
    free(want);
    /* The shell's python3 finds it too; the module's directory is not the agent's to change. */
    bb_expect_run(&ex, "python3 -c 'import agentskills; print(agentskills.WINDOW)'", 0, "100");
    bb_expect_run(
        &ex, "d=${PYTHONPATH%%:*}; [ -f $d/agentskills.py ] && stat -c %a $d $d/agentskills.py", 0,
        "755\n644");
}

int main(int argc, char **argv)
{
    if (bb_init(argc, argv) < 0)
        return 2;
    if (command_line("python3 -c 'import sys; print(sys.executable)'", interpreter,
                     sizeof interpreter) < 0) {
        fprintf(stderr, "python3 is needed for these tests\n");
        return 77; /* skipped */
    }
    const struct CMUnitTest ipython[] = {
        cmocka_unit_test(test_print),
        cmocka_unit_test(test_last_expression_value),
        cmocka_unit_test(test_state_persists),
        cmocka_unit_test(test_traceback),
        cmocka_unit_test(test_no_output),
        cmocka_unit_test(test_cwd_follows_bash),
        cmocka_unit_test(test_include_extra_false),
        cmocka_unit_test(test_timeout_interrupts),
        cmocka_unit_test(test_timeout_kills_a_stubborn_cell),
        cmocka_unit_test(test_pip_magic),
        cmocka_unit_test(test_ansi_stripped),
        cmocka_unit_test(test_kernel_init_code),
        cmocka_unit_test(test_runner_exit_restarts),
        cmocka_unit_test(test_big_output_truncated),
        cmocka_unit_test(test_cell_streams),
        cmocka_unit_test(test_bad_requests),
        cmocka_unit_test(test_gitinfo),
        cmocka_unit_test(test_browse_without_browser),
        cmocka_unit_test(test_user_and_chdir),
    };
    const struct CMUnitTest own[] = {
        cmocka_unit_test(test_unknown_plugin),
        cmocka_unit_test_setup_teardown(test_without_plugin, start_plain, stop_any),
        cmocka_unit_test_setup_teardown(test_no_python_no_browser, start_without_python, stop_any),
        cmocka_unit_test_setup_teardown(test_broken_python, start_with_broken_python,
                                        stop_broken_python),
        cmocka_unit_test_setup_teardown(test_jupyter_alias_and_missing_pip, start_venv_without_pip,
                                        stop_venv),
        cmocka_unit_test_setup_teardown(test_browse_with_browser, start_with_browser,
                                        stop_with_browser),
        cmocka_unit_test_setup_teardown(test_runs_as_the_agent, start_as_agent, stop_as_agent),
        cmocka_unit_test_setup_teardown(test_package_install, start_venv_with_pip, stop_venv),
        cmocka_unit_test_setup_teardown(test_agent_skills, start_skills, stop_any),
    };
    int failed = cmocka_run_group_tests_name("ipython", ipython, start_ipython, stop_any);
    failed += cmocka_run_group_tests_name("own executors", own, NULL, NULL);
    return failed ? 1 : 0;
}
