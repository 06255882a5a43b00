/* Unit tests of engine/session_config.c and engine/mount_policy.c without Docker: the create
 * body with no option is exactly the hardened default, each option lands in the right field,
 * sizes parse, the stored form never holds the git token, the mount policy resolves symlinks. */
#include "engine/engine_internal.h"
#include "engine/mount_policy.h"
#include "engine/session.h"
#include "engine/session_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp[] = "/tmp/paddock-unit-cfg-XXXXXX";
static char state_dir[128], executor[128];
static struct engine eng;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    remove(path);
    return 0;
}

static int setup(void **state)
{
    if (!mkdtemp(tmp))
        return -1;
    snprintf(state_dir, sizeof(state_dir), "%s/state", tmp);
    snprintf(executor, sizeof(executor), "%s/bin/paddock-executor", tmp);
    mkdir(state_dir, 0700);
    unsetenv("PADDOCK_TEST_LABEL");
    unsetenv("PADDOCK_VOLUME_ALLOW");
    eng.state_dir = state_dir;
    eng.executor_path = executor;
    eng.engine_id = "0123456789abcdef";
    eng.default_image = "paddock/base:local";
    eng.seccomp_opt = "seccomp=PROFILE"; /* the profile itself: test_seccomp.c */
    return 0;
}

static int teardown(void **state)
{
    nftw(tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

static struct session_config *parse_ok(const char *text)
{
    json_error_t e;
    json_t *opts = json_loads(text, 0, &e);
    assert_non_null(opts);
    struct session_config *c = NULL;
    struct session_result bad = {0};
    int rc = session_config_parse(&eng, opts, &c, &bad);
    if (rc < 0)
        fprintf(stderr, "%s → %s\n", text, bad.message);
    assert_int_equal(rc, 0);
    json_decref(opts);
    return c;
}

static const char *parse_bad(const char *text)
{
    json_t *opts = json_loads(text, 0, NULL);
    assert_non_null(opts);
    struct session_config *c = NULL;
    struct session_result bad = {0};
    assert_int_equal(session_config_parse(&eng, opts, &c, &bad), -1);
    assert_null(c);
    assert_int_equal(bad.status, 400);
    assert_int_equal(bad.err, ERR_BAD_REQUEST);
    json_decref(opts);
    return bad.message;
}

/* The body paddock sent before options existed (docs/architecture.md "Hardened container"). */
static const char *const golden_default =
    "{\"Image\": \"paddock/base:local\", \"Entrypoint\": [\"/opt/paddock/paddock-executor\"],"
    " \"Cmd\": [\"--socket\", \"/run/paddock/executor.sock\", \"--working-dir\", \"/workspace\","
    "  \"--user-id\", \"1000\", \"--username\", \"agent\", \"--user-db\", \"/etc\","
    "  \"--own-working-dir\", \"--plugins\", \"ipython\"],"
    " \"Env\": [\"LANG=C.UTF-8\"],"
    " \"Labels\": {\"paddock.session\": \"s1\", \"paddock.engine\": \"0123456789abcdef\"},"
    " \"User\": \"0:0\", \"WorkingDir\": \"/\", \"StopTimeout\": 5,"
    " \"HostConfig\": {\"CapDrop\": [\"ALL\"], \"CapAdd\": [\"CHOWN\", \"SETUID\", \"SETGID\","
    "  \"KILL\"], \"SecurityOpt\": [\"no-new-privileges\", \"seccomp=PROFILE\"], \"PidsLimit\": "
    "512,"
    "  \"Memory\": 2147483648, \"MemorySwap\": 2147483648, \"NanoCpus\": 2000000000,"
    "  \"NetworkMode\": \"none\", \"Init\": true, \"IpcMode\": \"private\", \"ShmSize\": 67108864,"
    "  \"LogConfig\": {\"Type\": \"json-file\", \"Config\": {\"max-size\": \"10m\","
    "  \"max-file\": \"1\"}}, \"RestartPolicy\": {\"Name\": \"no\"},"
    "  \"Mounts\": [{\"Type\": \"bind\", \"Source\": \"EXECUTOR\", \"Target\":"
    "  \"/opt/paddock/paddock-executor\", \"ReadOnly\": true}, {\"Type\": \"bind\", \"Source\":"
    "  \"/sock/dir\", \"Target\": \"/run/paddock\", \"ReadOnly\": false}],"
    "  \"Ulimits\": [{\"Name\": \"nofile\", \"Soft\": 8192, \"Hard\": 8192}, {\"Name\": \"core\","
    "  \"Soft\": 0, \"Hard\": 0}]}}";

static void test_default_body_unchanged(void **state)
{
    struct session_config *c = parse_ok("{}");
    json_t *body = session_config_container(&eng, c, "s1", "/sock/dir");
    json_t *want = json_loads(golden_default, 0, NULL);
    assert_non_null(want);
    json_object_set_new(
        json_array_get(json_object_get(json_object_get(want, "HostConfig"), "Mounts"), 0), "Source",
        json_string(executor));
    if (!json_equal(body, want)) {
        char *a = json_dumps(body, JSON_SORT_KEYS | JSON_INDENT(1));
        fprintf(stderr, "body:\n%s\n", a);
        free(a);
    }
    assert_true(json_equal(body, want));
    /* Never sent, never empty. */
    assert_null(json_object_get(json_object_get(body, "HostConfig"), "MaskedPaths"));
    assert_null(json_object_get(json_object_get(body, "HostConfig"), "ReadonlyPaths"));
    json_decref(want);
    json_decref(body);
    session_config_free(c);
}

static void test_sizes(void **state)
{
    static const struct {
        const char *text;
        long long bytes;
    } cases[] = {
        {"536870912", 536870912LL}, {"\"512m\"", 512LL << 20},    {"\"512M\"", 512LL << 20},
        {"\"2g\"", 2LL << 30},      {"\"2GB\"", 2LL << 30},       {"\"65536k\"", 64LL << 20},
        {"\"1t\"", 1LL << 40},      {"\"40000000\"", 40000000LL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[128];
        snprintf(text, sizeof(text), "{\"limits\": {\"memory\": %s}}", cases[i].text);
        struct session_config *c = parse_ok(text);
        assert_int_equal(c->memory, cases[i].bytes);
        session_config_free(c);
    }
    static const char *const bad[] = {"\"\"",     "\"m\"",   "\"12x\"",
                                      "\"1.5g\"", "\"-1g\"", "\"9999999999999t\"",
                                      "true",     "[1]",     "1.5"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char text[128];
        snprintf(text, sizeof(text), "{\"limits\": {\"memory\": %s}}", bad[i]);
        assert_non_null(strstr(parse_bad(text), "\"limits.memory\" must be bytes"));
    }
}

static json_t *hc(json_t *body)
{
    return json_object_get(body, "HostConfig");
}

static void test_options_in_body(void **state)
{
    char dir[256], text[2048];
    snprintf(dir, sizeof(dir), "%s/data", tmp);
    mkdir(dir, 0755);
    snprintf(text, sizeof(text),
             "{\"limits\": {\"cpus\": 1.5, \"memory\": \"1g\", \"pids\": 100, \"disk\": \"10g\"},"
             " \"network\": \"bridge\", \"gpus\": \"all\", \"ports\": [8080, \"53/udp\"],"
             " \"read_only\": true, \"runtime\": \"runsc\", \"keep_alive\": true,"
             " \"volumes\": [{\"source\": \"%s/../data\", \"target\": \"/data\", \"read_only\":"
             " true}, {\"source\": \"cache\", \"target\": \"/cache\"}],"
             " \"workspace\": {\"source\": \"%s\", \"mode\": \"overlay\"}}",
             dir, dir);
    setenv("PADDOCK_TEST_LABEL", "1", 1);
    struct session_config *c = parse_ok(text);
    assert_true(c->disk_asked);
    assert_int_equal(c->disk, 10LL << 30);
    /* Docker's StorageOpt only where the driver has quotas (session_prepare.c decides);
     * elsewhere the disk watchdog alone enforces the limit. */
    json_t *b = session_config_container(&eng, c, "s2", "/sock/dir");
    assert_null(json_object_get(hc(b), "StorageOpt"));
    json_decref(b);
    c->disk_quota = true;
    b = session_config_container(&eng, c, "s2", "/sock/dir");
    unsetenv("PADDOCK_TEST_LABEL");
    json_t *h = hc(b);
    assert_int_equal(json_integer_value(json_object_get(h, "NanoCpus")), 1500000000LL);
    assert_int_equal(json_integer_value(json_object_get(h, "Memory")), 1LL << 30);
    assert_int_equal(json_integer_value(json_object_get(h, "MemorySwap")), 1LL << 30);
    assert_int_equal(json_integer_value(json_object_get(h, "PidsLimit")), 100);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(h, "StorageOpt"), "size")),
        "10737418240");
    assert_string_equal(json_string_value(json_object_get(h, "NetworkMode")), "bridge");
    assert_string_equal(json_string_value(json_object_get(h, "Runtime")), "runsc");
    assert_true(json_is_true(json_object_get(h, "ReadonlyRootfs")));
    assert_null(json_object_get(h, "MaskedPaths"));
    assert_null(json_object_get(h, "ReadonlyPaths"));
    assert_null(json_object_get(h, "Binds"));
    assert_non_null(strstr(json_string_value(json_object_get(json_object_get(h, "Tmpfs"), "/tmp")),
                           "size=536870912"));
    json_t *want_dr =
        json_loads("[{\"Driver\": \"\", \"Count\": -1, \"Capabilities\": [[\"gpu\"]]}]", 0, NULL);
    assert_true(json_equal(json_object_get(h, "DeviceRequests"), want_dr));
    json_decref(want_dr);
    json_t *want_pb = json_loads("{\"8080/tcp\": [{\"HostIp\": \"127.0.0.1\", \"HostPort\": \"\"}],"
                                 " \"53/udp\": [{\"HostIp\": \"127.0.0.1\", \"HostPort\": \"\"}]}",
                                 0, NULL);
    assert_true(json_equal(json_object_get(h, "PortBindings"), want_pb));
    json_decref(want_pb);
    assert_int_equal(json_object_size(json_object_get(b, "ExposedPorts")), 2);
    /* Executor, socket dir, overlay workspace, the volumes in order, then /etc: a copy the
     * executor can name the agent in (the root is read-only). */
    json_t *m = json_object_get(h, "Mounts");
    assert_int_equal(json_array_size(m), 6);
    json_t *etc = json_array_get(m, 5);
    assert_string_equal(json_string_value(json_object_get(etc, "Target")), "/etc");
    assert_string_equal(json_string_value(json_object_get(etc, "Type")), "volume");
    assert_null(json_object_get(etc, "Source"));
    json_t *ws = json_array_get(m, 2);
    assert_string_equal(json_string_value(json_object_get(ws, "Target")), "/workspace");
    assert_string_equal(json_string_value(json_object_get(ws, "Type")), "volume");
    assert_null(json_object_get(ws, "Source")); /* anonymous: removed with the container */
    json_t *vo = json_object_get(ws, "VolumeOptions");
    assert_true(json_is_true(json_object_get(vo, "NoCopy")));
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(vo, "Labels"), "paddock.session")), "s2");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(vo, "Labels"), "paddock.test")), "1");
    char want_o[1024];
    snprintf(want_o, sizeof(want_o),
             "lowerdir=%s,upperdir=%s/work/s2/upper,workdir=%s/work/s2/work", dir, state_dir,
             state_dir);
    json_t *opts = json_object_get(json_object_get(vo, "DriverConfig"), "Options");
    assert_string_equal(json_string_value(json_object_get(opts, "o")), want_o);
    assert_string_equal(json_string_value(json_object_get(opts, "type")), "overlay");
    json_t *v0 = json_array_get(m, 3);
    assert_string_equal(json_string_value(json_object_get(v0, "Source")), dir); /* resolved */
    assert_true(json_is_true(json_object_get(v0, "ReadOnly")));
    assert_true(json_is_true(json_object_get(json_object_get(v0, "BindOptions"), "NonRecursive")));
    json_t *v1 = json_array_get(m, 4);
    assert_string_equal(json_string_value(json_object_get(v1, "Type")), "volume");
    assert_string_equal(json_string_value(json_object_get(v1, "Source")), "cache");
    /* The agent's HOME moves to the tmpfs. */
    json_t *cmd = json_object_get(b, "Cmd");
    assert_string_equal(json_string_value(json_array_get(cmd, json_array_size(cmd) - 1)),
                        "/tmp/home");
    json_decref(b);

    json_t *st = session_config_stored(c, &eng, "s2", "img");
    assert_true(json_is_true(json_object_get(json_object_get(st, "options"), "keep_alive")));
    json_decref(st);
    session_config_free(c);

    /* GPUs by count and by id. */
    c = parse_ok("{\"gpus\": 2}");
    b = session_config_container(&eng, c, "s3", "/sock/dir");
    json_t *dr = json_array_get(json_object_get(hc(b), "DeviceRequests"), 0);
    assert_int_equal(json_integer_value(json_object_get(dr, "Count")), 2);
    json_decref(b);
    session_config_free(c);
    c = parse_ok("{\"gpus\": [\"GPU-1\", \"0\"]}");
    b = session_config_container(&eng, c, "s3", "/sock/dir");
    dr = json_array_get(json_object_get(hc(b), "DeviceRequests"), 0);
    assert_int_equal(json_array_size(json_object_get(dr, "DeviceIDs")), 2);
    assert_null(json_object_get(dr, "Count"));
    json_decref(b);
    session_config_free(c);
}

static void test_git_token_never_stored(void **state)
{
    const char *token = "s3cr3t-token-value";
    struct session_config *c =
        parse_ok("{\"git\": {\"url\": \"https://example.invalid/r.git\", \"token\": "
                 "\"s3cr3t-token-value\", \"ref\": \"v1.2\"}}");
    assert_int_equal(c->ws, SESSION_WS_CLONE);
    json_t *st = session_config_stored(c, &eng, "s4", "img");
    char *dump = json_dumps(st, JSON_COMPACT);
    assert_null(strstr(dump, token));
    assert_non_null(strstr(dump, "\"token\":true"));
    assert_non_null(strstr(dump, "\"ref\":\"v1.2\""));
    free(dump);
    json_decref(st);
    json_t *b = session_config_container(&eng, c, "s4", "/sock/dir");
    dump = json_dumps(b, JSON_COMPACT);
    assert_null(strstr(dump, token));
    free(dump);
    json_decref(b);
    session_config_free(c);
}

/* env values never reach the stored config; credential-named ones are withheld from the
 * container unless env_allow names them, and the executor is told which it lets through. */
static void test_env_names_only(void **state)
{
    struct session_config *c = parse_ok(
        "{\"env\": {\"FOO\": \"bar-value\", \"GITHUB_TOKEN\": \"tok-value\", \"NPM_AUTH\": "
        "\"npm-value\"}, \"env_allow\": [\"NPM_AUTH\"]}");
    json_t *st = session_config_stored(c, &eng, "s5", "img");
    char *dump = json_dumps(st, JSON_COMPACT);
    assert_null(strstr(dump, "-value"));
    assert_non_null(strstr(dump, "\"env\":[\"FOO\",\"NPM_AUTH\"]"));
    assert_non_null(strstr(dump, "\"withheld_env\":[{\"name\":\"GITHUB_TOKEN\""));
    free(dump);
    json_decref(st);
    json_t *b = session_config_container(&eng, c, "s5", "/sock/dir");
    dump = json_dumps(json_object_get(b, "Env"), JSON_COMPACT);
    assert_string_equal(dump, "[\"LANG=C.UTF-8\",\"PADDOCK_ENV_ALLOW=NPM_AUTH\",\"FOO=bar-value\","
                              "\"NPM_AUTH=npm-value\"]");
    free(dump);
    json_decref(b);
    session_config_free(c);
    assert_non_null(
        strstr(parse_bad("{\"env\": {}, \"env_allow\": [\"GITHUB_TOKEN\"]}"), "does not set"));
    assert_non_null(strstr(parse_bad("{\"env_allow\": \"GITHUB_TOKEN\"}"), "env_allow"));
}

/* The workspace type's and the network mode's text in the stored config: every value round
 * trips, others are refused. */
static void test_ws_names(void **state)
{
    const char *names[] = {"image", "bind", "volume", "overlay", "clone"};
    assert_int_equal(sizeof(names) / sizeof(names[0]), SESSION_WS_COUNT);
    for (int i = 0; i < SESSION_WS_COUNT; i++) {
        enum session_ws ws = SESSION_WS_COUNT;
        assert_string_equal(session_ws_name((enum session_ws)i), names[i]);
        assert_int_equal(session_ws_parse(names[i], &ws), 0);
        assert_int_equal(ws, i);
    }
    enum session_ws ws = SESSION_WS_CLONE;
    assert_int_equal(session_ws_parse("tmpfs", &ws), -1);
    assert_int_equal(session_ws_parse("Bind", &ws), -1);
    assert_int_equal(session_ws_parse(NULL, &ws), -1);
    assert_int_equal(ws, SESSION_WS_CLONE);
    assert_null(session_ws_name(SESSION_WS_COUNT));

    const char *nets[] = {"none", "bridge", "host", "egress"};
    assert_int_equal(sizeof(nets) / sizeof(nets[0]), SESSION_NET_COUNT);
    for (int i = 0; i < SESSION_NET_COUNT; i++) {
        enum session_net net = SESSION_NET_COUNT;
        assert_string_equal(session_net_name((enum session_net)i), nets[i]);
        assert_int_equal(session_net_parse(nets[i], &net), 0);
        assert_int_equal(net, i);
    }
    enum session_net net = SESSION_NET_HOST;
    assert_int_equal(session_net_parse("default", &net), -1);
    assert_int_equal(session_net_parse(NULL, &net), -1);
    assert_int_equal(net, SESSION_NET_HOST);
    assert_null(session_net_name(SESSION_NET_COUNT));
}

static void test_mount_policy(void **state)
{
    char base[256], p[512];
    snprintf(base, sizeof(base), "%s/mp", tmp);
    mkdir(base, 0755);
    snprintf(p, sizeof(p), "%s/ok", base);
    mkdir(p, 0755);
    char *resolved = NULL, *why = NULL;
    struct mount_id id = {0};
    assert_int_equal(mount_policy_check(&eng, p, true, &resolved, &id, &why), 0);
    assert_string_equal(resolved, p);
    free(resolved);
    /* What was checked is what a process whose root is ours sees there; another inode is not. */
    struct stat pst;
    assert_int_equal(stat(p, &pst), 0);
    assert_true(id.set && id.dev == pst.st_dev && id.ino == pst.st_ino);
    assert_int_equal(mount_policy_verify(getpid(), p, &id, &why), 0);
    struct mount_id other = id;
    other.ino++;
    assert_int_equal(mount_policy_verify(getpid(), p, &other, &why), -1);
    assert_non_null(strstr(why, "is not the directory that was checked"));
    free(why);
    why = NULL;

    /* A symlink loop, a link into the state dir, a file where a dir is wanted. */
    char a[512], b2[512];
    snprintf(a, sizeof(a), "%s/loop1", base);
    snprintf(b2, sizeof(b2), "%s/loop2", base);
    assert_int_equal(symlink(b2, a), 0);
    assert_int_equal(symlink(a, b2), 0);
    assert_int_equal(mount_policy_check(&eng, a, false, &resolved, NULL, &why), -1);
    assert_non_null(strstr(why, "Too many levels of symbolic links"));
    free(why);
    snprintf(a, sizeof(a), "%s/st", base);
    assert_int_equal(symlink(state_dir, a), 0);
    assert_int_equal(mount_policy_check(&eng, a, false, &resolved, NULL, &why), -1);
    assert_non_null(strstr(why, "the engine's state dir"));
    free(why);
    snprintf(a, sizeof(a), "%s/file", base);
    FILE *f = fopen(a, "w");
    fclose(f);
    assert_int_equal(mount_policy_check(&eng, a, true, &resolved, NULL, &why), -1);
    assert_non_null(strstr(why, "is not a directory"));
    free(why);
    assert_int_equal(mount_policy_check(&eng, a, false, &resolved, NULL, &why), 0);
    free(resolved);
    assert_int_equal(mount_policy_check(&eng, "relative/x", false, &resolved, NULL, &why), -1);
    assert_non_null(strstr(why, "not an absolute path"));
    free(why);

    /* The allowlist from the environment replaces the default. */
    setenv("PADDOCK_VOLUME_ALLOW", "/nonexistent-prefix:relative", 1);
    assert_int_equal(mount_policy_check(&eng, p, true, &resolved, NULL, &why), -1);
    assert_non_null(strstr(why, "is not inside an allowed prefix (none exists;"));
    free(why);
    setenv("PADDOCK_VOLUME_ALLOW", base, 1);
    assert_int_equal(mount_policy_check(&eng, p, true, &resolved, NULL, &why), 0);
    free(resolved);
    assert_int_equal(mount_policy_check(&eng, base, true, &resolved, NULL, &why),
                     -1); /* strictly in */
    free(why);
    unsetenv("PADDOCK_VOLUME_ALLOW");
}

/* plugins and the agent user reach the executor's command line and the stored options. */
static void test_plugins_and_user(void **state)
{
    struct session_config *c = parse_ok("{\"plugins\": [\"agent_skills\", \"jupyter\", "
                                        "\"jupyter\"], \"run_as_openhands\": true, "
                                        "\"user_id\": 1001}");
    json_t *b = session_config_container(&eng, c, "s1", "/sock/dir");
    json_t *want = json_loads("[\"--socket\", \"/run/paddock/executor.sock\", \"--working-dir\", "
                              "\"/workspace\", \"--user-id\", \"1001\", \"--username\", "
                              "\"openhands\", \"--user-db\", \"/etc\", \"--own-working-dir\", "
                              "\"--plugins\", \"agent_skills\", \"jupyter\", "
                              "\"--home\", \"/home/openhands\"]",
                              0, NULL);
    assert_true(json_equal(json_object_get(b, "Cmd"), want));
    json_decref(want);
    json_decref(b);
    json_t *st = session_config_stored(c, &eng, "s1", "img");
    json_t *o = json_object_get(st, "options");
    assert_int_equal(json_array_size(json_object_get(o, "plugins")), 2);
    assert_string_equal(json_string_value(json_object_get(o, "user")), "openhands");
    assert_int_equal(json_integer_value(json_object_get(o, "user_id")), 1001);
    json_decref(st);
    session_config_free(c);

    c = parse_ok("{\"plugins\": [], \"run_as_openhands\": false, \"user_id\": 1001}");
    b = session_config_container(&eng, c, "s1", "/sock/dir");
    want = json_loads("[\"--socket\", \"/run/paddock/executor.sock\", \"--working-dir\", "
                      "\"/workspace\", \"--user-id\", \"0\", \"--username\", \"root\"]",
                      0, NULL);
    assert_true(json_equal(json_object_get(b, "Cmd"), want));
    json_decref(want);
    json_decref(b);
    session_config_free(c);

    assert_non_null(strstr(parse_bad("{\"plugins\": [\"vscode\"]}"), "vscode is not available"));
    assert_non_null(strstr(parse_bad("{\"plugins\": [\"x\"]}"), "unknown plugin \"x\""));
    assert_non_null(strstr(parse_bad("{\"user_id\": 70000}"), "\"user_id\" must be"));
    assert_non_null(strstr(parse_bad("{\"run_as_openhands\": \"yes\"}"), "true or false"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_body_unchanged),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_options_in_body),
        cmocka_unit_test(test_git_token_never_stored),
        cmocka_unit_test(test_env_names_only),
        cmocka_unit_test(test_ws_names),
        cmocka_unit_test(test_mount_policy),
        cmocka_unit_test(test_plugins_and_user),
    };
    return cmocka_run_group_tests_name("session_config", tests, setup, teardown);
}
