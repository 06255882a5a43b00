/* The executor's file endpoints and probes through the engine. A transfer is an action like
 * any other in the history: its row is written before anything reaches the sandbox, the
 * "action" event says it runs, and the row is finished (with a small JSON summary, never the
 * file's bytes) before the client hears back. */
#include "engine/files.h"

#include "common/io.h"
#include "engine/api.h"
#include "engine/base/util.h"
#include "engine/docker/http.h"
#include "engine/driver.h"
#include "engine/engine_internal.h"
#include "engine/events.h"
#include "engine/session_internal.h"
#include "engine/store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The executor's working directory in every session (session_config.c starts it there). */
#define FILES_WORKSPACE "/workspace"
/* http.c forwards a Content-Type of up to 127 bytes; a multipart boundary is at most 70. */
#define FILES_CTYPE_MAX 120

struct files_op {
    struct engine *eng;
    struct session *s; /* held until the executor answered */
    struct api_req *r;
    int64_t id;       /* the action row; 0 for the probes, which are not recorded */
    const char *kind; /* "upload", "download", "list_files", or the probe's path */
    char *path;       /* the action's summary */
    size_t size;      /* upload: bytes of the body forwarded */
    int fd;           /* download: the spool, else -1 */
    uint64_t got, max;
    bool too_large;
    int write_errno;
};

/* A query value percent-encoded (RFC 3986's unreserved characters and '/' stay). */
static char *files_escape(const char *v)
{
    static const char hex[] = "0123456789ABCDEF";
    char *out = malloc(3 * strlen(v) + 1), *o = out;
    if (!out)
        return NULL;
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        unsigned char c = *p;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
            *o++ = (char)c;
        } else {
            *o++ = '%';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
        }
    }
    *o = '\0';
    return out;
}

/* fresh: its first event, marked "new" (clients count it; docs/protocol.md). */
static void files_publish(struct engine *eng, int64_t id, bool fresh)
{
    if (!events_listening(eng->events))
        return; /* nobody follows the events: the row is not read back */
    json_t *a = store_action_get(eng->store, id);
    if (!a)
        return;
    if (fresh)
        json_object_set_new(a, "new", json_true());
    events_publish(eng->events, "action", a);
    json_decref(a);
}

/* A failed store write as the reply: 507 when the disk is full, else 500. */
static void files_reply_store_error(struct api_req *r, struct engine *eng, const char *what,
                                    char *err)
{
    enum err_code e = session_store_error(eng);
    api_reply_error(r, e, "%s (%s)%s%s", what, err ? err : "store error",
                    e == ERR_STORAGE_FULL ? "; free disk space under " : "",
                    e == ERR_STORAGE_FULL ? eng->state_dir : "");
    free(err);
}

static void files_op_free(struct files_op *op)
{
    if (op->s)
        session_release(op->s);
    if (op->fd >= 0)
        close(op->fd);
    free(op->path);
    free(op);
}

/* The session may act now, and the transfer is recorded (args non-NULL) and published as
 * running; or the refusal is the reply and NULL. */
static struct files_op *files_begin(struct api_req *r, struct session *s, const char *kind,
                                    const char *summary, json_t *args)
{
    struct engine *eng = s->eng;
    enum err_code refusal;
    char msg[512];
    if (session_check_actionable(s, &refusal, msg, sizeof(msg)) < 0) {
        api_reply_error(r, refusal, "%s", msg);
        return NULL;
    }
    struct files_op *op = calloc(1, sizeof(*op));
    if (!op || !(op->path = strdup(summary))) {
        free(op);
        api_reply_error(r, ERR_INTERNAL, "out of memory");
        return NULL;
    }
    op->eng = eng;
    op->r = r;
    op->kind = kind;
    op->fd = -1;
    if (args) {
        char *args_json = json_dumps(args, JSON_COMPACT);
        char *err = NULL;
        /* Intent first: the row is committed before anything reaches the sandbox. */
        op->id = store_action_insert(eng->store, s->id, kind, summary, args_json ? args_json : "{}",
                                     util_now(), &err);
        free(args_json);
        if (op->id < 0) {
            char *what = util_strdupf("the %s was not run: it could not be recorded", kind);
            files_reply_store_error(r, eng, what ? what : "not recorded", err);
            free(what);
            files_op_free(op);
            return NULL;
        }
        files_publish(eng, op->id, true); /* stored as running */
    }
    op->s = s;
    session_hold(s);
    return op;
}

/* The end of a recorded transfer: its row finished and published. -1 (and the store error as
 * the reply) when the row could not be finished: acknowledged means recorded. */
static int files_record(struct files_op *op, bool ok, unsigned status, const char *body, size_t len,
                        const char *error)
{
    if (op->id <= 0)
        return 0;
    char *obs = NULL;
    json_t *listing =
        strcmp(op->kind, "list_files") == 0 && body && len ? json_loadb(body, len, 0, NULL) : NULL;
    if (listing) {
        /* The listing is the observation, as the executor gave it. */
        obs = json_dumps(listing, JSON_COMPACT);
        json_decref(listing);
    } else {
        json_t *detail = NULL;
        if (!ok && body && len) {
            json_t *j = json_loadb(body, len, 0, NULL);
            detail = json_incref(json_object_get(j, "detail"));
            json_decref(j);
        }
        json_t *o = json_pack("{s:s,s:I,s:i}", "path", op->path, "size",
                              (json_int_t)(strcmp(op->kind, "download") == 0 ? op->got : op->size),
                              "status", (int)status);
        if (detail)
            json_object_set_new(o, "detail", detail);
        obs = json_dumps(o, JSON_COMPACT);
        json_decref(o);
    }
    char *err = NULL;
    int rc = store_action_finish(op->eng->store, op->id, ok ? ACTION_DONE : ACTION_FAILED,
                                 STORE_NO_EXIT_CODE, obs, obs ? strlen(obs) : 0, error, util_now(),
                                 &err);
    free(obs);
    if (rc < 0) {
        char *what = util_strdupf("the %s of %s ran but could not be recorded", op->kind, op->path);
        files_reply_store_error(op->r, op->eng, what ? what : "not recorded", err);
        free(what);
        return -1;
    }
    files_publish(op->eng, op->id, false);
    return 0;
}

static void files_on_explained(const char *msg, void *ud)
{
    struct files_op *op = ud;
    if (files_record(op, false, 502, NULL, 0, msg) == 0)
        api_reply_error(op->r, ERR_EXECUTOR_ERROR, "%s", msg);
    files_op_free(op);
}

/* The upload's observation names the file written: destination/filename, or the destination
 * when an archive was unpacked there. */
static void files_upload_path(struct files_op *op, const char *body, size_t len)
{
    json_t *j = json_loadb(body, len, 0, NULL);
    const char *dest = json_string_value(json_object_get(j, "destination"));
    const char *name = json_string_value(json_object_get(j, "filename"));
    bool unpacked = json_is_true(json_object_get(j, "recursive")) ||
                    (name && strlen(name) > 4 && strcmp(name + strlen(name) - 4, ".zip") == 0);
    if (dest && name && !unpacked) {
        size_t n = strlen(dest);
        char *p = util_strdupf("%s%s%s", dest, n && dest[n - 1] == '/' ? "" : "/", name);
        if (p) {
            free(op->path);
            op->path = p;
        }
    }
    json_decref(j);
}

static void files_on_done(const struct http_result *res, void *ud)
{
    struct files_op *op = ud;
    struct api_req *r = op->r;
    if (op->too_large || op->write_errno) {
        char *msg =
            op->too_large
                ? util_strdupf("the archive of %s is larger than the download limit of %llu bytes "
                               "(PADDOCK_DOWNLOAD_MAX); download a smaller directory",
                               op->path, (unsigned long long)op->max)
                : util_strdupf("cannot keep the archive of %s under %s: %s", op->path,
                               op->eng->state_dir, strerror(op->write_errno));
        bool full = op->write_errno == ENOSPC || op->write_errno == EDQUOT;
        enum err_code e = op->too_large ? ERR_TOO_LARGE : full ? ERR_STORAGE_FULL : ERR_INTERNAL;
        if (files_record(op, false, err_status(e), NULL, 0, msg ? msg : "failed") == 0)
            api_reply_error(r, e, "%s", msg ? msg : "failed");
        free(msg);
        files_op_free(op);
        return;
    }
    if (res->status < 0 && op->fd >= 0 && op->got > 0) {
        /* The archive had begun, so the executor answered: it cuts its stream when a file
         * fails to read mid-archive (a whole archive that looks complete would be a lie). */
        char *msg = util_strdupf(
            "the archive of %s broke off after %llu bytes (%s): the executor stops when a file "
            "in it cannot be read, as some under /sys and /proc cannot, or when the sandbox "
            "stops; download a narrower path, or see the session's state",
            op->path, (unsigned long long)op->got, res->error ? res->error : "cut");
        if (files_record(op, false, 502, NULL, 0, msg ? msg : "the archive broke off") == 0)
            api_reply_error(r, ERR_EXECUTOR_ERROR, "%s", msg ? msg : "the archive broke off");
        free(msg);
        files_op_free(op);
        return;
    }
    if (res->status < 0) {
        /* Ask Docker what became of the container: "exited (code 137)" says more than
         * "connection reset". */
        session_explain_failure(op->s, res, files_on_explained, op);
        return;
    }
    bool ok = res->status >= 200 && res->status < 300;
    char *error = NULL;
    if (!ok) {
        json_t *j = json_loadb(res->body, res->len, 0, NULL);
        const char *detail = json_string_value(json_object_get(j, "detail"));
        error = util_strdupf("executor answered %ld%s%.300s", res->status, detail ? ": " : "",
                             detail ? detail : "");
        json_decref(j);
    }
    if (ok && strcmp(op->kind, "upload") == 0)
        files_upload_path(op, res->body, res->len);
    const char *ctype = http_result_header(res, "Content-Type");
    if (files_record(op, ok, (unsigned)res->status, res->body, res->len, error) == 0) {
        if (ok && op->fd >= 0) {
            const char *disp = http_result_header(res, "Content-Disposition");
            char *disp_copy = disp ? strdup(disp) : NULL;
            api_reply_fd(r, 200, op->fd, op->got, ctype ? ctype : "application/zip");
            api_reply_header(r, "Content-Disposition", disp_copy);
            free(disp_copy);
            op->fd = -1; /* the reply owns it */
        } else {
            api_reply_raw(r, (unsigned)res->status, res->body, res->len,
                          ctype ? ctype : "application/json");
        }
    }
    free(error);
    files_op_free(op);
}

static void files_forward(struct files_op *op, const struct http_request *req)
{
    if (op->s->driver->executor_request(op->s, req, files_on_done, op) < 0) {
        struct http_result res = {.status = -1, .error = "cannot start a request"};
        files_on_done(&res, op);
    }
}

/* ---- upload ---- */

void files_route_upload(struct api_req *r)
{
    struct session *s = api_live_session(r);
    if (!s)
        return;
    const char *ctype = api_req_header(r, "Content-Type");
    if (!ctype || !*ctype) {
        api_reply_error(r, ERR_BAD_REQUEST,
                        "upload_file takes a multipart/form-data body with the file in the field "
                        "\"file\" (no Content-Type given)");
        return;
    }
    if (strlen(ctype) > FILES_CTYPE_MAX) {
        api_reply_error(r, ERR_BAD_REQUEST, "the Content-Type is longer than %d bytes",
                        FILES_CTYPE_MAX);
        return;
    }
    const char *dest = api_req_query(r, "destination");
    const char *recursive = api_req_query(r, "recursive");
    size_t len;
    const char *body = api_req_body(r, &len);
    json_t *args = json_pack("{s:s,s:s?,s:I}", "destination", dest ? dest : "/", "recursive",
                             recursive, "size", (json_int_t)len);
    struct files_op *op = files_begin(r, s, "upload", dest ? dest : "/", args);
    json_decref(args);
    if (!op)
        return;
    op->size = len;
    char *d = dest ? files_escape(dest) : NULL;
    char *rc = recursive ? files_escape(recursive) : NULL;
    char *url =
        util_strdupf("http://executor/upload_file%s%s%s%s", d ? "?destination=" : "", d ? d : "",
                     rc ? (d ? "&recursive=" : "?recursive=") : "", rc ? rc : "");
    free(d);
    free(rc);
    /* The executor allows 64 MiB and OpenHands' client waits 300 s. */
    struct http_request req = {.method = "POST",
                               .url = url ? url : "http://executor/upload_file",
                               .body = body,
                               .body_len = len,
                               .content_type = ctype,
                               .timeout_ms = 330000};
    files_forward(op, &req);
    free(url);
}

/* ---- download ---- */

static int files_on_data(const char *data, size_t len, void *ud)
{
    struct files_op *op = ud;
    if (op->got + len > op->max) {
        op->too_large = true;
        return -1;
    }
    if (io_write_all(op->fd, data, len) < 0) {
        op->write_errno = errno;
        return -1;
    }
    op->got += len;
    return 0;
}

/* An unlinked file under the state dir: gone with the reply, or with the engine. */
static int files_spool(const char *dir)
{
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
        return fd;
    char *tmpl = util_strdupf("%s/.download-XXXXXX", dir);
    fd = tmpl ? mkostemp(tmpl, O_CLOEXEC) : -1;
    if (fd >= 0)
        unlink(tmpl);
    free(tmpl);
    return fd;
}

static uint64_t files_download_max(void)
{
    const char *v = getenv("PADDOCK_DOWNLOAD_MAX");
    char *end = NULL;
    unsigned long long n = v && *v ? strtoull(v, &end, 10) : 0;
    return n > 0 && end && !*end ? n : FILES_DOWNLOAD_MAX;
}

void files_route_download(struct api_req *r)
{
    struct session *s = api_live_session(r);
    if (!s)
        return;
    const char *path = api_req_query(r, "path");
    if (!path || !*path) {
        api_reply_error(r, ERR_BAD_REQUEST,
                        "download_files needs ?path=<absolute path> of a file or directory");
        return;
    }
    json_t *args = json_pack("{s:s}", "path", path);
    struct files_op *op = files_begin(r, s, "download", path, args);
    json_decref(args);
    if (!op)
        return;
    op->max = files_download_max();
    op->fd = files_spool(op->eng->state_dir);
    if (op->fd < 0) {
        op->write_errno = errno;
        struct http_result res = {.status = -1, .error = "no spool file"};
        files_on_done(&res, op);
        return;
    }
    char *p = files_escape(path);
    char *url = p ? util_strdupf("http://executor/download_files?path=%s", p) : NULL;
    free(p);
    if (!url) {
        struct http_result res = {.status = -1, .error = "out of memory"};
        files_on_done(&res, op);
        return;
    }
    /* The archive streams as it is made; an hour guards only a hung sandbox. */
    struct http_request req = {
        .method = "GET", .url = url, .timeout_ms = 3600000, .on_data = files_on_data};
    files_forward(op, &req);
    free(url);
}

/* ---- listing ---- */

void files_route_list(struct api_req *r)
{
    struct session *s = api_live_session(r);
    if (!s)
        return;
    json_t *body = api_req_json(r, 1);
    if (!body)
        return;
    json_t *p = json_object_get(body, "path");
    if (p && !json_is_string(p) && !json_is_null(p)) {
        api_reply_error(r, ERR_BAD_REQUEST, "\"path\" must be a string (or null: %s)",
                        FILES_WORKSPACE);
        json_decref(body);
        return;
    }
    const char *path = json_string_value(p);
    struct files_op *op =
        files_begin(r, s, "list_files", path && *path ? path : FILES_WORKSPACE, body);
    json_decref(body);
    if (!op)
        return;
    size_t len;
    const char *raw = api_req_body(r, &len);
    bool empty = strspn(raw, " \t\r\n") == len;
    struct http_request req = {.method = "POST",
                               .url = "http://executor/list_files",
                               .body = empty ? "{}" : raw,
                               .body_len = empty ? 2 : len,
                               .timeout_ms = 30000};
    files_forward(op, &req);
}

/* ---- probes ---- */

static void files_probe(struct api_req *r, struct session *s, const char *what, long timeout_ms)
{
    struct files_op *op = files_begin(r, s, what, what, NULL);
    if (!op)
        return;
    char url[64];
    snprintf(url, sizeof(url), "http://executor/%s", what);
    struct http_request req = {.method = "GET", .url = url, .timeout_ms = timeout_ms};
    files_forward(op, &req);
}

void files_route_alive(struct api_req *r)
{
    struct session *s = api_live_session(r);
    if (!s)
        return;
    /* Not ready is "not alive (yet)": OpenHands polls until 200. */
    if (session_state(s) != SESSION_READY) {
        api_reply_error(r, ERR_UNAVAILABLE, "session %s is %s, not ready", session_id(s),
                        session_st_name(session_state(s)));
        return;
    }
    files_probe(r, s, "alive", 5000);
}

void files_route_server_info(struct api_req *r)
{
    struct session *s = api_live_session(r);
    if (s)
        files_probe(r, s, "server_info", 10000);
}
