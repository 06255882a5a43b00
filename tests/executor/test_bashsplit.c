/* Unit tests of the bash command splitter (executor/bashsplit.c): where one top-level command
 * ends and the next begins, as bash reads them. OpenHands' own cases
 * (tests/unit/runtime/utils/test_bash_parsing.py) come first, then bash's grammar corner
 * by corner. The expected splits agree with bash 5.2's own reading of the same text (one
 * history entry per top-level command), except that a comment-only line, which bash keeps
 * as an entry of its own, belongs to a command here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bashsplit.h"
#include "common/buf.h"

#define INVALID ((const char *)-1)
#define MAX_PARTS 16

/* Checks text splits into exactly the NULL-terminated parts, or does not parse (INVALID). */
static void check_split(const char *text, const char *const *parts)
{
    struct bashsplit_span *spans = NULL;
    int n = bashsplit_split(text, strlen(text), &spans);
    if (parts[0] == INVALID) {
        if (n != BASHSPLIT_INVALID)
            fail_msg("expected no parse for <<%s>>, got %d commands", text, n);
        assert_null(spans);
        return;
    }
    int want = 0;
    while (parts[want])
        want++;
    if (n != want) {
        struct buf got = BUF_INIT;
        for (int i = 0; i < n; i++)
            buf_printf(&got, " (%d)<<%.*s>>", i + 1, (int)spans[i].len, text + spans[i].start);
        fail_msg("<<%s>>: expected %d commands, got %d:%s", text, want, n,
                 got.data ? got.data : "");
    }
    for (int i = 0; i < n; i++) {
        if (spans[i].len != strlen(parts[i]) ||
            memcmp(text + spans[i].start, parts[i], spans[i].len) != 0)
            fail_msg("<<%s>> command %d: expected <<%s>>, got <<%.*s>>", text, i + 1, parts[i],
                     (int)spans[i].len, text + spans[i].start);
    }
    free(spans);
}

#define SPLIT(text, ...) check_split(text, (const char *const[]){__VA_ARGS__, NULL})
#define ONE(text) SPLIT(text, text)
#define BAD(text) check_split(text, (const char *const[]){INVALID, NULL})

static void test_openhands_single_commands(void **state)
{
    (void)state;
    ONE("ls -l");
    ONE("echo 'Hello, world!'");
    ONE("cd /tmp && touch test.txt");
    ONE("echo -e 'line1\\nline2\\nline3'");
    ONE("grep 'pattern' file.txt | sort | uniq");
    ONE("for i in {1..5}; do echo $i; done");
    /* Unclosed (\\' does not escape in single quotes): OpenHands expects it back whole. */
    BAD("echo 'Single quotes don\\'t escape'");
    ONE("echo \"Double quotes \\\"do\\\" escape\"");
    ONE("echo \"Escaped \\\"quotes\\\"\"");
    ONE("cat <<EOF\nmultiline\ntext\nEOF");
    ONE("echo \"Command with a trailing backslash \\\n  and continuation\"");
}

static void test_openhands_util_list(void **state)
{
    (void)state;
    /* test_split_commands_util: nine commands joined by newlines come back one by one. */
    const char *cmds[] = {
        "ls -l",
        "echo -e \"hello\nworld\"",
        "echo -e \"hello it\\'s me\"",
        "echo \\\n    -e 'hello' \\\n    -v",
        "echo -e 'hello\\nworld\\nare\\nyou\\nthere?'",
        "echo -e 'hello\nworld\nare\nyou\\n\nthere?'",
        "echo -e 'hello\nworld \"\n'",
        "kubectl apply -f - <<EOF\napiVersion: v1\nkind: Pod\nmetadata:\n  name: busybox-sleep\n"
        "spec:\n  containers:\n  - name: busybox\n    image: busybox:1.28\n    args:\n    - sleep\n"
        "    - \"1000000\"\nEOF",
        "mkdir -p _modules && \\\nfor month in {01..04}; do\n    for day in {01..05}; do\n"
        "        touch \"_modules/2024-${month}-${day}-sample.md\"\n    done\ndone",
        NULL,
    };
    struct buf joined = BUF_INIT;
    for (int i = 0; cmds[i]; i++)
        buf_printf(&joined, "%s%s", i ? "\n" : "", cmds[i]);
    check_split(joined.data, cmds);
    buf_free(&joined);
}

static void test_openhands_multiple(void **state)
{
    (void)state;
    SPLIT("cat <<EOF\nmultiline\ntext\nEOF\necho \"Done\"", "cat <<EOF\nmultiline\ntext\nEOF",
          "echo \"Done\"");
    SPLIT("echo \"This is a long command that spans multiple lines\"\necho \"Next command\"",
          "echo \"This is a long command that spans multiple lines\"", "echo \"Next command\"");
    SPLIT("ls -l\n\necho \"Hello\"\n\ncd /tmp", "ls -l", "echo \"Hello\"", "cd /tmp");
    /* Comments attach to the command before them. */
    SPLIT("echo \"Hello\" # This is a comment\n# This is another comment\nls -l",
          "echo \"Hello\" # This is a comment\n# This is another comment", "ls -l");
    SPLIT("echo \"This is a \\\"quoted\\\" string\"\necho 'This is a '''single-quoted''' "
          "string'\necho \"Mixed 'quotes' in \\\"double quotes\\\"\"",
          "echo \"This is a \\\"quoted\\\" string\"", "echo 'This is a '''single-quoted''' string'",
          "echo \"Mixed 'quotes' in \\\"double quotes\\\"\"");
    SPLIT("echo 'a'\\''b'\nls", "echo 'a'\\''b'", "ls");
}

static void test_openhands_invalid(void **state)
{
    (void)state;
    /* Sent as they are: bash reports the error. */
    BAD("echo \"Unclosed quote");
    BAD("echo 'Unclosed quote");
    BAD("cat <<EOF\nUnclosed heredoc");
    BAD("echo `unclosed backtick");
    BAD("curl -X POST \"https://api.github.com/repos/o/r/pulls\" \\ -H \"A: B\" -d '{ \"t\": "
        "\"X\" }' `echo unclosed");
}

static void test_separators(void **state)
{
    (void)state;
    ONE("a; b; c");
    ONE("a && b || c | d |& e");
    ONE("sleep 1 & echo hi");
    SPLIT("sleep 1 &\necho hi", "sleep 1 &", "echo hi");
    SPLIT("echo a;\necho b", "echo a;", "echo b");
    /* A line ending in && || | continues, across blank and comment lines. */
    ONE("a &&\n b");
    ONE("a ||\n\n b");
    ONE("a |\n  # why\n b");
    ONE("a |&\n b");
    ONE("a && # note\n b");
    SPLIT("a |\n b\nc", "a |\n b", "c");
    /* Backslash-newline joins lines, even inside a word. */
    ONE("echo a \\\n  b \\\n  c");
    ONE("ec\\\nho joined");
    SPLIT("echo a \\\n b\necho c", "echo a \\\n b", "echo c");
    /* CR LF line ends. */
    SPLIT("echo a\r\necho b", "echo a", "echo b");
    /* A comment's trailing backslash does not continue it. */
    SPLIT("echo # c \\\necho x", "echo # c \\", "echo x");
    ONE("echo a#b # c");
    ONE("echo $# ${#x}");
}

static void test_quotes(void **state)
{
    (void)state;
    SPLIT("echo 'a\nb'\necho c", "echo 'a\nb'", "echo c");
    SPLIT("echo \"a\nb\"\necho c", "echo \"a\nb\"", "echo c");
    SPLIT("echo $'a\\'\nb'\necho c", "echo $'a\\'\nb'", "echo c");
    SPLIT("echo $\"a\nb\"\necho c", "echo $\"a\nb\"", "echo c");
    SPLIT("echo \"a\\\"\nb\"\necho c", "echo \"a\\\"\nb\"", "echo c");
    ONE("echo \"it's\"");
    ONE("echo 'say \"hi\"'");
    BAD("echo $'unclosed\\'");
    BAD("echo trailing\\");
}

static void test_substitutions(void **state)
{
    (void)state;
    SPLIT("echo $(\necho a\n)\necho b", "echo $(\necho a\n)", "echo b");
    SPLIT("x=`echo a\necho b`\necho c", "x=`echo a\necho b`", "echo c");
    ONE("echo `date`; echo `echo \\`date\\``");
    ONE("echo $(echo $(echo deep))");
    ONE("echo \"$(echo \"inner quotes\")\"");
    SPLIT("echo $((1 +\n 2))\necho b", "echo $((1 +\n 2))", "echo b");
    ONE("echo $((1+(2*3)))");
    SPLIT("echo ${x:-\n}\necho b", "echo ${x:-\n}", "echo b");
    /* bash closes ${ at the first }: the rest is plain text. */
    SPLIT("echo \"${x:-{a}}\"\necho b", "echo \"${x:-{a}}\"", "echo b");
    /* Single quotes pair up inside ${ }, even within double quotes. */
    SPLIT("echo \"${z:-'q}'}\"\necho b", "echo \"${z:-'q}'}\"", "echo b");
    BAD("echo \"${z:-'q}'\"\necho b");
    ONE("diff <(ls) <(ls -a)");
    ONE("tee >(wc -l) < f");
    SPLIT("x=$(case y in y) echo;; esac)\necho z", "x=$(case y in y) echo;; esac)", "echo z");
    SPLIT("x=$(cat <<EOF\nhi )\nEOF\n)\necho $x", "x=$(cat <<EOF\nhi )\nEOF\n)", "echo $x");
    BAD("echo $(unclosed");
    BAD("echo ${unclosed");
    BAD("echo $((1 + 2)");
}

static void test_heredocs(void **state)
{
    (void)state;
    SPLIT("cat <<-\tEOF\n\tbody\n\tEOF\necho n", "cat <<-\tEOF\n\tbody\n\tEOF", "echo n");
    SPLIT("cat <<'EOF'\n$x\nEOF\nls", "cat <<'EOF'\n$x\nEOF", "ls");
    SPLIT("cat << \"E O\"\nx\nE O\nls", "cat << \"E O\"\nx\nE O", "ls");
    SPLIT("cat <<\\EOF\n$x\nEOF\nls", "cat <<\\EOF\n$x\nEOF", "ls");
    SPLIT("cat <<A <<B\na\nA\nb\nB\nls", "cat <<A <<B\na\nA\nb\nB", "ls");
    SPLIT("cat <<EOF | grep a\nabc\nEOF\necho", "cat <<EOF | grep a\nabc\nEOF", "echo");
    SPLIT("python3 - <<'PY'\nimport json\nprint(1)\nPY\nls -l",
          "python3 - <<'PY'\nimport "
          "json\nprint(1)\nPY",
          "ls -l");
    /* The body is not bash: quotes and keywords in it mean nothing. */
    SPLIT("cat <<EOF\nit's \"odd\n`\nif\nEOF\necho", "cat <<EOF\nit's \"odd\n`\nif\nEOF", "echo");
    /* An unquoted body joins backslash-newline lines before it looks for the end. */
    SPLIT("cat <<EOF\nfoo \\\nEOF\nEOF\necho next", "cat <<EOF\nfoo \\\nEOF\nEOF", "echo next");
    /* ... a quoted one does not. */
    SPLIT("cat <<'EOF'\nfoo \\\nEOF\necho next", "cat <<'EOF'\nfoo \\\nEOF", "echo next");
    /* The end line must match exactly, and may end the text without a newline. */
    ONE("cat <<EOF\n EOF\nEOF");
    ONE("cat <<EOF\nx\nEOF");
    /* <<< is a here-string, not a here-document. */
    SPLIT("cat <<< 'x'\necho y", "cat <<< 'x'", "echo y");
    BAD("cat <<");
    BAD("cat <<EOF");
    BAD("cat <<EOF\nbody\nEO");
}

static void test_compound(void **state)
{
    (void)state;
    SPLIT("for i in 1 2 3; do\n echo $i\ndone\necho x", "for i in 1 2 3; do\n echo $i\ndone",
          "echo x");
    ONE("for i in 1 2\ndo\n echo $i\ndone");
    ONE("for ((i=0;i<3;i++)); do\necho $i\ndone");
    ONE("for ((i=0;i<3;i++))\ndo echo $i; done");
    ONE("if true; then\n echo a\nelif false; then\n echo b\nelse\n echo c\nfi");
    ONE("while read l; do\n echo $l\ndone < f");
    ONE("until false\ndo\n break\ndone");
    ONE("select x in a b; do\necho $x; break\ndone");
    SPLIT("{ a; b; }\nc", "{ a; b; }", "c");
    ONE("{\n a\n b\n}");
    SPLIT("(cd x; ls)\npwd", "(cd x; ls)", "pwd");
    ONE("(\n cd x\n ls\n) | sort");
    SPLIT("((x++))\necho $x", "((x++))", "echo $x");
    SPLIT("[[ a &&\n b ]]\necho", "[[ a &&\n b ]]", "echo");
    ONE("[[ $x == (a|b) && -n $y ]]");
    ONE("for i in 1; do for j in 2; do\n echo $i$j\ndone; done");
    ONE("if [ -f x ]; then cat x; fi > out 2>&1");
    ONE("echo done fi esac then");
    /* Keywords only count where a command starts. */
    SPLIT("echo if\necho ok &&\necho then", "echo if", "echo ok &&\necho then");
    SPLIT("time (\nsleep 0\n)\necho", "time (\nsleep 0\n)", "echo");
    SPLIT("! true\necho", "! true", "echo");
    BAD("for i in 1 2; do echo $i");
    BAD("if true; then echo");
    BAD("while true; do :; done; done");
    BAD("fi");
    BAD("}");
    BAD("echo a\n)");
    BAD("{ echo a }");
}

static void test_case(void **state)
{
    (void)state;
    SPLIT("case $x in\n a) echo a;;\n b|c) echo b\n ;;\nesac\necho after",
          "case $x in\n a) echo a;;\n b|c) echo b\n ;;\nesac", "echo after");
    SPLIT("case a in (a) echo;; esac\nls", "case a in (a) echo;; esac", "ls");
    ONE("case $1 in\n *.c) cc \"$1\" ;&\n *) echo other ;;&\n x) (echo sub) ;;\nesac");
    ONE("case x in esac");
    ONE("case x\nin\n x) echo\nesac");
    ONE("case $(echo a) in a) case b in b) echo nested;; esac;; esac");
    BAD("case x in x) echo");
    BAD("case x of x) echo;; esac");
    BAD("echo ;;");
}

static void test_functions_and_arrays(void **state)
{
    (void)state;
    SPLIT("f()\n{\n echo\n}\nf", "f()\n{\n echo\n}", "f");
    SPLIT("f () { echo; }\nf", "f () { echo; }", "f");
    SPLIT("function g {\n echo\n}\ng", "function g {\n echo\n}", "g");
    ONE("function h\n{\n:\n}");
    ONE("function h() (\n echo sub\n)");
    SPLIT("a=(1\n2 3)\necho ${a[@]}", "a=(1\n2 3)", "echo ${a[@]}");
    ONE("a+=(\n 4\n)");
    ONE("m[k]=(x)");
    SPLIT("shopt -s extglob\nls !(x|y)", "shopt -s extglob", "ls !(x|y)");
    ONE("ls @(a|b)*.c +(x) ?(y) *(z)");
    BAD("echo (a)");
}

static void test_redirections(void **state)
{
    (void)state;
    ONE("find . -name '*.txt' -exec grep \"${P:-x}\" {} \\;");
    ONE("find . -exec ls {} \\; -print");
    ONE("cmd > out 2>&1 < in >> log 2>> err &> all &>> all2 >| clob <> rw 3<&0 4>&-");
    ONE("exec 3< <(echo x)");
    ONE("{ echo; } 2>/dev/null >&2 {fd}>f 10<in");
    ONE("echo 2 > out 22");
    ONE("echo {a,b} {} { x");
    BAD("echo >");
    BAD("echo a | | b");
    BAD("a &&");
    BAD("| a");
    BAD("; a");
}

static void test_comments_and_blank_lines(void **state)
{
    (void)state;
    /* Comments and blank lines before the first command belong to it. */
    SPLIT("# setup\n\nls\n# done", "# setup\n\nls\n# done");
    SPLIT("# a\nls\n\n# b\npwd", "# a\nls\n\n# b", "pwd");
    ONE("# only a comment");
    SPLIT("ls\n\n\n", "ls");
    SPLIT("x=1\n\n\n", "x=1");
    /* Over-escaped text (literal backslash-n) is one line: one command. */
    ONE("# 0. Setup\\nrm -rf /w && mkdir -p /w\\n\\n# 1. Run\\nls");
}

static void test_limits(void **state)
{
    (void)state;
    struct bashsplit_span *spans = (void *)1;
    assert_int_equal(bashsplit_split("", 0, &spans), 0);
    assert_null(spans);
    /* Text is not NUL-terminated: only n bytes count. */
    assert_int_equal(bashsplit_split("echo a\necho b", 6, &spans), 1);
    assert_int_equal(spans[0].len, 6);
    free(spans);
    /* Nesting far deeper than any real command: refused, never a stack overflow. */
    struct buf deep = BUF_INIT;
    for (int i = 0; i < 100000; i++)
        buf_append_str(&deep, "\"$(");
    assert_int_equal(bashsplit_split(deep.data, deep.len, &spans), BASHSPLIT_INVALID);
    buf_reset(&deep);
    for (int i = 0; i < 100000; i++)
        buf_append_str(&deep, "${x:-");
    assert_int_equal(bashsplit_split(deep.data, deep.len, &spans), BASHSPLIT_INVALID);
    buf_reset(&deep);
    for (int i = 0; i < 100; i++)
        buf_append_str(&deep, "( ");
    buf_append_str(&deep, "echo");
    for (int i = 0; i < 100; i++)
        buf_append_str(&deep, " )");
    assert_int_equal(bashsplit_split(deep.data, deep.len, &spans), 1);
    free(spans);
    /* Many commands. */
    buf_reset(&deep);
    for (int i = 0; i < 1000; i++)
        buf_printf(&deep, "echo %d\n", i);
    assert_int_equal(bashsplit_split(deep.data, deep.len, &spans), 1000);
    assert_int_equal(spans[999].len, strlen("echo 999"));
    free(spans);
    buf_free(&deep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_openhands_single_commands),
        cmocka_unit_test(test_openhands_util_list),
        cmocka_unit_test(test_openhands_multiple),
        cmocka_unit_test(test_openhands_invalid),
        cmocka_unit_test(test_separators),
        cmocka_unit_test(test_quotes),
        cmocka_unit_test(test_substitutions),
        cmocka_unit_test(test_heredocs),
        cmocka_unit_test(test_compound),
        cmocka_unit_test(test_case),
        cmocka_unit_test(test_functions_and_arrays),
        cmocka_unit_test(test_redirections),
        cmocka_unit_test(test_comments_and_blank_lines),
        cmocka_unit_test(test_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
