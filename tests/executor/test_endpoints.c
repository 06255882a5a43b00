/* Black-box tests of the executor's file endpoints (/upload_file, /download_files,
 * /list_files), /server_info, the API key, the TCP listener, slow clients and the connection
 * timeout. argv[1] is the executor binary. Tests that need root (the agent user switch) are
 * skipped without it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bb.h"

#define AGENT_UID 65534
#define TEST_KEY "k3y-0123456789abcdef"

static struct bb ex;

static const char *detail(const struct bb_reply *r)
{
    return json_string_value(json_object_get(r->json, "detail"));
}

static void expect_detail(struct bb_reply r, long status, const char *want)
{
    assert_int_equal(r.status, status);
    assert_non_null(r.json);
    assert_string_equal(detail(&r), want);
    bb_reply_free(&r);
}

static char *python(int *status, const char *script, const char *a1, const char *a2)
{
    const char *argv[] = {"python3", "-c", script, a1 ? a1 : "", a2 ? a2 : "", NULL};
    return bb_capture(argv, 1, status);
}

/* What list_files says about a path, as compact JSON text. */
static char *list(const char *body)
{
    struct bb_reply r = bb_http(&ex, "POST", "/list_files", body);
    assert_int_equal(r.status, 200);
    assert_true(json_is_array(r.json));
    char *s = json_dumps(r.json, JSON_COMPACT);
    bb_reply_free(&r);
    return s;
}

static char *list_path(const char *path)
{
    json_t *b = json_pack("{s:s}", "path", path);
    char *body = json_dumps(b, JSON_COMPACT);
    json_decref(b);
    char *s = list(body);
    free(body);
    return s;
}

static void assert_listing(const char *path, const char *want)
{
    char *got = list_path(path);
    assert_string_equal(got, want);
    free(got);
}

static int connect_unix(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path);
    assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    return fd;
}

static void write_str(int fd, const char *s)
{
    assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
}

static bool is_root(void)
{
    return geteuid() == 0;
}

/* ---- fixtures ---------------------------------------------------------------------------- */

static int start_plain(void **state)
{
    (void)state;
    return bb_start(&ex, NULL);
}

static int stop(void **state)
{
    (void)state;
    return bb_stop(&ex);
}

/* The temp dir must be passable for the agent uid; <dir>/private is root's alone. */
static int prepare_for_agent(const struct bb_options *o)
{
    if (bb_prepare(&ex, o) < 0)
        return -1;
    if (mkdir(bb_path(ex.dir, "private"), 0700) < 0)
        return -1;
    bb_write_file(bb_path(ex.dir, "private/secret.txt"), "secret", 6);
    return 0;
}

static const char *const agent_args[] = {"--user-id", "65534", NULL};

static int start_env_key(void **state)
{
    (void)state;
    struct bb_options o = {.args = is_root() ? agent_args : NULL,
                           .env_key = TEST_KEY,
                           .api_key = TEST_KEY,
                           .dir_mode = 0711};
    if (prepare_for_agent(&o) < 0)
        return -1;
    return bb_launch(&ex);
}

static int start_file_key_tcp(void **state)
{
    (void)state;
    static char key_arg[512];
    static const char *args[] = {"--api-key-file", key_arg, "--user-id", "65534", NULL};
    if (!is_root())
        args[2] = NULL;
    struct bb_options o = {.args = args, .tcp = true, .api_key = TEST_KEY, .dir_mode = 0711};
    if (prepare_for_agent(&o) < 0)
        return -1;
    snprintf(key_arg, sizeof key_arg, "%s", bb_path(ex.dir, "key"));
    bb_write_file(key_arg, TEST_KEY "\n", strlen(TEST_KEY) + 1);
    if (chmod(key_arg, 0600) < 0)
        return -1;
    return bb_launch(&ex);
}

static int start_short_timeout(void **state)
{
    (void)state;
    static const char *const args[] = {"--connection-timeout", "1", NULL};
    return bb_start(&ex, &(struct bb_options){.args = args});
}

/* ---- /upload_file ------------------------------------------------------------------------ */

static void test_upload_file_creates_destination(void **state)
{
    (void)state;
    char query[512];
    snprintf(query, sizeof query, "?destination=%s/new/dir", ex.work);
    struct bb_reply r = bb_upload(&ex, query, "hello.txt", "hello\nworld\n", 12);
    assert_int_equal(r.status, 200);
    char want[512];
    snprintf(want, sizeof want,
             "{\"filename\": \"hello.txt\", \"destination\": \"%s/new/dir\", \"recursive\": false}",
             ex.work);
    json_t *w = json_loads(want, 0, NULL);
    assert_true(json_equal(r.json, w));
    json_decref(w);
    bb_reply_free(&r);
    size_t len;
    char *got = bb_read_file(bb_path(ex.work, "new/dir/hello.txt"), &len);
    assert_non_null(got);
    assert_int_equal(len, 12);
    assert_memory_equal(got, "hello\nworld\n", 12);
    free(got);
    /* Overwrites, and leaves no temporary file behind. */
    r = bb_upload(&ex, query, "hello.txt", "v2", 2);
    assert_int_equal(r.status, 200);
    bb_reply_free(&r);
    got = bb_read_file(bb_path(ex.work, "new/dir/hello.txt"), &len);
    assert_string_equal(got, "v2");
    free(got);
    assert_listing(bb_path(ex.work, "new/dir"), "[\"hello.txt\"]");
}

static void test_upload_basename_only(void **state)
{
    (void)state;
    char query[512];
    snprintf(query, sizeof query, "?destination=%s/base", ex.work);
    struct bb_reply r = bb_upload(&ex, query, "../../sneaky/evil.txt", "x", 1);
    assert_int_equal(r.status, 200);
    assert_string_equal(json_string_value(json_object_get(r.json, "filename")), "evil.txt");
    bb_reply_free(&r);
    assert_listing(bb_path(ex.work, "base"), "[\"evil.txt\"]");
    assert_int_equal(access(bb_path(ex.dir, "sneaky"), F_OK), -1);
}

static void test_upload_errors(void **state)
{
    (void)state;
    expect_detail(bb_upload(&ex, "?destination=relative/dir", "a.txt", "x", 1), 400,
                  "Destination must be an absolute path");
    char query[512];
    snprintf(query, sizeof query, "?destination=%s&recursive=true", ex.work);
    expect_detail(bb_upload(&ex, query, "a.txt", "x", 1), 400, "Uploaded file is not a zip");
    snprintf(query, sizeof query, "?destination=%s&recursive=maybe", ex.work);
    expect_detail(bb_upload(&ex, query, "a.txt", "x", 1), 400,
                  "Invalid query parameter: recursive (expected a boolean)");
    snprintf(query, sizeof query, "?destination=%s", ex.work);
    expect_detail(bb_upload(&ex, query, "..", "x", 1), 400, "Invalid file name: ..");
    /* The destination is a file. */
    bb_write_file(bb_path(ex.work, "plainfile"), "p", 1);
    snprintf(query, sizeof query, "?destination=%s/plainfile", ex.work);
    char want[512];
    snprintf(want, sizeof want, "Destination is not a directory: %s/plainfile", ex.work);
    expect_detail(bb_upload(&ex, query, "a.txt", "x", 1), 400, want);
    /* Not multipart, and multipart without the file field. */
    char path[512];
    snprintf(path, sizeof path, "/upload_file?destination=%s", ex.work);
    expect_detail(bb_http(&ex, "POST", path, "{}"), 400,
                  "Invalid Content-Type: expected multipart/form-data with a boundary");
    struct bb_reply r = {0};
    bb_setup(&ex, ex.curl, "POST", path, NULL, &r);
    curl_mime *mime = curl_mime_init(ex.curl);
    curl_mimepart *part = curl_mime_addpart(mime);
    curl_mime_name(part, "other");
    curl_mime_data(part, "v", 1);
    curl_easy_setopt(ex.curl, CURLOPT_MIMEPOST, mime);
    assert_int_equal(curl_easy_perform(ex.curl), CURLE_OK);
    curl_mime_free(mime);
    curl_easy_getinfo(ex.curl, CURLINFO_RESPONSE_CODE, &r.status);
    r.json = json_loads(r.body, 0, NULL);
    expect_detail(r, 400, "Missing form field: file");
    /* Nothing was written by any of these. */
    assert_int_equal(access(bb_path(ex.work, "a.txt"), F_OK), -1);
}

static void test_upload_zip_unpacks(void **state)
{
    (void)state;
    const char *zip = bb_path(ex.dir, "up.zip");
    int st;
    free(python(&st,
                "import sys, zipfile\n"
                "z = zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED)\n"
                "z.writestr('src/main.c', 'int main(void) { return 0; }\\n' * 100)\n"
                "z.writestr('README', 'read me')\n"
                "z.writestr('empty/', '')\n"
                "z.close()\n",
                zip, NULL));
    assert_int_equal(st, 0);
    size_t zip_len, len;
    char *data = bb_read_file(zip, &zip_len);
    char query[512];
    snprintf(query, sizeof query, "?destination=%s/unz", ex.work);
    struct bb_reply r = bb_upload(&ex, query, "project.zip", data, zip_len);
    assert_int_equal(r.status, 200);
    assert_string_equal(json_string_value(json_object_get(r.json, "filename")), "project.zip");
    bb_reply_free(&r);
    /* Unpacked, and the archive itself is not left there. */
    assert_listing(bb_path(ex.work, "unz"), "[\"empty/\",\"src/\",\"README\"]");
    char *c = bb_read_file(bb_path(ex.work, "unz/src/main.c"), &len);
    assert_int_equal(len, 2900);
    assert_memory_equal(c, "int main(void) { return 0; }\n", 29);
    free(c);
    /* recursive=true with a .zip name does the same. */
    snprintf(query, sizeof query, "?destination=%s/unz2&recursive=1", ex.work);
    r = bb_upload(&ex, query, "p.zip", data, zip_len);
    assert_int_equal(r.status, 200);
    assert_true(json_is_true(json_object_get(r.json, "recursive")));
    bb_reply_free(&r);
    assert_listing(bb_path(ex.work, "unz2"), "[\"empty/\",\"src/\",\"README\"]");
    free(data);
}

static void test_upload_zip_slip_and_garbage_refused(void **state)
{
    (void)state;
    const char *zip = bb_path(ex.dir, "slip.zip");
    int st;
    free(python(&st,
                "import sys, zipfile\n"
                "z = zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED)\n"
                "z.writestr('fine.txt', 'ok')\n"
                "z.writestr('../../outside.txt', 'gotcha')\n"
                "z.close()\n",
                zip, NULL));
    assert_int_equal(st, 0);
    size_t len;
    char *data = bb_read_file(zip, &len);
    char query[512];
    snprintf(query, sizeof query, "?destination=%s/slip", ex.work);
    expect_detail(bb_upload(&ex, query, "slip.zip", data, len), 400,
                  "Refusing a zip entry with a '..' component: ../../outside.txt");
    free(data);
    assert_listing(bb_path(ex.work, "slip"), "[]");
    assert_int_equal(access(bb_path(ex.dir, "outside.txt"), F_OK), -1);
    expect_detail(bb_upload(&ex, query, "junk.zip", "not a zip", 9), 400,
                  "Not a zip archive (too short)");
    assert_listing(bb_path(ex.work, "slip"), "[]");
}

static void test_upload_too_large(void **state)
{
    (void)state;
    /* The 413 comes from the Content-Length alone: the 70 MB are never sent. */
    size_t unsent;
    char path[512];
    snprintf(path, sizeof path, "/upload_file?destination=%s/big", ex.work);
    struct bb_reply r = bb_post_spaces(&ex, path, "Content-Type: multipart/form-data; boundary=xyz",
                                       70u << 20, false, &unsent);
    assert_true(unsent > 60u << 20);
    expect_detail(r, 413, "Request body too large (limit 67108864 bytes)");
    assert_int_equal(access(bb_path(ex.work, "big"), F_OK), -1);
}

struct chunked_body {
    const char *head;
    size_t head_left;
    size_t spaces_left;
};

static size_t read_chunked(char *buf, size_t size, size_t nmemb, void *ctx)
{
    struct chunked_body *b = ctx;
    size_t n = size * nmemb, done = 0;
    if (b->head_left) {
        done = b->head_left < n ? b->head_left : n;
        memcpy(buf, b->head, done);
        b->head += done;
        b->head_left -= done;
    }
    size_t sp = n - done < b->spaces_left ? n - done : b->spaces_left;
    memset(buf + done, ' ', sp);
    b->spaces_left -= sp;
    return done + sp;
}

static void test_upload_chunked_too_large(void **state)
{
    (void)state;
    /* No Content-Length: the body is counted as it streams and refused past 64 MiB; the
     * file that was being written is removed. */
    const char *head = "--xyz\r\nContent-Disposition: form-data; name=\"file\"; "
                       "filename=\"huge.bin\"\r\n\r\n";
    struct chunked_body b = {head, strlen(head), 65u * 1024 * 1024};
    struct bb_reply r = {0};
    char path[512];
    snprintf(path, sizeof path, "/upload_file?destination=%s/huge", ex.work);
    CURL *h = curl_easy_init();
    bb_setup(&ex, h, "POST", path, NULL, &r);
    struct curl_slist *hdr =
        curl_slist_append(NULL, "Content-Type: multipart/form-data; boundary=xyz");
    hdr = curl_slist_append(hdr, "Transfer-Encoding: chunked");
    hdr = curl_slist_append(hdr, "Expect:");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_READFUNCTION, read_chunked);
    curl_easy_setopt(h, CURLOPT_READDATA, &b);
    assert_int_equal(curl_easy_perform(h), CURLE_OK);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
    r.json = json_loads(r.body, 0, NULL);
    expect_detail(r, 413, "Request body too large (limit 67108864 bytes)");
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    double deadline = bb_now() + 5;
    char *got = NULL;
    while (bb_now() < deadline) {
        free(got);
        got = list_path(bb_path(ex.work, "huge"));
        if (strcmp(got, "[]") == 0)
            break;
        usleep(50000);
    }
    assert_string_equal(got, "[]");
    free(got);
    struct stat st; /* the child had started: it made the destination */
    assert_int_equal(stat(bb_path(ex.work, "huge"), &st), 0);
    assert_true(S_ISDIR(st.st_mode));
}

static void test_upload_abandoned_leaves_nothing(void **state)
{
    (void)state;
    /* Half a file, then the client goes away: no file, no temporary. */
    mkdir(bb_path(ex.work, "half"), 0755);
    int fd = connect_unix(ex.sock);
    char req[1024];
    snprintf(req, sizeof req,
             "POST /upload_file?destination=%s/half HTTP/1.1\r\nHost: x\r\n"
             "Content-Type: multipart/form-data; boundary=B\r\nContent-Length: 100000\r\n\r\n"
             "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"part.bin\"\r\n\r\n"
             "some of the bytes",
             ex.work);
    write_str(fd, req);
    usleep(200000);
    close(fd);
    double deadline = bb_now() + 5;
    char *got = NULL;
    while (bb_now() < deadline) {
        free(got);
        got = list_path(bb_path(ex.work, "half"));
        if (strcmp(got, "[]") == 0)
            break;
        usleep(50000);
    }
    assert_string_equal(got, "[]");
    free(got);
}

static long long server_rss(void)
{
    struct bb_reply r = bb_http(&ex, "GET", "/server_info", NULL);
    json_t *mem = json_object_get(json_object_get(r.json, "resources"), "memory");
    long long rss = json_integer_value(json_object_get(mem, "rss"));
    bb_reply_free(&r);
    return rss;
}

static void test_upload_download_round_trip_large(void **state)
{
    (void)state;
    size_t n = 24u * 1024 * 1024;
    char *data = malloc(n);
    uint32_t x = 7;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        data[i] = (char)(x >> 16);
    }
    long long rss0 = server_rss();
    char query[512];
    snprintf(query, sizeof query, "?destination=%s/large", ex.work);
    struct bb_reply r = bb_upload(&ex, query, "big.bin", data, n);
    assert_int_equal(r.status, 200);
    bb_reply_free(&r);
    size_t len;
    char *got = bb_read_file(bb_path(ex.work, "large/big.bin"), &len);
    assert_int_equal(len, n);
    assert_memory_equal(got, data, n);
    free(got);
    char path[512];
    snprintf(path, sizeof path, "/download_files?path=%s/large", ex.work);
    r = bb_http(&ex, "GET", path, NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.content_type, "application/zip");
    assert_string_equal(r.disposition, "attachment; filename=\"large.zip\"");
    const char *zip = bb_path(ex.dir, "large.zip");
    bb_write_file(zip, r.body, r.len);
    bb_reply_free(&r);
    int st;
    char *out = python(&st,
                       "import sys, zipfile, hashlib\n"
                       "z = zipfile.ZipFile(sys.argv[1])\n"
                       "print(z.namelist(), z.getinfo('big.bin').compress_type,\n"
                       "      hashlib.sha256(z.read('big.bin')).hexdigest() ==\n"
                       "      hashlib.sha256(open(sys.argv[2], 'rb').read()).hexdigest())\n",
                       zip, bb_path(ex.work, "large/big.bin"));
    assert_int_equal(st, 0);
    assert_string_equal(out, "['big.bin'] 8 True\n");
    free(out);
    /* Neither direction held the file in the executor's memory. */
    long long grown = server_rss() - rss0;
    if (grown > 16 * 1024 * 1024)
        fail_msg("the executor's RSS grew by %lld bytes", grown);
    free(data);
}

/* The executor's child that runs a file operation (forked, not exec'ed: its command name is
 * the executor's, unlike the shell's), other than `except`; -1 when none is there. */
static pid_t find_agent_task(pid_t except)
{
    char path[128];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)ex.pid, (int)ex.pid);
    char *kids = bb_read_file(path, NULL);
    snprintf(path, sizeof path, "/proc/%d/comm", (int)ex.pid);
    char *own = bb_read_file(path, NULL);
    pid_t found = -1;
    for (char *save = NULL, *t = kids ? strtok_r(kids, " \n", &save) : NULL; t && found < 0;
         t = strtok_r(NULL, " \n", &save)) {
        snprintf(path, sizeof path, "/proc/%s/comm", t);
        char *comm = bb_read_file(path, NULL);
        if (comm && own && strcmp(comm, own) == 0 && (pid_t)atoi(t) != except)
            found = (pid_t)atoi(t);
        free(comm);
    }
    free(kids);
    free(own);
    return found;
}

static void test_upload_backpressure(void **state)
{
    (void)state;
    /* The child writing the upload is stopped: the pipe fills, the executor stops reading
     * that connection (no buffering), and everything else is still served at once. */
    size_t n = 24u * 1024 * 1024;
    const char *head = "--B\r\nContent-Disposition: form-data; name=\"file\"; "
                       "filename=\"slow.bin\"\r\n\r\n";
    const char *tail = "\r\n--B--\r\n";
    long long rss0 = server_rss();
    /* A child an earlier test left behind (its upload stuck) is not this upload's. */
    pid_t stale = find_agent_task(-1);
    pid_t up = fork();
    assert_true(up >= 0);
    if (up == 0) {
        int fd = connect_unix(ex.sock);
        char req[1024];
        snprintf(req, sizeof req,
                 "POST /upload_file?destination=%s/bp HTTP/1.1\r\nHost: x\r\n"
                 "Content-Type: multipart/form-data; boundary=B\r\nContent-Length: %zu\r\n"
                 "Connection: close\r\n\r\n%s",
                 ex.work, strlen(head) + n + strlen(tail), head);
        write_str(fd, req);
        char *block = malloc(65536);
        memset(block, 'z', 65536);
        for (size_t left = n; left > 0;) {
            size_t k = left < 65536 ? left : 65536;
            ssize_t w = write(fd, block, k);
            if (w <= 0)
                _exit(2);
            left -= (size_t)w;
        }
        write_str(fd, tail);
        char reply[4096] = {0};
        size_t got = 0;
        ssize_t r;
        while (got < sizeof reply - 1 && (r = read(fd, reply + got, sizeof reply - 1 - got)) > 0)
            got += (size_t)r;
        _exit(strstr(reply, "200 OK") ? 0 : 1);
    }
    pid_t task = -1;
    for (double t0 = bb_now(); task < 0 && bb_now() - t0 < 5; usleep(5000))
        task = find_agent_task(stale);
    if (task < 0) {
        kill(up, SIGKILL);
        waitpid(up, NULL, 0);
        skip(); /* no /proc/PID/task/PID/children here */
    }
    assert_int_equal(kill(task, SIGSTOP), 0);
    usleep(500000);
    /* echo hi is answered while the upload's task is still stopped (checked just below):
     * a held-up upload does not hold the shell. */
    struct bb_reply r = bb_run(&ex, "echo hi");
    assert_string_equal(bb_content(&r), "hi");
    bb_reply_free(&r);
    long long grown = server_rss() - rss0;
    int st;
    assert_int_equal(waitpid(up, &st, WNOHANG), 0); /* the upload is held up */
    assert_int_equal(kill(task, SIGCONT), 0);
    assert_int_equal(waitpid(up, &st, 0), up);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    if (grown > 8 * 1024 * 1024)
        fail_msg("the executor's RSS grew by %lld bytes while the upload was held up", grown);
    struct stat sb;
    assert_int_equal(stat(bb_path(ex.work, "bp/slow.bin"), &sb), 0);
    assert_int_equal(sb.st_size, (off_t)n);
}

/* ---- /download_files --------------------------------------------------------------------- */

static const char list_zip_py[] = "import sys, zipfile\n"
                                  "z = zipfile.ZipFile(sys.argv[1])\n"
                                  "assert z.testzip() is None\n"
                                  "for i in z.infolist():\n"
                                  "    print(i.filename, i.compress_type, repr(z.read(i)))\n";

static char *zip_listing(const struct bb_reply *r)
{
    const char *zip = bb_path(ex.dir, "dl.zip");
    bb_write_file(zip, r->body, r->len);
    int st;
    char *out = python(&st, list_zip_py, zip, NULL);
    assert_int_equal(st, 0);
    return out;
}

static void test_download_directory(void **state)
{
    (void)state;
    char d[256];
    snprintf(d, sizeof d, "%s/tree", ex.work);
    mkdir(d, 0755);
    mkdir(bb_path(d, "sub"), 0755);
    mkdir(bb_path(d, "sub/emptydir"), 0755);
    bb_write_file(bb_path(d, "a.txt"), "alpha", 5);
    bb_write_file(bb_path(d, "sub/b.txt"), "beta", 4);
    bb_write_file(bb_path(d, ".hidden"), "h", 1);
    /* Never followed or archived: a symlink out of the tree, a FIFO (would block a read). */
    assert_int_equal(symlink("/etc/hostname", bb_path(d, "link")), 0);
    assert_int_equal(symlink("/etc", bb_path(d, "linkdir")), 0);
    assert_int_equal(mkfifo(bb_path(d, "fifo"), 0644), 0);
    char path[512];
    snprintf(path, sizeof path, "/download_files?path=%s", d);
    struct bb_reply r = bb_http(&ex, "GET", path, NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.content_type, "application/zip");
    assert_string_equal(r.disposition, "attachment; filename=\"tree.zip\"");
    char *out = zip_listing(&r);
    assert_string_equal(out, ".hidden 8 b'h'\n"
                             "a.txt 8 b'alpha'\n"
                             "sub/ 0 b''\n"
                             "sub/b.txt 8 b'beta'\n"
                             "sub/emptydir/ 0 b''\n");
    free(out);
    bb_reply_free(&r);
    /* A trailing slash names the same directory. */
    snprintf(path, sizeof path, "/download_files?path=%s/sub/", d);
    r = bb_http(&ex, "GET", path, NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.disposition, "attachment; filename=\"sub.zip\"");
    out = zip_listing(&r);
    assert_string_equal(out, "b.txt 8 b'beta'\nemptydir/ 0 b''\n");
    free(out);
    bb_reply_free(&r);
}

static void test_download_file_and_empty_dir(void **state)
{
    (void)state;
    bb_write_file(bb_path(ex.work, "single.txt"), "just me", 7);
    char path[512];
    snprintf(path, sizeof path, "/download_files?path=%s/single.txt", ex.work);
    struct bb_reply r = bb_http(&ex, "GET", path, NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.disposition, "attachment; filename=\"single.txt.zip\"");
    char *out = zip_listing(&r);
    assert_string_equal(out, "single.txt 8 b'just me'\n");
    free(out);
    bb_reply_free(&r);
    mkdir(bb_path(ex.work, "nothing"), 0755);
    snprintf(path, sizeof path, "/download_files?path=%s/nothing", ex.work);
    r = bb_http(&ex, "GET", path, NULL);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.len, 22); /* just the end record */
    out = zip_listing(&r);
    assert_string_equal(out, "");
    free(out);
    bb_reply_free(&r);
}

static void test_download_errors(void **state)
{
    (void)state;
    expect_detail(bb_http(&ex, "GET", "/download_files?path=relative/x", NULL), 400,
                  "Path must be an absolute path");
    expect_detail(bb_http(&ex, "GET", "/download_files", NULL), 400,
                  "Missing query parameter: path");
    char path[512], want[512];
    snprintf(path, sizeof path, "/download_files?path=%s/missing", ex.work);
    snprintf(want, sizeof want, "File not found: %s/missing", ex.work);
    expect_detail(bb_http(&ex, "GET", path, NULL), 404, want);
    expect_detail(bb_http(&ex, "POST", "/download_files", "{}"), 405, "Method Not Allowed");
}

/* ---- /list_files ------------------------------------------------------------------------- */

static void test_list_files_order(void **state)
{
    (void)state;
    char d[256];
    snprintf(d, sizeof d, "%s/order", ex.work);
    mkdir(d, 0755);
    const char *files[] = {"b.txt", "B.TXT", "A.txt", ".hidden", "_x", "Zebra"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        bb_write_file(bb_path(d, files[i]), "", 0);
    mkdir(bb_path(d, "zdir"), 0755);
    mkdir(bb_path(d, "Adir"), 0755);
    mkdir(bb_path(d, ".git"), 0755);
    assert_int_equal(symlink("zdir", bb_path(d, "mlink")), 0);
    assert_listing(d, "[\".git/\",\"Adir/\",\"mlink/\",\"zdir/\",\".hidden\",\"_x\",\"A.txt\","
                      "\"B.TXT\",\"b.txt\",\"Zebra\"]");
}

static void test_list_files_paths(void **state)
{
    (void)state;
    mkdir(bb_path(ex.work, "rel"), 0755);
    mkdir(bb_path(ex.work, "rel/inner"), 0755);
    bb_write_file(bb_path(ex.work, "rel/f"), "", 0);
    /* Relative to the initial working dir, even after the shell moved. */
    struct bb_reply r = bb_run(&ex, "cd /");
    bb_reply_free(&r);
    assert_listing("rel", "[\"inner/\",\"f\"]");
    assert_listing(bb_path(ex.work, "rel"), "[\"inner/\",\"f\"]");
    assert_listing("rel/f", "[]");
    assert_listing("does/not/exist", "[]");
    char *all = list("{}");
    bb_assert_contains(all, "\"rel/\"");
    free(all);
    char *null_path = list("{\"path\": null}");
    bb_assert_contains(null_path, "\"rel/\"");
    free(null_path);
    expect_detail(bb_http(&ex, "POST", "/list_files", "{\"path\": 3}"), 400,
                  "Invalid field: path (expected a string)");
    expect_detail(bb_http(&ex, "POST", "/list_files", "[1]"), 400,
                  "Invalid request body: expected a JSON object");
    r = bb_http(&ex, "POST", "/list_files", "{oops");
    assert_int_equal(r.status, 400);
    bb_assert_contains(detail(&r), "Invalid JSON: ");
    bb_reply_free(&r);
    char back[300];
    snprintf(back, sizeof back, "cd %s", ex.work);
    bb_expect_run(&ex, back, BB_ANY_EXIT, NULL);
}

/* ---- /browse (the operator's reads) ------------------------------------------------------ */

static struct bb_reply browse(const char *op, const char *path, const char *extra)
{
    char body[1024];
    snprintf(body, sizeof body, "{\"op\": \"%s\", \"path\": \"%s\"%s}", op, path,
             extra ? extra : "");
    return bb_http(&ex, "POST", "/browse", body);
}

static void expect_browse_refused(const char *op, const char *path, const char *words)
{
    struct bb_reply r = browse(op, path, NULL);
    assert_int_equal(r.status, 403);
    bb_assert_contains(detail(&r), words);
    bb_reply_free(&r);
}

/* Inside the workspace: listed (bounded, links not followed) and read; a FIFO described
 * without blocking; a binary file's bytes only with raw. */
static void test_browse_reads(void **state)
{
    (void)state;
    char *d = strdup(bb_path(ex.work, "br"));
    mkdir(d, 0755);
    for (int i = 0; i < 12; i++) {
        char name[16];
        snprintf(name, sizeof name, "f%02d", i);
        bb_write_file(bb_path(d, name), "hi\n", 3);
    }
    mkdir(bb_path(d, "sub"), 0755);
    assert_int_equal(symlink("/etc", bb_path(d, "out")), 0);
    assert_int_equal(symlink("f00", bb_path(d, "near")), 0);
    assert_int_equal(mkfifo(bb_path(d, "pipe"), 0644), 0);
    bb_write_file(bb_path(d, "bin"), "\x89PNG\r\n\x1a\n\0\0", 10);
    struct bb_reply r = browse("list", "br", ", \"limit\": 5");
    assert_int_equal(r.status, 200);
    json_t *entries = json_object_get(r.json, "entries");
    assert_int_equal(json_array_size(entries), 5);
    assert_string_equal(json_string_value(json_object_get(json_array_get(entries, 0), "name")),
                        "sub");
    assert_int_equal(json_integer_value(json_object_get(r.json, "total")), 17);
    assert_int_equal(json_integer_value(json_object_get(r.json, "omitted")), 12);
    bb_reply_free(&r);
    r = browse("list", "br", NULL);
    size_t i;
    json_t *e;
    bool saw_link = false;
    json_array_foreach(json_object_get(r.json, "entries"), i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "name")), "out") == 0) {
            assert_string_equal(json_string_value(json_object_get(e, "type")), "link");
            assert_string_equal(json_string_value(json_object_get(e, "target")), "/etc");
            saw_link = true;
        }
    }
    assert_true(saw_link);
    bb_reply_free(&r);
    r = browse("read", "br/near", NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(json_string_value(json_object_get(r.json, "content_base64")), "aGkK");
    bb_reply_free(&r);
    r = browse("read", "br/pipe", NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(json_string_value(json_object_get(r.json, "type")), "fifo");
    assert_null(json_object_get(r.json, "content_base64"));
    bb_reply_free(&r);
    r = browse("read", "br/bin", NULL);
    assert_string_equal(json_string_value(json_object_get(r.json, "kind")), "PNG image");
    assert_null(json_object_get(r.json, "content_base64"));
    bb_reply_free(&r);
    r = browse("read", "br/bin", ", \"raw\": true");
    assert_string_equal(json_string_value(json_object_get(r.json, "content_base64")),
                        "iVBORw0KGgoAAA==");
    bb_reply_free(&r);
    free(d);
}

/* Outside the workspace, .. and links leaving it: refused before anything is read. */
static void test_browse_escapes_refused(void **state)
{
    (void)state;
    mkdir(bb_path(ex.work, "esc"), 0755);
    assert_int_equal(symlink("/etc", bb_path(ex.work, "esc/out")), 0);
    assert_int_equal(symlink("../../../../../../../etc/passwd", bb_path(ex.work, "esc/pw")), 0);
    expect_browse_refused("read", "/etc/passwd", "is outside the workspace");
    expect_browse_refused("list", "/", "is outside the workspace");
    expect_browse_refused("read", "../etc/passwd", "leaves the workspace");
    expect_browse_refused("read", "esc/pw", "leaves the workspace");
    expect_browse_refused("read", "esc/out/passwd", "leaves the workspace");
    expect_browse_refused("list", "esc/out", "leaves the workspace");
    struct bb_reply r = browse("read", "esc", NULL);
    assert_int_equal(r.status, 400);
    bb_reply_free(&r);
    expect_detail(bb_http(&ex, "POST", "/browse", "{\"op\": \"remove\"}"), 400,
                  "browse takes {\"path\", \"op\": \"list\"|\"read\", \"limit\": 1..5000, "
                  "\"max\": 0..16777216, \"raw\": bool}");
}

/* ---- /server_info ------------------------------------------------------------------------ */

static long long proc_value(const char *path, const char *key)
{
    char *text = bb_read_file(path, NULL);
    assert_non_null(text);
    char *p = strstr(text, key);
    assert_non_null(p);
    long long v = strtoll(p + strlen(key), NULL, 10);
    free(text);
    return v;
}

static void assert_keys(json_t *obj, const char *const *keys, size_t n)
{
    assert_true(json_is_object(obj));
    assert_int_equal(json_object_size(obj), n);
    for (size_t i = 0; i < n; i++)
        if (!json_is_number(json_object_get(obj, keys[i])) &&
            !json_is_object(json_object_get(obj, keys[i])))
            fail_msg("missing key %s", keys[i]);
}

static void test_server_info_fields(void **state)
{
    (void)state;
    struct bb_reply a = bb_run(&ex, "true");
    bb_reply_free(&a);
    usleep(300000);
    struct bb_reply r = bb_http(&ex, "GET", "/server_info", NULL);
    char io_path[64];
    snprintf(io_path, sizeof io_path, "/proc/%d/io", (int)ex.pid);
    long long read_bytes = proc_value(io_path, "read_bytes: ");
    long long write_bytes = proc_value(io_path, "write_bytes: ");
    assert_int_equal(r.status, 200);
    static const char *const top[] = {"uptime", "idle_time", "resources"};
    static const char *const res_keys[] = {"cpu_percent", "memory", "disk", "io"};
    static const char *const mem_keys[] = {"rss", "vms", "percent"};
    static const char *const disk_keys[] = {"total", "used", "free", "percent"};
    static const char *const io_keys[] = {"read_bytes", "write_bytes"};
    assert_keys(r.json, top, 3);
    json_t *res = json_object_get(r.json, "resources");
    assert_keys(res, res_keys, 4);
    json_t *mem = json_object_get(res, "memory"), *disk = json_object_get(res, "disk"),
           *io = json_object_get(res, "io");
    assert_keys(mem, mem_keys, 3);
    assert_keys(disk, disk_keys, 4);
    assert_keys(io, io_keys, 2);
    double uptime = json_number_value(json_object_get(r.json, "uptime"));
    double idle = json_number_value(json_object_get(r.json, "idle_time"));
    /* The last execute_action was 0.3 s ago, well after start. */
    assert_true(idle >= 0.3 && idle < 2.0);
    assert_true(uptime > idle);
    double cpu = json_number_value(json_object_get(res, "cpu_percent"));
    assert_true(cpu >= 0);
    assert_true(fabs(cpu * 10 - (double)llround(cpu * 10)) < 1e-6); /* one decimal */
    long long rss = json_integer_value(json_object_get(mem, "rss"));
    long long vms = json_integer_value(json_object_get(mem, "vms"));
    assert_true(rss > 0 && vms >= rss);
    long long total_mem = proc_value("/proc/meminfo", "MemTotal:") * 1024;
    double mem_pct = json_number_value(json_object_get(mem, "percent"));
    double want_pct = 100.0 * (double)rss / (double)total_mem;
    assert_true(mem_pct > want_pct * 0.999999 && mem_pct < want_pct * 1.000001);
    struct statvfs v;
    assert_int_equal(statvfs("/", &v), 0);
    assert_int_equal(json_integer_value(json_object_get(disk, "total")),
                     (long long)v.f_blocks * (long long)v.f_frsize);
    long long used = json_integer_value(json_object_get(disk, "used"));
    long long dfree = json_integer_value(json_object_get(disk, "free"));
    double dpct = json_number_value(json_object_get(disk, "percent"));
    double want_dpct = 100.0 * (double)used / (double)(used + dfree);
    assert_true(dpct >= want_dpct - 0.051 && dpct <= want_dpct + 0.051);
    assert_true(used > 0 && dfree >= 0 && used + dfree <= (long long)(v.f_blocks * v.f_frsize));
    assert_int_equal(json_integer_value(json_object_get(io, "read_bytes")), read_bytes);
    assert_int_equal(json_integer_value(json_object_get(io, "write_bytes")), write_bytes);
    bb_reply_free(&r);
}

/* ---- slow clients ------------------------------------------------------------------------ */

static void test_slow_body_does_not_block(void **state)
{
    (void)state;
    /* A client that sends its body a byte at a time, in a child process, and holds back the
     * last byte until the test has had its answer: the executor cannot finish reading it
     * before echo hi, however loaded the machine. */
    const char *body =
        "{\"action\": {\"action\": \"run\", \"args\": {\"command\": \"echo slow\"}}}";
    int gate[2], ready[2];
    assert_int_equal(pipe(gate), 0);
    assert_int_equal(pipe(ready), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(gate[1]);
        close(ready[0]);
        int fd = connect_unix(ex.sock);
        char head[256];
        snprintf(head, sizeof head,
                 "POST /execute_action HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n"
                 "Connection: close\r\n\r\n",
                 strlen(body));
        write_str(fd, head);
        char go;
        for (size_t i = 0; body[i]; i++) {
            if (!body[i + 1] && (write(ready[1], "r", 1) != 1 || read(gate[0], &go, 1) != 1))
                _exit(3);
            if (write(fd, body + i, 1) != 1)
                _exit(2);
            usleep(1000);
        }
        char reply[8192];
        size_t got = 0;
        ssize_t n;
        while (got < sizeof reply - 1 && (n = read(fd, reply + got, sizeof reply - 1 - got)) > 0)
            got += (size_t)n;
        reply[got] = '\0';
        _exit(strstr(reply, "200 OK") && strstr(reply, "\"content\":\"slow\"") ? 0 : 1);
    }
    close(gate[0]);
    close(ready[1]);
    char got_ready;
    assert_int_equal(read(ready[0], &got_ready, 1), 1); /* all but its last byte is sent */
    close(ready[0]);
    struct bb_reply r = bb_run(&ex, "echo hi");
    assert_string_equal(bb_content(&r), "hi");
    bb_reply_free(&r);
    int st;
    assert_int_equal(waitpid(pid, &st, WNOHANG), 0); /* the slow one was still sending */
    assert_int_equal(write(gate[1], "g", 1), 1);
    close(gate[1]);
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

/* ---- API key ----------------------------------------------------------------------------- */

static void test_auth_required(void **state)
{
    (void)state;
    const char *run = "{\"action\": {\"action\": \"run\", \"args\": {\"command\": \"echo ok\"}}}";
    expect_detail(bb_http_key(&ex, "POST", "/execute_action", run, NULL), 403, "Invalid API Key");
    expect_detail(bb_http_key(&ex, "POST", "/execute_action", run, "k3y-0123456789abcde"), 403,
                  "Invalid API Key");
    expect_detail(bb_http_key(&ex, "POST", "/execute_action", run, TEST_KEY "f"), 403,
                  "Invalid API Key");
    expect_detail(bb_http_key(&ex, "POST", "/execute_action", run, ""), 403, "Invalid API Key");
    /* Not in the query string either. */
    expect_detail(
        bb_http_key(&ex, "POST", "/execute_action?X-Session-API-Key=" TEST_KEY, run, NULL), 403,
        "Invalid API Key");
    expect_detail(bb_http_key(&ex, "POST", "/list_files", "{}", NULL), 403, "Invalid API Key");
    expect_detail(bb_http_key(&ex, "GET", "/download_files?path=/", NULL, NULL), 403,
                  "Invalid API Key");
    expect_detail(bb_http_key(&ex, "POST", "/upload_file?destination=/tmp", "x", NULL), 403,
                  "Invalid API Key");
    /* Unknown paths too: nothing is learned without the key. */
    expect_detail(bb_http_key(&ex, "GET", "/nope", NULL, NULL), 403, "Invalid API Key");
    expect_detail(bb_http_key(&ex, "GET", "/nope", NULL, TEST_KEY), 404, "Not Found");
    struct bb_reply r = bb_http_key(&ex, "POST", "/execute_action", run, TEST_KEY);
    assert_int_equal(r.status, 200);
    assert_string_equal(bb_content(&r), "ok");
    bb_reply_free(&r);
}

static void test_auth_open_paths(void **state)
{
    (void)state;
    struct bb_reply r = bb_http_key(&ex, "GET", "/alive", NULL, NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(json_string_value(json_object_get(r.json, "status")), "ok");
    bb_reply_free(&r);
    r = bb_http_key(&ex, "GET", "/server_info", NULL, "wrong");
    assert_int_equal(r.status, 200);
    assert_true(json_is_number(json_object_get(r.json, "uptime")));
    bb_reply_free(&r);
    expect_detail(bb_http_key(&ex, "POST", "/alive", "{}", NULL), 405, "Method Not Allowed");
}

static void test_key_not_in_shell_env(void **state)
{
    (void)state;
    struct bb_reply r = bb_run(&ex, "echo \"[${SESSION_API_KEY-unset}]\"; env | grep -c " TEST_KEY);
    assert_string_equal(bb_content(&r), "[unset]\n0");
    bb_reply_free(&r);
    /* Nor in the executor's environment as /proc shows it: unreadable for another uid,
     * blanked for the same one. */
    bb_expect_run(&ex, "grep -c -a " TEST_KEY " /proc/$PPID/environ 2>/dev/null; echo \"rc=$?\"",
                  BB_ANY_EXIT, is_root() ? "rc=2" : "0\nrc=1");
}

static void test_files_as_agent(void **state)
{
    (void)state;
    if (!is_root())
        skip();
    /* An upload is the agent's file. */
    char query[512];
    snprintf(query, sizeof query, "?destination=%s/mine", ex.work);
    struct bb_reply r = bb_upload(&ex, query, "owned.txt", "x", 1);
    assert_int_equal(r.status, 200);
    bb_reply_free(&r);
    struct stat st;
    assert_int_equal(stat(bb_path(ex.work, "mine/owned.txt"), &st), 0);
    assert_int_equal(st.st_uid, AGENT_UID);
    assert_int_equal(stat(bb_path(ex.work, "mine"), &st), 0);
    assert_int_equal(st.st_uid, AGENT_UID);
    /* What the agent cannot reach, the endpoints cannot either. */
    char priv[256];
    snprintf(priv, sizeof priv, "%s/private", ex.dir);
    char want[512];
    snprintf(query, sizeof query, "?destination=%s/sub", priv);
    snprintf(want, sizeof want, "Cannot create the destination %s/sub: Permission denied", priv);
    expect_detail(bb_upload(&ex, query, "a.txt", "x", 1), 403, want);
    assert_int_equal(access(bb_path(priv, "sub"), F_OK), -1);
    char path[512];
    snprintf(path, sizeof path, "/download_files?path=%s/secret.txt", priv);
    snprintf(want, sizeof want, "Cannot read %s/secret.txt: Permission denied", priv);
    expect_detail(bb_http(&ex, "GET", path, NULL), 403, want);
    snprintf(path, sizeof path, "/download_files?path=%s", priv);
    snprintf(want, sizeof want, "Cannot read %s: Permission denied", priv);
    expect_detail(bb_http(&ex, "GET", path, NULL), 403, want);
    assert_listing(priv, "[]");
    /* The same path as root would list it: the check is real. */
    assert_int_equal(access(bb_path(priv, "secret.txt"), R_OK), 0);
}

static void test_key_file_not_readable_by_agent(void **state)
{
    (void)state;
    if (!is_root())
        skip();
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cat %s/key", ex.dir);
    struct bb_reply r = bb_run(&ex, cmd);
    char want[512];
    snprintf(want, sizeof want, "cat: %s/key: Permission denied", ex.dir);
    assert_string_equal(bb_content(&r), want);
    assert_int_equal(bb_exit_code(&r), 1);
    bb_reply_free(&r);
    bb_expect_run(&ex, "id -u", BB_ANY_EXIT, "65534");
}

/* ---- the session's user: --user-db and --own-working-dir (root only) ---------------------- */

static void test_user_db_and_own_working_dir(void **state)
{
    (void)state;
    if (!is_root())
        skip();
    static char db[128];
    static const char *const args[] = {"--user-id", "65534", "--username",        "tester",
                                       "--user-db", db,      "--own-working-dir", NULL};
    struct bb e;
    struct bb_options o = {.args = args, .dir_mode = 0711};
    assert_int_equal(bb_prepare(&e, &o), 0);
    snprintf(db, sizeof db, "%s", bb_path(e.dir, "etc"));
    assert_int_equal(mkdir(db, 0755), 0);
    bb_write_file(bb_path(db, "passwd"), "root:x:0:0:root:/root:/bin/sh\n", 30);
    bb_write_file(bb_path(db, "group"), "root:x:0:\n", 10);
    /* The workspace's own files become the agent's; what a symlink in it points at does not. */
    assert_int_equal(mkdir(e.work, 0755), 0);
    assert_int_equal(mkdir(bb_path(e.work, "sub"), 0755), 0);
    bb_write_file(bb_path(e.work, "sub/f"), "x", 1);
    bb_write_file(bb_path(e.dir, "outside"), "o", 1);
    assert_int_equal(symlink(bb_path(e.dir, "outside"), bb_path(e.work, "link")), 0);
    assert_int_equal(bb_launch(&e), 0);
    struct stat st;
    assert_int_equal(stat(bb_path(e.work, "sub/f"), &st), 0);
    assert_int_equal(st.st_uid, 65534);
    assert_int_equal(lstat(bb_path(e.work, "link"), &st), 0);
    assert_int_equal(st.st_uid, 65534);
    assert_int_equal(stat(bb_path(e.dir, "outside"), &st), 0);
    assert_int_equal(st.st_uid, 0);
    /* The name went into the given directory's files, after the image's entries. */
    char *pw = bb_read_file(bb_path(db, "passwd"), NULL);
    char *gr = bb_read_file(bb_path(db, "group"), NULL);
    assert_non_null(pw);
    assert_non_null(gr);
    bb_assert_prefix(pw, "root:x:0:0:root:/root:/bin/sh\ntester:x:65534:");
    assert_string_equal(gr, "root:x:0:\ntester:x:65534:\n");
    free(pw);
    free(gr);
    bb_expect_run(&e, "echo $USER; touch sub/g && stat -c %u sub/g", 0, "tester\n65534");
    bb_stop(&e);
}

/* ---- TCP --------------------------------------------------------------------------------- */

static void test_tcp_with_key(void **state)
{
    (void)state;
    ex.use_tcp = true;
    struct bb_reply r = bb_http_key(&ex, "GET", "/alive", NULL, NULL);
    assert_int_equal(r.status, 200);
    bb_reply_free(&r);
    const char *run = "{\"action\": {\"action\": \"run\", \"args\": {\"command\": \"echo tcp\"}}}";
    expect_detail(bb_http_key(&ex, "POST", "/execute_action", run, NULL), 403, "Invalid API Key");
    r = bb_http_key(&ex, "POST", "/execute_action", run, TEST_KEY);
    assert_int_equal(r.status, 200);
    assert_string_equal(bb_content(&r), "tcp");
    bb_reply_free(&r);
    ex.use_tcp = false;
    /* The unix socket serves as well. */
    r = bb_http_key(&ex, "POST", "/execute_action", run, TEST_KEY);
    assert_string_equal(bb_content(&r), "tcp");
    bb_reply_free(&r);
}

static void test_tcp_loopback_only(void **state)
{
    (void)state;
    /* Bound to 127.0.0.1: another address of this host refuses the connection. */
    int port = atoi(strrchr(ex.tcp, ':') + 1);
    struct ifaddrs *ifs, *i;
    assert_int_equal(getifaddrs(&ifs), 0);
    struct sockaddr_in other = {0};
    for (i = ifs; i; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
            (ntohl(((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr.s_addr) >> 24) != 127) {
            other = *(struct sockaddr_in *)(void *)i->ifa_addr;
            break;
        }
    freeifaddrs(ifs);
    if (!other.sin_family)
        skip();
    other.sin_port = htons((uint16_t)port);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&other, sizeof other), -1);
    assert_int_equal(errno, ECONNREFUSED);
    close(fd);
    struct sockaddr_in lo = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&lo, sizeof lo), 0);
    close(fd);
}

/* ---- connection timeout ------------------------------------------------------------------ */

/* Seconds until the server closes fd (read gives 0 or an error), at most limit. */
static double time_to_close(int fd, double limit)
{
    double t0 = bb_now();
    struct timeval tv = {.tv_sec = 0, .tv_usec = 100000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    while (bb_now() - t0 < limit) {
        char c;
        ssize_t n = read(fd, &c, 1);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
            return bb_now() - t0;
    }
    return limit;
}

static void test_idle_connections_closed(void **state)
{
    (void)state;
    int idle = connect_unix(ex.sock);
    double t = time_to_close(idle, 5);
    close(idle);
    if (t < 0.9 || t > 3)
        fail_msg("an idle connection was closed after %.2f s (timeout 1 s)", t);
    int partial = connect_unix(ex.sock);
    write_str(partial, "POST /execute_action HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{");
    t = time_to_close(partial, 5);
    close(partial);
    if (t < 0.9 || t > 3)
        fail_msg("a stalled request was closed after %.2f s (timeout 1 s)", t);
}

static void test_waiting_request_not_timed_out(void **state)
{
    (void)state;
    /* Suspended while its action runs: longer than the timeout, still answered. */
    char *body = bb_run_body("sleep 2.2; echo done", false, 10, true);
    struct bb_reply r = bb_http(&ex, "POST", "/execute_action", body);
    free(body);
    assert_int_equal(r.status, 200);
    assert_string_equal(bb_content(&r), "done");
    bb_reply_free(&r);
}

/* ---- start-up refusals -------------------------------------------------------------------- */

/* Runs the executor with args; returns its exit status, stderr in *err. */
static int run_executor(const char *const *args, char **err)
{
    int status;
    *err = bb_executor_stderr(args, &status);
    return status;
}

static void test_refuses_remote_listen_without_key(void **state)
{
    (void)state;
    struct bb tmp;
    assert_int_equal(bb_prepare(&tmp, &(struct bb_options){.tcp_only = true,
                                                           .listen_host = "0.0.0.0",
                                                           .env_key = TEST_KEY}),
                     0);
    const char *listen_arg = tmp.listen;
    const char *args[] = {"--listen", listen_arg, "--working-dir", tmp.work, NULL};
    char *err;
    assert_int_equal(run_executor(args, &err), 1);
    char want[256];
    snprintf(want, sizeof want,
             "paddock-executor: refusing to listen on %s: 0.0.0.0 is not a loopback address and "
             "no API key is configured (give one with --api-key-file or SESSION_API_KEY)\n",
             listen_arg);
    assert_string_equal(err, want);
    free(err);
    /* With a key it serves there (reached here through 127.0.0.1). */
    assert_int_equal(bb_launch(&tmp), 0);
    struct bb_reply r = bb_http_key(&tmp, "POST", "/list_files", "{}", TEST_KEY);
    assert_int_equal(r.status, 200);
    bb_reply_free(&r);
    assert_int_equal(bb_stop(&tmp), 0);
}

/* A request's line in the container log stays one line: the URL as libmicrohttpd decoded it
 * (%0a a newline, %0d a carriage return) cannot split a warning in two. */
static void test_log_line_stays_one(void **state)
{
    (void)state;
    struct bb tmp;
    assert_int_equal(bb_start(&tmp, &(struct bb_options){.log_file = true}), 0);
    struct bb_reply r = bb_http(&tmp, "GET", "/no%0aFAKE%0dline", NULL);
    assert_int_equal(r.status, 404);
    bb_reply_free(&r);
    char log[256];
    snprintf(log, sizeof log, "%s", bb_path(tmp.dir, "executor.log"));
    double deadline = bb_now() + 10;
    char *text = NULL;
    while (bb_now() < deadline) {
        free(text);
        text = bb_read_file(log, NULL);
        if (text && strstr(text, "answered 404"))
            break;
        usleep(20000);
    }
    assert_non_null(text);
    bb_assert_contains(text, "paddock-executor: warning: GET /no FAKE line answered 404, ");
    assert_null(strstr(text, "\nFAKE"));
    free(text);
    assert_int_equal(bb_stop(&tmp), 0);
}

static void test_refuses_readable_key_file(void **state)
{
    (void)state;
    struct bb tmp;
    assert_int_equal(bb_prepare(&tmp, NULL), 0);
    const char *key = bb_path(tmp.dir, "key");
    bb_write_file(key, "abc\n", 4);
    assert_int_equal(chmod(key, 0640), 0);
    const char *args[] = {"--socket", tmp.sock, "--working-dir", tmp.work, "--api-key-file",
                          key,        NULL};
    char *err;
    assert_int_equal(run_executor(args, &err), 1);
    char want[512];
    snprintf(want, sizeof want,
             "paddock-executor: the API key file %s must belong to uid %d and be readable by it "
             "alone (chmod 600); it is uid %d, mode 640\n",
             key, (int)geteuid(), (int)geteuid());
    assert_string_equal(err, want);
    free(err);
    assert_int_equal(access(tmp.sock, F_OK), -1);
    bb_write_file(key, " \n", 2);
    assert_int_equal(chmod(key, 0600), 0);
    assert_int_equal(run_executor(args, &err), 1);
    snprintf(want, sizeof want, "paddock-executor: the API key file %s is empty\n", key);
    assert_string_equal(err, want);
    free(err);
    const char *none[] = {"--working-dir", tmp.work, NULL};
    assert_int_equal(run_executor(none, &err), 2);
    bb_assert_contains(err, "paddock-executor: --socket or --listen is required\n");
    free(err);
    assert_int_equal(bb_stop(&tmp), 0);
}

/* A frames reply taken apart: its `o` payloads joined (NUL-terminated), its `r` frame. */
struct frames {
    char out[256];
    unsigned status;
    const char *obs; /* inside the reply's body */
    size_t obs_len;
};

/* Asserts that the frames are well formed and that the one `r` frame ends the reply. */
static struct frames frames_split(const struct bb_reply *st)
{
    struct frames f = {0};
    size_t out_len = 0, at = 0;
    bool got_result = false;
    while (at < st->len) {
        const char *nl = memchr(st->body + at, '\n', st->len - at);
        assert_non_null(nl);
        unsigned long long n = 0;
        if (st->body[at] == 'o') {
            assert_int_equal(sscanf(st->body + at, "o %llu", &n), 1);
            assert_false(got_result);
            assert_true(out_len + n < sizeof f.out);
            memcpy(f.out + out_len, nl + 1, n);
            out_len += n;
        } else {
            assert_false(got_result);
            assert_int_equal(sscanf(st->body + at, "r %u %llu", &f.status, &n), 2);
            f.obs = nl + 1;
            f.obs_len = n;
            got_result = true;
        }
        at = (size_t)(nl + 1 - st->body) + n;
    }
    assert_true(got_result);
    assert_int_equal(at, st->len);
    f.out[out_len] = '\0';
    return f;
}

/* ?paddock_stream=1: output frames as the shell prints, then the plain reply byte for byte. */
static void test_execute_stream_frames(void **state)
{
    (void)state;
    char *body = bb_run_body("echo one; printf 'two\\033]0;t\\007\\n'", false, 30, true);
    struct bb_reply plain = bb_http(&ex, "POST", "/execute_action", body);
    assert_int_equal(plain.status, 200);
    struct bb_reply st = bb_http(&ex, "POST", "/execute_action?paddock_stream=1", body);
    assert_int_equal(st.status, 200);
    assert_non_null(st.content_type);
    assert_string_equal(st.content_type, "application/x-paddock-frames");
    struct frames f = frames_split(&st);
    assert_int_equal(f.status, 200);
    assert_int_equal(f.obs_len, plain.len);
    assert_memory_equal(f.obs, plain.body, plain.len);
    assert_string_equal(f.out, "one\ntwo\033]0;t\007\n");
    bb_reply_free(&plain);
    bb_reply_free(&st);
    free(body);
    /* A request refused before it runs is answered plainly. */
    struct bb_reply bad =
        bb_http(&ex, "POST", "/execute_action?paddock_stream=1", "{\"action\": 1}");
    assert_int_equal(bad.status, 400);
    assert_non_null(detail(&bad));
    bb_reply_free(&bad);
}

/* --stream-hold: the first output frame waits for the command's end, so a command that ends
 * within the hold is answered whole, with its length; with 0 the reply starts (chunked) at
 * the first output. The command prints, sleeps, prints: the same frames either way. */
static void test_execute_stream_hold(void **state)
{
    (void)state;
    char *body = bb_run_body("printf one; sleep 0.3; echo two", false, 30, true);
    for (int k = 0; k < 2; k++) {
        struct bb e;
        const char *args[] = {"--stream-hold", k == 0 ? "30000" : "0", NULL};
        struct bb_options o = {.args = args};
        assert_int_equal(bb_start(&e, &o), 0);
        struct bb_reply st = bb_http(&e, "POST", "/execute_action?paddock_stream=1", body);
        assert_int_equal(st.status, 200);
        if (k == 0)
            assert_null(st.transfer_encoding);
        else
            assert_string_equal(st.transfer_encoding ? st.transfer_encoding : "(none)", "chunked");
        struct frames f = frames_split(&st);
        assert_int_equal(f.status, 200);
        assert_string_equal(f.out, "onetwo\n");
        assert_non_null(memmem(f.obs, f.obs_len, "onetwo", 6));
        bb_reply_free(&st);
        assert_int_equal(bb_stop(&e), 0);
    }
    free(body);
    /* What it takes: 0 to 60000 ms. */
    struct bb tmp;
    assert_int_equal(bb_prepare(&tmp, NULL), 0);
    const char *bad[] = {"--socket", tmp.sock, "--working-dir", tmp.work, "--stream-hold",
                         "-1",       NULL};
    char *err;
    assert_int_equal(run_executor(bad, &err), 2);
    assert_string_equal(err, "paddock-executor: invalid --stream-hold: -1 (0 to 60000 ms)\n");
    free(err);
    assert_int_equal(bb_stop(&tmp), 0);
}

int main(int argc, char **argv)
{
    if (bb_init(argc, argv) < 0)
        return 2;
    const struct CMUnitTest files[] = {
        cmocka_unit_test(test_upload_file_creates_destination),
        cmocka_unit_test(test_upload_basename_only),
        cmocka_unit_test(test_upload_errors),
        cmocka_unit_test(test_upload_zip_unpacks),
        cmocka_unit_test(test_upload_zip_slip_and_garbage_refused),
        cmocka_unit_test(test_upload_too_large),
        cmocka_unit_test(test_upload_chunked_too_large),
        cmocka_unit_test(test_upload_abandoned_leaves_nothing),
        cmocka_unit_test(test_upload_download_round_trip_large),
        cmocka_unit_test(test_upload_backpressure),
        cmocka_unit_test(test_download_directory),
        cmocka_unit_test(test_download_file_and_empty_dir),
        cmocka_unit_test(test_download_errors),
        cmocka_unit_test(test_list_files_order),
        cmocka_unit_test(test_list_files_paths),
        cmocka_unit_test(test_browse_reads),
        cmocka_unit_test(test_browse_escapes_refused),
        cmocka_unit_test(test_server_info_fields),
        cmocka_unit_test(test_slow_body_does_not_block),
        cmocka_unit_test(test_execute_stream_frames),
        cmocka_unit_test(test_execute_stream_hold),
    };
    const struct CMUnitTest env_key[] = {
        cmocka_unit_test(test_auth_required),
        cmocka_unit_test(test_auth_open_paths),
        cmocka_unit_test(test_key_not_in_shell_env),
        cmocka_unit_test(test_files_as_agent),
    };
    const struct CMUnitTest file_key_tcp[] = {
        cmocka_unit_test(test_key_file_not_readable_by_agent),
        cmocka_unit_test(test_tcp_with_key),
        cmocka_unit_test(test_tcp_loopback_only),
    };
    const struct CMUnitTest timeouts[] = {
        cmocka_unit_test(test_idle_connections_closed),
        cmocka_unit_test(test_waiting_request_not_timed_out),
    };
    const struct CMUnitTest startup[] = {
        cmocka_unit_test(test_refuses_remote_listen_without_key),
        cmocka_unit_test(test_refuses_readable_key_file),
        cmocka_unit_test(test_user_db_and_own_working_dir),
        cmocka_unit_test(test_log_line_stays_one),
    };
    int failed = cmocka_run_group_tests_name("files", files, start_plain, stop);
    failed += cmocka_run_group_tests_name("env-key", env_key, start_env_key, stop);
    failed += cmocka_run_group_tests_name("file-key-tcp", file_key_tcp, start_file_key_tcp, stop);
    failed += cmocka_run_group_tests_name("timeouts", timeouts, start_short_timeout, stop);
    failed += cmocka_run_group_tests_name("startup", startup, NULL, NULL);
    return failed ? 1 : 0;
}
