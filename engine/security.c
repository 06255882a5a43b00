/* The [security] settings: one row per way to ask for weaker isolation, what each looks like
 * in a create, and the verdict on the agents' channel. */
#include "engine/security.h"

#include "engine/base/netif.h"
#include "engine/base/util.h"
#include "engine/engine_internal.h"
#include "engine/risk/egress_policy.h"
#include "engine/session_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct security_row {
    const char *name; /* the key in [security] */
    const char *what; /* what it lets an agent have, for messages */
};

static const struct security_row security_rows[SECURITY_ASK_COUNT] = {
    [SECURITY_NETWORK_BRIDGE] = {.name = "network_bridge",
                                 .what = "\"network\": \"bridge\" (outbound and the docker0 "
                                         "gateway)"},
    [SECURITY_NETWORK_HOST] = {.name = "network_host",
                               .what = "\"network\": \"host\" (the host's interfaces and "
                                       "loopback services)"},
    [SECURITY_PORTS] = {.name = "ports", .what = "published ports"},
    [SECURITY_HOST_VOLUMES] = {.name = "host_volumes",
                               .what = "a host directory mounted read-write"},
    [SECURITY_GPUS] = {.name = "gpus", .what = "GPU devices"},
    [SECURITY_RUNTIME] = {.name = "runtime", .what = "another container runtime"},
    [SECURITY_SETUP] = {.name = "setup",
                        .what = "\"setup\" steps (run as root in a build with Docker's "
                                "network)"},
    [SECURITY_TERMINAL] = {.name = "terminal",
                           .what = "a terminal (commands there pass no risk check)"},
    [SECURITY_ROOT_TERMINAL] = {.name = "root_terminal", .what = "a terminal as root"},
    [SECURITY_ROOT_AGENT] = {.name = "root_agent",
                             .what = "\"run_as_openhands\": false (the agent's shell as root)"},
    [SECURITY_BACKEND_LOCAL] = {.name = "backend_local",
                                .what = "\"backend\": \"local\" (the host's kernel, its "
                                        "system readable)"},
};

static const char *const security_modes[SECURITY_MODE_COUNT] = {
    [SECURITY_REFUSE] = "refuse",
    [SECURITY_APPROVE] = "approve",
    [SECURITY_ALLOW] = "allow",
};

const char *security_ask_name(enum security_ask ask)
{
    return (unsigned)ask < SECURITY_ASK_COUNT ? security_rows[ask].name : NULL;
}

const char *security_mode_name(enum security_mode mode)
{
    return (unsigned)mode < SECURITY_MODE_COUNT ? security_modes[mode] : NULL;
}

int security_configure(struct engine *eng, const char *const *names, const char *const *values,
                       char **err)
{
    for (size_t i = 0; i < SECURITY_ASK_COUNT; i++)
        eng->security[i] = SECURITY_REFUSE;
    for (size_t i = 0; names && names[i]; i++) {
        size_t ask = 0, mode = 0;
        while (ask < SECURITY_ASK_COUNT && strcmp(security_rows[ask].name, names[i]))
            ask++;
        while (values[i] && mode < SECURITY_MODE_COUNT && strcmp(security_modes[mode], values[i]))
            mode++;
        if (ask == SECURITY_ASK_COUNT) {
            *err = util_strdupf("[security] has no setting \"%s\"", names[i]);
            return -1;
        }
        if (!values[i] || mode == SECURITY_MODE_COUNT) {
            *err = util_strdupf("[security] %s = \"%s\": the value is \"refuse\", \"approve\" or "
                                "\"allow\"",
                                names[i], values[i] ? values[i] : "");
            return -1;
        }
        eng->security[ask] = (enum security_mode)mode;
    }
    return 0;
}

json_t *security_info(const struct engine *eng)
{
    json_t *o = json_object();
    for (size_t i = 0; o && i < SECURITY_ASK_COUNT; i++)
        json_object_set_new(o, security_rows[i].name,
                            json_string(security_modes[eng->security[i]]));
    return o;
}

/* Append "; text" (or "text" first) to what, cut to size. */
static void security_note(char *what, size_t size, size_t *len, const char *text)
{
    if (!what || *len >= size)
        return;
    int n = snprintf(what + *len, size - *len, "%s%s", *len ? "; " : "", text);
    *len = n < 0 ? size : *len + (size_t)n;
    if (*len >= size)
        *len = size - 1;
}

unsigned security_config_asks(const struct session_config *c, char *what, size_t size)
{
    unsigned asks = 0;
    size_t len = 0;
    char item[600];
    if (what && size)
        what[0] = '\0';
    if (c->network == SESSION_NET_BRIDGE || c->network == SESSION_NET_HOST) {
        asks |= 1u << (c->network == SESSION_NET_HOST ? SECURITY_NETWORK_HOST
                                                      : SECURITY_NETWORK_BRIDGE);
        snprintf(item, sizeof(item), "network %s", session_net_name(c->network));
        security_note(what, size, &len, item);
    }
    /* Egress is no weaker than none, unless the client's own allow list names the host's
     * addresses (the docker0 gateway, the metadata address): as much as the bridge gives. */
    size_t ai;
    json_t *a;
    json_array_foreach(
        c->network == SESSION_NET_EGRESS && c->egress_allow_own ? c->egress_allow : NULL, ai, a)
    {
        const char *kind = egress_pattern_internal(json_string_value(a));
        struct sockaddr_storage ss;
        if (!kind && egress_pattern_address(json_string_value(a), &ss) == 0 &&
            netif_addr_is_host((const struct sockaddr *)&ss))
            kind = egress_addr_class_name(EGRESS_ADDR_HOST); /* its public one: still the host */
        if (!kind)
            continue;
        asks |= 1u << SECURITY_NETWORK_BRIDGE;
        snprintf(item, sizeof(item), "egress to %.300s, a %s address", json_string_value(a), kind);
        security_note(what, size, &len, item);
    }
    for (size_t i = 0; i < c->n_ports; i++) {
        asks |= 1u << SECURITY_PORTS;
        snprintf(item, sizeof(item), "port %d/%s published", c->ports[i].port, c->ports[i].proto);
        security_note(what, size, &len, item);
    }
    for (size_t i = 0; i < c->n_volumes; i++) {
        const struct session_mount *m = &c->volumes[i];
        if (m->volume || m->read_only)
            continue;
        asks |= 1u << SECURITY_HOST_VOLUMES;
        snprintf(item, sizeof(item), "host directory %.256s read-write at %.256s", m->source,
                 m->target);
        security_note(what, size, &len, item);
    }
    if (c->ws == SESSION_WS_BIND && !c->ws_read_only) {
        asks |= 1u << SECURITY_HOST_VOLUMES;
        snprintf(item, sizeof(item), "host directory %.256s read-write at %s", c->ws_source,
                 WORKSPACE_IN_CONTAINER);
        security_note(what, size, &len, item);
    }
    if (c->gpus) {
        asks |= 1u << SECURITY_GPUS;
        if (c->gpus < 0)
            snprintf(item, sizeof(item), "all GPUs");
        else
            snprintf(item, sizeof(item), "%d GPU%s", c->gpus, c->gpus == 1 ? "" : "s");
        security_note(what, size, &len, item);
    } else if (c->gpu_ids) {
        asks |= 1u << SECURITY_GPUS;
        snprintf(item, sizeof(item), "GPU devices (%zu)", json_array_size(c->gpu_ids));
        security_note(what, size, &len, item);
    }
    if (json_array_size(c->setup)) {
        asks |= 1u << SECURITY_SETUP;
        snprintf(item, sizeof(item), "%zu setup step%s", json_array_size(c->setup),
                 json_array_size(c->setup) == 1 ? "" : "s");
        security_note(what, size, &len, item);
    }
    if (c->local) {
        asks |= 1u << SECURITY_BACKEND_LOCAL;
        security_note(what, size, &len, "the local backend (on the host, under bubblewrap)");
    }
    if (c->runtime) {
        asks |= 1u << SECURITY_RUNTIME;
        snprintf(item, sizeof(item), "runtime %.128s", c->runtime);
        security_note(what, size, &len, item);
    }
    if (c->user == SESSION_USER_ROOT) {
        asks |= 1u << SECURITY_ROOT_AGENT;
        security_note(what, size, &len, "the agent as root");
    }
    return asks;
}

enum security_mode security_decide(const struct engine *eng, unsigned asks, char *msg, size_t size)
{
    enum security_mode verdict = SECURITY_ALLOW;
    int refused = -1;
    for (int i = 0; i < SECURITY_ASK_COUNT; i++) {
        if (!(asks & (1u << i)))
            continue;
        if (eng->security[i] < verdict)
            verdict = eng->security[i];
        if (eng->security[i] == SECURITY_REFUSE && refused < 0)
            refused = i;
    }
    if (refused >= 0 && msg && size)
        snprintf(msg, size,
                 "%s is refused on the agents' channel: the engine's config has [security] "
                 "%s = \"refuse\"; the operator can do it through the paddock CLI or dashboard, "
                 "or set %s = \"approve\" (or \"allow\")",
                 security_rows[refused].what, security_rows[refused].name,
                 security_rows[refused].name);
    return verdict;
}
