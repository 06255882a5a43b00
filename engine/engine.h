/* The engine (`paddock serve`): public entry point. */
#ifndef PADDOCK_ENGINE_H
#define PADDOCK_ENGINE_H

struct engine_options {
    const char *state_dir;   /* required */
    const char *socket_path; /* required */
    const char *executor;    /* path of paddock-executor on the host; NULL: not found */
    const char *image;       /* default sandbox image; NULL: paddock/base:local */
    const char *docker_host; /* NULL: $DOCKER_HOST or /var/run/docker.sock */
    const char *pool;        /* warm pool: "N" (default image) or "IMAGE=N,..."; NULL: none */
    /* Called once the socket accepts requests (the caller may print; the engine never does). */
    void (*on_ready)(const char *socket_path, void *ud);
    void *ud;
};

/* Runs the engine in the foreground until SIGINT/SIGTERM. Returns 0 on a clean stop, or -1
 * with a malloc'd message in *err (for example: state dir locked by another engine). */
int engine_serve(const struct engine_options *opt, char **err);

#endif
