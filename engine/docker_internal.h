/* What the docker_*.c files share; not for the rest of the engine. */
#ifndef PADDOCK_DOCKER_INTERNAL_H
#define PADDOCK_DOCKER_INTERNAL_H

#define DOCKER_API "v1.41"

struct http;
struct http_request;

struct docker {
    struct http *http;
    char *socket;
};

/* The full URL of an API path ("/containers/json?..."); malloc'd. */
char *docker_url(const struct docker *d, const char *path);
/* Point a request at the daemon (socket, later TLS). */
void docker_fill_request(const struct docker *d, struct http_request *req);
/* URL-escape one path or query component; malloc'd. */
char *docker_escape(const char *s);

#endif
