/* Finds the shell's end-of-command markers in the pty byte stream.
 *
 * After every command the shell prints BEGIN body END, where BEGIN and END carry a random
 * per-process nonce and body is "exit_code;last_bg_pid;uid;stdin_is_tty;shell_pid;" then
 * hostname, PATH and cwd separated by 0x1f (the three texts the agent controls; ';' is common
 * in them, 0x1f is not).
 * Everything else is command output. Markers may arrive split across reads in any place; bytes that
 * might be the start of a marker are held back until the next read decides. */
#ifndef PADDOCK_EXECUTOR_MARKER_H
#define PADDOCK_EXECUTOR_MARKER_H

#include <stdbool.h>
#include <stddef.h>

#include "common/buf.h"

#define MARKER_TAG_MAX 64
/* A body longer than this is not a marker. Generous: the agent may set a long PATH. */
#define MARKER_BODY_MAX (1024 * 1024)
#define MARKER_SEP '\037'
/* Longer texts are cut to these (a cut PATH only shortens the python search). */
#define MARKER_HOST_MAX 256
#define MARKER_PATH_MAX 16384
#define MARKER_CWD_MAX 16384

struct marker_info {
    int exit_code;
    long pid; /* $! or -1 when no job was ever put in the background */
    long uid;
    bool stdin_tty; /* the shell still reads the terminal (not after exec 0<&-) */
    long shell_pid; /* $$ of the shell that printed it (a nested shell has its own) */
    char hostname[MARKER_HOST_MAX];
    char path[MARKER_PATH_MAX + 1]; /* $PATH: where py_interpreter_path is looked up */
    char cwd[MARKER_CWD_MAX + 1];
};

struct marker_sink {
    void (*output)(void *ctx, const char *data, size_t n);
    void (*found)(void *ctx, const struct marker_info *m);
    void *ctx;
};

struct marker_parser {
    char begin[MARKER_TAG_MAX];
    size_t begin_len;
    char end[MARKER_TAG_MAX];
    size_t end_len;
    bool in_body;
    struct buf pending; /* a possible start of BEGIN, or the body read so far */
    struct marker_info info;
};

/* Returns -1 when a tag is empty or too long. */
int marker_parser_init(struct marker_parser *p, const char *begin, const char *end);
/* Feeds bytes; calls sink->output for output and sink->found for each marker, in stream
 * order. Returns -1 when memory runs out. */
int marker_feed(struct marker_parser *p, const char *data, size_t n,
                const struct marker_sink *sink);
/* End of stream: bytes held back are output after all. */
void marker_flush(struct marker_parser *p, const struct marker_sink *sink);
void marker_parser_free(struct marker_parser *p);

/* *dst = *src, copying only the texts' bytes (the struct is 33 KiB, its texts are short). */
void marker_info_copy(struct marker_info *dst, const struct marker_info *src);

/* Parses "exit;pid;uid;tty;shellpid;host<0x1f>PATH<0x1f>cwd". Returns -1 when malformed. */
int marker_parse_body(const char *body, size_t n, struct marker_info *out);

#endif
