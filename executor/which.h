/* `which` without a fork: the first executable NAME along a PATH. The one PATH search of the
 * executor (the shell, python3, a browser, py_interpreter_path). */
#ifndef PADDOCK_EXECUTOR_WHICH_H
#define PADDOCK_EXECUTOR_WHICH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Looks for name in each entry of path_env (':'-separated). With a cwd, as the agent's shell
 * would: an empty entry is cwd and relative entries are taken from it. Without one (the
 * executor's own lookups), empty and relative entries are skipped. Executable means a
 * regular file with an execute bit that access(X_OK) allows. Returns true with the path in
 * out; false with out "". */
bool which_find(const char *path_env, const char *cwd, const char *name, char *out, size_t outlen);
/* which_find in the PATH of an environment array (the default PATH when it has none). */
bool which_find_env(char *const *envp, const char *name, char *out, size_t outlen);
/* OpenHands' py_interpreter_path (`which python`): python, else python3 (images that only
 * ship python3); "" when neither is found. */
void which_python(const char *path_env, const char *cwd, char *out, size_t outlen);

/* Stamps changed this recently are not trusted: the cache looks again. A file system that
 * keeps nanoseconds moves its times in clock ticks (milliseconds); one whose stamps are whole
 * seconds (both nanosecond parts zero) may move them a second or two at a time. */
#define WHICH_RACY_SECONDS 2
#define WHICH_RACY_NS 100000000LL

/* One directory along PATH, or the answer, as stat saw it. */
struct which_stamp {
    bool missing;
    dev_t dev;
    ino_t ino;
    mode_t mode;
    long long mtime_sec, ctime_sec;
    long mtime_nsec, ctime_nsec;
};

struct which_file {
    char *path;
    struct which_stamp st;
};

/* which_python's last answer, for the next command (the run action asks after each one).
 * Zero-initialised; which_cache_free gives its memory back. */
struct which_cache {
    bool valid;
    char *path_env; /* the PATH it was for */
    char *cwd;      /* the cwd it was for, when PATH has a relative or empty entry; else NULL */
    struct which_stamp *dirs;
    size_t ndirs, cap, checked;
    char answer[PATH_MAX];
    struct which_stamp answer_stamp;
    struct which_file *files; /* candidates the lookup passed over (not executable) */
    size_t nfiles;
    bool trust_recent; /* tests: trust stamps however recent (see WHICH_RACY_SECONDS) */
};

/* which_python through the cache: the same answer, without the lookup while PATH (and the
 * cwd, when PATH has relative entries) is the same, no directory along PATH changed (its
 * mtime, ctime, inode, or whether it exists) and the answer is the same file with the same
 * mode (as is each candidate it passed over): one stat per PATH directory and one for the
 * answer instead of up to two calls per candidate. A directory or file changed in the last
 * WHICH_RACY_NS (WHICH_RACY_SECONDS where the stamps are whole seconds) is not trusted (time
 * stamps have a clock tick's resolution): the lookup is done again until things settle. Not
 * seen: mounts; see docs/protocol.md. */
void which_python_cached(struct which_cache *c, const char *path_env, const char *cwd, char *out,
                         size_t outlen);
void which_cache_free(struct which_cache *c);

#endif
