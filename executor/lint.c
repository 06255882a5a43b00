/* Auto-lint after edits (lint.h): one table of linters by file name ending, the first one the
 * image has is used (as OpenHands' DefaultLinter takes the first linter with a result). */
#include "lint.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "diff.h"
#include "spawn.h"
#include "which.h"

#define LINT_OUTPUT_MAX (64 * 1024)
#define LINT_DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* How a linter reports an error. */
enum lint_format {
    LINT_FMT_COLON, /* FILE:LINE:COLUMN: MESSAGE (flake8, gofmt -e, our compile check) */
    LINT_FMT_SH,    /* FILE: line LINE: MESSAGE (bash -n, sh -n) */
};

/* The compiler's syntax check, what py_compile does, printed the way flake8 prints E999. */
#define LINT_PY_COMPILE                                                                            \
    "import sys\n"                                                                                 \
    "try:\n"                                                                                       \
    "    compile(open(sys.argv[1], 'rb').read(), sys.argv[1], 'exec')\n"                           \
    "except SyntaxError as e:\n"                                                                   \
    "    print('%s:%d:%d: E999 %s: %s' % (sys.argv[1], e.lineno or 1, e.offset or 1,\n"            \
    "          type(e).__name__, e.msg))\n"

struct lint_tool {
    const char *endings; /* space-separated, with the dot */
    const char *program; /* looked up along the PATH */
    const char *args[6]; /* before the file name */
    enum lint_format format;
};

/* flake8 with its fatal checks only (syntax errors, undefined names, misplaced statements:
 * what breaks the code, not its style), one process. */
static const struct lint_tool lint_tools[] = {
    {".py",
     "flake8",
     {"--jobs=1", "--select=E9,F821,F822,F823,F831,F406,F407,F701,F702,F704,F706"},
     LINT_FMT_COLON},
    {".py", "python3", {"-I", "-c", LINT_PY_COMPILE}, LINT_FMT_COLON},
    {".py", "python", {"-I", "-c", LINT_PY_COMPILE}, LINT_FMT_COLON},
    {".sh .bash", "bash", {"-n"}, LINT_FMT_SH},
    {".sh", "sh", {"-n"}, LINT_FMT_SH},
    {".go", "gofmt", {"-e", "-l"}, LINT_FMT_COLON},
};

struct lint_issue {
    long line, column;
    char *message;
};

struct lint_list {
    struct lint_issue *items;
    size_t n;
};

static void lint_list_free(struct lint_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i].message);
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

static bool lint_ending_matches(const char *endings, const char *path)
{
    size_t plen = strlen(path);
    const char *p = endings;
    while (*p) {
        size_t n = strcspn(p, " ");
        if (n && plen > n && memcmp(path + plen - n, p, n) == 0)
            return true;
        p += n;
        p += *p == ' ';
    }
    return false;
}

static double lint_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* Runs program args... file with stdout and stderr into out (at most LINT_OUTPUT_MAX), killed
 * (its whole process group) at the deadline. 0, or -1 when it could not run or memory ran
 * out. */
static int lint_run(const char *program, const char *const *args, const char *file, struct buf *out)
{
    const char *argv[10];
    size_t k = 0;
    argv[k++] = program;
    for (size_t i = 0; i < 6 && args[i]; i++)
        argv[k++] = args[i];
    argv[k++] = file;
    argv[k] = NULL;
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        /* Its own group (killed whole at the deadline), gone with the file-action child when
         * that is stopped (its timeout). */
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        if (getppid() != parent)
            _exit(127);
        int null = open("/dev/null", O_RDONLY);
        if (null < 0 || dup2(null, 0) < 0 || dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0)
            _exit(127);
        spawn_close_from(3);
        execv(program, (char *const *)argv);
        _exit(127);
    }
    close(p[1]);
    double deadline = lint_now_ms() + LINT_TIMEOUT_MS;
    int rc = 0;
    for (;;) {
        double left = deadline - lint_now_ms();
        if (left <= 0)
            break;
        struct pollfd pfd = {.fd = p[0], .events = POLLIN};
        int pr = poll(&pfd, 1, (int)left + 1);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            break;
        char chunk[4096];
        ssize_t n = read(p[0], chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (out->len < LINT_OUTPUT_MAX && buf_append(out, chunk, (size_t)n) < 0) {
            rc = -1;
            break;
        }
    }
    close(p[0]);
    kill(-pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    return rc;
}

static int lint_add(struct lint_list *l, long line, long column, const char *msg, size_t n)
{
    while (n && (msg[n - 1] == '\r' || msg[n - 1] == ' '))
        n--;
    struct lint_issue *grown = realloc(l->items, (l->n + 1) * sizeof *grown);
    if (!grown)
        return -1;
    l->items = grown;
    char *copy = strndup(msg, n);
    if (!copy)
        return -1;
    l->items[l->n++] = (struct lint_issue){.line = line, .column = column, .message = copy};
    return 0;
}

/* One output line about file: an issue added, or nothing (a line of another kind). */
static int lint_parse_line(struct lint_list *l, enum lint_format fmt, const char *file,
                           const char *s, size_t n)
{
    size_t flen = strlen(file);
    if (n <= flen || memcmp(s, file, flen) != 0)
        return 0;
    const char *p = s + flen, *end = s + n;
    char *q;
    long line, column = 1;
    switch (fmt) {
    case LINT_FMT_COLON:
        if (*p != ':')
            return 0;
        line = strtol(p + 1, &q, 10);
        if (q == p + 1 || q >= end || *q != ':')
            return 0;
        p = q + 1;
        if (p < end && *p >= '0' && *p <= '9') {
            column = strtol(p, &q, 10);
            if (q >= end || *q != ':')
                return 0;
            p = q + 1;
        }
        break;
    case LINT_FMT_SH:
        if ((size_t)(end - p) < 8 || memcmp(p, ": line ", 7) != 0)
            return 0;
        line = strtol(p + 7, &q, 10);
        if (q == p + 7 || q >= end || *q != ':')
            return 0;
        p = q + 1;
        break;
    default:
        return 0;
    }
    while (p < end && *p == ' ')
        p++;
    return lint_add(l, line, column, p, (size_t)(end - p));
}

static int lint_file(const struct lint_tool *t, const char *program, const char *file,
                     struct lint_list *l)
{
    struct buf out = BUF_INIT;
    int rc = lint_run(program, t->args, file, &out);
    for (size_t i = 0; rc == 0 && i < out.len;) {
        const char *nl = memchr(out.data + i, '\n', out.len - i);
        size_t n = nl ? (size_t)(nl - (out.data + i)) : out.len - i;
        rc = lint_parse_line(l, t->format, file, out.data + i, n);
        i += n + 1;
    }
    buf_free(&out);
    return rc;
}

/* The line of the old text that new line L was, or 0 when the change made or rewrote it; from
 * the zero-context diff's hunk headers ("@@ -a[,b] +c[,d] @@"). */
static long lint_old_line(const char *diff, size_t len, long line)
{
    long delta = 0;
    for (size_t i = 0; i < len;) {
        const char *s = diff + i;
        const char *nl = memchr(s, '\n', len - i);
        size_t n = nl ? (size_t)(nl - s) : len - i;
        i += n + 1;
        long a, b = 1, c, d = 1;
        if (n < 2 || s[0] != '@' || s[1] != '@')
            continue;
        char *q;
        a = strtol(s + 4, &q, 10);
        if (*q == ',')
            b = strtol(q + 1, &q, 10);
        if (*q != ' ' || q[1] != '+')
            continue;
        c = strtol(q + 2, &q, 10);
        if (*q == ',')
            d = strtol(q + 1, &q, 10);
        (void)a;
        long first = d > 0 ? c : c + 1; /* an empty range names the line before it */
        if (line < first)
            break;
        if (line < first + d)
            return 0;
        delta += d - b;
    }
    return line - delta;
}

static int lint_write(const char *path, const char *text, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -1;
    size_t off = 0;
    while (off < len) {
        ssize_t n = write(fd, text + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            close(fd);
            return -1;
        }
        off += (size_t)n;
    }
    return close(fd);
}

/* Lints both texts with tool t; the issues of new_text the change introduced go to fresh. */
static int lint_compare(const struct lint_tool *t, const char *program, const char *path,
                        const char *old, size_t old_len, const char *new_text, size_t new_len,
                        struct lint_list *fresh)
{
    char dir[] = "/tmp/paddock-lint-XXXXXX";
    if (!mkdtemp(dir))
        return 0; /* nowhere to write: nothing can be checked, which is not an error */
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    struct buf oldf = BUF_INIT, newf = BUF_INIT, diff = BUF_INIT;
    struct lint_list before = {0}, after = {0};
    int rc = -1;
    if (buf_printf(&oldf, "%s/old.%s", dir, base) < 0 ||
        buf_printf(&newf, "%s/new.%s", dir, base) < 0)
        goto out;
    rc = 0;
    if (lint_write(oldf.data, old, old_len) < 0 || lint_write(newf.data, new_text, new_len) < 0)
        goto out;
    rc = -1;
    if (lint_file(t, program, oldf.data, &before) < 0 ||
        lint_file(t, program, newf.data, &after) < 0 ||
        diff_unified(&diff, "f", old, old_len, new_text, new_len) < 0)
        goto out;
    for (size_t i = 0; i < after.n; i++) {
        long was = lint_old_line(diff.data ? diff.data : "", diff.len, after.items[i].line);
        bool seen = false;
        for (size_t j = 0; was > 0 && !seen && j < before.n; j++)
            seen = before.items[j].line == was &&
                   strcmp(before.items[j].message, after.items[i].message) == 0;
        if (!seen && lint_add(fresh, after.items[i].line, after.items[i].column,
                              after.items[i].message, strlen(after.items[i].message)) < 0)
            goto out;
    }
    rc = 0;
out:
    if (oldf.data)
        unlink(oldf.data);
    if (newf.data)
        unlink(newf.data);
    rmdir(dir);
    buf_free(&oldf);
    buf_free(&newf);
    buf_free(&diff);
    lint_list_free(&before);
    lint_list_free(&after);
    return rc;
}

int lint_changes(struct buf *out, const char *path_env, const char *path, const char *old,
                 size_t old_len, const char *new_text, size_t new_len)
{
    struct lint_list fresh = {0};
    char program[4096];
    for (size_t i = 0; i < sizeof lint_tools / sizeof lint_tools[0]; i++) {
        const struct lint_tool *t = &lint_tools[i];
        if (!lint_ending_matches(t->endings, path) ||
            !which_find(path_env && *path_env ? path_env : LINT_DEFAULT_PATH, NULL, t->program,
                        program, sizeof program))
            continue;
        if (lint_compare(t, program, path, old, old_len, new_text, new_len, &fresh) < 0) {
            lint_list_free(&fresh);
            return -1;
        }
        break;
    }
    int rc = 0;
    if (!fresh.n) {
        rc = buf_append_str(out, "No linting issues found in the changes.");
    } else {
        rc = buf_append_str(out, "Linting issues found in the changes:");
        for (size_t i = 0; rc == 0 && i < fresh.n; i++)
            rc = buf_printf(out, "\n- Line %ld, Column %ld: %s", fresh.items[i].line,
                            fresh.items[i].column, fresh.items[i].message);
        if (rc == 0)
            rc = buf_append_str(out, "\n");
    }
    lint_list_free(&fresh);
    return rc < 0 ? -1 : 0;
}
