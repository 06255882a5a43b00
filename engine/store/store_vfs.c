/* The store's files through SQLite's own VFS, with one change: the write-ahead log's frames of
 * a commit go to the file in one write.
 *
 * SQLite writes each frame of the log as two writes, its 24-byte header and then its page, at
 * offsets that are not page-aligned: about twenty pwrite calls a commit on the action path,
 * each locking the inode and mapping the blocks of the two or three pages it touches. Here the
 * log's writes that follow one another are gathered in memory and written together when the
 * commit's last frame (its header carries the database's size; every other frame's carries
 * zero) has been given, inside that same write call: a failure (a full disk) is that write's,
 * and SQLite rolls the commit back as before. Anything else on the log (a read, a sync, a
 * size, a truncation, a write elsewhere, closing it) writes what is gathered first, and so
 * does the barrier SQLite passes before it publishes a commit to readers, so nobody (this
 * connection or another process) reads a frame the file does not hold yet. Every other file
 * and call goes straight to SQLite's default VFS. */
#include "engine/store/store_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define VFS_NAME "paddock-store"
/* The most gathered before it is written anyway (a transaction larger than the page cache
 * spills frames before its commit). The Unix VFS writes less than 128 KiB a call: it masks a
 * write's length to 17 bits, so a longer one would come back short, as from a full disk. */
#define VFS_GATHER_MAX (64 * 1024)
#define WAL_FRAME_HEADER 24

struct vfs_file {
    sqlite3_file base;
    sqlite3_file *real; /* the default VFS's file, in the same allocation */
    const char *name;
    bool is_wal;
    struct vfs_file *wal; /* a main database: its log, while open */
    struct vfs_file *db;  /* a log: its database */
    struct vfs_file *next_db;
    /* a log: bytes [at, at + len) not written yet */
    unsigned char *buf;
    size_t len, cap;
    sqlite3_int64 at;
    bool commit_data_next; /* the last write was a commit frame's header */
};

static sqlite3_vfs vfs;
static sqlite3_vfs *real_vfs;
static pthread_mutex_t open_mu = PTHREAD_MUTEX_INITIALIZER;
static struct vfs_file *open_dbs; /* main databases, to find a log's */

static sqlite3_file *R(sqlite3_file *f)
{
    return ((struct vfs_file *)f)->real;
}

static int gather_flush(struct vfs_file *f)
{
    if (!f->len)
        return SQLITE_OK;
    int rc = f->real->pMethods->xWrite(f->real, f->buf, (int)f->len, f->at);
    f->len = 0;
    return rc;
}

static int f_close(sqlite3_file *file)
{
    struct vfs_file *f = (struct vfs_file *)file;
    int frc = f->is_wal ? gather_flush(f) : SQLITE_OK;
    pthread_mutex_lock(&open_mu);
    if (f->is_wal && f->db)
        f->db->wal = NULL;
    for (struct vfs_file **p = &open_dbs; *p; p = &(*p)->next_db)
        if (*p == f) {
            *p = f->next_db;
            break;
        }
    if (f->wal)
        f->wal->db = NULL;
    pthread_mutex_unlock(&open_mu);
    free(f->buf);
    int rc = f->real->pMethods->xClose(f->real);
    return frc != SQLITE_OK ? frc : rc;
}

static int f_read(sqlite3_file *file, void *p, int amt, sqlite3_int64 off)
{
    struct vfs_file *f = (struct vfs_file *)file;
    int rc = f->is_wal ? gather_flush(f) : SQLITE_OK;
    return rc != SQLITE_OK ? rc : f->real->pMethods->xRead(f->real, p, amt, off);
}

static int gather_append(struct vfs_file *f, const void *p, int amt, sqlite3_int64 off)
{
    if (f->len && off != f->at + (sqlite3_int64)f->len) {
        int rc = gather_flush(f);
        if (rc != SQLITE_OK)
            return rc;
    }
    if (f->len + (size_t)amt > VFS_GATHER_MAX) {
        int rc = gather_flush(f);
        if (rc != SQLITE_OK)
            return rc;
        if ((size_t)amt > VFS_GATHER_MAX)
            return f->real->pMethods->xWrite(f->real, p, amt, off);
    }
    if (f->len + (size_t)amt > f->cap) {
        size_t cap = f->cap ? f->cap : VFS_GATHER_MAX;
        while (cap < f->len + (size_t)amt)
            cap *= 2;
        unsigned char *nb = realloc(f->buf, cap);
        if (!nb) {
            int rc = gather_flush(f);
            return rc != SQLITE_OK ? rc : f->real->pMethods->xWrite(f->real, p, amt, off);
        }
        f->buf = nb;
        f->cap = cap;
    }
    if (!f->len)
        f->at = off;
    memcpy(f->buf + f->len, p, (size_t)amt);
    f->len += (size_t)amt;
    return SQLITE_OK;
}

static int f_write(sqlite3_file *file, const void *p, int amt, sqlite3_int64 off)
{
    struct vfs_file *f = (struct vfs_file *)file;
    if (!f->is_wal)
        return f->real->pMethods->xWrite(f->real, p, amt, off);
    bool commit_data = f->commit_data_next && amt != WAL_FRAME_HEADER;
    const unsigned char *h = p;
    /* A frame's header: bytes 4-7 are the database's size after a commit, 0 on other frames. */
    f->commit_data_next = amt == WAL_FRAME_HEADER && (h[4] | h[5] | h[6] | h[7]) != 0;
    int rc = gather_append(f, p, amt, off);
    if (rc == SQLITE_OK && commit_data)
        rc = gather_flush(f);
    return rc;
}

static int f_truncate(sqlite3_file *file, sqlite3_int64 size)
{
    struct vfs_file *f = (struct vfs_file *)file;
    int rc = f->is_wal ? gather_flush(f) : SQLITE_OK;
    return rc != SQLITE_OK ? rc : f->real->pMethods->xTruncate(f->real, size);
}

static int f_sync(sqlite3_file *file, int flags)
{
    struct vfs_file *f = (struct vfs_file *)file;
    int rc = f->is_wal ? gather_flush(f) : SQLITE_OK;
    return rc != SQLITE_OK ? rc : f->real->pMethods->xSync(f->real, flags);
}

static int f_size(sqlite3_file *file, sqlite3_int64 *size)
{
    struct vfs_file *f = (struct vfs_file *)file;
    int rc = f->is_wal ? gather_flush(f) : SQLITE_OK;
    return rc != SQLITE_OK ? rc : f->real->pMethods->xFileSize(f->real, size);
}

static int f_lock(sqlite3_file *file, int level)
{
    return R(file)->pMethods->xLock(R(file), level);
}

static int f_unlock(sqlite3_file *file, int level)
{
    return R(file)->pMethods->xUnlock(R(file), level);
}

static int f_reserved(sqlite3_file *file, int *out)
{
    return R(file)->pMethods->xCheckReservedLock(R(file), out);
}

static int f_control(sqlite3_file *file, int op, void *arg)
{
    struct vfs_file *f = (struct vfs_file *)file;
    int rc = f->is_wal ? gather_flush(f) : SQLITE_OK;
    return rc != SQLITE_OK ? rc : f->real->pMethods->xFileControl(f->real, op, arg);
}

static int f_sector(sqlite3_file *file)
{
    return R(file)->pMethods->xSectorSize(R(file));
}

static int f_device(sqlite3_file *file)
{
    return R(file)->pMethods->xDeviceCharacteristics(R(file));
}

static int f_shm_map(sqlite3_file *file, int region, int size, int extend, void volatile **pp)
{
    return R(file)->pMethods->xShmMap(R(file), region, size, extend, pp);
}

static int f_shm_lock(sqlite3_file *file, int offset, int n, int flags)
{
    return R(file)->pMethods->xShmLock(R(file), offset, n, flags);
}

static void f_shm_barrier(sqlite3_file *file)
{
    struct vfs_file *f = (struct vfs_file *)file;
    /* Before a commit is published: its frames are in the file (already, after its last
     * frame's write; this is the guard). A failure here has no caller to tell, and the same
     * write failed at that last frame's, which SQLite saw. */
    if (f->wal)
        gather_flush(f->wal);
    f->real->pMethods->xShmBarrier(f->real);
}

static int f_shm_unmap(sqlite3_file *file, int del)
{
    return R(file)->pMethods->xShmUnmap(R(file), del);
}

static int f_fetch(sqlite3_file *file, sqlite3_int64 off, int amt, void **pp)
{
    struct vfs_file *f = (struct vfs_file *)file;
    if (f->is_wal)
        gather_flush(f);
    return f->real->pMethods->xFetch(f->real, off, amt, pp);
}

static int f_unfetch(sqlite3_file *file, sqlite3_int64 off, void *p)
{
    return R(file)->pMethods->xUnfetch(R(file), off, p);
}

static const sqlite3_io_methods methods = {
    .iVersion = 3,
    .xClose = f_close,
    .xRead = f_read,
    .xWrite = f_write,
    .xTruncate = f_truncate,
    .xSync = f_sync,
    .xFileSize = f_size,
    .xLock = f_lock,
    .xUnlock = f_unlock,
    .xCheckReservedLock = f_reserved,
    .xFileControl = f_control,
    .xSectorSize = f_sector,
    .xDeviceCharacteristics = f_device,
    .xShmMap = f_shm_map,
    .xShmLock = f_shm_lock,
    .xShmBarrier = f_shm_barrier,
    .xShmUnmap = f_shm_unmap,
    .xFetch = f_fetch,
    .xUnfetch = f_unfetch,
};

static int v_open(sqlite3_vfs *v, const char *name, sqlite3_file *file, int flags, int *out)
{
    (void)v;
    struct vfs_file *f = (struct vfs_file *)file;
    memset(f, 0, sizeof(*f));
    f->real = (sqlite3_file *)(f + 1);
    int rc = real_vfs->xOpen(real_vfs, name, f->real, flags, out);
    if (rc != SQLITE_OK || !f->real->pMethods) {
        f->base.pMethods = NULL;
        return rc;
    }
    /* The methods here are version 3, each calling its counterpart: the default VFS's must
     * be as new (Unix's are; only a main database's have the shared-memory ones, and only a
     * main database's are called). */
    if (f->real->pMethods->iVersion < 3) {
        f->real->pMethods->xClose(f->real);
        f->base.pMethods = NULL;
        return SQLITE_CANTOPEN;
    }
    f->name = name;
    f->base.pMethods = &methods;
    pthread_mutex_lock(&open_mu);
    if (flags & SQLITE_OPEN_MAIN_DB) {
        f->next_db = open_dbs;
        open_dbs = f;
    } else if ((flags & SQLITE_OPEN_WAL) && name) {
        f->is_wal = true;
        size_t n = strlen(name);
        for (struct vfs_file *d = open_dbs; d; d = d->next_db)
            if (d->name && !d->wal && strlen(d->name) + 4 == n &&
                memcmp(d->name, name, n - 4) == 0 && strcmp(name + n - 4, "-wal") == 0) {
                d->wal = f;
                f->db = d;
                break;
            }
    }
    pthread_mutex_unlock(&open_mu);
    return SQLITE_OK;
}

static int v_delete(sqlite3_vfs *v, const char *name, int sync)
{
    (void)v;
    return real_vfs->xDelete(real_vfs, name, sync);
}

static int v_access(sqlite3_vfs *v, const char *name, int flags, int *out)
{
    (void)v;
    return real_vfs->xAccess(real_vfs, name, flags, out);
}

static int v_full(sqlite3_vfs *v, const char *name, int n, char *out)
{
    (void)v;
    return real_vfs->xFullPathname(real_vfs, name, n, out);
}

static void *v_dlopen(sqlite3_vfs *v, const char *name)
{
    (void)v;
    return real_vfs->xDlOpen(real_vfs, name);
}

static void v_dlerror(sqlite3_vfs *v, int n, char *out)
{
    (void)v;
    real_vfs->xDlError(real_vfs, n, out);
}

static void (*v_dlsym(sqlite3_vfs *v, void *h, const char *sym))(void)
{
    (void)v;
    return real_vfs->xDlSym(real_vfs, h, sym);
}

static void v_dlclose(sqlite3_vfs *v, void *h)
{
    (void)v;
    real_vfs->xDlClose(real_vfs, h);
}

static int v_random(sqlite3_vfs *v, int n, char *out)
{
    (void)v;
    return real_vfs->xRandomness(real_vfs, n, out);
}

static int v_sleep(sqlite3_vfs *v, int us)
{
    (void)v;
    return real_vfs->xSleep(real_vfs, us);
}

static int v_time(sqlite3_vfs *v, double *out)
{
    (void)v;
    return real_vfs->xCurrentTime(real_vfs, out);
}

static int v_error(sqlite3_vfs *v, int n, char *out)
{
    (void)v;
    return real_vfs->xGetLastError(real_vfs, n, out);
}

static int v_time64(sqlite3_vfs *v, sqlite3_int64 *out)
{
    (void)v;
    return real_vfs->xCurrentTimeInt64(real_vfs, out);
}

static pthread_once_t vfs_once = PTHREAD_ONCE_INIT;
static bool vfs_ready;

static void vfs_register(void)
{
    real_vfs = sqlite3_vfs_find(NULL);
    if (!real_vfs || real_vfs->iVersion < 2)
        return;
    vfs = (sqlite3_vfs){
        .iVersion = 2,
        .szOsFile = (int)sizeof(struct vfs_file) + real_vfs->szOsFile,
        .mxPathname = real_vfs->mxPathname,
        .zName = VFS_NAME,
        .xOpen = v_open,
        .xDelete = v_delete,
        .xAccess = v_access,
        .xFullPathname = v_full,
        .xDlOpen = v_dlopen,
        .xDlError = v_dlerror,
        .xDlSym = v_dlsym,
        .xDlClose = v_dlclose,
        .xRandomness = v_random,
        .xSleep = v_sleep,
        .xCurrentTime = v_time,
        .xGetLastError = v_error,
        .xCurrentTimeInt64 = v_time64,
    };
    vfs_ready = sqlite3_vfs_register(&vfs, 0) == SQLITE_OK;
}

const char *store_vfs_name(void)
{
    pthread_once(&vfs_once, vfs_register);
    return vfs_ready ? VFS_NAME : NULL;
}
