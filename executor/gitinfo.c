#include "gitinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "executor.h"
#include "spawn.h"

#define GITINFO_TIMEOUT_MS 1000 /* a reader on a hung file system is given up */

/* A small file's text without trailing whitespace; -1 when it cannot be read. */
static int read_small(const char *path, char *out, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return -1;
    size_t len = 0;
    while (len + 1 < cap) {
        ssize_t n = read(fd, out + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == '\r' || out[len - 1] == ' '))
        len--;
    out[len] = '\0';
    return 0;
}

static bool is_object_id(const char *s, size_t n)
{
    if (n != 40 && n != 64)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

/* rel against dir, unless rel is absolute. */
static bool join(char *out, size_t cap, const char *dir, const char *rel)
{
    int n = rel[0] == '/' ? snprintf(out, cap, "%s", rel)
                          : snprintf(out, cap, "%s%s%s", dir,
                                     dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", rel);
    return n > 0 && (size_t)n < cap;
}

/* The git directory of dir or its nearest parent: .git itself, or where a .git file points. */
static bool find_gitdir(const char *start, char *gitdir, size_t cap)
{
    char dir[PATH_MAX], path[PATH_MAX], text[PATH_MAX];
    struct stat st;
    if (snprintf(dir, sizeof dir, "%s", start) >= (int)sizeof dir || dir[0] != '/')
        return false;
    for (;;) {
        if (join(path, sizeof path, dir, ".git") && stat(path, &st) == 0) {
            if (S_ISDIR(st.st_mode))
                return snprintf(gitdir, cap, "%s", path) < (int)cap;
            if (S_ISREG(st.st_mode) && read_small(path, text, sizeof text) == 0 &&
                strncmp(text, "gitdir: ", 8) == 0)
                return join(gitdir, cap, dir, text + 8);
        }
        char *slash = strrchr(dir, '/');
        if (!slash || dir[1] == '\0')
            return false;
        slash[slash == dir ? 1 : 0] = '\0';
    }
}

/* A packed-refs line "<id> <ref>" for ref: its id into id. */
static bool match_packed(const char *line, size_t n, const char *ref, char *id)
{
    const char *sp = memchr(line, ' ', n);
    size_t ref_len = strlen(ref);
    if (!sp || !is_object_id(line, (size_t)(sp - line)) || (size_t)(line + n - sp - 1) != ref_len ||
        memcmp(sp + 1, ref, ref_len) != 0)
        return false;
    memcpy(id, line, (size_t)(sp - line));
    id[sp - line] = '\0';
    return true;
}

static bool find_packed(const char *file, const char *ref, char *id)
{
    char buf[8192];
    size_t have = 0;
    bool found = false, eof = false;
    int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return false;
    while (!found && !eof) {
        ssize_t n = read(fd, buf + have, sizeof buf - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            eof = true;
        else
            have += (size_t)n;
        size_t start = 0;
        char *nl;
        while (!found && (nl = memchr(buf + start, '\n', have - start))) {
            found = match_packed(buf + start, (size_t)(nl - buf) - start, ref, id);
            start = (size_t)(nl - buf) + 1;
        }
        if (eof && !found && start < have)
            found = match_packed(buf + start, have - start, ref, id);
        memmove(buf, buf + start, have - start);
        have -= start;
        if (have == sizeof buf)
            have = 0; /* a line this long is no ref line */
    }
    close(fd);
    return found;
}

static void resolve_ref(const char *gitdir, const char *common, const char *ref, char *id)
{
    char path[PATH_MAX], text[GITINFO_ID_MAX + 16];
    const char *bases[] = {gitdir, common};
    for (size_t i = 0; i < 2; i++) {
        if (join(path, sizeof path, bases[i], ref) && read_small(path, text, sizeof text) == 0 &&
            is_object_id(text, strlen(text))) {
            snprintf(id, GITINFO_ID_MAX + 1, "%s", text);
            return;
        }
    }
    if (join(path, sizeof path, common, "packed-refs"))
        find_packed(path, ref, id);
}

void gitinfo_lookup(const char *dir, struct gitinfo *out)
{
    char gitdir[PATH_MAX], common[PATH_MAX], path[PATH_MAX], text[PATH_MAX];
    memset(out, 0, sizeof *out);
    if (!find_gitdir(dir, gitdir, sizeof gitdir))
        return;
    out->repo = true;
    /* A linked worktree keeps HEAD in its own git dir and the refs in the common one. */
    snprintf(common, sizeof common, "%s", gitdir);
    if (join(path, sizeof path, gitdir, "commondir") && read_small(path, text, sizeof text) == 0 &&
        text[0])
        join(common, sizeof common, gitdir, text);
    if (!join(path, sizeof path, gitdir, "HEAD") || read_small(path, text, sizeof text) < 0)
        return;
    if (strncmp(text, "ref: ", 5) == 0) {
        const char *ref = text + 5;
        while (*ref == ' ')
            ref++;
        if (strncmp(ref, "refs/heads/", 11) == 0)
            snprintf(out->branch, sizeof out->branch, "%s", ref + 11);
        resolve_ref(gitdir, common, ref, out->commit);
    } else if (is_object_id(text, strlen(text))) {
        snprintf(out->commit, sizeof out->commit, "%s", text);
    }
}

/* gitinfo_lookup() in a child running as the agent user. -1 when it gave no answer. */
static int lookup_as_user(const struct executor *ex, const char *dir, struct gitinfo *out)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        close(p[0]);
        if (spawn_become_user(ex->cfg.uid, ex->cfg.gid) < 0)
            _exit(1);
        gitinfo_lookup(dir, out);
        ssize_t ignored = write(p[1], out, sizeof *out);
        (void)ignored;
        _exit(0);
    }
    close(p[1]);
    size_t got = 0;
    struct pollfd pfd = {.fd = p[0], .events = POLLIN};
    while (got < sizeof *out && poll(&pfd, 1, GITINFO_TIMEOUT_MS) > 0) {
        ssize_t n = read(p[0], (char *)out + got, sizeof *out - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(p[0]);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return got == sizeof *out ? 0 : -1;
}

static json_t *string_or_null(const char *s)
{
    json_t *v = *s ? json_string(s) : NULL;
    return v ? v : json_null();
}

void gitinfo_on_run(struct executor *ex, const struct marker_info *m, json_t *obs)
{
    json_t *md = json_object_get(json_object_get(obs, "extras"), "metadata");
    struct gitinfo gi;
    if (!json_is_object(md))
        return;
    if (!ex->cfg.switch_user)
        gitinfo_lookup(m->cwd, &gi);
    else if (lookup_as_user(ex, m->cwd, &gi) < 0)
        memset(&gi, 0, sizeof gi);
    gi.branch[sizeof gi.branch - 1] = '\0';
    gi.commit[sizeof gi.commit - 1] = '\0';
    json_object_set_new(md, "git_branch", string_or_null(gi.branch));
    json_object_set_new(md, "git_commit", string_or_null(gi.commit));
}
