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
    bool has_name; /* a server_name extension with its host_name */
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

#endif
