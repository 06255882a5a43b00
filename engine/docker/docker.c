/* Docker Engine API client: the daemon's address (DOCKER_HOST: unix socket, TCP, TLS), the API
 * version negotiated with /_ping and /version before the first call, and the one-shot calls.
 * Every call is asynchronous on the engine loop. */
#include "engine/docker/docker.h"

#include "common/buf.h"
#include "engine/base/loop.h"
#include "engine/base/util.h"
#include "engine/docker/docker_internal.h"
#include "engine/docker/http.h"

#include <curl/curl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DOCKER_DEFAULT_SOCKET "/var/run/docker.sock"

/* ---- the daemon's address ---- */

const char *docker_start_hint(void)
{
    return "start it with `scripts/run` (it starts dockerd when none answers) or "
           "`dockerd &` as root";
}

const char *docker_hint(const struct docker *d)
{
    if (!d->tcp)
        return docker_start_hint();
    return d->use_tls
               ? "check that dockerd listens there (`dockerd -H tcp://HOST:2376 --tlsverify "
                 "--tlscacert ca.pem --tlscert server-cert.pem --tlskey server-key.pem`) "
                 "and DOCKER_HOST, DOCKER_TLS_VERIFY and DOCKER_CERT_PATH (ca.pem, cert.pem, "
                 "key.pem)"
               : "check that dockerd listens there (`dockerd -H tcp://HOST:2375`) and "
                 "DOCKER_HOST; for TLS set DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH";
}

static void docker_config_fail(struct docker *d, char *msg)
{
    if (!d->config_error)
        d->config_error = msg;
    else
        free(msg);
}

static char *docker_cert_file(struct docker *d, const char *name, bool required)
{
    char *p = util_strdupf("%s/%s", d->cert_dir, name);
    if (p && access(p, R_OK) == 0)
        return p;
    if (p && required)
        docker_config_fail(d, util_strdupf("DOCKER_TLS_VERIFY is set but %s cannot be read "
                                           "(DOCKER_CERT_PATH=%s)",
                                           p, d->cert_dir));
    free(p);
    return NULL;
}

/* As the docker CLI: DOCKER_TLS_VERIFY (any non-empty value) verifies the daemon against
 * DOCKER_CERT_PATH/ca.pem (default ~/.docker) and presents cert.pem/key.pem when present;
 * DOCKER_TLS alone encrypts without verifying. */
static void docker_setup_tls(struct docker *d)
{
    const char *verify = getenv("DOCKER_TLS_VERIFY");
    const char *tls = getenv("DOCKER_TLS");
    d->tls.verify = verify && *verify;
    d->use_tls = d->tls.verify || (tls && *tls);
    if (!d->use_tls)
        return;
    const char *dir = getenv("DOCKER_CERT_PATH");
    const char *home = getenv("HOME");
    d->cert_dir = dir && *dir ? strdup(dir) : util_strdupf("%s/.docker", home ? home : "");
    if (!d->cert_dir)
        return;
    d->tls_ca = docker_cert_file(d, "ca.pem", d->tls.verify);
    char *cert = docker_cert_file(d, "cert.pem", false);
    char *key = docker_cert_file(d, "key.pem", false);
    if (cert && key) {
        d->tls_cert = cert;
        d->tls_key = key;
    } else {
        free(cert);
        free(key);
    }
    d->tls.ca_file = d->tls_ca;
    d->tls.cert_file = d->tls_cert;
    d->tls.key_file = d->tls_key;
}

/* tcp://HOST[:PORT][/] with HOST a name, an IPv4 address or [IPv6]. */
static void docker_parse_tcp(struct docker *d, const char *host)
{
    const char *p = host + 6;
    size_t n = strcspn(p, "/?#");
    char *hp = strndup(p, n);
    if (!hp)
        return;
    const char *colon = strrchr(hp, ':');
    const char *bracket = strrchr(hp, ']');
    bool has_port = colon && (!bracket || colon > bracket);
    if (!*hp || (has_port && (colon == hp || !colon[1] ||
                              strspn(colon + 1, "0123456789") != strlen(colon + 1)))) {
        docker_config_fail(d, util_strdupf("DOCKER_HOST=%s: expected tcp://HOST:PORT", host));
        free(hp);
        return;
    }
    d->tcp = true;
    docker_setup_tls(d);
    d->host_port = has_port ? strdup(hp) : util_strdupf("%s:%d", hp, d->use_tls ? 2376 : 2375);
    d->base =
        d->host_port ? util_strdupf("%s://%s", d->use_tls ? "https" : "http", d->host_port) : NULL;
    d->address = d->host_port ? util_strdupf("tcp://%s", d->host_port) : NULL;
    free(hp);
}

static void docker_parse_host(struct docker *d, const char *host)
{
    if (!host || !*host)
        host = getenv("DOCKER_HOST");
    if (!host || !*host)
        host = "unix://" DOCKER_DEFAULT_SOCKET;
    if (strncmp(host, "tcp://", 6) == 0) {
        docker_parse_tcp(d, host);
    } else if (strncmp(host, "unix://", 7) == 0 || host[0] == '/') {
        const char *path = host[0] == '/' ? host : host + 7;
        if (!*path)
            docker_config_fail(d, util_strdupf("DOCKER_HOST=%s: no socket path", host));
        d->socket = strdup(*path ? path : DOCKER_DEFAULT_SOCKET);
    } else {
        docker_config_fail(d, util_strdupf("DOCKER_HOST=%s is not supported: use unix:///PATH or "
                                           "tcp://HOST:PORT (TLS: DOCKER_TLS_VERIFY=1, "
                                           "DOCKER_CERT_PATH)",
                                           host));
    }
    if (!d->address && !d->tcp) {
        d->socket = d->socket ? d->socket : strdup(DOCKER_DEFAULT_SOCKET);
        d->address = d->socket ? strdup(d->socket) : NULL;
        d->base = strdup("http://docker");
        d->host_port = strdup("docker");
    } else if (!d->address) {
        d->address = strdup(host);
        d->base = strdup("http://invalid");
        d->host_port = strdup("invalid");
    }
}

struct docker *docker_new(struct http *http, const char *host)
{
    struct docker *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->http = http;
    snprintf(d->version, sizeof(d->version), "%d.%d", DOCKER_API_MIN / 1000, DOCKER_API_MIN % 1000);
    snprintf(d->prefix, sizeof(d->prefix), "/v%s", d->version);
    docker_parse_host(d, host);
    if (!d->address || !d->base || !d->host_port) {
        docker_free(d);
        return NULL;
    }
    return d;
}

static void docker_req_free(struct docker_req *r);

void docker_free(struct docker *d)
{
    if (!d)
        return;
    /* Whatever is still pending is dropped without its callback (the engine finishes its
     * requests with http_cancel_all first). */
    if (d->neg_call)
        http_cancel(d->http, d->neg_call);
    while (d->running)
        docker_req_cancel(d, d->running);
    while (d->waiting)
        docker_req_cancel(d, d->waiting);
    docker_exec_close_all(d);
    if (d->fail_timer)
        loop_timer_cancel(http_loop(d->http), d->fail_timer);
    free(d->address);
    free(d->socket);
    free(d->base);
    free(d->host_port);
    free(d->tls_ca);
    free(d->tls_cert);
    free(d->tls_key);
    free(d->cert_dir);
    free(d->config_error);
    free(d);
}

const char *docker_socket(const struct docker *d)
{
    return d->address;
}

const char *docker_api_version(const struct docker *d)
{
    return d->neg == DOCKER_NEG_DONE ? d->version : NULL;
}

char *docker_url(const struct docker *d, const char *path)
{
    return util_strdupf("%s%s%s", d->base, d->prefix, path);
}

void docker_fill_request(const struct docker *d, struct http_request *req)
{
    req->unix_socket = d->socket;
    req->tls = d->use_tls ? &d->tls : NULL;
}

/* Container ids and names we pass are hex or our own names; escape anyway (no path tricks). */
char *docker_escape(const char *s)
{
    char *e = curl_easy_escape(NULL, s, 0);
    char *r = e ? strdup(e) : NULL;
    curl_free(e);
    return r;
}

int docker_parse_version(const char *s)
{
    unsigned major, minor;
    char extra;
    if (!s || sscanf(s, "%u.%u%c", &major, &minor, &extra) != 2 || major > 99 || minor > 999)
        return 0;
    return (int)(major * 1000 + minor);
}

char *docker_explain_tls(const struct docker *d, const char *error)
{
    return util_strdupf("TLS with %s failed: %s (DOCKER_CERT_PATH=%s: ca.pem must be the CA that "
                        "signed the daemon's certificate, and the daemon must accept cert.pem)",
                        d->address, error ? error : "handshake failed",
                        d->cert_dir ? d->cert_dir : "unset");
}

static char *docker_explain(const struct docker *d, const struct http_result *res)
{
    return res->status < 0 && res->tls_failed ? docker_explain_tls(d, res->error) : NULL;
}

/* ---- requests held until the version is negotiated ---- */

struct docker_req {
    struct docker *d;
    struct docker_req *next, *prev;
    struct docker_req **list; /* d->waiting, d->failing or d->running */
    char *path;
    char *method;
    char *body;
    size_t body_len;
    char *content_type;
    char **headers;
    long timeout_ms, idle_timeout_ms;
    http_data_fn on_data;
    http_done_fn fn;
    void *ud;
    struct http_call *call;
};

static void req_link(struct docker_req *r, struct docker_req **list)
{
    r->list = list;
    r->prev = NULL;
    r->next = *list;
    if (*list)
        (*list)->prev = r;
    *list = r;
}

static void req_unlink(struct docker_req *r)
{
    if (!r->list)
        return;
    if (r->prev)
        r->prev->next = r->next;
    else
        *r->list = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->list = NULL;
    r->next = r->prev = NULL;
}

static void docker_req_free(struct docker_req *r)
{
    free(r->path);
    free(r->method);
    free(r->body);
    free(r->content_type);
    for (char **h = r->headers; h && *h; h++)
        free(*h);
    free(r->headers);
    free(r);
}

static int req_on_data(const char *p, size_t n, void *ud)
{
    struct docker_req *r = ud;
    return r->on_data(p, n, r->ud);
}

static void docker_negotiate(struct docker *d);

static void req_on_done(const struct http_result *res, void *ud)
{
    struct docker_req *r = ud;
    struct docker *d = r->d;
    req_unlink(r);
    /* The daemon went away: it may come back as another version, so ask again next time. */
    if (res->status < 0 && res->connect_failed && d->neg == DOCKER_NEG_DONE)
        d->neg = DOCKER_NEG_NONE;
    char *why = docker_explain(d, res);
    struct http_result explained = *res;
    if (why)
        explained.error = why;
    r->fn(&explained, r->ud);
    free(why);
    docker_req_free(r);
}

/* Start a held request now that the version is known; -1 when libcurl would not. */
static int req_send(struct docker_req *r)
{
    struct docker *d = r->d;
    char *url = docker_url(d, r->path);
    if (!url)
        return -1;
    struct http_request req = {
        .method = r->method,
        .url = url,
        .body = r->body,
        .body_len = r->body_len,
        .content_type = r->content_type,
        .timeout_ms = r->timeout_ms,
        .idle_timeout_ms = r->idle_timeout_ms,
        .headers = (const char *const *)r->headers,
        .on_data = r->on_data ? req_on_data : NULL,
    };
    docker_fill_request(d, &req);
    r->call = http_start_call(d->http, &req, req_on_done, r);
    free(url);
    if (!r->call)
        return -1;
    req_link(r, &d->running);
    return 0;
}

static struct docker_req *req_copy(struct docker *d, const char *path,
                                   const struct http_request *in, http_done_fn fn, void *ud)
{
    struct docker_req *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->d = d;
    r->fn = fn;
    r->ud = ud;
    r->on_data = in->on_data;
    r->timeout_ms = in->timeout_ms;
    r->idle_timeout_ms = in->idle_timeout_ms;
    r->body_len = in->body_len;
    r->path = strdup(path);
    r->method = strdup(in->method ? in->method : "GET");
    bool ok = r->path && r->method;
    if (in->body && (r->body = malloc(in->body_len + 1))) {
        memcpy(r->body, in->body, in->body_len);
        r->body[in->body_len] = '\0';
    } else if (in->body) {
        ok = false;
    }
    if (in->content_type && !(r->content_type = strdup(in->content_type)))
        ok = false;
    size_t nh = 0;
    while (in->headers && in->headers[nh])
        nh++;
    if (nh && (r->headers = calloc(nh + 1, sizeof(char *))))
        for (size_t i = 0; i < nh; i++)
            ok = (r->headers[i] = strdup(in->headers[i])) && ok;
    else if (nh)
        ok = false;
    if (!ok) {
        docker_req_free(r);
        return NULL;
    }
    return r;
}

struct docker_req *docker_req_start(struct docker *d, const char *path,
                                    const struct http_request *in, http_done_fn fn, void *ud)
{
    struct docker_req *r = req_copy(d, path, in, fn, ud);
    if (!r)
        return NULL;
    if (d->neg == DOCKER_NEG_DONE) {
        if (req_send(r) < 0) {
            docker_req_free(r);
            return NULL;
        }
        return r;
    }
    req_link(r, &d->waiting);
    if (d->neg == DOCKER_NEG_NONE)
        docker_negotiate(d);
    return r;
}

void docker_req_cancel(struct docker *d, struct docker_req *r)
{
    if (!r)
        return;
    req_unlink(r);
    if (r->call)
        http_cancel(d->http, r->call);
    docker_req_free(r);
}

/* ---- version negotiation ---- */

/* Tell every held request why no version could be agreed on (status -1: unreachable, 400: no
 * common version, with {"message"} like the daemon's own refusal). */
static void neg_fail(struct docker *d, const struct http_result *res)
{
    d->neg = DOCKER_NEG_NONE; /* the next request asks again */
    while (d->waiting) {
        struct docker_req *r = d->waiting;
        req_unlink(r);
        req_link(r, &d->failing);
    }
    char *why = docker_explain(d, res);
    struct http_result explained = *res;
    if (why)
        explained.error = why;
    explained.priv = NULL;
    while (d->failing) {
        struct docker_req *r = d->failing;
        req_unlink(r);
        r->fn(&explained, r->ud);
        docker_req_free(r);
    }
    free(why);
}

static void neg_fail_version(struct docker *d, const char *fmt, const char *a, const char *b)
{
    char *why = util_strdupf(fmt, a, b);
    json_t *j = json_pack("{s:s}", "message", why ? why : "no common Docker API version");
    char *body = j ? json_dumps(j, JSON_COMPACT) : NULL;
    struct http_result res = {
        .status = 400, .body = body ? body : "", .len = body ? strlen(body) : 0};
    neg_fail(d, &res);
    json_decref(j);
    free(body);
    free(why);
}

static void neg_done(struct docker *d, int api)
{
    d->api = api;
    d->neg = DOCKER_NEG_DONE;
    snprintf(d->version, sizeof(d->version), "%d.%d", api / 1000, api % 1000);
    snprintf(d->prefix, sizeof(d->prefix), "/v%s", d->version);
    while (d->waiting) {
        struct docker_req *r = d->waiting;
        req_unlink(r);
        if (req_send(r) < 0) {
            struct http_result res = {.status = -1, .body = "", .error = "out of memory"};
            r->fn(&res, r->ud);
            docker_req_free(r);
        }
    }
}

static void neg_on_version(const struct http_result *res, void *ud)
{
    struct docker *d = ud;
    d->neg_call = NULL;
    if (res->status < 0) {
        neg_fail(d, res);
        return;
    }
    json_t *j = json_loadb(res->body, res->len, 0, NULL);
    const char *msg = json_string_value(json_object_get(j, "message"));
    const char *smax_s = json_string_value(json_object_get(j, "ApiVersion"));
    const char *smin_s = json_string_value(json_object_get(j, "MinAPIVersion"));
    int smax = docker_parse_version(smax_s), smin = docker_parse_version(smin_s);
    const char *ours = DOCKER_API_RANGE;
    if (res->status != 200 || !smax) {
        neg_fail_version(d,
                         "Docker daemon refused the API version paddock asked for (%s); "
                         "paddock speaks Docker API %s",
                         msg ? msg : res->body, ours);
    } else if (smax < DOCKER_API_MIN) {
        neg_fail_version(d,
                         "Docker daemon is too old: it speaks API %s at most, paddock needs "
                         "API %s (Docker 20.10 or newer); upgrade Docker",
                         smax_s, ours);
    } else if (smin > DOCKER_API_MAX) {
        neg_fail_version(d,
                         "Docker daemon is too new: it accepts API %s or newer only, paddock "
                         "speaks API %s; upgrade paddock",
                         smin_s, ours);
    } else {
        neg_done(d, smax < DOCKER_API_MAX ? smax : DOCKER_API_MAX);
    }
    json_decref(j);
}

static int neg_get(struct docker *d, const char *path, http_done_fn fn)
{
    char *url = util_strdupf("%s%s", d->base, path);
    if (!url)
        return -1;
    struct http_request req = {.method = "GET", .url = url, .timeout_ms = 10000};
    docker_fill_request(d, &req);
    d->neg_call = http_start_call(d->http, &req, fn, d);
    free(url);
    return d->neg_call ? 0 : -1;
}

/* /_ping (unversioned) gives the daemon's newest version in its API-Version header; then
 * /version under the candidate confirms it and gives MinAPIVersion. */
static void neg_on_ping(const struct http_result *res, void *ud)
{
    struct docker *d = ud;
    d->neg_call = NULL;
    if (res->status < 0) {
        neg_fail(d, res);
        return;
    }
    const char *smax_s = http_result_header(res, "API-Version");
    int smax = docker_parse_version(smax_s);
    if (smax && smax < DOCKER_API_MIN) {
        neg_fail_version(d,
                         "Docker daemon is too old: it speaks API %s at most, paddock needs API "
                         "%s (Docker 20.10 or newer); upgrade Docker",
                         smax_s, DOCKER_API_RANGE);
        return;
    }
    char path[32] = "/version"; /* no header (a proxy dropped it): the daemon's own version */
    if (smax) {
        int cand = smax < DOCKER_API_MAX ? smax : DOCKER_API_MAX;
        snprintf(path, sizeof(path), "/v%d.%d/version", cand / 1000, cand % 1000);
    }
    if (neg_get(d, path, neg_on_version) < 0) {
        struct http_result fail = {.status = -1, .body = "", .error = "out of memory"};
        neg_fail(d, &fail);
    }
}

static void neg_on_config_error(void *ud)
{
    struct docker *d = ud;
    d->fail_timer = NULL;
    struct http_result res = {
        .status = -1, .body = "", .error = d->config_error ? d->config_error : "out of memory"};
    neg_fail(d, &res);
}

static void docker_negotiate(struct docker *d)
{
    d->neg = DOCKER_NEG_RUNNING;
    if (d->config_error) {
        if (!d->fail_timer)
            d->fail_timer = loop_timer_add(http_loop(d->http), 0, neg_on_config_error, d);
        return;
    }
    if (neg_get(d, "/_ping", neg_on_ping) < 0) {
        /* Report from the loop like any failure: callers expect their callback later. */
        if (!d->fail_timer)
            d->fail_timer = loop_timer_add(http_loop(d->http), 0, neg_on_config_error, d);
    }
}

/* ---- one-shot calls ---- */

struct docker_call {
    docker_done_fn fn;
    void *ud;
    int demux; /* logs: decode the 8-byte stream framing */
};

int docker_demux_feed(struct docker_demux *dm, const char *p, size_t n, docker_demux_fn fn,
                      void *ud)
{
    while (n) {
        if (dm->remaining == 0) {
            size_t take = 8 - dm->hdr_len < n ? 8 - dm->hdr_len : n;
            memcpy(dm->hdr + dm->hdr_len, p, take);
            dm->hdr_len += take;
            p += take;
            n -= take;
            if (dm->hdr_len < 8)
                return 0;
            dm->hdr_len = 0;
            dm->fd = dm->hdr[0] == 2 ? 2 : 1;
            dm->remaining = (uint32_t)dm->hdr[4] << 24 | (uint32_t)dm->hdr[5] << 16 |
                            (uint32_t)dm->hdr[6] << 8 | dm->hdr[7];
            continue;
        }
        size_t take = dm->remaining < n ? dm->remaining : n;
        if (fn(p, take, dm->fd, ud) < 0)
            return -1;
        dm->remaining -= (uint32_t)take;
        p += take;
        n -= take;
    }
    return 0;
}

static int demux_append(const char *p, size_t n, int fd, void *ud)
{
    return buf_append(ud, p, n);
}

static void docker_on_done(const struct http_result *r, void *ud)
{
    struct docker_call *call = ud;
    struct docker_reply rep = {.status = r->status, .message = ""};
    struct buf text = {0};
    if (r->status < 0) {
        rep.message = r->error ? r->error : "transport error";
    } else if (call->demux && r->status == 200) {
        struct docker_demux dm = {0};
        docker_demux_feed(&dm, r->body, r->len, demux_append, &text);
        rep.message = text.data ? text.data : "";
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
    buf_free(&text);
    free(call);
}

static void docker_ignore_reply(const struct docker_reply *r, void *ud)
{
}

int docker_call(struct docker *d, const char *method, const char *path, json_t *body,
                long timeout_ms, int demux, docker_done_fn fn, void *ud)
{
    struct docker_call *call = calloc(1, sizeof(*call));
    char *payload = body ? json_dumps(body, JSON_COMPACT) : NULL;
    if (!call || (body && !payload)) {
        free(call);
        free(payload);
        return -1;
    }
    call->fn = fn ? fn : docker_ignore_reply;
    call->ud = ud;
    call->demux = demux;
    struct http_request req = {
        .method = method,
        .body = payload,
        .body_len = payload ? strlen(payload) : 0,
        .timeout_ms = timeout_ms,
    };
    struct docker_req *r = docker_req_start(d, path, &req, docker_on_done, call);
    if (!r)
        free(call);
    free(payload);
    return r ? 0 : -1;
}

int docker_ping(struct docker *d, docker_done_fn fn, void *ud)
{
    return docker_call(d, "GET", "/_ping", NULL, 5000, 0, fn, ud);
}

int docker_version(struct docker *d, docker_done_fn fn, void *ud)
{
    return docker_call(d, "GET", "/version", NULL, 5000, 0, fn, ud);
}

int docker_call_id(struct docker *d, const char *method, const char *fmt, const char *id,
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

int docker_container_create(struct docker *d, const char *name, const char *platform, json_t *body,
                            docker_done_fn fn, void *ud)
{
    char *en = docker_escape(name);
    char *ep = platform ? docker_escape(platform) : NULL;
    char *path = en && (!platform || ep) ? util_strdupf("/containers/create?name=%s%s%s", en,
                                                        ep ? "&platform=" : "", ep ? ep : "")
                                         : NULL;
    int rc = path ? docker_call(d, "POST", path, body, 60000, 0, fn, ud) : -1;
    free(en);
    free(ep);
    free(path);
    return rc;
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

int docker_container_rename(struct docker *d, const char *id, const char *name, docker_done_fn fn,
                            void *ud)
{
    char *n = docker_escape(name);
    char *fmt = n ? util_strdupf("/containers/%%s/rename?name=%s", n) : NULL;
    int rc = fmt ? docker_call_id(d, "POST", fmt, id, NULL, 30000, 0, fn, ud) : -1;
    free(n);
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

int docker_container_wait_timeout(struct docker *d, const char *id, long timeout_ms,
                                  docker_done_fn fn, void *ud)
{
    return docker_call_id(d, "POST", "/containers/%s/wait?condition=not-running", id, NULL,
                          timeout_ms, 0, fn, ud);
}

char *docker_label_filter(const char *label, const char *type)
{
    json_t *f = json_pack("{s:[s]}", "label", label);
    if (f && type)
        json_object_set_new(f, "type", json_pack("[s]", type));
    char *fj = f ? json_dumps(f, JSON_COMPACT) : NULL;
    char *e = fj ? docker_escape(fj) : NULL;
    json_decref(f);
    free(fj);
    return e;
}

int docker_call_filtered(struct docker *d, const char *fmt, const char *label, docker_done_fn fn,
                         void *ud)
{
    char *e = docker_label_filter(label, NULL);
    char *path = e ? util_strdupf(fmt, e) : NULL;
    int rc = path ? docker_call(d, "GET", path, NULL, 30000, 0, fn, ud) : -1;
    free(e);
    free(path);
    return rc;
}

int docker_container_list(struct docker *d, const char *label, docker_done_fn fn, void *ud)
{
    return docker_call_filtered(d, "/containers/json?all=1&filters=%s", label, fn, ud);
}

int docker_container_logs_tail(struct docker *d, const char *id, int tail, docker_done_fn fn,
                               void *ud)
{
    char fmt[96];
    snprintf(fmt, sizeof(fmt), "/containers/%%s/logs?stdout=1&stderr=1&tail=%d", tail);
    return docker_call_id(d, "GET", fmt, id, NULL, 10000, 1, fn, ud);
}

int docker_container_changes(struct docker *d, const char *id, docker_done_fn fn, void *ud)
{
    return docker_call_id(d, "GET", "/containers/%s/changes", id, NULL, 60000, 0, fn, ud);
}
