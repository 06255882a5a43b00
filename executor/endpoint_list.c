/* POST /list_files {"path": optional}: the names in a directory, as the agent sees it.
 *
 * No path: the initial working directory; a relative path is taken from there (not from the
 * shell's current directory, as in OpenHands). Directories come first with a trailing '/',
 * then everything else; each group sorted case-insensitively (ASCII letters; ties in byte
 * order); hidden entries included; a symlink to a directory counts as a directory. A path
 * that does not exist, is not a directory or cannot be read gives []. Names that are not
 * UTF-8 are repaired (U+FFFD) so the reply is valid JSON. The listing runs in a child with
 * the agent's permissions (agent_task.h). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent_task.h"
#include "common/utf8.h"
#include "endpoint.h"
#include "executor.h"
#include "text.h"

struct listing {
    char *path; /* absolute */
    struct agent_task *task;
};

struct list_entry {
    char *name;
    bool dir;
};

static int ascii_lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

static int compare_entries(const void *pa, const void *pb)
{
    const struct list_entry *a = pa, *b = pb;
    if (a->dir != b->dir)
        return a->dir ? -1 : 1;
    const unsigned char *x = (const unsigned char *)a->name, *y = (const unsigned char *)b->name;
    for (; *x && ascii_lower(*x) == ascii_lower(*y); x++, y++)
        ;
    int d = ascii_lower(*x) - ascii_lower(*y);
    return d ? d : strcmp(a->name, b->name);
}

/* In the child, as the agent. */
static unsigned list_child(void *arg, int in_fd, int out_fd, json_t **reply)
{
    const char *path = arg;
    (void)in_fd;
    (void)out_fd;
    *reply = json_array();
    DIR *d = opendir(path);
    if (!d)
        return 200;
    struct list_entry *entries = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            struct list_entry *p = realloc(entries, cap * sizeof *p);
            if (!p)
                return 500;
            entries = p;
        }
        struct stat st;
        entries[n].dir = fstatat(dirfd(d), de->d_name, &st, 0) == 0 && S_ISDIR(st.st_mode);
        entries[n].name = strdup(de->d_name);
        if (!entries[n].name)
            return 500;
        n++;
    }
    closedir(d);
    if (n > 1)
        qsort(entries, n, sizeof *entries, compare_entries);
    for (size_t i = 0; i < n; i++) {
        struct buf name = BUF_INIT;
        utf8_repair(&name, entries[i].name, strlen(entries[i].name), 0, NULL);
        if (entries[i].dir)
            buf_append_str(&name, "/");
        json_array_append_new(*reply, json_string(name.data ? name.data : ""));
        buf_free(&name);
        free(entries[i].name);
    }
    free(entries);
    return 200;
}

static void free_listing(void *state)
{
    struct listing *l = state;
    agent_task_free(l->task);
    free(l->path);
    free(l);
}

static void on_listed(struct agent_task *t)
{
    endpoint_resume(t->owner);
}

static enum MHD_Result reply_listing(struct request *rq, struct listing *l)
{
    struct agent_task *t = l->task;
    if (t->status != MHD_HTTP_OK || !json_is_array(t->reply)) {
        json_t *r = t->reply;
        t->reply = NULL;
        return endpoint_reply_json(rq, t->status == MHD_HTTP_OK ? 500 : t->status, r);
    }
    json_t *r = t->reply;
    t->reply = NULL;
    return endpoint_reply_json(rq, MHD_HTTP_OK, r);
}

enum MHD_Result endpoint_list(struct request *rq)
{
    struct listing *l = rq->state;
    if (l) { /* resumed */
        if (l->task->finished)
            return reply_listing(rq, l);
        if (endpoint_stopping(rq))
            return endpoint_reply_stopping(rq);
        endpoint_suspend(rq);
        return MHD_YES;
    }
    enum MHD_Result rc;
    json_t *body = endpoint_body_object(rq, &rc);
    if (!body)
        return rc;
    const json_t *p = json_object_get(body, "path");
    if (p && !json_is_null(p) && !json_is_string(p)) {
        json_decref(body);
        return endpoint_reply_detail(rq, MHD_HTTP_BAD_REQUEST,
                                     "Invalid field: path (expected a string)");
    }
    const char *path = json_is_string(p) ? json_string_value(p) : NULL;
    const char *wd = rq->ex->cfg.working_dir;
    char *full = NULL;
    int n;
    if (!path || !*path)
        n = asprintf(&full, "%s", wd);
    else if (path[0] == '/')
        n = asprintf(&full, "%s", path);
    else
        n = asprintf(&full, "%s/%s", wd, path);
    json_decref(body);
    l = n < 0 ? NULL : calloc(1, sizeof *l);
    if (!l) {
        free(n < 0 ? NULL : full);
        return endpoint_reply_detail(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "Out of memory");
    }
    l->path = full;
    rq->state = l;
    rq->state_free = free_listing;
    struct buf err = BUF_INIT;
    l->task = agent_task_start(rq->ex, list_child, l->path, 0, &err);
    if (!l->task) {
        rc = endpoint_reply_detail(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "Cannot list %s: %s",
                                   l->path, err.data ? err.data : "");
        buf_free(&err);
        return rc;
    }
    l->task->owner = rq;
    l->task->on_finish = on_listed;
    endpoint_suspend(rq);
    return MHD_YES;
}
