/* Black-box tests of paddock-executor: start the binary given as argv[1] on a unix socket in a
 * fresh temp dir, drive it over HTTP with libcurl, stop it by PID.
 * EXECUTOR_SHELL=/path/to/shell runs the same tests against another shell (busybox ash).
 *
 * Groups, each with its own executor: the general tests; two with start-up steps (an
 * --env-file, a workspace setup script, a git identity from the environment); and, when run
 * as root, one whose shell runs as a fresh uid for the hostile tests (kill -9 -1, a fork
 * bomb), which must never run as root or as a uid that owns anything else.
 * HOME is always a directory of the test's own (--home): the executor writes ~/.gitconfig
 * and ~/.bashrc there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <curl/curl.h>
#include <dirent.h>
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
#include <time.h>
#include <unistd.h>

static const char *executor_path;
static char tmpdir[64];
static char sock_path[100];
static char work_dir[100];
static char home_dir[100];
static pid_t executor_pid = -1;
static CURL *curl;

/* What the group's executor is started with. */
struct group {
    const char *setup_dir; /* workspace dir holding setup.sh (NULL: none) */
    bool both_setups;      /* also an .openhands/setup.sh that must not run */
    bool env_file;         /* --env-file with two variables; GIT_USER_NAME in the environment */
    bool agent_uid;        /* root only: the shell runs as a fresh uid */
};
static const struct group *grp;
static const struct group group_default = {0};
static const struct group group_startup = {
    .setup_dir = ".paddock", .both_setups = true, .env_file = true};
static const struct group group_startup_openhands = {.setup_dir = ".openhands"};
static const struct group group_agent = {.agent_uid = true};
static uid_t agent_uid;
static bool setup_done_when_ready; /* the setup script had finished when the socket appeared */

static bool shell_is_ash(void)
{
    const char *shell = getenv("EXECUTOR_SHELL");
    return shell && *shell;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
    chmod(path, mode);
}

struct reply {
    long status;
    char *body;
    size_t len;
    json_t *json;
};

static size_t collect(char *data, size_t size, size_t nmemb, void *ctx)
{
    struct reply *r = ctx;
    size_t n = size * nmemb;
    char *p = realloc(r->body, r->len + n + 1);
    if (!p)
        return 0;
    memcpy(p + r->len, data, n);
    r->body = p;
    r->len += n;
    r->body[r->len] = '\0';
    return n;
}

static void reply_free(struct reply *r)
{
    free(r->body);
    json_decref(r->json);
    memset(r, 0, sizeof *r);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void setup_handle(CURL *h, const char *method, const char *path, const char *body,
                         struct reply *r)
{
    char url[256];
    snprintf(url, sizeof url, "http://executor%s", path);
    curl_easy_reset(h);
    curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, sock_path);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
    if (body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    }
}

/* One request on the shared keep-alive handle; the body is parsed as JSON when it is JSON. */
static struct reply http(const char *method, const char *path, const char *body)
{
    struct reply r = {0};
    setup_handle(curl, method, path, body, &r);
    CURLcode rc = curl_easy_perform(curl);
    if (rc != CURLE_OK)
        fail_msg("%s %s: %s", method, path, curl_easy_strerror(rc));
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r.status);
    r.json = r.body ? json_loads(r.body, 0, NULL) : NULL;
    return r;
}

/* Builds {"action": {"action": "run", "args": {...}, "timeout": t}}; timeout < 0: none. */
static char *run_body(const char *command, bool is_input, double timeout, bool blocking)
{
    json_t *action = json_pack("{s:s, s:{s:s, s:b, s:b}}", "action", "run", "args", "command",
                               command, "is_input", is_input, "blocking", blocking);
    if (timeout >= 0)
        json_object_set_new(action, "timeout", json_real(timeout));
    json_t *body = json_pack("{s:o}", "action", action);
    char *s = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    return s;
}

static struct reply run_full(const char *command, bool is_input, double timeout)
{
    char *body = run_body(command, is_input, timeout, timeout >= 0);
    struct reply r = http("POST", "/execute_action", body);
    free(body);
    assert_int_equal(r.status, 200);
    assert_non_null(r.json);
    return r;
}

static struct reply run(const char *command)
{
    return run_full(command, false, 30);
}

static const char *content(const struct reply *r)
{
    return json_string_value(json_object_get(r->json, "content"));
}

static json_t *meta(const struct reply *r)
{
    return json_object_get(json_object_get(r->json, "extras"), "metadata");
}

static json_int_t exit_code(const struct reply *r)
{
    return json_integer_value(json_object_get(meta(r), "exit_code"));
}

static const char *meta_str(const struct reply *r, const char *key)
{
    return json_string_value(json_object_get(meta(r), key));
}

static void assert_prefix(const char *s, const char *prefix)
{
    assert_non_null(s);
    if (strncmp(s, prefix, strlen(prefix)) != 0)
        fail_msg("expected \"%s\" to start with \"%s\"", s, prefix);
}

static void assert_contains(const char *s, const char *part)
{
    assert_non_null(s);
    if (!strstr(s, part))
        fail_msg("expected \"%s\" to contain \"%s\"", s, part);
}

/* ---- start and stop --------------------------------------------------------------------- */

/* The workspace and files a group starts with. */
static void prepare_group(void)
{
    char path[256];
    if (grp->setup_dir) {
        mkdir(work_dir, 0755);
        snprintf(path, sizeof path, "%s/%s", work_dir, grp->setup_dir);
        mkdir(path, 0755);
        snprintf(path, sizeof path, "%s/%s/setup.sh", work_dir, grp->setup_dir);
        /* Sourced in the session: what it exports stays; what it prints is nobody's. */
        write_file(path,
                   strcmp(grp->setup_dir, ".paddock") == 0
                       ? "echo noise from setup\nexport SETUP_VAR=from-paddock-setup\n"
                         "sleep 0.3\necho done > setup-done\n"
                       : "export SETUP_VAR=from-openhands-setup\necho done > setup-done\n",
                   0644);
    }
    if (grp->both_setups) {
        snprintf(path, sizeof path, "%s/.openhands", work_dir);
        mkdir(path, 0755);
        snprintf(path, sizeof path, "%s/.openhands/setup.sh", work_dir);
        write_file(path, "export SETUP_VAR=wrong\necho ran > openhands-ran\n", 0644);
    }
    if (grp->env_file) {
        snprintf(path, sizeof path, "%s/vars.env", tmpdir);
        write_file(path,
                   "# start-up variables\nfile_var=from file $HOME \"q\"\n"
                   "GIT_USER_EMAIL=dev@example.com\n",
                   0644);
    }
}

static int start_executor(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/paddock-exec-test.XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    snprintf(sock_path, sizeof sock_path, "%s/executor.sock", tmpdir);
    snprintf(work_dir, sizeof work_dir, "%s/workspace", tmpdir);
    snprintf(home_dir, sizeof home_dir, "%s/home", tmpdir);
    if (grp->agent_uid) {
        /* A uid nothing else on this machine uses: kill -9 -1 and RLIMIT_NPROC as that uid
         * reach only the test's own processes. */
        agent_uid = (uid_t)(200000 + getpid() % 100000);
        chmod(tmpdir, 0755);
    }
    prepare_group();
    const char *shell = getenv("EXECUTOR_SHELL");
    executor_pid = fork();
    if (executor_pid < 0)
        return -1;
    if (executor_pid == 0) {
        char uid[32], env_file[128];
        char *argv[20] = {(char *)executor_path, "--socket", sock_path, "--working-dir", work_dir,
                          "--no-change-timeout", "1",        "--home",  home_dir};
        int i = 9;
        if (shell && *shell) {
            argv[i++] = "--shell";
            argv[i++] = (char *)shell;
        }
        if (grp->agent_uid) {
            snprintf(uid, sizeof uid, "%lu", (unsigned long)agent_uid);
            argv[i++] = "--user-id";
            argv[i++] = uid;
        }
        if (grp->env_file) {
            snprintf(env_file, sizeof env_file, "%s/vars.env", tmpdir);
            argv[i++] = "--env-file";
            argv[i++] = env_file;
            setenv("GIT_USER_NAME", "Dev Name", 1);
        }
        argv[i] = NULL;
        /* A key-looking variable that must not reach the agent's shell; a plain one that
         * must. */
        setenv("TEST_API_KEY", "sekrit", 1);
        setenv("FOOBAR", "BAZ", 1);
        execv(executor_path, argv);
        _exit(127);
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    curl = curl_easy_init();
    /* Ready means: the socket exists and /alive answers 200. */
    double deadline = now() + 15;
    while (now() < deadline) {
        struct stat st;
        if (stat(sock_path, &st) == 0) {
            char done[200];
            snprintf(done, sizeof done, "%s/setup-done", work_dir);
            setup_done_when_ready = access(done, F_OK) == 0;
            struct reply r = {0};
            setup_handle(curl, "GET", "/alive", NULL, &r);
            long status = 0;
            if (curl_easy_perform(curl) == CURLE_OK)
                curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
            reply_free(&r);
            if (status == 200)
                return 0;
        }
        if (waitpid(executor_pid, NULL, WNOHANG) == executor_pid) {
            executor_pid = -1;
            fprintf(stderr, "executor exited during start-up\n");
            return -1;
        }
        usleep(10000);
    }
    fprintf(stderr, "executor did not become ready\n");
    return -1;
}

/* SIGKILL to every process of uid (what the agent-uid group leaves behind). */
static void kill_processes_of(uid_t uid)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[300], line[256];
        long pid = strtol(e->d_name, NULL, 10);
        if (pid <= 1)
            continue;
        snprintf(path, sizeof path, "/proc/%ld/status", pid);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        unsigned long u;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "Uid: %lu", &u) == 1) {
                if (u == uid && uid != 0)
                    kill((pid_t)pid, SIGKILL);
                break;
            }
        fclose(f);
    }
    if (d)
        closedir(d);
}

static int stop_executor(void **state)
{
    (void)state;
    int rc = 0;
    if (curl)
        curl_easy_cleanup(curl);
    curl_global_cleanup();
    if (executor_pid > 0) {
        int status;
        kill(executor_pid, SIGTERM);
        waitpid(executor_pid, &status, 0);
        /* SIGTERM is a clean shutdown: exit 0, socket removed. */
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "executor did not exit cleanly (status 0x%x)\n", status);
            rc = -1;
        }
        if (access(sock_path, F_OK) == 0) {
            fprintf(stderr, "executor left its socket behind\n");
            rc = -1;
        }
    }
    if (grp->agent_uid)
        kill_processes_of(agent_uid);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        rc = -1;
    return rc;
}

/* ---- tests ------------------------------------------------------------------------------ */

static void test_alive_and_server_info(void **state)
{
    (void)state;
    struct reply r = http("GET", "/alive", NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(json_string_value(json_object_get(r.json, "status")), "ok");
    reply_free(&r);
    r = http("GET", "/server_info", NULL);
    assert_int_equal(r.status, 200);
    assert_true(json_is_number(json_object_get(r.json, "uptime")));
    assert_true(json_is_number(json_object_get(r.json, "idle_time")));
    json_t *mem = json_object_get(json_object_get(r.json, "resources"), "memory");
    assert_true(json_integer_value(json_object_get(mem, "rss")) > 0);
    reply_free(&r);
}

static void test_echo(void **state)
{
    (void)state;
    struct reply r = run("echo hi");
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
    assert_string_equal(meta_str(&r, "working_dir"), work_dir);
    assert_true(json_is_string(json_object_get(meta(&r), "py_interpreter_path")));
    reply_free(&r);
}

static void test_cd_persists(void **state)
{
    (void)state;
    struct reply r = run("cd /tmp");
    assert_int_equal(exit_code(&r), 0);
    assert_string_equal(meta_str(&r, "working_dir"), "/tmp");
    reply_free(&r);
    r = run("pwd");
    assert_string_equal(content(&r), "/tmp");
    assert_string_equal(meta_str(&r, "working_dir"), "/tmp");
    reply_free(&r);
    char back[160];
    snprintf(back, sizeof back, "cd %s", work_dir);
    r = run(back);
    assert_string_equal(meta_str(&r, "working_dir"), work_dir);
    reply_free(&r);
}

static void test_export_persists(void **state)
{
    (void)state;
    struct reply r = run("export X=1");
    reply_free(&r);
    r = run("echo $X");
    assert_string_equal(content(&r), "1");
    reply_free(&r);
}

static void test_exit_codes(void **state)
{
    (void)state;
    struct reply r = run("sh -c 'exit 3'");
    assert_int_equal(exit_code(&r), 3);
    assert_true(json_is_false(json_object_get(r.json, "success")));
    assert_string_equal(json_string_value(json_object_get(r.json, "message")),
                        "Command `sh -c 'exit 3'` executed with exit code 3.");
    assert_string_equal(meta_str(&r, "suffix"), "\n[The command completed with exit code 3.]");
    reply_free(&r);
    r = run("false");
    assert_int_equal(exit_code(&r), 1);
    reply_free(&r);
    /* $? is the user's, not the marker's. */
    r = run("false");
    reply_free(&r);
    r = run("echo $?");
    assert_string_equal(content(&r), "1");
    reply_free(&r);
}

static void test_multiline_output(void **state)
{
    (void)state;
    struct reply r = run("printf 'a\\nb\\n\\nc\\n\\n\\n'");
    assert_string_equal(content(&r), "a\nb\n\nc");
    reply_free(&r);
    r = run("printf 'no newline'");
    assert_string_equal(content(&r), "no newline");
    reply_free(&r);
}

/* One command that spans lines runs whole (OpenHands' test_bash.py multi-line cases). */
static void expect_output(const char *command, const char *want)
{
    struct reply r = run(command);
    if (strcmp(json_string_value(json_object_get(r.json, "observation")), "run") != 0)
        fail_msg("<<%s>> was not run: %s", command, content(&r));
    assert_string_equal(content(&r), want);
    assert_int_equal(exit_code(&r), 0);
    reply_free(&r);
}

static void test_single_commands_spanning_lines(void **state)
{
    (void)state;
    expect_output("cat <<'EOF'\nhello 'there'\nEOF", "hello 'there'");
    expect_output("cat <<EOF\nhome is set: ${HOME:+yes}\nEOF", "home is set: yes");
    expect_output("for i in 1 2 3; do\n  echo $i\ndone", "1\n2\n3");
    expect_output("if true; then\n  echo yes\nelse\n  echo no\nfi", "yes");
    expect_output("echo a &&\necho b ||\necho c", "a\nb");
    expect_output("echo one \\\n  two \\\n  three", "one two three");
    expect_output("echo 'quoted\nnewline'", "quoted\nnewline");
    expect_output("echo \"double\nquoted\"", "double\nquoted");
    expect_output("echo $(\n  echo inner\n)", "inner");
    expect_output("case x in\n  x) echo matched;;\n  *) echo other;;\nesac", "matched");
    expect_output("f() {\n  echo in-f\n}; f", "in-f");
    expect_output("{\n  echo grouped\n} | tr a-z A-Z", "GROUPED");
    expect_output("echo first # a comment\n# another comment", "first");
}

static void test_multiple_commands_refused(void **state)
{
    (void)state;
    struct reply r = run("touch refused-1\ntouch refused-2");
    const char *want = "ERROR: Cannot execute multiple commands at once.\n"
                       "Please run each command separately OR chain them into a single command "
                       "via && or ;\nProvided commands:\n(1) touch refused-1\n(2) touch refused-2";
    assert_string_equal(json_string_value(json_object_get(r.json, "observation")), "error");
    assert_string_equal(content(&r), want);
    assert_string_equal(json_string_value(json_object_get(r.json, "message")), want);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(r.json, "extras"), "error_id")), "");
    reply_free(&r);
    /* Nothing ran. */
    r = run("test -e refused-1 || test -e refused-2; echo $?");
    assert_string_equal(content(&r), "1");
    reply_free(&r);

    /* A heredoc is part of its command; comments stay with the command before them. */
    r = run("cat <<EOF\nbody\nEOF\necho \"Done\" # trailing\n# more\n\nls -l");
    assert_string_equal(content(&r),
                        "ERROR: Cannot execute multiple commands at once.\n"
                        "Please run each command separately OR chain them into a single command "
                        "via && or ;\nProvided commands:\n(1) cat <<EOF\nbody\nEOF\n"
                        "(2) echo \"Done\" # trailing\n# more\n(3) ls -l");
    reply_free(&r);
    r = run("sleep 0 &\necho after");
    assert_contains(content(&r), "(1) sleep 0 &\n(2) echo after");
    reply_free(&r);
}

static void test_unparsable_sent_as_is(void **state)
{
    (void)state;
    /* OpenHands sends what its parser cannot read as it is; the shell reports the error. */
    struct reply r = run("echo \"unclosed\necho more");
    assert_string_equal(json_string_value(json_object_get(r.json, "observation")), "run");
    assert_int_equal(exit_code(&r), 2);
    reply_free(&r);
    r = run("echo fine");
    assert_string_equal(content(&r), "fine");
    reply_free(&r);
}

static void test_find_exec(void **state)
{
    (void)state;
    struct reply r = run("mkdir -p fe && touch fe/a.txt fe/b.txt && "
                         "find fe -name '*.txt' -exec echo found {} \\; | sort");
    assert_string_equal(content(&r), "found fe/a.txt\nfound fe/b.txt");
    assert_int_equal(exit_code(&r), 0);
    reply_free(&r);
    r = run("find fe -name a.txt -exec rm {} \\; && ls fe");
    assert_string_equal(content(&r), "b.txt");
    reply_free(&r);
}

static void test_long_command(void **state)
{
    (void)state;
    char *cmd = malloc(7000), *want = malloc(7000);
    memset(want, 'x', 6000);
    want[6000] = '\0';
    snprintf(cmd, 7000, "echo '%s'", want);
    struct reply r = run(cmd);
    assert_int_equal(exit_code(&r), 0);
    assert_string_equal(content(&r), want);
    reply_free(&r);
    free(cmd);
    free(want);
}

static void test_invalid_utf8(void **state)
{
    (void)state;
    struct reply r = run("printf '\\377\\376 ok'");
    assert_non_null(r.json); /* the reply is valid JSON */
    assert_string_equal(content(&r), "\xef\xbf\xbd\xef\xbf\xbd ok");
    reply_free(&r);
}

#define TRUNCATED_PREFIX(n)                                                                        \
    "[Previous command outputs are truncated. Showing the last " n " lines of the output "         \
    "below.]\n"

static void test_big_output_truncated(void **state)
{
    (void)state;
    /* The last 11,000 lines (OpenHands' pane and history), then the 30,000-char cap. */
    struct reply r = run("seq 1 100000");
    const char *c = content(&r);
    assert_prefix(c, "89001\n89002\n");
    assert_contains(c, "\n[... Observation truncated due to length ...]\n");
    assert_string_equal(c + strlen(c) - 7, "\n100000");
    assert_int_equal(strlen(c),
                     30000 + strlen("\n[... Observation truncated due to length ...]\n"));
    assert_string_equal(meta_str(&r, "prefix"), TRUNCATED_PREFIX("11000"));
    assert_string_equal(meta_str(&r, "suffix"), "\n[The command completed with exit code 0.]");
    reply_free(&r);
}

static void test_line_window(void **state)
{
    (void)state;
    /* 11,001 short lines: the first is gone, and the rest fits the char cap. */
    struct reply r = run("{ echo first; yes x | head -n 11000; }");
    const char *c = content(&r);
    assert_prefix(c, "x\nx\n");
    assert_int_equal(strlen(c), 21999);
    assert_string_equal(meta_str(&r, "prefix"), TRUNCATED_PREFIX("11000"));
    reply_free(&r);
    /* Exactly 11,000 lines: nothing dropped, no prefix. */
    r = run("{ echo first; yes x | head -n 10999; }");
    assert_prefix(content(&r), "first\nx\n");
    assert_string_equal(meta_str(&r, "prefix"), "");
    reply_free(&r);
}

static void test_background_pid(void **state)
{
    (void)state;
    struct reply r = run("sleep 0.1 &");
    assert_int_equal(exit_code(&r), 0);
    assert_true(json_integer_value(json_object_get(meta(&r), "pid")) > 0);
    reply_free(&r);
}

static void test_secrets_not_inherited(void **state)
{
    (void)state;
    struct reply r = run("echo \"[$TEST_API_KEY]\" \"$TERM\" \"$PAGER\"");
    assert_string_equal(content(&r), "[] dumb cat");
    reply_free(&r);
}

static void test_hard_timeout_then_ctrl_c(void **state)
{
    (void)state;
    double t0 = now();
    struct reply r = run_full("echo started; sleep 5", false, 1);
    double took = now() - t0;
    assert_true(took >= 0.9 && took < 3);
    assert_int_equal(exit_code(&r), -1);
    assert_string_equal(content(&r), "started");
    assert_prefix(meta_str(&r, "suffix"), "\n[The command timed out after 1.0 seconds. ");
    assert_contains(meta_str(&r, "suffix"), "send keys (\"C-c\", \"C-z\", \"C-d\")");
    assert_true(json_is_null(json_object_get(meta(&r), "working_dir")));
    assert_true(json_is_false(json_object_get(r.json, "success")));
    reply_free(&r);

    /* A new command while it runs is refused. */
    r = run("echo new");
    assert_int_equal(exit_code(&r), -1);
    assert_string_equal(meta_str(&r, "prefix"), "[Below is the output of the previous command.]\n");
    assert_prefix(meta_str(&r, "suffix"), "\n[Your command \"echo new\" is NOT executed. ");
    reply_free(&r);

    r = run_full("C-c", true, 5);
    assert_int_equal(exit_code(&r), 130);
    assert_string_equal(meta_str(&r, "suffix"),
                        "\n[The command completed with exit code 130. CTRL+C was sent.]");
    reply_free(&r);

    r = run("echo after");
    assert_string_equal(content(&r), "after");
    assert_int_equal(exit_code(&r), 0);
    reply_free(&r);
}

static void test_soft_timeout_and_continue(void **state)
{
    (void)state;
    /* Non-blocking, no output for 1 s (the executor runs with --no-change-timeout 1). */
    char *body = run_body("echo begin; sleep 1.6; echo done", false, 30, false);
    struct reply r = http("POST", "/execute_action", body);
    free(body);
    assert_int_equal(exit_code(&r), -1);
    assert_string_equal(content(&r), "begin");
    assert_prefix(meta_str(&r, "suffix"), "\n[The command has no new output after 1 seconds. ");
    reply_free(&r);

    body = run_body("", false, 30, false);
    r = http("POST", "/execute_action", body);
    free(body);
    assert_string_equal(content(&r), "done");
    assert_int_equal(exit_code(&r), 0);
    assert_string_equal(meta_str(&r, "prefix"), "");
    reply_free(&r);
}

static void test_input_to_running_program(void **state)
{
    (void)state;
    struct reply r = run_full("read -r line; echo \"got:$line\"", false, 0.5);
    assert_int_equal(exit_code(&r), -1);
    reply_free(&r);
    r = run_full("hello", true, 5);
    assert_string_equal(content(&r), "got:hello");
    assert_int_equal(exit_code(&r), 0);
    reply_free(&r);
}

static void test_keys_at_the_prompt(void **state)
{
    (void)state;
    /* Not input: a key for the idle shell. ^C gives a fresh prompt; ^Z must not hang. */
    struct reply r = run_full("C-c", false, 5);
    assert_int_equal(exit_code(&r), 130);
    assert_string_equal(meta_str(&r, "suffix"),
                        "\n[The command completed with exit code 130. CTRL+C was sent.]");
    reply_free(&r);
    r = run_full("C-z", false, 5);
    assert_true(exit_code(&r) >= 0);
    assert_contains(meta_str(&r, "suffix"), "CTRL+Z was sent.");
    reply_free(&r);
    r = run("echo fine");
    assert_string_equal(content(&r), "fine");
    reply_free(&r);
}

static void test_output_ending_like_a_marker(void **state)
{
    (void)state;
    /* Output that ends in "_" or a partial marker tag is not held back at a timeout. */
    struct reply r = run_full("printf 'loading__'; sleep 2", false, 0.5);
    assert_int_equal(exit_code(&r), -1);
    assert_string_equal(content(&r), "loading__");
    reply_free(&r);
    r = run_full("C-c", true, 5);
    reply_free(&r);
}

static void test_nothing_running(void **state)
{
    (void)state;
    struct reply r = run_full("", false, 5);
    assert_string_equal(content(&r), "ERROR: No previous running command to retrieve logs from.");
    assert_int_equal(exit_code(&r), -1);
    reply_free(&r);
    r = run_full("hello", true, 5);
    assert_string_equal(content(&r), "ERROR: No previous running command to interact with.");
    reply_free(&r);
}

static void test_shell_exit_restarts(void **state)
{
    (void)state;
    struct reply r = run("exit 3");
    assert_int_equal(exit_code(&r), 3);
    assert_contains(meta_str(&r, "suffix"), "The shell exited with code 3");
    reply_free(&r);
    r = run("echo alive; pwd");
    assert_int_equal(exit_code(&r), 0);
    char want[200];
    snprintf(want, sizeof want, "alive\n%s", work_dir);
    assert_string_equal(content(&r), want);
    reply_free(&r);
}

static void expect_error(const char *method, const char *path, const char *body, long status,
                         const char *detail_part)
{
    struct reply r = http(method, path, body);
    assert_int_equal(r.status, status);
    assert_non_null(r.json);
    assert_contains(json_string_value(json_object_get(r.json, "detail")), detail_part);
    reply_free(&r);
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
    struct reply r = {0};
    CURL *h = curl_easy_init();
    setup_handle(h, "POST", "/execute_action", NULL, &r);
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
    reply_free(&r);
}

static void test_concurrent_requests_in_order(void **state)
{
    (void)state;
    CURLM *multi = curl_multi_init();
    CURL *a = curl_easy_init(), *b = curl_easy_init();
    struct reply ra = {0}, rb = {0};
    char *body_a = run_body("sleep 0.6; echo a", false, 10, true);
    char *body_b = run_body("echo b", false, 10, true);
    setup_handle(a, "POST", "/execute_action", body_a, &ra);
    setup_handle(b, "POST", "/execute_action", body_b, &rb);
    curl_multi_add_handle(multi, a);
    int running = 1;
    /* Let A reach the executor first (all of its body sent, then a moment for the executor
     * to read it), then send B while A runs. */
    double t0 = now(), sent_at = 0;
    while (now() - t0 < 5 && (!sent_at || now() - sent_at < 0.1)) {
        curl_off_t up = 0;
        curl_multi_perform(multi, &running);
        curl_easy_getinfo(a, CURLINFO_SIZE_UPLOAD_T, &up);
        if (!sent_at && up >= (curl_off_t)strlen(body_a))
            sent_at = now();
        curl_multi_poll(multi, NULL, 0, 10, NULL);
    }
    assert_true(sent_at > 0);
    curl_multi_add_handle(multi, b);
    CURL *order[2] = {NULL, NULL};
    int finished = 0;
    while (finished < 2 && now() - t0 < 10) {
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
    reply_free(&ra);
    reply_free(&rb);
}

static void test_slow_client_does_not_block(void **state)
{
    (void)state;
    /* A client that sends half a request and stalls. */
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock_path);
    assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    const char *partial =
        "POST /execute_action HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"act";
    assert_int_equal(write(fd, partial, strlen(partial)), (ssize_t)strlen(partial));
    struct reply r = run("echo still served");
    assert_string_equal(content(&r), "still served");
    reply_free(&r);
    close(fd);
}

static void test_is_input_long_running_python_like(void **state)
{
    (void)state;
    /* cat echoes each input line; C-d ends it. */
    struct reply r = run_full("cat", false, 0.3);
    assert_int_equal(exit_code(&r), -1);
    reply_free(&r);
    r = run_full("line one", true, 0.3);
    assert_string_equal(content(&r), "line one");
    assert_string_equal(meta_str(&r, "prefix"), "[Below is the output of the previous command.]\n");
    reply_free(&r);
    r = run_full("C-d", true, 5);
    assert_int_equal(exit_code(&r), 0);
    assert_string_equal(meta_str(&r, "suffix"),
                        "\n[The command completed with exit code 0. CTRL+D was sent.]");
    reply_free(&r);
}

/* ---- more of OpenHands' test_bash.py ------------------------------------------------------ */

/* True when a live process runs `prog arg` exactly. */
static bool processes_running(const char *prog, const char *arg)
{
    bool found = false;
    DIR *d = opendir("/proc");
    struct dirent *e;
    char want[128];
    int wlen = snprintf(want, sizeof want, "%s%c%s", prog, 0, arg) + 1;
    while (d && !found && (e = readdir(d))) {
        char path[300], buf[256], st[512];
        snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        if ((int)n != wlen || memcmp(buf, want, n) != 0)
            continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        f = fopen(path, "r");
        if (!f)
            continue;
        n = fread(st, 1, sizeof st - 1, f);
        fclose(f);
        st[n] = '\0';
        char *paren = strrchr(st, ')');
        found = paren && paren[2] != 'Z';
    }
    if (d)
        closedir(d);
    return found;
}

static struct reply run_static(const char *command, const char *cwd, double timeout)
{
    json_t *args = json_pack("{s:s, s:b}", "command", command, "is_static", 1);
    if (cwd)
        json_object_set_new(args, "cwd", json_string(cwd));
    json_t *body = json_pack("{s:{s:s, s:o, s:f}}", "action", "action", "run", "args", args,
                             "timeout", timeout);
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    struct reply r = http("POST", "/execute_action", text);
    free(text);
    assert_int_equal(r.status, 200);
    assert_non_null(r.json);
    return r;
}

static const char *observation_kind(const struct reply *r)
{
    return json_string_value(json_object_get(r->json, "observation"));
}

static void test_py_interpreter_path(void **state)
{
    (void)state;
    /* `which python`, from the shell's PATH after each command, without a fork. */
    struct reply r = run("mkdir -p pybin/a pybin/b && printf '#!/bin/sh\\n' > pybin/a/python && "
                         "cp pybin/a/python pybin/b/python3 && chmod +x pybin/a/python "
                         "pybin/b/python3 && OLDPATH=$PATH");
    assert_int_equal(exit_code(&r), 0);
    reply_free(&r);
    char want[256];
    r = run("export PATH=$PWD/pybin/a:$PWD/pybin/b");
    snprintf(want, sizeof want, "%s/pybin/a/python", work_dir);
    assert_string_equal(meta_str(&r, "py_interpreter_path"), want);
    reply_free(&r);
    r = run("export PATH=$PWD/pybin/b"); /* only python3 */
    snprintf(want, sizeof want, "%s/pybin/b/python3", work_dir);
    assert_string_equal(meta_str(&r, "py_interpreter_path"), want);
    reply_free(&r);
    r = run("export PATH=/nonexistent");
    assert_string_equal(meta_str(&r, "py_interpreter_path"), "");
    reply_free(&r);
    r = run("export PATH=$OLDPATH && rm -r pybin");
    assert_int_equal(exit_code(&r), 0);
    reply_free(&r);
}

static void test_nothing_running_command_is_empty(void **state)
{
    (void)state;
    /* OpenHands answers these two with command "". */
    struct reply r = run_full("some input", true, 5);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(r.json, "extras"), "command")), "");
    assert_string_equal(json_string_value(json_object_get(r.json, "message")),
                        "Command `` executed with exit code -1.");
    reply_free(&r);
}

static void test_input_with_several_commands_refused(void **state)
{
    (void)state;
    /* OpenHands checks input to a running program too. */
    struct reply r = run_full("cat", false, 0.3);
    assert_int_equal(exit_code(&r), -1);
    reply_free(&r);
    r = run_full("first line\nsecond line", true, 0.3);
    assert_string_equal(observation_kind(&r), "error");
    assert_contains(content(&r), "Provided commands:\n(1) first line\n(2) second line");
    reply_free(&r);
    r = run_full("one line", true, 0.3);
    assert_string_equal(content(&r), "one line");
    reply_free(&r);
    r = run_full("C-d", true, 5);
    assert_int_equal(exit_code(&r), 0);
    reply_free(&r);
}

static void test_static_in_cwd(void **state)
{
    (void)state;
    struct reply r = run("export ONLY_IN_MAIN=1 && cd /");
    reply_free(&r);
    /* A new shell in cwd: the main shell's variables and directory are not there. */
    r = run_static("pwd; echo \"[$ONLY_IN_MAIN]\"", "/tmp", 10);
    assert_string_equal(content(&r), "/tmp\n[]");
    assert_int_equal(exit_code(&r), 0);
    assert_string_equal(meta_str(&r, "working_dir"), "/tmp");
    assert_string_equal(meta_str(&r, "suffix"), "\n[The command completed with exit code 0.]");
    reply_free(&r);
    /* No cwd: the working dir; a relative one is taken from it. */
    r = run_static("pwd", NULL, 10);
    assert_string_equal(content(&r), work_dir);
    reply_free(&r);
    r = run("mkdir -p $OLDPWD/sub");
    reply_free(&r);
    r = run_static("pwd", "sub", 10);
    char want[200];
    snprintf(want, sizeof want, "%s/sub", work_dir);
    assert_string_equal(content(&r), want);
    reply_free(&r);
    r = run_static("pwd", "/nonexistent-dir", 10);
    assert_string_equal(observation_kind(&r), "error");
    assert_string_equal(content(&r),
                        "ERROR: Cannot run the command in /nonexistent-dir: not a directory.");
    reply_free(&r);
    /* Its exit ends only that shell: no restart note. */
    r = run_static("exit 4", NULL, 10);
    assert_int_equal(exit_code(&r), 4);
    assert_string_equal(meta_str(&r, "suffix"), "\n[The command completed with exit code 4.]");
    reply_free(&r);
    /* The one-command rule holds there too. */
    r = run_static("echo a\necho b", NULL, 10);
    assert_string_equal(observation_kind(&r), "error");
    reply_free(&r);
    /* The main shell is as it was. */
    r = run("pwd; echo $ONLY_IN_MAIN");
    assert_string_equal(content(&r), "/\n1");
    assert_string_equal(meta_str(&r, "suffix"), "\n[The command completed with exit code 0.]");
    reply_free(&r);
    snprintf(want, sizeof want, "cd %s", work_dir);
    r = run(want);
    reply_free(&r);
}

static void test_static_timeout_and_busy_main(void **state)
{
    (void)state;
    /* The main shell is busy with a timed-out command; a static command still runs. */
    struct reply r = run_full("sleep 1.5; echo main-done", false, 0.3);
    assert_int_equal(exit_code(&r), -1);
    reply_free(&r);
    r = run_static("echo static", NULL, 10);
    assert_string_equal(content(&r), "static");
    reply_free(&r);
    /* A static command that times out is killed with its shell. */
    double t0 = now();
    r = run_static("echo begin; sleep 31.4159", NULL, 0.5);
    assert_true(now() - t0 < 3);
    assert_string_equal(content(&r), "begin");
    assert_prefix(meta_str(&r, "suffix"), "\n[The command timed out after 0.5 seconds. ");
    reply_free(&r);
    double deadline = now() + 5;
    while (processes_running("sleep", "31.4159") && now() < deadline)
        usleep(20000);
    assert_false(processes_running("sleep", "31.4159"));
    /* The main command goes on as if nothing happened. */
    r = run_full("", false, 5);
    assert_string_equal(content(&r), "main-done");
    assert_int_equal(exit_code(&r), 0);
    reply_free(&r);
}

static void test_background_job_survives(void **state)
{
    (void)state;
    struct reply r = run("sleep 30 &");
    json_int_t pid = json_integer_value(json_object_get(meta(&r), "pid"));
    assert_true(pid > 0);
    reply_free(&r);
    char cmd[128], want[64];
    snprintf(cmd, sizeof cmd, "echo $!; kill -0 %lld && echo alive", (long long)pid);
    snprintf(want, sizeof want, "%lld\nalive", (long long)pid);
    r = run(cmd);
    assert_contains(content(&r), want);
    assert_int_equal(json_integer_value(json_object_get(meta(&r), "pid")), pid);
    reply_free(&r);
    snprintf(cmd, sizeof cmd, "kill %lld; wait %lld 2>/dev/null; echo killed", (long long)pid,
             (long long)pid);
    r = run(cmd);
    assert_contains(content(&r), "killed");
    reply_free(&r);
}

static void test_python_repl(void **state)
{
    (void)state;
    struct reply r = run("command -v python3 >/dev/null && echo yes || echo no");
    bool have = strcmp(content(&r), "yes") == 0;
    reply_free(&r);
    if (!have)
        skip();
    char *body = run_body("python3 -q", false, 30, false);
    r = http("POST", "/execute_action", body);
    free(body);
    assert_int_equal(exit_code(&r), -1); /* waits for input: the no-change timeout */
    assert_prefix(meta_str(&r, "suffix"), "\n[The command has no new output after 1 seconds. ");
    reply_free(&r);
    r = run_full("x = 21", true, 0.5);
    assert_int_equal(exit_code(&r), -1);
    reply_free(&r);
    r = run_full("print(x * 2)", true, 0.5);
    assert_contains(content(&r), "42");
    assert_string_equal(meta_str(&r, "prefix"), "[Below is the output of the previous command.]\n");
    reply_free(&r);
    r = run_full("exit()", true, 5);
    assert_int_equal(exit_code(&r), 0);
    assert_string_equal(meta_str(&r, "suffix"), "\n[The command completed with exit code 0.]");
    reply_free(&r);
}

static void test_ctrl_c_loop(void **state)
{
    (void)state;
    struct reply r = run_full("while true; do sleep 0.1; done", false, 0.5);
    assert_int_equal(exit_code(&r), -1);
    assert_prefix(meta_str(&r, "suffix"), "\n[The command timed out after 0.5 seconds. ");
    reply_free(&r);
    r = run_full("C-c", true, 5);
    assert_int_equal(exit_code(&r), 130);
    assert_string_equal(meta_str(&r, "suffix"),
                        "\n[The command completed with exit code 130. CTRL+C was sent.]");
    reply_free(&r);
    r = run("echo after");
    assert_string_equal(content(&r), "after");
    reply_free(&r);
}

/* ---- environment: POST /env, ~/.bashrc, git identity ------------------------------------ */

static struct reply post_env(const char *body)
{
    return http("POST", "/env", body);
}

static void test_env_endpoint(void **state)
{
    (void)state;
    /* Keys are upper-cased; the value reads back exactly, $ and quotes included. */
    struct reply r = post_env("{\"my_var\": \"a b $HOME \\\"q\\\" 'x' `c` \\\\ end\"}");
    assert_int_equal(r.status, 200);
    assert_string_equal(json_string_value(json_object_get(r.json, "status")), "ok");
    reply_free(&r);
    r = run("printf '%s' \"$MY_VAR\"");
    assert_string_equal(content(&r), "a b $HOME \"q\" 'x' `c` \\ end");
    reply_free(&r);
    r = run("grep '^export MY_VAR=' ~/.bashrc");
    assert_string_equal(content(&r),
                        "export MY_VAR=\"a b \\$HOME \\\"q\\\" 'x' \\`c\\` \\\\ end\"");
    reply_free(&r);
    /* Again: the live value changes, ~/.bashrc keeps its line (OpenHands' rule). */
    r = post_env("{\"MY_VAR\": \"second\", \"OTHER\": \"o\"}");
    assert_int_equal(r.status, 200);
    reply_free(&r);
    r = run("echo $MY_VAR $OTHER; grep -c '^export MY_VAR=' ~/.bashrc");
    assert_string_equal(content(&r), "second o\n1");
    reply_free(&r);
    /* The shell sources ~/.bashrc when it starts: the persisted values survive a restart. */
    r = run("exit");
    assert_contains(meta_str(&r, "suffix"), "a new shell was started");
    reply_free(&r);
    r = run("printf '%s|%s' \"$MY_VAR\" \"$OTHER\"");
    assert_string_equal(content(&r), "a b $HOME \"q\" 'x' `c` \\ end|o");
    reply_free(&r);
    /* Nothing to add is fine. */
    r = post_env("{}");
    assert_int_equal(r.status, 200);
    reply_free(&r);
}

static void test_env_endpoint_errors(void **state)
{
    (void)state;
    struct reply r = post_env("[1]");
    assert_int_equal(r.status, 400);
    reply_free(&r);
    r = post_env("{\"1BAD\": \"x\"}");
    assert_int_equal(r.status, 400);
    assert_string_equal(json_string_value(json_object_get(r.json, "detail")),
                        "Invalid variable name: 1BAD");
    reply_free(&r);
    r = post_env("{\"N\": 5}");
    assert_int_equal(r.status, 400);
    assert_string_equal(json_string_value(json_object_get(r.json, "detail")),
                        "Invalid value for N (expected a string)");
    reply_free(&r);
    r = post_env("{\"prompt_command\": \"x\"}");
    assert_int_equal(r.status, 400);
    assert_contains(json_string_value(json_object_get(r.json, "detail")),
                    "Reserved variable name: PROMPT_COMMAND");
    reply_free(&r);
    r = http("GET", "/env", NULL);
    assert_int_equal(r.status, 405);
    reply_free(&r);

    /* A command runs: refused, and its output is still the agent's. */
    r = run_full("echo busy-out; sleep 1", false, 0.3);
    assert_int_equal(exit_code(&r), -1);
    reply_free(&r);
    r = post_env("{\"X\": \"y\"}");
    assert_int_equal(r.status, 409);
    reply_free(&r);
    r = run_full("", false, 5);
    assert_int_equal(exit_code(&r), 0);
    reply_free(&r);

    /* ~/.bashrc cannot be written: 500 with the shell's message; the variable is live. */
    r = run("mv ~/.bashrc ~/.bashrc.saved 2>/dev/null; mkdir ~/.bashrc");
    reply_free(&r);
    r = post_env("{\"UNWRITABLE\": \"v\"}");
    assert_int_equal(r.status, 500);
    assert_prefix(json_string_value(json_object_get(r.json, "detail")),
                  "Failed to add environment variables: ");
    reply_free(&r);
    r = run("echo $UNWRITABLE; rmdir ~/.bashrc; mv ~/.bashrc.saved ~/.bashrc 2>/dev/null; true");
    assert_string_equal(content(&r), "v");
    reply_free(&r);
}

static void test_env_output_not_stolen(void **state)
{
    (void)state;
    /* Output that arrived between commands belongs to the agent's next observation, not to
     * the hidden command of POST /env. */
    /* Double-forked: busybox ash dies when a job of its own ends at the prompt (docs). */
    struct reply r = run("((sleep 0.2; echo late-output) &)");
    reply_free(&r);
    usleep(500000);
    r = post_env("{\"QUIET\": \"1\"}");
    assert_int_equal(r.status, 200);
    reply_free(&r);
    r = run("echo $QUIET");
    assert_contains(content(&r), "late-output");
    assert_contains(content(&r), "1");
    reply_free(&r);
}

static void test_git_identity(void **state)
{
    (void)state;
    struct reply r = run("command -v git >/dev/null && echo yes || echo no");
    bool have = strcmp(content(&r), "yes") == 0;
    reply_free(&r);
    if (!have)
        skip();
    r = run("git config --global user.name; git config --global user.email; echo ~");
    char want[256];
    snprintf(want, sizeof want, "openhands\nopenhands@all-hands.dev\n%s", home_dir);
    assert_string_equal(content(&r), want);
    reply_free(&r);
}

/* ---- hostile commands that need no other uid ---------------------------------------------- */

static void test_exec_redirects_stdout(void **state)
{
    (void)state;
    /* busybox ash prints its prompt (our marker) on stderr: nothing can reroute it there. */
    if (shell_is_ash())
        skip();
    struct reply r = run("exec >/dev/null 2>&1");
    assert_int_equal(exit_code(&r), 0);
    reply_free(&r);
    /* The marker still arrives (through the terminal): the shell stays usable. */
    r = run("echo to-nowhere");
    assert_string_equal(content(&r), "");
    assert_int_equal(exit_code(&r), 0);
    reply_free(&r);
    r = run("exec >/dev/tty 2>&1");
    reply_free(&r);
    r = run("echo back");
    assert_string_equal(content(&r), "back");
    reply_free(&r);
}

static void test_exec_closes_stdin(void **state)
{
    (void)state;
    /* The shell reads EOF and exits; a new one takes over and the next observation says so. */
    struct reply r = run("exec 0<&-");
    assert_int_equal(exit_code(&r), 0);
    reply_free(&r);
    /* bash reports in its marker that its stdin is gone, so the executor replaces it at once
     * and the next command cannot be typed into the dying shell. busybox ash cannot say so:
     * there the next command must come after its exit (documented). */
    if (shell_is_ash())
        usleep(500000);
    r = run("echo still-here");
    assert_string_equal(content(&r), "still-here");
    assert_prefix(meta_str(&r, "suffix"),
                  shell_is_ash()
                      ? "\n[The command completed with exit code 0.]\n[The shell exited with "
                        "code 0 and a new shell was started in "
                      : "\n[The command completed with exit code 0.]\n[The shell's standard "
                        "input was closed or redirected, so a new shell was started in ");
    reply_free(&r);
    r = http("GET", "/alive", NULL);
    assert_int_equal(r.status, 200);
    reply_free(&r);
}

/* Children of pid that are zombies. */
static int zombie_children(pid_t parent)
{
    int zombies = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        char *close_paren = strrchr(buf, ')');
        char st;
        int ppid;
        if (close_paren && sscanf(close_paren + 1, " %c %d", &st, &ppid) == 2 && st == 'Z' &&
            ppid == parent)
            zombies++;
    }
    if (d)
        closedir(d);
    return zombies;
}

static void test_orphans_reaped(void **state)
{
    (void)state;
    /* Orphans come to the executor (a subreaper) and are reaped when they end. */
    struct reply r = run("for i in 1 2 3 4 5; do (sleep 0.2 &); done; setsid sleep 0.2 & true");
    assert_int_equal(exit_code(&r), 0);
    reply_free(&r);
    usleep(800000);
    assert_int_equal(zombie_children(executor_pid), 0);
}

static void test_disk_full(void **state)
{
    (void)state;
    /* Only root can make a small tmpfs; a private mount namespace keeps it away from the
     * host. The executor writes nothing itself, so a full disk only fails the agent's writes. */
    if (geteuid() != 0 || system("command -v unshare >/dev/null 2>&1") != 0)
        skip();
    struct reply r = run("mkdir -p full && unshare -m sh -c 'mount -t tmpfs -o size=64k none full "
                         "&& dd if=/dev/zero of=full/f bs=1k count=1000 2>&1; echo rc=$?'");
    assert_contains(content(&r), "No space left on device");
    assert_contains(content(&r), "rc=1");
    reply_free(&r);
    r = http("GET", "/alive", NULL);
    assert_int_equal(r.status, 200);
    reply_free(&r);
    r = run("ls full; rmdir full && echo clean");
    assert_string_equal(content(&r), "clean");
    reply_free(&r);
}

/* ---- start-up steps ------------------------------------------------------------------------ */

static void test_startup_first_command(void **state)
{
    (void)state;
    /* The setup script ran before the socket appeared, was sourced (its export stays), and
     * its output is in nobody's observation; the --env-file variables are there. */
    assert_true(setup_done_when_ready);
    struct reply r = run("printf '%s|%s' \"$SETUP_VAR\" \"$FILE_VAR\"");
    assert_string_equal(content(&r), "from-paddock-setup|from file $HOME \"q\"");
    reply_free(&r);
    /* .paddock/setup.sh wins: .openhands/setup.sh did not run. */
    r = run("test -e openhands-ran; echo $?");
    assert_string_equal(content(&r), "1");
    reply_free(&r);
}

static void test_startup_git_identity(void **state)
{
    (void)state;
    if (system("command -v git >/dev/null 2>&1") != 0)
        skip();
    /* GIT_USER_NAME from the container's environment, GIT_USER_EMAIL from the --env-file. */
    struct reply r = run("git config --global user.name; git config --global user.email");
    assert_string_equal(content(&r), "Dev Name\ndev@example.com");
    reply_free(&r);
}

static void test_startup_vars_persisted(void **state)
{
    (void)state;
    struct reply r = run("grep '^export FILE_VAR=' ~/.bashrc");
    assert_string_equal(content(&r), "export FILE_VAR=\"from file \\$HOME \\\"q\\\"\"");
    reply_free(&r);
    r = run("exit 0");
    reply_free(&r);
    /* A new shell: the setup script's export is gone, the persisted variable is not. */
    r = run("printf '%s|%s' \"$SETUP_VAR\" \"$FILE_VAR\"");
    assert_string_equal(content(&r), "|from file $HOME \"q\"");
    reply_free(&r);
}

static void test_setup_openhands_fallback(void **state)
{
    (void)state;
    assert_true(setup_done_when_ready);
    struct reply r = run("echo $SETUP_VAR");
    assert_string_equal(content(&r), "from-openhands-setup");
    reply_free(&r);
}

/* ---- hostile commands as the agent's own uid (root only) ---------------------------------- */

/* Processes (zombies included) whose real uid is uid. */
static int processes_of(uid_t uid)
{
    int count = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[300], line[256];
        snprintf(path, sizeof path, "/proc/%s/status", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        unsigned long u;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "Uid: %lu", &u) == 1) {
                count += u == uid;
                break;
            }
        fclose(f);
    }
    if (d)
        closedir(d);
    return count;
}

static void append(char **s, const char *more)
{
    size_t a = strlen(*s), b = strlen(more);
    char *p = realloc(*s, a + b + 1);
    assert_non_null(p);
    memcpy(p + a, more, b + 1);
    *s = p;
}

/* Refuses to go on unless the shell really runs as the fresh agent uid. */
static void assert_shell_is_agent(void)
{
    char want[32];
    /* Job notices of earlier tests may come first: the last line counts. */
    struct reply r = run("id -u");
    const char *last = strrchr(content(&r), '\n');
    last = last ? last + 1 : content(&r);
    snprintf(want, sizeof want, "%lu", (unsigned long)agent_uid);
    if (strcmp(last, want) != 0)
        fail_msg("the shell runs as uid %s, not %s: hostile tests not run", last, want);
    assert_true(agent_uid != 0);
    reply_free(&r);
}

static void wait_for_processes(uid_t uid, int want)
{
    double deadline = now() + 10;
    while (processes_of(uid) != want && now() < deadline)
        usleep(50000);
    assert_int_equal(processes_of(uid), want);
}

static void test_agent_kill_minus_one_builtin(void **state)
{
    (void)state;
    assert_shell_is_agent();
    /* Jobs of the shell under bash; under busybox ash orphans (a job of its own that ends at
     * the prompt ends ash too: docs/protocol.md). */
    struct reply r =
        run(shell_is_ash() ? "(sleep 100 &); (sleep 100 &)" : "sleep 100 & sleep 100 &");
    reply_free(&r);
    assert_int_equal(processes_of(agent_uid), 3);
    /* bash's own kill: every other process of the uid dies, the shell (the caller) lives. */
    r = run("kill -9 -1");
    assert_int_equal(exit_code(&r), 0);
    reply_free(&r);
    wait_for_processes(agent_uid, 1);
    r = run("echo ok");
    assert_contains(content(&r), "ok");
    reply_free(&r);
}

static void test_agent_kill_minus_one_external(void **state)
{
    (void)state;
    assert_shell_is_agent();
    /* kill(1) as a process of its own: the shell dies too, a new one is started. */
    struct reply r = run("/bin/sh -c 'kill -9 -1'");
    assert_int_equal(exit_code(&r), 137);
    assert_contains(meta_str(&r, "suffix"), "\n[The shell exited with code 137 and a new shell "
                                            "was started in ");
    reply_free(&r);
    r = http("GET", "/alive", NULL);
    assert_int_equal(r.status, 200);
    reply_free(&r);
    r = run("echo ok");
    assert_string_equal(content(&r), "ok");
    reply_free(&r);
    wait_for_processes(agent_uid, 1);
}

static void test_agent_fork_bomb(void **state)
{
    (void)state;
    assert_shell_is_agent();
    /* Under a process limit (RLIMIT_NPROC for this uid, as a pids cgroup would do in the
     * container) the bomb hits the limit; the executor is another uid, unaffected. bash's
     * bombs keep retrying in the background; busybox ash's give up at once. */
    char *seen = strdup("");
    struct reply r = run_full("( ulimit -u 48; bomb() { bomb | bomb & }; bomb )", false, 3);
    append(&seen, content(&r));
    reply_free(&r);
    int most = 0;
    for (int i = 0; i < 50; i++) {
        int n = processes_of(agent_uid);
        most = n > most ? n : most;
        usleep(20000);
    }
    assert_true(most <= 49); /* never past the limit (+1: the shell's own count) */
    r = http("GET", "/alive", NULL);
    assert_int_equal(r.status, 200);
    reply_free(&r);
    r = http("GET", "/server_info", NULL);
    assert_int_equal(r.status, 200);
    reply_free(&r);
    /* The shell still answers; one kill -9 -1 ends the bomb, the executor reaps it all. */
    r = run_full("kill -9 -1", false, 10);
    append(&seen, content(&r));
    reply_free(&r);
    wait_for_processes(agent_uid, 1);
    assert_int_equal(zombie_children(executor_pid), 0);
    r = run("echo survived");
    append(&seen, content(&r));
    assert_contains(content(&r), "survived");
    reply_free(&r);
    /* The limit was reached: fork failed somewhere. */
    assert_contains(seen, "Resource temporarily unavailable");
    free(seen);
}

static void test_agent_not_root(void **state)
{
    (void)state;
    skip(); /* the agent-uid group needs root to start the shell as another uid */
}

/* ---- ports of OpenHands' tests/runtime/test_bash.py and test_env_vars.py ----------------- */

#define TIMEOUT_TEMPLATE_TEXT                                                                      \
    "You may wait longer to see additional output by sending empty command '', send other "        \
    "commands to interact with the current process, send keys (\"C-c\", \"C-z\", \"C-d\") to "     \
    "interrupt/kill the previous command before sending your new command, or use the timeout "     \
    "parameter in execute_bash for future commands."

static bool have_program(const char *name)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", name);
    return system(cmd) == 0;
}

/* A port no other test on this machine is likely to use. */
static int test_port(void)
{
    return 20000 + (int)(getpid() % 20000);
}

static void test_oh_bash_server(void **state)
{
    (void)state;
    if (!have_program("python3"))
        skip();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "python3 -u -m http.server %d --bind 127.0.0.1", test_port());
    struct reply r = run_full(cmd, false, 1);
    assert_int_equal(exit_code(&r), -1);
    assert_contains(content(&r), "Serving HTTP on");
    assert_string_equal(meta_str(&r, "suffix"),
                        "\n[The command timed out after 1.0 seconds. " TIMEOUT_TEMPLATE_TEXT "]");
    reply_free(&r);
    r = run_full("C-c", true, 30);
    assert_int_equal(exit_code(&r), 0); /* python exits cleanly on KeyboardInterrupt */
    assert_contains(content(&r), "Keyboard interrupt received, exiting.");
    assert_string_equal(meta_str(&r, "working_dir"), work_dir);
    reply_free(&r);
    r = run_full("ls", false, 1);
    assert_int_equal(exit_code(&r), 0);
    assert_null(strstr(content(&r), "Keyboard interrupt received, exiting."));
    reply_free(&r);
    /* Again: the port is free. */
    r = run_full(cmd, false, 1);
    assert_int_equal(exit_code(&r), -1);
    assert_contains(content(&r), "Serving HTTP on");
    reply_free(&r);
    r = run_full("C-c", true, 30);
    reply_free(&r);
}

static void test_oh_background_server(void **state)
{
    (void)state;
    if (!have_program("python3") || !have_program("curl"))
        skip();
    char cmd[160];
    snprintf(cmd, sizeof cmd, "python3 -m http.server %d --bind 127.0.0.1 > /dev/null 2>&1 &",
             test_port());
    struct reply r = run(cmd);
    assert_int_equal(exit_code(&r), 0);
    reply_free(&r);
    /* The job keeps serving between commands. */
    snprintf(cmd, sizeof cmd,
             "for i in 1 2 3 4 5 6 7 8 9 10; do curl -s http://127.0.0.1:%d/ && break; sleep "
             "0.3; done",
             test_port());
    r = run(cmd);
    assert_int_equal(exit_code(&r), 0);
    assert_contains(content(&r), "Directory listing for");
    reply_free(&r);
    r = run("kill %1 && wait %1; echo stopped");
    assert_contains(content(&r), "stopped");
    reply_free(&r);
}

static void test_oh_multiline_commands(void **state)
{
    (void)state;
    struct reply r = run("echo \\\n -e \"foo\"");
    assert_int_equal(exit_code(&r), 0);
    assert_contains(content(&r), "foo");
    reply_free(&r);
    r = run("printf 'hello\\nworld\\n'");
    assert_contains(content(&r), "hello\nworld");
    assert_null(strstr(content(&r), ">")); /* test_no_ps2_in_output */
    reply_free(&r);
    r = run("printf 'a\\n\\n\\nz\\n'");
    assert_contains(content(&r), "\n\n\n");
    reply_free(&r);
}

static void test_oh_complex_commands(void **state)
{
    (void)state;
    struct reply r = run(
        "count=0; tries=0; while [ $count -lt 3 ]; do result=$(echo \"Heads\"); "
        "tries=$((tries+1)); echo \"Flip $tries: $result\"; if [ \"$result\" = \"Heads\" ]; then "
        "count=$((count+1)); else count=0; fi; done; echo \"Got 3 heads in a row after $tries "
        "flips!\";");
    assert_int_equal(exit_code(&r), 0);
    assert_contains(content(&r), "Got 3 heads in a row after 3 flips!");
    reply_free(&r);
}

static void test_oh_multiline_command_loop(void **state)
{
    (void)state;
    if (shell_is_ash())
        skip(); /* {01..04} is bash */
    struct reply r = run("mkdir -p _modules && \\\nfor month in {01..04}; do\n    for day in "
                         "{01..05}; do\n        touch \"_modules/2024-${month}-${day}-sample.md\"\n"
                         "    done\ndone && echo \"created files\"\n");
    assert_int_equal(exit_code(&r), 0);
    assert_contains(content(&r), "created files");
    reply_free(&r);
    r = run("for file in _modules/*.md; do\n    new_date=$(echo $file | sed -E "
            "'s/2024-(01|02|03|04)-/2024-/;s/2024-01/2024-08/;s/2024-02/2024-09/;s/2024-03/"
            "2024-10/;s/2024-04/2024-11/')\n    mv \"$file\" \"$new_date\"\ndone && echo "
            "\"success\"\n");
    assert_int_equal(exit_code(&r), 0);
    assert_contains(content(&r), "success");
    reply_free(&r);
    r = run("ls _modules | wc -l; rm -r _modules"); /* the renames merge months: 5 names */
    assert_string_equal(content(&r), "5");
    reply_free(&r);
}

static void test_oh_multiple_multiline_commands(void **state)
{
    (void)state;
    if (shell_is_ash())
        skip(); /* echo -e */
    const char *cmds[] = {
        "ls -l",
        "echo -e \"hello\nworld\"",
        "echo -e \"hello it's me\"",
        "echo \\\n    -e 'hello' \\\n    world",
        "echo -e 'hello\\nworld\\nare\\nyou\\nthere?'",
        "echo -e 'hello\nworld\nare\nyou\n\nthere?'",
        "echo -e 'hello\nworld \"'",
    };
    const char *want[] = {"total 0",
                          "hello\nworld",
                          "hello it's me",
                          "hello world",
                          "hello\nworld\nare\nyou\nthere?",
                          "hello\nworld\nare\nyou\n\nthere?",
                          "hello\nworld \""};
    char joined[1024] = "";
    for (size_t i = 0; i < 7; i++)
        snprintf(joined + strlen(joined), sizeof joined - strlen(joined), "%s%s", i ? "\n" : "",
                 cmds[i]);
    struct reply r = run("mkdir -p empty && cd empty");
    reply_free(&r);
    r = run(joined);
    assert_string_equal(observation_kind(&r), "error");
    assert_contains(content(&r), "Cannot execute multiple commands at once");
    for (size_t i = 0; i < 7; i++) {
        char item[300];
        snprintf(item, sizeof item, "\n(%zu) %s", i + 1, cmds[i]);
        assert_contains(content(&r), item);
    }
    reply_free(&r);
    for (size_t i = 0; i < 7; i++) {
        r = run(cmds[i]);
        assert_string_equal(observation_kind(&r), "run");
        assert_int_equal(exit_code(&r), 0);
        assert_contains(content(&r), want[i]);
        reply_free(&r);
    }
    r = run("cd .. && rmdir empty");
    reply_free(&r);
}

static void test_oh_basic_command(void **state)
{
    (void)state;
    struct reply r = run("echo 'hello world'");
    assert_contains(content(&r), "hello world");
    reply_free(&r);
    r = run("nonexistent_command");
    assert_int_equal(exit_code(&r), 127);
    assert_contains(content(&r), shell_is_ash() ? "nonexistent_command: not found"
                                                : "nonexistent_command: command not found");
    reply_free(&r);
    r = run("echo 'hello   world    with\nspecial  chars'");
    assert_contains(content(&r), "hello   world    with\nspecial  chars");
    reply_free(&r);
    r = run("echo \"first\" && echo \"second\" && echo \"third\"");
    assert_string_equal(content(&r), "first\nsecond\nthird");
    reply_free(&r);
}

static void test_oh_interactive_command(void **state)
{
    (void)state;
    /* No input comes: the 1 s no-change timeout returns (this executor runs with 1 s). */
    char *body =
        run_body("read -p \"Enter name: \" name && echo \"Hello $name\"", false, 30, false);
    struct reply r = http("POST", "/execute_action", body);
    free(body);
    assert_contains(content(&r), "Enter name:");
    assert_contains(meta_str(&r, "suffix"), "[The command has no new output after 1 seconds.");
    reply_free(&r);
    r = run_full("John", true, 5);
    assert_contains(content(&r), "Hello John");
    assert_contains(meta_str(&r, "suffix"), "[The command completed with exit code 0.]");
    reply_free(&r);
    r = run("cat << EOF\nline 1\nline 2\nEOF");
    assert_contains(content(&r), "line 1\nline 2");
    assert_int_equal(exit_code(&r), 0);
    reply_free(&r);
}

static void test_oh_long_output(void **state)
{
    (void)state;
    struct reply r = run_full("for i in $(seq 1 5000); do echo \"Line $i\"; done", false, 10);
    assert_int_equal(exit_code(&r), 0);
    assert_contains(content(&r), "Line 1\n");
    assert_contains(content(&r), "Line 5000");
    assert_string_equal(meta_str(&r, "prefix"), "");
    reply_free(&r);
}

static void test_oh_long_output_exceed_history_limit(void **state)
{
    (void)state;
    struct reply r = run_full("for i in $(seq 1 50000); do echo \"Line $i\"; done", false, 30);
    assert_int_equal(exit_code(&r), 0);
    assert_contains(meta_str(&r, "prefix"), "Previous command outputs are truncated");
    assert_contains(content(&r), "Line 40000");
    assert_contains(content(&r), "Line 50000");
    assert_null(strstr(content(&r), "Line 38999\n"));
    reply_free(&r);
}

static void test_oh_command_backslash(void **state)
{
    (void)state;
    struct reply r = run("mkdir -p bs_dir && echo \"implemented_function\" > bs_dir/file_1.txt");
    assert_int_equal(exit_code(&r), 0);
    reply_free(&r);
    r = run("find bs_dir -type f -exec grep -l \"implemented_function\" {} \\;");
    assert_int_equal(exit_code(&r), 0);
    assert_string_equal(content(&r), "bs_dir/file_1.txt");
    reply_free(&r);
    r = run("rm -r bs_dir");
    reply_free(&r);
}

static void test_oh_command_output_continuation(void **state)
{
    (void)state;
    /* OpenHands' test with its timings scaled down (sleep 3 / timeout 2.5 -> 0.6 / 0.5). */
    struct reply r = run_full("for i in 1 2 3 4 5; do echo $i; sleep 0.6; done", false, 0.5);
    assert_string_equal(content(&r), "1");
    assert_string_equal(meta_str(&r, "prefix"), "");
    assert_contains(meta_str(&r, "suffix"), "[The command timed out after 0.5 seconds.");
    reply_free(&r);
    for (int expected = 2; expected <= 5; expected++) {
        char want[8];
        snprintf(want, sizeof want, "%d", expected);
        r = run_full("", false, 0.6);
        assert_string_equal(meta_str(&r, "prefix"),
                            "[Below is the output of the previous command.]\n");
        assert_string_equal(content(&r), want);
        assert_contains(meta_str(&r, "suffix"), "[The command timed out after 0.6 seconds.");
        reply_free(&r);
    }
    r = run_full("", false, 5);
    assert_contains(meta_str(&r, "suffix"), "[The command completed with exit code 0.]");
    reply_free(&r);
}

static void test_oh_long_running_command_follow_by_execute(void **state)
{
    (void)state;
    struct reply r = run_full("for i in 1 2 3; do echo $i; sleep 0.6; done", false, 0.5);
    assert_contains(content(&r), "1");
    assert_int_equal(exit_code(&r), -1);
    assert_string_equal(meta_str(&r, "prefix"), "");
    reply_free(&r);
    r = run_full("", false, 0.5);
    assert_contains(content(&r), "2");
    assert_string_equal(meta_str(&r, "prefix"), "[Below is the output of the previous command.]\n");
    assert_int_equal(exit_code(&r), -1);
    reply_free(&r);
    r = run_full("sleep 15", false, 0.5);
    assert_null(strstr(content(&r), "3"));
    assert_string_equal(meta_str(&r, "prefix"), "[Below is the output of the previous command.]\n");
    assert_contains(meta_str(&r, "suffix"), "The previous command is still running");
    assert_int_equal(exit_code(&r), -1);
    reply_free(&r);
    r = run_full("", false, 5);
    assert_contains(content(&r), "3");
    assert_contains(meta_str(&r, "suffix"), "[The command completed with exit code 0.]");
    reply_free(&r);
}

static void test_oh_python_interactive_input(void **state)
{
    (void)state;
    if (!have_program("python3"))
        skip();
    const char *script = "python3 -c \"name = input('Enter your name: '); age = input('Enter your "
                         "age: '); print(f'Hello {name}, you are {age} years old')\"";
    for (int without_set_input = 0; without_set_input < 2; without_set_input++) {
        char *body = run_body(script, false, 30, false);
        struct reply r = http("POST", "/execute_action", body);
        free(body);
        assert_contains(content(&r), "Enter your name:");
        assert_int_equal(exit_code(&r), -1);
        reply_free(&r);
        if (without_set_input) {
            r = run_full("Alice", false, 5);
            assert_null(strstr(content(&r), "Enter your age:"));
            assert_contains(meta_str(&r, "suffix"), "Your command \"Alice\" is NOT executed. The "
                                                    "previous command is still running");
            assert_int_equal(exit_code(&r), -1);
            reply_free(&r);
        }
        r = run_full("Alice", true, 1);
        assert_contains(content(&r), "Enter your age:");
        assert_int_equal(exit_code(&r), -1);
        reply_free(&r);
        r = run_full("25", true, 5);
        assert_contains(content(&r), "Hello Alice, you are 25 years old");
        assert_int_equal(exit_code(&r), 0);
        assert_contains(meta_str(&r, "suffix"), "[The command completed with exit code 0.]");
        reply_free(&r);
    }
}

static void test_oh_bash_remove_prefix(void **state)
{
    (void)state;
    if (!have_program("git"))
        skip();
    struct reply r = run("mkdir -p rp && cd rp && git init -q && git remote add origin "
                         "https://github.com/All-Hands-AI/OpenHands");
    assert_int_equal(exit_code(&r), 0);
    reply_free(&r);
    r = run("git remote -v");
    assert_int_equal(exit_code(&r), 0);
    assert_contains(content(&r), "https://github.com/All-Hands-AI/OpenHands");
    assert_null(strstr(content(&r), "git remote -v"));
    reply_free(&r);
    r = run("cd .. && rm -rf rp");
    reply_free(&r);
}

static void test_oh_env_vars_os_environ(void **state)
{
    (void)state;
    /* The container's environment reaches the shell (SANDBOX_ENV_FOOBAR=BAZ in OpenHands). */
    struct reply r = run("echo $FOOBAR");
    assert_int_equal(exit_code(&r), 0);
    assert_string_equal(content(&r), "BAZ");
    reply_free(&r);
}

static void test_oh_env_vars_runtime_operations(void **state)
{
    (void)state;
    struct reply r = post_env("{\"QUUX\": \"abc\\\"def\"}");
    assert_int_equal(r.status, 200);
    reply_free(&r);
    r = run("echo $QUUX");
    assert_string_equal(content(&r), "abc\"def");
    reply_free(&r);
    r = post_env("{\"FOOBAR\": \"xyz\"}");
    reply_free(&r);
    r = run("echo $QUUX $FOOBAR");
    assert_string_equal(content(&r), "abc\"def xyz");
    reply_free(&r);
    /* Adding nothing changes nothing. */
    r = run("env | sort");
    char *before = strdup(content(&r));
    reply_free(&r);
    r = post_env("{}");
    reply_free(&r);
    r = run("env | sort");
    assert_string_equal(content(&r), before);
    free(before);
    reply_free(&r);
    r = post_env("{\"QUUX\": \"new_value\"}");
    reply_free(&r);
    r = run("echo $QUUX");
    assert_string_equal(content(&r), "new_value");
    reply_free(&r);
    r = run("export FOOBAR=BAZ"); /* as test_oh_env_vars_os_environ expects */
    reply_free(&r);
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
        cmocka_unit_test(test_single_commands_spanning_lines),
        cmocka_unit_test(test_multiple_commands_refused),
        cmocka_unit_test(test_unparsable_sent_as_is),
        cmocka_unit_test(test_find_exec),
        cmocka_unit_test(test_long_command),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_big_output_truncated),
        cmocka_unit_test(test_line_window),
        cmocka_unit_test(test_background_pid),
        cmocka_unit_test(test_background_job_survives),
        cmocka_unit_test(test_secrets_not_inherited),
        cmocka_unit_test(test_py_interpreter_path),
        cmocka_unit_test(test_hard_timeout_then_ctrl_c),
        cmocka_unit_test(test_soft_timeout_and_continue),
        cmocka_unit_test(test_input_to_running_program),
        cmocka_unit_test(test_is_input_long_running_python_like),
        cmocka_unit_test(test_input_with_several_commands_refused),
        cmocka_unit_test(test_python_repl),
        cmocka_unit_test(test_ctrl_c_loop),
        cmocka_unit_test(test_keys_at_the_prompt),
        cmocka_unit_test(test_output_ending_like_a_marker),
        cmocka_unit_test(test_nothing_running),
        cmocka_unit_test(test_nothing_running_command_is_empty),
        cmocka_unit_test(test_static_in_cwd),
        cmocka_unit_test(test_static_timeout_and_busy_main),
        cmocka_unit_test(test_env_endpoint),
        cmocka_unit_test(test_env_endpoint_errors),
        cmocka_unit_test(test_env_output_not_stolen),
        cmocka_unit_test(test_git_identity),
        cmocka_unit_test(test_exec_redirects_stdout),
        cmocka_unit_test(test_exec_closes_stdin),
        cmocka_unit_test(test_orphans_reaped),
        cmocka_unit_test(test_disk_full),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_body_too_large),
        cmocka_unit_test(test_concurrent_requests_in_order),
        cmocka_unit_test(test_slow_client_does_not_block),
        cmocka_unit_test(test_shell_exit_restarts),
        cmocka_unit_test(test_oh_env_vars_os_environ),
        cmocka_unit_test(test_oh_bash_server),
        cmocka_unit_test(test_oh_background_server),
        cmocka_unit_test(test_oh_multiline_commands),
        cmocka_unit_test(test_oh_complex_commands),
        cmocka_unit_test(test_oh_multiline_command_loop),
        cmocka_unit_test(test_oh_multiple_multiline_commands),
        cmocka_unit_test(test_oh_basic_command),
        cmocka_unit_test(test_oh_interactive_command),
        cmocka_unit_test(test_oh_long_output),
        cmocka_unit_test(test_oh_long_output_exceed_history_limit),
        cmocka_unit_test(test_oh_command_backslash),
        cmocka_unit_test(test_oh_command_output_continuation),
        cmocka_unit_test(test_oh_long_running_command_follow_by_execute),
        cmocka_unit_test(test_oh_python_interactive_input),
        cmocka_unit_test(test_oh_bash_remove_prefix),
        cmocka_unit_test(test_oh_env_vars_runtime_operations),
    };
    const struct CMUnitTest startup_tests[] = {
        cmocka_unit_test(test_startup_first_command),
        cmocka_unit_test(test_startup_git_identity),
        cmocka_unit_test(test_startup_vars_persisted),
    };
    const struct CMUnitTest openhands_setup_tests[] = {
        cmocka_unit_test(test_setup_openhands_fallback),
    };
    const struct CMUnitTest agent_tests[] = {
        cmocka_unit_test(test_agent_kill_minus_one_builtin),
        cmocka_unit_test(test_agent_kill_minus_one_external),
        cmocka_unit_test(test_agent_fork_bomb),
    };
    const struct CMUnitTest not_root_tests[] = {
        cmocka_unit_test(test_agent_not_root),
    };
    /* EXECUTOR_TEST_GROUP=NAME runs one group only (while working on it). */
    const char *only = getenv("EXECUTOR_TEST_GROUP");
#define WANT(name) (!only || !*only || strcmp(only, name) == 0)
    int failed = 0;
    grp = &group_default;
    if (WANT("executor"))
        failed += cmocka_run_group_tests_name("executor", tests, start_executor, stop_executor);
    grp = &group_startup;
    if (WANT("startup"))
        failed +=
            cmocka_run_group_tests_name("startup", startup_tests, start_executor, stop_executor);
    grp = &group_startup_openhands;
    if (WANT("startup-openhands"))
        failed += cmocka_run_group_tests_name("startup-openhands", openhands_setup_tests,
                                              start_executor, stop_executor);
    grp = &group_agent;
    if (WANT("agent-uid") && geteuid() == 0)
        failed +=
            cmocka_run_group_tests_name("agent-uid", agent_tests, start_executor, stop_executor);
    else if (WANT("agent-uid"))
        failed += cmocka_run_group_tests_name("agent-uid", not_root_tests, NULL, NULL);
#undef WANT
    return failed;
}
