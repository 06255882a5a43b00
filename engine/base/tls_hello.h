/* The server name a TLS ClientHello asks for (RFC 8446 §4.1.2 for the hello, §5.1 for its
 * records; RFC 6066 §3 for server_name), read from the first bytes a client sends into a CONNECT
 * tunnel without taking part in TLS (engine/egress.c, docs/egress.md "The TLS server name").
 * The bytes are hostile: every length is checked against what is left, and anything that is not
 * a well-formed ClientHello in well-formed handshake records is TLS_HELLO_BAD with a reason.
 * Stateless: the caller passes all the bytes it holds each time; `need` says how many it must
 * hold before a hello can be complete, so bytes that come one at a time cost no re-parse each. */
#ifndef PADDOCK_TLS_HELLO_H
#define PADDOCK_TLS_HELLO_H

#include <stdbool.h>
#include <stddef.h>

#define TLS_HELLO_MAX (16 * 1024)         /* the ClientHello message, its 4-byte header included */
#define TLS_HELLO_RECORDS_MAX (24 * 1024) /* the records that carry it, their headers included */
#define TLS_HELLO_NAME_MAX 255            /* a DNS name's longest wire form */

enum tls_hello_status {
    TLS_HELLO_MORE,    /* a ClientHello's start, not its end: hold at least `need` bytes */
    TLS_HELLO_DONE,    /* a whole ClientHello: has_name, name and used are set */
    TLS_HELLO_NOT_TLS, /* the first byte is no TLS record's (content types 20 to 24) */
    TLS_HELLO_BAD,     /* handshake records that are no well-formed ClientHello: why */
};

struct tls_hello {
    bool has_name;   /* a server_name extension with its host_name */
    bool early_data; /* an early_data extension (0-RTT, RFC 8446 §4.2.10) */
    /* The host_name as sent (any byte but NUL, 1 to 255 of them), NUL-terminated: hostile text,
     * sanitize it before a terminal sees it. */
    char name[TLS_HELLO_NAME_MAX + 1];
    size_t used; /* DONE: the bytes of the records that carried the ClientHello */
    /* MORE: no ClientHello can end before the input is this long (> len): the caller parses
     * again only then. A fault in the bytes before it (a bad record header) may show only
     * then too: until then nothing is released, and the caller's deadline still runs. */
    size_t need;
    const char *why; /* BAD: what is wrong, one phrase (static copy) */
};

/* Reads the ClientHello at the start of data (len bytes, all the tunnel's first bytes so far)
 * into *hello. A ClientHello over several records, records split anywhere, and a hello without
 * extensions or without server_name are all well-formed; a second server_name extension, a
 * server_name list with other than one host_name, a record of another type or bytes of another
 * handshake message before the hello ends, a hello over TLS_HELLO_MAX or its records over
 * TLS_HELLO_RECORDS_MAX are BAD. Never reads past data + len. */
enum tls_hello_status tls_hello_parse(const unsigned char *data, size_t len,
                                      struct tls_hello *hello);

/* The client's plaintext handshake after its first ClientHello (RFC 8446 §4.1.4, §5.1, §D.4;
 * RFC 5246 §7.4), read as it passes, so that a second ClientHello (the one a HelloRetryRequest
 * asks for) is read by the same parser as the first and its name checked too. Every byte is
 * fed once, in order; the scanner keeps what it needs (at most one ClientHello) and says how
 * many of the bytes fed may be sent on: all but those of a ClientHello not yet complete.
 * - handshake records (22): their messages, split over records or sharing them, are walked;
 *   each ClientHello is reassembled and returned (TLS_SCAN_HELLO) for the caller to check;
 * - alert (21): passed, the scan goes on (it carries no handshake message, and a client that
 *   gives up sends one);
 * - application_data (23): the handshake's encrypted part begins, the scan is DONE (unless a
 *   hello offered early data: a server that answers it with a HelloRetryRequest skips such
 *   records and reads a second hello after them, so that is BAD);
 * - change_cipher_spec (20): after a handshake message other than ClientHello (TLS 1.2's
 *   ClientKeyExchange) what follows is encrypted, DONE; after hellos only, it is TLS 1.3's
 *   middlebox-compatibility record or TLS 1.2's abbreviated handshake: the next handshake
 *   message is read if its first byte is client_hello's (a second hello must be, for any
 *   server to take it), else the scan is DONE (TLS 1.2's encrypted Finished);
 * - another type, a version that is not 3.x, a length over 2^14 + 2048, an empty handshake
 *   record, a record of another type inside a handshake message, a ClientHello over
 *   TLS_HELLO_MAX or held over TLS_HELLO_RECORDS_MAX: BAD. */
enum tls_scan_status {
    TLS_SCAN_MORE,  /* all fed bytes read; feed more */
    TLS_SCAN_HELLO, /* a ClientHello ended at *used: hello is set; check it, feed the rest */
    TLS_SCAN_DONE,  /* the scan is over: every byte, fed or to come, may be sent on */
    TLS_SCAN_BAD,   /* why says what is wrong */
};

struct tls_scan {
    enum tls_scan_status status; /* DONE and BAD stay */
    unsigned char rhdr[5];       /* the record header being read */
    size_t rhdr_have;
    unsigned char rtype;   /* the current record's type */
    size_t rec_left;       /* its fragment bytes still to come (0: a header comes next) */
    bool ccs;              /* a change_cipher_spec was sent */
    bool other;            /* a handshake message other than ClientHello was sent */
    bool early;            /* a hello offered early data */
    unsigned char mhdr[4]; /* the handshake message header being read */
    size_t mhdr_have;
    size_t msg_left; /* its body bytes still to come */
    size_t msg_have; /* a ClientHello's body bytes in msg */
    unsigned char msg[TLS_HELLO_MAX];
    unsigned long long fed;       /* bytes fed so far */
    unsigned long long passed;    /* of them, those that may be sent on */
    unsigned long long msg_start; /* where the current message began */
    struct tls_hello hello;       /* HELLO: the hello just read */
    const char *why;              /* BAD: one phrase (static) */
};

/* Starts a scan after a first ClientHello that offered early data or not. */
void tls_scan_start(struct tls_scan *s, bool early_data);

/* Reads data (len bytes, the next the client sent) and says how far: *used bytes were read
 * (all of them unless HELLO, DONE or BAD); s->passed grows to what may be sent on. */
enum tls_scan_status tls_scan_feed(struct tls_scan *s, const unsigned char *data, size_t len,
                                   size_t *used);

#endif
