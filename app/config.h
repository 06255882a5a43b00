/* The config file: $PADDOCK_CONFIG, else $XDG_CONFIG_HOME/paddock/config.toml, else
 * ~/.config/paddock/config.toml. A TOML subset: [sections], key = "string" | integer | float |
 * true | false | ["strings"], # comments; [engines.NAME] sections name remote engines,
 * [egress.presets.NAME] egress presets. Keys use
 * OpenHands' [sandbox] and [security] names where they mean the same thing. */
#ifndef PADDOCK_CONFIG_H
#define PADDOCK_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

/* [engines.NAME]: an engine reached over TCP (the local one, "local", is always there). */
struct config_engine {
    char *name;
    char *url;        /* https://HOST:PORT */
    char *token_file; /* its bearer token (chmod 600); NULL: none sent */
    char *ca;         /* the CA file its certificate is checked against; NULL: the system's */
    char *cert, *key; /* a client certificate, when the engine takes them; NULL: none */
};
/* [egress.presets.NAME]: a named list of allow patterns a session's "egress.presets" may name
 * (docs/egress.md); one named like a built-in preset replaces it. */
struct config_egress_preset {
    char *name;
    char **allow; /* NULL-terminated; NULL: none */
};
/* The [security] settings of weaker isolation (engine/security.c's table, docs/security.md). */
#define CONFIG_SECURITY_KEYS 11
extern const char *const config_security_keys[CONFIG_SECURITY_KEYS];

struct config {
    /* [sandbox] */
    char *base_container_image; /* the default image */
    int keep_runtime_alive;     /* -1: not set */
    int enable_auto_lint;       /* -1: not set (off); edits report the lint errors they made */
    /* [security] */
    int confirmation_mode; /* -1: not set; true → confirm "high", false → "never" */
    /* What the agents' channel may ask for ("refuse", "approve", "allow"; NULL: not set, the
     * engine refuses), in the order of config_security_keys; engine/security.c checks. */
    char *security[CONFIG_SECURITY_KEYS];
    /* [paddock] */
    char *confirm;           /* never, high, medium, always */
    double approval_timeout; /* 0: not set */
    double retention_days;   /* 0: not set */
    char *socket, *state_dir, *pool, *listen, *token_file, *theme;
    char *tls_cert, *tls_key, *tls_client_ca; /* TLS on the listener (PEM files) */
    char *driver; /* the sandbox driver (engine/driver.c's table): "docker" */
    int bell;     /* -1: not set; ring the bell when an action starts waiting */
    int mouse;    /* -1: not set; the dashboard takes clicks and the wheel */
    /* [approvals]: engine-wide rules, NULL-terminated lists of globs (NULL: none), and the
     * highest risk level a rule may approve */
    char **allow, **deny;
    char *rule_ceiling;
    /* A session's disk limit when it names none, and the free space kept under the state dir
     * ("10g", "1g"; "0" for no floor). NULL: not set. */
    char *disk_limit, *disk_floor;
    struct config_engine *engines; /* [engines.NAME] in the file's order */
    size_t nengines;
    /* [local]: the local backend (engine/driver_local.h), an operator's opt-in; the ints are
     * 1 when set true. */
    int local_enabled, local_unsandboxed;
    char *local_user, *local_root, *local_bwrap;
    /* [egress]: what "network": "egress" sessions allow and deny besides their own lists
     * (patterns, NULL: none) and whether they ask about the rest (-1: not set; docs/egress.md) */
    char **egress_allow, **egress_deny;
    int egress_ask;
    struct config_egress_preset *egress_presets; /* in the file's order */
    size_t negress_presets;
    char *path; /* the file read, NULL when none */
};

/* Read the file at path (NULL: the default place; a missing default file is no error).
 * Unknown keys are warnings: *warnings (malloc'd, one per line) when any. 0, or -1 with *err
 * ("config.toml:7: expected '=' after the key"). */
int config_load(const char *path, struct config *c, char **warnings, char **err);
/* Parse text (name is used in messages). */
int config_parse(const char *text, size_t len, const char *name, struct config *c, char **warnings,
                 char **err);
void config_free(struct config *c);
/* The default path (malloc'd). */
char *config_default_path(void);
/* The approval policy it sets: confirm, else from confirmation_mode, else NULL. */
const char *config_confirm(const struct config *c);

#endif
