/* Session options (see session_config.h): one parser per field in a table, strict types,
 * every refusal a sentence naming the field; the create body built from the parsed struct.
 * No Docker or git call here (session_prepare.c does those). */
#include "engine/session_config.h"

#include "engine/base/git.h"
#include "engine/base/util.h"
#include "engine/disk.h"
#include "engine/driver_local.h"
#include "engine/engine_internal.h"
#include "engine/mount_policy.h"
#include "engine/platform.h"
#include "engine/risk/egress_policy.h"
#include "engine/risk/policy.h"
#include "engine/session.h"

#include "common/buf.h"
#include "common/env_secret.h"
#include "common/size.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SESSION_MEMORY_DEFAULT (2LL * 1024 * 1024 * 1024)
#define SESSION_MEMORY_MIN (32LL * 1024 * 1024)
#define SESSION_CPUS_DEFAULT 2.0
#define SESSION_PIDS_DEFAULT 512
#define SESSION_PIDS_MIN 16
#define SESSION_PIDS_MAX 4194304
#define SESSION_TMPFS_SIZE (512LL * 1024 * 1024)
#define EXECUTOR_IN_CONTAINER "/opt/paddock/paddock-executor"
#define SOCKET_DIR_IN_CONTAINER "/run/paddock"
/* With a read-only root the agent's HOME lives in the /tmp tmpfs (the executor creates it). */
#define READ_ONLY_HOME "/tmp/home"

/* ---- parsing ---- */

struct parse {
    struct engine *eng;
    struct session_config *c;
    char *why;      /* malloc'd refusal */
    json_t *opts;   /* the request's options */
    bool forbidden; /* refused by the operator's config (403), not for its form (400) */
};

static char session_config_msg[768];

static int parse_fail(struct parse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int parse_fail(struct parse *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    free(p->why);
    p->why = util_vstrdupf(fmt, ap);
    va_end(ap);
    return -1;
}

/* "unknown field" with the known ones listed, for any object level. */
static int parse_known(struct parse *p, json_t *obj, const char *prefix, const char *const *known)
{
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v)
    {
        bool ok = false;
        for (size_t i = 0; known[i]; i++)
            ok = ok || strcmp(k, known[i]) == 0;
        if (ok)
            continue;
        char list[512] = ""; /* every option's name fits */
        for (size_t i = 0; known[i]; i++)
            snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
                     known[i]);
        return parse_fail(p, "unknown field \"%s%.64s\" (known: %s)", prefix, k, list);
    }
    return 0;
}

bool session_config_name_ok(const char *n)
{
    size_t len = strlen(n);
    if (len == 0 || len > 64 || !isalnum((unsigned char)n[0]))
        return false;
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)n[i]) && !strchr("_.-", n[i]))
            return false;
    return true;
}

static bool valid_env_key(const char *k)
{
    if (!*k || !(isalpha((unsigned char)*k) || *k == '_'))
        return false;
    for (; *k; k++)
        if (!(isalnum((unsigned char)*k) || *k == '_'))
            return false;
    return true;
}

static bool valid_image(const char *img)
{
    size_t n = strlen(img);
    if (n == 0 || n > 255)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(isalnum((unsigned char)img[i]) || strchr("_.-/:@", img[i])))
            return false;
    return true;
}

/* Docker volume names: [a-zA-Z0-9][a-zA-Z0-9_.-]+ */
static bool valid_volume_name(const char *n)
{
    size_t len = strlen(n);
    if (len < 2 || len > 128 || !isalnum((unsigned char)n[0]))
        return false;
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)n[i]) && !strchr("_.-", n[i]))
            return false;
    return true;
}

/* A JSON string without NUL bytes, or NULL. */
static const char *json_cstr(json_t *v)
{
    if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
        return NULL;
    return json_string_value(v);
}

/* Bytes: a non-negative integer, or a size string (common/size.h). -1 when malformed or too
 * large. */
static long long parse_bytes(json_t *v)
{
    if (json_is_integer(v))
        return json_integer_value(v) >= 0 ? json_integer_value(v) : -1;
    return size_parse(json_cstr(v));
}

static int opt_image(struct parse *p, json_t *v)
{
    const char *s = json_cstr(v);
    if (!s || !valid_image(s))
        return parse_fail(p, "\"image\" must be an image reference string");
    p->c->image = strdup(s);
    return 0;
}

static int opt_name(struct parse *p, json_t *v)
{
    const char *s = json_cstr(v);
    if (!s || !session_config_name_ok(s))
        return parse_fail(p, "\"name\" must match [A-Za-z0-9][A-Za-z0-9_.-]{0,63}");
    p->c->name = strdup(s);
    return 0;
}

/* The environment goes to execve in the container (the executor, then the shell), where the
 * kernel refuses one string over 128 KiB (MAX_ARG_STRLEN) and arguments plus environment over
 * a quarter of the stack limit (2 MiB under Docker's default 8 MiB stack) with E2BIG: the
 * sandbox would then fail to start long after the create was accepted. These bounds stay well
 * inside, leaving room for the image's own variables (docs/sessions.md). */
#define ENV_ENTRY_MAX (64 * 1024) /* one "KEY=VALUE" */
#define ENV_TOTAL_MAX (256 * 1024)
#define ENV_KEYS_MAX 1024

static int opt_env(struct parse *p, json_t *v)
{
    if (!json_is_object(v))
        return parse_fail(p, "\"env\" must be an object of strings");
    if (json_object_size(v) > ENV_KEYS_MAX)
        return parse_fail(p, "\"env\" has %zu variables; at most %d are allowed",
                          json_object_size(v), ENV_KEYS_MAX);
    const char *k;
    json_t *x;
    size_t total = 0;
    json_object_foreach(v, k, x)
    {
        if (!valid_env_key(k) || !json_cstr(x))
            return parse_fail(p, "\"env\" keys must be [A-Za-z_][A-Za-z0-9_]* with string "
                                 "values without NUL");
        size_t n = strlen(k) + 1 + json_string_length(x) + 1;
        if (n > ENV_ENTRY_MAX)
            return parse_fail(p,
                              "\"env.%.64s\" is %zu bytes; one variable (KEY=VALUE) may have "
                              "at most %d",
                              k, n - 1, ENV_ENTRY_MAX - 1);
        total += n;
    }
    if (total > ENV_TOTAL_MAX)
        return parse_fail(p,
                          "\"env\" totals %zu bytes; all variables together may have at "
                          "most %d",
                          total, ENV_TOTAL_MAX);
    json_decref(p->c->env);
    p->c->env = json_deep_copy(v);
    return 0;
}

/* Credential-named variables the caller passes through to the agent's shell on purpose. */
static int opt_env_allow(struct parse *p, json_t *v)
{
    if (!json_is_array(v) || json_array_size(v) > ENV_KEYS_MAX)
        return parse_fail(p, "\"env_allow\" must be an array of at most %d variable names",
                          ENV_KEYS_MAX);
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x)
    {
        const char *k = json_string_value(x);
        if (!k || !valid_env_key(k))
            return parse_fail(p, "\"env_allow\" holds names of the form [A-Za-z_][A-Za-z0-9_]*");
    }
    json_decref(p->c->env_allow);
    p->c->env_allow = json_incref(v);
    return 0;
}

static bool env_allowed(const json_t *allow, const char *name)
{
    size_t i;
    json_t *x;
    json_array_foreach(allow, i, x)
    {
        if (strcmp(json_string_value(x), name) == 0)
            return true;
    }
    return false;
}

/* One rule for a fresh sandbox and a warm one: a credential-named variable is not given to
 * the sandbox at all (not in its container, not in the agent's shell) unless env_allow names
 * it; the create reply lists each one withheld, and why. */
static int env_withhold(struct parse *p)
{
    struct session_config *c = p->c;
    size_t i;
    json_t *x;
    json_array_foreach(c->env_allow, i, x)
    {
        if (!json_object_get(c->env, json_string_value(x)))
            return parse_fail(p, "\"env_allow\" names %.64s, which \"env\" does not set",
                              json_string_value(x));
    }
    if (!(c->withheld = json_array()))
        return -1;
    const char *k;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(c->env, tmp, k, v)
    {
        const char *word = env_secret_word(k, strlen(k));
        if (!word || env_allowed(c->env_allow, k))
            continue;
        char *why = util_strdupf("its name looks like a credential (it has \"%s\"), so the "
                                 "sandbox does not get it; name it in \"env_allow\" to pass "
                                 "it through on purpose",
                                 word);
        json_t *w = json_pack("{s:s,s:s}", "name", k, "why", why ? why : "");
        free(why);
        if (!w || json_array_append_new(c->withheld, w) < 0)
            return -1;
        json_object_del(c->env, k);
    }
    return 0;
}

static int opt_limits(struct parse *p, json_t *v)
{
    static const char *const known[] = {"cpus", "memory", "pids", "disk", NULL};
    if (!json_is_object(v))
        return parse_fail(p, "\"limits\" must be an object (cpus, memory, pids, disk)");
    if (parse_known(p, v, "limits.", known) < 0)
        return -1;
    struct session_config *c = p->c;
    json_t *x;
    if ((x = json_object_get(v, "cpus"))) {
        double d = json_is_number(x) ? json_number_value(x) : -1;
        if (!(d >= 0.01 && d <= 1024))
            return parse_fail(p, "\"limits.cpus\" must be a number of CPUs from 0.01 to 1024");
        c->cpus = d;
    }
    if ((x = json_object_get(v, "memory"))) {
        long long b = parse_bytes(x);
        if (b < 0)
            return parse_fail(p, "\"limits.memory\" must be bytes (an integer) or a size "
                                 "string such as \"512m\" or \"2g\"");
        if (b < SESSION_MEMORY_MIN)
            return parse_fail(p, "\"limits.memory\" must be at least 32m (the executor, its "
                                 "shell and the agent's tools share it)");
        c->memory = b;
    }
    if ((x = json_object_get(v, "pids"))) {
        if (!json_is_integer(x) || json_integer_value(x) < SESSION_PIDS_MIN ||
            json_integer_value(x) > SESSION_PIDS_MAX)
            return parse_fail(p,
                              "\"limits.pids\" must be an integer from %d to %d (the "
                              "executor needs a few processes of its own)",
                              SESSION_PIDS_MIN, SESSION_PIDS_MAX);
        c->pids = json_integer_value(x);
    }
    if ((x = json_object_get(v, "disk"))) {
        long long b = parse_bytes(x);
        if (b < 0)
            return parse_fail(p, "\"limits.disk\" must be bytes (an integer) or a size string "
                                 "such as \"10g\"");
        if (b < DISK_LIMIT_MIN)
            return parse_fail(p, "\"limits.disk\" must be at least 64m");
        c->disk = b;
        c->disk_asked = true;
    }
    return 0;
}

static const char *const net_modes[SESSION_NET_COUNT] = {
    [SESSION_NET_NONE] = "none",
    [SESSION_NET_BRIDGE] = "bridge",
    [SESSION_NET_HOST] = "host",
    [SESSION_NET_EGRESS] = "egress",
};

const char *session_net_name(enum session_net net)
{
    return (unsigned)net < SESSION_NET_COUNT ? net_modes[net] : NULL;
}

int session_net_parse(const char *name, enum session_net *net)
{
    for (int i = 0; name && i < SESSION_NET_COUNT; i++)
        if (strcmp(net_modes[i], name) == 0) {
            *net = (enum session_net)i;
            return 0;
        }
    return -1;
}

static int opt_network(struct parse *p, json_t *v)
{
    if (session_net_parse(json_cstr(v), &p->c->network) == 0)
        return 0;
    return parse_fail(p, "\"network\" must be \"none\" (the default), \"egress\" (a proxy "
                         "through the engine, docs/egress.md), \"bridge\" or \"host\"");
}

static int opt_gpus(struct parse *p, json_t *v)
{
    const char *s = json_cstr(v);
    if (s && strcmp(s, "all") == 0) {
        p->c->gpus = -1;
        return 0;
    }
    if (json_is_integer(v) && json_integer_value(v) >= 1 && json_integer_value(v) <= 64) {
        p->c->gpus = (int)json_integer_value(v);
        return 0;
    }
    if (json_is_array(v) && json_array_size(v) >= 1 && json_array_size(v) <= 64) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
        {
            const char *id = json_cstr(x);
            bool ok = id && *id && strlen(id) <= 128;
            for (const char *q = id; ok && *q; q++)
                ok = isalnum((unsigned char)*q) || strchr(":_.-", *q);
            if (!ok)
                return parse_fail(p, "\"gpus[%zu]\" must be a device id or UUID string", i);
        }
        p->c->gpu_ids = json_deep_copy(v);
        return 0;
    }
    return parse_fail(p, "\"gpus\" must be \"all\", a count from 1 to 64, or an array of device "
                         "ids");
}

static int opt_ports(struct parse *p, json_t *v)
{
    if (!json_is_array(v) || json_array_size(v) > SESSION_MAX_PORTS)
        return parse_fail(p,
                          "\"ports\" must be an array of at most %d container ports (8080 or "
                          "\"8080/tcp\", \"53/udp\")",
                          SESSION_MAX_PORTS);
    struct session_config *c = p->c;
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x)
    {
        long port = -1;
        const char *proto = "tcp";
        const char *s = json_cstr(x);
        if (json_is_integer(x)) {
            port = (long)json_integer_value(x);
        } else if (s && isdigit((unsigned char)*s)) {
            char *end;
            port = strtol(s, &end, 10);
            if (*end == '/' &&
                (!strcmp(end + 1, "tcp") || !strcmp(end + 1, "udp") || !strcmp(end + 1, "sctp")))
                proto = !strcmp(end + 1, "tcp") ? "tcp" : !strcmp(end + 1, "udp") ? "udp" : "sctp";
            else if (*end)
                port = -1;
        }
        if (port < 1 || port > 65535)
            return parse_fail(p,
                              "\"ports[%zu]\" must be a port from 1 to 65535, as a number or "
                              "a string \"PORT/tcp|udp|sctp\"",
                              i);
        for (size_t j = 0; j < c->n_ports; j++)
            if (c->ports[j].port == port && strcmp(c->ports[j].proto, proto) == 0)
                return parse_fail(p, "\"ports[%zu]\" repeats %ld/%s", i, port, proto);
        c->ports[c->n_ports].port = (int)port;
        c->ports[c->n_ports].proto = proto;
        c->n_ports++;
    }
    return 0;
}

/* A container path for a mount: absolute, normalised, and not one the engine relies on. */
static int check_target(struct parse *p, const char *field, const char *t)
{
    static const char *const reserved[] = {WORKSPACE_IN_CONTAINER,
                                           SOCKET_DIR_IN_CONTAINER,
                                           "/opt/paddock",
                                           "/proc",
                                           "/sys",
                                           "/dev",
                                           NULL};
    if (!t || t[0] != '/' || strlen(t) > 512)
        return parse_fail(p, "\"%s\" must be an absolute container path", field);
    for (const char *q = t; *q; q++)
        if ((unsigned char)*q < ' ' || *q == 0x7f || *q == ',')
            return parse_fail(p, "\"%s\" must not contain control characters or commas", field);
    if (strcmp(t, "/") == 0)
        return parse_fail(p, "\"%s\" must not be / (the container's root)", field);
    if (strstr(t, "//") || strstr(t, "/./") || strstr(t, "/../") || t[strlen(t) - 1] == '/' ||
        (strlen(t) >= 2 && strcmp(t + strlen(t) - 2, "/.") == 0) ||
        (strlen(t) >= 3 && strcmp(t + strlen(t) - 3, "/..") == 0))
        return parse_fail(p, "\"%s\" must be a normalised path (no ., .., // or trailing /)",
                          field);
    for (size_t i = 0; reserved[i]; i++) {
        size_t n = strlen(reserved[i]);
        bool exact_only = i == 0; /* mounts inside /workspace are fine */
        if (strcmp(t, reserved[i]) == 0 ||
            (!exact_only && strncmp(t, reserved[i], n) == 0 && t[n] == '/'))
            return parse_fail(p, "\"%s\" %s is reserved (%s)", field, t,
                              i == 0   ? "use \"workspace\" for /workspace"
                              : i <= 2 ? "the engine's executor lives there"
                                       : "a kernel filesystem");
    }
    if (p->c->read_only && strcmp(t, "/tmp") == 0)
        return parse_fail(p, "\"%s\" /tmp is a tmpfs when \"read_only\" is set", field);
    return 0;
}

static int check_host_path(struct parse *p, const char *field, const char *path, bool want_dir,
                           char **resolved, struct mount_id *id)
{
    char *why = NULL;
    if (mount_policy_check(p->eng, path, want_dir, resolved, id, &why) < 0) {
        parse_fail(p, "\"%s\": %s", field, why ? why : "refused");
        free(why);
        return -1;
    }
    return 0;
}

static int opt_volumes(struct parse *p, json_t *v)
{
    static const char *const known[] = {"source", "target", "read_only", NULL};
    if (!json_is_array(v) || json_array_size(v) > SESSION_MAX_VOLUMES)
        return parse_fail(p,
                          "\"volumes\" must be an array of at most %d objects {\"source\": "
                          "host path or volume name, \"target\": container path, "
                          "\"read_only\": bool}",
                          SESSION_MAX_VOLUMES);
    struct session_config *c = p->c;
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x)
    {
        char field[64], prefix[32];
        snprintf(prefix, sizeof(prefix), "volumes[%zu].", i);
        if (!json_is_object(x))
            return parse_fail(p,
                              "\"volumes[%zu]\" must be an object {\"source\", \"target\", "
                              "\"read_only\"}",
                              i);
        if (parse_known(p, x, prefix, known) < 0)
            return -1;
        const char *src = json_cstr(json_object_get(x, "source"));
        const char *dst = json_cstr(json_object_get(x, "target"));
        json_t *ro = json_object_get(x, "read_only");
        snprintf(field, sizeof(field), "volumes[%zu].source", i);
        if (!src || !*src)
            return parse_fail(p, "\"%s\" must be a host path (absolute) or a volume name", field);
        if (ro && !json_is_boolean(ro))
            return parse_fail(p, "\"volumes[%zu].read_only\" must be true or false", i);
        snprintf(field, sizeof(field), "volumes[%zu].target", i);
        if (check_target(p, field, dst) < 0)
            return -1;
        for (size_t j = 0; j < c->n_volumes; j++)
            if (strcmp(c->volumes[j].target, dst) == 0)
                return parse_fail(p, "\"%s\" %s is mounted twice", field, dst);
        struct session_mount *m = &c->volumes[c->n_volumes];
        snprintf(field, sizeof(field), "volumes[%zu].source", i);
        if (src[0] == '/') {
            if (check_host_path(p, field, src, false, &m->source, &m->id) < 0)
                return -1;
        } else if (valid_volume_name(src)) {
            m->volume = true;
            m->source = strdup(src);
        } else {
            return parse_fail(p,
                              "\"%s\" must be an absolute host path or a volume name "
                              "([A-Za-z0-9][A-Za-z0-9_.-]+)",
                              field);
        }
        m->target = strdup(dst);
        m->read_only = json_is_true(ro);
        c->n_volumes++;
    }
    return 0;
}

static bool dir_is_empty(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return false;
    struct dirent *e;
    bool empty = true;
    while (empty && (e = readdir(d)))
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    closedir(d);
    return empty;
}

static int opt_workspace(struct parse *p, json_t *v)
{
    static const char *const known[] = {"source", "mode", NULL};
    json_t *src = v, *mode = NULL;
    if (json_is_object(v)) {
        if (parse_known(p, v, "workspace.", known) < 0)
            return -1;
        src = json_object_get(v, "source");
        mode = json_object_get(v, "mode");
    }
    const char *s = json_cstr(src);
    const char *m = mode ? json_cstr(mode) : "rw";
    if (!s || !*s)
        return parse_fail(p, "\"workspace\" must be a host directory, a volume name, or "
                             "{\"source\": ..., \"mode\": \"rw\"|\"ro\"|\"overlay\"}");
    if (!m || (strcmp(m, "rw") && strcmp(m, "ro") && strcmp(m, "overlay")))
        return parse_fail(p, "\"workspace.mode\" must be \"rw\" (the default), \"ro\" or "
                             "\"overlay\" (copy-on-write: the host directory stays unchanged)");
    struct session_config *c = p->c;
    c->ws_read_only = strcmp(m, "ro") == 0;
    if (s[0] == '/') {
        if (check_host_path(p, "workspace.source", s, true, &c->ws_source, &c->ws_id) < 0)
            return -1;
        c->ws = strcmp(m, "overlay") == 0 ? SESSION_WS_OVERLAY : SESSION_WS_BIND;
        /* overlay's lowerdir option separates with ':' and ','. */
        if (c->ws == SESSION_WS_OVERLAY && strpbrk(c->ws_source, ":,\\"))
            return parse_fail(p,
                              "\"workspace.source\" %s: an overlay workspace cannot have ':', "
                              "',' or '\\' in its path",
                              c->ws_source);
        return 0;
    }
    if (!valid_volume_name(s))
        return parse_fail(p, "\"workspace.source\" must be an absolute host directory or a "
                             "volume name ([A-Za-z0-9][A-Za-z0-9_.-]+)");
    if (strcmp(m, "overlay") == 0)
        return parse_fail(p, "\"workspace.mode\" \"overlay\" needs a host directory as the "
                             "source, not a volume");
    c->ws = SESSION_WS_VOLUME;
    c->ws_source = strdup(s);
    return 0;
}

static int opt_bool(struct parse *p, json_t *v, const char *field, bool *out)
{
    if (!json_is_boolean(v))
        return parse_fail(p, "\"%s\" must be true or false", field);
    *out = json_is_true(v);
    return 0;
}

static int opt_read_only(struct parse *p, json_t *v)
{
    return opt_bool(p, v, "read_only", &p->c->read_only);
}

static int opt_keep_alive(struct parse *p, json_t *v)
{
    return opt_bool(p, v, "keep_alive", &p->c->keep_alive);
}

/* "docker" (the engine's driver) or "local" (driver_local.c), which the operator must enable. */
static int opt_backend(struct parse *p, json_t *v)
{
    const char *b = json_string_value(v);
    if (!b || (strcmp(b, "docker") != 0 && strcmp(b, "local") != 0))
        return parse_fail(p, "\"backend\" must be \"docker\" or \"local\"");
    p->c->local = strcmp(b, "local") == 0;
    char why[300];
    if (p->c->local && local_check_usable(p->eng, why, sizeof(why)) < 0) {
        p->forbidden = true;
        return parse_fail(p, "%s", why);
    }
    return 0;
}

static int opt_confirm(struct parse *p, json_t *v)
{
    int pol = policy_parse(json_string_value(v));
    if (pol < 0)
        return parse_fail(p, "\"confirm\" must be one of %s (what waits for the operator)",
                          policy_names());
    p->c->confirm = policy_name(pol);
    return 0;
}

static int opt_approval_timeout(struct parse *p, json_t *v)
{
    if (!json_is_number(v) || json_number_value(v) < 1 || json_number_value(v) > 86400)
        return parse_fail(p, "\"approval_timeout\" must be a number of seconds from 1 to 86400");
    p->c->approval_timeout = json_number_value(v);
    return 0;
}

#define EGRESS_MAX_PATTERNS 256
#define EGRESS_MAX_CONNECTIONS_DEFAULT 64
#define EGRESS_IDLE_TIMEOUT_DEFAULT 300.0
#define EGRESS_MAX_BYTES (1LL << 50)

/* Named lists of allow patterns a create may ask for by name ("presets"). */
static const struct {
    const char *name;
    const char *const *allow;
} egress_presets[] = {
    {"python", (const char *const[]){"pypi.org:443", "files.pythonhosted.org:443", NULL}},
    {"node", (const char *const[]){"registry.npmjs.org:443", "registry.yarnpkg.com:443", NULL}},
    {"git-hosts",
     (const char *const[]){"github.com:443", "*.github.com:443", "*.githubusercontent.com:443",
                           "gitlab.com:443", "*.gitlab.com:443", "bitbucket.org:443", NULL}},
};

static int egress_patterns_add(struct parse *p, json_t *to, const char *pattern, const char *field)
{
    char low[EGRESS_HOST_MAX + 16];
    size_t n = strlen(pattern);
    if (n == 0 || n >= sizeof(low))
        return parse_fail(p, "\"%s\" holds an empty or over-long pattern", field);
    for (size_t i = 0; i <= n; i++)
        low[i] = (char)tolower((unsigned char)pattern[i]);
    if (!egress_pattern_valid(low))
        return parse_fail(p,
                          "\"%s\": \"%.80s\" is not a pattern (a host, \"*.domain\", \"*\", an "
                          "IPv4 address or [IPv6], each optionally with \":port\")",
                          field, pattern);
    if (json_array_size(to) >= EGRESS_MAX_PATTERNS)
        return parse_fail(p, "\"%s\" holds more than %d patterns", field, EGRESS_MAX_PATTERNS);
    return json_array_append_new(to, json_string(low));
}

static int egress_list(struct parse *p, json_t *obj, const char *key, json_t *to)
{
    json_t *v = json_object_get(obj, key);
    char field[32];
    snprintf(field, sizeof(field), "egress.%s", key);
    if (!v)
        return 0;
    if (!json_is_array(v))
        return parse_fail(p, "\"%s\" must be an array of patterns", field);
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e)
    {
        if (!json_cstr(e))
            return parse_fail(p, "\"%s\" must be an array of patterns", field);
        if (egress_patterns_add(p, to, json_string_value(e), field) < 0)
            return -1;
    }
    return 0;
}

static int opt_egress(struct parse *p, json_t *v)
{
    static const char *const known[] = {"allow",           "deny",         "ask",       "presets",
                                        "max_connections", "idle_timeout", "max_bytes", NULL};
    struct session_config *c = p->c;
    if (!json_is_object(v))
        return parse_fail(p, "\"egress\" must be an object ({\"allow\": [...], \"ask\": true})");
    if (parse_known(p, v, "egress.", known) < 0)
        return -1;
    if (json_object_get(v, "allow")) {
        json_array_clear(c->egress_allow); /* the request's list replaces the config's */
        c->egress_allow_own = true;
    }
    if (egress_list(p, v, "allow", c->egress_allow) < 0 ||
        egress_list(p, v, "deny", c->egress_deny) < 0)
        return -1;
    json_t *presets = json_object_get(v, "presets");
    if (presets && !json_is_array(presets))
        return parse_fail(p, "\"egress.presets\" must be an array of names");
    size_t i;
    json_t *e;
    json_array_foreach(presets, i, e)
    {
        const char *name = json_cstr(e);
        /* the config file's preset first: one named like a built-in replaces it */
        json_t *own = name ? json_object_get(p->eng->egress_presets, name) : NULL;
        if (own) {
            size_t j;
            json_t *a;
            json_array_foreach(own, j,
                               a) if (egress_patterns_add(p, c->egress_allow, json_string_value(a),
                                                          "egress.presets") < 0) return -1;
            continue;
        }
        size_t k = 0, n = sizeof egress_presets / sizeof egress_presets[0];
        while (name && k < n && strcmp(egress_presets[k].name, name))
            k++;
        if (!name || k == n)
            return parse_fail(p, "\"egress.presets\": unknown preset (known: python, node, "
                                 "git-hosts and the config file's [egress.presets.NAME])");
        for (const char *const *a = egress_presets[k].allow; *a; a++)
            if (egress_patterns_add(p, c->egress_allow, *a, "egress.presets") < 0)
                return -1;
    }
    json_t *ask = json_object_get(v, "ask");
    if (ask && !json_is_boolean(ask))
        return parse_fail(p, "\"egress.ask\" must be true or false");
    if (ask)
        c->egress_ask = json_is_true(ask);
    json_t *mc = json_object_get(v, "max_connections");
    if (mc && (!json_is_integer(mc) || json_integer_value(mc) < 1 || json_integer_value(mc) > 1024))
        return parse_fail(p, "\"egress.max_connections\" must be an integer from 1 to 1024");
    if (mc)
        c->egress_max_connections = (int)json_integer_value(mc);
    json_t *it = json_object_get(v, "idle_timeout");
    if (it && (!json_is_number(it) || json_number_value(it) < 1 || json_number_value(it) > 86400))
        return parse_fail(p, "\"egress.idle_timeout\" must be a number of seconds from 1 to 86400");
    if (it)
        c->egress_idle_timeout = json_number_value(it);
    json_t *mb = json_object_get(v, "max_bytes");
    if (mb && (!json_is_integer(mb) || json_integer_value(mb) < 1 ||
               json_integer_value(mb) > EGRESS_MAX_BYTES))
        return parse_fail(p, "\"egress.max_bytes\" must be an integer from 1 to 2^50");
    if (mb)
        c->egress_max_bytes = json_integer_value(mb);
    c->egress_given = true;
    return 0;
}

#define SESSION_MAX_SETUP 32
#define SESSION_MAX_SETUP_LEN 8192

static int setup_add(struct parse *p, json_t *v, const char *field)
{
    const char *cmd = json_cstr(v);
    if (!cmd || !*cmd || json_string_length(v) > SESSION_MAX_SETUP_LEN)
        return parse_fail(p, "\"%s\" must hold non-empty commands of at most %d bytes without NUL",
                          field, SESSION_MAX_SETUP_LEN);
    if (!p->c->setup)
        p->c->setup = json_array();
    if (json_array_size(p->c->setup) >= SESSION_MAX_SETUP)
        return parse_fail(p, "at most %d setup commands", SESSION_MAX_SETUP);
    return json_array_append_new(p->c->setup, json_string(cmd)) == 0 ? 0 : -1;
}

/* "setup": ["cmd", ...]: RUN steps (as root, /bin/sh -c) of a runtime image built for the
 * session (builder.c). */
static int opt_setup(struct parse *p, json_t *v)
{
    if (!json_is_array(v))
        return parse_fail(p, "\"setup\" must be an array of shell commands");
    size_t i;
    json_t *cmd;
    json_array_foreach(v, i, cmd) if (setup_add(p, cmd, "setup") < 0) return -1;
    return 0;
}

/* OpenHands' runtime_extra_deps: one more step after "setup". */
static int opt_extra_deps(struct parse *p, json_t *v)
{
    return setup_add(p, v, "runtime_extra_deps");
}

static int opt_rebuild(struct parse *p, json_t *v)
{
    return opt_bool(p, v, "rebuild", &p->c->rebuild);
}

/* OpenHands' platform: builds and the container are for it; session_prepare.c asks the
 * daemon whether it can run it. */
static int opt_platform(struct parse *p, json_t *v)
{
    const char *s = json_cstr(v);
    if (!s || !platform_valid(s))
        return parse_fail(p, "\"platform\" must be \"os/arch\" or \"os/arch/variant\", such as "
                             "\"linux/amd64\" or \"linux/arm64\"");
    p->c->platform = strdup(s);
    return p->c->platform ? 0 : parse_fail(p, "out of memory");
}

static int opt_auto_lint(struct parse *p, json_t *v)
{
    return opt_bool(p, v, "enable_auto_lint", &p->c->auto_lint);
}

static int opt_runtime(struct parse *p, json_t *v)
{
    const char *s = json_cstr(v);
    bool ok = s && *s && strlen(s) <= 64;
    for (const char *q = s; ok && *q; q++)
        ok = isalnum((unsigned char)*q) || strchr("_.-", *q);
    if (!ok)
        return parse_fail(p, "\"runtime\" must be a runtime name such as \"runsc\"");
    p->c->runtime = strdup(s);
    return 0;
}

/* The executor's plugins by OpenHands' names (and paddock's own); `unavailable` says why one
 * is refused. */
static const struct {
    const char *name;
    const char *unavailable;
} plugin_names[] = {
    {.name = "jupyter"},
    {.name = "agent_skills"},
    {.name = "ipython"},
    {.name = "gitinfo"},
    {.name = "vscode",
     .unavailable = "paddock runs no VS Code server in the sandbox; open a shell in it with "
                    "`paddock exec` or the dashboard's terminal instead"},
};
#define PLUGIN_NAMES (sizeof(plugin_names) / sizeof(plugin_names[0]))

static int opt_plugins(struct parse *p, json_t *v)
{
    if (!json_is_array(v))
        return parse_fail(p, "\"plugins\" must be an array of plugin names such as "
                             "[\"agent_skills\", \"jupyter\"]");
    json_t *list = json_array();
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x)
    {
        const char *name = json_string_value(x);
        size_t k = 0;
        while (name && k < PLUGIN_NAMES && strcmp(name, plugin_names[k].name))
            k++;
        if (!name || k == PLUGIN_NAMES) {
            json_decref(list);
            return parse_fail(p,
                              "\"plugins\": unknown plugin %s%s%s (known: jupyter, "
                              "agent_skills, ipython, gitinfo)",
                              name ? "\"" : "", name ? name : "(not a string)", name ? "\"" : "");
        }
        if (plugin_names[k].unavailable) {
            json_decref(list);
            return parse_fail(p, "\"plugins\": %s is not available: %s", name,
                              plugin_names[k].unavailable);
        }
        size_t j;
        json_t *y;
        bool seen = false;
        json_array_foreach(list, j, y) seen = seen || strcmp(json_string_value(y), name) == 0;
        if (!seen)
            json_array_append_new(list, json_string(name));
    }
    json_decref(p->c->plugins);
    p->c->plugins = list;
    return 0;
}

static const char *const user_names[SESSION_USER_COUNT] = {
    [SESSION_USER_AGENT] = "agent",
    [SESSION_USER_OPENHANDS] = "openhands",
    [SESSION_USER_ROOT] = "root",
};

const char *session_user_name(enum session_user u)
{
    return (unsigned)u < SESSION_USER_COUNT ? user_names[u] : NULL;
}

/* OpenHands' run_as_openhands: true is the `openhands` user, false root. Without it the
 * agent is paddock's `agent`. */
static int opt_run_as_openhands(struct parse *p, json_t *v)
{
    bool on = false;
    if (opt_bool(p, v, "run_as_openhands", &on) < 0)
        return -1;
    p->c->user = on ? SESSION_USER_OPENHANDS : SESSION_USER_ROOT;
    return 0;
}

/* OpenHands' sandbox.user_id: the agent's uid (ignored for root, as OpenHands does). */
static int opt_user_id(struct parse *p, json_t *v)
{
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 65534)
        return parse_fail(p, "\"user_id\" must be an integer from 1 to 65534 (the agent's uid; "
                             "\"run_as_openhands\": false runs it as root)");
    p->c->uid = (long)json_integer_value(v);
    p->c->uid_asked = true;
    return 0;
}

static int opt_git(struct parse *p, json_t *v)
{
    static const char *const known[] = {"url", "token", "ref", NULL};
    if (!json_is_object(v))
        return parse_fail(p, "\"git\" must be an object {\"url\", \"token\", \"ref\"}");
    if (parse_known(p, v, "git.", known) < 0)
        return -1;
    const char *url = json_cstr(json_object_get(v, "url"));
    json_t *tok = json_object_get(v, "token");
    json_t *ref = json_object_get(v, "ref");
    const char *why = NULL;
    if (!url)
        return parse_fail(p, "\"git.url\" must be a string");
    if (!git_url_valid(url, &why))
        return parse_fail(p, "\"git.url\" %s", why);
    if (tok && (!json_cstr(tok) || json_string_length(tok) > 4096))
        return parse_fail(p, "\"git.token\" must be a string");
    for (const char *q = tok ? json_string_value(tok) : ""; *q; q++)
        if ((unsigned char)*q < ' ' || *q == 0x7f)
            return parse_fail(p, "\"git.token\" must not contain control characters");
    if (ref && (!json_cstr(ref) || !git_ref_valid(json_string_value(ref))))
        return parse_fail(p, "\"git.ref\" must be a branch, a tag or a commit id");
    struct session_config *c = p->c;
    c->git_url = strdup(url);
    c->git_token = tok && json_string_length(tok) ? strdup(json_string_value(tok)) : NULL;
    c->git_ref = ref ? strdup(json_string_value(ref)) : NULL;
    return 0;
}

struct session_option {
    const char *name;
    int (*parse)(struct parse *p, json_t *v);
};

/* Order matters: read_only before volumes (a volume at /tmp clashes with its tmpfs). */
static const struct session_option session_options[] = {
    {"image", opt_image},
    {"name", opt_name},
    {"env", opt_env},
    {"env_allow", opt_env_allow},
    {"limits", opt_limits},
    {"network", opt_network},
    {"egress", opt_egress},
    {"gpus", opt_gpus},
    {"read_only", opt_read_only},
    {"ports", opt_ports},
    {"volumes", opt_volumes},
    {"workspace", opt_workspace},
    {"runtime", opt_runtime},
    {"keep_alive", opt_keep_alive},
    {"backend", opt_backend},
    {"confirm", opt_confirm},
    {"approval_timeout", opt_approval_timeout},
    {"git", opt_git},
    {"setup", opt_setup},
    {"runtime_extra_deps", opt_extra_deps},
    {"rebuild", opt_rebuild},
    {"platform", opt_platform},
    {"enable_auto_lint", opt_auto_lint},
    {"plugins", opt_plugins},
    {"run_as_openhands", opt_run_as_openhands},
    {"user_id", opt_user_id},
};
#define SESSION_N_OPTIONS (sizeof(session_options) / sizeof(session_options[0]))

/* Checks that span several options. */
static int parse_combined(struct parse *p)
{
    struct session_config *c = p->c;
    if (env_withhold(p) < 0)
        return -1;
    if (c->user == SESSION_USER_ROOT)
        c->uid = 0;
    /* Without the option: Python cells, as since run_ipython exists (paddock's name for
     * OpenHands' jupyter). */
    if (!c->plugins && !(c->plugins = json_pack("[s]", "ipython")))
        return parse_fail(p, "out of memory");
    /* The local backend runs on the host's system: nothing of a container to configure. */
    static const char *const not_local[] = {
        "image", "ports", "volumes", "workspace",          "runtime",
        "gpus",  "git",   "setup",   "runtime_extra_deps", "read_only"};
    for (size_t i = 0; c->local && i < sizeof(not_local) / sizeof(not_local[0]); i++)
        if (p->opts && json_object_get(p->opts, not_local[i]) &&
            !json_is_null(json_object_get(p->opts, not_local[i])))
            return parse_fail(p,
                              "\"%s\" is not available on the local backend (the host's "
                              "system read-only, a workspace directory, no network)",
                              not_local[i]);
    if (c->local && c->network != SESSION_NET_NONE)
        return parse_fail(p, "the local backend has no network: \"network\" must be \"none\"");
    if (c->egress_given && c->network != SESSION_NET_EGRESS)
        return parse_fail(p,
                          "\"egress\" needs \"network\": \"egress\" (with \"%s\" it would "
                          "decide nothing)",
                          session_net_name(c->network));
    if (c->n_ports && c->network != SESSION_NET_BRIDGE)
        return parse_fail(p, "\"ports\" needs \"network\": \"bridge\" (with \"%s\" %s)",
                          session_net_name(c->network),
                          c->network == SESSION_NET_HOST
                              ? "the container's ports are the host's already"
                              : "nothing can reach the container");
    if (c->git_url) {
        if (c->ws == SESSION_WS_IMAGE) {
            c->ws = SESSION_WS_CLONE;
        } else if (c->ws != SESSION_WS_BIND || c->ws_read_only) {
            return parse_fail(p, "\"git\" clones into the workspace: give no \"workspace\" (the "
                                 "engine makes one) or a writable host directory");
        } else if (!dir_is_empty(c->ws_source)) {
            return parse_fail(p,
                              "\"workspace.source\" %s must be empty to clone \"git.url\" "
                              "into it",
                              c->ws_source);
        }
    }
    if ((c->ws == SESSION_WS_OVERLAY || c->ws == SESSION_WS_CLONE) &&
        strpbrk(p->eng->state_dir, ":,\\"))
        return parse_fail(p,
                          "the engine's state dir %s has ':', ',' or '\\' in its path, which "
                          "an overlay or clone workspace cannot use",
                          p->eng->state_dir);
    return 0;
}

int session_config_parse(struct engine *eng, json_t *opts, struct session_config **out,
                         struct session_result *bad)
{
    struct session_config *c = calloc(1, sizeof(*c));
    struct parse p = {.eng = eng, .c = c, .opts = opts};
    *out = NULL;
    if (!c || !(c->env = json_object())) {
        free(c);
        *bad =
            (struct session_result){.status = 500, .err = ERR_INTERNAL, .message = "out of memory"};
        return -1;
    }
    c->cpus = SESSION_CPUS_DEFAULT;
    c->memory = SESSION_MEMORY_DEFAULT;
    c->pids = SESSION_PIDS_DEFAULT;
    c->disk = disk_limit_default(eng); /* every session has one (disk.c enforces it) */
    c->network = SESSION_NET_NONE;
    /* The config file's [egress] (egress_load_config): its allow list unless the request
     * gives one, its deny list always, its ask unless the request says. */
    c->egress_allow = eng->egress_allow ? json_copy(eng->egress_allow) : json_array();
    c->egress_deny = eng->egress_deny ? json_copy(eng->egress_deny) : json_array();
    c->egress_ask = eng->egress_allow ? eng->egress_ask != 0 : true;
    c->egress_max_connections = EGRESS_MAX_CONNECTIONS_DEFAULT;
    c->egress_idle_timeout = EGRESS_IDLE_TIMEOUT_DEFAULT;
    c->keep_alive = true; /* sessions outlive the engine unless asked otherwise */
    c->auto_lint = eng->auto_lint;
    c->user = SESSION_USER_AGENT;
    c->uid = SESSION_AGENT_UID;
    int rc = 0;
    const char *k;
    json_t *v;
    json_object_foreach(opts, k, v)
    {
        size_t i = 0;
        while (i < SESSION_N_OPTIONS && strcmp(k, session_options[i].name))
            i++;
        if (i == SESSION_N_OPTIONS) {
            static const char *known[SESSION_N_OPTIONS + 1];
            for (size_t j = 0; j < SESSION_N_OPTIONS; j++)
                known[j] = session_options[j].name;
            rc = parse_known(&p, opts, "", known);
            break;
        }
    }
    for (size_t i = 0; rc == 0 && i < SESSION_N_OPTIONS; i++) {
        v = json_object_get(opts, session_options[i].name);
        if (v && !json_is_null(v))
            rc = session_options[i].parse(&p, v);
    }
    if (rc == 0)
        rc = parse_combined(&p);
    if (rc < 0) {
        snprintf(session_config_msg, sizeof(session_config_msg), "%s",
                 p.why ? p.why : "out of memory");
        free(p.why);
        session_config_free(c);
        *bad = (struct session_result){.status = p.forbidden ? 403 : 400,
                                       .err = p.forbidden ? ERR_FORBIDDEN : ERR_BAD_REQUEST,
                                       .message = session_config_msg};
        return -1;
    }
    *out = c;
    return 0;
}

static void wipe(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

void session_config_forget_token(struct session_config *c)
{
    wipe(c->git_token);
    c->git_token = NULL;
}

void session_config_free(struct session_config *c)
{
    if (!c)
        return;
    free(c->image);
    free(c->name);
    json_decref(c->env);
    json_decref(c->egress_allow);
    json_decref(c->egress_deny);
    json_decref(c->env_allow);
    json_decref(c->withheld);
    json_decref(c->setup);
    json_decref(c->plugins);
    json_decref(c->gpu_ids);
    free(c->platform);
    for (size_t i = 0; i < c->n_volumes; i++) {
        free(c->volumes[i].source);
        free(c->volumes[i].target);
    }
    free(c->ws_source);
    free(c->runtime);
    free(c->git_url);
    wipe(c->git_token);
    free(c->git_ref);
    free(c);
}

/* ---- what the store keeps ---- */

char *session_config_work_dir(const struct engine *eng, const char *id)
{
    return util_strdupf("%s/work/%s", eng->state_dir, id);
}

static const char *const ws_types[SESSION_WS_COUNT] = {
    [SESSION_WS_IMAGE] = "image",     [SESSION_WS_BIND] = "bind",   [SESSION_WS_VOLUME] = "volume",
    [SESSION_WS_OVERLAY] = "overlay", [SESSION_WS_CLONE] = "clone",
};

const char *session_ws_name(enum session_ws ws)
{
    return (unsigned)ws < SESSION_WS_COUNT ? ws_types[ws] : NULL;
}

int session_ws_parse(const char *name, enum session_ws *ws)
{
    for (int i = 0; name && i < SESSION_WS_COUNT; i++)
        if (strcmp(ws_types[i], name) == 0) {
            *ws = (enum session_ws)i;
            return 0;
        }
    return -1;
}

json_t *session_config_env_names(const struct session_config *c)
{
    json_t *names = json_array();
    const char *k;
    json_t *v;
    json_object_foreach(c->env, k, v)
    {
        json_array_append_new(names, json_string(k));
    }
    return names;
}

json_t *session_config_stored(const struct session_config *c, struct engine *eng, const char *id,
                              const char *image)
{
    json_t *o = json_object();
    json_t *limits = json_pack("{s:f,s:I,s:I}", "cpus", c->cpus, "memory", (json_int_t)c->memory,
                               "pids", (json_int_t)c->pids);
    if (c->disk)
        json_object_set_new(limits, "disk", json_integer(c->disk));
    json_object_set_new(o, "limits", limits);
    json_object_set_new(o, "network", json_string(session_net_name(c->network)));
    if (c->network == SESSION_NET_EGRESS) {
        json_t *eg = json_pack("{s:O,s:O,s:b,s:i,s:f,s:s}", "allow", c->egress_allow, "deny",
                               c->egress_deny, "ask", c->egress_ask, "max_connections",
                               c->egress_max_connections, "idle_timeout", c->egress_idle_timeout,
                               "proxy", "http://" SESSION_EGRESS_PROXY);
        if (c->egress_max_bytes)
            json_object_set_new(eg, "max_bytes", json_integer(c->egress_max_bytes));
        json_object_set_new(o, "egress", eg);
    }
    json_object_set_new(o, "read_only", json_boolean(c->read_only));
    json_object_set_new(o, "keep_alive", json_boolean(c->keep_alive));
    json_object_set_new(o, "backend", json_string(c->local ? "local" : "docker"));
    /* The approval policy as it applies, so the session shows it and a changed engine default
     * does not change an existing session. */
    json_object_set_new(o, "confirm",
                        json_string(c->confirm ? c->confirm : policy_name(eng->default_confirm)));
    json_object_set_new(
        o, "approval_timeout",
        json_real(c->approval_timeout > 0 ? c->approval_timeout : eng->approval_timeout));
    if (c->gpus < 0)
        json_object_set_new(o, "gpus", json_string("all"));
    else if (c->gpus > 0)
        json_object_set_new(o, "gpus", json_integer(c->gpus));
    else if (c->gpu_ids)
        json_object_set(o, "gpus", c->gpu_ids);
    if (c->n_ports) {
        json_t *ports = json_array();
        for (size_t i = 0; i < c->n_ports; i++)
            json_array_append_new(ports, json_pack("{s:i,s:s}", "port", c->ports[i].port,
                                                   "protocol", c->ports[i].proto));
        json_object_set_new(o, "ports", ports);
    }
    if (c->n_volumes) {
        json_t *vols = json_array();
        for (size_t i = 0; i < c->n_volumes; i++) {
            const struct session_mount *m = &c->volumes[i];
            json_array_append_new(vols,
                                  json_pack("{s:s,s:s,s:s,s:b}", "type",
                                            m->volume ? "volume" : "bind", "source", m->source,
                                            "target", m->target, "read_only", m->read_only));
        }
        json_object_set_new(o, "volumes", vols);
    }
    if (c->ws != SESSION_WS_IMAGE || c->read_only) {
        json_t *ws =
            json_pack("{s:s,s:b}", "type", session_ws_name(c->ws), "read_only", c->ws_read_only);
        char *wd = session_config_work_dir(eng, id);
        if (c->ws_source)
            json_object_set_new(ws, "source", json_string(c->ws_source));
        else if (c->ws == SESSION_WS_CLONE && wd) {
            char *d = util_strdupf("%s/workspace", wd);
            json_object_set_new(ws, "source", d ? json_string(d) : json_null());
            free(d);
        } else if (c->ws == SESSION_WS_IMAGE) {
            json_object_set_new(ws, "type", json_string("anonymous_volume"));
        }
        if (c->ws == SESSION_WS_OVERLAY && wd) {
            char *d = util_strdupf("%s/upper", wd);
            json_object_set_new(ws, "upper", d ? json_string(d) : json_null());
            free(d);
        }
        free(wd);
        json_object_set_new(o, "workspace", ws);
    }
    if (c->runtime)
        json_object_set_new(o, "runtime", json_string(c->runtime));
    if (c->setup)
        json_object_set(o, "setup", c->setup);
    if (c->rebuild)
        json_object_set_new(o, "rebuild", json_true());
    if (c->platform)
        json_object_set_new(o, "platform", json_string(c->platform));
    if (c->auto_lint)
        json_object_set_new(o, "enable_auto_lint", json_true());
    if (c->git_url) {
        /* Never the token. */
        json_t *g = json_pack("{s:s}", "url", c->git_url);
        if (c->git_ref)
            json_object_set_new(g, "ref", json_string(c->git_ref));
        json_object_set_new(g, "token", json_boolean(c->git_token != NULL));
        json_object_set_new(o, "git", g);
    }
    if (c->env_allow)
        json_object_set(o, "env_allow", c->env_allow);
    json_object_set(o, "plugins", c->plugins);
    json_object_set_new(o, "user", json_string(session_user_name(c->user)));
    json_object_set_new(o, "user_id", json_integer(c->uid));
    return json_pack("{s:s,s:o,s:O,s:o}", "image", image, "env", session_config_env_names(c),
                     "withheld_env", c->withheld, "options", o);
}

/* ---- the create body ---- */

static json_t *mount_bind(const char *src, const char *dst, bool ro)
{
    return json_pack("{s:s,s:s,s:s,s:b,s:{s:s,s:b}}", "Type", "bind", "Source", src, "Target", dst,
                     "ReadOnly", ro, "BindOptions", "Propagation", "rprivate", "NonRecursive", 1);
}

/* An anonymous volume: removed with the container (DELETE ?v=1), labelled as the session's. */
static json_t *mount_anonymous(const char *dst, json_t *labels, json_t *driver)
{
    json_t *vo = json_pack("{s:O}", "Labels", labels);
    if (driver) {
        json_object_set_new(vo, "DriverConfig", driver);
        /* The lower layer is the content: never copy the image's /workspace into it. */
        json_object_set_new(vo, "NoCopy", json_true());
    }
    return json_pack("{s:s,s:s,s:b,s:o}", "Type", "volume", "Target", dst, "ReadOnly", 0,
                     "VolumeOptions", vo);
}

static json_t *workspace_mount(struct engine *eng, const struct session_config *c, const char *id,
                               json_t *labels)
{
    char *wd = NULL, *o = NULL, *d = NULL;
    json_t *m = NULL;
    switch (c->ws) {
    case SESSION_WS_IMAGE:
        /* Only with a read-only root: the image's /workspace (owner included) is copied in. */
        if (c->read_only)
            m = mount_anonymous(WORKSPACE_IN_CONTAINER, labels, NULL);
        break;
    case SESSION_WS_BIND:
        m = mount_bind(c->ws_source, WORKSPACE_IN_CONTAINER, c->ws_read_only);
        break;
    case SESSION_WS_VOLUME:
        m = json_pack("{s:s,s:s,s:s,s:b}", "Type", "volume", "Source", c->ws_source, "Target",
                      WORKSPACE_IN_CONTAINER, "ReadOnly", c->ws_read_only);
        break;
    case SESSION_WS_CLONE:
        wd = session_config_work_dir(eng, id);
        d = wd ? util_strdupf("%s/workspace", wd) : NULL;
        if (d)
            m = mount_bind(d, WORKSPACE_IN_CONTAINER, false);
        break;
    case SESSION_WS_OVERLAY:
        /* dockerd mounts it (the engine needs no privilege): the local driver's overlay. */
        wd = session_config_work_dir(eng, id);
        o = wd ? util_strdupf("lowerdir=%s,upperdir=%s/upper,workdir=%s/work", c->ws_source, wd, wd)
               : NULL;
        if (o)
            m = mount_anonymous(WORKSPACE_IN_CONTAINER, labels,
                                json_pack("{s:s,s:{s:s,s:s,s:s}}", "Name", "local", "Options",
                                          "type", "overlay", "device", "overlay", "o", o));
        break;
    case SESSION_WS_COUNT:
        break;
    }
    free(wd);
    free(o);
    free(d);
    return m;
}

static json_t *device_requests(const struct session_config *c)
{
    if (!c->gpus && !c->gpu_ids)
        return NULL;
    json_t *r = json_pack("{s:s,s:[[s]]}", "Driver", "", "Capabilities", "gpu");
    if (c->gpu_ids)
        json_object_set(r, "DeviceIDs", c->gpu_ids);
    else
        json_object_set_new(r, "Count", json_integer(c->gpus));
    return json_pack("[o]", r);
}

/* The hardened container (docs/architecture.md, "Hardened container"; the fields are Docker's
 * create body: https://docs.docker.com/reference/api/engine/). */
json_t *session_config_container(struct engine *eng, const struct session_config *c, const char *id,
                                 const char *sock_dir)
{
    json_t *envs = json_array();
    json_array_append_new(envs, json_string("LANG=C.UTF-8"));
    if (c->network == SESSION_NET_EGRESS) {
        /* Every process in the sandbox inherits them (the executor passes the container's
         * environment on): pip, npm, git and curl go through the proxy unchanged. */
        static const char *const proxy_env[] = {
            "HTTP_PROXY=http://" SESSION_EGRESS_PROXY,
            "HTTPS_PROXY=http://" SESSION_EGRESS_PROXY,
            "http_proxy=http://" SESSION_EGRESS_PROXY,
            "https_proxy=http://" SESSION_EGRESS_PROXY,
            "NO_PROXY=localhost",
            "no_proxy=localhost",
        };
        for (size_t i = 0; i < sizeof proxy_env / sizeof proxy_env[0]; i++)
            json_array_append_new(envs, json_string(proxy_env[i]));
    }
    /* The credential-named variables the executor lets into the agent's shell (an image that
     * sets it itself chose to). */
    if (json_array_size(c->env_allow)) {
        struct buf allow = BUF_INIT;
        size_t ai;
        json_t *a;
        json_array_foreach(c->env_allow, ai, a)
        {
            buf_printf(&allow, "%s%s", allow.len ? "," : "", json_string_value(a));
        }
        char *allow_kv = allow.data ? util_strdupf("PADDOCK_ENV_ALLOW=%s", allow.data) : NULL;
        buf_free(&allow);
        if (allow_kv)
            json_array_append_new(envs, json_string(allow_kv));
        free(allow_kv);
    }
    const char *k;
    json_t *v;
    json_object_foreach(c->env, k, v)
    {
        char *kv = util_strdupf("%s=%s", k, json_string_value(v));
        if (kv)
            json_array_append_new(envs, json_string(kv));
        free(kv);
    }
    json_t *labels =
        json_pack("{s:s,s:s}", "paddock.session", id, "paddock.engine", eng->engine_id);
    const char *test_label = getenv("PADDOCK_TEST_LABEL");
    if (test_label && *test_label)
        json_object_set_new(labels, "paddock.test", json_string(test_label));
    json_t *mounts =
        json_pack("[{s:s,s:s,s:s,s:b},{s:s,s:s,s:s,s:b}]", "Type", "bind", "Source",
                  eng->executor_path, "Target", EXECUTOR_IN_CONTAINER, "ReadOnly", 1, "Type",
                  "bind", "Source", sock_dir, "Target", SOCKET_DIR_IN_CONTAINER, "ReadOnly", 0);
    json_t *ws = workspace_mount(eng, c, id, labels);
    if (ws)
        json_array_append_new(mounts, ws);
    for (size_t i = 0; i < c->n_volumes; i++) {
        const struct session_mount *m = &c->volumes[i];
        json_array_append_new(mounts, m->volume ? json_pack("{s:s,s:s,s:s,s:b}", "Type", "volume",
                                                            "Source", m->source, "Target",
                                                            m->target, "ReadOnly", m->read_only)
                                                : mount_bind(m->source, m->target, m->read_only));
    }
    /* A read-only root cannot take the agent's name: /etc is then a copy of the image's
     * (Docker fills a new volume from the image), root's like the image's, so only the
     * executor can write it; it goes with the container. */
    if (c->read_only && c->uid != 0)
        json_array_append_new(mounts, mount_anonymous("/etc", labels, NULL));
    /* The executor runs as container root with only what it needs: CHOWN for the workspace,
     * SETUID/SETGID to drop the agent's shell to uid 1000, KILL to signal the agent's
     * processes. The seccomp profile is paddock's own (seccomp.c), never the daemon's.
     * MaskedPaths/ReadonlyPaths are left out so Docker's defaults apply. */
    json_t *host = json_pack(
        "{s:[s],s:[s,s,s,s],s:[s,s],s:I,s:I,s:I,s:I,s:s,s:b,s:s,s:I,"
        "s:{s:s,s:{s:s,s:s}},s:{s:s},s:o,"
        "s:[{s:s,s:I,s:I},{s:s,s:I,s:I}]}",
        "CapDrop", "ALL", "CapAdd", "CHOWN", "SETUID", "SETGID", "KILL", "SecurityOpt",
        "no-new-privileges", eng->seccomp_opt, "PidsLimit", (json_int_t)c->pids, "Memory",
        (json_int_t)c->memory, "MemorySwap", (json_int_t)c->memory, "NanoCpus",
        (json_int_t)(c->cpus * 1e9 + 0.5), "NetworkMode",
        c->network == SESSION_NET_EGRESS ? "none" : session_net_name(c->network), "Init", 1,
        "IpcMode", "private", "ShmSize", (json_int_t)(64 * 1024 * 1024), "LogConfig", "Type",
        "json-file", "Config", "max-size", "10m", "max-file", "1", "RestartPolicy", "Name", "no",
        "Mounts", mounts, "Ulimits", "Name", "nofile", "Soft", (json_int_t)8192, "Hard",
        (json_int_t)8192, "Name", "core", "Soft", (json_int_t)0, "Hard", (json_int_t)0);
    if (c->read_only) {
        char *t = util_strdupf("rw,nosuid,nodev,exec,size=%lld", SESSION_TMPFS_SIZE);
        json_object_set_new(host, "ReadonlyRootfs", json_true());
        json_object_set_new(host, "Tmpfs", json_pack("{s:s}", "/tmp", t ? t : "rw"));
        free(t);
    }
    if (c->runtime)
        json_object_set_new(host, "Runtime", json_string(c->runtime));
    if (c->disk_quota) {
        char size[32];
        snprintf(size, sizeof(size), "%lld", c->disk);
        json_object_set_new(host, "StorageOpt", json_pack("{s:s}", "size", size));
    }
    json_t *dr = device_requests(c);
    if (dr)
        json_object_set_new(host, "DeviceRequests", dr);
    json_t *exposed = NULL;
    if (c->n_ports) {
        /* Loopback only; HostPort "" lets Docker choose a free port. */
        json_t *bindings = json_object();
        exposed = json_object();
        for (size_t i = 0; i < c->n_ports; i++) {
            char key[32];
            snprintf(key, sizeof(key), "%d/%s", c->ports[i].port, c->ports[i].proto);
            json_object_set_new(bindings, key,
                                json_pack("[{s:s,s:s}]", "HostIp", "127.0.0.1", "HostPort", ""));
            json_object_set_new(exposed, key, json_object());
        }
        json_object_set_new(host, "PortBindings", bindings);
    }
    char uid[24];
    snprintf(uid, sizeof(uid), "%ld", c->uid);
    json_t *cmd = json_pack("[s,s,s,s,s,s]", "--socket", SOCKET_DIR_IN_CONTAINER "/executor.sock",
                            "--working-dir", WORKSPACE_IN_CONTAINER, "--user-id", uid);
    /* The session's user by name, with its home made by the executor when the image has
     * none. A non-root agent is named in the container's /etc/passwd and /etc/group by the
     * executor, as container root before the agent runs (docs/security.md, "The agent's
     * name"); and a workspace that is the image's or the engine's is made its own, as
     * OpenHands chowns its workspace; an operator's directory or volume is left as it is. */
    json_array_append_new(cmd, json_string("--username"));
    json_array_append_new(cmd, json_string(session_user_name(c->user)));
    if (c->uid != 0) {
        json_array_append_new(cmd, json_string("--user-db"));
        json_array_append_new(cmd, json_string("/etc"));
        if (c->ws == SESSION_WS_IMAGE || c->ws == SESSION_WS_CLONE)
            json_array_append_new(cmd, json_string("--own-working-dir"));
    }
    /* The executor takes the names up to the next option. The ipython plugin starts Python
     * only at the first cell (and only if the image has it). */
    if (json_array_size(c->plugins)) {
        json_array_append_new(cmd, json_string("--plugins"));
        size_t i;
        json_t *x;
        json_array_foreach(c->plugins, i, x) json_array_append(cmd, x);
    }
    if (c->network == SESSION_NET_EGRESS) {
        json_array_append_new(cmd, json_string("--egress-proxy"));
        json_array_append_new(cmd, json_string(SESSION_EGRESS_PROXY));
        json_array_append_new(cmd, json_string("--egress-socket"));
        json_array_append_new(cmd,
                              json_string(SOCKET_DIR_IN_CONTAINER "/" SESSION_EGRESS_SOCKET_NAME));
    }
    if (c->read_only || c->user == SESSION_USER_OPENHANDS) {
        json_array_append_new(cmd, json_string("--home"));
        json_array_append_new(cmd, json_string(c->read_only ? READ_ONLY_HOME : "/home/openhands"));
    }
    if (c->auto_lint)
        json_array_append_new(cmd, json_string("--auto-lint"));
    json_t *body =
        json_pack("{s:s,s:[s],s:o,s:o,s:o,s:s,s:s,s:i,s:o}", "Image",
                  c->image ? c->image : eng->default_image, "Entrypoint", EXECUTOR_IN_CONTAINER,
                  "Cmd", cmd, "Env", envs, "Labels", labels, "User", "0:0", "WorkingDir", "/",
                  "StopTimeout", 5, "HostConfig", host);
    if (body && c->platform)
        json_object_set_new(body, "Platform", json_string(c->platform));
    if (body && exposed)
        json_object_set_new(body, "ExposedPorts", exposed);
    else
        json_decref(exposed);
    return body;
}
