/* What the engine modules share. Not for app/ or ui/. */
#ifndef PADDOCK_ENGINE_INTERNAL_H
#define PADDOCK_ENGINE_INTERNAL_H

#include "engine/risk/policy.h"

#include <stdbool.h>

struct loop;
struct http;
struct sandbox_driver;
struct store;
struct api;
struct events;
struct session;
struct monitor;
struct stats;
struct pool;
struct actions;
struct term;
struct seccomp_probe;
struct egress;

struct engine {
    struct loop *loop;
    struct http *http;
    /* The sandbox runtime: every call that reaches it goes through this table (driver.h),
     * with its state in driver_state (Docker's: struct docker). */
    const struct sandbox_driver *driver;
    void *driver_state;
    struct store *store;
    struct api *api;
    struct events *events;   /* what modules publish and the API's feeds receive (events.c) */
    struct monitor *monitor; /* Docker's events stream and reconnection (monitor.c) */
    struct pool *pool;       /* the warm pool (pool.c) */
    struct stats *stats;     /* resource sampling (stats.c) */
    struct actions *actions; /* actions held for approval or in flight (action.c) */
    struct term *terminals;  /* operator terminals into sandboxes (terminal.c) */
    struct egress *egress;   /* egress sessions' proxies and connections (egress.c) */
    char *state_dir;
    char *socket_path;
    char *engine_id;
    char *executor_path;
    char *default_image;
    struct seccomp_probe *seccomp_probe; /* the start-up check (seccomp_probe.c) */
    char *seccomp_opt;           /* "seccomp=<JSON>" for every sandbox's SecurityOpt (seccomp.h) */
    enum policy default_confirm; /* approval policy of sessions that name none */
    double approval_timeout;     /* seconds an action waits for the operator */
    double retention_days;       /* 0: history kept forever */
    struct session *sessions;    /* live (not deleted) sessions, in memory */
    bool docker_ok;              /* last known daemon reachability */
    char *docker_error;          /* why the daemon was last unreachable, NULL when it answered */
    char *docker_api_version;
    bool stopping; /* SIGTERM/SIGINT came: deleting keep_alive=false sessions, then exit */
    /* The optional TCP listener (listen.c): its bound address, the bearer token it requires
     * (and the file it was generated into, or NULL), the remote-runtime X-API-Key. All NULL
     * when it is off. */
    char *listen_addr, *token, *token_file, *api_key;
};

/* Record whether the daemon answered the last call (engine.c). */
void engine_note_docker(struct engine *eng, bool reachable, const char *why);

#endif
