/* Group commit: actions that arrive together share one durable commit.
 *
 * The action path does not write the record at once: it queues the write with what must follow
 * it (forwarding to the sandbox, answering the agent). At the end of the loop's turn, after
 * every request and every executor reply that was ready has been handled, the flush hook runs
 * all queued writes inside one transaction, commits it once (one fsync when any write asked for
 * durability), and only then runs the continuations in order. So an intent is committed before
 * its command starts and an observation before the agent hears it, as before; a lone action
 * commits in its own turn, without waiting for company; under load one fsync carries as many
 * actions as arrived together. The entries of the hash chain are appended in queue order inside
 * the transaction, each reading the head the previous one left. */
#include "engine/commit.h"

#include "engine/base/loop.h"
#include "engine/engine_internal.h"
#include "engine/store/store.h"

#include <stdlib.h>
#include <string.h>

struct commit_op {
    struct commit_op *next;
    commit_write_fn write;
    commit_done_fn done;
    void *ud;
    int rc;
    char *err;
};

struct commit {
    struct engine *eng;
    struct commit_op *head, **tail;
    bool durable; /* some queued write asked for a synced commit */
    struct commit_counts counts;
};

static bool commit_on_flush(void *ud)
{
    return commit_flush(ud);
}

int commit_init(struct engine *eng)
{
    struct commit *c = calloc(1, sizeof(*c));
    if (!c)
        return -1;
    c->eng = eng;
    c->tail = &c->head;
    if (loop_add_flush(eng->loop, commit_on_flush, eng) < 0) {
        free(c);
        return -1;
    }
    eng->commit = c;
    return 0;
}

void commit_shutdown(struct engine *eng)
{
    if (!eng->commit)
        return;
    while (commit_flush(eng))
        ;
    free(eng->commit);
    eng->commit = NULL;
}

void commit_add(struct engine *eng, bool durable, commit_write_fn write, commit_done_fn done,
                void *ud)
{
    struct commit *c = eng->commit;
    struct commit_op *op = c ? calloc(1, sizeof(*op)) : NULL;
    if (!op) {
        /* Stopped (or out of memory): written and committed on its own, as before batching. */
        char *err = NULL;
        int rc = write(eng->store, ud, &err);
        done(rc, err, ud);
        return;
    }
    op->write = write;
    op->done = done;
    op->ud = ud;
    *c->tail = op;
    c->tail = &op->next;
    c->durable |= durable;
}

bool commit_flush(struct engine *eng)
{
    struct commit *c = eng->commit;
    if (!c || !c->head)
        return false;
    /* The queue is taken whole: a continuation that queues again starts the next batch. */
    struct commit_op *ops = c->head;
    bool durable = c->durable;
    c->head = NULL;
    c->tail = &c->head;
    c->durable = false;
    char *err = NULL;
    unsigned long long n = 0;
    int rc = store_batch_begin(eng->store, durable, &err);
    for (struct commit_op *op = ops; op; op = op->next, n++)
        op->rc = rc < 0 ? -1 : op->write(eng->store, op->ud, &op->err);
    if (rc == 0)
        rc = store_batch_commit(eng->store, &err);
    c->counts.commits++;
    c->counts.writes += n;
    if (n > c->counts.largest)
        c->counts.largest = n;
    while (ops) {
        struct commit_op *op = ops;
        ops = op->next;
        if (rc < 0 && op->rc == 0) {
            /* Written, then lost with the batch: the commit's error is the write's. */
            op->rc = -1;
            op->err = err ? strdup(err) : NULL;
        } else if (rc < 0 && !op->err && err) {
            op->err = strdup(err);
        }
        op->done(op->rc, op->err, op->ud);
        free(op);
    }
    free(err);
    return true;
}

void commit_counts(const struct engine *eng, struct commit_counts *out)
{
    memset(out, 0, sizeof(*out));
    if (eng->commit)
        *out = eng->commit->counts;
}
