/* What a sandbox's egress may reach (pure functions; engine/egress.c applies them): the
 * patterns of an allow or deny list, the destination a proxy request names, and the kind of
 * address a name resolved to. docs/egress.md. */
#ifndef PADDOCK_EGRESS_POLICY_H
#define PADDOCK_EGRESS_POLICY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#define EGRESS_HOST_MAX 253

/* A pattern: "host", "*.suffix" (any name below suffix, not suffix itself), "*" (any name),
 * an IPv4 address, an IPv6 address in brackets ("[::1]"); each optionally ":port". Names
 * are compared without case. Whether text is one (lowercase it first: the stored form). */
bool egress_pattern_valid(const char *pattern);
/* Whether pattern matches the destination host (lowercase, as egress_target_parse gives it)
 * and port. */
bool egress_pattern_match(const char *pattern, const char *host, int port);
/* The first pattern of the array of strings that matches, borrowed from it; NULL: none. */
const char *egress_patterns_match(const json_t *patterns, const char *host, int port);
/* Whether some pattern of the array names the address addr (text as inet_ntop writes it)
 * literally ("127.0.0.1", "[::1]", with or without a port that equals port): a wildcard or a
 * name never does. */
bool egress_patterns_name_address(const json_t *patterns, const char *addr, int port);

/* Whether two address literals are the same address (an IPv4 one equals its IPv4-mapped
 * IPv6 form); false when either is not an address. */
bool egress_addr_equal(const char *a, const char *b);

/* Whether pattern names an address that is not public (loopback, link-local, private ...):
 * its kind's name (static copy), else NULL. What such an entry reaches is the host's and its
 * networks', not the internet. */
const char *egress_pattern_internal(const char *pattern);
/* The address a pattern names literally into *ss (port 0): 0, or -1 when it names none. */
int egress_pattern_address(const char *pattern, struct sockaddr_storage *ss);

/* A proxy request's destination: "host:port" (CONNECT's authority) into lowercase host
 * (an IPv6 literal without its brackets) and port; default_port when the text has none (-1:
 * a port is required). 0, or -1 when it is no host name or address. */
int egress_target_parse(const char *text, int default_port, char host[EGRESS_HOST_MAX + 1],
                        int *port);
/* Whether host is an IPv4 or IPv6 literal. */
bool egress_host_is_address(const char *host);

/* Whether the server name a tunnel's TLS ClientHello asks for (name, as sent; NULL: it asks for
 * none) fits the host its CONNECT named (host, as egress_target_parse gives it): no name; the
 * same name without case, one trailing dot ignored; on a CONNECT to an address, only that
 * address itself (a name there is a site the client would reach under an address the operator
 * allowed as a machine: it must CONNECT to the name, which is decided on its own). 0, or -1
 * with the reason for the record in why (whyn bytes, NUL-terminated; the name sanitized). */
int egress_server_name_check(const char *host, const char *name, char *why, size_t whyn);

/* What a tunnel's first bytes are when they are no TLS (held by the engine until it knows):
 * plain HTTP is refused, because a front end serving many sites picks one by each request's
 * Host, which the engine reads for a plain proxy request (http:// through the proxy) and not in
 * a tunnel. HTTP: the first line (CR, LF, space and tab before it skipped; up to its LF) holds
 * "HTTP/" in any case, or starts with a word of letters and a space or tab (a request line,
 * HTTP/0.9's too), or runs past EGRESS_TUNNEL_LINE_MAX without an LF. OTHER: a control byte
 * but tab and CR comes first (a binary protocol), or the line is none of those (an SSH
 * banner). MORE: no LF yet: hold more. */
enum egress_tunnel_kind { EGRESS_TUNNEL_MORE, EGRESS_TUNNEL_OTHER, EGRESS_TUNNEL_HTTP };
#define EGRESS_TUNNEL_LINE_MAX 8192
enum egress_tunnel_kind egress_tunnel_first_line(const unsigned char *data, size_t len);

enum egress_addr_class {
    EGRESS_ADDR_PUBLIC,
    EGRESS_ADDR_LOOPBACK,    /* 127/8, ::1 */
    EGRESS_ADDR_LINK_LOCAL,  /* 169.254/16 (the cloud metadata address), fe80::/10 */
    EGRESS_ADDR_PRIVATE,     /* 10/8, 172.16/12 (Docker's networks), 192.168/16, fc00::/7 */
    EGRESS_ADDR_SHARED,      /* 100.64/10 (carrier-grade NAT) */
    EGRESS_ADDR_UNSPECIFIED, /* 0/8, ::, multicast, 240/4 and broadcast */
    EGRESS_ADDR_HOST, /* one of this host's own (engine/base/netif.h): never from the classifier */
    EGRESS_ADDR_COUNT
};
/* The kind of an AF_INET or AF_INET6 address (an IPv4-mapped IPv6 one as its IPv4). */
enum egress_addr_class egress_addr_classify(const struct sockaddr *sa);
/* "public", "loopback", "link-local", "private", "shared", "unspecified", "host"; static
 * copy. */
const char *egress_addr_class_name(enum egress_addr_class c);

#endif
