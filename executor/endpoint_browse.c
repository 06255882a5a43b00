/* POST /browse {"path", "op": "list"|"read", "limit"?, "max"?, "raw"?}: the operator's view
 * of the workspace (a paddock extension; the engine's /v1/sessions/{id}/files routes).
 *
 * Unlike the agent's own file actions, which reach the whole container, these reads stay in
 * the working directory: a path outside it is refused before anything is opened, and the
 * path is resolved with openat2(RESOLVE_BENEATH), so a ".." or a symbolic link that leaves
 * the workspace is refused (403) by the kernel, with no window between a check and the open.
 * They run in a child with the agent's permissions (agent_task.h): what the agent cannot
 * read, the operator does not read through here either.
 *
 * list: {"path", "type": "directory", "entries": [{"name", "type", "size", "mtime",
 * "target"?}], "total", "omitted"}: directories first, then by name (ASCII case folded);
 * at most limit entries, the rest counted in "omitted". Entries are not followed (a link is
 * "link" with its target). Names that are not UTF-8 are repaired (U+FFFD).
 * read: {"path", "type": "file"|"fifo"|..., "size", "binary", "kind", "truncated",
 * "content_base64"?}: at most max bytes; the bytes are sent for text, and for binary content
 * only with raw. A FIFO, socket or device is described, never opened for reading. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_task.h"
#include "common/base64.h"
#include "common/io.h"
#include "common/utf8.h"
#include "endpoint.h"
#include "executor.h"
#include "fileio.h"
#include "pathname.h"

/* linux/openat2.h's values; the struct is open_how's layout. */
#define BROWSE_RESOLVE_NO_MAGICLINKS 0x02
#define BROWSE_RESOLVE_BENEATH 0x08

#define BROWSE_LIMIT_DEFAULT 500
#define BROWSE_LIMIT_MAX 5000
#define BROWSE_NAMES_MAX 200000 /* names sorted at most; more are only counted */
#define BROWSE_READ_DEFAULT (4u * 1024 * 1024)
#define BROWSE_READ_MAX (16u * 1024 * 1024)

struct browse_how {
    uint64_t flags, mode, resolve;
};

struct browse {
    char *root;    /* the working directory */
    char *rel;     /* the path below it ("." for itself) */
    char *display; /* the absolute path, as replies name it */
    bool list, raw;
    long limit, max;
    struct agent_task *task;
};

/* What binary content is, by its first bytes: the common formats an agent leaves behind. */
static const struct {
    const char *magic;
    size_t len;
    const char *kind;
} browse_kinds[] = {
    {"\x7f"
     "ELF",
     4, "ELF executable or library"},
    {"\x89PNG", 4, "PNG image"},
    {"\xff\xd8\xff", 3, "JPEG image"},
    {"GIF8", 4, "GIF image"},
    {"%PDF", 4, "PDF document"},
    {"PK\x03\x04", 4, "zip archive"},
    {"\x1f\x8b", 2, "gzip data"},
    {"BZh", 3, "bzip2 data"},
    {"\xfd"
     "7zXZ",
     5, "xz data"},
    {"SQLite format 3", 16, "SQLite database"},
    {"\0asm", 4, "WebAssembly module"},
    {"\xca\xfe\xba\xbe", 4, "Java class or Mach-O universal binary"},
};

static const char *browse_kind(const char *data, size_t n, bool binary)
{
    for (size_t i = 0; i < sizeof(browse_kinds) / sizeof(browse_kinds[0]); i++)
        if (n >= browse_kinds[i].len &&
            memcmp(data, browse_kinds[i].magic, browse_kinds[i].len) == 0)
            return browse_kinds[i].kind;
    if (n == 0)
        return "empty";
    if (binary)
        return "binary data";
    return utf8_valid(data, n < FILEIO_SNIFF_BYTES ? n : FILEIO_SNIFF_BYTES) ? "UTF-8 text"
                                                                             : "text";
}

static const char *browse_type(mode_t m)
{
    return S_ISDIR(m)    ? "directory"
           : S_ISREG(m)  ? "file"
           : S_ISLNK(m)  ? "link"
           : S_ISFIFO(m) ? "fifo"
           : S_ISSOCK(m) ? "socket"
           : S_ISCHR(m)  ? "character device"
           : S_ISBLK(m)  ? "block device"
                         : "other";
}

static json_t *browse_string(const char *s, size_t n)
{
    struct buf b = BUF_INIT;
    utf8_repair(&b, s, n, 0, NULL);
    json_t *j = json_string(b.data ? b.data : "");
    buf_free(&b);
    return j;
}

/* The path beneath the workspace, or why not: openat2 refuses what leaves it (EXDEV). */
static int browse_open(const struct browse *b, int flags, json_t **reply, unsigned *status)
{
    int root = open(b->root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (root < 0) {
        *status = agent_task_fail_errno(reply, errno, "cannot open the workspace %s", b->root);
        return -1;
    }
    /* openat2 refuses O_PATH with any flag but O_CLOEXEC, O_DIRECTORY and O_NOFOLLOW. */
    int extra = flags & O_PATH ? 0 : O_NOCTTY | O_NONBLOCK;
    struct browse_how how = {.flags = (uint64_t)(flags | O_CLOEXEC | extra),
                             .resolve = BROWSE_RESOLVE_BENEATH | BROWSE_RESOLVE_NO_MAGICLINKS};
    int fd = io_openat2(root, b->rel, &how, sizeof(how));
    int err = errno;
    close(root);
    if (fd >= 0)
        return fd;
    if (err == EXDEV)
        *status = agent_task_fail(reply, 403,
                                  "%s leaves the workspace %s (through a symbolic link or ..): "
                                  "refused",
                                  b->display, b->root);
    else if (err == ENOSYS)
        *status = agent_task_fail(reply, 501,
                                  "this kernel has no openat2 (Linux 5.6 or later), so a path "
                                  "cannot be confined to the workspace");
    else
        *status = agent_task_fail_errno(reply, err, "cannot open %s", b->display);
    return -1;
}

struct browse_name {
    char *name;
    bool dir;
};

static int browse_name_cmp(const void *pa, const void *pb)
{
    const struct browse_name *a = pa, *c = pb;
    if (a->dir != c->dir)
        return a->dir ? -1 : 1;
    int d = strcasecmp(a->name, c->name);
    return d ? d : strcmp(a->name, c->name);
}

static unsigned browse_list(const struct browse *b, json_t **reply)
{
    unsigned status = 500;
    int fd = browse_open(b, O_RDONLY | O_DIRECTORY, reply, &status);
    if (fd < 0)
        return status;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return agent_task_fail_errno(reply, errno, "cannot list %s", b->display);
    }
    struct browse_name *names = NULL;
    size_t n = 0, cap = 0, total = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        total++;
        if (n == BROWSE_NAMES_MAX)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            struct browse_name *p = realloc(names, cap * sizeof(*p));
            if (!p)
                return agent_task_fail(reply, 500, "out of memory");
            names = p;
        }
        names[n].dir = de->d_type == DT_DIR;
        if (!(names[n].name = strdup(de->d_name)))
            return agent_task_fail(reply, 500, "out of memory");
        n++;
    }
    if (n > 1)
        qsort(names, n, sizeof(*names), browse_name_cmp);
    json_t *entries = json_array();
    size_t shown = n < (size_t)b->limit ? n : (size_t)b->limit;
    for (size_t i = 0; i < shown; i++) {
        struct stat st;
        json_t *e = json_object();
        json_object_set_new(e, "name", browse_string(names[i].name, strlen(names[i].name)));
        if (fstatat(dirfd(d), names[i].name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
            json_object_set_new(e, "type", json_string(browse_type(st.st_mode)));
            json_object_set_new(e, "size", json_integer((json_int_t)st.st_size));
            json_object_set_new(e, "mtime", json_integer((json_int_t)st.st_mtime));
            char target[PATH_MAX];
            ssize_t tn = S_ISLNK(st.st_mode)
                             ? readlinkat(dirfd(d), names[i].name, target, sizeof(target))
                             : -1;
            if (tn >= 0)
                json_object_set_new(e, "target", browse_string(target, (size_t)tn));
        } else {
            json_object_set_new(e, "type", json_string("gone"));
        }
        json_array_append_new(entries, e);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i].name);
    free(names);
    closedir(d);
    *reply = json_pack("{s:s,s:s,s:o,s:I,s:I}", "path", b->display, "type", "directory", "entries",
                       entries, "total", (json_int_t)total, "omitted", (json_int_t)(total - shown));
    return 200;
}

static unsigned browse_read(const struct browse *b, json_t **reply)
{
    unsigned status = 500;
    /* O_PATH first: a FIFO or device is described, never opened for reading. */
    int pfd = browse_open(b, O_PATH, reply, &status);
    if (pfd < 0)
        return status;
    struct stat st;
    if (fstat(pfd, &st) < 0) {
        close(pfd);
        return agent_task_fail_errno(reply, errno, "cannot stat %s", b->display);
    }
    if (S_ISDIR(st.st_mode)) {
        close(pfd);
        return agent_task_fail(reply, 400, "%s is a directory: list it instead", b->display);
    }
    if (!S_ISREG(st.st_mode)) {
        close(pfd);
        *reply = json_pack("{s:s,s:s,s:I,s:b,s:s,s:b}", "path", b->display, "type",
                           browse_type(st.st_mode), "size", (json_int_t)st.st_size, "binary", 1,
                           "kind", fileio_kind(st.st_mode), "truncated", 0);
        return 200;
    }
    char proc[64];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
    /* Reopening the O_PATH descriptor reads exactly the file checked. */
    int fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    int err = errno;
    close(pfd);
    if (fd < 0)
        return agent_task_fail_errno(reply, err, "cannot read %s", b->display);
    struct buf data = BUF_INIT;
    int rc = fileio_read_all(fd, (size_t)b->max, &data);
    close(fd);
    bool truncated = rc == -EFBIG;
    if (rc < 0 && !truncated) {
        buf_free(&data);
        return agent_task_fail_errno(reply, -rc, "cannot read %s", b->display);
    }
    if (data.len > (size_t)b->max)
        data.len = (size_t)b->max;
    const char *bytes = data.data ? data.data : "";
    bool binary = fileio_is_binary(bytes, data.len);
    *reply = json_pack("{s:s,s:s,s:I,s:b,s:s,s:b}", "path", b->display, "type", "file", "size",
                       (json_int_t)st.st_size, "binary", binary, "kind",
                       browse_kind(bytes, data.len, binary), "truncated",
                       truncated || (off_t)data.len < st.st_size);
    if (!binary || b->raw) {
        struct buf enc = BUF_INIT;
        if (base64_encode(&enc, (const unsigned char *)bytes, data.len) < 0) {
            buf_free(&data);
            return agent_task_fail(reply, 500, "out of memory");
        }
        json_object_set_new(*reply, "content_base64", json_string(enc.data ? enc.data : ""));
        buf_free(&enc);
    }
    buf_free(&data);
    return 200;
}

/* In the child, as the agent. */
static unsigned browse_child(void *arg, int in_fd, int out_fd, json_t **reply)
{
    (void)in_fd;
    (void)out_fd;
    const struct browse *b = arg;
    return b->list ? browse_list(b, reply) : browse_read(b, reply);
}

static void browse_free(void *state)
{
    struct browse *b = state;
    agent_task_free(b->task);
    free(b->root);
    free(b->rel);
    free(b->display);
    free(b);
}

static void browse_on_finished(struct agent_task *t)
{
    endpoint_resume(t->owner);
}

/* The path made relative to the workspace: absolute ones must lie in it. 0, or -1 after
 * the refusal was put in *why. */
static int browse_locate(struct browse *b, const char *path, struct buf *why)
{
    struct buf norm = BUF_INIT;
    int rc = -1;
    if (pathname_join(&norm, b->root, path && *path ? path : ".") < 0) {
        buf_append_str(why, "out of memory");
        goto out;
    }
    size_t rn = strlen(b->root);
    while (rn > 1 && b->root[rn - 1] == '/')
        rn--;
    const char *p = norm.data;
    bool inside = strncmp(p, b->root, rn) == 0 && (p[rn] == '\0' || p[rn] == '/' || rn == 1);
    if (!inside) {
        buf_printf(why, "%s is outside the workspace %s: refused", p, b->root);
        goto out;
    }
    const char *rest = p + rn;
    while (*rest == '/')
        rest++;
    b->rel = strdup(*rest ? rest : ".");
    b->display = strdup(p);
    rc = b->rel && b->display ? 0 : -1;
    if (rc < 0)
        buf_append_str(why, "out of memory");
out:
    buf_free(&norm);
    return rc;
}

enum MHD_Result endpoint_browse(struct request *rq)
{
    struct browse *b = rq->state;
    if (b) { /* resumed */
        if (b->task->finished) {
            json_t *r = b->task->reply;
            b->task->reply = NULL;
            return endpoint_reply_json(rq, b->task->status, r ? r : json_object());
        }
        if (endpoint_stopping(rq))
            return endpoint_reply_stopping(rq);
        endpoint_suspend(rq);
        return MHD_YES;
    }
    enum MHD_Result rc;
    json_t *body = endpoint_body_object(rq, &rc);
    if (!body)
        return rc;
    const char *path = NULL, *op = NULL;
    json_int_t limit = BROWSE_LIMIT_DEFAULT, max = BROWSE_READ_DEFAULT;
    int raw = 0;
    if (json_unpack(body, "{s?s,s:s,s?I,s?I,s?b}", "path", &path, "op", &op, "limit", &limit, "max",
                    &max, "raw", &raw) < 0 ||
        (strcmp(op, "list") && strcmp(op, "read")) || limit < 1 || limit > BROWSE_LIMIT_MAX ||
        max < 0 || max > BROWSE_READ_MAX) {
        json_decref(body);
        return endpoint_reply_detail(rq, MHD_HTTP_BAD_REQUEST,
                                     "browse takes {\"path\", \"op\": \"list\"|\"read\", "
                                     "\"limit\": 1..%d, \"max\": 0..%u, \"raw\": bool}",
                                     BROWSE_LIMIT_MAX, BROWSE_READ_MAX);
    }
    b = calloc(1, sizeof(*b));
    if (!b || !(b->root = strdup(rq->ex->cfg.working_dir))) {
        free(b);
        json_decref(body);
        return endpoint_reply_detail(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "Out of memory");
    }
    rq->state = b;
    rq->state_free = browse_free;
    b->list = strcmp(op, "list") == 0;
    b->raw = raw;
    b->limit = (long)limit;
    b->max = (long)max;
    struct buf why = BUF_INIT;
    int located = browse_locate(b, path, &why);
    json_decref(body);
    if (located < 0) {
        rc = endpoint_reply_detail(rq, MHD_HTTP_FORBIDDEN, "%s", why.data ? why.data : "refused");
        buf_free(&why);
        return rc;
    }
    b->task = agent_task_start(rq->ex, browse_child, b, 0, &why);
    if (!b->task) {
        rc = endpoint_reply_detail(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "Cannot read %s: %s",
                                   b->display, why.data ? why.data : "");
        buf_free(&why);
        return rc;
    }
    buf_free(&why);
    b->task->owner = rq;
    b->task->on_finish = browse_on_finished;
    endpoint_suspend(rq);
    return MHD_YES;
}
