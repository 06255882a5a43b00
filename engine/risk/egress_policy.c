/* Egress patterns, destinations and address kinds (egress_policy.h). */
#include "engine/risk/egress_policy.h"

#include "common/sanitize.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A DNS name as a proxy client sends it: letters, digits, '-', '_' and dots, no empty label,
 * no label starting with '-' (so it can never pass for an option of getent). */
static bool egress_name_valid(const char *h, size_t n)
{
    if (n == 0 || n > EGRESS_HOST_MAX || h[0] == '.' || h[n - 1] == '.')
        return false;
    bool label_start = true;
    for (size_t i = 0; i < n; i++) {
        char c = h[i];
        if (c == '.') {
            if (label_start)
                return false;
            label_start = true;
            continue;
        }
        if (!(islower((unsigned char)c) || isdigit((unsigned char)c) || c == '-' || c == '_'))
            return false;
        if (label_start && c == '-')
            return false;
        label_start = false;
    }
    return true;
}

bool egress_host_is_address(const char *host)
{
    unsigned char buf[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1;
}

int egress_server_name_check(const char *host, const char *name, char *why, size_t whyn)
{
    if (!name)
        return 0; /* an old client, or one that names no site: the CONNECT host is all there is */
    size_t n = strlen(name), hn = strlen(host);
    if (egress_host_is_address(host)) {
        if (egress_addr_equal(host, name))
            return 0;
    } else {
        if (n > 1 && name[n - 1] == '.')
            n--;
        if (n == hn && strncasecmp(name, host, n) == 0)
            return 0;
    }
    char shown[2 * EGRESS_HOST_MAX];
    sanitize_text(name, strlen(name), shown, sizeof(shown));
    if (egress_host_is_address(host))
        snprintf(why, whyn,
                 "TLS server name %s on a CONNECT to the address %s (a client that names a "
                 "site CONNECTs to that name)",
                 shown, host);
    else
        snprintf(why, whyn, "TLS server name %s differs from the CONNECT host %s", shown, host);
    return -1;
}

enum egress_tunnel_kind egress_tunnel_first_line(const unsigned char *data, size_t len)
{
    size_t i = 0;
    while (i < len && (data[i] == '\r' || data[i] == '\n' || data[i] == ' ' || data[i] == '\t'))
        i++;
    size_t start = i;
    for (; i < len && data[i] != '\n'; i++) {
        if ((data[i] < 0x20 && data[i] != '\t' && data[i] != '\r') || data[i] == 0x7f)
            return EGRESS_TUNNEL_OTHER;
        if (i - start >= EGRESS_TUNNEL_LINE_MAX)
            return EGRESS_TUNNEL_HTTP; /* what servers that take long lines could read as one */
    }
    if (i == len)
        return EGRESS_TUNNEL_MORE;
    const unsigned char *line = data + start;
    size_t n = i - start;
    for (size_t k = 0; k + 5 <= n; k++)
        if (strncasecmp((const char *)line + k, "HTTP/", 5) == 0)
            return EGRESS_TUNNEL_HTTP;
    size_t w = 0;
    while (w < n && ((line[w] | 0x20) >= 'a' && (line[w] | 0x20) <= 'z'))
        w++;
    return w > 0 && w < n && (line[w] == ' ' || line[w] == '\t') ? EGRESS_TUNNEL_HTTP
                                                                 : EGRESS_TUNNEL_OTHER;
}

/* A port text: 1..65535, digits only. */
static int egress_port_parse(const char *p, size_t n)
{
    if (n == 0 || n > 5)
        return -1;
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)p[i]))
            return -1;
        v = v * 10 + (p[i] - '0');
    }
    return v >= 1 && v <= 65535 ? v : -1;
}

int egress_target_parse(const char *text, int default_port, char host[EGRESS_HOST_MAX + 1],
                        int *port)
{
    size_t n = strlen(text);
    const char *h = text, *colon = NULL;
    size_t hn;
    if (n && text[0] == '[') {
        const char *close = strchr(text, ']');
        if (!close)
            return -1;
        h = text + 1;
        hn = (size_t)(close - h);
        if (close[1] == ':')
            colon = close + 1;
        else if (close[1])
            return -1;
    } else {
        colon = strrchr(text, ':');
        if (colon && memchr(text, ':', (size_t)(colon - text)))
            return -1; /* an IPv6 literal needs its brackets */
        hn = colon ? (size_t)(colon - text) : n;
    }
    if (hn == 0 || hn > EGRESS_HOST_MAX)
        return -1;
    for (size_t i = 0; i < hn; i++)
        host[i] = (char)tolower((unsigned char)h[i]);
    host[hn] = '\0';
    if (hn > 1 && host[hn - 1] == '.' && h != text + 1)
        host[--hn] = '\0'; /* the root's dot: "pypi.org." is pypi.org */
    if (colon) {
        if ((*port = egress_port_parse(colon + 1, strlen(colon + 1))) < 0)
            return -1;
    } else {
        if (default_port < 0)
            return -1;
        *port = default_port;
    }
    if (h == text + 1) {
        unsigned char buf[sizeof(struct in6_addr)];
        return inet_pton(AF_INET6, host, buf) == 1 ? 0 : -1;
    }
    return egress_host_is_address(host) || egress_name_valid(host, hn) ? 0 : -1;
}

/* Splits a pattern into its host part (brackets taken off) and its port (0: any). */
static int egress_pattern_split(const char *pattern, char host[EGRESS_HOST_MAX + 1], int *port)
{
    *port = 0;
    size_t n = strlen(pattern);
    const char *colon = NULL;
    if (n && pattern[0] == '[') {
        const char *close = strchr(pattern, ']');
        if (!close || (close[1] && close[1] != ':'))
            return -1;
        size_t hn = (size_t)(close - pattern - 1);
        if (hn == 0 || hn > EGRESS_HOST_MAX)
            return -1;
        memcpy(host, pattern + 1, hn);
        host[hn] = '\0';
        unsigned char buf[sizeof(struct in6_addr)];
        if (inet_pton(AF_INET6, host, buf) != 1)
            return -1;
        colon = close[1] ? close + 1 : NULL;
    } else {
        colon = strchr(pattern, ':');
        size_t hn = colon ? (size_t)(colon - pattern) : n;
        if (hn == 0 || hn > EGRESS_HOST_MAX)
            return -1;
        memcpy(host, pattern, hn);
        host[hn] = '\0';
        const char *name = host;
        if (strcmp(host, "*") == 0)
            name = NULL;
        else if (strncmp(host, "*.", 2) == 0)
            name = host + 2;
        if (name && !egress_host_is_address(name) && !egress_name_valid(name, strlen(name)))
            return -1;
        if (name != host && name && egress_host_is_address(name))
            return -1; /* "*.1.2.3.4" names nothing */
    }
    if (colon && (*port = egress_port_parse(colon + 1, strlen(colon + 1))) < 0)
        return -1;
    return 0;
}

bool egress_pattern_valid(const char *pattern)
{
    char host[EGRESS_HOST_MAX + 1];
    int port;
    return pattern && egress_pattern_split(pattern, host, &port) == 0;
}

bool egress_pattern_match(const char *pattern, const char *host, int port)
{
    char ph[EGRESS_HOST_MAX + 1];
    int pport;
    if (egress_pattern_split(pattern, ph, &pport) < 0 || (pport && pport != port))
        return false;
    bool is_addr = egress_host_is_address(host);
    if (strcmp(ph, "*") == 0)
        return !is_addr; /* a wildcard names no address: those are named literally */
    if (strncmp(ph, "*.", 2) == 0) {
        size_t sn = strlen(ph + 1), hn = strlen(host);
        return !is_addr && hn > sn && strcmp(host + hn - sn, ph + 1) == 0;
    }
    if (is_addr && egress_host_is_address(ph))
        return egress_addr_equal(ph, host);
    return strcmp(ph, host) == 0;
}

/* An address literal as 16 bytes, an IPv4 one in its IPv4-mapped form: the same destination
 * has one key whichever way it is written. */
static bool egress_addr_key(const char *text, unsigned char key[16])
{
    unsigned char v4[4];
    if (inet_pton(AF_INET, text, v4) == 1) {
        static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        memcpy(key, mapped, 12);
        memcpy(key + 12, v4, 4);
        return true;
    }
    return inet_pton(AF_INET6, text, key) == 1;
}

bool egress_addr_equal(const char *a, const char *b)
{
    /* The addresses, not their spelling: "::1" and "0::1", "127.0.0.1" and
     * "::ffff:127.0.0.1" (a deny entry is not passed by writing its address another way). */
    unsigned char ka[16], kb[16];
    return egress_addr_key(a, ka) && egress_addr_key(b, kb) && memcmp(ka, kb, 16) == 0;
}

const char *egress_patterns_match(const json_t *patterns, const char *host, int port)
{
    size_t i;
    const json_t *p;
    json_array_foreach(patterns, i, p)
    {
        const char *s = json_string_value(p);
        if (s && egress_pattern_match(s, host, port))
            return s;
    }
    return NULL;
}

int egress_pattern_address(const char *pattern, struct sockaddr_storage *ss)
{
    char host[EGRESS_HOST_MAX + 1];
    int port;
    memset(ss, 0, sizeof(*ss));
    struct sockaddr_in *in = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    if (egress_pattern_split(pattern, host, &port) < 0)
        return -1;
    if (inet_pton(AF_INET, host, &in->sin_addr) == 1)
        in->sin_family = AF_INET;
    else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1)
        in6->sin6_family = AF_INET6;
    else
        return -1;
    return 0;
}

const char *egress_pattern_internal(const char *pattern)
{
    struct sockaddr_storage ss;
    if (egress_pattern_address(pattern, &ss) < 0)
        return NULL;
    enum egress_addr_class c = egress_addr_classify((struct sockaddr *)&ss);
    return c == EGRESS_ADDR_PUBLIC ? NULL : egress_addr_class_name(c);
}

bool egress_patterns_name_address(const json_t *patterns, const char *addr, int port)
{
    return egress_host_is_address(addr) && egress_patterns_match(patterns, addr, port) != NULL;
}

static enum egress_addr_class egress_v4_classify(uint32_t a)
{
    static const struct {
        uint32_t net, mask;
        enum egress_addr_class c;
    } ranges[] = {
        {.net = 0x7f000000, .mask = 0xff000000, .c = EGRESS_ADDR_LOOPBACK},
        {.net = 0xa9fe0000, .mask = 0xffff0000, .c = EGRESS_ADDR_LINK_LOCAL},
        {.net = 0x0a000000, .mask = 0xff000000, .c = EGRESS_ADDR_PRIVATE},
        {.net = 0xac100000, .mask = 0xfff00000, .c = EGRESS_ADDR_PRIVATE},
        {.net = 0xc0a80000, .mask = 0xffff0000, .c = EGRESS_ADDR_PRIVATE},
        {.net = 0x64400000, .mask = 0xffc00000, .c = EGRESS_ADDR_SHARED},
        {.net = 0x00000000, .mask = 0xff000000, .c = EGRESS_ADDR_UNSPECIFIED},
        {.net = 0xe0000000, .mask = 0xe0000000, .c = EGRESS_ADDR_UNSPECIFIED}, /* 224/3 */
    };
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
        if ((a & ranges[i].mask) == ranges[i].net)
            return ranges[i].c;
    return EGRESS_ADDR_PUBLIC;
}

enum egress_addr_class egress_addr_classify(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
        return egress_v4_classify(ntohl(in->sin_addr.s_addr));
    }
    if (sa->sa_family != AF_INET6)
        return EGRESS_ADDR_UNSPECIFIED;
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;
    const unsigned char *b = in6->sin6_addr.s6_addr;
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    static const unsigned char zero[15] = {0};
    if (memcmp(b, mapped, 12) == 0 || (memcmp(b, zero, 12) == 0 && (b[12] | b[13]))) {
        /* IPv4-mapped, or the old IPv4-compatible form: the IPv4 address decides. */
        uint32_t a = (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15];
        return egress_v4_classify(a);
    }
    if (memcmp(b, zero, 15) == 0)
        return b[15] == 1 ? EGRESS_ADDR_LOOPBACK : EGRESS_ADDR_UNSPECIFIED;
    if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
        return EGRESS_ADDR_LINK_LOCAL;
    if ((b[0] & 0xfe) == 0xfc)
        return EGRESS_ADDR_PRIVATE;
    if (b[0] == 0xff)
        return EGRESS_ADDR_UNSPECIFIED;
    /* NAT64's well-known prefix 64:ff9b::/96 carries an IPv4 address. */
    static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b};
    if (memcmp(b, nat64, 12) == 0) {
        uint32_t a = (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15];
        return egress_v4_classify(a);
    }
    return EGRESS_ADDR_PUBLIC;
}

const char *egress_addr_class_name(enum egress_addr_class c)
{
    static const char *const names[EGRESS_ADDR_COUNT] = {
        [EGRESS_ADDR_PUBLIC] = "public",
        [EGRESS_ADDR_LOOPBACK] = "loopback",
        [EGRESS_ADDR_LINK_LOCAL] = "link-local",
        [EGRESS_ADDR_PRIVATE] = "private",
        [EGRESS_ADDR_SHARED] = "shared",
        [EGRESS_ADDR_UNSPECIFIED] = "unspecified",
        [EGRESS_ADDR_HOST] = "host",
    };
    return (unsigned)c < EGRESS_ADDR_COUNT ? names[c] : "unknown";
}
