/* Writing a zip archive as a stream: each entry's bytes go to the sink as they are
 * compressed, with a data descriptor after them (general purpose flag bit 3), so nothing but
 * the central directory's entry list is held in memory and the output needs no seeking.
 * Files are deflated (zlib); directories are stored entries whose names end in '/'. Entries,
 * offsets and sizes beyond the 32-bit fields get Zip64 records (APPNOTE 4.5.3). */
#ifndef PADDOCK_EXECUTOR_ZIP_WRITE_H
#define PADDOCK_EXECUTOR_ZIP_WRITE_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Writes all n bytes, or returns -1 with errno set. */
typedef int (*zip_sink_fn)(void *ctx, const void *data, size_t n);

struct zip_writer;

/* level: zlib's 0-9, or -1 for its default (as Python's zipfile). NULL when out of memory. */
struct zip_writer *zip_writer_new(zip_sink_fn sink, void *ctx, int level);
/* name: relative, '/'-separated; a directory's name ends in '/'. mode: st_mode (type and
 * permission bits, recorded as Unix external attributes). All return 0, or -1 with errno. */
int zip_writer_add_dir(struct zip_writer *zw, const char *name, time_t mtime, mode_t mode);
/* The file's bytes are read from fd, at most max_size of them (the size stat reported when
 * the entry was chosen), so a file that grows meanwhile still gets a consistent entry. */
int zip_writer_add_file(struct zip_writer *zw, const char *name, int fd, uint64_t max_size,
                        time_t mtime, mode_t mode);
/* Writes the central directory and the end records. */
int zip_writer_finish(struct zip_writer *zw);
void zip_writer_free(struct zip_writer *zw);
/* Files of at least this size get Zip64 local headers (default: a margin below 4 GiB, so
 * deflate's worst-case growth still fits). For tests. */
void zip_writer_set_zip64_threshold(struct zip_writer *zw, uint64_t bytes);

#endif
