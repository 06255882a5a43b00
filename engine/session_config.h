/* Per-session options of POST /v1/sessions: parsed and checked into a struct, then the Docker
 * create body built from it (no I/O to the daemon: session_prepare.h does that). With no option the
 * body is the hardened default (docs/architecture.md "Hardened container"). */
#ifndef PADDOCK_SESSION_CONFIG_H
#define PADDOCK_SESSION_CONFIG_H

#include "engine/mount_policy.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct engine;
struct session_result;

#define SESSION_MAX_VOLUMES 16
#define SESSION_MAX_PORTS 32

enum session_ws {
    SESSION_WS_IMAGE,   /* none asked: the image's /workspace (an anonymous volume if read_only) */
    SESSION_WS_BIND,    /* a host directory */
    SESSION_WS_VOLUME,  /* a named Docker volume */
    SESSION_WS_OVERLAY, /* a host directory as the lower layer, changes in <state>/work/<id> */
    SESSION_WS_CLONE,   /* a git clone into <state>/work/<id>/workspace */
    SESSION_WS_COUNT
};
/* "image", "bind", "volume", "overlay", "clone": the workspace's "type" in the stored config;
 * NULL out of range. */
const char *session_ws_name(enum session_ws ws);
/* The workspace type named by text: 0 and *ws, or -1 (*ws untouched). */
int session_ws_parse(const char *name, enum session_ws *ws);

enum session_net {
    SESSION_NET_NONE,   /* no network (the default) */
    SESSION_NET_BRIDGE, /* Docker's bridge: outbound, and published ports */
    SESSION_NET_HOST,   /* the host's own */
    SESSION_NET_EGRESS, /* none, and an HTTP proxy through the engine (engine/egress.c) */
    SESSION_NET_COUNT
};
/* "none", "bridge", "host", "egress": the stored option; NULL out of range. */
const char *session_net_name(enum session_net net);
/* The network mode named by text: 0 and *net, or -1 (*net untouched). */
int session_net_parse(const char *name, enum session_net *net);

/* Who the agent's shell runs as (OpenHands' run_as_openhands and sandbox.user_id). */
enum session_user {
    SESSION_USER_AGENT,     /* paddock's `agent` (uid 1000, /home/agent): the native default */
    SESSION_USER_OPENHANDS, /* `openhands` (user_id, 1000 by default; /home/openhands) */
    SESSION_USER_ROOT,      /* run_as_openhands false: root */
    SESSION_USER_COUNT
};
/* "agent", "openhands", "root"; NULL out of range. */
const char *session_user_name(enum session_user u);

/* The default uid of the agent and openhands users. */
#define SESSION_AGENT_UID 1000

/* Where the workspace is mounted in the container. */
#define WORKSPACE_IN_CONTAINER "/workspace"

struct session_mount {
    char *source; /* bind: the resolved host path; volume: its name */
    char *target;
    struct mount_id id; /* what the bind (or the volume's bind device) named when checked */
    bool volume;
    bool read_only;
};

struct session_port {
    int port;
    const char *proto; /* "tcp", "udp", "sctp" */
};

struct session_config {
    char *image;       /* NULL: the engine's default */
    char *name;        /* NULL: the session id */
    json_t *env;       /* object of strings, never NULL; without what was withheld */
    json_t *env_allow; /* array of names passed through though they look like credentials */
    json_t *withheld;  /* array of {"name", "why"}: env names the sandbox does not get */
    double cpus;
    long long memory, pids;
    /* The disk limit: limits.disk, else the engine's default; the watchdog (disk.c) enforces
     * it. disk_asked: limits.disk was given; disk_quota: Docker's StorageOpt too (asked, and
     * the storage driver has per-container quotas: session_prepare.c). */
    long long disk;
    bool disk_asked, disk_quota;
    enum session_net network;
    int gpus;        /* 0: none, -1: all, n: that many; or gpu_ids */
    json_t *gpu_ids; /* array of device id strings, or NULL */
    struct session_port ports[SESSION_MAX_PORTS];
    size_t n_ports;
    struct session_mount volumes[SESSION_MAX_VOLUMES];
    size_t n_volumes;
    enum session_ws ws;
    char *ws_source;       /* bind/overlay: resolved host path; volume: its name */
    struct mount_id ws_id; /* bind, or a volume binding a host dir: what was checked */
    bool ws_read_only;
    bool read_only;
    bool keep_alive;
    bool local;              /* "backend": "local" (driver_local.c) */
    const char *confirm;     /* approval policy name; NULL: the engine's default */
    double approval_timeout; /* seconds; 0: the engine's default */
    char *runtime;
    char *git_url, *git_token, *git_ref; /* the token is wiped once the clone ran */
    /* The image builder's (builder.c): "setup" steps then "runtime_extra_deps", in order;
     * rebuild: OpenHands' force_rebuild. */
    json_t *setup; /* array of strings, NULL when none */
    bool rebuild;
    char *platform; /* OpenHands' platform ("linux/amd64"), NULL: the daemon's own */
    bool auto_lint; /* OpenHands' enable_auto_lint (executor/lint.h) */
    /* The executor's --plugins, OpenHands' names (array of strings, never NULL once parsed). */
    json_t *plugins;
    enum session_user user;
    long uid;       /* the agent's uid */
    bool uid_asked; /* user_id was given */
    /* "network": "egress": what its proxy lets through (docs/egress.md). allow and deny are
     * arrays of patterns (engine/risk/egress_policy.h), never NULL with egress. */
    json_t *egress_allow, *egress_deny;
    bool egress_ask;
    int egress_max_connections;
    double egress_idle_timeout; /* seconds */
    long long egress_max_bytes; /* both ways, all its connections; 0: no limit */
    bool egress_given;          /* the request had "egress" */
    bool egress_allow_own;      /* its "allow" (else the config file's list) */
};

/* Where the sandbox's proxy listens (the executor) and the engine's socket it hands each
 * connection to, as the container sees them. */
#define SESSION_EGRESS_PROXY "127.0.0.1:3128"
#define SESSION_EGRESS_SOCKET_NAME "egress.sock"

/* Parse and check opts (the request body). 0 and *out, or -1 with *bad filled (400 and why;
 * the message stays valid until the next call). */
int session_config_parse(struct engine *eng, json_t *opts, struct session_config **out,
                         struct session_result *bad);
void session_config_free(struct session_config *c);
/* Wipe and drop the git token (once the clone ran). */
void session_config_forget_token(struct session_config *c);

/* A usable session name: 1-64 of [A-Za-z0-9_.-], starting with a letter or digit. */
bool session_config_name_ok(const char *n);

/* The names of the variables the sandbox gets (a new array): what the store keeps of env. */
json_t *session_config_env_names(const struct session_config *c);
/* What the store keeps in sessions.config: {"image", "env" (names only: a value never reaches
 * the store), "withheld_env", "options"}; options is the normalised, secret-free form shown
 * in the session object. */
json_t *session_config_stored(const struct session_config *c, struct engine *eng, const char *id,
                              const char *image);

/* The body of POST /containers/create. */
json_t *session_config_container(struct engine *eng, const struct session_config *c, const char *id,
                                 const char *sock_dir);

/* <state>/work/<id>: what the engine makes for a session's overlay or clone workspace
 * (malloc'd). */
char *session_config_work_dir(const struct engine *eng, const char *id);

#endif
