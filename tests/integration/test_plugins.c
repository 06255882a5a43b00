/* Integration tests of OpenHands' plugins and the protocol's last deviations, against the real
 * Docker daemon and paddock/base:local (python3, no IPython: cells go through paddock's
 * run_ipython): the `plugins` session option (shown, passed on, vscode refused), every
 * agentskills function's output as OpenHands prints it, the agent user (run_as_openhands,
 * user_id), NUL bytes and hidden commands, and an ordinary agent run under the default
 * policy that never waits for approval. */
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

/* ---- helpers ---- */

static json_t *execute(const char *id, json_t *action)
{
    json_t *body = json_pack("{s:o}", "action", action);
    char *b = json_dumps(body, JSON_COMPACT);
    char *path = strdupf("/v1/sessions/%s/execute_action", id);
    struct reply r;
    api(harness_eng, "POST", path, b, &r);
    if (r.status != 200)
        fprintf(stderr, "%s → HTTP %ld %s\n", b, r.status, r.body ? r.body : r.err);
    assert_int_equal(r.status, 200);
    json_t *obs = json_incref(r.json);
    reply_free(&r);
    free(path);
    free(b);
    json_decref(body);
    return obs;
}

/* A cell's output (without the two info lines); caller frees. */
static char *cell(const char *id, const char *code)
{
    json_t *obs = execute(id, json_pack("{s:s,s:{s:s,s:b}}", "action", "run_ipython", "args",
                                        "code", code, "include_extra", 0));
    if (strcmp(jstr(obs, "observation"), "run_ipython") != 0)
        fail_msg("cell %s: %s", code, json_dumps(obs, JSON_COMPACT));
    char *out = strdup(jstr(obs, "content"));
    json_decref(obs);
    return out;
}

static void cell_expect(const char *id, const char *code, const char *want)
{
    char *got = cell(id, code);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "cell:\n%s\nwant:\n%s\ngot:\n%s\n", code, want, got);
    assert_string_equal(got, want);
    free(got);
}

static void run_expect(const char *id, const char *command, const char *want)
{
    json_t *obs = session_run(harness_eng, id, command);
    if (strcmp(jstr(obs, "content"), want) != 0)
        fprintf(stderr, "%s:\nwant: %s\ngot:  %s\n", command, want, jstr(obs, "content"));
    assert_string_equal(jstr(obs, "content"), want);
    json_decref(obs);
}

/* OpenHands' window of f.txt ("line N" on line N, 250 lines): the header, the lines
 * first..last and the markers around them. */
static char *window(int first, int last, bool hint)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    fprintf(f, "[File: /workspace/f.txt (250 lines total)]\n");
    if (first > 1)
        fprintf(f, "(%d more lines above)\n", first - 1);
    else
        fprintf(f, "(this is the beginning of the file)\n");
    for (int i = first; i <= last; i++)
        fprintf(f, "%d|line %d\n", i, i);
    if (last < 250)
        fprintf(f, "(%d more lines below)", 250 - last);
    else
        fprintf(f, "(this is the end of the file)");
    if (hint)
        fprintf(f, "\n[Use `scroll_down` to view the next 100 lines of the file!]");
    fclose(f);
    return text;
}

static void assert_starts(const char *text, const char *prefix)
{
    if (strncmp(text, prefix, strlen(prefix)) != 0)
        fprintf(stderr, "want a text starting with:\n%s\ngot:\n%s\n", prefix, text);
    assert_true(strncmp(text, prefix, strlen(prefix)) == 0);
}

static void cell_window(const char *id, const char *code, int first, int last, bool hint)
{
    char *want = window(first, last, hint);
    cell_expect(id, code, want);
    free(want);
}

static json_t *options_of(const char *id)
{
    char *path = strdupf("/v1/sessions/%s", id);
    json_t *s = api_json(harness_eng, "GET", path, NULL, 200);
    free(path);
    json_t *o = json_incref(json_object_get(s, "options"));
    json_decref(s);
    return o;
}

static void assert_plugins(json_t *opts, const char *want_csv)
{
    char got[256] = "";
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(opts, "plugins"), i, x) snprintf(
        got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? "," : "", json_string_value(x));
    assert_string_equal(got, want_csv);
}

/* ---- plugins ---- */

/* Without the option: Python cells, no agentskills, paddock's agent user. */
static void test_default_plugins_and_user(void **state)
{
    json_t *s = session_new(harness_eng, NULL);
    const char *id = jstr(s, "id");
    json_t *o = options_of(id);
    assert_plugins(o, "ipython");
    assert_string_equal(jstr(o, "user"), "agent");
    assert_int_equal(json_integer_value(json_object_get(o, "user_id")), 1000);
    json_decref(o);
    cell_expect(id, "print(6*7)", "42");
    json_t *obs = session_run(harness_eng, id, "python3 -c 'import agentskills' 2>&1 | tail -1");
    assert_non_null(strstr(jstr(obs, "content"), "No module named 'agentskills'"));
    json_decref(obs);
    run_expect(id, "echo $USER $HOME $(id -u)", "agent /home/agent 1000");
    session_delete(harness_eng, id);
    json_decref(s);
}

static void test_plugins_refused(void **state)
{
    static const struct {
        const char *body, *says;
    } bad[] = {
        {"{\"plugins\": [\"vscode\"]}", "vscode is not available: paddock runs no VS Code server"},
        {"{\"plugins\": [\"jupyter\", \"emacs\"]}", "unknown plugin \"emacs\""},
        {"{\"plugins\": \"jupyter\"}", "\"plugins\" must be an array"},
        {"{\"plugins\": [1]}", "unknown plugin (not a string)"},
        {"{\"run_as_openhands\": 1}", "\"run_as_openhands\" must be true or false"},
        {"{\"user_id\": 0}", "\"user_id\" must be an integer from 1 to 65534"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct reply r;
        api(harness_eng, "POST", "/v1/sessions", bad[i].body, &r);
        const char *msg = jstr(r.json, "error.message");
        if (r.status != 400 || !msg || !strstr(msg, bad[i].says))
            fprintf(stderr, "%s → %ld %s\n", bad[i].body, r.status, r.body);
        assert_int_equal(r.status, 400);
        assert_non_null(strstr(msg, bad[i].says));
        reply_free(&r);
    }
}

/* No plugins at all: run_ipython is refused by the executor, naming the plugin. */
static void test_no_plugins(void **state)
{
    json_t *s = session_new(harness_eng, "{\"plugins\": []}");
    const char *id = jstr(s, "id");
    json_t *o = options_of(id);
    assert_plugins(o, "");
    json_decref(o);
    json_t *obs =
        execute(id, json_pack("{s:s,s:{s:s}}", "action", "run_ipython", "args", "code", "1"));
    assert_string_equal(jstr(obs, "observation"), "error");
    assert_non_null(strstr(jstr(obs, "content"), "run_ipython is not available"));
    json_decref(obs);
    session_delete(harness_eng, id);
    json_decref(s);
}

/* Every agentskills function, its output exactly as OpenHands' file_ops prints it. */
static void test_agent_skills(void **state)
{
    json_t *s = session_new(harness_eng, "{\"plugins\": [\"agent_skills\", \"jupyter\"]}");
    const char *id = jstr(s, "id");
    json_t *o = options_of(id);
    assert_plugins(o, "agent_skills,jupyter");
    json_decref(o);
    run_expect(id,
               "seq 1 250 | sed 's/^/line /' > /workspace/f.txt && mkdir -p /workspace/d/sub && "
               "echo \"x = 'needle'\" > /workspace/d/sub/a.py && echo nothing > /workspace/d/b.txt "
               "&& echo needle > /workspace/d/.hidden",
               "");

    cell_window(id, "from agentskills import *\nopen_file('/workspace/f.txt')", 1, 100, true);
    cell_window(id, "scroll_down()", 101, 201, false);
    cell_window(id, "scroll_down()", 151, 250, false);
    cell_window(id, "scroll_up()", 101, 201, false);
    cell_window(id, "goto_line(200)", 151, 250, false);
    cell_window(id, "goto_line(20)", 1, 100, false);
    cell_window(id, "open_file('/workspace/f.txt', 150, 10)", 145, 155, true);
    cell_window(id, "open_file('/workspace/f.txt', line_number=250, context_lines=500)", 151, 250,
                false);
    cell_expect(id, "goto_line(300)", "ERROR: Line number must be between 1 and 250.");
    cell_expect(id, "open_file('/workspace/f.txt', 0)",
                "ERROR: Line number must be between 1 and 250");
    cell_expect(id, "open_file('/workspace/nope')", "ERROR: File /workspace/nope not found.");

    char want[1024];
    int n = snprintf(want, sizeof(want),
                     "[Found 11 matches for \"line 24\" in /workspace/f.txt]\nLine 24: line 24\n");
    for (int i = 240; i < 250; i++)
        n += snprintf(want + n, sizeof(want) - (size_t)n, "Line %d: line %d\n", i, i);
    snprintf(want + n, sizeof(want) - (size_t)n,
             "[End of matches for \"line 24\" in /workspace/f.txt]");
    cell_expect(id, "search_file('line 24', '/workspace/f.txt')", want);
    cell_expect(id, "search_file('zzz')", "[No matches found for \"zzz\" in /workspace/f.txt]");
    cell_expect(id, "search_file('x', '/workspace/none')",
                "ERROR: File /workspace/none not found.");
    cell_expect(id, "search_dir('needle', '/workspace/d')",
                "[Found 1 matches for \"needle\" in /workspace/d]\n/workspace/d/sub/a.py (Line 1): "
                "x = 'needle'\n[End of matches for \"needle\" in /workspace/d]");
    cell_expect(id, "search_dir('absent', '/workspace/d')",
                "No matches found for \"absent\" in /workspace/d");
    cell_expect(id, "search_dir('x', '/nope')", "ERROR: Directory /nope not found");
    cell_expect(id, "find_file('a.py', '/workspace/d')",
                "[Found 1 matches for \"a.py\" in /workspace/d]\n/workspace/d/sub/a.py\n[End of "
                "matches for \"a.py\" in /workspace/d]");
    cell_expect(id, "find_file('zz.c', '/workspace/d')",
                "[No matches found for \"zz.c\" in /workspace/d]");
    cell_expect(id, "find_file('x', '/nope')", "ERROR: Directory /nope not found");

    /* file_editor: the executor's editor, as the agent, with its undo history in the cell's
     * process. It returns openhands-aci's block; fo() takes the text out of it. */
    cell_expect(id,
                "import json, re\n"
                "def fo(s):\n"
                "    m = re.fullmatch(r'<(oh_aci_output_[0-9a-f]{32})>\\n(.*)\\n</\\1>', s, re.S)\n"
                "    return json.loads(m.group(2))['formatted_output_and_error']\n"
                "b = file_editor('view', '/workspace/d/b.txt')\n"
                "print(b.split('\\n')[1][:60])",
                "{\"output\": \"Here's the result of running `cat -n` on /worksp");
    char *out = cell(id, "print(fo(file_editor('str_replace', '/workspace/d/b.txt', "
                         "old_str='nothing', new_str='something')))");
    assert_starts(out, "The file /workspace/d/b.txt has been edited. Here's the result of running "
                       "`cat -n` on a snippet of /workspace/d/b.txt:\n");
    assert_non_null(strstr(out, "\tsomething"));
    free(out);
    run_expect(id, "cat /workspace/d/b.txt", "something");
    out = cell(id, "print(fo(file_editor('undo_edit', '/workspace/d/b.txt')))");
    assert_starts(out, "Last edit to /workspace/d/b.txt undone successfully.");
    free(out);
    run_expect(id, "cat /workspace/d/b.txt", "nothing");
    cell_expect(id,
                "print(fo(file_editor('create', '/workspace/d/new.py', file_text='print(1)\\n')))",
                "File created successfully at: /workspace/d/new.py");
    run_expect(id, "stat -c %u /workspace/d/new.py", "1000");
    out = cell(id, "print(fo(file_editor('view', '/workspace/missing')))");
    assert_starts(out, "ERROR:\nInvalid `path` parameter: /workspace/missing.");
    free(out);
    cell_expect(id, "import agentskills\nprint(sorted(agentskills.__all__))",
                "['file_editor', 'find_file', 'goto_line', 'open_file', 'scroll_down', "
                "'scroll_up', 'search_dir', 'search_file']");

    /* Outside IPython too: python3 in the shell finds the module on PYTHONPATH. */
    run_expect(
        id, "cd /workspace/d && python3 -c 'from agentskills import *; find_file(\"b.txt\")'",
        "[Found 1 matches for \"b.txt\" in ./]\n./b.txt\n[End of matches for \"b.txt\" in ./]");
    session_delete(harness_eng, id);
    json_decref(s);
}

/* ---- the agent user ---- */

/* getent passwd $(id -u), from the agent's process (the image has no getent). */
#define PW_ENTRY                                                                                   \
    "python3 -c 'import os, pwd; print(\":\".join(map(str, pwd.getpwuid(os.getuid()))))'"

static void test_run_as_openhands(void **state)
{
    json_t *s = session_new(harness_eng, "{\"run_as_openhands\": true}");
    const char *id = jstr(s, "id");
    json_t *o = options_of(id);
    assert_string_equal(jstr(o, "user"), "openhands");
    assert_int_equal(json_integer_value(json_object_get(o, "user_id")), 1000);
    json_decref(o);
    json_t *obs =
        session_run(harness_eng, id, "echo $USER $HOME $(id -u) && test -w ~ && test -O ~ && pwd");
    assert_string_equal(jstr(obs, "content"), "openhands /home/openhands 1000\n/workspace");
    assert_string_equal(jstr(obs, "extras.metadata.username"), "openhands");
    json_decref(obs);
    /* The container's user database names it too (paddock's image calls uid 1000 `agent`
     * first); the agent cannot change it. */
    run_expect(id, "whoami; id -un; echo ~; " PW_ENTRY "; test -w /etc/passwd || echo ro",
               "openhands\nopenhands\n/home/openhands\n"
               "openhands:x:1000:1000:OpenHands agent:/home/openhands:/bin/bash\nro");
    session_delete(harness_eng, id);
    json_decref(s);

    /* The native default: paddock's agent, as the image has it. */
    s = session_new(harness_eng, NULL);
    id = jstr(s, "id");
    run_expect(id, "whoami; echo $USER ~; " PW_ENTRY " | cut -d: -f1,6",
               "agent\nagent /home/agent\nagent:/home/agent");
    session_delete(harness_eng, id);
    json_decref(s);

    s = session_new(harness_eng, "{\"run_as_openhands\": false, \"user_id\": 1234}");
    id = jstr(s, "id");
    o = options_of(id);
    assert_string_equal(jstr(o, "user"), "root");
    assert_int_equal(json_integer_value(json_object_get(o, "user_id")), 0);
    json_decref(o);
    run_expect(id, "echo $USER $(id -u) $(whoami) ~", "root 0 root /root");
    session_delete(harness_eng, id);
    json_decref(s);

    s = session_new(harness_eng, "{\"run_as_openhands\": true, \"user_id\": 1234}");
    id = jstr(s, "id");
    run_expect(id, "echo $USER $HOME $(id -u)", "openhands /home/openhands 1234");
    /* A uid the image does not know gets the name and a group; the image's workspace is
     * made its own, as OpenHands chowns it. */
    run_expect(id,
               "whoami; id -gn; " PW_ENTRY "; grep :1234: /etc/group; stat -c %u /workspace; "
               "touch /workspace/mine && echo written",
               "openhands\nopenhands\n"
               "openhands:x:1234:1234:OpenHands agent:/home/openhands:/bin/bash\n"
               "openhands:x:1234:\n1234\nwritten");
    session_delete(harness_eng, id);
    json_decref(s);

    /* A read-only root: /etc is a copy the executor names the agent in (the home is the
     * writable /tmp's); the agent can change neither. */
    s = session_new(harness_eng, "{\"run_as_openhands\": true, \"user_id\": 1234, "
                                 "\"read_only\": true}");
    id = jstr(s, "id");
    run_expect(id,
               "whoami; echo ~; " PW_ENTRY "; touch /workspace/mine && echo written; "
               "test -w /etc/passwd || test -w /etc || echo ro",
               "openhands\n/tmp/home\nopenhands:x:1234:1234:OpenHands agent:/tmp/home:/bin/bash\n"
               "written\nro");
    session_delete(harness_eng, id);
    json_decref(s);
}

/* ---- NUL bytes, hidden commands ---- */

static void test_nul_and_hidden(void **state)
{
    json_t *s = session_new(harness_eng, NULL);
    const char *id = jstr(s, "id");
    /* A terminal shows no NUL: OpenHands' tmux pane reads xy. */
    run_expect(id, "printf 'x\\0y\\n\\0'", "xy");
    const char *big = "python3 -c \"print('a' * 40000)\"";
    json_t *obs = execute(
        id, json_pack("{s:s,s:{s:s,s:b}}", "action", "run", "args", "command", big, "hidden", 1));
    assert_int_equal(strlen(jstr(obs, "content")), 40000);
    json_decref(obs);
    obs = session_run(harness_eng, id, big);
    assert_non_null(strstr(jstr(obs, "content"), "[... Observation truncated due to length ...]"));
    assert_true(strlen(jstr(obs, "content")) < 30100);
    json_decref(obs);
    session_delete(harness_eng, id);
    json_decref(s);
}

/* ---- an ordinary agent run under the default policy ---- */

static json_t *act_run(const char *command)
{
    return json_pack("{s:s,s:{s:s}}", "action", "run", "args", "command", command);
}

/* What a coding agent does in a small Python project, plus what OpenHands' runtime itself
 * sends (add_env_vars, its git pager): none of it may wait for the operator under the
 * default policy ("high"). approval_timeout 2 s: an action that waited would be rejected
 * and show in its approval. */
static void test_routine_run_never_waits(void **state)
{
    json_t *s = session_new(harness_eng, "{\"approval_timeout\": 2}");
    const char *id = jstr(s, "id");
    json_t *o = options_of(id);
    assert_string_equal(jstr(o, "confirm"), "high");
    json_decref(o);
    json_t *steps[] = {
        act_run("touch ~/.bashrc; grep -q \"^export PROJECT=\" ~/.bashrc || echo \"export "
                "PROJECT=\\\"calc\\\"\" >> ~/.bashrc;"),
        act_run("git config --global core.pager \"\""),
        act_run("git config --global user.name openhands && git config --global user.email "
                "openhands@example.com"),
        act_run("ls -la /workspace"),
        act_run("mkdir -p /workspace/calc/src /workspace/calc/tests /workspace/calc/build"),
        act_run("cd /workspace/calc && git init -q && git status --short"),
        json_pack("{s:s,s:{s:s,s:s}}", "action", "write", "args", "path",
                  "/workspace/calc/src/calc.py", "content", "def add(a, b):\n    return a + b\n"),
        json_pack("{s:s,s:{s:s,s:s}}", "action", "write", "args", "path",
                  "/workspace/calc/tests/test_calc.py", "content",
                  "import unittest\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n"
                  "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"),
        act_run("cat src/calc.py"),
        act_run("PYTHONPATH=src python3 -m unittest discover -s tests 2>&1 | tail -1"),
        act_run("python3 -m pip --version >/dev/null 2>&1; pip install -q --no-index requests "
                "2>&1 | tail -1; true"),
        act_run("git add -A && git commit -qm 'Add calc' && git log --oneline | wc -l"),
        act_run("sed -i 's/a + b/b + a/' src/calc.py && git diff --stat"),
        json_pack("{s:s,s:{s:s,s:s,s:s,s:s}}", "action", "edit", "args", "command", "str_replace",
                  "path", "/workspace/calc/src/calc.py", "old_str", "b + a", "new_str", "a + b"),
        json_pack("{s:s,s:{s:s}}", "action", "read", "args", "path", "/workspace/calc/src/calc.py"),
        act_run("grep -rn 'def ' src tests"),
        act_run("find . -name '*.py' -not -path './.git/*' | sort"),
        act_run("echo draft > NOTES.md && rm NOTES.md && rm -rf build && rm -f src/old.py"),
        json_pack("{s:s,s:{s:s}}", "action", "run_ipython", "args", "code",
                  "import os\nsorted(os.listdir('/workspace/calc'))"),
        act_run("git status --short && git diff"),
    };
    size_t n = sizeof(steps) / sizeof(steps[0]);
    for (size_t i = 0; i < n; i++) {
        json_t *obs = execute(id, steps[i]);
        const char *kind = jstr(obs, "observation");
        if (strcmp(kind, "error") == 0 ||
            (strcmp(kind, "run") == 0 &&
             json_integer_value(jpath(obs, "extras.metadata.exit_code")) != 0))
            fail_msg("step %zu failed: %s", i, json_dumps(obs, JSON_COMPACT));
        json_decref(obs);
    }
    char *path = strdupf("/v1/sessions/%s/actions?limit=100", id);
    json_t *acts = api_json(harness_eng, "GET", path, NULL, 200);
    free(path);
    json_t *list = json_object_get(acts, "actions");
    assert_int_equal(json_array_size(list), n);
    size_t i;
    json_t *a;
    json_array_foreach(list, i, a)
    {
        if (strcmp(jstr(a, "approval"), "none") != 0 || strcmp(jstr(a, "state"), "done") != 0)
            fail_msg("waited or failed: %s", json_dumps(a, JSON_COMPACT));
    }
    json_decref(acts);
    session_delete(harness_eng, id);
    json_decref(s);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_plugins_and_user),
        cmocka_unit_test(test_plugins_refused),
        cmocka_unit_test(test_no_plugins),
        cmocka_unit_test(test_agent_skills),
        cmocka_unit_test(test_run_as_openhands),
        cmocka_unit_test(test_nul_and_hidden),
        cmocka_unit_test(test_routine_run_never_waits),
    };
    int failed = cmocka_run_group_tests_name("plugins", tests, harness_group_setup,
                                             harness_group_teardown_clean);
    return failed || harness_teardown_failed ? 1 : 0;
}
