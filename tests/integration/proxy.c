/* The test relay in front of the Docker daemon: see proxy.h. One thread polls the listener,
 * a stop pipe and both ends of every connection. */
#include "proxy.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define PROXY_MAX_CONNS 64

struct proxy {
    pthread_t thread;
    int listen_fd;
    int stop[2];
    char path[108];
    char upstream[108];
    int fds[PROXY_MAX_CONNS][2]; /* client, daemon; -1 when free */
};

static int proxy_connect(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static void proxy_close_pair(struct proxy *p, int i)
{
    close(p->fds[i][0]);
    close(p->fds[i][1]);
    p->fds[i][0] = p->fds[i][1] = -1;
}

/* Copy what is readable on from to to; false when the pair is done. Local sockets: a blocking
 * write of what one read returned does not wait long. MSG_NOSIGNAL: a peer that closed its end
 * (the engine dropping a stream mid-reply) ends the pair; the default SIGPIPE killed the test. */
static bool proxy_relay(int from, int to)
{
    char buf[65536];
    ssize_t n = read(from, buf, sizeof(buf));
    if (n <= 0)
        return n < 0 && (errno == EINTR || errno == EAGAIN);
    for (ssize_t off = 0; off < n;) {
        ssize_t w = send(to, buf + off, (size_t)(n - off), MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        off += w;
    }
    return true;
}

static void *proxy_run(void *ud)
{
    struct proxy *p = ud;
    struct pollfd pf[2 + 2 * PROXY_MAX_CONNS];
    for (;;) {
        int n = 0;
        pf[n++] = (struct pollfd){.fd = p->stop[0], .events = POLLIN};
        pf[n++] = (struct pollfd){.fd = p->listen_fd, .events = POLLIN};
        for (int i = 0; i < PROXY_MAX_CONNS; i++)
            for (int k = 0; k < 2; k++)
                pf[n++] = (struct pollfd){.fd = p->fds[i][k], .events = POLLIN};
        if (poll(pf, (nfds_t)n, -1) < 0 && errno != EINTR)
            break;
        if (pf[0].revents)
            break;
        if (pf[1].revents & POLLIN) {
            int c = accept4(p->listen_fd, NULL, NULL, SOCK_CLOEXEC);
            int u = c >= 0 ? proxy_connect(p->upstream) : -1;
            int slot = -1;
            for (int i = 0; i < PROXY_MAX_CONNS && slot < 0; i++)
                if (p->fds[i][0] < 0)
                    slot = i;
            if (c >= 0 && u >= 0 && slot >= 0) {
                p->fds[slot][0] = c;
                p->fds[slot][1] = u;
            } else {
                if (c >= 0)
                    close(c);
                if (u >= 0)
                    close(u);
            }
        }
        for (int i = 0; i < PROXY_MAX_CONNS; i++)
            for (int k = 0; k < 2; k++) {
                short ev = pf[2 + 2 * i + k].revents;
                if (!ev || p->fds[i][k] < 0)
                    continue;
                if (!proxy_relay(p->fds[i][k], p->fds[i][1 - k]))
                    proxy_close_pair(p, i);
            }
    }
    for (int i = 0; i < PROXY_MAX_CONNS; i++)
        if (p->fds[i][0] >= 0)
            proxy_close_pair(p, i);
    return NULL;
}

struct proxy *proxy_start(const char *path, const char *upstream)
{
    struct proxy *p = calloc(1, sizeof(*p));
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (!p || strlen(path) >= sizeof(sa.sun_path) || strlen(upstream) >= sizeof(p->upstream)) {
        free(p);
        return NULL;
    }
    snprintf(p->path, sizeof(p->path), "%s", path);
    snprintf(p->upstream, sizeof(p->upstream), "%s", upstream);
    memset(p->fds, -1, sizeof(p->fds));
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    unlink(path);
    p->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (p->listen_fd < 0 || bind(p->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        listen(p->listen_fd, 64) < 0 || pipe2(p->stop, O_CLOEXEC) < 0 ||
        pthread_create(&p->thread, NULL, proxy_run, p) != 0) {
        fprintf(stderr, "proxy on %s: %s\n", path, strerror(errno));
        if (p->listen_fd >= 0)
            close(p->listen_fd);
        unlink(path);
        free(p);
        return NULL;
    }
    return p;
}

void proxy_stop(struct proxy *p)
{
    if (!p)
        return;
    if (write(p->stop[1], "x", 1) < 0)
        fprintf(stderr, "proxy stop: %s\n", strerror(errno));
    pthread_join(p->thread, NULL);
    close(p->listen_fd);
    unlink(p->path);
    close(p->stop[0]);
    close(p->stop[1]);
    free(p);
}
