#include "listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

int listen_unix(const char *path, struct buf *err)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    char tmp[sizeof addr.sun_path];
    if (strlen(path) >= sizeof addr.sun_path) {
        buf_printf(err, "socket path too long (max %zu bytes): %s", sizeof addr.sun_path - 1, path);
        return -1;
    }
    /* Bind a temporary name, then rename: clients never see a socket that does not listen. */
    int n = snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    const char *bind_path = n > 0 && (size_t)n < sizeof tmp ? tmp : path;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        buf_printf(err, "socket: %s", strerror(errno));
        return -1;
    }
    unlink(bind_path);
    if (bind_path == path)
        unlink(path);
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", bind_path);
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(fd, 64) < 0) {
        buf_printf(err, "cannot listen on %s: %s", bind_path, strerror(errno));
        close(fd);
        return -1;
    }
    chmod(bind_path, 0660);
    /* The engine made the socket's directory: let its owner (not the agent) connect. */
    char dir[sizeof addr.sun_path];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = '\0';
    struct stat st;
    if (geteuid() == 0 && stat(slash ? dir : ".", &st) == 0 && st.st_uid != 0) {
        int ignored = chown(bind_path, st.st_uid, st.st_gid);
        (void)ignored;
    }
    if (bind_path != path && rename(bind_path, path) < 0) {
        buf_printf(err, "cannot rename %s to %s: %s", bind_path, path, strerror(errno));
        unlink(bind_path);
        close(fd);
        return -1;
    }
    return fd;
}

int listen_split(const char *spec, char *host, size_t hostlen, char *port, size_t portlen,
                 struct buf *err)
{
    const char *h = spec, *h_end, *p;
    if (*spec == '[') {
        h = spec + 1;
        h_end = strchr(h, ']');
        if (!h_end || h_end[1] != ':') {
            buf_printf(err, "invalid --listen %s: expected [IPV6]:PORT", spec);
            return -1;
        }
        p = h_end + 2;
    } else {
        h_end = strrchr(spec, ':');
        if (!h_end) {
            buf_printf(err, "invalid --listen %s: expected HOST:PORT", spec);
            return -1;
        }
        if (memchr(spec, ':', (size_t)(h_end - spec))) {
            buf_printf(err, "invalid --listen %s: an IPv6 address goes in brackets, [::1]:PORT",
                       spec);
            return -1;
        }
        p = h_end + 1;
    }
    size_t hl = (size_t)(h_end - h), pl = strlen(p);
    if (hl == 0) {
        buf_printf(err, "invalid --listen %s: the host is missing", spec);
        return -1;
    }
    char *end;
    unsigned long v = strtoul(p, &end, 10);
    if (pl == 0 || pl > 5 || *end || p[0] < '0' || p[0] > '9' || v > 65535) {
        buf_printf(err, "invalid --listen %s: the port must be a number from 0 to 65535", spec);
        return -1;
    }
    if (hl >= hostlen || pl >= portlen) {
        buf_printf(err, "invalid --listen %s: too long", spec);
        return -1;
    }
    memcpy(host, h, hl);
    host[hl] = '\0';
    memcpy(port, p, pl + 1);
    return 0;
}

static bool is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
    }
    return false;
}

int listen_tcp(const char *spec, bool allow_remote, struct buf *err)
{
    char host[256], port[8];
    if (listen_split(spec, host, sizeof host, port, sizeof port, err) < 0)
        return -1;
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV | AI_PASSIVE};
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(host, port, &hints, &res);
    if (gai != 0 || !res) {
        buf_printf(err, "cannot resolve --listen host %s: %s", host,
                   gai ? gai_strerror(gai) : "no address");
        return -1;
    }
    if (!allow_remote && !is_loopback(res->ai_addr)) {
        buf_printf(err,
                   "refusing to listen on %s: %s is not a loopback address and no API key is "
                   "configured (give one with --api-key-file or SESSION_API_KEY)",
                   spec, host);
        freeaddrinfo(res);
        return -1;
    }
    int fd =
        socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, res->ai_protocol);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 64) < 0) {
        buf_printf(err, "cannot listen on %s: %s", spec, strerror(errno));
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}
