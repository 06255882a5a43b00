/* The optional TCP listener (`paddock serve --listen HOST:PORT`): its address, its bearer
 * token, and who may use it. The unix socket needs no credentials (its file permissions guard
 * it); every request over TCP does. docs/remote-runtime.md. */
#ifndef PADDOCK_LISTEN_H
#define PADDOCK_LISTEN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct engine;
struct api_req;

/* What the listener is told (every string borrowed during listen_tcp_start). */
struct listen_options {
    /* "HOST:PORT", "[V6]:PORT"; HOST numeric or "localhost"; port 0: any free one */
    const char *spec;
    /* the bearer token it requires; NULL: the one in <state>/token, generated (32 random
     * bytes, hex, mode 0600) when missing, and then only on a loopback address */
    const char *token;
    const char *api_key; /* X-API-Key of the remote-runtime endpoints (NULL: the token) */
    /* PEM files: the certificate (chain) and key of TLS (both or neither); the CA whose client
     * certificates open the API as the token does (needs TLS; NULL: none) */
    const char *tls_cert, *tls_key, *tls_client_ca;
    /* plain HTTP beyond loopback is allowed (else refused) */
    bool insecure;
};

/* Bind o->spec and serve it with the API's routes. Sets eng->listen_addr, eng->token,
 * eng->api_key, eng->listen_tls. 0, or -1 with a malloc'd *err (a file that cannot be read,
 * a non-loopback address without TLS and without insecure). */
int listen_tcp_start(struct engine *eng, const struct listen_options *o, char **err);
/* Free what listen_tcp_start kept in eng. */
void listen_free(struct engine *eng);

/* A request over TCP may go on: 0; or -1 after a 401 reply. /v1 paths take
 * "Authorization: Bearer <token>"; the OpenHands action-server paths of one session
 * (/v1/sessions/{id}/alive, execute_action, upload_file, ...) also take that session's
 * X-Session-API-Key or the X-API-Key; every other path (the remote-runtime API) takes the
 * X-API-Key or the bearer token. */
int listen_auth_check(struct api_req *r);

/* Equal strings, compared in time that depends on want's length only. */
bool listen_secret_eq(const char *given, const char *want);

/* "listen" of GET /v1/info: {"address", "url", "tls", "client_ca", "token_file"} or null. */
json_t *listen_info(struct engine *eng);

#endif
