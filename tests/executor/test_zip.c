/* Unit tests of the executor's file-transfer parts: the streaming multipart parser, the zip
 * writer and the zip reader (round trips, archives made by Python's zipfile, and hostile
 * archives: zip-slip, absolute names, symlinks, bombs, lying sizes, symlinks already in the
 * destination). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/buf.h"
#include "multipart.h"
#include "zip_read.h"
#include "zip_write.h"

/* ---- multipart -------------------------------------------------------------------------- */

/* Every event as text: B(name|filename) for a part's begin, its data, E at its end. */
struct events {
    struct buf log;
    int fail_on_begin;
};

static int on_begin(void *ctx, const char *name, const char *filename)
{
    struct events *ev = ctx;
    buf_printf(&ev->log, "B(%s|%s)", name, filename ? filename : "<none>");
    return ev->fail_on_begin;
}

static int on_data(void *ctx, const char *data, size_t n)
{
    struct events *ev = ctx;
    return buf_append(&ev->log, data, n);
}

static int on_end(void *ctx)
{
    struct events *ev = ctx;
    return buf_append_str(&ev->log, "E");
}

/* Feeds body in pieces of at most `step` bytes; returns the feed result. */
static int parse(const char *boundary, const char *body, size_t n, size_t step, struct events *ev,
                 bool *complete, struct buf *err)
{
    struct multipart mp;
    struct multipart_handler h = {on_begin, on_data, on_end, ev};
    multipart_init(&mp, boundary, &h);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i += step)
        rc = multipart_feed(&mp, body + i, n - i < step ? n - i : step, err);
    *complete = multipart_complete(&mp);
    multipart_free(&mp);
    return rc;
}

#define FORM_BODY                                                                                  \
    "preamble to ignore\r\n"                                                                       \
    "--AaB03x\r\n"                                                                                 \
    "Content-Disposition: form-data; name=\"note\"\r\n"                                            \
    "\r\n"                                                                                         \
    "hello\r\n"                                                                                    \
    "--AaB03x  \r\n"                                                                               \
    "content-disposition: form-data; name=\"file\"; filename=\"a \\\"b\\\".txt\"\r\n"              \
    "Content-Type: text/plain\r\n"                                                                 \
    "\r\n"                                                                                         \
    "line1\r\n--AaB03\r\n\r\n--AaB03y\r\r\n-\r\n--\r\n"                                            \
    "--AaB03x--\r\n"                                                                               \
    "epilogue to ignore --AaB03x\r\n"

#define FORM_EVENTS                                                                                \
    "B(note|<none>)helloE"                                                                         \
    "B(file|a \"b\".txt)line1\r\n--AaB03\r\n\r\n--AaB03y\r\r\n-\r\n--E"

static void test_multipart_whole_and_every_split(void **state)
{
    (void)state;
    const char *body = FORM_BODY;
    size_t n = strlen(body);
    for (size_t step = 1; step <= n; step++) {
        struct events ev = {BUF_INIT, 0};
        struct buf err = BUF_INIT;
        bool complete;
        assert_int_equal(parse("AaB03x", body, n, step, &ev, &complete, &err), 0);
        assert_true(complete);
        assert_string_equal(ev.log.data, FORM_EVENTS);
        buf_free(&ev.log);
        buf_free(&err);
    }
}

static void test_multipart_body_starts_with_delimiter_and_binary(void **state)
{
    (void)state;
    /* No preamble, an empty header block, binary content with NUL and CR bytes. */
    static const char body[] = "--b\r\n\r\n\0\r\r\n-\xff\r\n--b--";
    struct events ev = {BUF_INIT, 0};
    struct buf err = BUF_INIT;
    bool complete;
    assert_int_equal(parse("b", body, sizeof body - 1, 3, &ev, &complete, &err), 0);
    assert_true(complete);
    static const char want[] = "B(|<none>)\0\r\r\n-\xff"
                               "E";
    assert_int_equal(ev.log.len, sizeof want - 1);
    assert_memory_equal(ev.log.data, want, sizeof want - 1);
    buf_free(&ev.log);
    buf_free(&err);
}

static void test_multipart_rfc5987_filename(void **state)
{
    (void)state;
    const char *body =
        "--x\r\nContent-Disposition: form-data; name=file; filename=\"fallback.txt\"; "
        "filename*=UTF-8''caf%C3%A9%20menu.txt\r\n\r\nz\r\n--x--\r\n";
    struct events ev = {BUF_INIT, 0};
    struct buf err = BUF_INIT;
    bool complete;
    assert_int_equal(parse("x", body, strlen(body), 7, &ev, &complete, &err), 0);
    assert_string_equal(ev.log.data, "B(file|caf\xc3\xa9 menu.txt)zE");
    buf_free(&ev.log);
    buf_free(&err);
}

static void test_multipart_incomplete_and_malformed(void **state)
{
    (void)state;
    struct events ev = {BUF_INIT, 0};
    struct buf err = BUF_INIT;
    bool complete = true;
    /* Ends inside the data: no error, but not complete. */
    const char *cut = "--x\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nabc\r\n--x";
    assert_int_equal(parse("x", cut, strlen(cut), 4, &ev, &complete, &err), 0);
    assert_false(complete);
    buf_reset(&ev.log);
    /* Garbage after a boundary. */
    const char *bad = "--x\r\n\r\nabc\r\n--xZ\r\n";
    assert_int_equal(parse("x", bad, strlen(bad), 100, &ev, &complete, &err), -1);
    assert_string_equal(err.data, "expected CRLF after a boundary");
    buf_reset(&err);
    /* A header line without a colon. */
    const char *hdr = "--x\r\nno colon here\r\n\r\nabc\r\n--x--";
    assert_int_equal(parse("x", hdr, strlen(hdr), 100, &ev, &complete, &err), -1);
    assert_string_equal(err.data, "malformed part header line");
    buf_reset(&err);
    /* A handler that refuses stops the parser. */
    ev.fail_on_begin = 1;
    const char *ok = "--x\r\n\r\nabc\r\n--x--";
    assert_int_equal(parse("x", ok, strlen(ok), 100, &ev, &complete, &err), -1);
    buf_free(&ev.log);
    buf_free(&err);
}

static void test_multipart_headers_too_long(void **state)
{
    (void)state;
    struct buf body = BUF_INIT, err = BUF_INIT;
    buf_append_str(&body, "--x\r\nX-Long: ");
    for (int i = 0; i < MULTIPART_HEADERS_MAX; i++)
        buf_append_str(&body, "a");
    buf_append_str(&body, "\r\n\r\nabc\r\n--x--");
    struct events ev = {BUF_INIT, 0};
    bool complete;
    assert_int_equal(parse("x", body.data, body.len, 4096, &ev, &complete, &err), -1);
    assert_string_equal(err.data, "part headers longer than 16384 bytes");
    assert_null(ev.log.data);
    buf_free(&body);
    buf_free(&err);
}

static void test_multipart_boundary_parameter(void **state)
{
    (void)state;
    char b[MULTIPART_BOUNDARY_MAX + 1];
    assert_int_equal(multipart_boundary("multipart/form-data; boundary=AaB03x", b, sizeof b), 0);
    assert_string_equal(b, "AaB03x");
    assert_int_equal(
        multipart_boundary("Multipart/Form-Data ; charset=utf-8; BOUNDARY=\"a b:c\"", b, sizeof b),
        0);
    assert_string_equal(b, "a b:c");
    assert_int_equal(multipart_boundary("text/plain; boundary=x", b, sizeof b), -1);
    assert_int_equal(multipart_boundary("multipart/form-data", b, sizeof b), -1);
    assert_int_equal(multipart_boundary("multipart/form-data; boundary=", b, sizeof b), -1);
    assert_int_equal(multipart_boundary("multipart/form-datax; boundary=x", b, sizeof b), -1);
    assert_int_equal(multipart_boundary(NULL, b, sizeof b), -1);
    char longb[128];
    snprintf(longb, sizeof longb, "multipart/form-data; boundary=%071d", 0);
    assert_int_equal(multipart_boundary(longb, b, sizeof b), -1);
    snprintf(longb, sizeof longb, "multipart/form-data; boundary=%070d", 0);
    assert_int_equal(multipart_boundary(longb, b, sizeof b), 0);
    assert_int_equal(strlen(b), 70);
}

/* ---- zip: helpers ----------------------------------------------------------------------- */

static char scratch[64];

static int make_scratch(void **state)
{
    (void)state;
    snprintf(scratch, sizeof scratch, "/tmp/paddock-zip-test.XXXXXX");
    return mkdtemp(scratch) ? 0 : -1;
}

static int remove_scratch(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    return system(cmd) == 0 ? 0 : -1;
}

static char *path_in(const char *rel)
{
    static char p[4][256];
    static int i;
    i = (i + 1) % 4;
    snprintf(p[i], sizeof p[i], "%s/%s", scratch, rel);
    return p[i];
}

/* Runs python3 -c script with args; returns its stdout (caller frees) and exit status. */
static char *python(int *status, const char *script, const char *arg1, const char *arg2)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execlp("python3", "python3", "-c", script, arg1 ? arg1 : "", arg2 ? arg2 : "",
               (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    struct buf out = BUF_INIT;
    char chunk[4096];
    ssize_t n;
    while ((n = read(fds[0], chunk, sizeof chunk)) > 0)
        buf_append(&out, chunk, (size_t)n);
    close(fds[0]);
    int st;
    waitpid(pid, &st, 0);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    buf_append(&out, "", 0);
    return buf_steal(&out);
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct buf b = BUF_INIT;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        buf_append(&b, chunk, n);
    fclose(f);
    buf_append(&b, "", 0);
    if (len)
        *len = b.len;
    return buf_steal(&b);
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static int sink_buf(void *ctx, const void *data, size_t n)
{
    return buf_append(ctx, data, n);
}

static const struct zip_limits big_limits = {1ull << 30, 65536};

/* Extracts the zip file at zip_path into a fresh directory dest (relative to scratch). */
static enum zip_result extract(const char *zip_rel, const char *dest_rel,
                               const struct zip_limits *lim, struct buf *err)
{
    mkdir(path_in(dest_rel), 0755);
    int zfd = open(path_in(zip_rel), O_RDONLY);
    int dfd = open(path_in(dest_rel), O_RDONLY | O_DIRECTORY);
    assert_true(zfd >= 0 && dfd >= 0);
    enum zip_result r = zip_extract(zfd, dfd, lim, err);
    close(zfd);
    close(dfd);
    return r;
}

/* A python script that builds a zip at argv[1] from the statement in argv[2]. */
static const char make_zip_py[] = "import sys, zipfile\n"
                                  "z = zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED)\n"
                                  "exec(sys.argv[2])\n"
                                  "z.close()\n";

static void python_zip(const char *zip_rel, const char *statements)
{
    int st;
    free(python(&st, make_zip_py, path_in(zip_rel), statements));
    assert_int_equal(st, 0);
}

/* ---- zip: writer ------------------------------------------------------------------------ */

/* Writes a.txt, an empty file, 300 KB of incompressible bytes and a directory. */
static void write_sample(struct buf *out, uint64_t zip64_threshold)
{
    write_file(path_in("a.txt"), "hello zip\n", 10);
    write_file(path_in("empty"), "", 0);
    char *rnd = malloc(300000);
    uint32_t x = 12345;
    for (size_t i = 0; i < 300000; i++) {
        x = x * 1103515245u + 12345u;
        rnd[i] = (char)(x >> 16);
    }
    write_file(path_in("rnd.bin"), rnd, 300000);
    free(rnd);
    struct zip_writer *zw = zip_writer_new(sink_buf, out, -1);
    assert_non_null(zw);
    if (zip64_threshold)
        zip_writer_set_zip64_threshold(zw, zip64_threshold);
    assert_int_equal(zip_writer_add_dir(zw, "sub/", 1700000000, S_IFDIR | 0755), 0);
    const char *files[][2] = {{"a.txt", "sub/a.txt"}, {"empty", "empty"}, {"rnd.bin", "rnd.bin"}};
    for (size_t i = 0; i < 3; i++) {
        int fd = open(path_in(files[i][0]), O_RDONLY);
        struct stat st;
        fstat(fd, &st);
        assert_int_equal(
            zip_writer_add_file(zw, files[i][1], fd, (uint64_t)st.st_size, st.st_mtime, st.st_mode),
            0);
        close(fd);
    }
    assert_int_equal(zip_writer_finish(zw), 0);
    zip_writer_free(zw);
}

/* Python lists every entry (name, size, sha of the content, mode) and runs testzip(). */
static const char list_zip_py[] =
    "import sys, zipfile, hashlib\n"
    "z = zipfile.ZipFile(sys.argv[1])\n"
    "assert z.testzip() is None\n"
    "for i in z.infolist():\n"
    "    print(i.filename, i.file_size, i.compress_type,\n"
    "          hashlib.sha256(z.read(i)).hexdigest()[:12], oct(i.external_attr >> 16))\n";

static void check_sample_with_python(const char *zip_rel)
{
    int st;
    char *out = python(&st, list_zip_py, path_in(zip_rel), NULL);
    assert_int_equal(st, 0);
    char *want =
        python(&st,
               "import hashlib\n"
               "d = open('/dev/stdin','rb') if False else None\n"
               "print('sub/ 0 0', hashlib.sha256(b'').hexdigest()[:12], '0o40755')\n"
               "print('sub/a.txt 10 8', hashlib.sha256(b'hello zip\\n').hexdigest()[:12], "
               "'0o100644')\n"
               "print('empty 0 8', hashlib.sha256(b'').hexdigest()[:12], '0o100644')\n"
               "x = 12345; b = bytearray()\n"
               "for i in range(300000):\n"
               "    x = (x * 1103515245 + 12345) & 0xffffffff; b.append((x >> 16) & 0xff)\n"
               "print('rnd.bin 300000 8', hashlib.sha256(bytes(b)).hexdigest()[:12], "
               "'0o100644')\n",
               NULL, NULL);
    assert_int_equal(st, 0);
    assert_string_equal(out, want);
    free(out);
    free(want);
}

static void test_zip_write_read_by_python(void **state)
{
    (void)state;
    umask(022);
    struct buf z = BUF_INIT;
    write_sample(&z, 0);
    write_file(path_in("out.zip"), z.data, z.len);
    check_sample_with_python("out.zip");
    buf_free(&z);
}

static void test_zip_write_zip64_read_by_python_and_us(void **state)
{
    (void)state;
    umask(022);
    struct buf z = BUF_INIT;
    write_sample(&z, 1); /* every file gets Zip64 local headers and descriptors */
    write_file(path_in("out64.zip"), z.data, z.len);
    check_sample_with_python("out64.zip");
    struct buf err = BUF_INIT;
    assert_int_equal(extract("out64.zip", "x64", &big_limits, &err), ZIP_OK);
    size_t len;
    char *a = read_file(path_in("x64/sub/a.txt"), &len);
    assert_string_equal(a, "hello zip\n");
    free(a);
    char *r = read_file(path_in("x64/rnd.bin"), &len);
    assert_int_equal(len, 300000);
    free(r);
    buf_free(&z);
    buf_free(&err);
}

static void test_zip_round_trip(void **state)
{
    (void)state;
    umask(022);
    struct buf z = BUF_INIT, err = BUF_INIT;
    write_sample(&z, 0);
    write_file(path_in("rt.zip"), z.data, z.len);
    assert_int_equal(extract("rt.zip", "rt", &big_limits, &err), ZIP_OK);
    size_t len, want_len;
    char *a = read_file(path_in("rt/sub/a.txt"), &len);
    assert_string_equal(a, "hello zip\n");
    char *e = read_file(path_in("rt/empty"), &len);
    assert_int_equal(len, 0);
    char *r = read_file(path_in("rt/rnd.bin"), &len);
    char *w = read_file(path_in("rnd.bin"), &want_len);
    assert_int_equal(len, want_len);
    assert_memory_equal(r, w, len);
    struct stat st;
    assert_int_equal(stat(path_in("rt/sub"), &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(stat(path_in("rt/rnd.bin"), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);
    free(a);
    free(e);
    free(r);
    free(w);
    buf_free(&z);
    buf_free(&err);
}

/* ---- zip: reader ------------------------------------------------------------------------ */

static void test_zip_read_python_deflate(void **state)
{
    (void)state;
    python_zip("py.zip",
               "z.writestr('top.txt', 'top ' * 1000)\n"
               "z.writestr('d1/d2/deep.txt', 'deep')\n"
               "z.writestr('d1/', '')\n"
               "z.writestr(zipfile.ZipInfo('stored.txt'), 'plain')\n"
               "i = zipfile.ZipInfo('run.sh'); i.external_attr = 0o100755 << 16\n"
               "i.create_system = 3; z.writestr(i, '#!/bin/sh\\n', zipfile.ZIP_DEFLATED)\n"
               "z.writestr('./dot/./x.txt', 'x')\n");
    struct buf err = BUF_INIT;
    assert_int_equal(extract("py.zip", "py", &big_limits, &err), ZIP_OK);
    size_t len;
    char *top = read_file(path_in("py/top.txt"), &len);
    assert_int_equal(len, 4000);
    assert_memory_equal(top, "top top ", 8);
    char *deep = read_file(path_in("py/d1/d2/deep.txt"), NULL);
    assert_string_equal(deep, "deep");
    char *stored = read_file(path_in("py/stored.txt"), NULL);
    assert_string_equal(stored, "plain");
    char *dot = read_file(path_in("py/dot/x.txt"), NULL);
    assert_string_equal(dot, "x");
    struct stat st;
    assert_int_equal(stat(path_in("py/run.sh"), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0755);
    free(top);
    free(deep);
    free(stored);
    free(dot);
    buf_free(&err);
}

static void expect_refused(const char *zip_rel, const char *dest_rel, const struct zip_limits *lim,
                           const char *message)
{
    struct buf err = BUF_INIT;
    assert_int_equal(extract(zip_rel, dest_rel, lim, &err), ZIP_REFUSED);
    assert_string_equal(err.data, message);
    buf_free(&err);
}

/* Nothing at all was created in dest_rel. */
static void assert_dir_empty(const char *rel)
{
    int st;
    char *out =
        python(&st, "import os, sys; print(sorted(os.listdir(sys.argv[1])))", path_in(rel), NULL);
    assert_string_equal(out, "[]\n");
    free(out);
}

static void test_zip_slip_refused(void **state)
{
    (void)state;
    python_zip("slip.zip",
               "z.writestr('ok.txt', 'fine')\nz.writestr('a/../../escaped.txt', 'x')\n");
    expect_refused("slip.zip", "slip", &big_limits,
                   "Refusing a zip entry with a '..' component: a/../../escaped.txt");
    assert_dir_empty("slip"); /* checked before anything was written */
    assert_int_equal(access(path_in("escaped.txt"), F_OK), -1);
    python_zip("dots.zip", "z.writestr('..', 'x')\n");
    expect_refused("dots.zip", "dots", &big_limits,
                   "Refusing a zip entry with a '..' component: ..");
}

static void test_zip_absolute_refused(void **state)
{
    (void)state;
    char stmt[256];
    snprintf(stmt, sizeof stmt, "i = zipfile.ZipInfo('x'); i.filename = '%s'; z.writestr(i, 'x')\n",
             path_in("abs.txt"));
    python_zip("abs.zip", stmt);
    char want[256];
    snprintf(want, sizeof want, "Refusing a zip entry with an absolute path: %s",
             path_in("abs.txt"));
    expect_refused("abs.zip", "abs", &big_limits, want);
    assert_int_equal(access(path_in("abs.txt"), F_OK), -1);
}

static void test_zip_symlink_entry_refused(void **state)
{
    (void)state;
    python_zip("link.zip", "i = zipfile.ZipInfo('evil'); i.create_system = 3\n"
                           "i.external_attr = 0o120777 << 16; z.writestr(i, '/etc/passwd')\n");
    expect_refused("link.zip", "link", &big_limits,
                   "Refusing a symlink entry in a zip archive: evil");
    assert_dir_empty("link");
}

static void test_zip_bomb_refused(void **state)
{
    (void)state;
    /* 2 MiB of zeros deflate to about 2 KB; the limit is 1 MiB. */
    python_zip("bomb.zip", "z.writestr('zeros', bytes(2 * 1024 * 1024))\n");
    struct zip_limits small = {1024 * 1024, 100};
    expect_refused("bomb.zip", "bomb", &small,
                   "Refusing a zip archive that unpacks to more than 1048576 bytes (zip bomb?)");
    assert_dir_empty("bomb");
    /* Many small entries: the entry limit. */
    python_zip("many.zip", "[z.writestr('f%d' % k, 'x') for k in range(11)]\n");
    struct zip_limits ten = {1ull << 30, 10};
    expect_refused("many.zip", "many", &ten, "Refusing a zip archive with 11 entries (limit 10)");
    assert_dir_empty("many");
    /* Exactly at the limits is fine. */
    struct zip_limits exact = {11, 11};
    struct buf err = BUF_INIT;
    assert_int_equal(extract("many.zip", "many", &exact, &err), ZIP_OK);
    buf_free(&err);
}

/* Python patches the declared uncompressed size (central and local) of the only entry. */
static const char patch_size_py[] =
    "import sys, struct\n"
    "b = bytearray(open(sys.argv[1], 'rb').read())\n"
    "c = b.rfind(b'PK\\x01\\x02'); l = b.find(b'PK\\x03\\x04')\n"
    "v = int(sys.argv[2])\n"
    "b[c+24:c+28] = struct.pack('<I', v); b[l+22:l+26] = struct.pack('<I', v)\n"
    "open(sys.argv[1], 'wb').write(b)\n";

static void test_zip_lying_size_refused(void **state)
{
    (void)state;
    python_zip("lie.zip", "z.writestr('zeros', bytes(100000))\n");
    int st;
    free(python(&st, patch_size_py, path_in("lie.zip"), "1000"));
    assert_int_equal(st, 0);
    expect_refused("lie.zip", "lie", &big_limits,
                   "Refusing a zip entry that unpacks to more than its declared size: zeros");
    /* The half-written file is removed. */
    assert_dir_empty("lie");
}

static void test_zip_crc_mismatch_refused(void **state)
{
    (void)state;
    python_zip("crc.zip", "z.writestr('f', 'content')\n");
    int st;
    free(python(&st,
                "import sys, struct\n"
                "b = bytearray(open(sys.argv[1], 'rb').read())\n"
                "c = b.rfind(b'PK\\x01\\x02')\n"
                "b[c+16:c+20] = struct.pack('<I', 12345)\n"
                "open(sys.argv[1], 'wb').write(b)\n",
                path_in("crc.zip"), NULL));
    assert_int_equal(st, 0);
    expect_refused("crc.zip", "crc", &big_limits, "Damaged zip archive (CRC-32 mismatch): f");
}

static void test_zip_existing_symlinks_not_followed(void **state)
{
    (void)state;
    mkdir(path_in("outside"), 0755);
    mkdir(path_in("dest"), 0755);
    assert_int_equal(symlink(path_in("outside"), path_in("dest/linkdir")), 0);
    assert_int_equal(symlink(path_in("outside/target"), path_in("dest/linkfile")), 0);
    /* Through a symlinked directory: refused. */
    python_zip("through.zip", "z.writestr('linkdir/x.txt', 'x')\n");
    expect_refused("through.zip", "dest", &big_limits,
                   "Refusing to follow a symlink while unpacking: linkdir/x.txt");
    assert_dir_empty("outside");
    /* Onto a symlink: the link is replaced by the file, its target never written. */
    python_zip("onto.zip", "z.writestr('linkfile', 'new')\n");
    struct buf err = BUF_INIT;
    assert_int_equal(extract("onto.zip", "dest", &big_limits, &err), ZIP_OK);
    struct stat st;
    assert_int_equal(lstat(path_in("dest/linkfile"), &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_dir_empty("outside");
    buf_free(&err);
}

static void test_zip_not_a_zip(void **state)
{
    (void)state;
    write_file(path_in("plain.zip"), "this is not a zip archive at all", 32);
    expect_refused("plain.zip", "plain", &big_limits,
                   "Not a zip archive (no end of central directory record)");
    write_file(path_in("tiny.zip"), "PK", 2);
    expect_refused("tiny.zip", "tiny", &big_limits, "Not a zip archive (too short)");
}

static void test_zip_unsupported_method_refused(void **state)
{
    (void)state;
    python_zip("bz.zip", "z.writestr('b.txt', 'data', zipfile.ZIP_BZIP2)\n");
    expect_refused("bz.zip", "bz", &big_limits,
                   "Unsupported compression method 12 in zip entry: b.txt");
}

int main(void)
{
    const struct CMUnitTest multipart_tests[] = {
        cmocka_unit_test(test_multipart_whole_and_every_split),
        cmocka_unit_test(test_multipart_body_starts_with_delimiter_and_binary),
        cmocka_unit_test(test_multipart_rfc5987_filename),
        cmocka_unit_test(test_multipart_incomplete_and_malformed),
        cmocka_unit_test(test_multipart_headers_too_long),
        cmocka_unit_test(test_multipart_boundary_parameter),
    };
    const struct CMUnitTest zip_tests[] = {
        cmocka_unit_test(test_zip_write_read_by_python),
        cmocka_unit_test(test_zip_write_zip64_read_by_python_and_us),
        cmocka_unit_test(test_zip_round_trip),
        cmocka_unit_test(test_zip_read_python_deflate),
        cmocka_unit_test(test_zip_slip_refused),
        cmocka_unit_test(test_zip_absolute_refused),
        cmocka_unit_test(test_zip_symlink_entry_refused),
        cmocka_unit_test(test_zip_bomb_refused),
        cmocka_unit_test(test_zip_lying_size_refused),
        cmocka_unit_test(test_zip_crc_mismatch_refused),
        cmocka_unit_test(test_zip_existing_symlinks_not_followed),
        cmocka_unit_test(test_zip_not_a_zip),
        cmocka_unit_test(test_zip_unsupported_method_refused),
    };
    int failed = cmocka_run_group_tests_name("multipart", multipart_tests, NULL, NULL);
    failed += cmocka_run_group_tests_name("zip", zip_tests, make_scratch, remove_scratch);
    return failed ? 1 : 0;
}
