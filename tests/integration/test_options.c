/* Integration tests of the per-session options of POST /v1/sessions against the real Docker
 * daemon: every option read back from `docker inspect` (or from inside the sandbox), every
 * refusal a 400 naming the field and why, the default hardening unchanged, the mount policy
 * (deny/allow, symlinks, sockets), read-only root, overlay workspaces, loopback-only ports,
 * and the git clone whose token appears nowhere (argv, store, log, replies). No packet leaves
 * loopback: bridge/host networks and GPUs are checked as configuration only. */
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define AGENT_UID 1000
#define MAX_TMP 32

/* ---- helpers ---- */

static char *tmp_dirs[MAX_TMP];
static int n_tmp;

/* A fresh directory under base ("/tmp", "/var/tmp"), removed at teardown. */
static char *tmpdir_in(const char *base)
{
    char *t = strdupf("%s/paddock-opt-XXXXXX", base);
    assert_non_null(mkdtemp(t));
    assert_true(n_tmp < MAX_TMP);
    tmp_dirs[n_tmp++] = t;
    return t;
}

static char *tmpdir(void)
{
    return tmpdir_in("/tmp");
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    remove(path);
    return 0;
}

static int group_teardown(void **state)
{
    for (int i = 0; i < n_tmp; i++) {
        nftw(tmp_dirs[i], rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        free(tmp_dirs[i]);
    }
    n_tmp = 0;
    return harness_group_teardown_clean(state);
}

/* /bin/sh -c CMD (printf-style), asserting exit 0; returns stdout (caller frees). */
static char *sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *sh(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *cmd = NULL;
    assert_true(vasprintf(&cmd, fmt, ap) >= 0);
    va_end(ap);
    char *argv[] = {"/bin/sh", "-c", cmd, NULL};
    struct proc_result r;
    proc_run(argv, NULL, 60000, &r);
    if (r.status != 0)
        fprintf(stderr, "`%s` → %d\nstdout: %s\nstderr: %s\n", cmd, r.status, r.out, r.err);
    assert_int_equal(r.status, 0);
    free(cmd);
    free(r.err);
    return r.out;
}

static json_t *inspect(const char *cid)
{
    char *path = strdupf("/v1.41/containers/%s/json", cid);
    struct reply r;
    docker("GET", path, &r);
    free(path);
    assert_int_equal(r.status, 200);
    json_t *j = json_incref(r.json);
    reply_free(&r);
    return j;
}

/* The run action's output, trailing newlines kept as the executor gives them. */
static char *run_out(struct engine_proc *e, const char *id, const char *command)
{
    json_t *obs = session_run(e, id, command);
    const char *c = jstr(obs, "content");
    char *out = strdup(c ? c : "");
    json_decref(obs);
    return out;
}

static void run_expect(struct engine_proc *e, const char *id, const char *command, const char *want)
{
    char *out = run_out(e, id, command);
    if (strcmp(out, want) != 0)
        fprintf(stderr, "`%s` printed \"%s\", want \"%s\"\n", command, out, want);
    assert_string_equal(out, want);
    free(out);
}

/* POST /v1/sessions must be refused with status/code and a message containing want. */
static void refuse_on(struct engine_proc *e, const char *body, long status, const char *code,
                      const char *want)
{
    struct reply r;
    api(e, "POST", "/v1/sessions", body, &r);
    const char *msg = jstr(r.json, "error.message");
    bool ok = r.status == status && msg && strstr(msg, want) &&
              (!code || (jstr(r.json, "error.code") && !strcmp(jstr(r.json, "error.code"), code)));
    if (!ok)
        fprintf(stderr, "POST /v1/sessions %s → HTTP %ld %s\n  (want %ld %s with \"%s\")\n", body,
                r.status, r.body ? r.body : r.err, status, code ? code : "", want);
    if (r.status == 201)
        engine_track(e, jstr(r.json, "id"));
    assert_true(ok);
    reply_free(&r);
}

static void refuse(const char *body, const char *want)
{
    refuse_on(harness_eng, body, 400, "bad_request", want);
}

static json_t *hc_of(json_t *c)
{
    return json_object_get(c, "HostConfig");
}

static json_int_t hc_int(json_t *c, const char *field)
{
    json_t *v = json_object_get(hc_of(c), field);
    assert_true(json_is_integer(v));
    return json_integer_value(v);
}

/* The container's mount (inspect's "Mounts") at dest, or NULL. */
static json_t *mount_at(json_t *c, const char *dest)
{
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(c, "Mounts"), i, m)
    {
        if (jstr(m, "Destination") && strcmp(jstr(m, "Destination"), dest) == 0)
            return m;
    }
    return NULL;
}

/* The requested mount (HostConfig.Mounts) at target, or NULL. */
static json_t *hc_mount_at(json_t *c, const char *target)
{
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(hc_of(c), "Mounts"), i, m)
    {
        if (jstr(m, "Target") && strcmp(jstr(m, "Target"), target) == 0)
            return m;
    }
    return NULL;
}

static size_t volumes_of_session(const char *id)
{
    char *path = strdupf("/v1.41/volumes?filters=%%7B%%22label%%22%%3A%%5B%%22paddock.session%%3D%s"
                         "%%22%%5D%%7D",
                         id);
    struct reply r;
    docker("GET", path, &r);
    free(path);
    assert_int_equal(r.status, 200);
    size_t n = json_array_size(json_object_get(r.json, "Volumes"));
    reply_free(&r);
    return n;
}

static void volume_remove(const char *name)
{
    char *path = strdupf("/v1.41/volumes/%s", name);
    struct reply r;
    docker("DELETE", path, &r);
    free(path);
    if (r.status != 204 && r.status != 404)
        fprintf(stderr, "DELETE volume %s → %ld %s\n", name, r.status, r.body);
    assert_true(r.status == 204 || r.status == 404);
    reply_free(&r);
}

static size_t sessions_count(struct engine_proc *e)
{
    struct reply r;
    api(e, "GET", "/v1/sessions?all=1", NULL, &r);
    assert_int_equal(r.status, 200);
    size_t n = json_array_size(json_object_get(r.json, "sessions"));
    reply_free(&r);
    return n;
}

static char *random_hex(int nbytes)
{
    unsigned char b[32];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0 && nbytes <= 32 && read(fd, b, (size_t)nbytes) == nbytes);
    close(fd);
    char *s = malloc((size_t)nbytes * 2 + 1);
    for (int i = 0; i < nbytes; i++)
        sprintf(s + 2 * i, "%02x", b[i]);
    return s;
}

/* ---- 1. no option: the hardened defaults, exactly ---- */

static void test_defaults_unchanged(void **state)
{
    json_t *s = session_new(harness_eng, NULL);
    json_t *c = inspect(jstr(s, "container_id"));
    json_t *hc = hc_of(c);
    assert_int_equal(hc_int(c, "PidsLimit"), 512);
    assert_int_equal(hc_int(c, "Memory"), 2LL * 1024 * 1024 * 1024);
    assert_int_equal(hc_int(c, "MemorySwap"), 2LL * 1024 * 1024 * 1024);
    assert_int_equal(hc_int(c, "NanoCpus"), 2000000000LL);
    assert_string_equal(jstr(hc, "NetworkMode"), "none");
    assert_true(json_is_false(json_object_get(hc, "ReadonlyRootfs")));
    assert_true(json_object_size(json_object_get(hc, "Tmpfs")) == 0);
    assert_true(json_object_size(json_object_get(hc, "PortBindings")) == 0);
    assert_true(json_array_size(json_object_get(hc, "DeviceRequests")) == 0);
    assert_true(json_object_size(json_object_get(hc, "StorageOpt")) == 0);
    assert_true(json_array_size(json_object_get(hc, "Binds")) == 0);
    const char *rt = jstr(hc, "Runtime");
    assert_true(!rt || strcmp(rt, "runc") == 0);
    /* Only the executor and the socket dir. */
    assert_int_equal(json_array_size(json_object_get(hc, "Mounts")), 2);
    assert_non_null(hc_mount_at(c, "/opt/paddock/paddock-executor"));
    assert_non_null(hc_mount_at(c, "/run/paddock"));
    assert_true(json_array_size(json_object_get(hc, "MaskedPaths")) > 0);
    assert_true(json_array_size(json_object_get(hc, "ReadonlyPaths")) > 0);
    assert_true(json_object_size(jpath(c, "Config.ExposedPorts")) == 0);
    json_t *cmd = jpath(c, "Config.Cmd");
    /* --username agent, --user-db /etc, --own-working-dir; no --home. */
    assert_int_equal(json_array_size(cmd), 13);
    assert_string_equal(json_string_value(json_array_get(cmd, 9)), "/etc");
    /* The session object shows the effective options. */
    assert_int_equal(json_integer_value(jpath(s, "options.limits.memory")),
                     2LL * 1024 * 1024 * 1024);
    assert_int_equal(json_integer_value(jpath(s, "options.limits.pids")), 512);
    assert_true(json_number_value(jpath(s, "options.limits.cpus")) == 2.0);
    assert_string_equal(jstr(s, "options.network"), "none");
    assert_true(json_is_false(jpath(s, "options.read_only")));
    assert_true(json_is_true(jpath(s, "options.keep_alive"))); /* sessions outlive the engine */
    assert_null(jpath(s, "options.workspace"));
    assert_true(json_is_array(json_object_get(s, "ports")));
    assert_int_equal(json_array_size(json_object_get(s, "ports")), 0);
    json_decref(c);
    session_delete(harness_eng, jstr(s, "id"));
    json_decref(s);
}

/* ---- 2. limits ---- */

static void test_limits(void **state)
{
    json_t *s = session_new(harness_eng,
                            "{\"limits\": {\"cpus\": 0.5, \"memory\": \"256m\", \"pids\": 64}}");
    const char *id = jstr(s, "id");
    json_t *c = inspect(jstr(s, "container_id"));
    assert_int_equal(hc_int(c, "NanoCpus"), 500000000LL);
    assert_int_equal(hc_int(c, "Memory"), 256LL * 1024 * 1024);
    assert_int_equal(hc_int(c, "MemorySwap"), 256LL * 1024 * 1024);
    assert_int_equal(hc_int(c, "PidsLimit"), 64);
    /* The kernel enforces them: read the cgroup from inside (v2 or v1 layout). */
    run_expect(harness_eng, id,
               "cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max", "64");
    run_expect(harness_eng, id,
               "cat /sys/fs/cgroup/memory.max 2>/dev/null || "
               "cat /sys/fs/cgroup/memory/memory.limit_in_bytes",
               "268435456");
    assert_int_equal(json_integer_value(jpath(s, "options.limits.memory")), 268435456);
    json_decref(c);
    session_delete(harness_eng, id);
    json_decref(s);

    /* Bytes as an integer, and units with a trailing b. */
    s = session_new(harness_eng, "{\"limits\": {\"memory\": 134217728, \"cpus\": 1}}");
    c = inspect(jstr(s, "container_id"));
    assert_int_equal(hc_int(c, "Memory"), 134217728);
    assert_int_equal(hc_int(c, "NanoCpus"), 1000000000LL);
    json_decref(c);
    session_delete(harness_eng, jstr(s, "id"));
    json_decref(s);
    /* More CPUs than the host has: Docker's own refusal, passed on as a 400. */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu > 0 && ncpu < 1024)
        refuse("{\"limits\": {\"cpus\": 1024}}", "Docker refused the configuration: ");
    s = session_new(harness_eng, "{\"limits\": {\"memory\": \"1GB\"}}");
    c = inspect(jstr(s, "container_id"));
    assert_int_equal(hc_int(c, "Memory"), 1LL << 30);
    json_decref(c);
    session_delete(harness_eng, jstr(s, "id"));
    json_decref(s);
}

static void test_disk(void **state)
{
    struct reply r;
    docker("GET", "/v1.41/info", &r);
    assert_int_equal(r.status, 200);
    const char *driver = jstr(r.json, "Driver");
    const char *backing = NULL;
    size_t i;
    json_t *kv;
    json_array_foreach(json_object_get(r.json, "DriverStatus"), i, kv)
    {
        if (!strcmp(json_string_value(json_array_get(kv, 0)), "Backing Filesystem"))
            backing = json_string_value(json_array_get(kv, 1));
    }
    bool supported =
        driver && (strcmp(driver, "btrfs") == 0 || strcmp(driver, "zfs") == 0 ||
                   (strcmp(driver, "overlay2") == 0 && backing && strcmp(backing, "xfs") == 0));
    /* Every session has a limit: limits.disk, else the engine's default (10 GiB). Docker's
     * StorageOpt is added only where the driver has quotas; elsewhere the disk watchdog
     * enforces it (tests/integration/test_disk.c). */
    json_t *s = session_new(harness_eng, "{\"limits\": {\"disk\": \"1g\"}}");
    assert_int_equal(json_integer_value(jpath(s, "options.limits.disk")), 1LL << 30);
    json_t *c = inspect(jstr(s, "container_id"));
    if (supported)
        assert_string_equal(jstr(c, "HostConfig.StorageOpt.size"), "1073741824");
    else
        assert_null(jpath(c, "HostConfig.StorageOpt.size"));
    json_decref(c);
    session_delete(harness_eng, jstr(s, "id"));
    json_decref(s);
    s = session_new(harness_eng, NULL);
    assert_int_equal(json_integer_value(jpath(s, "options.limits.disk")), 10LL << 30);
    session_delete(harness_eng, jstr(s, "id"));
    json_decref(s);
    reply_free(&r);
}

/* ---- 3. refusals that need no daemon: 400, the field, why, and no session row ---- */

static void test_refusals(void **state)
{
    static const char *const cases[][2] = {
        {"{\"bogus\": 1}", "unknown field \"bogus\""},
        {"{\"limits\": 5}", "\"limits\" must be an object"},
        {"{\"limits\": {\"foo\": 1}}", "unknown field \"limits.foo\""},
        {"{\"limits\": {\"cpus\": 0}}", "\"limits.cpus\" must be a number"},
        {"{\"limits\": {\"cpus\": \"2\"}}", "\"limits.cpus\" must be a number"},
        {"{\"limits\": {\"memory\": \"lots\"}}", "\"limits.memory\" must be bytes"},
        {"{\"limits\": {\"memory\": -5}}", "\"limits.memory\" must be bytes"},
        {"{\"limits\": {\"memory\": \"99999999999t\"}}", "\"limits.memory\" must be bytes"},
        {"{\"limits\": {\"memory\": \"1m\"}}", "\"limits.memory\" must be at least 32m"},
        {"{\"limits\": {\"pids\": 1}}", "\"limits.pids\" must be an integer from 16"},
        {"{\"limits\": {\"pids\": 1.5}}", "\"limits.pids\" must be an integer"},
        {"{\"limits\": {\"disk\": \"x\"}}", "\"limits.disk\" must be bytes"},
        {"{\"network\": \"wifi\"}", "\"network\" must be \"none\""},
        {"{\"network\": 1}", "\"network\" must be \"none\""},
        {"{\"gpus\": 0}", "\"gpus\" must be \"all\""},
        {"{\"gpus\": \"some\"}", "\"gpus\" must be \"all\""},
        {"{\"gpus\": [1]}", "\"gpus[0]\" must be a device id"},
        {"{\"ports\": \"8080\"}", "\"ports\" must be an array"},
        {"{\"ports\": [8080]}", "\"ports\" needs \"network\": \"bridge\""},
        {"{\"network\": \"host\", \"ports\": [80]}", "the container's ports are the host's"},
        {"{\"network\": \"bridge\", \"ports\": [0]}", "\"ports[0]\" must be a port"},
        {"{\"network\": \"bridge\", \"ports\": [\"80/icmp\"]}", "\"ports[0]\" must be a port"},
        {"{\"network\": \"bridge\", \"ports\": [80, \"80/tcp\"]}", "\"ports[1]\" repeats 80/tcp"},
        {"{\"volumes\": {}}", "\"volumes\" must be an array"},
        {"{\"volumes\": [5]}", "\"volumes[0]\" must be an object"},
        {"{\"volumes\": [{\"source\": \"v1\", \"target\": \"/x\", \"foo\": 1}]}",
         "unknown field \"volumes[0].foo\""},
        {"{\"volumes\": [{\"target\": \"/x\"}]}", "\"volumes[0].source\" must be"},
        {"{\"volumes\": [{\"source\": \"./data\", \"target\": \"/x\"}]}",
         "\"volumes[0].source\" must be an absolute host path or a volume name"},
        {"{\"volumes\": [{\"source\": \"v1\", \"target\": \"x\"}]}",
         "\"volumes[0].target\" must be an absolute container path"},
        {"{\"volumes\": [{\"source\": \"v1\", \"target\": \"/\"}]}", "must not be /"},
        {"{\"volumes\": [{\"source\": \"v1\", \"target\": \"/workspace\"}]}",
         "use \"workspace\" for /workspace"},
        {"{\"volumes\": [{\"source\": \"v1\", \"target\": \"/run/paddock/x\"}]}",
         "the engine's executor lives there"},
        {"{\"volumes\": [{\"source\": \"v1\", \"target\": \"/proc/x\"}]}", "a kernel filesystem"},
        {"{\"volumes\": [{\"source\": \"v1\", \"target\": \"/a/../b\"}]}",
         "must be a normalised path"},
        {"{\"volumes\": [{\"source\": \"v1\", \"target\": \"/a\"}, {\"source\": \"v2\", "
         "\"target\": \"/a\"}]}",
         "\"volumes[1].target\" /a is mounted twice"},
        {"{\"volumes\": [{\"source\": \"v1\", \"target\": \"/a\", \"read_only\": \"yes\"}]}",
         "\"volumes[0].read_only\" must be true or false"},
        {"{\"read_only\": true, \"volumes\": [{\"source\": \"v1\", \"target\": \"/tmp\"}]}",
         "/tmp is a tmpfs when \"read_only\" is set"},
        {"{\"workspace\": 5}", "\"workspace\" must be a host directory"},
        {"{\"workspace\": {\"path\": \"/tmp\"}}", "unknown field \"workspace.path\""},
        {"{\"workspace\": {\"source\": \"v1\", \"mode\": \"rwx\"}}",
         "\"workspace.mode\" must be \"rw\""},
        {"{\"workspace\": {\"source\": \"v1\", \"mode\": \"overlay\"}}",
         "needs a host directory as the source"},
        {"{\"read_only\": \"yes\"}", "\"read_only\" must be true or false"},
        {"{\"keep_alive\": 1}", "\"keep_alive\" must be true or false"},
        {"{\"runtime\": 5}", "\"runtime\" must be a runtime name"},
        {"{\"runtime\": \"run sc\"}", "\"runtime\" must be a runtime name"},
        {"{\"git\": \"https://example.invalid/r.git\"}", "\"git\" must be an object"},
        {"{\"git\": {\"ref\": \"main\"}}", "\"git.url\" must be a string"},
        {"{\"git\": {\"url\": \"ssh://example.invalid/r.git\"}}",
         "\"git.url\" must start with https:// or http://"},
        {"{\"git\": {\"url\": \"file:///etc\"}}", "\"git.url\" must start with https://"},
        {"{\"git\": {\"url\": \"https://u:pw@example.invalid/r.git\"}}",
         "\"git.url\" must not carry credentials"},
        {"{\"git\": {\"url\": \"https://example.invalid/r.git\", \"ref\": \"--upload-pack=x\"}}",
         "\"git.ref\" must be a branch"},
        {"{\"git\": {\"url\": \"https://example.invalid/r.git\", \"token\": 5}}",
         "\"git.token\" must be a string"},
        {"{\"git\": {\"url\": \"https://example.invalid/r.git\", \"branch\": \"m\"}}",
         "unknown field \"git.branch\""},
        {"{\"git\": {\"url\": \"https://example.invalid/r.git\"}, \"workspace\": \"v1\"}",
         "\"git\" clones into the workspace"},
        {"{\"image\": 7}", "\"image\" must be an image reference"},
        {"{\"env\": {\"1X\": \"y\"}}", "\"env\" keys must be"},
    };
    size_t before = sessions_count(harness_eng);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        refuse(cases[i][0], cases[i][1]);
    /* Refused before anything was made. */
    assert_int_equal(sessions_count(harness_eng), before);
}

/* ---- 4. network, ports, gpus, runtime: configuration read back ---- */

static void test_network_modes(void **state)
{
    static const char *const modes[] = {"bridge", "host", "none"};
    for (size_t i = 0; i < 3; i++) {
        char *body = strdupf("{\"network\": \"%s\"}", modes[i]);
        json_t *s = session_new(harness_eng, body);
        json_t *c = inspect(jstr(s, "container_id"));
        assert_string_equal(jstr(c, "HostConfig.NetworkMode"), modes[i]);
        assert_string_equal(jstr(s, "options.network"), modes[i]);
        /* The executor still answers over its socket (no packet is sent anywhere). */
        run_expect(harness_eng, jstr(s, "id"), "echo up", "up");
        json_decref(c);
        session_delete(harness_eng, jstr(s, "id"));
        json_decref(s);
        free(body);
    }
}

static void test_ports_loopback_only(void **state)
{
    json_t *s =
        session_new(harness_eng, "{\"network\": \"bridge\", \"ports\": [8080, \"9090/udp\"]}");
    json_t *c = inspect(jstr(s, "container_id"));
    json_t *pb = jpath(c, "HostConfig.PortBindings");
    assert_int_equal(json_object_size(pb), 2);
    const char *key;
    json_t *arr;
    json_object_foreach(pb, key, arr)
    {
        assert_true(strcmp(key, "8080/tcp") == 0 || strcmp(key, "9090/udp") == 0);
        assert_int_equal(json_array_size(arr), 1);
        assert_string_equal(jstr(json_array_get(arr, 0), "HostIp"), "127.0.0.1");
        assert_string_equal(jstr(json_array_get(arr, 0), "HostPort"), "");
    }
    assert_non_null(jpath(c, "Config.ExposedPorts"));
    assert_int_equal(json_object_size(jpath(c, "Config.ExposedPorts")), 2);
    /* What Docker published: loopback only, and the same ports as the session object. */
    json_t *published = jpath(c, "NetworkSettings.Ports");
    json_t *shown = json_object_get(s, "ports");
    size_t n_pub = 0;
    json_object_foreach(published, key, arr)
    {
        size_t i;
        json_t *b;
        json_array_foreach(arr, i, b)
        {
            n_pub++;
            assert_string_equal(jstr(b, "HostIp"), "127.0.0.1");
            int hp = atoi(jstr(b, "HostPort"));
            assert_true(hp > 0 && hp < 65536);
            bool found = false;
            size_t j;
            json_t *p;
            json_array_foreach(shown, j, p)
            {
                char k[32];
                snprintf(k, sizeof(k), "%d/%s",
                         (int)json_integer_value(json_object_get(p, "container_port")),
                         jstr(p, "protocol"));
                if (strcmp(k, key) == 0 &&
                    json_integer_value(json_object_get(p, "host_port")) == hp &&
                    strcmp(jstr(p, "host_ip"), "127.0.0.1") == 0)
                    found = true;
            }
            assert_true(found);
        }
    }
    assert_int_equal(n_pub, 2);
    assert_int_equal(json_array_size(shown), 2);
    /* Stored: GET shows the same ports. */
    char *path = strdupf("/v1/sessions/%s", jstr(s, "id"));
    struct reply r;
    api(harness_eng, "GET", path, NULL, &r);
    assert_true(json_equal(json_object_get(r.json, "ports"), shown));
    reply_free(&r);
    free(path);
    json_decref(c);
    session_delete(harness_eng, jstr(s, "id"));
    json_decref(s);
}

static void test_gpus(void **state)
{
    /* Configuration only: a daemon without a GPU runtime refuses at start, with its message. */
    struct reply r;
    api(harness_eng, "POST", "/v1/sessions", "{\"gpus\": \"all\"}", &r);
    if (r.status == 201) {
        engine_track(harness_eng, jstr(r.json, "id"));
        json_t *c = inspect(jstr(r.json, "container_id"));
        json_t *dr = json_array_get(jpath(c, "HostConfig.DeviceRequests"), 0);
        assert_int_equal(json_integer_value(json_object_get(dr, "Count")), -1);
        assert_string_equal(json_string_value(json_array_get(
                                json_array_get(json_object_get(dr, "Capabilities"), 0), 0)),
                            "gpu");
        json_decref(c);
        session_delete(harness_eng, jstr(r.json, "id"));
    } else {
        if (r.status != 502)
            fprintf(stderr, "gpus: HTTP %ld %s\n", r.status, r.body);
        assert_int_equal(r.status, 502);
        const char *msg = jstr(r.json, "error.message");
        assert_non_null(msg);
        /* Docker's own words, passed on. */
        assert_non_null(strstr(msg, "docker start failed"));
        assert_non_null(strstr(msg, "gpu"));
    }
    reply_free(&r);
}

static void test_runtime(void **state)
{
    json_t *s = session_new(harness_eng, "{\"runtime\": \"runc\"}");
    json_t *c = inspect(jstr(s, "container_id"));
    assert_string_equal(jstr(c, "HostConfig.Runtime"), "runc");
    assert_string_equal(jstr(s, "options.runtime"), "runc");
    json_decref(c);
    session_delete(harness_eng, jstr(s, "id"));
    json_decref(s);

    struct reply r;
    docker("GET", "/v1.41/info", &r);
    bool has_runsc = json_object_get(json_object_get(r.json, "Runtimes"), "runsc") != NULL;
    reply_free(&r);
    const char *name = has_runsc ? "paddock-no-such-runtime" : "runsc";
    char *body = strdupf("{\"runtime\": \"%s\"}", name);
    char *want =
        strdupf("\"runtime\": \"%s\" is not offered by this Docker daemon (available: ", name);
    refuse(body, want);
    refuse(body, "runc"); /* the list names what is there */
    free(body);
    free(want);
}

static void test_keep_alive_stored(void **state)
{
    json_t *s = session_new(harness_eng, "{\"keep_alive\": false}");
    assert_true(json_is_false(jpath(s, "options.keep_alive")));
    assert_true(json_is_false(json_object_get(s, "keep_alive")));
    char *path = strdupf("/v1/sessions/%s", jstr(s, "id"));
    struct reply r;
    api(harness_eng, "GET", path, NULL, &r);
    assert_true(json_is_false(jpath(r.json, "options.keep_alive")));
    reply_free(&r);
    free(path);
    session_delete(harness_eng, jstr(s, "id"));
    json_decref(s);
}

/* ---- 5. volumes: the mount policy ---- */

static void test_volumes_bind(void **state)
{
    char *dir = tmpdir();
    free(sh("mkdir %s/ro %s/rw && echo data > %s/ro/f && chown %d %s/rw", dir, dir, dir, AGENT_UID,
            dir));
    char *body = strdupf("{\"volumes\": [{\"source\": \"%s/ro\", \"target\": \"/data\", "
                         "\"read_only\": true}, {\"source\": \"%s/rw/../rw\", \"target\": "
                         "\"/out\"}]}",
                         dir, dir);
    json_t *s = session_new(harness_eng, body);
    const char *id = jstr(s, "id");
    json_t *c = inspect(jstr(s, "container_id"));
    json_t *m = mount_at(c, "/data");
    assert_non_null(m);
    assert_string_equal(jstr(m, "Type"), "bind");
    char *want = strdupf("%s/ro", dir);
    assert_string_equal(jstr(m, "Source"), want);
    assert_true(json_is_false(json_object_get(m, "RW")));
    /* The .. is resolved before Docker sees it. */
    free(want);
    want = strdupf("%s/rw", dir);
    assert_string_equal(jstr(mount_at(c, "/out"), "Source"), want);
    free(want);
    assert_true(json_is_true(jpath(hc_mount_at(c, "/data"), "BindOptions.NonRecursive")));
    assert_true(json_array_size(jpath(c, "HostConfig.Binds")) == 0);
    run_expect(harness_eng, id, "cat /data/f", "data");
    run_expect(harness_eng, id, "touch /data/x 2>&1 | grep -c 'Read-only file system'", "1");
    run_expect(harness_eng, id, "echo out > /out/g && echo ok", "ok");
    char *g = strdupf("%s/rw/g", dir);
    assert_true(path_exists(g));
    free(g);
    json_decref(c);
    session_delete(harness_eng, id);
    json_decref(s);
    free(body);
}

static void test_volumes_denied(void **state)
{
    char *dir = tmpdir();
    /* Symlink tricks: a link to /etc, a .. walk, a link to the Docker socket, a socket. */
    free(sh("ln -s /etc %s/etclink && mkdir %s/sub && ln -s %s %s/sub/dsock", dir, dir,
            harness_docker_socket(), dir));
    char *sockdir = strdupf("%s/withsock", dir);
    assert_int_equal(mkdir(sockdir, 0755), 0);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/agent.sock", sockdir);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    char *outside = tmpdir_in("/var/tmp");
    const char *home = getenv("HOME");
    struct {
        char *path;
        const char *want;
    } cases[] = {
        {strdupf("/"), "/ is denied (the host's root)"},
        {strdupf("/etc"), "/etc is denied (host configuration)"},
        {strdupf("/etc/passwd"), "is inside /etc, which is denied"},
        {strdupf("/proc"), "is denied"},
        {strdupf("/sys"), "is denied"},
        {strdupf("/dev"), "is denied"},
        {strdupf("/run"), "is denied"},
        {strdupf("/var/run/docker.sock"), "is a unix socket"},
        {strdupf("/var/run"), "(resolved: /run) is denied"},
        {strdupf("/usr/bin"), "is inside /usr, which is denied"},
        {strdupf("%s", home ? home : "/root"), "your home directory"},
        {strdupf("%s", harness_eng->state_dir), "the engine's state dir"},
        {strdupf("%s/run", harness_eng->state_dir), "is inside"},
        {strdupf("/tmp"), "contains"},
        {strdupf("%s/etclink", dir), "(resolved: /etc) is denied"},
        {strdupf("%s/sub/../../../etc", dir), "(resolved: /etc) is denied"},
        {strdupf("%s/sub/dsock", dir), "is a unix socket"},
        {strdupf("%s", sockdir), "contains the unix socket agent.sock"},
        {strdupf("%s", outside), "is not inside an allowed prefix"},
        {strdupf("%s/nope", dir), "No such file or directory"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *body =
            strdupf("{\"volumes\": [{\"source\": \"%s\", \"target\": \"/x\"}]}", cases[i].path);
        refuse(body, "\"volumes[0].source\": ");
        refuse(body, cases[i].want);
        free(body);
        /* The same policy guards the workspace. */
        body = strdupf("{\"workspace\": \"%s\"}", cases[i].path);
        refuse(body, "\"workspace.source\": ");
        free(body);
        free(cases[i].path);
    }
    close(fd);
    free(sockdir);
}

/* A named volume made with bind options is checked like a bind. */
static void test_volumes_named(void **state)
{
    char *rnd = random_hex(6);
    char *name = strdupf("paddock-test-%s", rnd);
    char *body = strdupf("{\"volumes\": [{\"source\": \"%s\", \"target\": \"/cache\"}]}", name);
    json_t *s = session_new(harness_eng, body);
    json_t *c = inspect(jstr(s, "container_id"));
    json_t *m = mount_at(c, "/cache");
    assert_string_equal(jstr(m, "Type"), "volume");
    assert_string_equal(jstr(m, "Name"), name);
    run_expect(harness_eng, jstr(s, "id"), "ls -d /cache", "/cache");
    json_decref(c);
    session_delete(harness_eng, jstr(s, "id"));
    json_decref(s);
    volume_remove(name); /* named volumes outlive their sessions by design */
    free(body);

    char *evil = strdupf("paddock-test-etc-%s", rnd);
    char *create =
        strdupf("{\"Name\": \"%s\", \"Driver\": \"local\", \"DriverOpts\": {\"type\": \"none\", "
                "\"o\": \"bind\", \"device\": \"/etc\"}, \"Labels\": {\"paddock.test\": \"1\"}}",
                evil);
    struct reply r;
    docker_body("POST", "/v1.41/volumes/create", create, &r);
    assert_int_equal(r.status, 201);
    reply_free(&r);
    body = strdupf("{\"volumes\": [{\"source\": \"%s\", \"target\": \"/x\"}]}", evil);
    refuse(body, "binds /etc is denied (host configuration)");
    free(body);
    body = strdupf("{\"workspace\": \"%s\"}", evil);
    refuse(body, "\"workspace.source\": volume");
    free(body);
    volume_remove(evil);
    free(create);
    free(evil);
    free(name);
    free(rnd);
}

/* $HOME: itself and its dot-directories refused, its other subdirs allowed; the allowlist
 * replaced by PADDOCK_VOLUME_ALLOW. A second engine with its own HOME. */
static void test_volumes_home_and_allowlist(void **state)
{
    char *base = tmpdir();
    char *allowed = tmpdir_in("/var/tmp");
    char *home = strdupf("%s/home", base);
    free(sh("mkdir -p %s/proj %s/.ssh %s/sub && ln -s %s/.ssh %s/proj/keys && ln -s %s/.ssh "
            "%s/sshlink",
            home, home, allowed, home, home, home, allowed));
    char *env_home = strdupf("HOME=%s", home);
    char *env_allow = strdupf("PADDOCK_VOLUME_ALLOW=%s:$HOME", allowed);
    struct engine_proc *e = engine_new();
    e->extra_env[0] = env_home;
    e->extra_env[1] = env_allow;
    assert_int_equal(engine_start(e), 0);

    char *body = strdupf("{\"volumes\": [{\"source\": \"%s/proj\", \"target\": \"/p\"}, "
                         "{\"source\": \"%s/sub\", \"target\": \"/s\"}]}",
                         home, allowed);
    json_t *s = session_new(e, body);
    json_t *c = inspect(jstr(s, "container_id"));
    char *want = strdupf("%s/proj", home);
    assert_string_equal(jstr(mount_at(c, "/p"), "Source"), want);
    free(want);
    json_decref(c);
    session_delete(e, jstr(s, "id"));
    json_decref(s);
    free(body);

    struct {
        char *path;
        const char *want;
    } cases[] = {
        {strdupf("%s", home), "your home directory"},
        {strdupf("%s/.ssh", home), "is a dot-directory of your home"},
        {strdupf("%s/proj/keys", home), "is a dot-directory of your home"},
        {strdupf("%s/sshlink", allowed), "is a dot-directory of your home"},
        {strdupf("%s", base), "contains"},
        {strdupf("%s", allowed), "is not inside an allowed prefix"},
        /* /tmp is not on this engine's list. */
        {strdupf("%s", tmpdir()), "is not inside an allowed prefix"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        body = strdupf("{\"volumes\": [{\"source\": \"%s\", \"target\": \"/x\"}]}", cases[i].path);
        refuse_on(e, body, 400, "bad_request", cases[i].want);
        free(body);
        free(cases[i].path);
    }
    assert_int_equal(engine_stop(e), 0);
    assert_int_equal(engine_destroy(e), 0);
    free(env_home);
    free(env_allow);
    free(home);
}

/* ---- 6. workspace ---- */

static void test_workspace_bind_and_volume(void **state)
{
    char *dir = tmpdir();
    free(sh("echo mine > %s/a.txt && chown -R %d %s", dir, AGENT_UID, dir));
    char *body = strdupf("{\"workspace\": \"%s\"}", dir);
    json_t *s = session_new(harness_eng, body);
    const char *id = jstr(s, "id");
    json_t *c = inspect(jstr(s, "container_id"));
    json_t *m = mount_at(c, "/workspace");
    assert_string_equal(jstr(m, "Type"), "bind");
    assert_string_equal(jstr(m, "Source"), dir);
    assert_true(json_is_true(json_object_get(m, "RW")));
    run_expect(harness_eng, id, "cat a.txt && echo new > b.txt && pwd", "mine\n/workspace");
    char *b = strdupf("%s/b.txt", dir);
    assert_true(path_exists(b));
    free(b);
    json_decref(c);
    session_delete(harness_eng, id);
    json_decref(s);
    free(body);

    body = strdupf("{\"workspace\": {\"source\": \"%s\", \"mode\": \"ro\"}}", dir);
    s = session_new(harness_eng, body);
    c = inspect(jstr(s, "container_id"));
    assert_true(json_is_false(json_object_get(mount_at(c, "/workspace"), "RW")));
    run_expect(harness_eng, jstr(s, "id"), "touch c.txt 2>&1 | grep -c 'Read-only file system'",
               "1");
    json_decref(c);
    session_delete(harness_eng, jstr(s, "id"));
    json_decref(s);
    free(body);

    char *rnd = random_hex(6);
    char *name = strdupf("paddock-test-ws-%s", rnd);
    body = strdupf("{\"workspace\": \"%s\"}", name);
    s = session_new(harness_eng, body);
    c = inspect(jstr(s, "container_id"));
    m = mount_at(c, "/workspace");
    assert_string_equal(jstr(m, "Type"), "volume");
    assert_string_equal(jstr(m, "Name"), name);
    /* A new volume takes the image's /workspace, owner included: the agent can write. */
    run_expect(harness_eng, jstr(s, "id"), "echo v > f && cat f", "v");
    json_decref(c);
    session_delete(harness_eng, jstr(s, "id"));
    json_decref(s);
    volume_remove(name);
    free(name);
    free(rnd);
    free(body);
}

static void test_workspace_overlay(void **state)
{
    char *dir = tmpdir();
    free(sh("mkdir %s/src && echo original > %s/a.txt && echo keep > %s/c.txt && echo deep > "
            "%s/src/d.txt && chown -R %d %s",
            dir, dir, dir, dir, AGENT_UID, dir));
    char *before = sh("cd %s && find . -printf '%%p %%s %%U %%m\\n' | sort && cat a.txt c.txt "
                      "src/d.txt",
                      dir);
    char *body = strdupf("{\"workspace\": {\"source\": \"%s\", \"mode\": \"overlay\"}}", dir);
    json_t *s = session_new(harness_eng, body);
    const char *id = jstr(s, "id");
    json_t *c = inspect(jstr(s, "container_id"));
    json_t *hm = hc_mount_at(c, "/workspace");
    assert_string_equal(jstr(hm, "Type"), "volume");
    assert_string_equal(jstr(hm, "VolumeOptions.DriverConfig.Options.type"), "overlay");
    assert_string_equal(jstr(s, "options.workspace.type"), "overlay");
    const char *upper = jstr(s, "options.workspace.upper");
    assert_non_null(upper);
    /* The agent sees the host files and changes them at will... */
    run_expect(harness_eng, id, "cat a.txt", "original");
    run_expect(harness_eng, id,
               "echo changed > a.txt && echo new > b.txt && rm c.txt && echo more >> src/d.txt "
               "&& mkdir e && cat a.txt b.txt src/d.txt && ls -1",
               "changed\nnew\ndeep\nmore\na.txt\nb.txt\ne\nsrc");
    json_t *w = json_pack("{s:{s:s,s:{s:s,s:s}}}", "action", "action", "write", "args", "path",
                          "/workspace/w.txt", "content", "written");
    char *wb = json_dumps(w, JSON_COMPACT);
    char *path = strdupf("/v1/sessions/%s/execute_action", id);
    struct reply r;
    api(harness_eng, "POST", path, wb, &r);
    assert_int_equal(r.status, 200);
    reply_free(&r);
    free(path);
    free(wb);
    json_decref(w);
    /* ...and the host directory is unchanged, byte for byte and entry for entry. */
    char *after = sh("cd %s && find . -printf '%%p %%s %%U %%m\\n' | sort && cat a.txt c.txt "
                     "src/d.txt",
                     dir);
    assert_string_equal(before, after);
    /* The changes are in the engine's upper dir. */
    char *b = strdupf("%s/b.txt", upper);
    char *wt = strdupf("%s/w.txt", upper);
    assert_true(path_exists(b));
    assert_true(path_exists(wt));
    char *upper_copy = strdup(upper);
    json_decref(c);
    session_delete(harness_eng, id);
    /* Nothing left: the upper dir and the anonymous volume go with the session. */
    assert_false(path_exists(upper_copy));
    assert_int_equal(volumes_of_session(id), 0);
    json_decref(s);
    free(b);
    free(wt);
    free(upper_copy);
    free(before);
    free(after);
    free(body);
}

/* ---- 7. read-only root ---- */

static void test_read_only_root(void **state)
{
    json_t *s = session_new(harness_eng, "{\"read_only\": true}");
    const char *id = jstr(s, "id");
    json_t *c = inspect(jstr(s, "container_id"));
    assert_true(json_is_true(jpath(c, "HostConfig.ReadonlyRootfs")));
    assert_non_null(jstr(c, "HostConfig.Tmpfs./tmp"));
    assert_string_equal(jstr(hc_mount_at(c, "/workspace"), "Type"), "volume");
    /* Really read-only where it should be, writable where the agent works. /etc is a copy
     * of the image's that only container root (the executor, which names the agent there)
     * can write. */
    run_expect(harness_eng, id,
               "for p in /usr/x /x /home/agent/x /var/x; do touch $p 2>&1 | grep -c "
               "'Read-only file system'; done | tr -d '\\n'; touch /etc/x 2>&1 | grep -c "
               "'Permission denied'; stat -c %U /etc",
               "11111\nroot");
    assert_string_equal(jstr(hc_mount_at(c, "/etc"), "Type"), "volume");
    run_expect(harness_eng, id,
               "echo w > /workspace/f && echo t > /tmp/f && echo h > ~/f && cat /workspace/f "
               "/tmp/f ~/f && echo $HOME && pwd",
               "w\nt\nh\n/tmp/home\n/workspace");
    /* The executor's other actions still work: file write and IPython. */
    json_t *w = json_pack("{s:{s:s,s:{s:s,s:s}}}", "action", "action", "write", "args", "path",
                          "/workspace/w.txt", "content", "written");
    char *wb = json_dumps(w, JSON_COMPACT);
    char *path = strdupf("/v1/sessions/%s/execute_action", id);
    struct reply r;
    api(harness_eng, "POST", path, wb, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "observation"), "write");
    reply_free(&r);
    api(harness_eng, "POST", path,
        "{\"action\": {\"action\": \"run_ipython\", \"args\": {\"code\": \"print(6*7)\"}}}", &r);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(jstr(r.json, "content"), "42"));
    reply_free(&r);
    run_expect(harness_eng, id, "cat /workspace/w.txt", "written");
    free(path);
    free(wb);
    json_decref(w);
    json_decref(c);
    session_delete(harness_eng, id);
    assert_int_equal(volumes_of_session(id), 0);
    json_decref(s);
}

/* ---- 8. git ---- */

struct git_server {
    pid_t pid;
    int port;
};

static void git_server_start(struct git_server *g, const char *root, const char *report,
                             const char *token)
{
    int p[2];
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    char *script = strdupf("%s/tests/integration/git_http_server.py", getenv("PADDOCK_SRC"));
    char *tok = strdupf("GIT_TEST_TOKEN=%s", token);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(p[1], 1);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        putenv(tok);
        execlp("python3", "python3", script, root, report, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    struct pollfd pf = {.fd = p[0], .events = POLLIN};
    char line[32] = "";
    size_t n = 0;
    while (n < sizeof(line) - 1 && poll(&pf, 1, 10000) == 1) {
        ssize_t k = read(p[0], line + n, 1);
        if (k <= 0 || line[n] == '\n')
            break;
        n++;
    }
    line[n] = '\0';
    close(p[0]);
    g->pid = pid;
    g->port = atoi(line);
    assert_true(g->port > 0);
    free(script);
    free(tok);
}

static void git_server_stop(struct git_server *g)
{
    kill(g->pid, SIGTERM);
    waitpid(g->pid, NULL, 0);
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        *len = 0;
        return NULL;
    }
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n + 65536 > cap) {
            cap = cap ? cap * 2 : 65536 * 2;
            buf = realloc(buf, cap);
        }
        size_t k = fread(buf + n, 1, cap - n, f);
        if (k == 0)
            break;
        n += k;
    }
    fclose(f);
    *len = n;
    return buf;
}

static bool file_has(const char *path, const char *needle)
{
    size_t len;
    char *d = read_all(path, &len);
    bool has = d && memmem(d, len, needle, strlen(needle)) != NULL;
    free(d);
    return has;
}

static void test_git_workspace(void **state)
{
    char *dir = tmpdir();
    char *gitc = "git -c user.name=paddock-test -c user.email=test@paddock.invalid";
    free(sh("mkdir -p %s/src %s/srv && cd %s/src && git init -q -b main && echo 'hello from "
            "git' > README && git add README && %s commit -qm one && git checkout -q -b feature "
            "&& echo feat > FEATURE && git add FEATURE && %s commit -qm two && git checkout -q "
            "main && git clone -q --bare . ../srv/repo.git && cd ../srv/repo.git && git "
            "update-server-info",
            dir, dir, dir, gitc, gitc));
    char *sha = sh("git -C %s/src rev-parse main", dir);
    sha[strcspn(sha, "\n")] = '\0';
    char *rnd = random_hex(12);
    char *token = strdupf("pdk-secret-%s", rnd);
    char *root = strdupf("%s/srv", dir);
    char *report = strdupf("%s/report.txt", dir);
    struct git_server g;
    git_server_start(&g, root, report, token);
    char *url = strdupf("http://127.0.0.1:%d/repo.git", g.port);
    struct util_replies {
        char *bodies[16];
        int n;
    } seen = {0};

    /* With the token: cloned into an engine-made workspace, given to the agent. */
    char *body = strdupf("{\"git\": {\"url\": \"%s\", \"token\": \"%s\"}}", url, token);
    struct reply r;
    api(harness_eng, "POST", "/v1/sessions", body, &r);
    if (r.status != 201)
        fprintf(stderr, "git clone session: %ld %s\n", r.status, r.body);
    assert_int_equal(r.status, 201);
    engine_track(harness_eng, jstr(r.json, "id"));
    seen.bodies[seen.n++] = strdup(r.body);
    char *id1 = strdup(jstr(r.json, "id"));
    assert_true(json_is_true(jpath(r.json, "options.git.token"))); /* said, never shown */
    assert_string_equal(jstr(r.json, "options.workspace.type"), "clone");
    char *cid1 = strdup(jstr(r.json, "container_id"));
    reply_free(&r);
    run_expect(harness_eng, id1, "cat README && stat -c %U README .git . && git log --format=%s",
               "hello from git\nagent\nagent\nagent\none");
    free(body);

    /* A branch, and a commit id. */
    body = strdupf("{\"git\": {\"url\": \"%s\", \"token\": \"%s\", \"ref\": \"feature\"}}", url,
                   token);
    json_t *s2 = session_new(harness_eng, body);
    run_expect(harness_eng, jstr(s2, "id"), "cat FEATURE", "feat");
    free(body);
    body = strdupf("{\"git\": {\"url\": \"%s\", \"token\": \"%s\", \"ref\": \"%s\"}}", url, token,
                   sha);
    json_t *s3 = session_new(harness_eng, body);
    char *want3 = strdupf("%s\nok", sha);
    run_expect(harness_eng, jstr(s3, "id"), "git rev-parse HEAD && test ! -e FEATURE && echo ok",
               want3);
    free(want3);
    want3 = strdupf("%s\nhello from git\nok", sha);
    free(body);

    /* Into a host directory (empty), which keeps its owner. */
    char *hostws = strdupf("%s/hostws", dir);
    free(sh("mkdir %s && chown %d:%d %s", hostws, AGENT_UID, AGENT_UID, hostws));
    body = strdupf("{\"workspace\": \"%s\", \"git\": {\"url\": \"%s\", \"token\": \"%s\"}}", hostws,
                   url, token);
    json_t *s4 = session_new(harness_eng, body);
    char *own = sh("stat -c '%%u %%g' %s/README %s/.git/HEAD", hostws, hostws);
    assert_string_equal(own, "1000 1000\n1000 1000\n");
    free(own);
    free(body);
    /* A commit id into a host directory owned by someone else than the engine. */
    char *hostws2 = strdupf("%s/hostws2", dir);
    free(sh("mkdir %s && chown %d:%d %s", hostws2, AGENT_UID, AGENT_UID, hostws2));
    body = strdupf("{\"workspace\": \"%s\", \"git\": {\"url\": \"%s\", \"token\": \"%s\", "
                   "\"ref\": \"%s\"}}",
                   hostws2, url, token, sha);
    json_t *s5 = session_new(harness_eng, body);
    run_expect(harness_eng, jstr(s5, "id"), "git rev-parse HEAD && cat README && echo ok", want3);
    free(body);
    /* A host directory that is not empty is refused before anything runs. */
    body = strdupf("{\"workspace\": \"%s\", \"git\": {\"url\": \"%s\"}}", hostws, url);
    refuse(body, "must be empty to clone");
    free(body);

    /* Without the token, and with a wrong one: a clear error, nothing left. */
    body = strdupf("{\"git\": {\"url\": \"%s\"}}", url);
    refuse_on(harness_eng, body, 502, "git_error", "git clone failed");
    refuse_on(harness_eng, body, 502, "git_error", "terminal prompts disabled");
    free(body);
    char *wrong = strdupf("{\"git\": {\"url\": \"%s\", \"token\": \"not-%s\"}}", url, token);
    refuse_on(harness_eng, wrong, 502, "git_error", "cloning http://127.0.0.1");
    free(wrong);

    /* Every reply the API gave, and what it shows now. */
    const char *gets[] = {"/v1/sessions?all=1", NULL, NULL};
    char *one = strdupf("/v1/sessions/%s", id1);
    gets[1] = one;
    for (int i = 0; gets[i]; i++) {
        api(harness_eng, "GET", gets[i], NULL, &r);
        assert_int_equal(r.status, 200);
        seen.bodies[seen.n++] = strdup(r.body);
        reply_free(&r);
    }
    char *acts = strdupf("/v1/sessions/%s/actions", id1);
    api(harness_eng, "GET", acts, NULL, &r);
    seen.bodies[seen.n++] = strdup(r.body ? r.body : "");
    reply_free(&r);
    free(acts);
    free(one);
    for (int i = 0; i < seen.n; i++) {
        assert_null(strstr(seen.bodies[i], token));
        assert_null(strstr(seen.bodies[i], rnd));
        free(seen.bodies[i]);
    }
    /* The container's config does not carry it either. */
    char *ipath = strdupf("/v1.41/containers/%s/json", cid1);
    docker("GET", ipath, &r);
    assert_int_equal(r.status, 200);
    assert_null(strstr(r.body, rnd));
    reply_free(&r);
    free(ipath);

    session_delete(harness_eng, id1);
    session_delete(harness_eng, jstr(s2, "id"));
    session_delete(harness_eng, jstr(s3, "id"));
    session_delete(harness_eng, jstr(s4, "id"));
    session_delete(harness_eng, jstr(s5, "id"));
    git_server_stop(&g);

    /* The store (database and WAL) and the engine's log never saw it. */
    const char *files[] = {"paddock.db", "paddock.db-wal", "paddock.db-shm", NULL};
    for (int i = 0; files[i]; i++) {
        char *p = strdupf("%s/%s", harness_eng->state_dir, files[i]);
        assert_false(file_has(p, rnd));
        free(p);
    }
    for (int run = 1; run <= harness_eng->runs; run++) {
        char *p = strdupf("%s/serve-%d.log", harness_eng->state_dir, run);
        assert_false(file_has(p, rnd));
        free(p);
    }
    /* The server saw the header on the token's requests, none without, and never the token
     * in any process's argv while git ran. */
    size_t len;
    char *rep = read_all(report, &len);
    assert_non_null(rep);
    rep = realloc(rep, len + 1);
    rep[len] = '\0';
    assert_non_null(strstr(rep, "auth=ok"));
    assert_non_null(strstr(rep, "auth=none"));
    assert_non_null(strstr(rep, "auth=wrong"));
    for (char *line = strtok(rep, "\n"); line; line = strtok(NULL, "\n")) {
        if (!strstr(line, "argv_leaks=-"))
            fprintf(stderr, "git server: %s\n", line);
        assert_non_null(strstr(line, "argv_leaks=-"));
    }
    free(rep);
    json_decref(s2);
    json_decref(s3);
    json_decref(s4);
    json_decref(s5);
    free(want3);
    free(hostws2);
    free(id1);
    free(cid1);
    free(hostws);
    free(url);
    free(root);
    free(report);
    free(token);
    free(rnd);
    free(sha);
}

int main(void)
{
    harness_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_unchanged),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_disk),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_network_modes),
        cmocka_unit_test(test_ports_loopback_only),
        cmocka_unit_test(test_gpus),
        cmocka_unit_test(test_runtime),
        cmocka_unit_test(test_keep_alive_stored),
        cmocka_unit_test(test_volumes_bind),
        cmocka_unit_test(test_volumes_denied),
        cmocka_unit_test(test_volumes_named),
        cmocka_unit_test(test_volumes_home_and_allowlist),
        cmocka_unit_test(test_workspace_bind_and_volume),
        cmocka_unit_test(test_workspace_overlay),
        cmocka_unit_test(test_read_only_root),
        cmocka_unit_test(test_git_workspace),
    };
    int failed = cmocka_run_group_tests_name("options", tests, harness_group_setup_unsupervised,
                                             group_teardown);
    return failed || harness_teardown_failed ? 1 : 0;
}
