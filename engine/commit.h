/* Group commit of the action path (commit.c; docs/record.md): the record's writes that one
 * turn of the event loop produced share one transaction and one fsync, and what waits on them
 * (starting the command, answering the agent) runs only after that commit. */
#ifndef PADDOCK_COMMIT_H
#define PADDOCK_COMMIT_H

#include <stdbool.h>

struct engine;
struct store;

/* Write one thing inside the batch (its own store transaction, nested); 0, or -1 with *err. */
typedef int (*commit_write_fn)(struct store *st, void *ud, char **err);
/* After the batch's commit: rc 0 when the write is on disk (synced when it asked to be), or -1
 * with err (the write's own error, or the commit's) which the callee owns. */
typedef void (*commit_done_fn)(int rc, char *err, void *ud);

/* Starts gathering: writes go at the end of the loop's turn (loop_add_flush). 0, or -1 with
 * *err (out of memory; the bench log of ENGINE_BENCH_NO_RECORD not made). */
int commit_init(struct engine *eng, char **err);
/* Commits what is gathered, then frees the queue. */
void commit_shutdown(struct engine *eng);
/* False on the benchmarks' engine without a record (ENGINE_BENCH_NO_RECORD): a batch then
 * runs its writes outside any transaction and logs a stand-in for each, so every write
 * function must check this and leave the store alone. */
bool commit_records(const struct engine *eng);
/* Queue a write; durable: the batch's commit is synced (synchronous=FULL). done is called
 * once, from the flush, after the commit (after commit_shutdown: written and committed at
 * once, alone). */
void commit_add(struct engine *eng, bool durable, commit_write_fn write, commit_done_fn done,
                void *ud);
/* Commit what is queued now (the loop does at the end of each turn). True when there was
 * anything. */
bool commit_flush(struct engine *eng);

/* How well it batches: commits made and writes they carried, since the start. */
struct commit_counts {
    unsigned long long commits, writes, largest;
};
void commit_counts(const struct engine *eng, struct commit_counts *out);

#endif
