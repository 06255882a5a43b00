/* engine/base/tls_hello.c: the server name of a ClientHello built here field by field (RFC 8446
 * §4.1.2, RFC 6066 §3), whole, split into records of every size and cut at every byte; lengths
 * that lie, names that are many or none, bytes that are no TLS. */
#include "engine/base/tls_hello.h"
#include "engine/risk/egress_policy.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

struct bytes {
    unsigned char b[64 * 1024];
    size_t n;
};

static void put(struct bytes *o, const void *p, size_t n)
{
    assert_true(o->n + n <= sizeof(o->b));
    memcpy(o->b + o->n, p, n);
    o->n += n;
}

static void put_uint(struct bytes *o, size_t v, size_t width)
{
    for (size_t i = width; i-- > 0;) {
        unsigned char c = (unsigned char)(v >> (8 * i));
        put(o, &c, 1);
    }
}

/* An extension: type, length, data. */
static void put_ext(struct bytes *o, size_t type, const void *data, size_t n)
{
    put_uint(o, type, 2);
    put_uint(o, n, 2);
    put(o, data, n);
}

/* A server_name extension naming each of names (host_name entries). */
static void put_sni(struct bytes *o, const char *const *names, size_t k)
{
    struct bytes list = {.n = 0};
    for (size_t i = 0; i < k; i++) {
        put_uint(&list, 0, 1);
        put_uint(&list, strlen(names[i]), 2);
        put(&list, names[i], strlen(names[i]));
    }
    struct bytes data = {.n = 0};
    put_uint(&data, list.n, 2);
    put(&data, list.b, list.n);
    put_ext(o, 0, data.b, data.n);
}

/* A ClientHello message, its handshake header included: exts is its extensions block's
 * content (NULL: a hello with no extensions block at all). */
static void put_hello(struct bytes *o, const struct bytes *exts)
{
    struct bytes body = {.n = 0};
    put_uint(&body, 0x0303, 2);
    for (int i = 0; i < 32; i++)
        put_uint(&body, (size_t)i, 1); /* random */
    put_uint(&body, 32, 1);            /* legacy_session_id */
    for (int i = 0; i < 32; i++)
        put_uint(&body, 0xaa, 1);
    put_uint(&body, 4, 2); /* cipher_suites */
    put_uint(&body, 0x1301, 2);
    put_uint(&body, 0x1302, 2);
    put_uint(&body, 1, 1); /* compression: null */
    put_uint(&body, 0, 1);
    if (exts) {
        put_uint(&body, exts->n, 2);
        put(&body, exts->b, exts->n);
    }
    put_uint(o, 1, 1); /* client_hello */
    put_uint(o, body.n, 3);
    put(o, body.b, body.n);
}

/* The message in handshake records of at most frag bytes each. */
static void put_records(struct bytes *o, const struct bytes *msg, size_t frag)
{
    for (size_t at = 0; at < msg->n; at += frag) {
        size_t k = msg->n - at < frag ? msg->n - at : frag;
        put_uint(o, 22, 1);
        put_uint(o, 0x0301, 2);
        put_uint(o, k, 2);
        put(o, msg->b + at, k);
    }
}

/* Extensions as a browser sends them around server_name: supported_versions, a key share. */
static void put_common_exts(struct bytes *o, bool sni_last, const char *name)
{
    static const unsigned char versions[] = {2, 0x03, 0x04};
    unsigned char share[38] = {0, 36, 0, 0x1d, 0, 32};
    if (!sni_last && name)
        put_sni(o, &name, 1);
    put_ext(o, 43, versions, sizeof versions);
    put_ext(o, 51, share, sizeof share);
    put_ext(o, 0xfe0d, "ech-outer", 9); /* encrypted_client_hello: the outer name is checked */
    if (sni_last && name)
        put_sni(o, &name, 1);
}

/* The records parse to DONE with name (NULL: none), and every shorter prefix to MORE with a
 * need that is more than the prefix and no more than the whole: a caller that waits for need
 * never waits past the bytes that complete the hello. */
static void expect_name(const struct bytes *rec, const char *name)
{
    struct tls_hello h;
    assert_int_equal(tls_hello_parse(rec->b, rec->n, &h), TLS_HELLO_DONE);
    assert_int_equal(h.used, rec->n);
    if (name) {
        assert_true(h.has_name);
        assert_string_equal(h.name, name);
    } else
        assert_false(h.has_name);
    for (size_t k = 0; k < rec->n; k++) {
        if (tls_hello_parse(rec->b, k, &h) != TLS_HELLO_MORE)
            fail_msg("a prefix of %zu of %zu bytes is not MORE", k, rec->n);
        if (h.need <= k || h.need > rec->n)
            fail_msg("a prefix of %zu of %zu bytes needs %zu", k, rec->n, h.need);
    }
}

static const char *bad(const struct bytes *rec)
{
    static struct tls_hello h;
    enum tls_hello_status st = tls_hello_parse(rec->b, rec->n, &h);
    if (st != TLS_HELLO_BAD)
        fail_msg("parsed as %d, not BAD", (int)st);
    assert_non_null(h.why);
    return h.why;
}

static void test_one_record(void **state)
{
    (void)state;
    struct bytes exts = {.n = 0}, msg = {.n = 0}, rec = {.n = 0};
    put_common_exts(&exts, false, "api.github.com");
    put_hello(&msg, &exts);
    put_records(&rec, &msg, 16384);
    expect_name(&rec, "api.github.com");
    /* What follows the hello (early data, the next records) is not the parser's. */
    put_uint(&rec, 23, 1);
    put_uint(&rec, 0x0303, 2);
    put_uint(&rec, 3, 2);
    put(&rec, "abc", 3);
    struct tls_hello h;
    assert_int_equal(tls_hello_parse(rec.b, rec.n, &h), TLS_HELLO_DONE);
    assert_int_equal(h.used, rec.n - 8);
    assert_string_equal(h.name, "api.github.com");
}

static void test_split_records(void **state)
{
    (void)state;
    static const size_t frags[] = {1, 2, 3, 4, 5, 7, 64, 100};
    for (size_t i = 0; i < sizeof frags / sizeof frags[0]; i++) {
        struct bytes exts = {.n = 0}, msg = {.n = 0}, rec = {.n = 0};
        put_common_exts(&exts, false, "Files.PythonHosted.org.");
        put_hello(&msg, &exts);
        put_records(&rec, &msg, frags[i]);
        expect_name(&rec, "Files.PythonHosted.org."); /* as sent: case and dot are the check's */
    }
}

/* Bytes that come one at a time, parsed only when the input reaches need: the hello is found,
 * after a number of parses that grows with the log of its size, not with its bytes. */
static void test_need_skips_reparses(void **state)
{
    (void)state;
    struct bytes exts = {.n = 0}, msg = {.n = 0}, rec = {.n = 0};
    put_common_exts(&exts, true, "pypi.org");
    put_hello(&msg, &exts);
    put_records(&rec, &msg, 1);
    assert_true(rec.n > 800);
    struct tls_hello h;
    size_t need = 0, parses = 0;
    enum tls_hello_status st = TLS_HELLO_MORE;
    for (size_t k = 1; k <= rec.n && st == TLS_HELLO_MORE; k++) {
        if (k < need)
            continue;
        parses++;
        st = tls_hello_parse(rec.b, k, &h);
        need = h.need;
    }
    assert_int_equal(st, TLS_HELLO_DONE);
    assert_string_equal(h.name, "pypi.org");
    if (parses > 100)
        fail_msg("%zu parses for %zu bytes", parses, rec.n);
}

static void test_extension_at_the_end(void **state)
{
    (void)state;
    struct bytes exts = {.n = 0}, msg = {.n = 0}, rec = {.n = 0};
    put_common_exts(&exts, true, "registry.npmjs.org");
    put_hello(&msg, &exts);
    put_records(&rec, &msg, 50);
    expect_name(&rec, "registry.npmjs.org");
    /* server_name alone */
    struct bytes only = {.n = 0}, msg2 = {.n = 0}, rec2 = {.n = 0};
    const char *name = "a";
    put_sni(&only, &name, 1);
    put_hello(&msg2, &only);
    put_records(&rec2, &msg2, 16384);
    expect_name(&rec2, "a");
}

static void test_no_server_name(void **state)
{
    (void)state;
    struct bytes exts = {.n = 0}, msg = {.n = 0}, rec = {.n = 0};
    put_common_exts(&exts, false, NULL);
    put_hello(&msg, &exts);
    put_records(&rec, &msg, 16384);
    expect_name(&rec, NULL);
    /* TLS 1.2 and before may leave the extensions out altogether */
    struct bytes msg2 = {.n = 0}, rec2 = {.n = 0};
    put_hello(&msg2, NULL);
    put_records(&rec2, &msg2, 16384);
    expect_name(&rec2, NULL);
}

static void test_several_names(void **state)
{
    (void)state;
    static const char *const two[] = {"api.github.com", "evil.example"};
    struct bytes exts = {.n = 0}, msg = {.n = 0}, rec = {.n = 0};
    put_sni(&exts, two, 2);
    put_hello(&msg, &exts);
    put_records(&rec, &msg, 16384);
    assert_string_equal(bad(&rec), "more than one host_name in server_name");

    /* two server_name extensions, each with one name */
    struct bytes exts2 = {.n = 0}, msg2 = {.n = 0}, rec2 = {.n = 0};
    put_sni(&exts2, &two[0], 1);
    put_sni(&exts2, &two[1], 1);
    put_hello(&msg2, &exts2);
    put_records(&rec2, &msg2, 16384);
    assert_string_equal(bad(&rec2), "two server_name extensions");

    /* a name type nobody defined, an empty name, a NUL inside one, one too long */
    static const struct {
        unsigned char type;
        const char *name;
        size_t n;
        const char *why;
    } cases[] = {
        {1, "evil.example", 12, "a server name of a type other than host_name"},
        {0, "", 0, "an empty host_name"},
        {0, "api.github.com\0.evil", 20, "a host_name holding a NUL byte"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct bytes list = {.n = 0}, data = {.n = 0}, e = {.n = 0}, m = {.n = 0}, r = {.n = 0};
        put_uint(&list, cases[i].type, 1);
        put_uint(&list, cases[i].n, 2);
        put(&list, cases[i].name, cases[i].n);
        put_uint(&data, list.n, 2);
        put(&data, list.b, list.n);
        put_ext(&e, 0, data.b, data.n);
        put_hello(&m, &e);
        put_records(&r, &m, 16384);
        assert_string_equal(bad(&r), cases[i].why);
    }
    char longname[300];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    const char *ln = longname;
    struct bytes e = {.n = 0}, m = {.n = 0}, r = {.n = 0};
    put_sni(&e, &ln, 1);
    put_hello(&m, &e);
    put_records(&r, &m, 16384);
    assert_string_equal(bad(&r), "a host_name longer than 255 bytes");
}

/* A 16-bit length in a built message changed in place. */
static void patch16(struct bytes *b, size_t at, size_t v)
{
    b->b[at] = (unsigned char)(v >> 8);
    b->b[at + 1] = (unsigned char)v;
}

static void test_lengths_that_lie(void **state)
{
    (void)state;
    const char *name = "api.github.com";
    struct bytes exts = {.n = 0}, msg = {.n = 0};
    put_sni(&exts, &name, 1);
    put_hello(&msg, &exts);
    /* Offsets in the message: 4 header, 2 version, 32 random, 1+32 session id, 2+4 suites,
     * 1+1 compression, then the extensions' length and the server_name extension. */
    const size_t ext_len = 4 + 2 + 32 + 33 + 6 + 2;
    const size_t sni_len = ext_len + 2 + 2, list_len = sni_len + 2, host_len = list_len + 3;
    const struct {
        size_t at;
        long delta;
        const char *why;
    } lies[] = {
        {ext_len, 1, "an extensions length that disagrees with the ClientHello's"},
        {ext_len, -1, "an extensions length that disagrees with the ClientHello's"},
        {sni_len, 1, "an extension that runs past the ClientHello's end"},
        {list_len, -1, "a server_name list whose length disagrees with its extension's"},
        {list_len, 1, "a server_name list whose length disagrees with its extension's"},
        {host_len, 1, "a server name that runs past its list"},
    };
    for (size_t i = 0; i < sizeof lies / sizeof lies[0]; i++) {
        struct bytes m = msg, r = {.n = 0};
        size_t v = (size_t)m.b[lies[i].at] << 8 | m.b[lies[i].at + 1];
        patch16(&m, lies[i].at, (size_t)((long)v + lies[i].delta));
        put_records(&r, &m, 16384);
        const char *why = bad(&r);
        if (strcmp(why, lies[i].why) != 0)
            fail_msg("lie %zu: \"%s\", not \"%s\"", i, why, lies[i].why);
    }
    /* The handshake's length shorter than the record: bytes after the hello in its record. */
    struct bytes m = msg, r = {.n = 0};
    m.b[3]--;
    put_records(&r, &m, 16384);
    assert_string_equal(bad(&r), "bytes after the ClientHello in its record");
    /* A handshake length that leaves out the suites: the body ends inside a field. */
    struct bytes cut = {.n = 0}, rc = {.n = 0};
    put_uint(&cut, 1, 1);
    put_uint(&cut, 40, 3);
    put(&cut, msg.b + 4, 40);
    put_records(&rc, &cut, 16384);
    assert_string_equal(bad(&rc), "a bad legacy_session_id");
    /* A session id over 32 bytes, an odd cipher_suites length, no compression method. */
    struct bytes s = msg, rs = {.n = 0};
    s.b[4 + 34] = 33;
    put_records(&rs, &s, 16384);
    assert_string_equal(bad(&rs), "a bad legacy_session_id");
    struct bytes cs = msg, rcs = {.n = 0};
    cs.b[4 + 34 + 33 + 1] = 3;
    put_records(&rcs, &cs, 16384);
    assert_string_equal(bad(&rcs), "a bad cipher_suites list");
    /* A handshake longer than 16 KiB, a record longer than 2^14, an empty record. */
    unsigned char big[] = {22, 3, 1, 0, 4, 1, 0, 0x40, 0x01};
    struct bytes b = {.n = 0};
    put(&b, big, sizeof big);
    assert_string_equal(bad(&b), "a ClientHello longer than 16 KiB");
    unsigned char rec_big[] = {22, 3, 3, 0x40, 0x01};
    struct bytes rb = {.n = 0};
    put(&rb, rec_big, sizeof rec_big);
    assert_string_equal(bad(&rb), "a record longer than 2^14 bytes");
    unsigned char empty[] = {22, 3, 3, 0, 0};
    struct bytes e = {.n = 0};
    put(&e, empty, sizeof empty);
    assert_string_equal(bad(&e), "an empty handshake record");
}

static void test_records_that_are_not_a_hello(void **state)
{
    (void)state;
    const char *name = "api.github.com";
    struct bytes exts = {.n = 0}, msg = {.n = 0}, rec = {.n = 0};
    put_sni(&exts, &name, 1);
    put_hello(&msg, &exts);
    /* the first half in a record, then an application_data record */
    struct bytes half = msg;
    half.n = msg.n / 2;
    put_records(&rec, &half, 16384);
    unsigned char app[] = {23, 3, 3, 0, 1, 'x'};
    put(&rec, app, sizeof app);
    assert_string_equal(bad(&rec), "a record of another type before the ClientHello's end");
    /* a record version that is no TLS's */
    struct bytes v = {.n = 0};
    put_records(&v, &msg, 16384);
    v.b[1] = 2;
    assert_string_equal(bad(&v), "a record whose version is not TLS's (3.x)");
    /* a handshake message that is a ServerHello */
    struct bytes sh = msg, rs = {.n = 0};
    sh.b[0] = 2;
    put_records(&rs, &sh, 16384);
    assert_string_equal(bad(&rs), "a first handshake message that is no ClientHello");
    /* a hello of 5000 bytes in records of one byte: 30000 bytes of records */
    struct bytes pad = {.n = 0}, m = {.n = 0}, r = {.n = 0};
    static unsigned char zeros[5000];
    put_ext(&pad, 21, zeros, sizeof zeros); /* padding */
    put_hello(&m, &pad);
    put_records(&r, &m, 1);
    struct tls_hello h = {.need = 1};
    enum tls_hello_status st = TLS_HELLO_MORE;
    for (size_t k = 1; k <= r.n && st == TLS_HELLO_MORE; k = k + 1 > h.need ? k + 1 : h.need)
        st = tls_hello_parse(r.b, k, &h);
    assert_int_equal(st, TLS_HELLO_BAD);
    assert_string_equal(h.why, "a ClientHello whose records exceed 24 KiB");
}

static void test_not_tls(void **state)
{
    (void)state;
    static const char *const other[] = {"GET / HTTP/1.1\r\n", "SSH-2.0-OpenSSH_9.2\r\n", "\x80"};
    struct tls_hello h;
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
        assert_int_equal(tls_hello_parse((const unsigned char *)other[i], strlen(other[i]), &h),
                         TLS_HELLO_NOT_TLS);
    /* Records of TLS's other types before the hello are TLS, and refused: a warning alert
     * (Go's crypto/tls skips it and reads the hello after it), change_cipher_spec,
     * application_data, heartbeat. */
    const char *name = "evil.example";
    struct bytes exts = {.n = 0}, msg = {.n = 0};
    put_sni(&exts, &name, 1);
    put_hello(&msg, &exts);
    static const unsigned char first[][7] = {
        {21, 3, 1, 0, 2, 1, 90}, {20, 3, 1, 0, 1, 1}, {23, 3, 3, 0, 1, 'x'}, {24, 3, 1, 0, 1, 1}};
    for (size_t i = 0; i < sizeof first / sizeof first[0]; i++) {
        struct bytes rec = {.n = 0};
        put(&rec, first[i], first[i][0] == 21 ? 7 : 6);
        put_records(&rec, &msg, 16384);
        assert_string_equal(bad(&rec), "a TLS record of another type before the ClientHello");
    }
    assert_int_equal(tls_hello_parse((const unsigned char *)"", 0, &h), TLS_HELLO_MORE);
    assert_int_equal(h.need, 1);
    assert_int_equal(tls_hello_parse((const unsigned char *)"\x16", 1, &h), TLS_HELLO_MORE);
    assert_int_equal(h.need, 6);
}

/* ---- the handshake after the first hello (tls_scan) ---- */

static void put_record(struct bytes *o, unsigned type, const void *data, size_t n)
{
    put_uint(o, type, 1);
    put_uint(o, 0x0303, 2);
    put_uint(o, n, 2);
    put(o, data, n);
}

/* A ClientHello message naming name (NULL: none) as a TLS 1.3 client sends it. */
static void put_hello_named(struct bytes *msg, const char *name)
{
    struct bytes exts = {.n = 0};
    put_common_exts(&exts, false, name);
    put_hello(msg, &exts);
}

#define SCAN_HELLOS 4

struct scan_run {
    enum tls_scan_status end; /* MORE: every byte read and the scan goes on */
    const char *why;
    char names[SCAN_HELLOS][TLS_HELLO_NAME_MAX + 1]; /* "" for a hello without a name */
    size_t hellos;
    unsigned long long read, passed; /* where the scan stopped; what it passed */
};

/* Feeds flow to a scan in pieces of step bytes, as the relay reads it. While the scan has not
 * read to hold_to, nothing after hold_from (a hello's first byte) is passed: the hello is held
 * (the record header before it may pass: alone it makes the destination do nothing); passed
 * never shrinks and never exceeds what was fed. */
static void scan_flow(const struct bytes *flow, size_t step, size_t hold_from, size_t hold_to,
                      struct scan_run *r)
{
    static struct tls_scan s;
    tls_scan_start(&s, false);
    memset(r, 0, sizeof(*r));
    size_t at = 0;
    unsigned long long last = 0;
    r->end = TLS_SCAN_MORE;
    while (at < flow->n) {
        size_t k = flow->n - at < step ? flow->n - at : step, used;
        enum tls_scan_status st = tls_scan_feed(&s, flow->b + at, k, &used);
        assert_true(used <= k);
        at += used;
        if (st == TLS_SCAN_BAD) {
            r->end = st;
            r->why = s.why;
            assert_non_null(s.why);
            break;
        }
        assert_true(s.passed >= last && s.passed <= s.fed && s.fed == at);
        last = s.passed;
        if (at < hold_to && s.passed > hold_from)
            fail_msg("step %zu: %llu passed of a hello held from %zu", step, s.passed, hold_from);
        if (st == TLS_SCAN_DONE) {
            r->end = st;
            break;
        }
        if (st == TLS_SCAN_HELLO) {
            assert_true(r->hellos < SCAN_HELLOS);
            strcpy(r->names[r->hellos++], s.hello.has_name ? s.hello.name : "");
        } else
            assert_int_equal(used, k);
    }
    r->read = at;
    r->passed = s.passed;
}

static const size_t scan_steps[] = {1, 2, 3, 5, 7, 64, 100000};
#define SCAN_STEPS (sizeof scan_steps / sizeof scan_steps[0])

/* After a HelloRetryRequest: the middlebox-compatibility CCS, then a second hello in records
 * of frag bytes. Its name is read whatever the pieces, and its bytes are held until it is
 * whole; another name than the CONNECT host's is refused as the first hello's would be. */
static void test_scan_retry_hello(void **state)
{
    (void)state;
    static const size_t frags[] = {1, 2, 5, 100, 16384};
    for (size_t f = 0; f < sizeof frags / sizeof frags[0]; f++)
        for (size_t i = 0; i < SCAN_STEPS; i++) {
            struct bytes flow = {.n = 0}, msg = {.n = 0};
            put_record(&flow, 20, "\x01", 1);
            size_t start = flow.n;
            put_hello_named(&msg, "evil.example");
            put_records(&flow, &msg, frags[f]);
            size_t end = flow.n;
            put_record(&flow, 23, "finished", 8);
            struct scan_run r;
            scan_flow(&flow, scan_steps[i], start + 5, end, &r);
            assert_int_equal(r.end, TLS_SCAN_DONE);
            assert_int_equal(r.hellos, 1);
            assert_string_equal(r.names[0], "evil.example");
            char why[300];
            assert_int_equal(
                egress_server_name_check("allowed.example", r.names[0], why, sizeof(why)), -1);
            assert_int_equal(egress_server_name_check("evil.example", r.names[0], why, sizeof(why)),
                             0);
        }
}

/* A second hello without a CCS before it (a client without middlebox compatibility) whose
 * type byte is a record of its own, the rest in the next; and one whose type byte ends a
 * record that starts with another message. */
static void test_scan_hello_split_at_its_type(void **state)
{
    (void)state;
    for (size_t i = 0; i < SCAN_STEPS; i++) {
        struct bytes flow = {.n = 0}, msg = {.n = 0}, rec = {.n = 0};
        put_hello_named(&msg, "Allowed.Example.");
        size_t start = flow.n;
        put_record(&flow, 22, msg.b, 1);
        put_record(&flow, 22, msg.b + 1, msg.n - 1);
        size_t end = flow.n;
        struct scan_run r;
        scan_flow(&flow, scan_steps[i], start + 5, end, &r);
        assert_int_equal(r.end, TLS_SCAN_MORE);
        assert_int_equal(r.hellos, 1);
        assert_string_equal(r.names[0], "Allowed.Example.");
        assert_int_equal(r.passed, flow.n);
        char why[300];
        assert_int_equal(egress_server_name_check("allowed.example", r.names[0], why, sizeof(why)),
                         0);
        /* A message of another type, then the hello's type byte, in one record. */
        flow.n = 0;
        put_uint(&rec, 4, 1); /* new_session_ticket-like: a type the scan only walks */
        put_uint(&rec, 2, 3);
        put(&rec, "xy", 2);
        put(&rec, msg.b, 1);
        put_record(&flow, 22, rec.b, rec.n);
        put_record(&flow, 22, msg.b + 1, msg.n - 1);
        scan_flow(&flow, scan_steps[i], 5 + 6, flow.n, &r);
        assert_int_equal(r.hellos, 1);
        assert_string_equal(r.names[0], "Allowed.Example.");
        assert_int_equal(r.passed, flow.n);
    }
}

/* TLS 1.2: ClientKeyExchange in plaintext, then change_cipher_spec, then the encrypted
 * Finished, of type 22 but ciphertext (here starting with client_hello's byte, as a random one
 * may): the scan ends at the CCS, every byte passes, nothing is parsed after it. */
static void test_scan_tls12(void **state)
{
    (void)state;
    for (size_t i = 0; i < SCAN_STEPS; i++) {
        struct bytes flow = {.n = 0}, cke = {.n = 0};
        put_uint(&cke, 16, 1); /* client_key_exchange */
        put_uint(&cke, 33, 3);
        put_uint(&cke, 32, 1);
        for (int k = 0; k < 32; k++)
            put_uint(&cke, 0x55, 1);
        put_records(&flow, &cke, 10);
        put_record(&flow, 20, "\x01", 1);
        put_record(&flow, 22, "\x01\xff\xff\xff garbage that is ciphertext", 29);
        struct scan_run r;
        scan_flow(&flow, scan_steps[i], 0, 0, &r);
        assert_int_equal(r.end, TLS_SCAN_DONE);
        assert_int_equal(r.hellos, 0);
        assert_int_equal(r.passed, r.read);
        /* The abbreviated handshake (a resumed session): CCS right after the hello, then the
         * encrypted Finished, whose first byte is no ClientHello's: DONE there. */
        flow.n = 0;
        put_record(&flow, 20, "\x01", 1);
        put_record(&flow, 22, "\x9a\x01\x02 ciphertext", 14);
        put_record(&flow, 23, "data", 4);
        scan_flow(&flow, scan_steps[i], 0, 0, &r);
        assert_int_equal(r.end, TLS_SCAN_DONE);
        assert_int_equal(r.hellos, 0);
        assert_int_equal(r.read, 6 + 5);
    }
}

/* application_data ends the scan: what follows, even a "hello", is not read; an alert is
 * passed and the scan goes on; after a hello that offered early data, application data is
 * refused (a server answering with a HelloRetryRequest skips it and reads a hello after it). */
static void test_scan_application_data_and_alerts(void **state)
{
    (void)state;
    struct bytes flow = {.n = 0}, msg = {.n = 0};
    put_hello_named(&msg, "evil.example");
    put_record(&flow, 21, "\x01\x00", 2);
    put_record(&flow, 23, "finished", 8);
    put_records(&flow, &msg, 16384);
    struct scan_run r;
    scan_flow(&flow, 1, 0, 0, &r);
    assert_int_equal(r.end, TLS_SCAN_DONE);
    assert_int_equal(r.hellos, 0);
    assert_int_equal(r.read, 7 + 5);

    static struct tls_scan s;
    size_t used;
    tls_scan_start(&s, true);
    assert_int_equal(tls_scan_feed(&s, flow.b + 7, 13, &used), TLS_SCAN_BAD);
    assert_string_equal(s.why, "application data after a ClientHello offering early data");
}

/* Record headers and message lengths that lie. */
static void test_scan_lengths_that_lie(void **state)
{
    (void)state;
    static const struct {
        const char *bytes;
        size_t n;
        const char *why;
    } cases[] = {
        {"\x18\x03\x03\x00\x01x", 6, "a record of a type the handshake has not"},
        {"\x05\x03\x03\x00\x01x", 6, "a record of a type the handshake has not"},
        {"\x16\x02\x00\x00\x01x", 6, "a record whose version is not TLS's (3.x)"},
        {"\x16\x03\x03\x48\x01", 5, "a record longer than 2^14 + 2048 bytes"},
        {"\x16\x03\x03\x00\x00", 5, "an empty handshake record"},
        {"\x16\x03\x03\x00\x04\x01\x00\x40\x00", 9, "a ClientHello longer than 16 KiB"},
        /* a hello's start, then a CCS inside it */
        {"\x16\x03\x03\x00\x02\x01\x00\x15\x03\x03\x00\x01\x01", 13,
         "a record of another type inside a handshake message"},
        /* a hello whose compression list's length lies (the first hello's parser says so) */
        {"\x16\x03\x03\x00\x2c\x01\x00\x00\x28\x03\x03"
         "0123456789abcdef0123456789abcdef\x00\x00\x02\x13\x01\x01",
         49, "a bad compression_methods list"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (size_t k = 0; k < SCAN_STEPS; k++) {
            struct bytes flow = {.n = 0};
            put(&flow, cases[i].bytes, cases[i].n);
            struct scan_run r;
            scan_flow(&flow, scan_steps[k], 0, 0, &r);
            if (r.end != TLS_SCAN_BAD)
                fail_msg("case %zu step %zu: %d, not BAD", i, scan_steps[k], (int)r.end);
            assert_string_equal(r.why, cases[i].why);
        }
    /* A hello held over 24 KiB of records (one byte each): refused before it is whole. */
    struct bytes flow = {.n = 0}, msg = {.n = 0}, exts = {.n = 0};
    static const unsigned char zeros[5000];
    put_common_exts(&exts, false, "a.example");
    put_ext(&exts, 21, zeros, sizeof zeros); /* padding */
    put_hello(&msg, &exts);
    struct scan_run r;
    put_records(&flow, &msg, 1);
    scan_flow(&flow, 4096, 0, 0, &r);
    assert_int_equal(r.end, TLS_SCAN_BAD);
    assert_string_equal(r.why, "a ClientHello whose records exceed 24 KiB");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_record),
        cmocka_unit_test(test_split_records),
        cmocka_unit_test(test_need_skips_reparses),
        cmocka_unit_test(test_extension_at_the_end),
        cmocka_unit_test(test_no_server_name),
        cmocka_unit_test(test_several_names),
        cmocka_unit_test(test_lengths_that_lie),
        cmocka_unit_test(test_records_that_are_not_a_hello),
        cmocka_unit_test(test_not_tls),
        cmocka_unit_test(test_scan_retry_hello),
        cmocka_unit_test(test_scan_hello_split_at_its_type),
        cmocka_unit_test(test_scan_tls12),
        cmocka_unit_test(test_scan_application_data_and_alerts),
        cmocka_unit_test(test_scan_lengths_that_lie),
    };
    return cmocka_run_group_tests_name("tls_hello", tests, NULL, NULL);
}
