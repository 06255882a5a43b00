/* engine/risk/egress_policy.c: the patterns of an allow or deny list, a proxy request's
 * destination, and the kinds of address that are refused unless named literally. */
#include "engine/risk/egress_policy.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

static void test_patterns(void **state)
{
    (void)state;
    static const char *const valid[] = {"pypi.org",  "*.github.com", "*",       "pypi.org:443",
                                        "127.0.0.1", "127.0.0.1:80", "[::1]",   "[::1]:8080",
                                        "*:443",     "a_b.example",  "x-y.test"};
    for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++)
        if (!egress_pattern_valid(valid[i]))
            fail_msg("\"%s\" should be a pattern", valid[i]);
    static const char *const invalid[] = {"",       "bad host", "*.1.2.3.4", "a.b:99999", "a.b:0",
                                          "::1",    "[::1",     "-x.org",    "a..b",      ".a.org",
                                          "a.org:", "a.*.org",  "PYPI.ORG"};
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++)
        if (egress_pattern_valid(invalid[i]))
            fail_msg("\"%s\" should not be a pattern", invalid[i]);
}

static void test_matching(void **state)
{
    (void)state;
    assert_true(egress_pattern_match("pypi.org", "pypi.org", 443));
    assert_true(egress_pattern_match("pypi.org", "pypi.org", 80));
    assert_false(egress_pattern_match("pypi.org:443", "pypi.org", 80));
    assert_false(egress_pattern_match("pypi.org", "evilpypi.org", 443));
    assert_true(egress_pattern_match("*.github.com", "api.github.com", 443));
    assert_true(egress_pattern_match("*.github.com", "a.b.github.com", 443));
    assert_false(egress_pattern_match("*.github.com", "github.com", 443)); /* not itself */
    assert_false(egress_pattern_match("*.github.com", "xgithub.com", 443));
    assert_true(egress_pattern_match("*", "anything.test", 1));
    /* A wildcard never names an address: those are named literally. */
    assert_false(egress_pattern_match("*", "127.0.0.1", 80));
    assert_false(egress_pattern_match("*", "169.254.169.254", 80));
    assert_true(egress_pattern_match("127.0.0.1", "127.0.0.1", 80));
    assert_true(egress_pattern_match("[::1]:8080", "::1", 8080));
    assert_true(egress_pattern_match("[0::1]", "::1", 8080)); /* the address, not its spelling */
    assert_false(egress_pattern_match("127.0.0.1", "127.0.0.2", 80));
    json_t *list = json_pack("[s,s]", "*.example", "10.0.0.5:80");
    assert_string_equal(egress_patterns_match(list, "a.example", 1), "*.example");
    assert_null(egress_patterns_match(list, "example", 1));
    assert_true(egress_patterns_name_address(list, "10.0.0.5", 80));
    assert_false(egress_patterns_name_address(list, "10.0.0.5", 81));
    assert_false(egress_patterns_name_address(list, "a.example", 1));
    json_decref(list);
}

static void test_targets(void **state)
{
    (void)state;
    char host[EGRESS_HOST_MAX + 1];
    int port;
    assert_int_equal(egress_target_parse("PyPI.org:443", -1, host, &port), 0);
    assert_string_equal(host, "pypi.org");
    assert_int_equal(port, 443);
    assert_int_equal(egress_target_parse("pypi.org.", 80, host, &port), 0);
    assert_string_equal(host, "pypi.org");
    assert_int_equal(port, 80);
    assert_int_equal(egress_target_parse("[::1]:8443", -1, host, &port), 0);
    assert_string_equal(host, "::1");
    assert_int_equal(egress_target_parse("pypi.org", -1, host, &port), -1); /* CONNECT: a port */
    static const char *const bad[] = {"",
                                      ":80",
                                      "a b:80",
                                      "-rf:80",
                                      "a.org:x",
                                      "a.org:0",
                                      "::1:80",
                                      "[zz]:80",
                                      "a.org:70000",
                                      "[::1]x",
                                      "a;b.org:1",
                                      "a/b:1",
                                      "a.org..:1",
                                      "b\xc3\xbc.de:443",
                                      "[fe80::1%25lo]:80",
                                      "[fe80::1%lo]:80",
                                      "a.org:80:80",
                                      "a\tb.org:1",
                                      "[::1]:",
                                      "[]:80"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (egress_target_parse(bad[i], 80, host, &port) == 0)
            fail_msg("\"%s\" should be refused", bad[i]);
}

static enum egress_addr_class classify(const char *text)
{
    struct sockaddr_storage ss = {0};
    struct sockaddr_in *in = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, text, &in->sin_addr) == 1)
        in->sin_family = AF_INET;
    else if (inet_pton(AF_INET6, text, &in6->sin6_addr) == 1)
        in6->sin6_family = AF_INET6;
    else
        fail_msg("%s is no address", text);
    return egress_addr_classify((struct sockaddr *)&ss);
}

static void test_address_kinds(void **state)
{
    (void)state;
    static const struct {
        const char *addr;
        enum egress_addr_class want;
    } cases[] = {
        {"127.0.0.1", EGRESS_ADDR_LOOPBACK},
        {"127.255.0.9", EGRESS_ADDR_LOOPBACK},
        {"::1", EGRESS_ADDR_LOOPBACK},
        {"169.254.169.254", EGRESS_ADDR_LINK_LOCAL}, /* the cloud metadata address */
        {"fe80::1", EGRESS_ADDR_LINK_LOCAL},
        {"10.1.2.3", EGRESS_ADDR_PRIVATE},
        {"172.17.0.1", EGRESS_ADDR_PRIVATE}, /* docker0 */
        {"172.31.255.255", EGRESS_ADDR_PRIVATE},
        {"192.168.1.1", EGRESS_ADDR_PRIVATE},
        {"fd00::1", EGRESS_ADDR_PRIVATE},
        {"100.64.0.1", EGRESS_ADDR_SHARED},
        {"0.0.0.0", EGRESS_ADDR_UNSPECIFIED},
        {"::", EGRESS_ADDR_UNSPECIFIED},
        {"224.0.0.1", EGRESS_ADDR_UNSPECIFIED},
        {"255.255.255.255", EGRESS_ADDR_UNSPECIFIED},
        {"::ffff:127.0.0.1", EGRESS_ADDR_LOOPBACK}, /* mapped: the IPv4 address decides */
        {"::ffff:169.254.169.254", EGRESS_ADDR_LINK_LOCAL},
        {"64:ff9b::a9fe:a9fe", EGRESS_ADDR_LINK_LOCAL}, /* NAT64 of 169.254.169.254 */
        {"151.101.0.223", EGRESS_ADDR_PUBLIC},
        {"172.32.0.1", EGRESS_ADDR_PUBLIC},
        {"2a04:4e42::223", EGRESS_ADDR_PUBLIC},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        enum egress_addr_class got = classify(cases[i].addr);
        if (got != cases[i].want)
            fail_msg("%s: %s, want %s", cases[i].addr, egress_addr_class_name(got),
                     egress_addr_class_name(cases[i].want));
    }
}

/* One address, however it is written: a deny entry "127.0.0.1" also holds for a request naming
 * "[::ffff:127.0.0.1]", and for the resolved address of any name that reaches it (the check
 * engine/egress.c makes on every address it would connect to). */
static void test_address_spellings(void **state)
{
    (void)state;
    assert_true(egress_addr_equal("127.0.0.1", "::ffff:127.0.0.1"));
    assert_true(egress_addr_equal("::ffff:7f00:1", "127.0.0.1"));
    assert_true(egress_addr_equal("::1", "0:0::1"));
    assert_false(egress_addr_equal("127.0.0.1", "127.0.0.2"));
    assert_false(egress_addr_equal("127.0.0.1", "::1"));
    assert_false(egress_addr_equal("127.0.0.1", "64:ff9b::7f00:1")); /* NAT64: another host */
    assert_false(egress_addr_equal("2130706433", "127.0.0.1"));      /* a name, not an address */
    assert_true(egress_pattern_match("127.0.0.1:80", "::ffff:127.0.0.1", 80));
    assert_true(egress_pattern_match("[::ffff:10.0.0.5]", "10.0.0.5", 80));
    json_t *deny = json_pack("[s]", "169.254.169.254");
    assert_string_equal(egress_patterns_match(deny, "::ffff:169.254.169.254", 80),
                        "169.254.169.254");
    assert_null(egress_patterns_match(deny, "169.254.169.253", 80));
    json_decref(deny);
}

/* What the agents' channel counts as weaker (engine/security.c): an allow entry naming the
 * host's own addresses. */
static void test_internal_patterns(void **state)
{
    (void)state;
    assert_string_equal(egress_pattern_internal("169.254.169.254"), "link-local");
    assert_string_equal(egress_pattern_internal("172.17.0.1:2375"), "private");
    assert_string_equal(egress_pattern_internal("[::1]:80"), "loopback");
    assert_null(egress_pattern_internal("151.101.0.223"));
    assert_null(egress_pattern_internal("pypi.org"));
    assert_null(egress_pattern_internal("*"));
}

/* A tunnel's TLS server name against its CONNECT host: the same name (no case, one trailing
 * dot), none at all, or on a CONNECT to an address only that address; the reason names both,
 * the name sanitized. */
static void test_server_name(void **state)
{
    (void)state;
    char why[300];
    assert_int_equal(egress_server_name_check("api.github.com", "api.github.com", why, 300), 0);
    assert_int_equal(egress_server_name_check("api.github.com", "API.GitHub.com.", why, 300), 0);
    assert_int_equal(egress_server_name_check("api.github.com", NULL, why, 300), 0);
    assert_int_equal(egress_server_name_check("127.0.0.1", NULL, why, 300), 0);
    assert_int_equal(egress_server_name_check("127.0.0.1", "127.0.0.1", why, 300), 0);
    assert_int_equal(egress_server_name_check("::1", "0::1", why, 300), 0);
    assert_int_equal(egress_server_name_check("api.github.com", "evil.example", why, 300), -1);
    assert_string_equal(why, "TLS server name evil.example differs from the CONNECT host "
                             "api.github.com");
    static const char *const others[] = {"api.github.com..",    "github.com", "api.github.co",
                                         "api.github.com.evil", ".",          "xapi.github.com"};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        if (egress_server_name_check("api.github.com", others[i], why, 300) != -1)
            fail_msg("\"%s\" passed for api.github.com", others[i]);
    assert_int_equal(egress_server_name_check("127.0.0.1", "evil.example", why, 300), -1);
    assert_non_null(strstr(why, "TLS server name evil.example on a CONNECT to the address "
                                "127.0.0.1"));
    assert_int_equal(egress_server_name_check("a.test", "\x1b]0;owned\x07b.test", why, 300), -1);
    assert_null(strchr(why, '\x1b'));
    assert_null(strchr(why, '\x07'));
}

/* A tunnel's first bytes that are no TLS: plain HTTP (any spelling a lenient server could
 * read as a request) is told apart from other protocols, a line still coming waits. */
static void test_tunnel_first_line(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        enum egress_tunnel_kind want;
        size_t len; /* 0: strlen (the binary cases hold NULs) */
    } cases[] = {
        {"GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n", EGRESS_TUNNEL_HTTP, 0},
        {"\r\n\r\nget / http/1.1\r\n", EGRESS_TUNNEL_HTTP, 0},
        {" \tPOST /x HTTP/1.0\n", EGRESS_TUNNEL_HTTP, 0},
        {"GET /index.html\r\n", EGRESS_TUNNEL_HTTP, 0}, /* HTTP/0.9: no version, no Host */
        {"GET\t/ HTTP/1.1\r\n", EGRESS_TUNNEL_HTTP, 0},
        {"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", EGRESS_TUNNEL_HTTP, 0},
        {"X-1 / hTtP/1.1\r\n", EGRESS_TUNNEL_HTTP, 0},
        {"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n", EGRESS_TUNNEL_OTHER, 0},
        {"PING\r\n", EGRESS_TUNNEL_OTHER, 0},
        {"\x00\x00\x00\x10hello", EGRESS_TUNNEL_OTHER, 9},
        {"0033git-upload-pack /p.git\x00host=x\x00", EGRESS_TUNNEL_OTHER, 35},
        {"GET / HTTP/1.1", EGRESS_TUNNEL_MORE, 0},
        {"\r\n", EGRESS_TUNNEL_MORE, 0},
        {"", EGRESS_TUNNEL_MORE, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *t = cases[i].text;
        size_t n = cases[i].len ? cases[i].len : strlen(t);
        enum egress_tunnel_kind got = egress_tunnel_first_line((const unsigned char *)t, n);
        if (got != cases[i].want)
            fail_msg("case %zu: %d, want %d", i, got, cases[i].want);
    }
    /* A line past the bound without its end: refused, not held without end. */
    static unsigned char lng[EGRESS_TUNNEL_LINE_MAX + 2];
    memset(lng, 'a', sizeof lng);
    assert_int_equal(egress_tunnel_first_line(lng, EGRESS_TUNNEL_LINE_MAX), EGRESS_TUNNEL_MORE);
    assert_int_equal(egress_tunnel_first_line(lng, sizeof lng), EGRESS_TUNNEL_HTTP);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_patterns),          cmocka_unit_test(test_matching),
        cmocka_unit_test(test_targets),           cmocka_unit_test(test_address_kinds),
        cmocka_unit_test(test_internal_patterns), cmocka_unit_test(test_address_spellings),
        cmocka_unit_test(test_server_name),       cmocka_unit_test(test_tunnel_first_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
