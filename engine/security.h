/* What clients on the agents' channel may ask for beyond the hardened default: the config's
 * [security] section, one setting per weakening (a row of the table in security.c), each
 * "refuse" (403 naming the setting), "approve" (the operator decides, in the approval queue)
 * or "allow". The operator's own channel (api.h, api_listen_operator) is never asked.
 * docs/security.md. */
#ifndef PADDOCK_SECURITY_H
#define PADDOCK_SECURITY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct engine;
struct session_config;

/* Each way a client can ask for less isolation than the hardened default. */
enum security_ask {
    SECURITY_NETWORK_BRIDGE, /* "network": "bridge": outbound, the docker0 gateway */
    SECURITY_NETWORK_HOST,   /* "network": "host": the host's own interfaces and loopback */
    SECURITY_PORTS,          /* published ports */
    SECURITY_HOST_VOLUMES,   /* a host directory mounted read-write (volume or workspace) */
    SECURITY_GPUS,           /* GPU devices */
    SECURITY_RUNTIME,        /* another OCI runtime than the daemon's default */
    SECURITY_SETUP,          /* image build steps: run as root with Docker's build network */
    SECURITY_TERMINAL,       /* a terminal (as the agent's user): no risk check per command */
    SECURITY_ROOT_TERMINAL,  /* a terminal as root */
    SECURITY_ROOT_AGENT,     /* "run_as_openhands": false: the agent's shell as root */
    SECURITY_BACKEND_LOCAL,  /* "backend": "local": on the host, its system readable */
    SECURITY_ASK_COUNT
};

enum security_mode {
    SECURITY_REFUSE,  /* 403 naming the setting (the default of every row) */
    SECURITY_APPROVE, /* waits for the operator like a risky action */
    SECURITY_ALLOW,
    SECURITY_MODE_COUNT
};

/* The setting's name in [security] ("network_host"); NULL out of range. */
const char *security_ask_name(enum security_ask ask);
/* "refuse", "approve", "allow"; NULL out of range. */
const char *security_mode_name(enum security_mode mode);

/* Set the engine's settings from name=value pairs (NULL-terminated arrays; the rest keep
 * "refuse"). 0, or -1 with *err (malloc'd) naming the setting or the value. */
int security_configure(struct engine *eng, const char *const *names, const char *const *values,
                       char **err);
/* The settings as the API shows them: {"network_host": "refuse", ...} (the caller's
 * reference). */
json_t *security_info(const struct engine *eng);

/* What a parsed create asks for, as a bit per enum security_ask; what (may be NULL) gets a
 * description of each for the operator ("network host; ports 8080/tcp"). */
unsigned security_config_asks(const struct session_config *c, char *what, size_t size);

/* The verdict on asks from the agents' channel: the strictest setting among them. With
 * SECURITY_REFUSE, msg says which setting refused and how to allow it. */
enum security_mode security_decide(const struct engine *eng, unsigned asks, char *msg, size_t size);

#endif
