/* The proxy port's hand-off (egress.h): accept, connect to the engine's socket, send the
 * accepted descriptor with one byte, close both. A connection the engine cannot take hears
 * a 502 from here. */
#include "egress.h"

#include "listen.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

struct egress_relay {
    struct evloop_watch watch; /* the listening TCP socket */
    char *engine_socket;
    bool serving;
};

/* The engine is not there (stopped, restarting): the client hears why instead of a reset. */
static void egress_relay_refuse(int client, const char *why)
{
    char msg[512];
    int body = snprintf(msg, sizeof(msg), "paddock egress: %s\n", why);
    char head[256];
    int hn = snprintf(head, sizeof(head),
                      "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain; charset=utf-8\r\n"
                      "Content-Length: %d\r\nConnection: close\r\n\r\n",
                      body);
    /* Best effort on a fresh socket: its send buffer takes both at once. */
    if (send(client, head, (size_t)hn, MSG_NOSIGNAL | MSG_DONTWAIT) == hn)
        (void)send(client, msg, (size_t)body, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void egress_relay_hand(struct egress_relay *r, int client)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", r->engine_socket);
    int u = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (u < 0 || connect(u, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        char why[200];
        snprintf(why, sizeof(why), "the engine does not take connections (%s)", strerror(errno));
        egress_relay_refuse(client, why);
        if (u >= 0)
            close(u);
        return;
    }
    char one = 'E';
    struct iovec iov = {.iov_base = &one, .iov_len = 1};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    memset(&ctl, 0, sizeof(ctl));
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &client, sizeof(int));
    if (sendmsg(u, &mh, MSG_NOSIGNAL) != 1) {
        char why[200];
        snprintf(why, sizeof(why), "cannot hand the connection to the engine (%s)",
                 strerror(errno));
        egress_relay_refuse(client, why);
    }
    close(u);
}

static void egress_relay_on_accept(struct evloop_watch *w, uint32_t events)
{
    (void)events;
    struct egress_relay *r = EVLOOP_CONTAINER_OF(w, struct egress_relay, watch);
    for (;;) {
        int c = accept4(w->fd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0)
            return; /* EAGAIN, or out of descriptors: the next event tries again */
        egress_relay_hand(r, c);
        close(c);
    }
}

struct egress_relay *egress_relay_open(const char *spec, const char *engine_socket, struct buf *err)
{
    struct sockaddr_un sa;
    if (strlen(engine_socket) >= sizeof(sa.sun_path)) {
        buf_printf(err, "--egress-socket %s: path too long", engine_socket);
        return NULL;
    }
    struct egress_relay *r = calloc(1, sizeof(*r));
    if (!r || !(r->engine_socket = strdup(engine_socket))) {
        free(r);
        buf_printf(err, "out of memory");
        return NULL;
    }
    r->watch.fd = listen_tcp(spec, false, err);
    if (r->watch.fd < 0) {
        free(r->engine_socket);
        free(r);
        return NULL;
    }
    r->watch.fn = egress_relay_on_accept;
    return r;
}

int egress_relay_serve(struct egress_relay *r, struct evloop *l)
{
    if (evloop_add(l, &r->watch, EPOLLIN) < 0)
        return -1;
    r->serving = true;
    return 0;
}

void egress_relay_close(struct egress_relay *r, struct evloop *l)
{
    if (!r)
        return;
    if (r->serving)
        evloop_del(l, &r->watch);
    close(r->watch.fd);
    free(r->engine_socket);
    free(r);
}
