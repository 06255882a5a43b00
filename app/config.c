/* The config file, a TOML subset: enough for sections, scalars and string arrays, with
 * errors that name the line. Unknown keys are warned about, never fatal (a newer file on an
 * older paddock still starts). */
#include "app/config.h"

#include "common/buf.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum config_type { CT_STRING, CT_BOOL, CT_NUMBER, CT_STRINGS };

/* Every key: its section, name, type and where it goes. */
struct config_key {
    const char *section, *name;
    enum config_type type;
    size_t offset;
    double max; /* numbers only; 0: no upper bound */
};

#define CK(sec, key, ty, field)                                                                    \
    {                                                                                              \
        .section = sec, .name = key, .type = ty, .offset = offsetof(struct config, field)          \
    }
/* A number with an upper bound: a typo of a few zeros is refused at start, not obeyed. */
#define CKMAX(sec, key, field, top)                                                                \
    {                                                                                              \
        .section = sec, .name = key, .type = CT_NUMBER, .offset = offsetof(struct config, field),  \
        .max = top                                                                                 \
    }
static const struct config_key config_keys[] = {
    CK("sandbox", "base_container_image", CT_STRING, base_container_image),
    CK("sandbox", "keep_runtime_alive", CT_BOOL, keep_runtime_alive),
    CK("sandbox", "enable_auto_lint", CT_BOOL, enable_auto_lint),
    CK("security", "confirmation_mode", CT_BOOL, confirmation_mode),
    CK("security", "network_bridge", CT_STRING, security[0]),
    CK("security", "network_host", CT_STRING, security[1]),
    CK("security", "ports", CT_STRING, security[2]),
    CK("security", "host_volumes", CT_STRING, security[3]),
    CK("security", "gpus", CT_STRING, security[4]),
    CK("security", "runtime", CT_STRING, security[5]),
    CK("security", "setup", CT_STRING, security[6]),
    CK("security", "terminal", CT_STRING, security[7]),
    CK("security", "root_terminal", CT_STRING, security[8]),
    CK("security", "root_agent", CT_STRING, security[9]),
    CK("security", "backend_local", CT_STRING, security[10]),
    CK("paddock", "confirm", CT_STRING, confirm),
    CKMAX("paddock", "approval_timeout", approval_timeout, 86400),
    CKMAX("paddock", "retention_days", retention_days, 36500),
    CK("paddock", "socket", CT_STRING, socket),
    CK("paddock", "state_dir", CT_STRING, state_dir),
    CK("paddock", "pool", CT_STRING, pool),
    CK("paddock", "disk_limit", CT_STRING, disk_limit),
    CK("paddock", "disk_floor", CT_STRING, disk_floor),
    CK("paddock", "driver", CT_STRING, driver),
    CK("paddock", "listen", CT_STRING, listen),
    CK("paddock", "token_file", CT_STRING, token_file),
    CK("paddock", "tls_cert", CT_STRING, tls_cert),
    CK("paddock", "tls_key", CT_STRING, tls_key),
    CK("paddock", "tls_client_ca", CT_STRING, tls_client_ca),
    CK("paddock", "theme", CT_STRING, theme),
    CK("paddock", "bell", CT_BOOL, bell),
    CK("paddock", "mouse", CT_BOOL, mouse),
    CK("approvals", "allow", CT_STRINGS, allow),
    CK("approvals", "deny", CT_STRINGS, deny),
    CK("approvals", "ceiling", CT_STRING, rule_ceiling),
    CK("local", "enabled", CT_BOOL, local_enabled),
    CK("local", "user", CT_STRING, local_user),
    CK("local", "root", CT_STRING, local_root),
    CK("local", "unsandboxed", CT_BOOL, local_unsandboxed),
    CK("local", "bwrap", CT_STRING, local_bwrap),
    CK("egress", "allow", CT_STRINGS, egress_allow),
    CK("egress", "deny", CT_STRINGS, egress_deny),
    CK("egress", "ask", CT_BOOL, egress_ask),
};
#undef CK

/* The keys of an [engines.NAME] section, all strings. */
#define EK(key, field)                                                                             \
    {                                                                                              \
        .section = "engines", .name = key, .type = CT_STRING,                                      \
        .offset = offsetof(struct config_engine, field)                                            \
    }
static const struct config_key config_engine_keys[] = {
    EK("url", url),       EK("token_file", token_file), EK("ca", ca),
    EK("tls_cert", cert), EK("tls_key", key),
};
#undef EK
#define CONFIG_ENGINES "engines."
#define CONFIG_EGRESS_PRESETS "egress.presets."

const char *const config_security_keys[CONFIG_SECURITY_KEYS] = {
    "network_bridge", "network_host", "ports",         "host_volumes", "gpus",          "runtime",
    "setup",          "terminal",     "root_terminal", "root_agent",   "backend_local",
};

struct config_parser {
    const char *name;
    int line;
    char section[64];
    char **err;
    struct buf warnings; /* one line each */
};

static int config_fail(struct config_parser *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int config_fail(struct config_parser *p, const char *fmt, ...)
{
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (asprintf(p->err, "%s:%d: %s", p->name, p->line, msg) < 0)
        *p->err = NULL;
    return -1;
}

static void config_warn(struct config_parser *p, const char *key)
{
    /* out of memory: the warning is lost, not the configuration */
    buf_printf(&p->warnings, "%s:%d: unknown key %s%s%s (ignored)\n", p->name, p->line,
               p->section[0] ? p->section : "", p->section[0] ? "." : "", key);
}

static const char *config_skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* The rest of the line may hold only a comment. */
static int config_line_end(struct config_parser *p, const char *s)
{
    s = config_skip_ws(s);
    if (*s && *s != '#')
        return config_fail(p, "unexpected text after the value: %.20s", s);
    return 0;
}

/* A basic "string" with \" \\ \n \t \uXXXX escapes, or a 'literal'. */
static char *config_string(struct config_parser *p, const char **sp)
{
    const char *s = *sp;
    char q = *s++;
    size_t cap = strlen(s) + 1, n = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    while (*s && *s != q) {
        if (q == '"' && *s == '\\') {
            s++;
            switch (*s) {
            case 'n':
                out[n++] = '\n';
                break;
            case 't':
                out[n++] = '\t';
                break;
            case '"':
            case '\\':
                out[n++] = *s;
                break;
            default:
                free(out);
                config_fail(p, "unknown escape \\%c in a string", *s ? *s : ' ');
                return NULL;
            }
            s++;
            continue;
        }
        out[n++] = *s++;
    }
    if (*s != q) {
        free(out);
        config_fail(p, "the string has no closing %c", q);
        return NULL;
    }
    out[n] = '\0';
    *sp = s + 1;
    return out;
}

static const struct config_key *config_find(const char *section, const char *key)
{
    for (size_t i = 0; i < sizeof(config_keys) / sizeof(config_keys[0]); i++)
        if (strcmp(config_keys[i].section, section) == 0 && strcmp(config_keys[i].name, key) == 0)
            return &config_keys[i];
    return NULL;
}

/* What a key of this type takes, for messages. */
static const char *config_type_name(enum config_type t)
{
    static const char *const names[] = {
        [CT_STRING] = "a \"string\"",
        [CT_BOOL] = "true or false",
        [CT_NUMBER] = "a number",
        [CT_STRINGS] = "[\"strings\"]",
    };
    return names[t];
}

static void config_strings_free(char **list)
{
    for (size_t i = 0; list && list[i]; i++)
        free(list[i]);
    free(list);
}

/* key = "string" in the last [engines.NAME] section. */
static int config_engine_value(struct config_parser *p, struct config *c, const char *key,
                               const char *s)
{
    struct config_engine *e = &c->engines[c->nengines - 1];
    const struct config_key *k = NULL;
    for (size_t i = 0; i < sizeof(config_engine_keys) / sizeof(*config_engine_keys); i++)
        if (strcmp(config_engine_keys[i].name, key) == 0)
            k = &config_engine_keys[i];
    if (*s != '"' && *s != '\'')
        return config_fail(p, "%s of an engine takes a \"string\"", key);
    char *v = config_string(p, &s);
    if (!v)
        return -1;
    if (config_line_end(p, s) < 0) {
        free(v);
        return -1;
    }
    if (!k) {
        config_warn(p, key);
        free(v);
        return 0;
    }
    char **field = (char **)((char *)e + k->offset);
    free(*field);
    *field = v;
    return 0;
}

/* [engines.NAME]: a new engine entry; 0, or -1 after config_fail. */
static int config_engine_add(struct config_parser *p, struct config *c, const char *name)
{
    if (!*name ||
        strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
            strlen(name))
        return config_fail(p, "an engine's name is letters, digits, _ and -, not \"%.40s\"", name);
    if (strcmp(name, "local") == 0 || strcmp(name, "auto") == 0)
        return config_fail(p, "the engine name %s is taken (the local engine; the choice of one)",
                           name);
    for (size_t i = 0; i < c->nengines; i++)
        if (strcmp(c->engines[i].name, name) == 0)
            return config_fail(p, "[engines.%s] comes twice", name);
    struct config_engine *more = realloc(c->engines, (c->nengines + 1) * sizeof(*more));
    if (!more)
        return config_fail(p, "out of memory");
    c->engines = more;
    memset(&more[c->nengines], 0, sizeof(*more));
    if (!(more[c->nengines].name = strdup(name)))
        return config_fail(p, "out of memory");
    c->nengines++;
    return 0;
}

/* [egress.presets.NAME]: a new preset; 0, or -1 after config_fail. */
static int config_egress_preset_add(struct config_parser *p, struct config *c, const char *name)
{
    if (!*name ||
        strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
            strlen(name))
        return config_fail(p, "a preset's name is letters, digits, _ and -, not \"%.40s\"", name);
    for (size_t i = 0; i < c->negress_presets; i++)
        if (strcmp(c->egress_presets[i].name, name) == 0)
            return config_fail(p, "[egress.presets.%s] comes twice", name);
    struct config_egress_preset *more =
        realloc(c->egress_presets, (c->negress_presets + 1) * sizeof(*more));
    if (!more)
        return config_fail(p, "out of memory");
    c->egress_presets = more;
    memset(&more[c->negress_presets], 0, sizeof(*more));
    if (!(more[c->negress_presets].name = strdup(name)))
        return config_fail(p, "out of memory");
    c->negress_presets++;
    return 0;
}

static int config_value(struct config_parser *p, struct config *c, const char *key, const char *s)
{
    if (strncmp(p->section, CONFIG_ENGINES, strlen(CONFIG_ENGINES)) == 0)
        return config_engine_value(p, c, key, s);
    const struct config_key *k = config_find(p->section, key);
    void *field = k ? (char *)c + k->offset : NULL;
    if (strncmp(p->section, CONFIG_EGRESS_PRESETS, strlen(CONFIG_EGRESS_PRESETS)) == 0) {
        /* a preset's one key; its field is in the last preset, not in struct config */
        static const struct config_key preset_allow = {
            .section = "egress.presets", .name = "allow", .type = CT_STRINGS};
        k = strcmp(key, "allow") == 0 ? &preset_allow : NULL;
        field = k ? &c->egress_presets[c->negress_presets - 1].allow : NULL;
    }
    if (*s == '"' || *s == '\'') {
        char *v = config_string(p, &s);
        if (!v)
            return -1;
        if (config_line_end(p, s) < 0) {
            free(v);
            return -1;
        }
        if (!k) {
            config_warn(p, key);
            free(v);
            return 0;
        }
        if (k->type != CT_STRING) {
            free(v);
            return config_fail(p, "%s takes %s, not a string", key, config_type_name(k->type));
        }
        free(*(char **)field);
        *(char **)field = v;
        return 0;
    }
    if (*s == '[') {
        s++;
        char **list = calloc(1, sizeof(*list));
        size_t n = 0;
        int rc = list ? 0 : config_fail(p, "out of memory");
        for (; rc == 0;) {
            s = config_skip_ws(s);
            if (*s == ']')
                break;
            if (*s != '"' && *s != '\'') {
                rc = config_fail(p, "an array holds strings, one line only");
                break;
            }
            char *v = config_string(p, &s);
            char **more = v ? realloc(list, (n + 2) * sizeof(*list)) : NULL;
            if (!more) {
                free(v);
                rc = v ? config_fail(p, "out of memory") : -1;
                break;
            }
            list = more;
            list[n++] = v;
            list[n] = NULL;
            s = config_skip_ws(s);
            if (*s == ',')
                s++;
            else if (*s != ']')
                rc = config_fail(p, "expected ',' or ']' in the array");
        }
        if (rc == 0 && config_line_end(p, s + 1) < 0)
            rc = -1;
        if (rc == 0 && k && k->type != CT_STRINGS)
            rc = config_fail(p, "%s does not take an array", key);
        if (rc == 0 && !k)
            config_warn(p, key);
        if (rc == 0 && k) {
            config_strings_free(*(char ***)field);
            *(char ***)field = list;
            return 0;
        }
        config_strings_free(list);
        return rc;
    }
    if (strncmp(s, "true", 4) == 0 || strncmp(s, "false", 5) == 0) {
        bool v = s[0] == 't';
        if (config_line_end(p, s + (v ? 4 : 5)) < 0)
            return -1;
        if (!k) {
            config_warn(p, key);
            return 0;
        }
        if (k->type != CT_BOOL)
            return config_fail(p, "%s takes %s, not true/false", key, config_type_name(k->type));
        *(int *)field = v;
        return 0;
    }
    char *end = NULL;
    errno = 0;
    double d = strtod(s, &end);
    if (end == s || errno)
        return config_fail(p,
                           "expected a value (\"string\", number, true, false or [array]) "
                           "for %s",
                           key);
    if (config_line_end(p, end) < 0)
        return -1;
    if (!k) {
        config_warn(p, key);
        return 0;
    }
    if (k->type != CT_NUMBER)
        return config_fail(p, "%s takes %s, not a number", key, config_type_name(k->type));
    if (d <= 0)
        return config_fail(p, "%s must be above 0", key);
    if (k->max > 0 && d > k->max)
        return config_fail(p, "%s must be at most %g", key, k->max);
    *(double *)field = d;
    return 0;
}

int config_parse(const char *text, size_t len, const char *name, struct config *c, char **warnings,
                 char **err)
{
    struct config_parser p = {.name = name, .err = err};
    *err = NULL;
    if (warnings)
        *warnings = NULL;
    char *copy = strndup(text, len);
    if (!copy) {
        *err = strdup("out of memory");
        return -1;
    }
    int rc = 0;
    char *save = NULL;
    char *line = copy;
    for (char *nl; line && rc == 0; line = nl) {
        nl = strchr(line, '\n');
        if (nl)
            *nl++ = '\0';
        p.line++;
        const char *s = config_skip_ws(line);
        size_t n = strlen(s);
        while (n && (s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
            ((char *)s)[--n] = '\0';
        if (!*s || *s == '#')
            continue;
        if (*s == '[') {
            const char *close = strchr(s, ']');
            if (!close || close == s + 1)
                rc = config_fail(&p, "a section is [name]");
            else if ((size_t)(close - s - 1) >= sizeof(p.section))
                rc = config_fail(&p, "the section name is too long");
            else {
                snprintf(p.section, sizeof(p.section), "%.*s", (int)(close - s - 1), s + 1);
                rc = config_line_end(&p, close + 1);
                if (rc == 0 && strncmp(p.section, CONFIG_ENGINES, strlen(CONFIG_ENGINES)) == 0)
                    rc = config_engine_add(&p, c, p.section + strlen(CONFIG_ENGINES));
                else if (rc == 0 && strncmp(p.section, CONFIG_EGRESS_PRESETS,
                                            strlen(CONFIG_EGRESS_PRESETS)) == 0)
                    rc = config_egress_preset_add(&p, c, p.section + strlen(CONFIG_EGRESS_PRESETS));
            }
            continue;
        }
        const char *k = s;
        while (*s && (isalnum((unsigned char)*s) || *s == '_' || *s == '-'))
            s++;
        if (s == k) {
            rc = config_fail(&p, "expected a key (letters, digits, _ and -)");
            continue;
        }
        char key[64];
        snprintf(key, sizeof(key), "%.*s", (int)(s - k), k);
        s = config_skip_ws(s);
        if (*s != '=') {
            rc = config_fail(&p, "expected '=' after the key %s", key);
            continue;
        }
        rc = config_value(&p, c, key, config_skip_ws(s + 1));
    }
    (void)save;
    free(copy);
    for (size_t i = 0; rc == 0 && i < c->nengines; i++)
        if (!c->engines[i].url) {
            rc = -1;
            if (asprintf(err, "%s: [engines.%s] has no url = \"https://HOST:PORT\"", name,
                         c->engines[i].name) < 0)
                *err = NULL;
        }
    if (warnings)
        *warnings = p.warnings.data; /* NULL when there were none */
    else
        buf_free(&p.warnings);
    return rc;
}

char *config_default_path(void)
{
    const char *env = getenv("PADDOCK_CONFIG");
    if (env && *env)
        return strdup(env);
    const char *xdg = getenv("XDG_CONFIG_HOME");
    char *p = NULL;
    if (xdg && *xdg) {
        if (asprintf(&p, "%s/paddock/config.toml", xdg) < 0)
            p = NULL;
    } else {
        const char *home = getenv("HOME");
        if (asprintf(&p, "%s/.config/paddock/config.toml", home ? home : "") < 0)
            p = NULL;
    }
    return p;
}

int config_load(const char *path, struct config *c, char **warnings, char **err)
{
    memset(c, 0, sizeof(*c));
    c->keep_runtime_alive = -1;
    c->enable_auto_lint = -1;
    c->bell = -1;
    c->mouse = -1;
    c->egress_ask = -1;
    c->confirmation_mode = -1;
    *err = NULL;
    if (warnings)
        *warnings = NULL;
    bool explicit = path != NULL;
    char *p = path ? strdup(path) : config_default_path();
    if (!p)
        return 0;
    FILE *f = fopen(p, "r");
    if (!f) {
        int e = errno;
        if (!explicit && e == ENOENT && !getenv("PADDOCK_CONFIG")) {
            free(p);
            return 0;
        }
        if (asprintf(err, "%s: %s", p, strerror(e)) < 0)
            *err = NULL;
        free(p);
        return -1;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    char buf[4096];
    size_t n;
    while (m && (n = fread(buf, 1, sizeof(buf), f)) > 0)
        fwrite(buf, 1, n, m);
    fclose(f);
    if (m)
        fclose(m);
    int rc = config_parse(text ? text : "", len, p, c, warnings, err);
    free(text);
    if (rc == 0)
        c->path = p;
    else
        free(p);
    return rc;
}

void config_free(struct config *c)
{
    for (size_t i = 0; i < sizeof(config_keys) / sizeof(config_keys[0]); i++)
        if (config_keys[i].type == CT_STRING) {
            char **f = (char **)((char *)c + config_keys[i].offset);
            free(*f);
            *f = NULL;
        } else if (config_keys[i].type == CT_STRINGS) {
            char ***f = (char ***)((char *)c + config_keys[i].offset);
            config_strings_free(*f);
            *f = NULL;
        }
    for (size_t i = 0; i < c->nengines; i++) {
        struct config_engine *e = &c->engines[i];
        free(e->name);
        for (size_t k = 0; k < sizeof(config_engine_keys) / sizeof(*config_engine_keys); k++) {
            char **f = (char **)((char *)e + config_engine_keys[k].offset);
            free(*f);
        }
    }
    free(c->engines);
    c->engines = NULL;
    c->nengines = 0;
    for (size_t i = 0; i < c->negress_presets; i++) {
        free(c->egress_presets[i].name);
        config_strings_free(c->egress_presets[i].allow);
    }
    free(c->egress_presets);
    c->egress_presets = NULL;
    c->negress_presets = 0;
    free(c->path);
    c->path = NULL;
}

const char *config_confirm(const struct config *c)
{
    if (c->confirm)
        return c->confirm;
    if (c->confirmation_mode == 1)
        return "high";
    if (c->confirmation_mode == 0)
        return "never";
    return NULL;
}
