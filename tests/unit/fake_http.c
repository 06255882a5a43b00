/* The fake HTTP server (fake_http.h). */
#include "tests/unit/fake_http.h"

#include "common/buf.h"
#include "engine/base/loop.h"
#include "engine/engine.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define FAKE_MAX_CONNS 64

struct fake_http {
    struct loop *l;
    int lfd;
    char path[108];
    fake_route_fn route;
    fake_raw_fn on_raw;
    void *ud;
    struct fake_conn *conns[FAKE_MAX_CONNS];
};

bool fake_http_put(int fd, const void *p, size_t n)
{
    const char *s = p;
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w <= 0)
            return false;
        s += w;
        n -= (size_t)w;
    }
    return true;
}

void fake_http_reply(struct fake_conn *c, int code, const char *extra_headers, const char *body)
{
    char head[512];
    int m =
        snprintf(head, sizeof(head),
                 "HTTP/1.1 %d X\r\n%sContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                 code, extra_headers ? extra_headers : "", strlen(body));
    fake_http_put(c->fd, head, (size_t)m);
    fake_http_put(c->fd, body, strlen(body));
}

void fake_http_hold(struct fake_conn *c)
{
    static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                               "Transfer-Encoding: chunked\r\n\r\n";
    fake_http_put(c->fd, head, sizeof(head) - 1);
}

void fake_http_close(struct fake_conn *c)
{
    for (int i = 0; i < FAKE_MAX_CONNS; i++)
        if (c->srv->conns[i] == c)
            c->srv->conns[i] = NULL;
    loop_del_fd(c->srv->l, c->fd);
    close(c->fd);
    free(c->in);
    free(c);
}

/* Whole requests out of c->in, in order. */
static void fake_conn_parse(struct fake_conn *c)
{
    while (!c->raw) {
        char *end = strstr(c->in, "\r\n\r\n");
        if (!end)
            return;
        size_t head_len = (size_t)(end - c->in) + 4;
        const char *cl = strcasestr(c->in, "Content-Length:");
        size_t body_len = cl && cl < end ? (size_t)strtoul(cl + 15, NULL, 10) : 0;
        if (c->len < head_len + body_len)
            return;
        char *head = strndup(c->in, head_len);
        char *body = strndup(c->in + head_len, body_len);
        char method[16] = "", path[1024] = "";
        if (head && body && sscanf(head, "%15s %1023s", method, path) == 2) {
            memmove(c->in, c->in + head_len + body_len, c->len - head_len - body_len);
            c->len -= head_len + body_len;
            c->in[c->len] = '\0';
            struct fake_http *s = c->srv;
            s->route(c, method, path, head, body, s->ud);
        } else {
            c->len = 0; /* unparseable: dropped */
            c->in[0] = '\0';
        }
        free(head);
        free(body);
        /* route may have closed c */
        bool open = false;
        for (int i = 0; i < FAKE_MAX_CONNS; i++)
            open = open || c->srv->conns[i] == c;
        if (!open)
            return;
    }
    if (c->len && c->srv->on_raw)
        c->srv->on_raw(c, c->srv->ud);
}

static void fake_on_conn(int fd, uint32_t ev, void *ud)
{
    struct fake_conn *c = ud;
    if (c->cap - c->len < 4096) {
        size_t cap = c->cap * 2;
        char *in = realloc(c->in, cap);
        if (!in) {
            fake_http_close(c);
            return;
        }
        c->in = in;
        c->cap = cap;
    }
    ssize_t n = read(fd, c->in + c->len, c->cap - 1 - c->len);
    if (n <= 0) {
        fake_http_close(c);
        return;
    }
    c->len += (size_t)n;
    c->in[c->len] = '\0';
    fake_conn_parse(c);
}

static void fake_on_accept(int fd, uint32_t ev, void *ud)
{
    struct fake_http *s = ud;
    int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
    if (cfd < 0)
        return;
    struct fake_conn *c = calloc(1, sizeof(*c));
    int slot = -1;
    for (int i = 0; i < FAKE_MAX_CONNS && slot < 0; i++)
        if (!s->conns[i])
            slot = i;
    if (!c || slot < 0 || !(c->in = malloc(8192))) {
        free(c);
        close(cfd);
        return;
    }
    c->srv = s;
    c->fd = cfd;
    c->cap = 8192;
    c->in[0] = '\0';
    s->conns[slot] = c;
    if (loop_add_fd(s->l, cfd, EPOLLIN, fake_on_conn, c) < 0)
        fake_http_close(c);
}

struct fake_http *fake_http_listen(struct loop *l, const char *path, fake_route_fn route,
                                   fake_raw_fn on_raw, void *ud)
{
    struct fake_http *s = calloc(1, sizeof(*s));
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (!s || strlen(path) >= sizeof(sa.sun_path)) {
        free(s);
        return NULL;
    }
    s->l = l;
    s->route = route;
    s->on_raw = on_raw;
    s->ud = ud;
    snprintf(s->path, sizeof(s->path), "%s", path);
    strcpy(sa.sun_path, path);
    unlink(path);
    s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        listen(s->lfd, 16) < 0 || loop_add_fd(l, s->lfd, EPOLLIN, fake_on_accept, s) < 0) {
        if (s->lfd >= 0)
            close(s->lfd);
        free(s);
        return NULL;
    }
    return s;
}

void fake_http_free(struct fake_http *s)
{
    if (!s)
        return;
    for (int i = 0; i < FAKE_MAX_CONNS; i++)
        if (s->conns[i])
            fake_http_close(s->conns[i]);
    loop_del_fd(s->l, s->lfd);
    close(s->lfd);
    unlink(s->path);
    free(s);
}

#define FAKE_ENGINE_ARG "--fake-engine-serve"

/* "-" stands for NULL on the command line. */
static const char *fake_arg(const char *s)
{
    return s ? s : "-";
}

static const char *fake_opt(const char *s)
{
    return strcmp(s, "-") == 0 ? NULL : s;
}

int fake_engine_spawn(const char *state_dir, const char *sock, const char *executor,
                      const char *docker_host, const char *confirm)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        return -1;
    self[n] = '\0';
    pid_t pid = fork();
    if (pid == 0) {
        execl(self, self, FAKE_ENGINE_ARG, state_dir, sock, fake_arg(executor),
              fake_arg(docker_host), fake_arg(confirm), (char *)NULL);
        _exit(127);
    }
    return (int)pid;
}

void fake_engine_main(int argc, char **argv)
{
    if (argc != 7 || strcmp(argv[1], FAKE_ENGINE_ARG) != 0)
        return;
    struct engine_options o = {.state_dir = argv[2],
                               .socket_path = argv[3],
                               .executor = fake_opt(argv[4]),
                               .docker_host = fake_opt(argv[5]),
                               .confirm = fake_opt(argv[6])};
    char *err = NULL;
    int rc = engine_serve(&o, &err);
    if (rc < 0)
        fprintf(stderr, "engine: %s\n", err ? err : "failed");
    free(err);
    _exit(rc < 0 ? 1 : 0);
}

static size_t fake_on_body(char *p, size_t sz, size_t n, void *ud)
{
    return buf_append(ud, p, sz * n) < 0 ? 0 : sz * n;
}

json_t *fake_engine_api(const char *sock, const char *method, const char *path, const char *body,
                        long timeout_ms, long *status)
{
    CURL *h = curl_easy_init();
    struct buf b = {0};
    char url[512];
    snprintf(url, sizeof(url), "http://p%s", path);
    curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, sock);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    if (body)
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, fake_on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    *status = curl_easy_perform(h) == CURLE_OK ? 0 : -1;
    if (*status == 0)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    curl_easy_cleanup(h);
    json_t *j = b.data ? json_loads(b.data, 0, NULL) : NULL;
    buf_free(&b);
    return j;
}
