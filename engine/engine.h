/* The engine (`paddock serve`): public entry point. */
#ifndef PADDOCK_ENGINE_H
#define PADDOCK_ENGINE_H
#include <stdbool.h>
#include <stddef.h>

struct engine_options {
    const char *state_dir;   /* required */
    const char *socket_path; /* required */
    const char *executor;    /* path of paddock-executor on the host; NULL: not found */
    const char *image;       /* default sandbox image; NULL: paddock/base:local */
    const char *driver;      /* the sandbox driver (driver.c's table); NULL: "docker" */
    const char *docker_host; /* the driver's address; Docker's NULL: $DOCKER_HOST or
                                /var/run/docker.sock */
    /* The local backend (driver_local.h; the config's [local]): off unless local_enabled. */
    bool local_enabled, local_unsandboxed;
    const char *local_user, *local_root, *local_bwrap;
    const char *pool; /* warm pool: "N" (default image) or "IMAGE=N,..."; NULL: none */
    /* Approvals: the policy of sessions that name none ("never", "high", "medium", "always";
     * NULL: "high") and how long an action waits for the operator (seconds; 0: 600). */
    const char *confirm;
    double approval_timeout;
    /* OpenHands' sandbox.enable_auto_lint for sessions that name none (executor/lint.h). */
    bool enable_auto_lint;
    /* Operator rules: the highest risk level ("low", "medium", "high") an allow rule may
     * approve (NULL: "medium", so a rule never approves HIGH), and the config file's
     * engine-wide rules, NULL-terminated lists of globs (NULL: none). */
    const char *rule_ceiling;
    const char *const *allow;
    const char *const *deny;
    /* The config file's [egress]: patterns every "network": "egress" session allows (when its
     * request gives no "allow") and denies (always, besides its own), NULL-terminated (NULL:
     * none), and whether such sessions ask about the rest by default (-1: true). */
    const char *const *egress_allow;
    const char *const *egress_deny;
    int egress_ask;
    /* The config file's [egress.presets.NAME]: named allow lists a session's "egress.presets"
     * may name besides the built-in ones; one named like a built-in replaces it. */
    const struct engine_egress_preset {
        const char *name;
        const char *const *allow; /* NULL-terminated; NULL: none */
    } * egress_presets;
    size_t negress_presets;
    /* History of deleted sessions older than this many days is removed (0: kept forever). */
    double retention_days;
    /* A session's disk limit when it names none (bytes; 0: 10 GiB), and the free space kept on
     * the state dir's filesystem below which sessions and actions are refused (bytes; 0: 1 GiB;
     * -1: no floor). engine/disk.h. */
    long long disk_limit, disk_floor;
    /* Benchmarks only: containment switched off to measure its cost ("peer_check",
     * "disk_watch", comma-separated; $PADDOCK_UNSAFE_BENCH). NULL for real use. */
    const char *unsafe_bench;
    /* Optional TCP listener "HOST:PORT" (NULL: unix socket only). token: the bearer token it
     * requires (NULL: generated into <state>/token, and only allowed on loopback). api_key:
     * X-API-Key of the OpenHands remote-runtime endpoints (NULL: the token). */
    const char *listen;
    const char *token;
    const char *api_key;
    /* TLS on that listener: PEM files of its certificate (chain) and key (both or neither),
     * and of the CA whose client certificates count as the bearer token (NULL: none). A
     * listener beyond loopback needs TLS unless insecure is set. */
    const char *tls_cert, *tls_key, *tls_client_ca;
    bool insecure;
    /* [security]: setting names and their values ("refuse", "approve", "allow"), both
     * NULL-terminated and in step; a setting not named refuses (engine/security.h). */
    const char *const *security_names;
    const char *const *security_values;
    /* Called once the socket accepts requests (the caller may print; the engine never does). */
    void (*on_ready)(const char *socket_path, void *ud);
    void *ud;
};

/* Runs the engine in the foreground until SIGINT/SIGTERM. Returns 0 on a clean stop, or -1
 * with a malloc'd message in *err (for example: state dir locked by another engine). */
int engine_serve(const struct engine_options *opt, char **err);

#endif
