/* What the engine modules share. Not for app/ or ui/. */
#ifndef PADDOCK_ENGINE_INTERNAL_H
#define PADDOCK_ENGINE_INTERNAL_H

#include "engine/risk/policy.h"
#include "engine/risk/risk.h"
#include "engine/security.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct loop;
struct http;
struct sandbox_driver;
struct local;
struct store;
struct api;
struct events;
struct session;
struct monitor;
struct stats;
struct pool;
struct actions;
struct output;
struct term;
struct seccomp_probe;
struct egress;
struct disk;
struct commit;

/* What the benchmarks switch off to measure what it costs (bench/containment.c, bench/scale.c),
 * from $PADDOCK_UNSAFE_BENCH in the engine's own environment: never for real use; GET /v1/info
 * names what is off. */
enum engine_bench_off {
    ENGINE_BENCH_NO_PEER_CHECK = 1, /* the executor channel does not check its peer */
    ENGINE_BENCH_NO_DISK_WATCH = 2, /* the disk watchdog measures nothing */
    /* The action path writes no row: each write is a fixed-size stand-in appended to a log
     * beside the store instead, synced as the store's would be (commit.c): what a durable
     * record of any kind costs at the least. */
    ENGINE_BENCH_NO_RECORD = 4,
};

struct engine {
    struct loop *loop;
    struct http *http;
    /* The sandbox runtime: every call that reaches it goes through this table (driver.h),
     * with its state in driver_state (Docker's: struct docker). */
    const struct sandbox_driver *driver;
    void *driver_state;
    /* The local backend ([local] in the config; driver_local.c), NULL when off. */
    struct local *local;
    struct store *store;
    struct api *api;
    struct events *events;   /* what modules publish and the API's feeds receive (events.c) */
    struct monitor *monitor; /* Docker's events stream and reconnection (monitor.c) */
    struct pool *pool;       /* the warm pool (pool.c) */
    struct images *images;   /* builds asked through the API (images.c) */
    struct stats *stats;     /* resource sampling (stats.c) */
    struct actions *actions; /* actions held for approval or in flight (action.c) */
    struct output *output;   /* running actions' live output (output.c) */
    struct term *terminals;  /* operator terminals into sandboxes (terminal.c) */
    struct egress *egress;   /* egress sessions' proxies and connections (egress.c) */
    /* The config file's [egress] defaults (engine.h), checked at start; arrays of patterns. */
    json_t *egress_allow, *egress_deny;
    json_t *egress_presets; /* the config file's: name → patterns */
    int egress_ask;
    struct disk *disk;        /* the disk watchdog and the store's floor (disk.c) */
    struct commit *commit;    /* the action path's group commit (commit.c) */
    unsigned bench_off;       /* enum engine_bench_off bits; 0 outside benchmarks */
    int64_t bench_unrecorded; /* actions given an id without a row (ENGINE_BENCH_NO_RECORD) */
    char *state_dir;
    char *socket_path;     /* the agents' API socket (--socket) */
    char *operator_socket; /* <state>/operator.sock: the operator's channel (api.h) */
    char *engine_id;
    char *executor_path;
    char *default_image;
    struct seccomp_probe *seccomp_probe; /* the start-up check (seccomp_probe.c) */
    char *seccomp_opt;           /* "seccomp=<JSON>" for every sandbox's SecurityOpt (seccomp.h) */
    enum policy default_confirm; /* approval policy of sessions that name none */
    double approval_timeout;     /* seconds an action waits for the operator */
    bool auto_lint;              /* sandbox.enable_auto_lint: sessions that name none lint */
    /* [security]: what the agents' channel may ask for beyond the hardened default. */
    enum security_mode security[SECURITY_ASK_COUNT];
    /* Operator rules (rules.c): the highest risk level an allow rule may approve, and a count
     * bumped by every rule change (a session's cached rules are reloaded when it moved on). */
    enum risk_level rule_ceiling;
    unsigned rules_gen;
    double retention_days;    /* 0: history kept forever */
    struct session *sessions; /* live (not deleted) sessions, in memory */
    bool docker_ok;           /* last known daemon reachability */
    char *docker_error;       /* why the daemon was last unreachable, NULL when it answered */
    char *docker_api_version;
    bool stopping; /* SIGTERM/SIGINT came: deleting keep_alive=false sessions, then exit */
    /* The optional TCP listener (listen.c): its bound address, the bearer token it requires
     * (and the file it was generated into, or NULL), the remote-runtime X-API-Key. All NULL
     * when it is off. */
    char *listen_addr, *token, *token_file, *api_key;
    bool listen_tls, listen_client_ca; /* it speaks TLS; it takes client certificates */
};

/* The containment a benchmark switched off, by name (a new array; empty for real use). */
json_t *engine_bench_info(const struct engine *eng);
/* Record whether the daemon answered the last call (engine.c). */
void engine_note_docker(struct engine *eng, bool reachable, const char *why);

#endif
