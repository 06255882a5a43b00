/* engine/base/tls_hello.c: the first bytes a sandbox's client sends into a CONNECT tunnel, read
 * as a TLS ClientHello, then its server name checked against a CONNECT host
 * (engine/risk/egress_policy.c). The input is read as the engine reads it: parsed again only
 * once it holds `need` bytes, growing to the whole. Checks: MORE asks for more than it has and
 * no more than the bound; the answer found on the way is the whole input's, and `need` never
 * points past the end of a hello the whole input holds; a name is NUL-terminated within its
 * 255 bytes with no NUL inside; the check's reason is one terminated line with no control
 * byte. Then the bytes after the hello (or all of them when there is none) go to the scan of
 * the handshake that follows (tls_scan_feed), whole and again in pieces whose sizes come from
 * the bytes: the same hellos, the same end and (unless refused: then nothing more is sent) the
 * same bytes passed, whatever the pieces;
 * passed never shrinks nor passes what was fed, and what is held stays under the bound. */
#include "engine/base/tls_hello.h"
#include "engine/risk/egress_policy.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_check_name(const struct tls_hello *h)
{
    if (!h->has_name)
        return;
    size_t n = strnlen(h->name, sizeof(h->name));
    if (n == 0 || n > TLS_HELLO_NAME_MAX)
        abort();
    static const char *const hosts[] = {"api.github.com", "127.0.0.1", "::1"};
    for (size_t i = 0; i < sizeof hosts / sizeof hosts[0]; i++) {
        char why[300];
        memset(why, 'x', sizeof(why));
        if (egress_server_name_check(hosts[i], h->name, why, sizeof(why)) < 0) {
            size_t wn = strnlen(why, sizeof(why));
            if (wn == sizeof(why))
                abort();
            for (size_t k = 0; k < wn; k++)
                if ((unsigned char)why[k] < 0x20 || why[k] == 0x7f)
                    abort();
        }
    }
}

struct fuzz_scan {
    enum tls_scan_status end;
    size_t hellos;
    unsigned long long names; /* a hash of the hellos' names, in order */
    unsigned long long read, passed;
};

/* Feeds data in pieces of sizes from next (NULL: whole) and checks what must hold on the way. */
static void fuzz_scan_run(const uint8_t *data, size_t size, const uint8_t *sizes, size_t nsizes,
                          struct fuzz_scan *r)
{
    static struct tls_scan s;
    tls_scan_start(&s, false);
    memset(r, 0, sizeof(*r));
    r->end = TLS_SCAN_MORE;
    size_t at = 0, k = 0;
    unsigned long long last = 0;
    while (at < size) {
        size_t n = size - at;
        if (nsizes && (size_t)sizes[k % nsizes] % 17 + 1 < n)
            n = (size_t)sizes[k % nsizes] % 17 + 1;
        k++;
        size_t used;
        enum tls_scan_status st = tls_scan_feed(&s, data + at, n, &used);
        if (used > n)
            abort();
        at += used;
        if (st == TLS_SCAN_BAD) {
            if (!s.why)
                abort();
            r->end = st;
            break;
        }
        if (s.fed != at || s.passed < last || s.passed > s.fed ||
            s.fed - s.passed > TLS_HELLO_RECORDS_MAX)
            abort();
        last = s.passed;
        if (st == TLS_SCAN_DONE) {
            r->end = st;
            break;
        }
        if (st == TLS_SCAN_HELLO) {
            fuzz_check_name(&s.hello);
            r->hellos++;
            for (const char *c = s.hello.has_name ? s.hello.name : ""; *c; c++)
                r->names = r->names * 31 + (unsigned char)*c;
            r->names = r->names * 31 + 1;
        } else if (used != n)
            abort();
    }
    r->read = at;
    r->passed = s.passed;
}

static void fuzz_scan(const uint8_t *data, size_t size)
{
    struct fuzz_scan whole, split;
    fuzz_scan_run(data, size, NULL, 0, &whole);
    fuzz_scan_run(data, size, data, size < 64 ? size : 64, &split);
    if (whole.end != split.end || whole.hellos != split.hellos || whole.names != split.names ||
        whole.read != split.read || (whole.end != TLS_SCAN_BAD && whole.passed != split.passed))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tls_hello whole, h = {.need = 0};
    enum tls_hello_status all = tls_hello_parse(data, size, &whole);
    if (all == TLS_HELLO_MORE && (whole.need <= size || whole.need > TLS_HELLO_RECORDS_MAX))
        abort();
    if (all == TLS_HELLO_BAD && !whole.why)
        abort();
    if (all == TLS_HELLO_DONE && (whole.used == 0 || whole.used > size))
        abort();
    fuzz_check_name(&whole);
    /* As the engine reads: a parse each time the bytes reach need. */
    enum tls_hello_status st = TLS_HELLO_MORE;
    size_t k = 0;
    while (st == TLS_HELLO_MORE && k <= size) {
        st = tls_hello_parse(data, k, &h);
        if (st != TLS_HELLO_MORE)
            break;
        if (h.need <= k || (all == TLS_HELLO_DONE && h.need > whole.used))
            abort();
        k = h.need;
    }
    /* The same answer as the whole input's: a hello, or a fault, found on the way stays what
     * it was; a hello the whole holds is found; while it waits, the whole may show a fault
     * that comes before need (the caller learns it at need, or at its deadline). */
    if ((st == TLS_HELLO_DONE || all == TLS_HELLO_DONE) &&
        (st != all || h.used != whole.used || h.has_name != whole.has_name ||
         strcmp(h.name, whole.name) != 0))
        abort();
    if (st == TLS_HELLO_BAD && all != TLS_HELLO_BAD)
        abort();
    if (st == TLS_HELLO_MORE && all != TLS_HELLO_MORE && all != TLS_HELLO_BAD)
        abort();
    if (all == TLS_HELLO_DONE)
        fuzz_scan(data + whole.used, size - whole.used);
    else
        fuzz_scan(data, size);
    return 0;
}
