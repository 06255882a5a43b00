/* Actions: the table of action types, and the queue that runs one action at a time.
 * Adding an action type is one file (parse/start/cancel) and one line in action.c's table. */
#ifndef PADDOCK_EXECUTOR_ACTION_H
#define PADDOCK_EXECUTOR_ACTION_H

#include <jansson.h>
#include <stdbool.h>

#include "common/buf.h"

struct executor;
struct action_req;

enum action_status {
    ACTION_DONE,    /* req->result is set */
    ACTION_PENDING, /* the handler calls action_finish() later */
};

struct action_type {
    const char *name;
    /* Checks the action object; on error writes a message (for a 400 reply) and returns -1. */
    int (*parse)(const json_t *action, void **args, struct buf *err);
    enum action_status (*start)(struct executor *ex, struct action_req *req);
    /* Forget a PENDING request (shutdown); no result follows. */
    void (*cancel)(struct executor *ex, struct action_req *req);
    void (*free_args)(void *args);
    /* The args keys it takes besides OpenHands' shared ones (NULL-terminated); any other
     * key is refused with 400, as OpenHands' decoder refuses it. */
    const char *const *fields;
};

struct action_req {
    const struct action_type *type;
    void *args;
    json_t *result; /* the observation; NULL when the executor gave up on it */
    /* The engine asked (`?paddock_diff=1`) for what a write changed: the observation then
     * carries a top-level "paddock_diff" (a unified diff) that the engine records and takes
     * out before the agent sees it. Clients that do not ask never get the key. */
    bool want_diff;
    /* The engine asked (`?paddock_stream=1`) to see the output as it is produced: while the
     * action runs, each piece of its output is passed here (NULL: nobody watches). What the
     * agent gets back is the same observation either way. */
    void (*on_output)(struct action_req *req, const char *data, size_t n);
    /* Called when a request that was not finished at submit time gets its result. */
    void (*done)(struct action_req *req);
    void *owner;
    struct executor *orphan_of; /* its connection went: it ends on its own */
    struct action_req *next;
    /* For its line in the container log (action_log). */
    char summary[96]; /* its command, path or code: cut, control characters as spaces */
    double received;  /* evloop_now() when it came */
};

struct action_queue {
    struct action_req *head, *tail;
    struct action_req *running;
};

/* The action type called name, or NULL. */
const struct action_type *action_type_find(const char *name);
/* From the request body {"action": {...}}; NULL with a message in err for a 400 reply. */
struct action_req *action_req_new(const json_t *body, struct buf *err);
void action_req_free(struct action_req *req);

/* Its one line in the container log (stdout): kind, summary, exit code or outcome, duration
 * (`--quiet`: none). */
void action_log(struct executor *ex, const struct action_req *req);

/* Queues req; returns true when it finished at once (req->done is then not called). */
bool action_submit(struct executor *ex, struct action_req *req);
/* The running PENDING request has its result: report it and start the next. */
void action_finish(struct executor *ex, struct action_req *req);
/* Start queued requests if the executor can take them now. */
void action_pump(struct executor *ex);
/* Shutdown: every request ends without a result. */
void action_abort_all(struct executor *ex);

/* Field helpers for parse functions: -1 with a message naming the field on a wrong type. */
int action_get_bool(const json_t *obj, const char *key, const char *path, bool *out,
                    struct buf *err);
/* action.args, which must be an object. */
const json_t *action_get_args(const json_t *action, struct buf *err);
/* A string field (*len counts any NUL bytes in it). Missing or null: *out stays as it was
 * (NULL means null), unless required. The string is the JSON value's own: copy it before the
 * body goes. */
int action_get_string(const json_t *obj, const char *key, const char *path, bool required,
                      const char **out, size_t *len, struct buf *err);
/* An integer field; missing or null keeps *out. */
int action_get_long(const json_t *obj, const char *key, const char *path, long *out,
                    struct buf *err);
/* The top-level timeout in seconds: missing, null, zero or negative keep *out. */
int action_get_timeout(const json_t *action, double *out, struct buf *err);

/* action_run.c: the `run` action (CmdRunAction) */
int action_run_parse(const json_t *action, void **args, struct buf *err);
enum action_status action_run_start(struct executor *ex, struct action_req *req);
void action_run_cancel(struct executor *ex, struct action_req *req);
void action_run_free(void *args);

/* action_read.c: `read` (FileReadAction), action_write.c: `write` (FileWriteAction),
 * action_edit.c: `edit` (FileEditAction, oh_aci). Their work runs in fsjob.c's child. */
int action_read_parse(const json_t *action, void **args, struct buf *err);
enum action_status action_read_start(struct executor *ex, struct action_req *req);
void action_read_free(void *args);
int action_write_parse(const json_t *action, void **args, struct buf *err);
enum action_status action_write_start(struct executor *ex, struct action_req *req);
void action_write_free(void *args);
int action_edit_parse(const json_t *action, void **args, struct buf *err);
enum action_status action_edit_start(struct executor *ex, struct action_req *req);
void action_edit_free(void *args);

/* action_ipython.c: `run_ipython` (IPythonRunCellAction), with the ipython plugin */
int action_ipython_parse(const json_t *action, void **args, struct buf *err);
enum action_status action_ipython_start(struct executor *ex, struct action_req *req);
void action_ipython_cancel(struct executor *ex, struct action_req *req);
void action_ipython_free(void *args);

/* action_browse.c: `browse` and `browse_interactive` (BrowseURLAction, BrowseInteractiveAction) */
int action_browse_parse(const json_t *action, void **args, struct buf *err);
int action_browse_interactive_parse(const json_t *action, void **args, struct buf *err);
enum action_status action_browse_start(struct executor *ex, struct action_req *req);
void action_browse_cancel(struct executor *ex, struct action_req *req);
void action_browse_free(void *args);

#endif
