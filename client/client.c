/* Blocking engine-API client over the engine's unix socket, plus a pollable SSE reader. */
#include "client/client.h"
#include "client/client_internal.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct client {
    char *socket_path; /* or the remote engine's url */
    bool remote;
    char *auth_header; /* "Authorization: Bearer ..." of a remote engine, or NULL */
    char *ca, *cert, *key;
    CURL *curl; /* reused: keep-alive on the unix socket, and the TLS session */
    volatile int *interrupt;
};

static char *client_strdupf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

char *client_default_state_dir(void)
{
    const char *s = getenv("PADDOCK_STATE_DIR");
    if (s && *s)
        return strdup(s);
    s = getenv("XDG_STATE_HOME");
    if (s && *s)
        return client_strdupf("%s/paddock", s);
    s = getenv("HOME");
    return client_strdupf("%s/.local/state/paddock", s && *s ? s : "/tmp");
}

char *client_default_socket(const char *state_dir)
{
    const char *s = getenv("PADDOCK_SOCKET");
    if (s && *s)
        return strdup(s);
    return client_strdupf("%s/engine.sock", state_dir);
}

char *client_operator_socket(const char *state_dir)
{
    return client_strdupf("%s/operator.sock", state_dir);
}

struct client *client_new(const char *socket_path)
{
    struct client *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->socket_path = strdup(socket_path);
    c->curl = curl_easy_init();
    if (!c->socket_path || !c->curl) {
        client_free(c);
        return NULL;
    }
    return c;
}

struct client *client_new_remote(const char *url, const struct client_auth *auth, const char *ca)
{
    struct client *c = client_new(url);
    if (!c)
        return NULL;
    c->remote = true;
    /* Without a trailing slash: paths start with one. */
    size_t n = strlen(c->socket_path);
    while (n && c->socket_path[n - 1] == '/')
        c->socket_path[--n] = '\0';
    bool oom = false;
    if (auth && auth->token)
        oom |= !(c->auth_header = client_strdupf("Authorization: Bearer %s", auth->token));
    if (auth && auth->cert)
        oom |= !(c->cert = strdup(auth->cert));
    if (auth && auth->key)
        oom |= !(c->key = strdup(auth->key));
    if (ca)
        oom |= !(c->ca = strdup(ca));
    if (oom) {
        client_free(c);
        return NULL;
    }
    return c;
}

void client_free(struct client *c)
{
    if (!c)
        return;
    if (c->curl)
        curl_easy_cleanup(c->curl);
    if (c->auth_header)
        explicit_bzero(c->auth_header, strlen(c->auth_header));
    free(c->auth_header);
    free(c->ca);
    free(c->cert);
    free(c->key);
    free(c->socket_path);
    free(c);
}

const char *client_socket(const struct client *c)
{
    return c->socket_path;
}

bool client_is_remote(const struct client *c)
{
    return c->remote;
}

/* The TLS and credential options of a remote engine on h. */
static void client_setup_remote(struct client *c, CURL *h, struct curl_slist **hdrs)
{
    if (c->ca)
        curl_easy_setopt(h, CURLOPT_CAINFO, c->ca);
    if (c->cert)
        curl_easy_setopt(h, CURLOPT_SSLCERT, c->cert);
    if (c->key)
        curl_easy_setopt(h, CURLOPT_SSLKEY, c->key);
    /* Only the engine's own http(s): a redirect would carry the token elsewhere. */
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
    if (c->auth_header)
        *hdrs = curl_slist_append(*hdrs, c->auth_header);
}

void client_set_interrupt(struct client *c, volatile int *flag)
{
    c->interrupt = flag;
}

static int client_on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    volatile int *flag = ud;
    return *flag ? 1 : 0;
}

static size_t client_on_body(char *p, size_t size, size_t n, void *ud)
{
    return buf_append(ud, p, size * n) == 0 ? size * n : 0;
}

int client_xfer_setup(struct client *c, struct client_xfer *x, CURL *h, const char *method,
                      const char *path, json_t *body, long timeout_ms)
{
    char url[1024];
    memset(x, 0, sizeof(*x));
    x->h = h;
    if (c->remote)
        snprintf(url, sizeof(url), "%s%s", c->socket_path, path);
    else
        snprintf(url, sizeof(url), "http://paddock%s", path);
    curl_easy_reset(h);
    if (c->remote)
        client_setup_remote(c, h, &x->hdrs);
    else
        curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, c->socket_path);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, client_on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &x->out);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    if (timeout_ms > 0)
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    if (c->interrupt) {
        curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, client_on_progress);
        curl_easy_setopt(h, CURLOPT_XFERINFODATA, (void *)c->interrupt);
    }
    x->hdrs = curl_slist_append(x->hdrs, "Expect:");
    if (body) {
        x->payload = json_dumps(body, JSON_COMPACT);
        x->hdrs = curl_slist_append(x->hdrs, "Content-Type: application/json");
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, x->payload ? x->payload : "");
    } else if (strcmp(method, "POST") == 0) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, x->hdrs);
    return 0;
}

int client_xfer_finish(struct client *c, struct client_xfer *x, CURLcode rc, json_t **reply,
                       char **err)
{
    long status = -1;
    *reply = NULL;
    if (rc == CURLE_OK) {
        curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &status);
        if (x->out.len)
            *reply = json_loadb(x->out.data, x->out.len, 0, NULL);
    } else if (err) {
        /* A certificate the CA did not sign is said as such, with what to check. */
        bool cert = rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE;
        *err = rc == CURLE_ABORTED_BY_CALLBACK
                   ? strdup("interrupted")
                   : client_strdupf("engine at %s: %s%s%s%s", c->socket_path,
                                    x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc),
                                    cert ? " (its certificate is not signed by the CA " : "",
                                    cert ? (c->ca ? c->ca : "of the system") : "",
                                    cert ? ": check the engine's ca)" : "");
    }
    curl_slist_free_all(x->hdrs);
    free(x->payload);
    buf_free(&x->out);
    x->hdrs = NULL;
    x->payload = NULL;
    return rc == CURLE_OK ? (int)status : -1;
}

int client_request(struct client *c, const char *method, const char *path, json_t *body,
                   long timeout_ms, json_t **reply, char **err)
{
    struct client_xfer x;
    client_xfer_setup(c, &x, c->curl, method, path, body, timeout_ms);
    return client_xfer_finish(c, &x, curl_easy_perform(c->curl), reply, err);
}

const char *client_error_message(json_t *reply, const char *fallback)
{
    const char *m = json_string_value(json_object_get(json_object_get(reply, "error"), "message"));
    return m ? m : fallback;
}

const char *client_error_code(json_t *reply)
{
    return json_string_value(json_object_get(json_object_get(reply, "error"), "code"));
}

bool client_ping(struct client *c)
{
    json_t *reply = NULL;
    int st = client_request(c, "GET", "/v1/info", NULL, 2000, &reply, NULL);
    json_decref(reply);
    return st == 200;
}

static void client_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

long client_engine_holder(const char *state_dir)
{
    /* /proc/locks names the process holding a flock on the lock file's inode: no probe of
     * our own that could make a starting engine fail. */
    char path[4096];
    struct stat st;
    snprintf(path, sizeof(path), "%s/engine.lock", state_dir);
    if (stat(path, &st) < 0)
        return 0;
    FILE *f = fopen("/proc/locks", "r");
    if (!f)
        return 0;
    char line[256];
    long holder = 0;
    while (!holder && fgets(line, sizeof(line), f)) {
        char kind[16];
        long pid;
        unsigned maj, min;
        unsigned long long ino;
        /* "1: FLOCK  ADVISORY  WRITE 4242 fd:01:1234 0 EOF" ("->" marks a waiter) */
        if (strstr(line, "->") ||
            sscanf(line, "%*d: %15s %*s %*s %ld %x:%x:%llu", kind, &pid, &maj, &min, &ino) != 5)
            continue;
        if (strcmp(kind, "FLOCK") == 0 && ino == (unsigned long long)st.st_ino &&
            major(st.st_dev) == maj && minor(st.st_dev) == min)
            holder = pid;
    }
    fclose(f);
    return holder;
}

char *client_engine_diagnose(const char *socket_path, const char *state_dir)
{
    long holder = client_engine_holder(state_dir);
    if (holder > 0)
        return client_strdupf(
            "the engine with pid %ld holds the state dir %s but does not answer at %s (it is "
            "starting, stuck, or serves another socket); wait for it, or stop it (kill %ld) and "
            "try again; its log: %s/engine.log",
            holder, state_dir, socket_path, holder, state_dir);
    return client_strdupf("no engine is running for %s (nothing answers at %s)", state_dir,
                          socket_path);
}

/* The last non-empty line of a file, trimmed, into out ("" when none). */
static void client_last_line(const char *path, char *out, size_t size)
{
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0])
            snprintf(out, size, "%s", line);
    }
    fclose(f);
}

int client_ensure_engine(struct client *c, const char *self_exe, const char *state_dir,
                         const char *agent_socket, char **err)
{
    if (client_ping(c))
        return 0;
    /* An engine that holds the state dir may be starting: a moment, then say who it is. */
    for (int i = 0; i < 20 && client_engine_holder(state_dir) > 0; i++) {
        client_sleep_ms(50);
        if (client_ping(c))
            return 0;
    }
    if (client_engine_holder(state_dir) > 0) {
        *err = client_engine_diagnose(c->socket_path, state_dir);
        return -1;
    }
    if (mkdir(state_dir, 0700) < 0 && errno != EEXIST) {
        *err = client_strdupf("cannot create state dir %s: %s", state_dir, strerror(errno));
        return -1;
    }
    char *log = client_strdupf("%s/engine.log", state_dir);
    /* The engine's pid comes back through a pipe, to tell at once when it exits. */
    int pfd[2];
    if (!log || pipe2(pfd, O_CLOEXEC) < 0) {
        free(log);
        *err = client_strdupf("cannot start the engine: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        free(log);
        close(pfd[0]);
        close(pfd[1]);
        *err = client_strdupf("fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        /* Detach twice so the engine outlives us and is not our zombie. */
        close(pfd[0]);
        setsid();
        pid_t engine = fork();
        if (engine != 0) {
            (void)!write(pfd[1], &engine, sizeof(engine));
            _exit(0);
        }
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0)
            dup2(nul, 0);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execl(self_exe, self_exe, "serve", "--state-dir", state_dir, "--socket", agent_socket,
              (char *)NULL);
        _exit(127);
    }
    close(pfd[1]);
    pid_t engine = 0;
    if (read(pfd[0], &engine, sizeof(engine)) != (ssize_t)sizeof(engine))
        engine = 0;
    close(pfd[0]);
    waitpid(pid, NULL, 0);
    /* The engine binds its socket within milliseconds; back off gently up to 10 s, unless it
     * exits first (its reason is the log's last line). */
    long waited = 0, step = 2;
    while (waited < 10000) {
        if (client_ping(c)) {
            free(log);
            return 0;
        }
        if (engine > 0 && kill(engine, 0) < 0 && errno == ESRCH) {
            char last[512];
            client_last_line(log, last, sizeof(last));
            if (client_ping(c)) { /* another engine won the race, and serves */
                free(log);
                return 0;
            }
            *err = client_strdupf("the engine it started exited: %s (log: %s)",
                                  last[0] ? last : "no reason logged", log);
            free(log);
            return -1;
        }
        client_sleep_ms(step);
        waited += step;
        if (step < 100)
            step *= 2;
    }
    char *why = client_engine_diagnose(c->socket_path, state_dir);
    *err = client_strdupf("started `paddock serve` but no engine answers after 10 s: %s; see %s",
                          why ? why : "", log);
    free(why);
    free(log);
    return -1;
}

/* ---- server-sent events ---- */

struct client_events {
    int fd;
    CURL *curl; /* a remote engine's connection (TLS): read through it; else NULL */
    /* A remote stream started by client_sse_start: its connection made on the caller's loop,
     * and the request still to send while connecting is set. */
    struct client_raw conn; /* conn.h is curl then */
    char *request;
    bool connecting;
    bool headers_done;
    bool chunked;
    int status;           /* the reply's HTTP status once its headers arrived */
    long long body_left;  /* a refusal's Content-Length still to read; -1 unknown */
    char *error;          /* a refusal's message */
    size_t chunk_left;    /* bytes left in the current chunk */
    bool chunk_need_size; /* expecting a chunk-size line */
    struct buf raw;       /* bytes read, not yet de-chunked */
    struct buf text;      /* de-chunked event text, not yet dispatched */
};

CURLcode client_raw_send(CURL *h, int fd, const char *data, size_t len)
{
    while (len) {
        size_t sent = 0;
        CURLcode rc = curl_easy_send(h, data, len, &sent);
        if (rc == CURLE_AGAIN) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            if (poll(&p, 1, 10000) <= 0)
                return CURLE_OPERATION_TIMEDOUT;
            continue;
        }
        if (rc != CURLE_OK)
            return rc;
        data += sent;
        len -= sent;
    }
    return CURLE_OK;
}

CURL *client_raw_connect(struct client *c, int *fd, char **err)
{
    CURL *h = curl_easy_init();
    struct client_xfer x;
    if (!h) {
        *err = strdup("out of memory");
        return NULL;
    }
    client_xfer_setup(c, &x, h, "GET", "/", NULL, 0);
    curl_easy_setopt(h, CURLOPT_CONNECT_ONLY, 1L);
    CURLcode rc = curl_easy_perform(h);
    curl_socket_t s = CURL_SOCKET_BAD;
    if (rc == CURLE_OK && curl_easy_getinfo(h, CURLINFO_ACTIVESOCKET, &s) != CURLE_OK)
        s = CURL_SOCKET_BAD;
    if (rc == CURLE_OK && s == CURL_SOCKET_BAD)
        rc = CURLE_COULDNT_CONNECT;
    if (rc != CURLE_OK) {
        json_t *none = NULL;
        client_xfer_finish(c, &x, rc, &none, err);
        json_decref(none);
        curl_easy_cleanup(h);
        return NULL;
    }
    /* x lives on this stack: nothing of it may stay set on the handle. */
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, NULL);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(x.hdrs);
    buf_free(&x.out);
    *fd = s;
    return h;
}

int client_raw_start(struct client *c, struct client_raw *r, char **err)
{
    memset(r, 0, sizeof(*r));
    r->c = c;
    r->fd = -1;
    r->h = curl_easy_init();
    r->multi = r->h ? curl_multi_init() : NULL;
    if (!r->multi) {
        if (r->h)
            curl_easy_cleanup(r->h);
        r->h = NULL;
        *err = strdup("out of memory");
        return -1;
    }
    client_xfer_setup(c, &r->x, r->h, "GET", "/", NULL, 0);
    curl_easy_setopt(r->h, CURLOPT_CONNECT_ONLY, 1L);
    r->connecting = true;
    if (curl_multi_add_handle(r->multi, r->h) != CURLM_OK) {
        client_raw_end(r);
        *err = strdup("out of memory");
        return -1;
    }
    return 0;
}

int client_raw_step(struct client_raw *r, char **err)
{
    if (!r->connecting)
        return 1;
    int running = 0, left = 0;
    curl_multi_perform(r->multi, &running);
    CURLMsg *msg = curl_multi_info_read(r->multi, &left);
    if (!msg || msg->msg != CURLMSG_DONE)
        return 0;
    CURLcode rc = msg->data.result;
    curl_socket_t s = CURL_SOCKET_BAD;
    if (rc == CURLE_OK && curl_easy_getinfo(r->h, CURLINFO_ACTIVESOCKET, &s) != CURLE_OK)
        s = CURL_SOCKET_BAD;
    if (rc == CURLE_OK && s == CURL_SOCKET_BAD)
        rc = CURLE_COULDNT_CONNECT;
    r->connecting = false;
    if (rc != CURLE_OK) {
        json_t *none = NULL;
        client_xfer_finish(r->c, &r->x, rc, &none, err);
        json_decref(none);
        return -1;
    }
    /* x's buffers go now: nothing of them may stay set on the handle */
    curl_easy_setopt(r->h, CURLOPT_ERRORBUFFER, NULL);
    curl_easy_setopt(r->h, CURLOPT_WRITEDATA, NULL);
    curl_easy_setopt(r->h, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(r->x.hdrs);
    r->x.hdrs = NULL;
    buf_free(&r->x.out);
    r->fd = s;
    return 1;
}

int client_raw_poll_fd(const struct client_raw *r)
{
    return client_raw_poll(r, NULL);
}

int client_raw_poll(const struct client_raw *r, short *events)
{
    if (events)
        *events = POLLIN;
    if (!r->connecting)
        return r->fd;
    /* the socket curl waits on (its highest: one for an address; none while resolving) */
    fd_set rd, wr, ex;
    FD_ZERO(&rd);
    FD_ZERO(&wr);
    FD_ZERO(&ex);
    int max = -1;
    if (curl_multi_fdset(r->multi, &rd, &wr, &ex, &max) != CURLM_OK)
        max = -1;
    /* what curl waits for: a handshake waiting to read must not spin on a writable socket */
    if (events && max >= 0)
        *events = (short)((FD_ISSET(max, &rd) ? POLLIN : 0) | (FD_ISSET(max, &wr) ? POLLOUT : 0));
    return max;
}

int client_raw_timeout(const struct client_raw *r)
{
    if (!r->connecting)
        return -1;
    long ms = -1;
    curl_multi_timeout(r->multi, &ms);
    /* no socket yet (the name still resolving): look again soon */
    if (client_raw_poll_fd(r) < 0 && (ms < 0 || ms > 100))
        ms = 100;
    return ms < 0 ? -1 : (int)ms;
}

void client_raw_end(struct client_raw *r)
{
    if (!r->h)
        return;
    if (r->connecting) {
        json_t *none = NULL;
        client_xfer_finish(r->c, &r->x, CURLE_OK, &none, NULL);
        json_decref(none);
    }
    curl_multi_remove_handle(r->multi, r->h);
    curl_easy_cleanup(r->h);
    curl_multi_cleanup(r->multi); /* and with it the connect-only connection */
    r->h = NULL;
    r->multi = NULL;
    r->connecting = false;
}

char *client_raw_headers(const struct client *c)
{
    const char *host = strstr(c->socket_path, "://");
    return client_strdupf("Host: %s\r\n%s%s", host ? host + 3 : "paddock",
                          c->auth_header ? c->auth_header : "", c->auth_header ? "\r\n" : "");
}

/* The same stream from a remote engine: read by pump as from the unix socket. */
static struct client_events *events_open_remote(struct client *c, const char *path, char **err)
{
    int fd = -1;
    CURL *h = client_raw_connect(c, &fd, err);
    if (!h)
        return NULL;
    char *hdrs = client_raw_headers(c);
    char *req =
        hdrs ? client_strdupf("GET %s HTTP/1.1\r\n%sAccept: text/event-stream\r\n\r\n", path, hdrs)
             : NULL;
    CURLcode rc = req ? client_raw_send(h, fd, req, strlen(req)) : CURLE_OUT_OF_MEMORY;
    if (hdrs)
        explicit_bzero(hdrs, strlen(hdrs));
    if (req)
        explicit_bzero(req, strlen(req));
    free(hdrs);
    free(req);
    struct client_events *ev = rc == CURLE_OK ? calloc(1, sizeof(*ev)) : NULL;
    if (!ev) {
        *err = client_strdupf("engine at %s: %s", c->socket_path, curl_easy_strerror(rc));
        curl_easy_cleanup(h);
        return NULL;
    }
    ev->fd = fd;
    ev->curl = h;
    ev->chunk_need_size = true;
    return ev;
}

/* The path goes into the request line as it is: nothing that could end or split it. */
static bool client_sse_path_bad(const char *path)
{
    if (!path || path[0] != '/' || strlen(path) > 2048)
        return true;
    for (const char *p = path; *p; p++)
        if ((unsigned char)*p <= ' ' || *p == 0x7f)
            return true;
    return false;
}

/* The request head of a stream on a remote engine (with its credential); malloc'd. */
static char *events_remote_request(struct client *c, const char *path)
{
    char *hdrs = client_raw_headers(c);
    char *req =
        hdrs ? client_strdupf("GET %s HTTP/1.1\r\n%sAccept: text/event-stream\r\n\r\n", path, hdrs)
             : NULL;
    if (hdrs)
        explicit_bzero(hdrs, strlen(hdrs));
    free(hdrs);
    return req;
}

static void events_forget_request(struct client_events *ev)
{
    if (ev->request)
        explicit_bzero(ev->request, strlen(ev->request));
    free(ev->request);
    ev->request = NULL;
}

/* A remote stream whose TCP connect and TLS handshake run in its own multi, driven by
 * client_events_pump on the caller's loop: a slow or silent host never blocks it. */
static struct client_events *events_start_remote(struct client *c, const char *path, char **err)
{
    struct client_events *ev = calloc(1, sizeof(*ev));
    char *req = ev ? events_remote_request(c, path) : NULL;
    if (!req) {
        free(ev);
        *err = strdup("out of memory");
        return NULL;
    }
    if (client_raw_start(c, &ev->conn, err) < 0) {
        explicit_bzero(req, strlen(req));
        free(req);
        free(ev);
        return NULL;
    }
    ev->fd = -1;
    ev->curl = ev->conn.h;
    ev->request = req;
    ev->connecting = true;
    ev->chunk_need_size = true;
    return ev;
}

/* The connect went as far as it can for now: connected (the request sent), still under way,
 * or failed (ev->error). 0, or -1 on failure. */
static int events_connect_step(struct client_events *ev)
{
    char *why = NULL;
    int rc = client_raw_step(&ev->conn, &why);
    if (rc == 0)
        return 0;
    ev->connecting = false;
    if (rc > 0) {
        ev->fd = ev->conn.fd;
        /* a fresh socket's send buffer takes the small request at once */
        CURLcode sent = client_raw_send(ev->curl, ev->fd, ev->request, strlen(ev->request));
        events_forget_request(ev);
        if (sent == CURLE_OK)
            return 0;
        why = client_strdupf("engine at %s: %s", ev->conn.c->socket_path, curl_easy_strerror(sent));
    }
    events_forget_request(ev);
    free(ev->error);
    ev->error = why;
    return -1;
}

struct client_events *client_sse_start(struct client *c, const char *path, char **err)
{
    if (!c->remote || client_sse_path_bad(path))
        return client_sse_open(c, path, err);
    return events_start_remote(c, path, err);
}

bool client_events_connecting(const struct client_events *ev)
{
    return ev && ev->connecting;
}

short client_events_want(const struct client_events *ev)
{
    short events = POLLIN;
    if (ev && ev->connecting)
        client_raw_poll(&ev->conn, &events);
    return events;
}

int client_events_timeout(const struct client_events *ev)
{
    return ev && ev->connecting ? client_raw_timeout(&ev->conn) : -1;
}

struct client_events *client_sse_open(struct client *c, const char *path, char **err)
{
    /* The path goes into the request line as it is: nothing that could end or split it. */
    if (!path || path[0] != '/' || strlen(path) > 2048) {
        *err = client_strdupf("bad path for an event stream: %.80s", path ? path : "(null)");
        return NULL;
    }
    for (const char *p = path; *p; p++) {
        if ((unsigned char)*p <= ' ' || *p == 0x7f) {
            *err = client_strdupf("bad path for an event stream: %.80s", path);
            return NULL;
        }
    }
    if (c->remote)
        return events_open_remote(c, path, err);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(c->socket_path) >= sizeof(sa.sun_path)) {
        *err = client_strdupf("socket path too long: %s", c->socket_path);
        return NULL;
    }
    strcpy(sa.sun_path, c->socket_path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        *err = client_strdupf("engine at %s: %s", c->socket_path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    char *req = client_strdupf("GET %s HTTP/1.1\r\nHost: paddock\r\n"
                               "Accept: text/event-stream\r\n\r\n",
                               path);
    size_t reqlen = req ? strlen(req) : 0;
    if (!req || write(fd, req, reqlen) != (ssize_t)reqlen) {
        *err = client_strdupf("engine at %s: write: %s", c->socket_path,
                              req ? strerror(errno) : "out of memory");
        free(req);
        close(fd);
        return NULL;
    }
    free(req);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    struct client_events *ev = calloc(1, sizeof(*ev));
    if (!ev) {
        close(fd);
        *err = strdup("out of memory");
        return NULL;
    }
    ev->fd = fd;
    ev->chunk_need_size = true;
    return ev;
}

struct client_events *client_events_open(struct client *c, char **err)
{
    return client_sse_open(c, "/v1/events", err);
}

int client_events_fd(struct client_events *ev)
{
    if (ev && ev->connecting)
        return client_raw_poll_fd(&ev->conn);
    return ev ? ev->fd : -1;
}

int client_events_status(const struct client_events *ev)
{
    return ev ? ev->status : 0;
}

const char *client_events_error(const struct client_events *ev)
{
    return ev ? ev->error : NULL;
}

/* Move de-chunked payload from raw into text. Returns 0, 1 at the last chunk, -1 on error. */
static int events_dechunk(struct client_events *ev)
{
    while (ev->raw.len) {
        if (!ev->chunked) {
            if (buf_append(&ev->text, ev->raw.data, ev->raw.len) < 0)
                return -1;
            buf_consume(&ev->raw, ev->raw.len);
            return 0;
        }
        if (ev->chunk_need_size) {
            char *nl = memchr(ev->raw.data, '\n', ev->raw.len);
            if (!nl)
                return 0;
            unsigned long n = strtoul(ev->raw.data, NULL, 16);
            if (n == 0 && ev->raw.data[0] == '0')
                return 1; /* last chunk: stream over */
            buf_consume(&ev->raw, (size_t)(nl - ev->raw.data) + 1);
            ev->chunk_left = n;
            ev->chunk_need_size = false;
            continue;
        }
        if (ev->chunk_left) {
            size_t n = ev->raw.len < ev->chunk_left ? ev->raw.len : ev->chunk_left;
            if (buf_append(&ev->text, ev->raw.data, n) < 0)
                return -1;
            buf_consume(&ev->raw, n);
            ev->chunk_left -= n;
            continue;
        }
        /* chunk payload done: expect CRLF */
        if (ev->raw.len < 2)
            return 0;
        buf_consume(&ev->raw, 2);
        ev->chunk_need_size = true;
    }
    return 0;
}

static void events_dispatch(struct client_events *ev, client_event_fn fn, void *ud)
{
    for (;;) {
        char *end = strstr(ev->text.data ? ev->text.data : "", "\n\n");
        if (!end)
            return;
        *end = '\0';
        char type[64] = "message";
        struct buf data = {0};
        for (char *line = ev->text.data; line && *line;) {
            char *nl = strchr(line, '\n');
            if (nl)
                *nl = '\0';
            if (strncmp(line, "event:", 6) == 0) {
                const char *v = line + 6 + (line[6] == ' ');
                snprintf(type, sizeof(type), "%s", v);
            } else if (strncmp(line, "data:", 5) == 0) {
                const char *v = line + 5 + (line[5] == ' ');
                buf_append(&data, v, strlen(v));
            }
            line = nl ? nl + 1 : NULL;
        }
        if (data.len) {
            json_t *j = json_loadb(data.data, data.len, 0, NULL);
            if (j) {
                fn(type, j, ud);
                json_decref(j);
            }
        }
        free(data.data);
        buf_consume(&ev->text, (size_t)(end - ev->text.data) + 2);
    }
}

/* A refusal's body (any status but 200) is the engine's error: keep its message. */
static void events_refused(struct client_events *ev)
{
    json_t *j = ev->text.len ? json_loadb(ev->text.data, ev->text.len, 0, NULL) : NULL;
    char fallback[48];
    snprintf(fallback, sizeof(fallback), "the engine answered HTTP %d", ev->status);
    free(ev->error);
    ev->error = strdup(client_error_message(j, fallback));
    json_decref(j);
}

/* The reply's status line and headers. 1 read, 0 not all there yet, -1 not HTTP. */
static int events_headers(struct client_events *ev)
{
    char *end = strstr(ev->raw.data, "\r\n\r\n");
    if (!end)
        return 0;
    *end = '\0';
    for (char *p = ev->raw.data; *p; p++)
        *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
    int status = 0;
    if (sscanf(ev->raw.data, "http/1.%*d %d", &status) != 1 || status < 100)
        return -1;
    ev->status = status;
    ev->chunked = strstr(ev->raw.data, "transfer-encoding: chunked") != NULL;
    const char *cl = strstr(ev->raw.data, "\r\ncontent-length:");
    ev->body_left = cl ? strtoll(cl + 17, NULL, 10) : -1;
    ev->headers_done = true;
    buf_consume(&ev->raw, (size_t)(end - ev->raw.data) + 4);
    return 1;
}

int client_events_pump(struct client_events *ev, client_event_fn fn, void *ud)
{
    char tmp[8192];
    if (ev->connecting && (events_connect_step(ev) < 0 || ev->connecting))
        return ev->connecting ? 0 : -1;
    for (;;) {
        ssize_t n;
        if (ev->curl) {
            size_t got = 0;
            CURLcode rc = curl_easy_recv(ev->curl, tmp, sizeof(tmp), &got);
            if (rc == CURLE_AGAIN) {
                n = -1;
                errno = EAGAIN;
            } else {
                n = rc == CURLE_OK ? (ssize_t)got : -1;
                errno = rc == CURLE_OK ? 0 : EIO;
            }
        } else {
            n = read(ev->fd, tmp, sizeof(tmp));
        }
        if (n == 0) {
            if (ev->status && ev->status != 200)
                events_refused(ev);
            return -1;
        }
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (buf_append(&ev->raw, tmp, (size_t)n) < 0)
            return -1;
        if (!ev->headers_done) {
            int h = events_headers(ev);
            if (h < 0)
                return -1;
            if (h == 0)
                continue;
        }
        int end = events_dechunk(ev);
        if (end < 0)
            return -1;
        if (ev->status != 200) {
            /* The connection may stay open after a refusal: its length says when it is done. */
            if (end == 1 || ev->text.len > 65536 ||
                (!ev->chunked && ev->body_left >= 0 && (long long)ev->text.len >= ev->body_left)) {
                events_refused(ev);
                return -1;
            }
            continue;
        }
        /* SSE allows CRLF line ends; JSON data lines never hold a raw CR. */
        size_t w = 0;
        for (size_t i = 0; i < ev->text.len; i++)
            if (ev->text.data[i] != '\r')
                ev->text.data[w++] = ev->text.data[i];
        ev->text.len = w;
        if (ev->text.data)
            ev->text.data[w] = '\0';
        events_dispatch(ev, fn, ud); /* what arrived with the last chunk counts too */
        if (end == 1)
            return -1;
    }
    return 0;
}

void client_events_close(struct client_events *ev)
{
    if (!ev)
        return;
    events_forget_request(ev);
    if (ev->conn.h)
        client_raw_end(&ev->conn); /* it owns the socket */
    else if (ev->curl)
        curl_easy_cleanup(ev->curl); /* it owns the socket */
    else
        close(ev->fd);
    free(ev->raw.data);
    free(ev->text.data);
    free(ev->error);
    free(ev);
}
