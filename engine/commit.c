/* Group commit: actions that arrive together share one durable commit.
 *
 * The action path does not write the record at once: it queues the write with what must follow
 * it (forwarding to the sandbox, answering the agent). At the end of the loop's turn, after
 * every request and every executor reply that was ready has been handled, the flush hook runs
 * all queued writes inside one transaction, commits it once, and only then runs the
 * continuations in order. So an intent is committed before its command starts and an
 * observation is on disk before the agent hears it, as before; a lone action commits in its
 * own turn, without waiting for company. The entries of the hash chain are appended in queue
 * order inside the transaction, each reading the head the previous one left. The writes run
 * bare, without a savepoint each (which also made SQLite's full-text index flush at every
 * write); only when one fails is the batch rolled back and run again with a savepoint per
 * write, so it fails alone.
 *
 * The sync is not made on the loop: a batch that must be durable is committed to the
 * write-ahead log without one, and a syncer thread fdatasyncs the log while the loop goes on
 * gathering and committing the next batches; the continuations of a batch run once a sync
 * begun after its commit has returned (eventfd back to the loop). The loop used to stand still
 * for every fsync (milliseconds on this disk), so actions a second were bounded by fsyncs a
 * second; now the durable writes that arrive while a sync runs gather, and go in one commit
 * and one sync when it ends (the writes that need no sync, intents, go at once). Without the
 * log's descriptor (or after a failed sync), a batch is synced by its own commit as before.
 *
 * The search index and the sessions' action counts are not written by the batches: a timer
 * armed by a commit brings them up to the record a little later, many actions in one
 * transaction (store_derived_update).
 *
 * Benchmarks only (ENGINE_BENCH_NO_RECORD): a batch opens no transaction, and its writes
 * leave the store alone (each checks commit_records); for each of them COMMIT_BENCH_ENTRY
 * bytes are appended to a log beside the store instead (a ring over blocks written once at
 * start, as the store's log is), and the syncer syncs that log. Everything else (the batching,
 * the sync, the continuations) is the same: what any durable record costs at the least, to
 * set beside what this one costs. */
#include "engine/commit.h"

#include "engine/base/loop.h"
#include "engine/base/util.h"
#include "engine/engine_internal.h"
#include "engine/store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct commit_op {
    struct commit_op *next;
    commit_write_fn write;
    commit_done_fn done;
    void *ud;
    int rc;
    char *err;
    unsigned long long seq; /* waiting for the sync of this batch */
    bool durable;
};

/* The syncer thread's side, under mu. */
struct commit_syncer {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int wal_fd, efd;
    bool running, stop;
    unsigned long long want;    /* the loop asks: sync what batch want and those before wrote */
    unsigned long long started; /* the batch the sync under way covers */
    unsigned long long synced;  /* ... and the last one finished covers */
    int error;                  /* errno of a failed sync (then it stays failed) */
};

#define COMMIT_BENCH_ENTRY 256
#define COMMIT_BENCH_RING (16 * 1024 * 1024)

struct commit {
    struct engine *eng;
    struct commit_op *head, **tail;
    bool closing; /* commit_shutdown: every batch synced by its own commit */
    struct commit_counts counts;
    /* committed durable batches waiting for the sync, in order */
    struct commit_op *wait_head, **wait_tail;
    unsigned long long seq; /* the last durable batch committed */
    struct commit_syncer sy;
    struct loop_timer *derived; /* the next store_derived_update, armed by a commit */
    int bench_fd;               /* ENGINE_BENCH_NO_RECORD's log, else -1 */
    off_t bench_at;             /* where its next entries go */
    char bench_entries[COMMIT_BENCH_ENTRY * 16]; /* what a pwrite of up to 16 of them writes */
};

/* How long the search index may trail the record, and the most of the record's entries (two
 * an action) and of their stored observations one update takes before the loop takes its
 * next turn (a MiB of output: tens of milliseconds). */
#define COMMIT_DERIVED_MS 200
#define COMMIT_DERIVED_ENTRIES 1024
#define COMMIT_DERIVED_BYTES (1024 * 1024)

static void commit_on_derived(void *ud)
{
    struct commit *c = ud;
    c->derived = NULL;
    /* A failure (a full disk) is tried again after the next commit; a search says it. */
    char *err = NULL;
    int more =
        store_derived_update(c->eng->store, COMMIT_DERIVED_ENTRIES, COMMIT_DERIVED_BYTES, &err);
    free(err);
    if (more > 0)
        c->derived = loop_timer_add(c->eng->loop, 0, commit_on_derived, c);
}

static void commit_derived_soon(struct commit *c)
{
    if (!c->derived)
        c->derived = loop_timer_add(c->eng->loop, COMMIT_DERIVED_MS, commit_on_derived, c);
}

static void *commit_syncer_main(void *ud)
{
    struct commit_syncer *sy = ud;
    pthread_mutex_lock(&sy->mu);
    for (;;) {
        while (!sy->stop && sy->want == sy->started)
            pthread_cond_wait(&sy->cv, &sy->mu);
        if (sy->want == sy->started)
            break; /* stopping, nothing asked */
        unsigned long long target = sy->want;
        sy->started = target;
        pthread_mutex_unlock(&sy->mu);
        int rc = fdatasync(sy->wal_fd);
        int e = rc < 0 ? errno : 0;
        pthread_mutex_lock(&sy->mu);
        sy->synced = target;
        if (e && !sy->error)
            sy->error = e;
        uint64_t one = 1;
        if (write(sy->efd, &one, sizeof(one)) < 0) {
            /* The counter cannot overflow at one a sync; nothing to do but go on. */
        }
    }
    pthread_mutex_unlock(&sy->mu);
    return NULL;
}

/* Runs the continuations of ops (a list), each with its rc/err, then frees them. */
static void commit_ops_done(struct commit_op *ops)
{
    while (ops) {
        struct commit_op *op = ops;
        ops = op->next;
        op->done(op->rc, op->err, op->ud);
        free(op);
    }
}

/* The waiting batches up to synced are on disk (or failed with error): their continuations. */
static void commit_release(struct commit *c, unsigned long long synced, int error)
{
    struct commit_op *ready = NULL, **rt = &ready;
    while (c->wait_head && c->wait_head->seq <= synced) {
        struct commit_op *op = c->wait_head;
        c->wait_head = op->next;
        op->next = NULL;
        if (error && op->rc == 0) {
            op->rc = -1;
            op->err =
                util_strdupf("store: the record could not be synced to disk: %s", strerror(error));
        }
        *rt = op;
        rt = &op->next;
    }
    if (!c->wait_head)
        c->wait_tail = &c->wait_head;
    commit_ops_done(ready);
}

static void commit_on_synced(int fd, uint32_t events, void *ud)
{
    struct commit *c = ud;
    (void)events;
    uint64_t n;
    if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
        return;
    pthread_mutex_lock(&c->sy.mu);
    unsigned long long synced = c->sy.synced;
    int error = c->sy.error;
    pthread_mutex_unlock(&c->sy.mu);
    commit_release(c, synced, error);
    /* The durable writes that gathered meanwhile go at the end of this turn (the flush). */
}

/* The syncer, started with the first durable batch (the log exists once anything was
 * written). False when it cannot run: batches are then synced by their own commit. */
static bool commit_syncer_ready(struct commit *c)
{
    struct commit_syncer *sy = &c->sy;
    if (sy->running)
        return !sy->error;
    if (sy->wal_fd == -2)
        return false; /* tried and failed */
    sy->wal_fd =
        c->bench_fd >= 0 ? fcntl(c->bench_fd, F_DUPFD_CLOEXEC, 0) : store_wal_open(c->eng->store);
    sy->efd = sy->wal_fd < 0 ? -1 : eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (sy->efd >= 0 && loop_add_fd(c->eng->loop, sy->efd, EPOLLIN, commit_on_synced, c) == 0) {
        /* Every signal blocked in the syncer (it inherits the mask): the engine takes its
         * signals on the loop (signalfd), and a SIGTERM must not land in this thread. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        int rc = pthread_create(&sy->thread, NULL, commit_syncer_main, sy);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (rc == 0) {
            sy->running = true;
            return true;
        }
        loop_del_fd(c->eng->loop, sy->efd);
    }
    if (sy->efd >= 0)
        close(sy->efd);
    if (sy->wal_fd >= 0)
        close(sy->wal_fd);
    sy->efd = -1;
    sy->wal_fd = -2;
    return false;
}

static void commit_syncer_stop(struct commit *c)
{
    struct commit_syncer *sy = &c->sy;
    if (!sy->running)
        return;
    pthread_mutex_lock(&sy->mu);
    sy->stop = true;
    pthread_cond_signal(&sy->cv);
    pthread_mutex_unlock(&sy->mu);
    pthread_join(sy->thread, NULL);
    sy->running = false;
    loop_del_fd(c->eng->loop, sy->efd);
    close(sy->efd);
    /* What still waits: synced here, at once. */
    int e = c->wait_head && fdatasync(sy->wal_fd) < 0 ? errno : sy->error;
    close(sy->wal_fd);
    sy->wal_fd = sy->efd = -1;
    commit_release(c, c->seq, e);
}

static char *commit_bench_path(const struct engine *eng)
{
    return util_strdupf("%s/bench-record.log", eng->state_dir);
}

/* ENGINE_BENCH_NO_RECORD's log, <state>/bench-record.log: its ring written in zeros once, so
 * that its syncs are over blocks the file already has. The fd, or -1 (errno set; no file
 * left). */
static int commit_bench_open(struct engine *eng)
{
    char *path = commit_bench_path(eng);
    if (!path) {
        errno = ENOMEM;
        return -1;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    static const char zeros[64 * 1024];
    int e = fd < 0 ? errno : 0;
    for (off_t at = 0; !e && at < COMMIT_BENCH_RING; at += (off_t)sizeof(zeros)) {
        ssize_t w = pwrite(fd, zeros, sizeof(zeros), at);
        if (w != (ssize_t)sizeof(zeros))
            e = w < 0 ? errno : ENOSPC; /* a short write: the disk is full */
    }
    if (!e && fdatasync(fd) < 0)
        e = errno;
    if (e && fd >= 0) {
        close(fd);
        unlink(path);
    }
    free(path);
    errno = e;
    return e ? -1 : fd;
}

/* The batch's n entries into the bench log: 0, or -1 with *err (malloc'd). */
static int commit_bench_append(struct commit *c, unsigned long long n, char **err)
{
    while (n > 0) {
        size_t k = n > 16 ? 16 : (size_t)n;
        size_t len = k * COMMIT_BENCH_ENTRY;
        if (c->bench_at + (off_t)len > COMMIT_BENCH_RING)
            c->bench_at = 0;
        ssize_t w = pwrite(c->bench_fd, c->bench_entries, len, c->bench_at);
        if (w != (ssize_t)len) {
            *err = util_strdupf("store: the bench log: %s", w < 0 ? strerror(errno) : "disk full");
            return -1;
        }
        c->bench_at += (off_t)len;
        n -= k;
    }
    return 0;
}

bool commit_records(const struct engine *eng)
{
    return !(eng->bench_off & ENGINE_BENCH_NO_RECORD);
}

/* The bench log closed and removed (nothing when there is none). */
static void commit_bench_close(struct commit *c)
{
    if (c->bench_fd < 0)
        return;
    close(c->bench_fd);
    c->bench_fd = -1;
    char *path = commit_bench_path(c->eng);
    if (path)
        unlink(path);
    free(path);
}

static bool commit_on_flush(void *ud)
{
    return commit_flush(ud);
}

int commit_init(struct engine *eng, char **err)
{
    struct commit *c = calloc(1, sizeof(*c));
    if (!c) {
        *err = strdup("out of memory");
        return -1;
    }
    c->eng = eng;
    c->tail = &c->head;
    c->wait_tail = &c->wait_head;
    c->sy.wal_fd = c->sy.efd = -1;
    c->bench_fd = -1;
    if (!commit_records(eng)) {
        if ((c->bench_fd = commit_bench_open(eng)) < 0) {
            *err = util_strdupf("PADDOCK_UNSAFE_BENCH=record: cannot make %s/bench-record.log: %s",
                                eng->state_dir, strerror(errno));
            free(c);
            return -1;
        }
        memset(c->bench_entries, 'e', sizeof(c->bench_entries));
    }
    if (loop_add_flush(eng->loop, commit_on_flush, eng) < 0) {
        commit_bench_close(c);
        free(c);
        *err = strdup("out of memory");
        return -1;
    }
    pthread_mutex_init(&c->sy.mu, NULL);
    pthread_cond_init(&c->sy.cv, NULL);
    eng->commit = c;
    commit_derived_soon(c); /* what a crash left behind the record */
    return 0;
}

void commit_shutdown(struct engine *eng)
{
    struct commit *c = eng->commit;
    if (!c)
        return;
    c->closing = true;
    while (commit_flush(eng))
        ;
    commit_syncer_stop(c);
    while (commit_flush(eng)) /* what the last continuations queued */
        ;
    commit_bench_close(c);
    if (c->derived)
        loop_timer_cancel(eng->loop, c->derived);
    store_derived_update(eng->store, 0, 0, NULL); /* a clean stop leaves it all up to date */
    pthread_mutex_destroy(&c->sy.mu);
    pthread_cond_destroy(&c->sy.cv);
    free(c);
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
    op->durable = durable;
    *c->tail = op;
    c->tail = &op->next;
}

/* What this flush takes from the queue: all of it; but while a sync is under way, only the
 * writes that need none. The durable ones gather meanwhile and go in one commit when the sync
 * ends: they could not be told before the sync after it anyway, and one commit costs less than
 * several. Each class keeps its order; an intent never waits on a durable write queued before
 * it (an action's end is queued only after its intent was written). *durable: some write taken
 * asked for a synced commit. */
static struct commit_op *commit_take(struct commit *c, bool *durable)
{
    bool syncing = c->wait_head && !c->closing;
    struct commit_op *taken = NULL, **tt = &taken, *kept = NULL, **kt = &kept;
    *durable = false;
    for (struct commit_op *op = c->head, *next; op; op = next) {
        next = op->next;
        op->next = NULL;
        if (syncing && op->durable) {
            *kt = op;
            kt = &op->next;
        } else {
            *durable |= op->durable;
            *tt = op;
            tt = &op->next;
        }
    }
    c->head = kept;
    c->tail = kept ? kt : &c->head;
    return taken;
}

/* The queued writes ops in one transaction: bare, then (when one failed) again with a
 * savepoint each. Sets each op's rc/err; 0, or -1 with *err when the commit failed. */
static int commit_write(struct engine *eng, struct commit_op *ops, bool synced_here,
                        unsigned long long *n, char **err)
{
    struct commit *c = eng->commit;
    if (c->bench_fd >= 0) {
        /* No transaction: the writes leave the store alone (commit_records). */
        for (struct commit_op *op = ops; op; op = op->next, (*n)++)
            op->rc = op->write(eng->store, op->ud, &op->err);
        if (commit_bench_append(c, *n, err) < 0)
            return -1;
        if (synced_here && fdatasync(c->bench_fd) < 0) {
            *err = util_strdupf("store: the bench log: %s", strerror(errno));
            return -1;
        }
        return 0;
    }
    bool failed = false;
    int rc = store_batch_begin(eng->store, synced_here, false, err);
    for (struct commit_op *op = ops; op; op = op->next, (*n)++) {
        op->rc = rc < 0 ? -1 : op->write(eng->store, op->ud, &op->err);
        failed |= rc == 0 && op->rc < 0;
    }
    if (rc == 0)
        rc = store_batch_commit(eng->store, err);
    if (!failed)
        return rc;
    free(*err);
    *err = NULL;
    rc = store_batch_begin(eng->store, synced_here, true, err);
    for (struct commit_op *op = ops; op; op = op->next) {
        free(op->err);
        op->err = NULL;
        op->rc = rc < 0 ? -1 : op->write(eng->store, op->ud, &op->err);
    }
    if (rc == 0)
        rc = store_batch_commit(eng->store, err);
    return rc;
}

bool commit_flush(struct engine *eng)
{
    struct commit *c = eng->commit;
    if (!c || !c->head)
        return false;
    /* Taken before the writes: a continuation that queues again starts the next batch. */
    bool durable;
    struct commit_op *ops = commit_take(c, &durable);
    if (!ops)
        return false; /* durable writes wait for the sync under way to end */
    bool later = durable && !c->closing && commit_syncer_ready(c);
    char *err = NULL;
    unsigned long long n = 0;
    int rc = commit_write(eng, ops, durable && !later, &n, &err);
    c->counts.commits++;
    c->counts.writes += n;
    commit_derived_soon(c);
    if (n > c->counts.largest)
        c->counts.largest = n;
    for (struct commit_op *op = ops; op; op = op->next) {
        if (rc < 0 && op->rc == 0) {
            /* Written, then lost with the batch: the commit's error is the write's. */
            op->rc = -1;
            op->err = err ? strdup(err) : NULL;
        } else if (rc < 0 && !op->err && err) {
            op->err = strdup(err);
        }
    }
    free(err);
    if (!later || rc < 0) {
        commit_ops_done(ops);
        return true;
    }
    /* On disk once the syncer's next sync returns: the continuations wait for it. */
    c->seq++;
    for (struct commit_op *op = ops; op; op = op->next)
        op->seq = c->seq;
    *c->wait_tail = ops;
    while (*c->wait_tail)
        c->wait_tail = &(*c->wait_tail)->next;
    pthread_mutex_lock(&c->sy.mu);
    c->sy.want = c->seq;
    pthread_cond_signal(&c->sy.cv);
    pthread_mutex_unlock(&c->sy.mu);
    return true;
}

void commit_counts(const struct engine *eng, struct commit_counts *out)
{
    memset(out, 0, sizeof(*out));
    if (eng->commit)
        *out = eng->commit->counts;
}
