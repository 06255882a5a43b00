/* Docker Engine API over the daemon's unix socket, pinned to API 1.41 (Debian 12's docker.io);
 * every call is asynchronous on the engine loop. */
#include "engine/docker.h"

#include "engine/docker_internal.h"
#include "engine/http.h"
#include "engine/util.h"

#include <curl/curl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DOCKER_DEFAULT_SOCKET "/var/run/docker.sock"

struct docker_call {
    docker_done_fn fn;
    void *ud;
    int demux; /* logs: decode the 8-byte stream framing */
};

const char *docker_start_hint(void)
{
    return "start it with `scripts/run` (it starts dockerd when none answers) or "
           "`dockerd &` as root";
}

struct docker *docker_new(struct http *http, const char *host)
{
    struct docker *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->http = http;
    if (!host || !*host)
        host = getenv("DOCKER_HOST");
    if (host && strncmp(host, "unix://", 7) == 0)
        d->socket = strdup(host + 7);
    else
        d->socket = strdup(DOCKER_DEFAULT_SOCKET);
    return d;
}

void docker_free(struct docker *d)
{
    if (!d)
        return;
    free(d->socket);
    free(d);
}

const char *docker_socket(const struct docker *d)
{
    return d->socket;
}

/* Docker's multiplexed stream: [type,0,0,0,len(BE32)] + payload, repeated. */
static char *docker_demux(const char *p, size_t n)
{
    char *out = malloc(n + 1);
    size_t o = 0, i = 0;
    if (!out)
        return NULL;
    while (i + 8 <= n) {
        uint32_t len = (uint32_t)(unsigned char)p[i + 4] << 24 |
                       (uint32_t)(unsigned char)p[i + 5] << 16 |
                       (uint32_t)(unsigned char)p[i + 6] << 8 | (uint32_t)(unsigned char)p[i + 7];
        i += 8;
        if (len > n - i)
            len = (uint32_t)(n - i);
        memcpy(out + o, p + i, len);
        o += len;
        i += len;
    }
    out[o] = '\0';
    return out;
}

static void docker_on_done(const struct http_result *r, void *ud)
{
    struct docker_call *call = ud;
    struct docker_reply rep = {.status = r->status, .message = ""};
    char *text = NULL;
    if (r->status < 0) {
        rep.message = r->error ? r->error : "transport error";
    } else if (call->demux && r->status == 200) {
        text = docker_demux(r->body, r->len);
        rep.message = text ? text : "";
    } else if (r->len) {
        rep.json = json_loadb(r->body, r->len, 0, NULL);
        const char *m = json_string_value(json_object_get(rep.json, "message"));
        if (m)
            rep.message = m;
        else if (!rep.json)
            rep.message = r->body;
    }
    call->fn(&rep, call->ud);
    json_decref(rep.json);
    free(text);
    free(call);
}

char *docker_url(const struct docker *d, const char *path)
{
    (void)d;
    return util_strdupf("http://docker/" DOCKER_API "%s", path);
}

void docker_fill_request(const struct docker *d, struct http_request *req)
{
    req->unix_socket = d->socket;
}

static int docker_call(struct docker *d, const char *method, const char *path, json_t *body,
                       long timeout_ms, int demux, docker_done_fn fn, void *ud)
{
    struct docker_call *call = calloc(1, sizeof(*call));
    char *url = docker_url(d, path);
    char *payload = body ? json_dumps(body, JSON_COMPACT) : NULL;
    if (!call || !url || (body && !payload)) {
        free(call);
        free(url);
        free(payload);
        return -1;
    }
    call->fn = fn;
    call->ud = ud;
    call->demux = demux;
    struct http_request req = {
        .method = method,
        .url = url,
        .body = payload,
        .body_len = payload ? strlen(payload) : 0,
        .timeout_ms = timeout_ms,
    };
    docker_fill_request(d, &req);
    int rc = http_start(d->http, &req, docker_on_done, call);
    if (rc < 0)
        free(call);
    free(url);
    free(payload);
    return rc;
}

/* Container ids and names we pass are hex or our own names; escape anyway (no path tricks). */
char *docker_escape(const char *s)
{
    char *e = curl_easy_escape(NULL, s, 0);
    char *r = e ? strdup(e) : NULL;
    curl_free(e);
    return r;
}

int docker_ping(struct docker *d, docker_done_fn fn, void *ud)
{
    return docker_call(d, "GET", "/_ping", NULL, 5000, 0, fn, ud);
}

int docker_version(struct docker *d, docker_done_fn fn, void *ud)
{
    return docker_call(d, "GET", "/version", NULL, 5000, 0, fn, ud);
}

static int docker_call_id(struct docker *d, const char *method, const char *fmt, const char *id,
                          json_t *body, long timeout_ms, int demux, docker_done_fn fn, void *ud)
{
    char *e = docker_escape(id);
    char *path = e ? util_strdupf(fmt, e) : NULL;
    int rc = path ? docker_call(d, method, path, body, timeout_ms, demux, fn, ud) : -1;
    free(e);
    free(path);
    return rc;
}

int docker_info(struct docker *d, docker_done_fn fn, void *ud)
{
    return docker_call(d, "GET", "/info", NULL, 10000, 0, fn, ud);
}

int docker_volume_inspect(struct docker *d, const char *name, docker_done_fn fn, void *ud)
{
    return docker_call_id(d, "GET", "/volumes/%s", name, NULL, 10000, 0, fn, ud);
}

int docker_container_create(struct docker *d, const char *name, json_t *body, docker_done_fn fn,
                            void *ud)
{
    return docker_call_id(d, "POST", "/containers/create?name=%s", name, body, 60000, 0, fn, ud);
}

int docker_container_start(struct docker *d, const char *id, docker_done_fn fn, void *ud)
{
    return docker_call_id(d, "POST", "/containers/%s/start", id, NULL, 60000, 0, fn, ud);
}

int docker_container_inspect(struct docker *d, const char *id, docker_done_fn fn, void *ud)
{
    return docker_call_id(d, "GET", "/containers/%s/json", id, NULL, 10000, 0, fn, ud);
}

int docker_container_remove(struct docker *d, const char *id, docker_done_fn fn, void *ud)
{
    return docker_call_id(d, "DELETE", "/containers/%s?force=1&v=1", id, NULL, 60000, 0, fn, ud);
}

int docker_container_stop(struct docker *d, const char *id, int timeout_s, docker_done_fn fn,
                          void *ud)
{
    char fmt[64];
    snprintf(fmt, sizeof(fmt), "/containers/%%s/stop?t=%d", timeout_s);
    return docker_call_id(d, "POST", fmt, id, NULL, (timeout_s + 30) * 1000L, 0, fn, ud);
}

int docker_container_kill(struct docker *d, const char *id, const char *signal, docker_done_fn fn,
                          void *ud)
{
    char *sig = docker_escape(signal ? signal : "SIGKILL");
    char *fmt = sig ? util_strdupf("/containers/%%s/kill?signal=%s", sig) : NULL;
    int rc = fmt ? docker_call_id(d, "POST", fmt, id, NULL, 30000, 0, fn, ud) : -1;
    free(sig);
    free(fmt);
    return rc;
}

int docker_container_pause(struct docker *d, const char *id, docker_done_fn fn, void *ud)
{
    return docker_call_id(d, "POST", "/containers/%s/pause", id, NULL, 30000, 0, fn, ud);
}

int docker_container_unpause(struct docker *d, const char *id, docker_done_fn fn, void *ud)
{
    return docker_call_id(d, "POST", "/containers/%s/unpause", id, NULL, 30000, 0, fn, ud);
}

int docker_container_wait(struct docker *d, const char *id, docker_done_fn fn, void *ud)
{
    return docker_call_id(d, "POST", "/containers/%s/wait?condition=not-running", id, NULL, 0, 0,
                          fn, ud);
}

int docker_container_list(struct docker *d, const char *label, docker_done_fn fn, void *ud)
{
    json_t *f = json_pack("{s:[s]}", "label", label);
    char *fj = f ? json_dumps(f, JSON_COMPACT) : NULL;
    char *e = fj ? docker_escape(fj) : NULL;
    char *path = e ? util_strdupf("/containers/json?all=1&filters=%s", e) : NULL;
    int rc = path ? docker_call(d, "GET", path, NULL, 30000, 0, fn, ud) : -1;
    json_decref(f);
    free(fj);
    free(e);
    free(path);
    return rc;
}

int docker_container_logs_tail(struct docker *d, const char *id, int tail, docker_done_fn fn,
                               void *ud)
{
    char fmt[96];
    snprintf(fmt, sizeof(fmt), "/containers/%%s/logs?stdout=1&stderr=1&tail=%d", tail);
    return docker_call_id(d, "GET", fmt, id, NULL, 10000, 1, fn, ud);
}
