/* The optional TCP listener: bind, the token (given, or generated on loopback only), and the
 * credentials every request over TCP must carry. */
#include "engine/listen.h"

#include "engine/api.h"
#include "engine/base/util.h"
#include "engine/engine_internal.h"
#include "engine/remote_runtime.h"
#include "engine/session.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define LISTEN_TOKEN_BYTES 32
#define LISTEN_TOKEN_MIN 16

/* The paths under /v1/sessions/{id}/ that OpenHands' action-execution client calls on the
 * runtime url: its session key opens these, and nothing else. */
static const char *const listen_session_paths[] = {
    "alive",      "server_info",    "execute_action",          "upload_file",
    "list_files", "download_files", "vscode/connection_token", "update_mcp_server",
};

bool listen_secret_eq(const char *given, const char *want)
{
    size_t gl = strlen(given), wl = strlen(want);
    volatile unsigned char d = gl != wl;
    /* Every byte of want is looked at whatever given holds (its length is no secret). */
    for (size_t i = 0; i < wl; i++)
        d |= (unsigned char)(want[i] ^ (gl ? given[i % gl] : 0));
    return d == 0;
}

/* HOST:PORT → address; 0, or -1 with why. */
static int listen_parse(const char *spec, struct sockaddr_storage *ss, socklen_t *len, char **err)
{
    const char *colon = strrchr(spec, ':');
    char host[128];
    if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof(host)) {
        *err = util_strdupf("--listen takes HOST:PORT (e.g. 127.0.0.1:8080 or [::1]:8080), "
                            "not \"%.100s\"",
                            spec);
        return -1;
    }
    memcpy(host, spec, (size_t)(colon - spec));
    host[colon - spec] = '\0';
    char *end = NULL;
    errno = 0;
    long port = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || errno || port < 0 || port > 65535) {
        *err = util_strdupf("--listen %.100s: the port must be a number from 0 to 65535", spec);
        return -1;
    }
    size_t hl = strlen(host);
    if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
        memmove(host, host + 1, hl - 2);
        host[hl - 2] = '\0';
    }
    memset(ss, 0, sizeof(*ss));
    struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
    /* Names other than localhost would mean a resolver query; addresses never do. */
    if (strcasecmp(host, "localhost") == 0)
        snprintf(host, sizeof(host), "127.0.0.1");
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        *len = sizeof(*v4);
        return 0;
    }
    if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        *len = sizeof(*v6);
        return 0;
    }
    *err = util_strdupf("--listen %.100s: the host must be a numeric IPv4 or IPv6 address (IPv6 "
                        "in brackets) or localhost",
                        spec);
    return -1;
}

static bool listen_is_loopback(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
    const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(a))
        return true;
    return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
}

/* "127.0.0.1:8080" / "[::1]:8080" of a bound socket. */
static char *listen_addr_text(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    char host[INET6_ADDRSTRLEN] = "?";
    if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
        return NULL;
    if (ss.ss_family == AF_INET) {
        struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &v4->sin_addr, host, sizeof(host));
        return util_strdupf("%s:%u", host, ntohs(v4->sin_port));
    }
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
    inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof(host));
    return util_strdupf("[%s]:%u", host, ntohs(v6->sin6_port));
}

/* A token that can travel in a header: printable ASCII, no spaces. */
static bool listen_token_valid(const char *t)
{
    if (strlen(t) < LISTEN_TOKEN_MIN)
        return false;
    for (; *t; t++)
        if (*t <= 0x20 || *t >= 0x7f)
            return false;
    return true;
}

/* The token kept in <state>/token: reused while it is ours alone, else a new one. */
static char *listen_token_file(const char *path, char **err)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd >= 0) {
        char buf[2 * LISTEN_TOKEN_BYTES + 2];
        ssize_t n = fstat(fd, &st) == 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
        close(fd);
        buf[n > 0 ? n : 0] = '\0';
        buf[strcspn(buf, "\r\n")] = '\0';
        if (S_ISREG(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 077) == 0 &&
            util_is_hex_id(buf, 2 * LISTEN_TOKEN_BYTES, 2 * LISTEN_TOKEN_BYTES))
            return strdup(buf);
    }
    char tok[2 * LISTEN_TOKEN_BYTES + 1];
    if (util_random_hex(tok, LISTEN_TOKEN_BYTES) < 0) {
        *err = strdup("no randomness for a token (getrandom failed)");
        return NULL;
    }
    /* Written aside and renamed over: a reader never sees half a token, and whatever was at
     * the path (a link, a file others could read) is replaced, not written through. */
    char *tmp = util_strdupf("%s.%ld.tmp", path, (long)getpid());
    fd = tmp ? open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
    bool ok = fd >= 0 && fchmod(fd, 0600) == 0 &&
              write(fd, tok, strlen(tok)) == (ssize_t)strlen(tok) && write(fd, "\n", 1) == 1;
    if (fd >= 0 && close(fd) < 0)
        ok = false;
    if (!ok || rename(tmp, path) < 0) {
        *err = util_strdupf("cannot write the token to %s: %s", path, strerror(errno));
        if (tmp)
            unlink(tmp);
        free(tmp);
        return NULL;
    }
    free(tmp);
    return strdup(tok);
}

int listen_tcp_start(struct engine *eng, const char *spec, const char *token, const char *api_key,
                     char **err)
{
    struct sockaddr_storage ss;
    socklen_t len;
    if (listen_parse(spec, &ss, &len, err) < 0)
        return -1;
    if (token && !listen_token_valid(token)) {
        *err = util_strdupf("the token must be at least %d printable characters without spaces",
                            LISTEN_TOKEN_MIN);
        return -1;
    }
    if (api_key && !listen_token_valid(api_key)) {
        *err = util_strdupf("the API key must be at least %d printable characters without "
                            "spaces",
                            LISTEN_TOKEN_MIN);
        return -1;
    }
    if (!token && !listen_is_loopback(&ss)) {
        *err = util_strdupf("refusing to listen on %s without a token: pass --token-file or "
                            "PADDOCK_TOKEN",
                            spec);
        return -1;
    }
    if (!token) {
        eng->token_file = util_strdupf("%s/token", eng->state_dir);
        if (!eng->token_file || !(eng->token = listen_token_file(eng->token_file, err)))
            return -1;
    } else if (!(eng->token = strdup(token))) {
        *err = strdup("out of memory");
        return -1;
    }
    eng->api_key = strdup(api_key ? api_key : eng->token);
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    if (fd >= 0) {
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (ss.ss_family == AF_INET6)
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    }
    if (!eng->api_key || fd < 0 || bind(fd, (struct sockaddr *)&ss, len) < 0 ||
        listen(fd, SOMAXCONN) < 0) {
        *err = util_strdupf("cannot listen on %s: %s", spec, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    eng->listen_addr = listen_addr_text(fd);
    if (!eng->listen_addr || api_listen_tcp(eng->api, fd, err) < 0) {
        if (!*err)
            *err = strdup("out of memory");
        close(fd);
        return -1;
    }
    return 0;
}

void listen_free(struct engine *eng)
{
    free(eng->listen_addr);
    free(eng->token_file);
    /* Secrets do not linger in freed memory. */
    if (eng->token)
        explicit_bzero(eng->token, strlen(eng->token));
    if (eng->api_key)
        explicit_bzero(eng->api_key, strlen(eng->api_key));
    free(eng->token);
    free(eng->api_key);
    eng->listen_addr = eng->token_file = eng->token = eng->api_key = NULL;
}

json_t *listen_info(struct engine *eng)
{
    if (!eng->listen_addr)
        return json_null();
    return json_pack("{s:s,s:s?}", "address", eng->listen_addr, "token_file", eng->token_file);
}

/* The bearer token of an Authorization header, or NULL. */
static const char *listen_bearer(struct api_req *r)
{
    const char *h = api_req_header(r, "Authorization");
    if (!h || strncasecmp(h, "Bearer ", 7) != 0)
        return NULL;
    h += 7;
    while (*h == ' ')
        h++;
    return h;
}

/* "/v1/sessions/{id}/<an action-server path>": the id (into id), else false. */
static bool listen_session_path(const char *path, char *id, size_t size)
{
    static const char prefix[] = "/v1/sessions/";
    if (strncmp(path, prefix, sizeof(prefix) - 1) != 0)
        return false;
    const char *p = path + sizeof(prefix) - 1, *slash = strchr(p, '/');
    if (!slash || slash == p || (size_t)(slash - p) >= size)
        return false;
    for (size_t i = 0; i < sizeof(listen_session_paths) / sizeof(*listen_session_paths); i++)
        if (strcmp(slash + 1, listen_session_paths[i]) == 0) {
            memcpy(id, p, (size_t)(slash - p));
            id[slash - p] = '\0';
            return true;
        }
    return false;
}

int listen_auth_check(struct api_req *r)
{
    struct engine *eng = api_req_engine(r);
    const char *path = api_req_path(r);
    const char *bearer = listen_bearer(r);
    const char *api_key = api_req_header(r, "X-API-Key");
    bool v1 = strncmp(path, "/v1/", 4) == 0 || strcmp(path, "/v1") == 0;
    if (bearer && listen_secret_eq(bearer, eng->token))
        return 0;
    char id[80];
    bool session_path = v1 && listen_session_path(path, id, sizeof(id));
    /* The X-API-Key opens the remote-runtime API, which hands out every session's key: the
     * action-server paths of a session are no more than that. */
    if (api_key && (!v1 || session_path) && listen_secret_eq(api_key, eng->api_key))
        return 0;
    const char *skey = api_req_header(r, "X-Session-API-Key");
    if (skey && session_path) {
        /* the path may name the session by its name or an id prefix: its key is the id's */
        char *full = NULL, *why = NULL;
        json_t *candidates = NULL;
        if (session_ref_resolve(eng, id, &full, &candidates, &why) == 0)
            snprintf(id, sizeof(id), "%s", full);
        free(full);
        free(why);
        json_decref(candidates);
        if (remote_session_key_ok(eng, id, skey))
            return 0;
    }
    if (v1)
        api_reply_error(r, ERR_UNAUTHORIZED,
                        "%s: this listener needs \"Authorization: Bearer <token>\"%s",
                        bearer || api_key || skey ? "wrong credentials" : "no credentials",
                        session_path ? " (or the session's X-Session-API-Key)" : "");
    else
        api_reply_error(r, ERR_UNAUTHORIZED,
                        "%s: the remote-runtime API needs \"X-API-Key: <key>\"",
                        api_key || bearer ? "wrong API key" : "no API key");
    api_reply_header(r, "WWW-Authenticate", "Bearer realm=\"paddock\"");
    return -1;
}
