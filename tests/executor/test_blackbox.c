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

#include "bb.h"

static struct bb ex;

/* A test that fails with its program still running leaves the shell idle for the next. */
#define SETTLED(f) cmocka_unit_test_teardown(f, bb_settle_shell)

/* What the group's executor is started with. */
struct group {
    const char *setup_dir; /* workspace dir holding setup.sh (NULL: none) */
    bool both_setups;      /* also an .openhands/setup.sh that must not run */
    bool env_file;         /* --env-file with two variables; GIT_USER_NAME in the environment */
    bool agent_uid;        /* root only: the shell runs as a fresh uid */
    /* root only: the workspace is a tiny tmpfs of the agent's (uid 65534) */
    const char *workspace_tmpfs;
    bool hide_bash; /* root only: no bash anywhere the executor looks, no --shell */
};
static const struct group *grp;
static const struct group group_default = {0};
static const struct group group_startup = {
    .setup_dir = ".paddock", .both_setups = true, .env_file = true};
static const struct group group_startup_openhands = {.setup_dir = ".openhands"};
static const struct group group_agent = {.agent_uid = true};
#define FULL_DISK_UID 65534
static const struct group group_full_disk = {.workspace_tmpfs =
                                                 "size=256k,mode=0755,uid=65534,gid=65534"};
static const struct group group_no_bash = {.hide_bash = true};
static uid_t agent_uid;

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

/* ---- start and stop --------------------------------------------------------------------- */

/* The workspace and files a group starts with. */
static void prepare_group(void)
{
    char path[256];
    if (grp->setup_dir) {
        mkdir(ex.work, 0755);
        snprintf(path, sizeof path, "%s/%s", ex.work, grp->setup_dir);
        mkdir(path, 0755);
        snprintf(path, sizeof path, "%s/%s/setup.sh", ex.work, grp->setup_dir);
        /* Sourced in the session: what it exports stays; what it prints is nobody's. */
        write_file(path,
                   strcmp(grp->setup_dir, ".paddock") == 0
                       ? "echo noise from setup\nexport SETUP_VAR=from-paddock-setup\n"
                         "sleep 0.3\necho done > setup-done\n"
                       : "export SETUP_VAR=from-openhands-setup\necho done > setup-done\n",
                   0644);
    }
    if (grp->both_setups) {
        snprintf(path, sizeof path, "%s/.openhands", ex.work);
        mkdir(path, 0755);
        snprintf(path, sizeof path, "%s/.openhands/setup.sh", ex.work);
        write_file(path, "export SETUP_VAR=wrong\necho ran > openhands-ran\n", 0644);
    }
    if (grp->env_file) {
        snprintf(path, sizeof path, "%s/vars.env", ex.dir);
        write_file(path,
                   "# start-up variables\nfile_var=from file $HOME \"q\"\n"
                   "GIT_USER_EMAIL=dev@example.com\n",
                   0644);
    }
}

static int start_executor(void **state)
{
    (void)state;
    static char uid[32], env_file[128];
    static const char *args[8];
    /* A plain variable that must reach the shell (the key-looking one the harness sets must
     * not). */
    struct bb_options o = {.own_home = true, .ready_file = "setup-done", .env = {"FOOBAR=BAZ"}};
    int i = 0;
    if (grp->agent_uid) {
        /* A uid nothing else on this machine uses: kill -9 -1 and RLIMIT_NPROC as that uid
         * reach only the test's own processes. */
        agent_uid = (uid_t)(200000 + getpid() % 100000);
        o.dir_mode = 0755;
        snprintf(uid, sizeof uid, "%lu", (unsigned long)agent_uid);
        args[i++] = "--user-id";
        args[i++] = uid;
    }
    if (grp->workspace_tmpfs) {
        o.workspace_tmpfs = grp->workspace_tmpfs;
        o.dir_mode = 0755;
        snprintf(uid, sizeof uid, "%d", FULL_DISK_UID);
        args[i++] = "--user-id";
        args[i++] = uid;
    }
    if (grp->hide_bash) {
        static const char *const bash[] = {"/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash",
                                           NULL};
        o.hide = bash;
        o.shell = ""; /* the executor picks the shell itself */
    }
    if (grp->env_file) {
        o.env[1] = "GIT_USER_NAME=Dev Name";
        args[i++] = "--env-file";
        args[i++] = env_file;
    }
    args[i] = NULL;
    o.args = args;
    if (bb_prepare(&ex, &o) < 0)
        return -1;
    snprintf(env_file, sizeof env_file, "%s/vars.env", ex.dir);
    prepare_group();
    return bb_launch(&ex);
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
    int rc = bb_stop(&ex);
    if (grp->agent_uid)
        kill_processes_of(agent_uid);
    return rc;
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
    struct bb_reply r = bb_run(&ex, "echo hi");
    assert_string_equal(json_string_value(json_object_get(r.json, "observation")), "run");
    assert_string_equal(bb_content(&r), "hi");
    assert_int_equal(bb_exit_code(&r), 0);
    assert_true(json_is_true(json_object_get(r.json, "success")));
    assert_string_equal(json_string_value(json_object_get(r.json, "message")),
                        "Command `echo hi` executed with exit code 0.");
    json_t *extras = json_object_get(r.json, "extras");
    assert_string_equal(json_string_value(json_object_get(extras, "command")), "echo hi");
    assert_true(json_is_false(json_object_get(extras, "hidden")));
    assert_int_equal(json_integer_value(json_object_get(bb_meta(&r), "pid")), -1);
    assert_string_equal(bb_meta_str(&r, "prefix"), "");
    assert_string_equal(bb_meta_str(&r, "suffix"), "\n[The command completed with exit code 0.]");
    assert_non_null(bb_meta_str(&r, "username"));
    assert_non_null(bb_meta_str(&r, "hostname"));
    assert_string_equal(bb_meta_str(&r, "working_dir"), ex.work);
    assert_true(json_is_string(json_object_get(bb_meta(&r), "py_interpreter_path")));
    bb_reply_free(&r);
}

/* The executor's minor page faults so far (/proc/PID/stat, field 10). */
static unsigned long long minor_faults(pid_t pid)
{
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    unsigned long long flt = 0;
    const char *q = strrchr(text, ')'); /* the name may hold anything */
    assert_non_null(q);
    assert_int_equal(sscanf(q + 2, "%*c %*d %*d %*d %*d %*d %*u %llu", &flt), 1);
    return flt;
}

/* A quick command maps no memory of its own: musl's allocator gave a size class's page back
 * when the class's last block was freed, so every reply mapped, faulted in and unmapped one
 * (jalloc_hold_classes). Once warm, 40 commands fault in fewer pages than one each. */
static void test_quick_commands_fault_in_no_pages(void **state)
{
    (void)state;
    /* AddressSanitizer's allocator quarantines what is freed and hands out fresh memory: the
     * host build under -Dsanitize=true faults in pages by design. */
    char maps[64], line[512];
    snprintf(maps, sizeof maps, "/proc/%d/maps", (int)ex.pid);
    FILE *f = fopen(maps, "r");
    assert_non_null(f);
    bool asan = false;
    while (!asan && fgets(line, sizeof line, f))
        asan = strstr(line, "libasan") != NULL;
    fclose(f);
    if (asan)
        skip();
    for (int i = 0; i < 10; i++)
        bb_expect_run(&ex, "echo hi", 0, "hi");
    unsigned long long before = minor_faults(ex.pid);
    for (int i = 0; i < 40; i++)
        bb_expect_run(&ex, "echo hi", 0, "hi");
    unsigned long long faults = minor_faults(ex.pid) - before;
    if (faults >= 10)
        fail_msg("40 commands faulted in %llu pages of the executor", faults);
}

static void test_cd_persists(void **state)
{
    (void)state;
    struct bb_reply r = bb_run(&ex, "cd /tmp");
    assert_int_equal(bb_exit_code(&r), 0);
    assert_string_equal(bb_meta_str(&r, "working_dir"), "/tmp");
    bb_reply_free(&r);
    r = bb_run(&ex, "pwd");
    assert_string_equal(bb_content(&r), "/tmp");
    assert_string_equal(bb_meta_str(&r, "working_dir"), "/tmp");
    bb_reply_free(&r);
    char back[160];
    snprintf(back, sizeof back, "cd %s", ex.work);
    r = bb_run(&ex, back);
    assert_string_equal(bb_meta_str(&r, "working_dir"), ex.work);
    bb_reply_free(&r);
}

static void test_export_persists(void **state)
{
    (void)state;
    struct bb_reply r = bb_run(&ex, "export X=1");
    bb_reply_free(&r);
    bb_expect_run(&ex, "echo $X", BB_ANY_EXIT, "1");
}

static void test_exit_codes(void **state)
{
    (void)state;
    struct bb_reply r = bb_run(&ex, "sh -c 'exit 3'");
    assert_int_equal(bb_exit_code(&r), 3);
    assert_true(json_is_false(json_object_get(r.json, "success")));
    assert_string_equal(json_string_value(json_object_get(r.json, "message")),
                        "Command `sh -c 'exit 3'` executed with exit code 3.");
    assert_string_equal(bb_meta_str(&r, "suffix"), "\n[The command completed with exit code 3.]");
    bb_reply_free(&r);
    bb_expect_run(&ex, "false", 1, NULL);
    /* $? is the user's, not the marker's. */
    bb_expect_run(&ex, "false", BB_ANY_EXIT, NULL);
    bb_expect_run(&ex, "echo $?", BB_ANY_EXIT, "1");
}

static void test_openhands_serialisation_accepted(void **state)
{
    (void)state;
    /* CmdRunAction as OpenHands serialises it: every dataclass field, message and timeout. */
    struct bb_reply r = bb_action(
        &ex, "{\"action\": {\"action\": \"run\", \"timeout\": 120.0, \"message\": \"Running "
             "command: echo ok\", \"args\": {\"command\": \"echo ok\", \"is_input\": false, "
             "\"thought\": \"\", \"blocking\": false, \"is_static\": false, \"cwd\": null, "
             "\"hidden\": false, \"confirmation_state\": \"confirmed\", \"security_risk\": "
             "-1}}}");
    assert_string_equal(bb_content(&r), "ok");
    bb_reply_free(&r);
}

static void test_multiline_output(void **state)
{
    (void)state;
    struct bb_reply r = bb_run(&ex, "printf 'a\\nb\\n\\nc\\n\\n\\n'");
    assert_string_equal(bb_content(&r), "a\nb\n\nc");
    bb_reply_free(&r);
    bb_expect_run(&ex, "printf 'no newline'", BB_ANY_EXIT, "no newline");
}

/* One command that spans lines runs whole (OpenHands' test_bash.py multi-line cases). */
static void expect_output(const char *command, const char *want)
{
    struct bb_reply r = bb_run(&ex, command);
    if (strcmp(json_string_value(json_object_get(r.json, "observation")), "run") != 0)
        fail_msg("<<%s>> was not run: %s", command, bb_content(&r));
    assert_string_equal(bb_content(&r), want);
    assert_int_equal(bb_exit_code(&r), 0);
    bb_reply_free(&r);
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
    struct bb_reply r = bb_run(&ex, "touch refused-1\ntouch refused-2");
    const char *want = "ERROR: Cannot execute multiple commands at once.\n"
                       "Please run each command separately OR chain them into a single command "
                       "via && or ;\nProvided commands:\n(1) touch refused-1\n(2) touch refused-2";
    assert_string_equal(json_string_value(json_object_get(r.json, "observation")), "error");
    assert_string_equal(bb_content(&r), want);
    assert_string_equal(json_string_value(json_object_get(r.json, "message")), want);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(r.json, "extras"), "error_id")), "");
    bb_reply_free(&r);
    /* Nothing ran. */
    bb_expect_run(&ex, "test -e refused-1 || test -e refused-2; echo $?", BB_ANY_EXIT, "1");

    /* A heredoc is part of its command; comments stay with the command before them. */
    r = bb_run(&ex, "cat <<EOF\nbody\nEOF\necho \"Done\" # trailing\n# more\n\nls -l");
    assert_string_equal(bb_content(&r),
                        "ERROR: Cannot execute multiple commands at once.\n"
                        "Please run each command separately OR chain them into a single command "
                        "via && or ;\nProvided commands:\n(1) cat <<EOF\nbody\nEOF\n"
                        "(2) echo \"Done\" # trailing\n# more\n(3) ls -l");
    bb_reply_free(&r);
    bb_expect_contains(&ex, "sleep 0 &\necho after", "(1) sleep 0 &\n(2) echo after");
}

static void test_unparsable_sent_as_is(void **state)
{
    (void)state;
    /* OpenHands sends what its parser cannot read as it is; the shell reports the error. */
    struct bb_reply r = bb_run(&ex, "echo \"unclosed\necho more");
    assert_string_equal(json_string_value(json_object_get(r.json, "observation")), "run");
    assert_int_equal(bb_exit_code(&r), 2);
    bb_reply_free(&r);
    bb_expect_run(&ex, "echo fine", BB_ANY_EXIT, "fine");
}

static void test_find_exec(void **state)
{
    (void)state;
    struct bb_reply r = bb_run(&ex, "mkdir -p fe && touch fe/a.txt fe/b.txt && "
                                    "find fe -name '*.txt' -exec echo found {} \\; | sort");
    assert_string_equal(bb_content(&r), "found fe/a.txt\nfound fe/b.txt");
    assert_int_equal(bb_exit_code(&r), 0);
    bb_reply_free(&r);
    bb_expect_run(&ex, "find fe -name a.txt -exec rm {} \\; && ls fe", BB_ANY_EXIT, "b.txt");
}

static void test_long_command(void **state)
{
    (void)state;
    char *cmd = malloc(7000), *want = malloc(7000);
    memset(want, 'x', 6000);
    want[6000] = '\0';
    snprintf(cmd, 7000, "echo '%s'", want);
    struct bb_reply r = bb_run(&ex, cmd);
    assert_int_equal(bb_exit_code(&r), 0);
    assert_string_equal(bb_content(&r), want);
    bb_reply_free(&r);
    free(cmd);
    free(want);
}

/* head, then size bytes of fill, then tail (malloc'd). */
static char *big_command(const char *head, char fill, size_t size, const char *tail)
{
    size_t h = strlen(head), t = strlen(tail);
    char *cmd = malloc(h + size + t + 1);
    assert_non_null(cmd);
    memcpy(cmd, head, h);
    memset(cmd + h, fill, size);
    memcpy(cmd + h + size, tail, t + 1);
    return cmd;
}

/* Issue 15 #7: a command of megabytes went through the shell's line reader, whose cost grows
 * with the square of the line (3 s for 1 MB, minutes for 10 MB; bash 5.2 here: 51 s) while
 * the shell refused every command. Both sizes, one line and a heredoc, finish within
 * bb_run's generous 30 s and the shell answers the next one. */
static void test_huge_commands(void **state)
{
    (void)state;
    static const size_t sizes[] = {1000000, 10000000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char want[32];
        char *cmd = big_command("x=", 'a', sizes[i], "; echo ${#x}");
        snprintf(want, sizeof want, "%zu", sizes[i]);
        struct bb_reply r = bb_run(&ex, cmd);
        assert_int_equal(bb_exit_code(&r), 0);
        assert_string_equal(bb_content(&r), want);
        bb_reply_free(&r);
        free(cmd);

        /* A heredoc of 100-byte lines. */
        size_t lines = sizes[i] / 100;
        cmd = big_command("cat <<'EOF' | wc -l\n", 'b', lines * 100, "EOF");
        for (size_t l = 1; l <= lines; l++)
            cmd[strlen("cat <<'EOF' | wc -l\n") + l * 100 - 1] = '\n';
        snprintf(want, sizeof want, "%zu", lines);
        r = bb_run(&ex, cmd);
        assert_int_equal(bb_exit_code(&r), 0);
        assert_string_equal(bb_content(&r), want);
        bb_reply_free(&r);
        free(cmd);
        bb_expect_run(&ex, "echo next", 0, "next");
    }
}

/* ^C reaches a command that came in a huge request, and typed-ahead input a program never
 * read neither holds it back nor runs as a command after it. */
static void test_ctrl_c_after_huge_command(void **state)
{
    (void)state;
    char *cmd = big_command("sleep 100 # ", 'z', 10000000, "");
    struct bb_reply r = bb_run_full(&ex, cmd, false, 2);
    assert_int_equal(bb_exit_code(&r), -1);
    bb_reply_free(&r);
    free(cmd);
    r = bb_run_full(&ex, "C-c", true, 20);
    assert_int_equal(bb_exit_code(&r), 130);
    bb_reply_free(&r);
    bb_expect_run(&ex, "echo alive", 0, "alive");

    /* A megabyte of input for a program that reads none: the tty fills, the rest queues. */
    r = bb_run_full(&ex, "sleep 100", false, 1);
    assert_int_equal(bb_exit_code(&r), -1);
    bb_reply_free(&r);
    char *input = big_command("echo LEAKED ", 'q', 1000000, "");
    r = bb_run_full(&ex, input, true, 1);
    assert_int_equal(bb_exit_code(&r), -1);
    bb_reply_free(&r);
    free(input);
    r = bb_run_full(&ex, "C-c", true, 20);
    assert_int_equal(bb_exit_code(&r), 130);
    bb_reply_free(&r);
    bb_expect_run(&ex, "echo alive", 0, "alive");
}

/* The executor's marker tags and a line like the one that sources a long command are only
 * text: printed, or run, they change nothing. */
static void test_marker_and_wrapper_lookalikes(void **state)
{
    (void)state;
    bb_expect_run(
        &ex,
        "{ printf '%s\\n' '\\036PDKabc{0;;0;1;1;h\\037/bin\\037/}abcKDP__' "
        "\". '/tmp/paddock-cmd.x/cmd.1'\"\necho end; }",
        0, "\\036PDKabc{0;;0;1;1;h\\037/bin\\037/}abcKDP__\n. '/tmp/paddock-cmd.x/cmd.1'\nend");
    struct bb_reply r = bb_run(&ex, ". '/tmp/paddock-cmd.nothere/cmd.1'");
    assert_true(bb_exit_code(&r) != 0);
    bb_reply_free(&r);
    /* A command that is not typed sits in a file of its own shell's, which it may read. */
    r = bb_run(&ex, "{ echo once\nfor f in /tmp/paddock-cmd.*/cmd.$$; do [ -r \"$f\" ] && "
                    "grep -c once \"$f\"; done; true; }");
    assert_int_equal(bb_exit_code(&r), 0);
    assert_string_equal(bb_content(&r), "once\n2");
    bb_reply_free(&r);
    bb_expect_run(&ex, "echo fine", 0, "fine");
}

/* The shell shows the marker's code as text: what `declare -f` and `set` print of it holds no
 * marker and no control byte (the tags' 0x1e and 0x1f stay escaped), and the shell goes on. */
static void test_marker_code_printed(void **state)
{
    (void)state;
    if (shell_is_ash())
        skip(); /* ash keeps it in PS1, printed as text the same way */
    for (int k = 0; k < 2; k++) {
        struct bb_reply r = bb_run(&ex, k == 0 ? "declare -f __pdk_m" : "set");
        assert_int_equal(bb_exit_code(&r), 0);
        const char *c = bb_content(&r);
        bb_assert_contains(c, "__pdk_m");
        bb_assert_contains(c, "KDP__");
        assert_null(strchr(c, 0x1e));
        assert_null(strchr(c, 0x1f));
        bb_reply_free(&r);
    }
    bb_expect_run(&ex, "echo after", 0, "after");
}

static void test_invalid_utf8(void **state)
{
    (void)state;
    struct bb_reply r = bb_run(&ex, "printf '\\377\\376 ok'");
    assert_non_null(r.json); /* the reply is valid JSON */
    assert_string_equal(bb_content(&r), "\xef\xbf\xbd\xef\xbf\xbd ok");
    bb_reply_free(&r);
}

#define TRUNCATED_PREFIX(n)                                                                        \
    "[Previous command outputs are truncated. Showing the last " n " lines of the output "         \
    "below.]\n"

static void test_big_output_truncated(void **state)
{
    (void)state;
    /* The last 11,000 lines (OpenHands' pane and history), then the 30,000-char cap. */
    struct bb_reply r = bb_run(&ex, "seq 1 100000");
    const char *c = bb_content(&r);
    bb_assert_prefix(c, "89001\n89002\n");
    bb_assert_contains(c, "\n[... Observation truncated due to length ...]\n");
    assert_string_equal(c + strlen(c) - 7, "\n100000");
    assert_int_equal(strlen(c),
                     30000 + strlen("\n[... Observation truncated due to length ...]\n"));
    assert_string_equal(bb_meta_str(&r, "prefix"), TRUNCATED_PREFIX("11000"));
    assert_string_equal(bb_meta_str(&r, "suffix"), "\n[The command completed with exit code 0.]");
    bb_reply_free(&r);
}

/* A terminal drops NUL bytes; so does the observation (and a hidden command is not cut to
 * 30,000 characters: OpenHands keeps hidden output out of the agent's history instead). */
static void test_nul_dropped_hidden_uncapped(void **state)
{
    (void)state;
    bb_expect_run(&ex, "printf 'x\\0y\\n\\0'", 0, "xy");
    /* 8,000 lines, 38,893 characters: within the line window, beyond the cap. */
    json_t *args = json_pack("{s:s, s:b}", "command", "seq 1 8000", "hidden", 1);
    struct bb_reply r = bb_act(&ex, "run", args);
    const char *c = bb_content(&r);
    bb_assert_prefix(c, "1\n2\n");
    assert_null(strstr(c, "Observation truncated"));
    assert_int_equal(strlen(c), 38893 - 1);
    assert_string_equal(c + strlen(c) - 5, "\n8000");
    bb_reply_free(&r);
}

static void test_line_window(void **state)
{
    (void)state;
    /* 11,001 short lines: the first is gone, and the rest fits the char cap. */
    struct bb_reply r = bb_run(&ex, "{ echo first; yes x | head -n 11000; }");
    const char *c = bb_content(&r);
    bb_assert_prefix(c, "x\nx\n");
    assert_int_equal(strlen(c), 21999);
    assert_string_equal(bb_meta_str(&r, "prefix"), TRUNCATED_PREFIX("11000"));
    bb_reply_free(&r);
    /* Exactly 11,000 lines: nothing dropped, no prefix. */
    r = bb_run(&ex, "{ echo first; yes x | head -n 10999; }");
    bb_assert_prefix(bb_content(&r), "first\nx\n");
    assert_string_equal(bb_meta_str(&r, "prefix"), "");
    bb_reply_free(&r);
}

static void test_background_pid(void **state)
{
    (void)state;
    /* Ended by the next command, not at the prompt: busybox ash exits when a job of its own
     * ends while it waits there (docs/protocol.md). Not with `wait`: ash's `wait` for a job
     * just killed can block for good; a short foreground sleep reaps it. */
    struct bb_reply r = bb_run(&ex, "sleep 30 &");
    assert_int_equal(bb_exit_code(&r), 0);
    assert_true(json_integer_value(json_object_get(bb_meta(&r), "pid")) > 0);
    bb_reply_free(&r);
    bb_expect_contains(&ex, "kill $!; sleep 0.2; echo ended", "ended");
}

static void test_secrets_not_inherited(void **state)
{
    (void)state;
    struct bb_reply r = bb_run(&ex, "echo \"[$TEST_API_KEY]\" \"$TERM\" \"$PAGER\"");
    assert_string_equal(bb_content(&r), "[] dumb cat");
    bb_reply_free(&r);
}

static void test_hard_timeout_then_ctrl_c(void **state)
{
    (void)state;
    double t0 = bb_now();
    struct bb_reply r = bb_run_full(&ex, "echo started; sleep 5", false, 1);
    /* Not early; that it did not wait for the sleep is what the reply's suffix says. */
    assert_true(bb_now() - t0 >= 0.9);
    assert_int_equal(bb_exit_code(&r), -1);
    assert_string_equal(bb_content(&r), "started");
    bb_assert_prefix(bb_meta_str(&r, "suffix"), "\n[The command timed out after 1.0 seconds. ");
    bb_assert_contains(bb_meta_str(&r, "suffix"), "send keys (\"C-c\", \"C-z\", \"C-d\")");
    assert_true(json_is_null(json_object_get(bb_meta(&r), "working_dir")));
    assert_true(json_is_false(json_object_get(r.json, "success")));
    bb_reply_free(&r);

    /* A new command while it runs is refused. */
    r = bb_run(&ex, "echo new");
    assert_int_equal(bb_exit_code(&r), -1);
    assert_string_equal(bb_meta_str(&r, "prefix"),
                        "[Below is the output of the previous command.]\n");
    bb_assert_prefix(bb_meta_str(&r, "suffix"), "\n[Your command \"echo new\" is NOT executed. ");
    bb_reply_free(&r);

    r = bb_run_full(&ex, "C-c", true, 5);
    assert_int_equal(bb_exit_code(&r), 130);
    assert_string_equal(bb_meta_str(&r, "suffix"),
                        "\n[The command completed with exit code 130. CTRL+C was sent.]");
    bb_reply_free(&r);

    bb_expect_run(&ex, "echo after", 0, "after");
}

/* A command that changes the terminal's modes (stty echo, raw, -isig) changes nothing for the
 * next one: its output reads the same and ^C still interrupts it. Under busybox ash this
 * needs more than a reset before typing: its line editor samples the modes at the prompt and
 * puts them back after the line it reads. $? survives whatever the executor does about it; a
 * new shell whose rc file runs stty echo is settled before its first command. */
static void test_tty_modes_restored(void **state)
{
    (void)state;
    bb_expect_run(&ex, "stty echo", 0, "");
    bb_expect_run(&ex, "echo one", 0, "one");
    bb_expect_run(&ex, "stty echo; echo two", 0, "two");
    bb_expect_run(&ex, "echo three", 0, "three");
    bb_expect_run(&ex, "stty raw echo", 0, "");
    bb_expect_run(&ex, "printf 'a\\nb\\n'", 0, "a\nb");
    bb_expect_run(&ex, "stty echo; (exit 3)", 3, "");
    bb_expect_run(&ex, "echo $?", 0, "3");
    bb_expect_run(&ex, "stty -isig", 0, "");
    struct bb_reply r = bb_run_full(&ex, "sleep 30", false, 1);
    assert_int_equal(bb_exit_code(&r), -1);
    bb_reply_free(&r);
    r = bb_run_full(&ex, "C-c", true, 5);
    assert_int_equal(bb_exit_code(&r), 130);
    bb_reply_free(&r);
    bb_expect_run(&ex, "echo after", 0, "after");
    /* An rc file's stty echo: the new shell's first prompt already has the line editor. */
    bb_expect_run(&ex, "cp ~/.bashrc ~/.bashrc.tty 2>/dev/null; echo 'stty echo' >>~/.bashrc", 0,
                  "");
    r = bb_run(&ex, "exit");
    bb_assert_contains(bb_meta_str(&r, "suffix"), "a new shell was started");
    bb_reply_free(&r);
    bb_expect_run(&ex, "echo four", 0, "four");
    bb_expect_run(&ex, "mv ~/.bashrc.tty ~/.bashrc 2>/dev/null || rm ~/.bashrc", 0, "");
}

static void test_soft_timeout_and_continue(void **state)
{
    (void)state;
    /* Non-blocking, no output for 1 s (the executor runs with --no-change-timeout 1). */
    struct bb_reply r = bb_run_nonblocking(&ex, "echo begin; sleep 1.6; echo done", false, 30);
    assert_int_equal(bb_exit_code(&r), -1);
    assert_string_equal(bb_content(&r), "begin");
    bb_assert_prefix(bb_meta_str(&r, "suffix"),
                     "\n[The command has no new output after 1 seconds. ");
    bb_reply_free(&r);

    r = bb_run_nonblocking(&ex, "", false, 30);
    assert_string_equal(bb_content(&r), "done");
    assert_int_equal(bb_exit_code(&r), 0);
    assert_string_equal(bb_meta_str(&r, "prefix"), "");
    bb_reply_free(&r);
}

static void test_input_to_running_program(void **state)
{
    (void)state;
    struct bb_reply r = bb_run_full(&ex, "read -r line; echo \"got:$line\"", false, 0.5);
    assert_int_equal(bb_exit_code(&r), -1);
    bb_reply_free(&r);
    r = bb_run_full(&ex, "hello", true, 5);
    assert_string_equal(bb_content(&r), "got:hello");
    assert_int_equal(bb_exit_code(&r), 0);
    bb_reply_free(&r);
}

static void test_keys_at_the_prompt(void **state)
{
    (void)state;
    /* Not input: a key for the idle shell. ^C gives a fresh prompt; ^Z must not hang. */
    struct bb_reply r = bb_run_full(&ex, "C-c", false, 5);
    assert_int_equal(bb_exit_code(&r), 130);
    assert_string_equal(bb_meta_str(&r, "suffix"),
                        "\n[The command completed with exit code 130. CTRL+C was sent.]");
    bb_reply_free(&r);
    r = bb_run_full(&ex, "C-z", false, 5);
    assert_true(bb_exit_code(&r) >= 0);
    bb_assert_contains(bb_meta_str(&r, "suffix"), "CTRL+Z was sent.");
    bb_reply_free(&r);
    bb_expect_run(&ex, "echo fine", BB_ANY_EXIT, "fine");
}

static void test_output_ending_like_a_marker(void **state)
{
    (void)state;
    /* Output that ends in "_" or a partial marker tag is not held back at a timeout. */
    struct bb_reply r = bb_run_full(&ex, "printf 'loading__'; sleep 2", false, 0.5);
    assert_int_equal(bb_exit_code(&r), -1);
    assert_string_equal(bb_content(&r), "loading__");
    bb_reply_free(&r);
    r = bb_run_full(&ex, "C-c", true, 5);
    bb_reply_free(&r);
}

static void test_nothing_running(void **state)
{
    (void)state;
    struct bb_reply r = bb_run_full(&ex, "", false, 5);
    assert_string_equal(bb_content(&r),
                        "ERROR: No previous running command to retrieve logs from.");
    assert_int_equal(bb_exit_code(&r), -1);
    bb_reply_free(&r);
    r = bb_run_full(&ex, "hello", true, 5);
    assert_string_equal(bb_content(&r), "ERROR: No previous running command to interact with.");
    bb_reply_free(&r);
}

static void test_shell_exit_restarts(void **state)
{
    (void)state;
    struct bb_reply r = bb_run(&ex, "exit 3");
    assert_int_equal(bb_exit_code(&r), 3);
    bb_assert_contains(bb_meta_str(&r, "suffix"), "The shell exited with code 3");
    bb_reply_free(&r);
    r = bb_run(&ex, "echo alive; pwd");
    assert_int_equal(bb_exit_code(&r), 0);
    char want[200];
    snprintf(want, sizeof want, "alive\n%s", ex.work);
    assert_string_equal(bb_content(&r), want);
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
    /* a deadline no timer holds is refused, not left to never fire */
    expect_error("POST", "/execute_action",
                 "{\"action\": {\"action\": \"run\", \"args\": {\"command\": \"ls\"}, \"timeout\": "
                 "1e300}}",
                 400, "Invalid field: action.timeout (at most 86400 seconds)");
    expect_error("POST", "/execute_action",
                 "{\"action\": {\"action\": \"frobnicate\", \"args\": {}}}", 400,
                 "Unsupported action type: frobnicate");
    /* An args key no OpenHands action has is refused, naming it (OpenHands: 500). */
    expect_error("POST", "/execute_action",
                 "{\"action\": {\"action\": \"run\", \"args\": {\"command\": \"ls\", "
                 "\"comand\": \"ls\"}}}",
                 400,
                 "Unknown field: action.args.comand (run takes: command, is_input, blocking, "
                 "is_static, cwd, hidden)");
    expect_error("GET", "/nope", NULL, 404, "Not Found");
    expect_error("GET", "/execute_action", NULL, 405, "Method Not Allowed");
    expect_error("POST", "/alive", "{}", 405, "Method Not Allowed");
}

static void test_body_too_large(void **state)
{
    (void)state;
    /* The 413 comes from the Content-Length alone: the 70 MB are never sent. */
    size_t unsent;
    struct bb_reply r = bb_post_spaces(&ex, "/execute_action", NULL, 70u << 20, false, &unsent);
    assert_int_equal(r.status, 413);
    assert_string_equal(bb_detail(&r), "Request body too large (limit 67108864 bytes)");
    assert_true(unsent > 60u << 20);
    bb_reply_free(&r);
    bb_expect_run(&ex, "echo still here", BB_ANY_EXIT, "still here");
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
    assert_string_equal(bb_content(&ra), "a");
    assert_string_equal(bb_content(&rb), "b");
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
    struct bb_reply r = bb_run(&ex, "echo still served");
    assert_string_equal(bb_content(&r), "still served");
    bb_reply_free(&r);
    close(fd);
}

static void test_is_input_long_running_python_like(void **state)
{
    (void)state;
    /* cat echoes each input line; C-d ends it. */
    struct bb_reply r = bb_run_full(&ex, "cat", false, 0.3);
    assert_int_equal(bb_exit_code(&r), -1);
    bb_reply_free(&r);
    r = bb_run_full(&ex, "line one", true, 0.3);
    assert_string_equal(bb_content(&r), "line one");
    assert_string_equal(bb_meta_str(&r, "prefix"),
                        "[Below is the output of the previous command.]\n");
    bb_reply_free(&r);
    r = bb_run_full(&ex, "C-d", true, 5);
    assert_int_equal(bb_exit_code(&r), 0);
    assert_string_equal(bb_meta_str(&r, "suffix"),
                        "\n[The command completed with exit code 0. CTRL+D was sent.]");
    bb_reply_free(&r);
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

static struct bb_reply run_static(const char *command, const char *cwd, double timeout)
{
    json_t *args = json_pack("{s:s, s:b}", "command", command, "is_static", 1);
    if (cwd)
        json_object_set_new(args, "cwd", json_string(cwd));
    json_t *body = json_pack("{s:{s:s, s:o, s:f}}", "action", "action", "run", "args", args,
                             "timeout", timeout);
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    struct bb_reply r = bb_http(&ex, "POST", "/execute_action", text);
    free(text);
    assert_int_equal(r.status, 200);
    assert_non_null(r.json);
    return r;
}

static void test_py_interpreter_path(void **state)
{
    (void)state;
    /* `which python`, from the shell's PATH after each command, without a fork. */
    struct bb_reply r =
        bb_run(&ex, "mkdir -p pybin/a pybin/b && printf '#!/bin/sh\\n' > pybin/a/python && "
                    "cp pybin/a/python pybin/b/python3 && chmod +x pybin/a/python "
                    "pybin/b/python3 && OLDPATH=$PATH");
    assert_int_equal(bb_exit_code(&r), 0);
    bb_reply_free(&r);
    char want[256];
    r = bb_run(&ex, "export PATH=$PWD/pybin/a:$PWD/pybin/b");
    snprintf(want, sizeof want, "%s/pybin/a/python", ex.work);
    assert_string_equal(bb_meta_str(&r, "py_interpreter_path"), want);
    bb_reply_free(&r);
    r = bb_run(&ex, "export PATH=$PWD/pybin/b"); /* only python3 */
    snprintf(want, sizeof want, "%s/pybin/b/python3", ex.work);
    assert_string_equal(bb_meta_str(&r, "py_interpreter_path"), want);
    bb_reply_free(&r);
    r = bb_run(&ex, "export PATH=/nonexistent");
    assert_string_equal(bb_meta_str(&r, "py_interpreter_path"), "");
    bb_reply_free(&r);
    bb_expect_run(&ex, "export PATH=$OLDPATH && rm -r pybin", 0, NULL);
}

static void test_nothing_running_command_is_empty(void **state)
{
    (void)state;
    /* OpenHands answers these two with command "". */
    struct bb_reply r = bb_run_full(&ex, "some input", true, 5);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(r.json, "extras"), "command")), "");
    assert_string_equal(json_string_value(json_object_get(r.json, "message")),
                        "Command `` executed with exit code -1.");
    bb_reply_free(&r);
}

static void test_input_with_several_commands_refused(void **state)
{
    (void)state;
    /* OpenHands checks input to a running program too. */
    struct bb_reply r = bb_run_full(&ex, "cat", false, 0.3);
    assert_int_equal(bb_exit_code(&r), -1);
    bb_reply_free(&r);
    r = bb_run_full(&ex, "first line\nsecond line", true, 0.3);
    assert_string_equal(bb_observation(&r), "error");
    bb_assert_contains(bb_content(&r), "Provided commands:\n(1) first line\n(2) second line");
    bb_reply_free(&r);
    r = bb_run_full(&ex, "one line", true, 0.3);
    assert_string_equal(bb_content(&r), "one line");
    bb_reply_free(&r);
    r = bb_run_full(&ex, "C-d", true, 5);
    assert_int_equal(bb_exit_code(&r), 0);
    bb_reply_free(&r);
}

static void test_static_in_cwd(void **state)
{
    (void)state;
    struct bb_reply r = bb_run(&ex, "export ONLY_IN_MAIN=1 && cd /");
    bb_reply_free(&r);
    /* A new shell in cwd: the main shell's variables and directory are not there. */
    r = run_static("pwd; echo \"[$ONLY_IN_MAIN]\"", "/tmp", 10);
    assert_string_equal(bb_content(&r), "/tmp\n[]");
    assert_int_equal(bb_exit_code(&r), 0);
    assert_string_equal(bb_meta_str(&r, "working_dir"), "/tmp");
    assert_string_equal(bb_meta_str(&r, "suffix"), "\n[The command completed with exit code 0.]");
    bb_reply_free(&r);
    /* No cwd: the working dir; a relative one is taken from it. */
    r = run_static("pwd", NULL, 10);
    assert_string_equal(bb_content(&r), ex.work);
    bb_reply_free(&r);
    bb_expect_run(&ex, "mkdir -p $OLDPWD/sub", BB_ANY_EXIT, NULL);
    r = run_static("pwd", "sub", 10);
    char want[200];
    snprintf(want, sizeof want, "%s/sub", ex.work);
    assert_string_equal(bb_content(&r), want);
    bb_reply_free(&r);
    r = run_static("pwd", "/nonexistent-dir", 10);
    assert_string_equal(bb_observation(&r), "error");
    assert_string_equal(bb_content(&r),
                        "ERROR: Cannot run the command in /nonexistent-dir: not a directory.");
    bb_reply_free(&r);
    /* Its exit ends only that shell: no restart note. */
    r = run_static("exit 4", NULL, 10);
    assert_int_equal(bb_exit_code(&r), 4);
    assert_string_equal(bb_meta_str(&r, "suffix"), "\n[The command completed with exit code 4.]");
    bb_reply_free(&r);
    /* The one-command rule holds there too. */
    r = run_static("echo a\necho b", NULL, 10);
    assert_string_equal(bb_observation(&r), "error");
    bb_reply_free(&r);
    /* The main shell is as it was. */
    r = bb_run(&ex, "pwd; echo $ONLY_IN_MAIN");
    assert_string_equal(bb_content(&r), "/\n1");
    assert_string_equal(bb_meta_str(&r, "suffix"), "\n[The command completed with exit code 0.]");
    bb_reply_free(&r);
    snprintf(want, sizeof want, "cd %s", ex.work);
    bb_expect_run(&ex, want, BB_ANY_EXIT, NULL);
}

static void test_static_timeout_and_busy_main(void **state)
{
    (void)state;
    /* The main shell is busy with a timed-out command; a static command still runs. */
    struct bb_reply r = bb_run_full(&ex, "sleep 1.5; echo main-done", false, 0.3);
    assert_int_equal(bb_exit_code(&r), -1);
    bb_reply_free(&r);
    r = run_static("echo static", NULL, 10);
    assert_string_equal(bb_content(&r), "static");
    bb_reply_free(&r);
    /* A static command that times out is killed with its shell. */
    double t0 = bb_now();
    r = run_static("echo begin; sleep 31.4159", NULL, 0.5);
    assert_true(bb_now() - t0 < 31.4); /* answered before the sleep could have ended */
    assert_string_equal(bb_content(&r), "begin");
    bb_assert_prefix(bb_meta_str(&r, "suffix"), "\n[The command timed out after 0.5 seconds. ");
    bb_reply_free(&r);
    double deadline = bb_now() + 5;
    while (processes_running("sleep", "31.4159") && bb_now() < deadline)
        usleep(20000);
    assert_false(processes_running("sleep", "31.4159"));
    /* The main command goes on as if nothing happened. */
    r = bb_run_full(&ex, "", false, 5);
    assert_string_equal(bb_content(&r), "main-done");
    assert_int_equal(bb_exit_code(&r), 0);
    bb_reply_free(&r);
}

static void test_background_job_survives(void **state)
{
    (void)state;
    struct bb_reply r = bb_run(&ex, "sleep 30 &");
    json_int_t pid = json_integer_value(json_object_get(bb_meta(&r), "pid"));
    assert_true(pid > 0);
    bb_reply_free(&r);
    char cmd[128], want[64];
    snprintf(cmd, sizeof cmd, "echo $!; kill -0 %lld && echo alive", (long long)pid);
    snprintf(want, sizeof want, "%lld\nalive", (long long)pid);
    r = bb_run(&ex, cmd);
    bb_assert_contains(bb_content(&r), want);
    assert_int_equal(json_integer_value(json_object_get(bb_meta(&r), "pid")), pid);
    bb_reply_free(&r);
    /* As in test_background_pid: ended during a command, without ash's `wait`. */
    snprintf(cmd, sizeof cmd, "kill %lld; sleep 0.2; echo killed", (long long)pid);
    bb_expect_contains(&ex, cmd, "killed");
}

static void test_python_repl(void **state)
{
    (void)state;
    struct bb_reply r = bb_run(&ex, "command -v python3 >/dev/null && echo yes || echo no");
    bool have = strcmp(bb_content(&r), "yes") == 0;
    bb_reply_free(&r);
    if (!have)
        skip();
    r = bb_run_nonblocking(&ex, "python3 -q", false, 30);
    assert_int_equal(bb_exit_code(&r), -1); /* waits for input: the no-change timeout */
    bb_assert_prefix(bb_meta_str(&r, "suffix"),
                     "\n[The command has no new output after 1 seconds. ");
    bb_reply_free(&r);
    r = bb_run_full(&ex, "x = 21", true, 0.5);
    assert_int_equal(bb_exit_code(&r), -1);
    bb_reply_free(&r);
    r = bb_run_full(&ex, "print(x * 2)", true, 0.5);
    bb_assert_contains(bb_content(&r), "42");
    assert_string_equal(bb_meta_str(&r, "prefix"),
                        "[Below is the output of the previous command.]\n");
    bb_reply_free(&r);
    r = bb_run_full(&ex, "exit()", true, 5);
    assert_int_equal(bb_exit_code(&r), 0);
    assert_string_equal(bb_meta_str(&r, "suffix"), "\n[The command completed with exit code 0.]");
    bb_reply_free(&r);
}

static void test_ctrl_c_loop(void **state)
{
    (void)state;
    struct bb_reply r = bb_run_full(&ex, "while true; do sleep 0.1; done", false, 0.5);
    assert_int_equal(bb_exit_code(&r), -1);
    bb_assert_prefix(bb_meta_str(&r, "suffix"), "\n[The command timed out after 0.5 seconds. ");
    bb_reply_free(&r);
    r = bb_run_full(&ex, "C-c", true, 5);
    assert_int_equal(bb_exit_code(&r), 130);
    assert_string_equal(bb_meta_str(&r, "suffix"),
                        "\n[The command completed with exit code 130. CTRL+C was sent.]");
    bb_reply_free(&r);
    bb_expect_run(&ex, "echo after", BB_ANY_EXIT, "after");
}

/* ---- environment: POST /env, ~/.bashrc, git identity ------------------------------------ */

static struct bb_reply post_env(const char *body)
{
    return bb_http(&ex, "POST", "/env", body);
}

static void test_env_endpoint(void **state)
{
    (void)state;
    /* Keys are upper-cased; the value reads back exactly, $ and quotes included. */
    struct bb_reply r = post_env("{\"my_var\": \"a b $HOME \\\"q\\\" 'x' `c` \\\\ end\"}");
    assert_int_equal(r.status, 200);
    assert_string_equal(json_string_value(json_object_get(r.json, "status")), "ok");
    bb_reply_free(&r);
    bb_expect_run(&ex, "printf '%s' \"$MY_VAR\"", BB_ANY_EXIT, "a b $HOME \"q\" 'x' `c` \\ end");
    r = bb_run(&ex, "grep '^export MY_VAR=' ~/.bashrc");
    assert_string_equal(bb_content(&r),
                        "export MY_VAR=\"a b \\$HOME \\\"q\\\" 'x' \\`c\\` \\\\ end\"");
    bb_reply_free(&r);
    /* Again: the live value changes, ~/.bashrc keeps its line (OpenHands' rule). */
    r = post_env("{\"MY_VAR\": \"second\", \"OTHER\": \"o\"}");
    assert_int_equal(r.status, 200);
    bb_reply_free(&r);
    bb_expect_run(&ex, "echo $MY_VAR $OTHER; grep -c '^export MY_VAR=' ~/.bashrc", BB_ANY_EXIT,
                  "second o\n1");
    /* The shell sources ~/.bashrc when it starts: the persisted values survive a restart. */
    r = bb_run(&ex, "exit");
    bb_assert_contains(bb_meta_str(&r, "suffix"), "a new shell was started");
    bb_reply_free(&r);
    bb_expect_run(&ex, "printf '%s|%s' \"$MY_VAR\" \"$OTHER\"", BB_ANY_EXIT,
                  "a b $HOME \"q\" 'x' `c` \\ end|o");
    /* Nothing to add is fine. */
    r = post_env("{}");
    assert_int_equal(r.status, 200);
    bb_reply_free(&r);
}

static void test_env_endpoint_errors(void **state)
{
    (void)state;
    struct bb_reply r = post_env("[1]");
    assert_int_equal(r.status, 400);
    bb_reply_free(&r);
    r = post_env("{\"1BAD\": \"x\"}");
    assert_int_equal(r.status, 400);
    assert_string_equal(json_string_value(json_object_get(r.json, "detail")),
                        "Invalid variable name: 1BAD");
    bb_reply_free(&r);
    r = post_env("{\"N\": 5}");
    assert_int_equal(r.status, 400);
    assert_string_equal(json_string_value(json_object_get(r.json, "detail")),
                        "Invalid value for N (expected a string)");
    bb_reply_free(&r);
    r = post_env("{\"prompt_command\": \"x\"}");
    assert_int_equal(r.status, 400);
    bb_assert_contains(json_string_value(json_object_get(r.json, "detail")),
                       "Reserved variable name: PROMPT_COMMAND");
    bb_reply_free(&r);
    r = bb_http(&ex, "GET", "/env", NULL);
    assert_int_equal(r.status, 405);
    bb_reply_free(&r);

    /* A command runs: refused, and its output is still the agent's. */
    r = bb_run_full(&ex, "echo busy-out; sleep 1", false, 0.3);
    assert_int_equal(bb_exit_code(&r), -1);
    bb_reply_free(&r);
    r = post_env("{\"X\": \"y\"}");
    assert_int_equal(r.status, 409);
    bb_reply_free(&r);
    r = bb_run_full(&ex, "", false, 5);
    assert_int_equal(bb_exit_code(&r), 0);
    bb_reply_free(&r);

    /* ~/.bashrc cannot be written: 500 with the shell's message; the variable is live. */
    bb_expect_run(&ex, "mv ~/.bashrc ~/.bashrc.saved 2>/dev/null; mkdir ~/.bashrc", BB_ANY_EXIT,
                  NULL);
    r = post_env("{\"UNWRITABLE\": \"v\"}");
    assert_int_equal(r.status, 500);
    bb_assert_prefix(json_string_value(json_object_get(r.json, "detail")),
                     "Failed to add environment variables: ");
    bb_reply_free(&r);
    r = bb_run(&ex,
               "echo $UNWRITABLE; rmdir ~/.bashrc; mv ~/.bashrc.saved ~/.bashrc 2>/dev/null; true");
    assert_string_equal(bb_content(&r), "v");
    bb_reply_free(&r);
}

static void test_env_output_not_stolen(void **state)
{
    (void)state;
    /* Output that arrived between commands belongs to the agent's next observation, not to
     * the hidden command of POST /env. */
    /* Double-forked: busybox ash dies when a job of its own ends at the prompt (docs). */
    struct bb_reply r = bb_run(&ex, "((sleep 0.2; echo late-output) &)");
    bb_reply_free(&r);
    usleep(500000);
    r = post_env("{\"QUIET\": \"1\"}");
    assert_int_equal(r.status, 200);
    bb_reply_free(&r);
    r = bb_run(&ex, "echo $QUIET");
    bb_assert_contains(bb_content(&r), "late-output");
    bb_assert_contains(bb_content(&r), "1");
    bb_reply_free(&r);
}

static void test_git_identity(void **state)
{
    (void)state;
    struct bb_reply r = bb_run(&ex, "command -v git >/dev/null && echo yes || echo no");
    bool have = strcmp(bb_content(&r), "yes") == 0;
    bb_reply_free(&r);
    if (!have)
        skip();
    r = bb_run(&ex, "git config --global user.name; git config --global user.email; echo ~");
    char want[256];
    snprintf(want, sizeof want, "openhands\nopenhands@all-hands.dev\n%s", ex.home);
    assert_string_equal(bb_content(&r), want);
    bb_reply_free(&r);
}

/* ---- hostile commands that need no other uid ---------------------------------------------- */

static void test_exec_redirects_stdout(void **state)
{
    (void)state;
    /* busybox ash prints its prompt (our marker) on stderr: nothing can reroute it there. */
    if (shell_is_ash())
        skip();
    struct bb_reply r = bb_run(&ex, "exec >/dev/null 2>&1");
    assert_int_equal(bb_exit_code(&r), 0);
    bb_reply_free(&r);
    /* The marker still arrives (through the terminal): the shell stays usable. */
    bb_expect_run(&ex, "echo to-nowhere", 0, "");
    /* Digits in IFS split no field of it (its words are quoted). */
    bb_expect_run(&ex, "IFS=0123456789; (exit 12)", 12, "");
    bb_expect_run(&ex, "unset IFS", 0, "");
    bb_expect_run(&ex, "exec >/dev/tty 2>&1", BB_ANY_EXIT, NULL);
    bb_expect_run(&ex, "echo back", BB_ANY_EXIT, "back");
}

/* An executor of its own, HOME its own with rc as ~/.bashrc and, when setup is given, that
 * text as the workspace's .paddock/setup.sh; launched. */
static void launch_with_rc(struct bb *e, const char *rc, const char *setup)
{
    assert_int_equal(bb_prepare(e, &(struct bb_options){.own_home = true}), 0);
    assert_int_equal(mkdir(e->home, 0700), 0);
    bb_write_file(bb_path(e->home, ".bashrc"), rc, strlen(rc));
    if (setup) {
        assert_int_equal(mkdir(e->work, 0755), 0);
        assert_int_equal(mkdir(bb_path(e->work, ".paddock"), 0755), 0);
        bb_write_file(bb_path(e->work, ".paddock/setup.sh"), setup, strlen(setup));
    }
    assert_int_equal(bb_launch(e), 0);
}

/* The start-up wrote OpenHands' git identity (when git is here to need one). */
static void expect_default_git_identity(struct bb *e)
{
    if (system("command -v git >/dev/null 2>&1") == 0)
        bb_expect_run(e, "\\cat ~/.gitconfig", 0,
                      "[user]\n\tname = openhands\n\temail = openhands@all-hands.dev");
}

/* Aliases in the agent's rc file (read before the marker's code is) do not reach that code:
 * an alias of `[[` changes nothing in a command's output or status, and the rc's
 * aliases still work after start-up. */
static void test_rc_aliases_spare_the_marker(void **state)
{
    (void)state;
    if (shell_is_ash())
        skip();
    struct bb e;
    launch_with_rc(&e, "alias '[['='echo X' ll='echo listed'\n", NULL);
    bb_expect_run(&e, "echo hi; (exit 3)", 3, "hi");
    bb_expect_run(&e, "ll", 0, "listed");
    bb_expect_run(&e, "false", 1, "");
    assert_int_equal(bb_stop(&e), 0);
}

/* The executor's own steps (the git identity at start-up, POST /env) are parsed with the rc
 * file's aliases off: an alias of `if` or `builtin` breaks none of them. What a step sources
 * (the setup script) sees the aliases, as in OpenHands; a setup script ended by a child's ^C
 * leaves them on; a long command of the agent's still runs, and the aliases are there for the
 * agent's commands afterwards. */
static void test_rc_aliases_spare_hidden_steps(void **state)
{
    (void)state;
    if (shell_is_ash())
        skip();
    struct bb e;
    launch_with_rc(&e,
                   "alias if='echo BROKEN' builtin='echo B' ll='echo listed' "
                   "greet='echo hello-from-rc'\n",
                   "greet > setup-out.txt\nsh -c 'kill -INT $$'\necho late > after.txt\n");
    expect_default_git_identity(&e);
    /* The setup script used the rc's alias, and the ^C ended it there. */
    bb_expect_run(&e, "\\cat setup-out.txt; \\test -e after.txt; echo $?", 0, "hello-from-rc\n1");
    struct bb_reply r = bb_http(&e, "POST", "/env", "{\"ALIASED\": \"v 1\"}");
    assert_int_equal(r.status, 200);
    assert_string_equal(json_string_value(json_object_get(r.json, "status")), "ok");
    bb_reply_free(&r);
    bb_expect_run(&e, "echo \"$ALIASED\"; grep -c '^export ALIASED=' ~/.bashrc", 0, "v 1\n1");
    /* Two lines: sourced from a script, by a line of the executor's. */
    bb_expect_run(&e, "for w in one; do\necho $w\ndone; (exit 4)", 4, "one");
    bb_expect_run(&e, "ll; shopt -q expand_aliases; echo $? \"${__pdk_x-unset}\"", 0,
                  "listed\n0 unset");
    assert_int_equal(bb_stop(&e), 0);
}

/* Without a directory for long commands (it could not be made), the executor's own steps are
 * typed as lines, as any short command: the git identity is written and POST /env works; a
 * long command is refused with the reason. */
static void test_no_command_dir(void **state)
{
    (void)state;
    /* busybox ash takes lines of 120 bytes at most: its steps need the directory. */
    if (shell_is_ash())
        skip();
    static const char *const args[] = {"--command-dir", "/dev/null/cmd", NULL};
    struct bb e;
    assert_int_equal(bb_prepare(&e, &(struct bb_options){.args = args, .own_home = true}), 0);
    assert_int_equal(mkdir(e.home, 0700), 0);
    assert_int_equal(bb_launch(&e), 0);
    expect_default_git_identity(&e);
    struct bb_reply r = bb_http(&e, "POST", "/env", "{\"NODIR\": \"x y\"}");
    assert_int_equal(r.status, 200);
    bb_reply_free(&r);
    bb_expect_run(&e, "echo \"$NODIR\"", 0, "x y");
    r = bb_run(&e, "for w in one; do\necho $w\ndone");
    bb_assert_contains(bb_content(&r), "no directory for long commands");
    bb_reply_free(&r);
    assert_int_equal(bb_stop(&e), 0);
}

/* POST /env while the agent is in a nested shell as another user (root only): the executor's
 * script files are its own uid's (0600), so there the step is typed as a line, as before. */
static void test_hidden_step_in_nested_shell(void **state)
{
    (void)state;
    if (geteuid() != 0 || shell_is_ash() || system("command -v setpriv >/dev/null 2>&1") != 0)
        skip();
    char home[] = "/tmp/paddock-nested-XXXXXX";
    assert_non_null(mkdtemp(home));
    assert_int_equal(chown(home, 65534, 65534), 0);
    struct bb e;
    assert_int_equal(bb_prepare(&e, &(struct bb_options){0}), 0);
    assert_int_equal(bb_launch(&e), 0);
    char cmd[200];
    snprintf(cmd, sizeof cmd,
             "HOME=%s setpriv --reuid=65534 --regid=65534 --clear-groups bash --norc -i", home);
    struct bb_reply r = bb_run(&e, cmd);
    bb_reply_free(&r);
    bb_expect_run(&e, "id -u", 0, "65534");
    r = bb_http(&e, "POST", "/env", "{\"NESTED_V\": \"n 1\"}");
    assert_int_equal(r.status, 200);
    bb_reply_free(&r);
    bb_expect_run(&e, "echo \"$NESTED_V\"; grep -c '^export NESTED_V=' ~/.bashrc", 0, "n 1\n1");
    r = bb_run(&e, "exit");
    bb_reply_free(&r);
    bb_expect_run(&e, "id -u", 0, "0");
    assert_int_equal(bb_stop(&e), 0);
    char rm[96];
    snprintf(rm, sizeof rm, "rm -rf '%s'", home);
    assert_int_equal(system(rm), 0);
}

/* Digits in an IFS the rc file set split none of the executor's own words: the aliases are
 * back after the init line, and POST /env exports and persists. */
static void test_rc_ifs_digits(void **state)
{
    (void)state;
    if (shell_is_ash())
        skip();
    struct bb e;
    launch_with_rc(&e, "IFS=0123456789\nalias ll='echo listed'\n", NULL);
    bb_expect_run(&e, "ll", 0, "listed");
    struct bb_reply r = bb_http(&e, "POST", "/env", "{\"IFSV\": \"v0\"}");
    assert_int_equal(r.status, 200);
    bb_reply_free(&r);
    bb_expect_run(&e, "printf '%s|' \"$IFSV\"; grep -c '^export IFSV=' ~/.bashrc", 0, "v0|1");
    assert_int_equal(bb_stop(&e), 0);
}

static void test_exec_closes_stdin(void **state)
{
    (void)state;
    /* The shell reads EOF and exits; a new one takes over and the next observation says so. */
    struct bb_reply r = bb_run(&ex, "exec 0<&-");
    assert_int_equal(bb_exit_code(&r), 0);
    bb_reply_free(&r);
    /* bash reports in its marker that its stdin is gone, so the executor replaces it at once
     * and the next command cannot be typed into the dying shell. busybox ash cannot say so:
     * there the next command must come after its exit (documented). */
    if (shell_is_ash())
        usleep(500000);
    r = bb_run(&ex, "echo still-here");
    assert_string_equal(bb_content(&r), "still-here");
    bb_assert_prefix(bb_meta_str(&r, "suffix"),
                     shell_is_ash()
                         ? "\n[The command completed with exit code 0.]\n[The shell exited with "
                           "code 0 and a new shell was started in "
                         : "\n[The command completed with exit code 0.]\n[The shell's standard "
                           "input was closed or redirected, so a new shell was started in ");
    bb_reply_free(&r);
    r = bb_http(&ex, "GET", "/alive", NULL);
    assert_int_equal(r.status, 200);
    bb_reply_free(&r);
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
    struct bb_reply r =
        bb_run(&ex, "for i in 1 2 3 4 5; do (sleep 0.2 &); done; setsid sleep 0.2 & true");
    assert_int_equal(bb_exit_code(&r), 0);
    bb_reply_free(&r);
    usleep(800000);
    assert_int_equal(zombie_children(ex.pid), 0);
}

static void test_disk_full(void **state)
{
    (void)state;
    /* Only root can make a small tmpfs; a private mount namespace keeps it away from the
     * host. The executor writes nothing itself, so a full disk only fails the agent's writes. */
    if (geteuid() != 0 || system("command -v unshare >/dev/null 2>&1") != 0)
        skip();
    struct bb_reply r =
        bb_run(&ex, "mkdir -p full && unshare -m sh -c 'mount -t tmpfs -o size=64k none full "
                    "&& dd if=/dev/zero of=full/f bs=1k count=1000 2>&1; echo rc=$?'");
    bb_assert_contains(bb_content(&r), "No space left on device");
    bb_assert_contains(bb_content(&r), "rc=1");
    bb_reply_free(&r);
    r = bb_http(&ex, "GET", "/alive", NULL);
    assert_int_equal(r.status, 200);
    bb_reply_free(&r);
    bb_expect_run(&ex, "ls full; rmdir full && echo clean", BB_ANY_EXIT, "clean");
}

/* ---- start-up steps ------------------------------------------------------------------------ */

static void test_startup_first_command(void **state)
{
    (void)state;
    /* The setup script ran before the socket appeared, was sourced (its export stays), and
     * its output is in nobody's observation; the --env-file variables are there. */
    assert_true(ex.ready_file_existed);
    struct bb_reply r = bb_run(&ex, "printf '%s|%s' \"$SETUP_VAR\" \"$FILE_VAR\"");
    assert_string_equal(bb_content(&r), "from-paddock-setup|from file $HOME \"q\"");
    bb_reply_free(&r);
    /* .paddock/setup.sh wins: .openhands/setup.sh did not run. */
    bb_expect_run(&ex, "test -e openhands-ran; echo $?", BB_ANY_EXIT, "1");
}

static void test_startup_git_identity(void **state)
{
    (void)state;
    if (system("command -v git >/dev/null 2>&1") != 0)
        skip();
    /* GIT_USER_NAME from the container's environment, GIT_USER_EMAIL from the --env-file. */
    struct bb_reply r =
        bb_run(&ex, "git config --global user.name; git config --global user.email");
    assert_string_equal(bb_content(&r), "Dev Name\ndev@example.com");
    bb_reply_free(&r);
}

static void test_startup_vars_persisted(void **state)
{
    (void)state;
    struct bb_reply r = bb_run(&ex, "grep '^export FILE_VAR=' ~/.bashrc");
    assert_string_equal(bb_content(&r), "export FILE_VAR=\"from file \\$HOME \\\"q\\\"\"");
    bb_reply_free(&r);
    bb_expect_run(&ex, "exit 0", BB_ANY_EXIT, NULL);
    /* A new shell: the setup script's export is gone, the persisted variable is not. */
    bb_expect_run(&ex, "printf '%s|%s' \"$SETUP_VAR\" \"$FILE_VAR\"", BB_ANY_EXIT,
                  "|from file $HOME \"q\"");
}

static void test_setup_openhands_fallback(void **state)
{
    (void)state;
    assert_true(ex.ready_file_existed);
    struct bb_reply r = bb_run(&ex, "echo $SETUP_VAR");
    assert_string_equal(bb_content(&r), "from-openhands-setup");
    bb_reply_free(&r);
}

/* ---- hostile commands as the agent's own uid (root only) ---------------------------------- */

/* Live processes whose real uid is uid. Zombies are dead already: bash may defer reaping a
 * killed job until its next command, which is not what these tests are about. */
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
        bool zombie = false;
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "State:", 6) == 0)
                zombie = strchr(line, 'Z') != NULL;
            if (sscanf(line, "Uid: %lu", &u) == 1) {
                count += u == uid && !zombie;
                break;
            }
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
    char want[48];
    /* Job notices of earlier tests ("[2]+ Killed ...") may come before or after the answer,
     * so the answer is marked and looked for as a whole line. */
    struct bb_reply r = bb_run(&ex, "echo \"uid=$(id -u)\"");
    snprintf(want, sizeof want, "uid=%lu", (unsigned long)agent_uid);
    const char *c = bb_content(&r), *hit = strstr(c, want);
    size_t n = strlen(want);
    bool whole = hit && (hit == c || hit[-1] == '\n') && (hit[n] == '\0' || hit[n] == '\n');
    if (!whole)
        fail_msg("the shell's answer is %s, not %s: hostile tests not run", c, want);
    assert_true(agent_uid != 0);
    bb_reply_free(&r);
}

static void wait_for_processes(uid_t uid, int want)
{
    double deadline = bb_now() + 10;
    while (processes_of(uid) != want && bb_now() < deadline)
        usleep(50000);
    assert_int_equal(processes_of(uid), want);
}

static void test_agent_kill_minus_one_builtin(void **state)
{
    (void)state;
    assert_shell_is_agent();
    /* Jobs of the shell under bash; under busybox ash orphans (a job of its own that ends at
     * the prompt ends ash too: docs/protocol.md). */
    struct bb_reply r =
        bb_run(&ex, shell_is_ash() ? "(sleep 100 &); (sleep 100 &)" : "sleep 100 & sleep 100 &");
    bb_reply_free(&r);
    assert_int_equal(processes_of(agent_uid), 3);
    /* bash's own kill: every other process of the uid dies, the shell (the caller) lives. */
    bb_expect_run(&ex, "kill -9 -1", 0, NULL);
    wait_for_processes(agent_uid, 1);
    bb_expect_contains(&ex, "echo ok", "ok");
}

/* A command that is not typed reaches the agent's shell from a file only the agent reads, in
 * a directory of the executor's that the agent cannot list or write. */
static void test_agent_long_command_file(void **state)
{
    (void)state;
    assert_shell_is_agent();
    char want[64];
    snprintf(want, sizeof want, "600 %u\n711 0\nunlisted\nunwritable", (unsigned)agent_uid);
    bb_expect_run(&ex,
                  "{ f=$(echo /tmp/paddock-cmd.*/cmd.$$)\nstat -c '%a %u' \"$f\"\n"
                  "stat -c '%a %u' \"${f%/*}\"\nls \"${f%/*}\" >/dev/null 2>&1 || echo unlisted\n"
                  "(: >\"${f%/*}/other\") 2>/dev/null || echo unwritable; }",
                  0, want);
}

static void test_agent_kill_minus_one_external(void **state)
{
    (void)state;
    assert_shell_is_agent();
    /* kill(1) as a process of its own: the shell dies too, a new one is started. */
    struct bb_reply r = bb_run(&ex, "/bin/sh -c 'kill -9 -1'");
    assert_int_equal(bb_exit_code(&r), 137);
    bb_assert_contains(bb_meta_str(&r, "suffix"),
                       "\n[The shell exited with code 137 and a new shell "
                       "was started in ");
    bb_reply_free(&r);
    r = bb_http(&ex, "GET", "/alive", NULL);
    assert_int_equal(r.status, 200);
    bb_reply_free(&r);
    bb_expect_run(&ex, "echo ok", BB_ANY_EXIT, "ok");
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
    struct bb_reply r =
        bb_run_full(&ex, "( ulimit -u 48; bomb() { bomb | bomb & }; bomb )", false, 3);
    append(&seen, bb_content(&r));
    bb_reply_free(&r);
    int most = 0;
    for (int i = 0; i < 50; i++) {
        int n = processes_of(agent_uid);
        most = n > most ? n : most;
        usleep(20000);
    }
    assert_true(most <= 49); /* never past the limit (+1: the shell's own count) */
    r = bb_http(&ex, "GET", "/alive", NULL);
    assert_int_equal(r.status, 200);
    bb_reply_free(&r);
    r = bb_http(&ex, "GET", "/server_info", NULL);
    assert_int_equal(r.status, 200);
    bb_reply_free(&r);
    /* The shell still answers; one kill -9 -1 ends the bomb, the executor reaps it all. */
    r = bb_run_full(&ex, "kill -9 -1", false, 10);
    append(&seen, bb_content(&r));
    bb_reply_free(&r);
    wait_for_processes(agent_uid, 1);
    assert_int_equal(zombie_children(ex.pid), 0);
    r = bb_run(&ex, "echo survived");
    append(&seen, bb_content(&r));
    bb_assert_contains(bb_content(&r), "survived");
    bb_reply_free(&r);
    /* The limit was reached: fork failed somewhere. */
    bb_assert_contains(seen, "Resource temporarily unavailable");
    free(seen);
}

static void test_agent_not_root(void **state)
{
    (void)state;
    skip(); /* the group needs root: another uid for the shell, or a mount namespace */
}

/* ---- ports of OpenHands' tests/runtime/test_bash.py and test_env_vars.py ----------------- */

#define TIMEOUT_TEMPLATE_TEXT                                                                      \
    "You may wait longer to see additional output by sending empty command '', send other "        \
    "commands to interact with the current process, send keys (\"C-c\", \"C-z\", \"C-d\") to "     \
    "interrupt/kill the previous command before sending your new command, or use the timeout "     \
    "parameter in execute_bash for future commands."

/* A port no other test on this machine is likely to use. */
static int test_port(void)
{
    return 20000 + (int)(getpid() % 20000);
}

static void test_oh_bash_server(void **state)
{
    (void)state;
    if (!bb_have_program("python3"))
        skip();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "python3 -u -m http.server %d --bind 127.0.0.1", test_port());
    struct bb_reply r = bb_run_full(&ex, cmd, false, 1);
    assert_int_equal(bb_exit_code(&r), -1);
    assert_string_equal(bb_meta_str(&r, "suffix"),
                        "\n[The command timed out after 1.0 seconds. " TIMEOUT_TEMPLATE_TEXT "]");
    /* python may take longer than the timeout to start on a loaded machine. */
    char *seen = bb_output_until(&ex, bb_content(&r), "Serving HTTP on", 30);
    bb_assert_contains(seen, "Serving HTTP on");
    free(seen);
    bb_reply_free(&r);
    r = bb_run_full(&ex, "C-c", true, 30);
    assert_int_equal(bb_exit_code(&r), 0); /* python exits cleanly on KeyboardInterrupt */
    bb_assert_contains(bb_content(&r), "Keyboard interrupt received, exiting.");
    assert_string_equal(bb_meta_str(&r, "working_dir"), ex.work);
    bb_reply_free(&r);
    r = bb_run_full(&ex, "ls", false, 1);
    assert_int_equal(bb_exit_code(&r), 0);
    assert_null(strstr(bb_content(&r), "Keyboard interrupt received, exiting."));
    bb_reply_free(&r);
    /* Again: the port is free. */
    r = bb_run_full(&ex, cmd, false, 1);
    assert_int_equal(bb_exit_code(&r), -1);
    seen = bb_output_until(&ex, bb_content(&r), "Serving HTTP on", 30);
    bb_assert_contains(seen, "Serving HTTP on");
    free(seen);
    bb_reply_free(&r);
    r = bb_run_full(&ex, "C-c", true, 30);
    bb_reply_free(&r);
}

static void test_oh_background_server(void **state)
{
    (void)state;
    if (!bb_have_program("python3") || !bb_have_program("curl"))
        skip();
    char cmd[160];
    snprintf(cmd, sizeof cmd, "python3 -m http.server %d --bind 127.0.0.1 > /dev/null 2>&1 &",
             test_port());
    struct bb_reply r = bb_run(&ex, cmd);
    assert_int_equal(bb_exit_code(&r), 0);
    bb_reply_free(&r);
    /* The job keeps serving between commands. */
    snprintf(cmd, sizeof cmd,
             "for i in 1 2 3 4 5 6 7 8 9 10; do curl -s http://127.0.0.1:%d/ && break; sleep "
             "0.3; done",
             test_port());
    r = bb_run(&ex, cmd);
    assert_int_equal(bb_exit_code(&r), 0);
    bb_assert_contains(bb_content(&r), "Directory listing for");
    bb_reply_free(&r);
    bb_expect_contains(&ex, "kill %1 && wait %1; echo stopped", "stopped");
}

static void test_oh_multiline_commands(void **state)
{
    (void)state;
    struct bb_reply r = bb_run(&ex, "echo \\\n -e \"foo\"");
    assert_int_equal(bb_exit_code(&r), 0);
    bb_assert_contains(bb_content(&r), "foo");
    bb_reply_free(&r);
    r = bb_run(&ex, "printf 'hello\\nworld\\n'");
    bb_assert_contains(bb_content(&r), "hello\nworld");
    assert_null(strstr(bb_content(&r), ">")); /* test_no_ps2_in_output */
    bb_reply_free(&r);
    bb_expect_contains(&ex, "printf 'a\\n\\n\\nz\\n'", "\n\n\n");
}

static void test_oh_complex_commands(void **state)
{
    (void)state;
    struct bb_reply r = bb_run(
        &ex,
        "count=0; tries=0; while [ $count -lt 3 ]; do result=$(echo \"Heads\"); "
        "tries=$((tries+1)); echo \"Flip $tries: $result\"; if [ \"$result\" = \"Heads\" ]; then "
        "count=$((count+1)); else count=0; fi; done; echo \"Got 3 heads in a row after $tries "
        "flips!\";");
    assert_int_equal(bb_exit_code(&r), 0);
    bb_assert_contains(bb_content(&r), "Got 3 heads in a row after 3 flips!");
    bb_reply_free(&r);
}

static void test_oh_multiline_command_loop(void **state)
{
    (void)state;
    if (shell_is_ash())
        skip(); /* {01..04} is bash */
    struct bb_reply r =
        bb_run(&ex, "mkdir -p _modules && \\\nfor month in {01..04}; do\n    for day in "
                    "{01..05}; do\n        touch \"_modules/2024-${month}-${day}-sample.md\"\n"
                    "    done\ndone && echo \"created files\"\n");
    assert_int_equal(bb_exit_code(&r), 0);
    bb_assert_contains(bb_content(&r), "created files");
    bb_reply_free(&r);
    r = bb_run(&ex, "for file in _modules/*.md; do\n    new_date=$(echo $file | sed -E "
                    "'s/2024-(01|02|03|04)-/2024-/;s/2024-01/2024-08/;s/2024-02/2024-09/;s/2024-03/"
                    "2024-10/;s/2024-04/2024-11/')\n    mv \"$file\" \"$new_date\"\ndone && echo "
                    "\"success\"\n");
    assert_int_equal(bb_exit_code(&r), 0);
    bb_assert_contains(bb_content(&r), "success");
    bb_reply_free(&r);
    r = bb_run(&ex, "ls _modules | wc -l; rm -r _modules"); /* the renames merge months: 5 names */
    assert_string_equal(bb_content(&r), "5");
    bb_reply_free(&r);
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
    struct bb_reply r = bb_run(&ex, "mkdir -p empty && cd empty");
    bb_reply_free(&r);
    r = bb_run(&ex, joined);
    assert_string_equal(bb_observation(&r), "error");
    bb_assert_contains(bb_content(&r), "Cannot execute multiple commands at once");
    for (size_t i = 0; i < 7; i++) {
        char item[300];
        snprintf(item, sizeof item, "\n(%zu) %s", i + 1, cmds[i]);
        bb_assert_contains(bb_content(&r), item);
    }
    bb_reply_free(&r);
    for (size_t i = 0; i < 7; i++) {
        r = bb_run(&ex, cmds[i]);
        assert_string_equal(bb_observation(&r), "run");
        assert_int_equal(bb_exit_code(&r), 0);
        bb_assert_contains(bb_content(&r), want[i]);
        bb_reply_free(&r);
    }
    bb_expect_run(&ex, "cd .. && rmdir empty", BB_ANY_EXIT, NULL);
}

static void test_oh_basic_command(void **state)
{
    (void)state;
    struct bb_reply r = bb_run(&ex, "echo 'hello world'");
    bb_assert_contains(bb_content(&r), "hello world");
    bb_reply_free(&r);
    r = bb_run(&ex, "nonexistent_command");
    assert_int_equal(bb_exit_code(&r), 127);
    bb_assert_contains(bb_content(&r), shell_is_ash() ? "nonexistent_command: not found"
                                                      : "nonexistent_command: command not found");
    bb_reply_free(&r);
    bb_expect_contains(&ex, "echo 'hello   world    with\nspecial  chars'",
                       "hello   world    with\nspecial  chars");
    bb_expect_run(&ex, "echo \"first\" && echo \"second\" && echo \"third\"", BB_ANY_EXIT,
                  "first\nsecond\nthird");
}

static void test_oh_interactive_command(void **state)
{
    (void)state;
    /* No input comes: the 1 s no-change timeout returns (this executor runs with 1 s). */
    struct bb_reply r =
        bb_run_nonblocking(&ex, "read -p \"Enter name: \" name && echo \"Hello $name\"", false, 30);
    bb_assert_contains(bb_content(&r), "Enter name:");
    bb_assert_contains(bb_meta_str(&r, "suffix"),
                       "[The command has no new output after 1 seconds.");
    bb_reply_free(&r);
    r = bb_run_full(&ex, "John", true, 5);
    bb_assert_contains(bb_content(&r), "Hello John");
    bb_assert_contains(bb_meta_str(&r, "suffix"), "[The command completed with exit code 0.]");
    bb_reply_free(&r);
    r = bb_run(&ex, "cat << EOF\nline 1\nline 2\nEOF");
    bb_assert_contains(bb_content(&r), "line 1\nline 2");
    assert_int_equal(bb_exit_code(&r), 0);
    bb_reply_free(&r);
}

static void test_oh_long_output(void **state)
{
    (void)state;
    struct bb_reply r =
        bb_run_full(&ex, "for i in $(seq 1 5000); do echo \"Line $i\"; done", false, 10);
    assert_int_equal(bb_exit_code(&r), 0);
    bb_assert_contains(bb_content(&r), "Line 1\n");
    bb_assert_contains(bb_content(&r), "Line 5000");
    assert_string_equal(bb_meta_str(&r, "prefix"), "");
    bb_reply_free(&r);
}

static void test_oh_long_output_exceed_history_limit(void **state)
{
    (void)state;
    struct bb_reply r =
        bb_run_full(&ex, "for i in $(seq 1 50000); do echo \"Line $i\"; done", false, 30);
    assert_int_equal(bb_exit_code(&r), 0);
    bb_assert_contains(bb_meta_str(&r, "prefix"), "Previous command outputs are truncated");
    bb_assert_contains(bb_content(&r), "Line 40000");
    bb_assert_contains(bb_content(&r), "Line 50000");
    assert_null(strstr(bb_content(&r), "Line 38999\n"));
    bb_reply_free(&r);
}

static void test_oh_command_backslash(void **state)
{
    (void)state;
    struct bb_reply r =
        bb_run(&ex, "mkdir -p bs_dir && echo \"implemented_function\" > bs_dir/file_1.txt");
    assert_int_equal(bb_exit_code(&r), 0);
    bb_reply_free(&r);
    bb_expect_run(&ex, "find bs_dir -type f -exec grep -l \"implemented_function\" {} \\;", 0,
                  "bs_dir/file_1.txt");
    bb_expect_run(&ex, "rm -r bs_dir", BB_ANY_EXIT, NULL);
}

static void test_oh_command_output_continuation(void **state)
{
    (void)state;
    /* OpenHands' test with its timings scaled down (sleep 3 / timeout 2.5 -> 0.6 / 0.5). */
    struct bb_reply r =
        bb_run_full(&ex, "for i in 1 2 3 4 5; do echo $i; sleep 0.6; done", false, 0.5);
    assert_string_equal(bb_content(&r), "1");
    assert_string_equal(bb_meta_str(&r, "prefix"), "");
    bb_assert_contains(bb_meta_str(&r, "suffix"), "[The command timed out after 0.5 seconds.");
    bb_reply_free(&r);
    for (int expected = 2; expected <= 5; expected++) {
        char want[8];
        snprintf(want, sizeof want, "%d", expected);
        r = bb_run_full(&ex, "", false, 0.6);
        assert_string_equal(bb_meta_str(&r, "prefix"),
                            "[Below is the output of the previous command.]\n");
        assert_string_equal(bb_content(&r), want);
        bb_assert_contains(bb_meta_str(&r, "suffix"), "[The command timed out after 0.6 seconds.");
        bb_reply_free(&r);
    }
    r = bb_run_full(&ex, "", false, 5);
    bb_assert_contains(bb_meta_str(&r, "suffix"), "[The command completed with exit code 0.]");
    bb_reply_free(&r);
}

static void test_oh_long_running_command_follow_by_execute(void **state)
{
    (void)state;
    struct bb_reply r = bb_run_full(&ex, "for i in 1 2 3; do echo $i; sleep 0.6; done", false, 0.5);
    bb_assert_contains(bb_content(&r), "1");
    assert_int_equal(bb_exit_code(&r), -1);
    assert_string_equal(bb_meta_str(&r, "prefix"), "");
    bb_reply_free(&r);
    r = bb_run_full(&ex, "", false, 0.5);
    bb_assert_contains(bb_content(&r), "2");
    assert_string_equal(bb_meta_str(&r, "prefix"),
                        "[Below is the output of the previous command.]\n");
    assert_int_equal(bb_exit_code(&r), -1);
    bb_reply_free(&r);
    r = bb_run_full(&ex, "sleep 15", false, 0.5);
    assert_null(strstr(bb_content(&r), "3"));
    assert_string_equal(bb_meta_str(&r, "prefix"),
                        "[Below is the output of the previous command.]\n");
    bb_assert_contains(bb_meta_str(&r, "suffix"), "The previous command is still running");
    assert_int_equal(bb_exit_code(&r), -1);
    bb_reply_free(&r);
    r = bb_run_full(&ex, "", false, 5);
    bb_assert_contains(bb_content(&r), "3");
    bb_assert_contains(bb_meta_str(&r, "suffix"), "[The command completed with exit code 0.]");
    bb_reply_free(&r);
}

static void test_oh_python_interactive_input(void **state)
{
    (void)state;
    if (!bb_have_program("python3"))
        skip();
    const char *script = "python3 -c \"name = input('Enter your name: '); age = input('Enter your "
                         "age: '); print(f'Hello {name}, you are {age} years old')\"";
    for (int without_set_input = 0; without_set_input < 2; without_set_input++) {
        struct bb_reply r = bb_run_nonblocking(&ex, script, false, 30);
        bb_assert_contains(bb_content(&r), "Enter your name:");
        assert_int_equal(bb_exit_code(&r), -1);
        bb_reply_free(&r);
        if (without_set_input) {
            r = bb_run_full(&ex, "Alice", false, 5);
            assert_null(strstr(bb_content(&r), "Enter your age:"));
            bb_assert_contains(bb_meta_str(&r, "suffix"),
                               "Your command \"Alice\" is NOT executed. The "
                               "previous command is still running");
            assert_int_equal(bb_exit_code(&r), -1);
            bb_reply_free(&r);
        }
        r = bb_run_full(&ex, "Alice", true, 1);
        bb_assert_contains(bb_content(&r), "Enter your age:");
        assert_int_equal(bb_exit_code(&r), -1);
        bb_reply_free(&r);
        r = bb_run_full(&ex, "25", true, 5);
        bb_assert_contains(bb_content(&r), "Hello Alice, you are 25 years old");
        assert_int_equal(bb_exit_code(&r), 0);
        bb_assert_contains(bb_meta_str(&r, "suffix"), "[The command completed with exit code 0.]");
        bb_reply_free(&r);
    }
}

static void test_oh_bash_remove_prefix(void **state)
{
    (void)state;
    if (!bb_have_program("git"))
        skip();
    struct bb_reply r = bb_run(&ex, "mkdir -p rp && cd rp && git init -q && git remote add origin "
                                    "https://github.com/All-Hands-AI/OpenHands");
    assert_int_equal(bb_exit_code(&r), 0);
    bb_reply_free(&r);
    r = bb_run(&ex, "git remote -v");
    assert_int_equal(bb_exit_code(&r), 0);
    bb_assert_contains(bb_content(&r), "https://github.com/All-Hands-AI/OpenHands");
    assert_null(strstr(bb_content(&r), "git remote -v"));
    bb_reply_free(&r);
    bb_expect_run(&ex, "cd .. && rm -rf rp", BB_ANY_EXIT, NULL);
}

static void test_oh_env_vars_os_environ(void **state)
{
    (void)state;
    /* The container's environment reaches the shell (SANDBOX_ENV_FOOBAR=BAZ in OpenHands). */
    struct bb_reply r = bb_run(&ex, "echo $FOOBAR");
    assert_int_equal(bb_exit_code(&r), 0);
    assert_string_equal(bb_content(&r), "BAZ");
    bb_reply_free(&r);
}

static void test_oh_env_vars_runtime_operations(void **state)
{
    (void)state;
    struct bb_reply r = post_env("{\"QUUX\": \"abc\\\"def\"}");
    assert_int_equal(r.status, 200);
    bb_reply_free(&r);
    bb_expect_run(&ex, "echo $QUUX", BB_ANY_EXIT, "abc\"def");
    r = post_env("{\"FOOBAR\": \"xyz\"}");
    bb_reply_free(&r);
    bb_expect_run(&ex, "echo $QUUX $FOOBAR", BB_ANY_EXIT, "abc\"def xyz");
    /* Adding nothing changes nothing. */
    r = bb_run(&ex, "env | sort");
    char *before = strdup(bb_content(&r));
    bb_reply_free(&r);
    r = post_env("{}");
    bb_reply_free(&r);
    r = bb_run(&ex, "env | sort");
    assert_string_equal(bb_content(&r), before);
    free(before);
    bb_reply_free(&r);
    r = post_env("{\"QUUX\": \"new_value\"}");
    bb_reply_free(&r);
    bb_expect_run(&ex, "echo $QUUX", BB_ANY_EXIT, "new_value");
    r = bb_run(&ex, "export FOOBAR=BAZ"); /* as test_oh_env_vars_os_environ expects */
    bb_reply_free(&r);
}

/* ---- more of OpenHands' test_bash.py and test_env_vars.py ------------------------------- */

/* Runs command in a fresh empty directory of the workspace (cd'ed into), then back. */
static void enter_empty_dir(const char *name)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir %s && cd %s", name, name, name);
    struct bb_reply r = bb_run(&ex, cmd);
    assert_int_equal(bb_exit_code(&r), 0);
    bb_reply_free(&r);
}

static void leave_dir(const char *name)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "cd %s && rm -rf %s", ex.work, name);
    struct bb_reply r = bb_run(&ex, cmd);
    assert_int_equal(bb_exit_code(&r), 0);
    bb_reply_free(&r);
}

static void test_oh_cmd_run(void **state)
{
    (void)state;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "ls -l %s", ex.work);
    struct bb_reply r = bb_run(&ex, cmd);
    assert_int_equal(bb_exit_code(&r), 0);
    bb_reply_free(&r);
    enter_empty_dir("cmdrun");
    r = bb_run(&ex, "ls -l");
    assert_int_equal(bb_exit_code(&r), 0);
    bb_assert_contains(bb_content(&r), "total 0");
    bb_reply_free(&r);
    r = bb_run(&ex, "mkdir test");
    assert_int_equal(bb_exit_code(&r), 0);
    char user[64];
    snprintf(user, sizeof user, "%s", bb_meta_str(&r, "username"));
    bb_reply_free(&r);
    /* The directory belongs to the user the metadata names. */
    r = bb_run(&ex, "ls -l");
    assert_int_equal(bb_exit_code(&r), 0);
    bb_assert_contains(bb_content(&r), "test");
    bb_assert_contains(bb_content(&r), user);
    bb_reply_free(&r);
    bb_expect_run(&ex, "touch test/foo.txt", 0, NULL);
    r = bb_run(&ex, "ls -l test");
    assert_int_equal(bb_exit_code(&r), 0);
    bb_assert_contains(bb_content(&r), "foo.txt");
    bb_reply_free(&r);
    /* test_multi_cmd_run_in_single_line: several commands chained in one line. */
    r = bb_run(&ex, "rm -rf test && pwd && ls -l");
    assert_int_equal(bb_exit_code(&r), 0);
    bb_assert_contains(bb_content(&r), bb_path(ex.work, "cmdrun"));
    bb_assert_contains(bb_content(&r), "total 0");
    bb_reply_free(&r);
    leave_dir("cmdrun");
}

static void test_oh_stateful_cmd_and_home(void **state)
{
    (void)state;
    /* test_stateful_cmd and test_pwd_property. */
    struct bb_reply r = bb_run(&ex, "mkdir -p test_state/random_dir");
    assert_int_equal(bb_exit_code(&r), 0);
    bb_reply_free(&r);
    bb_expect_run(&ex, "cd test_state", 0, NULL);
    bb_expect_run(&ex, "pwd", BB_ANY_EXIT, bb_path(ex.work, "test_state"));
    r = bb_run(&ex, "cd random_dir && pwd");
    assert_int_equal(bb_exit_code(&r), 0);
    assert_string_equal(bb_content(&r), bb_path(ex.work, "test_state/random_dir"));
    assert_string_equal(bb_meta_str(&r, "working_dir"), bb_path(ex.work, "test_state/random_dir"));
    bb_reply_free(&r);
    /* test_run_as_user_correct_home_dir: ~ is the user's home (--home here). */
    bb_expect_run(&ex, "cd ~ && pwd", 0, ex.home);
    leave_dir("test_state");
}

static void test_oh_git_operation(void **state)
{
    (void)state;
    if (!bb_have_program("git"))
        skip();
    enter_empty_dir("gitop");
    /* The identity the executor configured lets a commit through without any git config. */
    static const char *const steps[] = {"git init -q", "echo \"hello\" > test_file.txt",
                                        "git add test_file.txt"};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        struct bb_reply r = bb_run(&ex, steps[i]);
        assert_int_equal(bb_exit_code(&r), 0);
        bb_reply_free(&r);
    }
    struct bb_reply r = bb_run(&ex, "git diff --no-color --cached");
    assert_int_equal(bb_exit_code(&r), 0);
    bb_assert_contains(bb_content(&r), "b/test_file.txt");
    bb_assert_contains(bb_content(&r), "+hello");
    bb_reply_free(&r);
    bb_expect_run(&ex, "git commit -q -m \"test commit\" && git log --format=%an --oneline | wc -l",
                  0, "1");
    leave_dir("gitop");
}

static void test_oh_python_version(void **state)
{
    (void)state;
    struct bb_reply r = bb_run(&ex, "command -v python >/dev/null && echo yes || echo no");
    bool have = strcmp(bb_content(&r), "yes") == 0;
    bb_reply_free(&r);
    if (!have)
        skip();
    r = bb_run(&ex, "python --version");
    assert_int_equal(bb_exit_code(&r), 0);
    bb_assert_contains(bb_content(&r), "Python 3");
    bb_reply_free(&r);
}

static void test_oh_long_output_from_nested_directories(void **state)
{
    (void)state;
    /* 100 folders of 100 files (one touch per folder: 10,000 forks take too long here). */
    struct bb_reply r = bb_run_full(
        &ex,
        "mkdir -p nested && cd nested && for i in $(seq 1 100); do mkdir -p \"folder_$i\"; "
        "touch $(seq 1 100 | sed \"s|.*|folder_$i/file_&.txt|\"); done",
        false, 60);
    assert_int_equal(bb_exit_code(&r), 0);
    bb_reply_free(&r);
    r = bb_run_full(&ex, "ls -R .", false, 60);
    assert_int_equal(bb_exit_code(&r), 0);
    const char *c = bb_content(&r);
    bb_assert_contains(c, "folder_1");
    bb_assert_contains(c, "file_1.txt");
    bb_assert_contains(c, "folder_100");
    bb_assert_contains(c, "file_100.txt");
    bb_reply_free(&r);
    leave_dir("nested");
}

static void test_oh_stress_soft_and_hard_timeout(void **state)
{
    (void)state;
    /* OpenHands runs 10 rounds with 1 s sleeps and a 2 s hard timeout; 3 shorter ones here. */
    for (int i = 0; i < 3; i++) {
        struct bb_reply r = bb_run_nonblocking(
            &ex,
            "read -p \"Do you want to continue? [Y/n] \" answer; if [ \"$answer\" = \"Y\" ]; then "
            "echo \"Proceeding with operation...\"; echo \"Operation completed successfully!\"; "
            "else echo \"Operation cancelled.\"; exit 1; fi",
            false, 30);
        bb_assert_contains(bb_content(&r), "Do you want to continue?");
        assert_int_equal(bb_exit_code(&r), -1);
        bb_reply_free(&r);
        r = bb_run_full(&ex, "Y", true, 5);
        bb_assert_contains(bb_content(&r), "Proceeding with operation...");
        bb_assert_contains(bb_content(&r), "Operation completed successfully!");
        assert_int_equal(bb_exit_code(&r), 0);
        bb_assert_contains(bb_meta_str(&r, "suffix"), "[The command completed with exit code 0.]");
        bb_reply_free(&r);
        char cmd[256], want[64];
        snprintf(cmd, sizeof cmd,
                 "export i=%d; for j in $(seq 1 100); do echo \"Line $j - Iteration $i - "
                 "$(printf '%%1000s' | tr \" \" \"*\")\"; sleep 0.5; done",
                 i);
        r = bb_run_full(&ex, cmd, false, 1);
        assert_int_equal(bb_exit_code(&r), -1);
        snprintf(want, sizeof want, "Line 1 - Iteration %d - ****", i);
        bb_assert_contains(bb_content(&r), want);
        bb_reply_free(&r);
        r = bb_run(&ex, "ls");
        assert_int_equal(bb_exit_code(&r), -1);
        bb_assert_contains(bb_meta_str(&r, "suffix"), "The previous command is still running");
        bb_reply_free(&r);
        r = bb_run_full(&ex, "C-c", true, 5);
        assert_int_equal(bb_exit_code(&r), 130);
        bb_reply_free(&r);
        bb_expect_run(&ex, "ls", 0, NULL);
    }
}

/* A ^C that reaches no live process (here: a job that ignores it; in the flake, one that had
 * just exited) leaves the loop running: the executor sends it again to the loop's next job,
 * and the prompt comes back with 130. */
static void test_interrupt_resent_to_next_job(void **state)
{
    (void)state;
    struct bb_reply r = bb_run_full(&ex,
                                    "for j in $(seq 1 30); do if [ $j = 1 ]; then echo first; "
                                    "sh -c 'trap \"\" INT; sleep 5'; else sleep 1; fi; done; "
                                    "echo loop-ended",
                                    false, 1);
    assert_int_equal(bb_exit_code(&r), -1);
    bb_assert_contains(bb_content(&r), "first");
    bb_reply_free(&r);
    /* the whole loop would take 34 s: the reply before 20 s is the resent ^C's */
    r = bb_run_full(&ex, "C-c", true, 20);
    assert_int_equal(bb_exit_code(&r), 130);
    assert_null(strstr(bb_content(&r), "loop-ended"));
    bb_reply_free(&r);
    bb_expect_run(&ex, "echo after", 0, "after");
}

static void test_oh_env_vars_persist_after_restart(void **state)
{
    (void)state;
    /* A credential-looking name is the agent's to set: POST /env does not filter it. */
    struct bb_reply r = post_env("{\"GITHUB_TOKEN\": \"test_token\"}");
    assert_int_equal(r.status, 200);
    bb_reply_free(&r);
    bb_expect_run(&ex, "echo $GITHUB_TOKEN", BB_ANY_EXIT, "test_token");
    r = bb_run(&ex, "grep \"^export GITHUB_TOKEN=\" ~/.bashrc");
    assert_int_equal(bb_exit_code(&r), 0);
    bb_assert_contains(bb_content(&r), "export GITHUB_TOKEN=");
    bb_reply_free(&r);
    /* A new shell (OpenHands pauses and resumes the container) reads it back. */
    bb_expect_run(&ex, "exit", BB_ANY_EXIT, NULL);
    bb_expect_run(&ex, "echo $GITHUB_TOKEN", 0, "test_token");
}

/* ---- keys to a running program ----------------------------------------------------------- */

static void test_ctrl_z_stops_the_program(void **state)
{
    (void)state;
    struct bb_reply r = bb_run_full(&ex, "sleep 31.4", false, 0.3);
    assert_int_equal(bb_exit_code(&r), -1);
    bb_reply_free(&r);
    /* Stopped, not killed: the shell's prompt comes back with 128 + SIGTSTP. */
    r = bb_run_full(&ex, "C-z", true, 5);
    assert_int_equal(bb_exit_code(&r), 148);
    assert_string_equal(bb_meta_str(&r, "suffix"),
                        "\n[The command completed with exit code 148. CTRL+Z was sent.]");
    bb_assert_contains(bb_content(&r), "Stopped");
    bb_reply_free(&r);
    bb_expect_contains(&ex, "jobs", "sleep 31.4");
    bb_expect_contains(&ex, "kill -9 %1; sleep 0.2; echo gone", "gone");
    bb_expect_run(&ex, "echo fine", BB_ANY_EXIT, "fine");
}

/* ---- bodies over the limit --------------------------------------------------------------- */

static void test_chunked_body_too_large(void **state)
{
    (void)state;
    /* No Content-Length to go by: what comes past 64 MiB is read and dropped (so that the
     * client, still sending, gets to read the answer), then refused. */
    size_t unsent;
    struct bb_reply r = bb_post_spaces(&ex, "/execute_action", NULL, 80u << 20, true, &unsent);
    assert_int_equal(r.status, 413);
    assert_string_equal(bb_detail(&r), "Request body too large (limit 67108864 bytes)");
    assert_int_equal(unsent, 0);
    bb_reply_free(&r);
    bb_expect_run(&ex, "echo still here", BB_ANY_EXIT, "still here");
}

/* ---- a full disk (root only: the workspace is a 256 KiB tmpfs of the agent's) ------------ */

static void test_full_disk_from_the_agent(void **state)
{
    (void)state;
    struct bb_reply r = bb_run(&ex, "id -u");
    assert_string_equal(bb_content(&r), "65534");
    bb_reply_free(&r);
    bb_expect_run(&ex, "echo old content > keep.txt", BB_ANY_EXIT, NULL);
    /* The agent fills the disk. */
    r = bb_run(&ex, "dd if=/dev/zero of=fill bs=1k count=1000 2>&1; echo rc=$?");
    bb_assert_contains(bb_content(&r), "No space left on device");
    bb_assert_contains(bb_content(&r), "rc=1");
    bb_reply_free(&r);
    /* The executor writes nothing there itself: it still answers. */
    r = bb_http(&ex, "GET", "/alive", NULL);
    assert_int_equal(r.status, 200);
    bb_reply_free(&r);
    r = bb_http(&ex, "GET", "/server_info", NULL);
    assert_int_equal(r.status, 200);
    bb_reply_free(&r);
    /* Writes get a clear error, and leave nothing half-written behind: no new file, and an
     * existing one keeps its content (OpenHands truncates it first). */
    static char big[65536];
    memset(big, 'x', sizeof big - 1);
    const char *more = bb_path(ex.work, "more.txt");
    r = bb_act(&ex, "write", json_pack("{s:s, s:s}", "path", "more.txt", "content", big));
    assert_string_equal(bb_observation(&r), "error");
    char want[512];
    snprintf(want, sizeof want, "Cannot write %s: No space left on device.", more);
    assert_string_equal(bb_content(&r), want);
    bb_reply_free(&r);
    r = bb_act(&ex, "edit",
               json_pack("{s:s, s:s, s:s}", "command", "create", "path", more, "file_text", big));
    snprintf(want, sizeof want,
             "ERROR:\nRan into [Errno 28] No space left on device: '%s' while trying to write to "
             "%s",
             more, more);
    assert_string_equal(bb_content(&r), want);
    bb_reply_free(&r);
    char query[300];
    snprintf(query, sizeof query, "?destination=%s", ex.work);
    r = bb_upload(&ex, query, "up.bin", big, sizeof big);
    assert_int_equal(r.status, 507);
    bb_assert_contains(bb_detail(&r), "No space left on device");
    bb_reply_free(&r);
    r = bb_act(&ex, "write", json_pack("{s:s, s:s}", "path", "keep.txt", "content", big));
    snprintf(want, sizeof want, "Cannot write %s: No space left on device.",
             bb_path(ex.work, "keep.txt"));
    assert_string_equal(bb_content(&r), want);
    bb_reply_free(&r);
    r = bb_act(&ex, "edit",
               json_pack("{s:s, s:s, s:s, s:s}", "command", "str_replace", "path",
                         bb_path(ex.work, "keep.txt"), "old_str", "old", "new_str", big));
    bb_assert_contains(bb_content(&r), "No space left on device");
    bb_reply_free(&r);
    bb_expect_run(&ex, "ls -1; cat keep.txt; echo still here", BB_ANY_EXIT,
                  "fill\nkeep.txt\nold content\nstill here");
    /* Space again: writes work again. */
    bb_expect_run(&ex, "rm fill", BB_ANY_EXIT, NULL);
    r = bb_act(&ex, "write", json_pack("{s:s, s:s}", "path", "more.txt", "content", "ok"));
    assert_string_equal(bb_observation(&r), "write");
    bb_reply_free(&r);
}

/* ---- no bash (root only: bash hidden in a mount namespace of the executor's) --------------- */

static void test_no_bash_falls_back_to_sh(void **state)
{
    (void)state;
    /* /bin/sh (dash or busybox here) with the same protocol. */
    struct bb_reply r = bb_run(&ex, "test -x /bin/bash || echo no-bash");
    assert_string_equal(bb_content(&r), "no-bash");
    assert_int_equal(bb_exit_code(&r), 0);
    assert_string_equal(bb_meta_str(&r, "working_dir"), ex.work);
    bb_reply_free(&r);
    r = bb_run(&ex, "sh -c 'exit 3'");
    assert_int_equal(bb_exit_code(&r), 3);
    assert_string_equal(bb_meta_str(&r, "suffix"), "\n[The command completed with exit code 3.]");
    bb_reply_free(&r);
    r = bb_run(&ex, "cd /tmp && export NB=1");
    assert_string_equal(bb_meta_str(&r, "working_dir"), "/tmp");
    bb_reply_free(&r);
    bb_expect_run(&ex, "echo $NB; pwd", BB_ANY_EXIT, "1\n/tmp");
    r = bb_run_full(&ex, "echo begin; sleep 5", false, 0.5);
    assert_int_equal(bb_exit_code(&r), -1);
    assert_string_equal(bb_content(&r), "begin");
    bb_reply_free(&r);
    r = bb_run_full(&ex, "C-c", true, 5);
    assert_int_equal(bb_exit_code(&r), 130);
    bb_reply_free(&r);
    r = bb_run(&ex, "echo a\necho b");
    assert_string_equal(bb_observation(&r), "error");
    bb_reply_free(&r);
    bb_expect_run(&ex, "echo back", BB_ANY_EXIT, "back");
}

/* ---- executors of their own: timeouts from the environment, the setup script's limit ------ */

static int stop_own(void **state)
{
    (void)state;
    return bb_stop(&ex);
}

static int start_env_no_change_timeout(void **state)
{
    (void)state;
    return bb_start(
        &ex, &(struct bb_options){.no_change_timeout = "", .env = {"NO_CHANGE_TIMEOUT_SECONDS=2"}});
}

static void test_no_change_timeout_from_environment(void **state)
{
    (void)state;
    struct bb_reply r = bb_run_nonblocking(&ex, "echo a; sleep 5", false, 30);
    assert_int_equal(bb_exit_code(&r), -1);
    assert_string_equal(bb_content(&r), "a");
    bb_assert_prefix(bb_meta_str(&r, "suffix"),
                     "\n[The command has no new output after 2 seconds. ");
    bb_reply_free(&r);
    /* Blocking commands do not get it: silent for longer, still waited for. */
    r = bb_run_full(&ex, "C-c", true, 5);
    bb_reply_free(&r);
    bb_expect_run(&ex, "sleep 2.5; echo done", 0, "done");
}

static int start_default_no_change_timeout(void **state)
{
    (void)state;
    return bb_start(&ex, &(struct bb_options){.no_change_timeout = ""});
}

static void test_no_change_timeout_default(void **state)
{
    (void)state;
    /* The default (10 s) is longer than this hard timeout: the hard one ends the call. */
    struct bb_reply r = bb_run_nonblocking(&ex, "echo a; sleep 5", false, 2.5);
    assert_int_equal(bb_exit_code(&r), -1);
    bb_assert_prefix(bb_meta_str(&r, "suffix"), "\n[The command timed out after 2.5 seconds. ");
    bb_reply_free(&r);
    r = bb_run_full(&ex, "C-c", true, 5);
    bb_reply_free(&r);
    /* An invalid value in the environment is refused at start. */
    static const char *const args[] = {"--socket", "/nonexistent/paddock.sock", NULL};
    setenv("NO_CHANGE_TIMEOUT_SECONDS", "soon", 1);
    int status;
    char *err = bb_executor_stderr(args, &status);
    unsetenv("NO_CHANGE_TIMEOUT_SECONDS");
    assert_int_equal(status, 2);
    assert_string_equal(err, "paddock-executor: invalid NO_CHANGE_TIMEOUT_SECONDS: soon\n");
    free(err);
}

/* A workspace with .paddock/setup.sh holding text, started with --setup-timeout 1. */
static int start_with_setup(const char *text)
{
    static const char *const args[] = {"--setup-timeout", "1", NULL};
    if (bb_prepare(&ex, &(struct bb_options){.args = args, .own_home = true}) < 0)
        return -1;
    if (mkdir(ex.work, 0755) < 0 || mkdir(bb_path(ex.work, ".paddock"), 0755) < 0)
        return -1;
    bb_write_file(bb_path(ex.work, ".paddock/setup.sh"), text, strlen(text));
    return bb_launch(&ex);
}

static int start_setup_hangs(void **state)
{
    (void)state;
    return start_with_setup("export HALF=1\nsleep 31.7\n");
}

static void test_setup_script_limit(void **state)
{
    (void)state;
    /* Served once the limit passed; the script (and its shell) are gone, and the agent's
     * first observation says why its shell is a new one. */
    double deadline = bb_now() + 5;
    while (processes_running("sleep", "31.7") && bb_now() < deadline)
        usleep(20000);
    assert_false(processes_running("sleep", "31.7"));
    struct bb_reply r = bb_run(&ex, "echo \"[$HALF]\"; pwd");
    char want[256];
    snprintf(want, sizeof want, "[]\n%s", ex.work);
    assert_string_equal(bb_content(&r), want);
    bb_assert_contains(bb_meta_str(&r, "suffix"),
                       "\n[The shell exited with code 137 and a new shell was started in ");
    bb_reply_free(&r);
    r = bb_run(&ex, "echo again");
    assert_string_equal(bb_meta_str(&r, "suffix"), "\n[The command completed with exit code 0.]");
    bb_reply_free(&r);
}

static int start_setup_exits(void **state)
{
    (void)state;
    return start_with_setup("export GONE=1\nexit 3\n");
}

static void test_setup_script_exits(void **state)
{
    (void)state;
    struct bb_reply r = bb_run(&ex, "echo \"[$GONE]\"");
    assert_string_equal(bb_content(&r), "[]");
    bb_assert_contains(bb_meta_str(&r, "suffix"),
                       "\n[The shell exited with code 3 and a new shell was started in ");
    bb_reply_free(&r);
}

int main(int argc, char **argv)
{
    if (bb_init(argc, argv) < 0)
        return 2;
    const struct CMUnitTest tests[] = {
        SETTLED(test_alive_and_server_info),
        SETTLED(test_echo),
        SETTLED(test_quick_commands_fault_in_no_pages),
        SETTLED(test_cd_persists),
        SETTLED(test_export_persists),
        SETTLED(test_exit_codes),
        SETTLED(test_openhands_serialisation_accepted),
        SETTLED(test_multiline_output),
        SETTLED(test_single_commands_spanning_lines),
        SETTLED(test_multiple_commands_refused),
        SETTLED(test_unparsable_sent_as_is),
        SETTLED(test_find_exec),
        SETTLED(test_long_command),
        SETTLED(test_huge_commands),
        SETTLED(test_ctrl_c_after_huge_command),
        SETTLED(test_marker_and_wrapper_lookalikes),
        SETTLED(test_marker_code_printed),
        SETTLED(test_rc_aliases_spare_the_marker),
        SETTLED(test_rc_aliases_spare_hidden_steps),
        SETTLED(test_no_command_dir),
        SETTLED(test_hidden_step_in_nested_shell),
        SETTLED(test_rc_ifs_digits),
        SETTLED(test_invalid_utf8),
        SETTLED(test_big_output_truncated),
        SETTLED(test_nul_dropped_hidden_uncapped),
        SETTLED(test_line_window),
        SETTLED(test_background_pid),
        SETTLED(test_background_job_survives),
        SETTLED(test_secrets_not_inherited),
        SETTLED(test_py_interpreter_path),
        SETTLED(test_hard_timeout_then_ctrl_c),
        SETTLED(test_tty_modes_restored),
        SETTLED(test_soft_timeout_and_continue),
        SETTLED(test_input_to_running_program),
        SETTLED(test_is_input_long_running_python_like),
        SETTLED(test_input_with_several_commands_refused),
        SETTLED(test_python_repl),
        SETTLED(test_ctrl_c_loop),
        SETTLED(test_keys_at_the_prompt),
        SETTLED(test_output_ending_like_a_marker),
        SETTLED(test_nothing_running),
        SETTLED(test_nothing_running_command_is_empty),
        SETTLED(test_static_in_cwd),
        SETTLED(test_static_timeout_and_busy_main),
        SETTLED(test_env_endpoint),
        SETTLED(test_env_endpoint_errors),
        SETTLED(test_env_output_not_stolen),
        SETTLED(test_git_identity),
        SETTLED(test_exec_redirects_stdout),
        SETTLED(test_exec_closes_stdin),
        SETTLED(test_orphans_reaped),
        SETTLED(test_disk_full),
        SETTLED(test_errors),
        SETTLED(test_body_too_large),
        SETTLED(test_concurrent_requests_in_order),
        SETTLED(test_slow_client_does_not_block),
        SETTLED(test_shell_exit_restarts),
        SETTLED(test_oh_env_vars_os_environ),
        SETTLED(test_oh_bash_server),
        SETTLED(test_oh_background_server),
        SETTLED(test_oh_multiline_commands),
        SETTLED(test_oh_complex_commands),
        SETTLED(test_oh_multiline_command_loop),
        SETTLED(test_oh_multiple_multiline_commands),
        SETTLED(test_oh_basic_command),
        SETTLED(test_oh_interactive_command),
        SETTLED(test_oh_long_output),
        SETTLED(test_oh_long_output_exceed_history_limit),
        SETTLED(test_oh_command_backslash),
        SETTLED(test_oh_command_output_continuation),
        SETTLED(test_oh_long_running_command_follow_by_execute),
        SETTLED(test_oh_python_interactive_input),
        SETTLED(test_oh_bash_remove_prefix),
        SETTLED(test_oh_env_vars_runtime_operations),
        SETTLED(test_oh_cmd_run),
        SETTLED(test_oh_stateful_cmd_and_home),
        SETTLED(test_oh_git_operation),
        SETTLED(test_oh_python_version),
        SETTLED(test_oh_long_output_from_nested_directories),
        SETTLED(test_oh_stress_soft_and_hard_timeout),
        SETTLED(test_interrupt_resent_to_next_job),
        SETTLED(test_oh_env_vars_persist_after_restart),
        SETTLED(test_ctrl_z_stops_the_program),
        SETTLED(test_chunked_body_too_large),
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
        cmocka_unit_test(test_agent_long_command_file),
        cmocka_unit_test(test_agent_kill_minus_one_builtin),
        cmocka_unit_test(test_agent_kill_minus_one_external),
        cmocka_unit_test(test_agent_fork_bomb),
    };
    const struct CMUnitTest full_disk_tests[] = {
        cmocka_unit_test(test_full_disk_from_the_agent),
    };
    const struct CMUnitTest no_bash_tests[] = {
        cmocka_unit_test(test_no_bash_falls_back_to_sh),
    };
    const struct CMUnitTest own_tests[] = {
        cmocka_unit_test_setup_teardown(test_no_change_timeout_from_environment,
                                        start_env_no_change_timeout, stop_own),
        cmocka_unit_test_setup_teardown(test_no_change_timeout_default,
                                        start_default_no_change_timeout, stop_own),
        cmocka_unit_test_setup_teardown(test_setup_script_limit, start_setup_hangs, stop_own),
        cmocka_unit_test_setup_teardown(test_setup_script_exits, start_setup_exits, stop_own),
    };
    const struct CMUnitTest not_root_tests[] = {
        cmocka_unit_test(test_agent_not_root),
    };
    /* EXECUTOR_TEST_GROUP=NAME runs one group only (while working on it). */
    const char *only = getenv("EXECUTOR_TEST_GROUP");
#define WANT(name) (!only || !*only || strcmp(only, name) == 0)
    int failed = 0;
    bb_settle_target = &ex;
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
    grp = &group_default;
    if (WANT("own"))
        failed += cmocka_run_group_tests_name("own executors", own_tests, NULL, NULL);
    /* Groups that need root to set up (mount namespaces): skipped without it. */
    grp = &group_full_disk;
    if (WANT("full-disk") && geteuid() == 0)
        failed += cmocka_run_group_tests_name("full-disk", full_disk_tests, start_executor,
                                              stop_executor);
    else if (WANT("full-disk"))
        failed += cmocka_run_group_tests_name("full-disk", not_root_tests, NULL, NULL);
    grp = &group_no_bash;
    if (WANT("no-bash") && geteuid() == 0)
        failed +=
            cmocka_run_group_tests_name("no-bash", no_bash_tests, start_executor, stop_executor);
    else if (WANT("no-bash"))
        failed += cmocka_run_group_tests_name("no-bash", not_root_tests, NULL, NULL);
#undef WANT
    return failed;
}
