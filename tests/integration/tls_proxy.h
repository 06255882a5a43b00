/* A TLS front for the local Docker daemon on 127.0.0.1 (tests/integration/docker_tls_proxy.py),
 * with certificates made by the openssl CLI into a temp dir. */
#ifndef PADDOCK_TESTS_TLS_PROXY_H
#define PADDOCK_TESTS_TLS_PROXY_H

#include <sys/types.h>

struct tls_proxy {
    pid_t pid;
    int port;
    char *dir;      /* mkdtemp: the CA, the proxy's certificate */
    char *certs;    /* DOCKER_CERT_PATH that works: <dir>/client */
    char *wrong_ca; /* DOCKER_CERT_PATH whose ca.pem did not sign the proxy: <dir>/wrongca */
    char *host;     /* "tcp://127.0.0.1:PORT" */
};

/* Make the certificates and start the proxy in front of docker_socket. 0, or -1 after
 * printing why. */
int tls_proxy_start(struct tls_proxy *p, const char *docker_socket);
/* SIGTERM by pid, wait, remove the temp dir. */
void tls_proxy_stop(struct tls_proxy *p);

#endif
