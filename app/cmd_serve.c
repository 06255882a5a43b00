/* paddock serve: the engine in the foreground. */
#include "app/app.h"
#include "app/config.h"
#include "client/client.h"
#include "common/size.h"
#include "engine/engine.h"
#include "engine/risk/policy.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void serve_on_ready(const char *socket_path, void *ud)
{
    const struct engine_options *o = ud;
    fprintf(stderr, "paddock engine %s listening on %s (state %s, image %s, executor %s)\n",
            PADDOCK_VERSION, socket_path, o->state_dir, o->image,
            o->executor ? o->executor : "NOT FOUND");
    if (o->listen)
        fprintf(stderr, "paddock engine also listening on %s://%s (bearer token %s%s)\n",
                o->tls_cert ? "https" : "http", o->listen,
                o->token ? "as given" : "in <state>/token; GET /v1/info has the port",
                o->tls_client_ca ? ", or a client certificate" : "");
}

/* The token of --token-file: the file's content without surrounding white space. The file
 * must be ours alone (chmod 600): a token others can read guards nothing. NULL after a
 * message. */
static char *serve_read_token(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        fprintf(stderr, "paddock serve: cannot read the token file %s: %s\n", path,
                strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode) || (st.st_mode & 077)) {
        fprintf(stderr,
                "paddock serve: the token file %s must be a regular file readable by its owner "
                "alone (chmod 600); it is mode %03o\n",
                path, (unsigned)(st.st_mode & 0777));
        close(fd);
        return NULL;
    }
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    char *p = buf, *end = buf + strlen(buf);
    while (*p && isspace((unsigned char)*p))
        p++;
    while (end > p && isspace((unsigned char)end[-1]))
        *--end = '\0';
    if (!*p) {
        fprintf(stderr, "paddock serve: the token file %s is empty\n", path);
        return NULL;
    }
    return strdup(p);
}

/* A size from $env, else the config file's key: *out the bytes, -1 when neither is set (the
 * engine's default). 0, or -1 after printing why. */
static int serve_size(const struct config *cfg, const char *env, const char *key, const char *value,
                      long long *out)
{
    const char *from = getenv(env);
    if (from && *from)
        value = from;
    else
        from = NULL;
    *out = -1;
    if (!value)
        return 0;
    if ((*out = size_parse(value)) < 0) {
        fprintf(stderr, "paddock serve: %s: %s = \"%s\" is not a size (\"10g\", \"512m\")\n",
                from ? env : (cfg->path ? cfg->path : "config"), key, value);
        return -1;
    }
    return 0;
}

int cmd_serve(struct app *app, int argc, char **argv)
{
    static const struct option opts[] = {{"socket", required_argument, NULL, 's'},
                                         {"state-dir", required_argument, NULL, 'd'},
                                         {"pool", required_argument, NULL, 'p'},
                                         {"listen", required_argument, NULL, 'l'},
                                         {"token-file", required_argument, NULL, 't'},
                                         {"driver", required_argument, NULL, 'D'},
                                         {"tls-cert", required_argument, NULL, 'C'},
                                         {"tls-key", required_argument, NULL, 'K'},
                                         {"tls-client-ca", required_argument, NULL, 'A'},
                                         {"insecure", no_argument, NULL, 'I'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    /* flag > environment > config file > default */
    const struct config *cfg = &app->config;
    const char *sock = NULL, *state = NULL, *pool = getenv("PADDOCK_POOL");
    const char *listen = getenv("PADDOCK_LISTEN"), *token_file = cfg->token_file;
    const char *driver = getenv("PADDOCK_DRIVER");
    const char *tls_cert = cfg->tls_cert, *tls_key = cfg->tls_key, *tls_ca = cfg->tls_client_ca;
    bool insecure = false;
    if (!driver || !*driver)
        driver = cfg->driver;
    if (!pool)
        pool = cfg->pool;
    if (!listen)
        listen = cfg->listen;
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            sock = optarg;
            break;
        case 'd':
            state = optarg;
            break;
        case 'p':
            pool = optarg;
            break;
        case 'l':
            listen = optarg;
            break;
        case 't':
            token_file = optarg;
            break;
        case 'D':
            driver = optarg;
            break;
        case 'C':
            tls_cert = optarg;
            break;
        case 'K':
            tls_key = optarg;
            break;
        case 'A':
            tls_ca = optarg;
            break;
        case 'I':
            insecure = true;
            break;
        case 'h':
            app_command_help(stdout, "serve");
            return 0;
        default:
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "paddock serve: unexpected argument %s\n", argv[optind]);
        return 2;
    }
    char *token = NULL;
    if (token_file && !(token = serve_read_token(token_file)))
        return 1;
    if (!token && getenv("PADDOCK_TOKEN") && *getenv("PADDOCK_TOKEN"))
        token = strdup(getenv("PADDOCK_TOKEN"));
    const char *api_key = getenv("PADDOCK_API_KEY");
    char *exe = app_find_executor(app);
    const char *image = getenv("PADDOCK_IMAGE");
    if (!image || !*image)
        image = cfg->base_container_image;
    const char *confirm = getenv("PADDOCK_CONFIRM");
    if (!confirm || !*confirm)
        confirm = config_confirm(cfg);
    if (confirm && policy_parse(confirm) < 0) {
        fprintf(stderr, "paddock serve: %s: confirm = \"%s\" is not a policy (%s)\n",
                getenv("PADDOCK_CONFIRM") && *getenv("PADDOCK_CONFIRM")
                    ? "PADDOCK_CONFIRM"
                    : (cfg->path ? cfg->path : "config"),
                confirm, policy_names());
        free(exe);
        free(token);
        return 2;
    }
    /* [security]: the settings the file names, in step (the engine checks the values). */
    const char *sec_names[CONFIG_SECURITY_KEYS + 1] = {0},
                                                 *sec_values[CONFIG_SECURITY_KEYS + 1] = {0};
    for (size_t i = 0, n = 0; i < CONFIG_SECURITY_KEYS; i++)
        if (cfg->security[i]) {
            sec_names[n] = config_security_keys[i];
            sec_values[n++] = cfg->security[i];
        }
    long long disk_limit, disk_floor;
    if (serve_size(cfg, "PADDOCK_DISK_LIMIT", "disk_limit", cfg->disk_limit, &disk_limit) < 0 ||
        serve_size(cfg, "PADDOCK_DISK_FLOOR", "disk_floor", cfg->disk_floor, &disk_floor) < 0) {
        free(exe);
        free(token);
        return 2;
    }
    if (disk_limit == 0) {
        fprintf(stderr, "paddock serve: disk_limit must be a size of at least 64m\n");
        free(exe);
        free(token);
        return 2;
    }
    /* [egress.presets.NAME] as the engine takes them */
    struct engine_egress_preset *presets = calloc(cfg->negress_presets + 1, sizeof(*presets));
    if (!presets) {
        fprintf(stderr, "paddock serve: out of memory\n");
        free(exe);
        free(token);
        return 2;
    }
    for (size_t i = 0; i < cfg->negress_presets; i++)
        presets[i] = (struct engine_egress_preset){
            .name = cfg->egress_presets[i].name,
            .allow = (const char *const *)cfg->egress_presets[i].allow,
        };
    /* serve's own --state-dir moves the default agents' socket with it, as the operator's. */
    char *serve_sock =
        !sock && state && !app->agent_socket_given ? client_default_socket(state) : NULL;
    struct engine_options o = {
        .state_dir = state ? state : app->state_dir,
        .socket_path = sock         ? sock
                       : serve_sock ? serve_sock
                                    : app->agent_socket,
        .executor = exe,
        .image = image && *image ? image : "paddock/base:local",
        .pool = pool,
        .driver = driver && *driver ? driver : NULL,
        .local_enabled = cfg->local_enabled == 1,
        .local_unsandboxed = cfg->local_unsandboxed == 1,
        .local_user = cfg->local_user,
        .local_root = cfg->local_root,
        .local_bwrap = cfg->local_bwrap,
        .listen = listen && *listen ? listen : NULL,
        .token = token,
        .api_key = api_key && *api_key ? api_key : NULL,
        .tls_cert = tls_cert,
        .tls_key = tls_key,
        .tls_client_ca = tls_ca,
        .insecure = insecure,
        .confirm = confirm,
        .approval_timeout = cfg->approval_timeout,
        .enable_auto_lint = cfg->enable_auto_lint == 1,
        .retention_days = cfg->retention_days,
        .security_names = sec_names,
        .security_values = sec_values,
        .rule_ceiling = cfg->rule_ceiling,
        .allow = (const char *const *)cfg->allow,
        .deny = (const char *const *)cfg->deny,
        .egress_allow = (const char *const *)cfg->egress_allow,
        .egress_deny = (const char *const *)cfg->egress_deny,
        .egress_ask = cfg->egress_ask,
        .egress_presets = presets,
        .negress_presets = cfg->negress_presets,
        .disk_limit = disk_limit,
        .unsafe_bench = getenv("PADDOCK_UNSAFE_BENCH"),
        /* unset: the engine's default; "0": no floor */
        .disk_floor = disk_floor < 0    ? 0
                      : disk_floor == 0 ? -1
                                        : disk_floor,
        .on_ready = serve_on_ready,
    };
    o.ud = &o;
    char *err = NULL;
    int rc = engine_serve(&o, &err);
    if (rc < 0) {
        fprintf(stderr, "paddock serve: %s\n", err ? err : "failed");
        free(err);
    }
    free(serve_sock);
    free(presets);
    free(exe);
    free(token);
    return rc < 0 ? 1 : 0;
}
