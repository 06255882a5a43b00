/* Integration test of the builder as an API against the real daemon: POST /v1/images builds
 * (progress and the final tags on the event stream), reuses, answers 202 without wait;
 * GET /v1/images lists; DELETE refuses while a session's container uses the image; a platform
 * the daemon cannot run is refused with a 400 before anything is built, the daemon's own is
 * passed through; OpenHands' /build and /build_status build through it; `paddock build` and
 * `paddock images`; a base the daemon does not have (nor can pull: no registry here) fails
 * each of these with an error naming it and the daemon's reason, leaving no image. Every build uses
 * steps unique to this run, and exactly the images it made are removed at the end (they carry
 * paddock.test=1). */
#include "harness.h"
#include "sse.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

static char nonce[32];
static json_t *made; /* references of the images this run built, removed at the end */

static void remember(const char *ref)
{
    if (ref)
        json_array_append_new(made, json_string(ref));
}

static void remember_tags(json_t *build)
{
    remember(jstr(build, "tags.source"));
    remember(jstr(build, "tags.lock"));
}

static char *body_with_step(const char *fmt, const char *step)
{
    return strdupf(fmt, nonce, step);
}

static json_t *docker_inspect_image(const char *ref)
{
    char *e = curl_easy_escape(NULL, ref, 0);
    char *p = strdupf("/images/%s/json", e);
    struct reply r;
    docker("GET", p, &r);
    json_t *j = r.status == 200 ? json_incref(r.json) : NULL;
    reply_free(&r);
    free(p);
    curl_free(e);
    return j;
}

/* The image's label paddock.test (dotted keys do not go through jstr). */
static const char *test_label(json_t *img)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(img, "Config"), "Labels"), "paddock.test"));
}

static void test_build_events_tags_reuse(void **state)
{
    struct sse *ev = sse_open(harness_eng->socket, "/v1/events");
    char *body = body_with_step("{\"setup\": [\"echo %s > /etc/%s\"]}", "api");
    json_t *b = api_json(harness_eng, "POST", "/v1/images", body, 200);
    assert_string_equal(jstr(b, "state"), "done");
    assert_string_equal(jstr(b, "base"), HARNESS_IMAGE);
    remember_tags(b);
    const char *source = jstr(b, "tags.source");
    assert_non_null(strstr(source, "paddock/runtime:pd_v"));
    assert_string_equal(jstr(b, "image"), source);
    /* the source tag is the lock tag and the executor's hash */
    assert_int_equal(strncmp(source, jstr(b, "tags.lock"), strlen(jstr(b, "tags.lock"))), 0);
    assert_string_equal(jstr(b, "tags.versioned"),
                        "paddock/runtime:pd_v0.1.0_paddock_s_base_t_local");
    /* progress, then the end with the three tags, all naming the build */
    assert_non_null(sse_wait(ev, "build", "build", jstr(b, "id"), "stage", "setup", 10000));
    json_t *done = sse_wait(ev, "build", "build", jstr(b, "id"), "stage", "done", 10000);
    assert_non_null(done);
    assert_string_equal(jstr(done, "tags.source"), source);
    /* built with the step run in it and the executor baked in */
    json_t *img = docker_inspect_image(source);
    assert_non_null(img);
    assert_string_equal(test_label(img), "1");
    json_decref(img);

    /* the same again: reused, nothing built */
    json_t *again = api_json(harness_eng, "POST", "/v1/images", body, 200);
    assert_string_equal(jstr(again, "image"), source);
    assert_non_null(sse_wait(ev, "build", "build", jstr(again, "id"), "stage", "reused", 10000));
    assert_null(sse_wait(ev, "build", "build", jstr(again, "id"), "stage", "setup", 0));

    /* a session with these steps runs in that very image */
    json_t *s = session_new(harness_eng, body);
    char *cat = strdupf("cat /etc/api");
    json_t *obs = session_run(harness_eng, jstr(s, "id"), cat);
    assert_string_equal(jstr(obs, "content"), nonce);
    json_decref(obs);
    free(cat);
    session_delete(harness_eng, jstr(s, "id"));
    json_decref(s);
    json_decref(again);
    json_decref(b);
    free(body);
    sse_close(ev);
}

static json_t *wait_build(const char *id, long ms)
{
    char *p = strdupf("/v1/images/builds/%s", id);
    json_t *b = NULL;
    for (double end = now_ms() + ms; now_ms() < end; sleep_ms(100)) {
        json_decref(b);
        b = api_json(harness_eng, "GET", p, NULL, 200);
        if (strcmp(jstr(b, "state"), "running") != 0)
            break;
    }
    free(p);
    return b;
}

static void test_no_wait_then_status(void **state)
{
    char *body = body_with_step("{\"runtime_extra_deps\": \"echo %s > /etc/%s\", \"wait\": false}",
                                "nowait");
    json_t *b = api_json(harness_eng, "POST", "/v1/images", body, 202);
    assert_string_equal(jstr(b, "state"), "running");
    json_t *end = wait_build(jstr(b, "id"), 120000);
    assert_string_equal(jstr(end, "state"), "done");
    remember_tags(end);
    assert_non_null(jpath(end, "finished"));
    json_decref(end);
    json_decref(b);
    free(body);
    /* an unknown build */
    json_decref(api_json(harness_eng, "GET", "/v1/images/builds/0000", NULL, 404));
}

static json_t *listed(const char *ref)
{
    json_t *l = api_json(harness_eng, "GET", "/v1/images", NULL, 200);
    size_t i, j;
    json_t *img, *t;
    json_array_foreach(json_object_get(l, "images"), i, img)
    {
        json_array_foreach(json_object_get(img, "tags"), j, t)
        {
            if (strcmp(json_string_value(t), ref) == 0) {
                json_t *found = json_incref(img);
                json_decref(l);
                return found;
            }
        }
    }
    json_decref(l);
    return NULL;
}

static void test_list_and_remove(void **state)
{
    char *body = body_with_step("{\"setup\": [\"echo %s > /etc/%s\"]}", "rm");
    json_t *b = api_json(harness_eng, "POST", "/v1/images", body, 200);
    remember_tags(b);
    const char *source = jstr(b, "tags.source");
    json_t *img = listed(source);
    assert_non_null(img);
    assert_string_equal(jstr(img, "base"), HARNESS_IMAGE);
    assert_true(json_number_value(json_object_get(img, "size")) > 1000);
    assert_true(json_number_value(json_object_get(img, "age_seconds")) >= 0);
    assert_true(json_number_value(json_object_get(img, "created")) > 1e9);
    json_decref(img);

    /* in use by a session: refused, saying which */
    json_t *s = session_new(harness_eng, body);
    char *del = strdupf("/v1/images/%s", strchr(source, ':') + 1);
    json_t *no = api_json(harness_eng, "DELETE", del, NULL, 409);
    assert_string_equal(jstr(no, "error.code"), "conflict");
    assert_non_null(strstr(jstr(no, "error.message"), jstr(s, "id")));
    json_decref(no);
    /* removal is the operator's: the agents' socket gets 403 */
    struct reply ag;
    http_unix(harness_eng->socket, "DELETE", del, NULL, 0, 10000, &ag);
    assert_int_equal(ag.status, 403);
    reply_free(&ag);
    img = docker_inspect_image(source);
    assert_non_null(img); /* still there */
    json_decref(img);
    session_delete(harness_eng, jstr(s, "id"));
    json_t *yes = api_json(harness_eng, "DELETE", del, NULL, 200);
    json_decref(yes);
    img = listed(source);
    assert_null(img);
    json_decref(api_json(harness_eng, "DELETE", del, NULL, 404));
    /* not a tag of the runtime repository */
    json_decref(api_json(harness_eng, "DELETE", "/v1/images/a:b", NULL, 400));
    free(del);
    json_decref(s);
    json_decref(b);
    free(body);
}

/* Steps are commands as root with Docker's build network: on the agents' channel they follow
 * [security] setup (here the default, "refuse") as a session's "setup" does, instead of
 * running through this route; the operator's channel builds them (the tests above). */
static void test_agent_steps_follow_security(void **state)
{
    (void)state;
    char *body = body_with_step("{\"setup\": [\"echo %s > /etc/%s\"]}", "agent");
    struct reply ag;
    http_unix(harness_eng->socket, "POST", "/v1/images", body, strlen(body), 60000, &ag);
    if (ag.status == 200)
        remember_tags(ag.json);
    assert_int_equal(ag.status, 403);
    assert_string_equal(jstr(ag.json, "error.code"), "forbidden");
    assert_non_null(strstr(jstr(ag.json, "error.message"), "[security] setup"));
    reply_free(&ag);
    free(body);
}

/* The daemon's own platform, and one it cannot run (not its architecture, no enabled
 * binfmt_misc emulator here), from its /info: what the engine checks, asked the same way. */
static char native[32], foreign[32];

static void pick_platforms(void)
{
    static const char *const arches[][3] = {
        {"x86_64", "amd64", "qemu-x86_64"},     {"aarch64", "arm64", "qemu-aarch64"},
        {"s390x", "s390x", "qemu-s390x"},       {"ppc64le", "ppc64le", "qemu-ppc64le"},
        {"riscv64", "riscv64", "qemu-riscv64"},
    };
    struct reply r;
    docker("GET", "/info", &r);
    const char *machine = jstr(r.json, "Architecture");
    assert_non_null(machine);
    for (size_t i = 0; i < sizeof(arches) / sizeof(arches[0]); i++) {
        char *bf = strdupf("/proc/sys/fs/binfmt_misc/%s", arches[i][2]);
        if (strcmp(machine, arches[i][0]) == 0)
            snprintf(native, sizeof(native), "linux/%s", arches[i][1]);
        else if (!foreign[0] && !path_exists(bf))
            snprintf(foreign, sizeof(foreign), "linux/%s", arches[i][1]);
        free(bf);
    }
    reply_free(&r);
    assert_true(native[0] && foreign[0]);
}

static void test_platform(void **state)
{
    struct sse *ev = sse_open(harness_eng->socket, "/v1/events");
    /* arm64 on this amd64 daemon without an emulator: refused before anything is built */
    pick_platforms();
    char *fmt = strdupf("{\"setup\": [\"echo %%s > /etc/%%s\"], \"platform\": \"%s\"}", foreign);
    char *body = body_with_step(fmt, "arm");
    free(fmt);
    json_t *no = api_json(harness_eng, "POST", "/v1/images", body, 400);
    assert_string_equal(jstr(no, "error.code"), "bad_request");
    assert_non_null(strstr(jstr(no, "error.message"), "cannot run on this Docker daemon"));
    const char *id = jstr(no, "error.build");
    assert_non_null(id);
    assert_non_null(sse_wait(ev, "build", "build", id, "stage", "failed", 5000));
    assert_null(sse_wait(ev, "build", "build", id, "stage", "setup", 0));
    json_decref(no);
    free(body);
    /* and a session asking for it */
    struct reply r;
    char *sbody = strdupf("{\"platform\": \"%s\"}", foreign);
    api(harness_eng, "POST", "/v1/sessions", sbody, &r);
    free(sbody);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(jstr(r.json, "error.message"), foreign));
    reply_free(&r);
    /* malformed */
    json_decref(api_json(harness_eng, "POST", "/v1/images", "{\"platform\": \"arm64\"}", 400));
    json_decref(
        api_json(harness_eng, "POST", "/v1/sessions", "{\"platform\": \"Linux/AMD64\"}", 400));

    /* the daemon's own: passed through to the build and to the container */
    fmt = strdupf("{\"setup\": [\"echo %%s > /etc/%%s\"], \"platform\": \"%s\"}", native);
    body = body_with_step(fmt, "amd");
    free(fmt);
    json_t *b = api_json(harness_eng, "POST", "/v1/images", body, 200);
    remember_tags(b);
    assert_string_equal(jstr(b, "platform"), native);
    json_t *img = listed(jstr(b, "tags.source"));
    assert_string_equal(jstr(img, "platform"), native);
    json_decref(img);
    json_t *s = session_new(harness_eng, body);
    assert_string_equal(jstr(s, "options.platform"), native);
    /* the session's build asked for the platform too: it runs in the image just built */
    char *cp = strdupf("/containers/%s/json", jstr(s, "container_id"));
    struct reply c;
    docker("GET", cp, &c);
    assert_string_equal(jstr(c.json, "Config.Image"), jstr(b, "tags.source"));
    reply_free(&c);
    free(cp);
    json_t *obs = session_run(harness_eng, jstr(s, "id"), "cat /etc/amd");
    assert_string_equal(jstr(obs, "content"), nonce);
    json_decref(obs);
    session_delete(harness_eng, jstr(s, "id"));
    json_decref(s);
    json_decref(b);
    free(body);
    sse_close(ev);
}

/* ---- OpenHands' /build: a multipart form with the base64 of a gzipped tar ---- */

static void tar_add(unsigned char *tar, size_t *off, const char *name, const char *data)
{
    unsigned char *h = tar + *off;
    memset(h, 0, 512);
    snprintf((char *)h, 100, "%s", name);
    snprintf((char *)h + 100, 8, "0000644");
    snprintf((char *)h + 108, 8, "0000000");
    snprintf((char *)h + 116, 8, "0000000");
    snprintf((char *)h + 124, 12, "%011o", (unsigned)strlen(data) & 07777777u);
    memcpy(h + 136, "00000000000", 11);
    h[156] = '0';
    memcpy(h + 257, "ustar", 6);
    memcpy(h + 263, "00", 2);
    memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (int i = 0; i < 512; i++)
        sum += h[i];
    snprintf((char *)h + 148, 8, "%06o", sum);
    memcpy(h + 512, data, strlen(data));
    *off += 512 + (strlen(data) + 511) / 512 * 512;
}

static char *context_b64(const char *dockerfile)
{
    static unsigned char tar[8192];
    memset(tar, 0, sizeof(tar));
    size_t off = 0;
    tar_add(tar, &off, "./Dockerfile", dockerfile);
    tar_add(tar, &off, "./code/readme", "OpenHands' sources would be here\n");
    off += 1024;
    unsigned char gz[8192];
    z_stream z = {0};
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = tar;
    z.avail_in = (uInt)off;
    z.next_out = gz;
    z.avail_out = sizeof(gz);
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    size_t n = sizeof(gz) - z.avail_out;
    deflateEnd(&z);
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc(4 * (n / 3 + 1) + 1);
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = gz[i] << 16 | (i + 1 < n ? gz[i + 1] << 8 : 0) | (i + 2 < n ? gz[i + 2] : 0);
        out[o++] = b64[v >> 18 & 63];
        out[o++] = b64[v >> 12 & 63];
        out[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? b64[v & 63] : '=';
    }
    out[o] = '\0';
    return out;
}

static size_t collect(char *p, size_t size, size_t n, void *ud)
{
    struct reply *r = ud;
    r->body = realloc(r->body, r->len + size * n + 1);
    memcpy(r->body + r->len, p, size * n);
    r->len += size * n;
    r->body[r->len] = '\0';
    return size * n;
}

/* What OpenHands' RemoteRuntimeBuilder sends: context as a file part, target_image, tags. */
static void post_build(const char *context, const char *target, const char *tag, struct reply *r)
{
    memset(r, 0, sizeof(*r));
    CURL *c = curl_easy_init();
    curl_mime *m = curl_mime_init(c);
    curl_mimepart *part = curl_mime_addpart(m);
    curl_mime_name(part, "context");
    curl_mime_filename(part, "context.tar.gz");
    curl_mime_data(part, context, CURL_ZERO_TERMINATED);
    part = curl_mime_addpart(m);
    curl_mime_name(part, "target_image");
    curl_mime_data(part, target, CURL_ZERO_TERMINATED);
    if (tag) {
        part = curl_mime_addpart(m);
        curl_mime_name(part, "tags");
        curl_mime_data(part, tag, CURL_ZERO_TERMINATED);
    }
    curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, harness_eng->socket);
    curl_easy_setopt(c, CURLOPT_URL, "http://localhost/build");
    curl_easy_setopt(c, CURLOPT_MIMEPOST, m);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 30000L);
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    r->json = r->body ? json_loads(r->body, 0, NULL) : NULL;
    curl_mime_free(m);
    curl_easy_cleanup(c);
}

static void test_remote_build(void **state)
{
    /* OpenHands' Dockerfile: only its base counts (paddock runs its own executor) */
    char *df = strdupf("FROM --platform=$BUILDPLATFORM %s AS base\nRUN exit 1\n", HARNESS_IMAGE);
    char *ctx = context_b64(df);
    char *target = strdupf("paddock/runtime:oh_v0_test_%s", nonce);
    char *extra = strdupf("paddock/runtime:oh_v0_test_%s_extra", nonce);
    remember(target);
    remember(extra);
    struct reply r;
    post_build(ctx, target, extra, &r);
    assert_int_equal(r.status, 200);
    const char *id = jstr(r.json, "build_id");
    assert_non_null(id);
    char *p = strdupf("/build_status?build_id=%s", id);
    json_t *st = NULL;
    for (double end = now_ms() + 120000; now_ms() < end; sleep_ms(200)) {
        json_decref(st);
        st = api_json(harness_eng, "GET", p, NULL, 200);
        if (strcmp(jstr(st, "status"), "RUNNING") != 0)
            break;
    }
    assert_string_equal(jstr(st, "status"), "SUCCESS");
    assert_string_equal(jstr(st, "image"), target);
    remember_tags(jpath(st, "paddock"));
    json_t *a = docker_inspect_image(target), *b = docker_inspect_image(extra);
    assert_non_null(a);
    assert_non_null(b);
    assert_string_equal(jstr(a, "Id"), jstr(b, "Id"));
    json_decref(a);
    json_decref(b);
    /* OpenHands then starts it: the executor is in it */
    char *start = strdupf("{\"image\": \"%s\"}", target);
    json_t *s = session_new(harness_eng, start);
    json_t *obs = session_run(harness_eng, jstr(s, "id"), "echo from-openhands-build");
    assert_string_equal(jstr(obs, "content"), "from-openhands-build");
    json_decref(obs);
    session_delete(harness_eng, jstr(s, "id"));
    json_decref(s);
    free(start);
    json_decref(st);
    free(p);
    reply_free(&r);

    /* a context without a Dockerfile, a body that is not multipart, an unknown build */
    post_build("bm90IGd6aXA=", target, NULL, &r);
    assert_int_equal(r.status, 400);
    reply_free(&r);
    json_decref(api_json(harness_eng, "POST", "/build", "{}", 400));
    json_decref(api_json(harness_eng, "GET", "/build_status?build_id=nope", NULL, 404));
    free(ctx);
    free(df);
    free(target);
    free(extra);
}

/* /build's target_image and tags name what the next session of any client runs: a build does
 * not re-point a reference that names another image (here a tag of the engine's base image,
 * made for this test: the base image's own tag is never put at risk), nor take a tag the engine
 * computes from an image's content (pd_...: a session asking for that content would run the
 * build's). Both builds fail saying so; the victim still names its image. */
static void test_remote_build_does_not_repoint(void **state)
{
    (void)state;
    char *victim = strdupf("paddock-hostile-victim:%s", nonce);
    char *esc = curl_easy_escape(NULL, HARNESS_IMAGE, 0);
    char *tp = strdupf("/images/%s/tag?repo=paddock-hostile-victim&tag=%s", esc, nonce);
    struct reply x;
    docker("POST", tp, &x);
    assert_int_equal(x.status, 201);
    reply_free(&x);
    json_t *before = docker_inspect_image(victim);
    assert_non_null(before);
    char *df = strdupf("FROM %s\n", HARNESS_IMAGE);
    char *ctx = context_b64(df);
    char *computed = strdupf("docker.io/paddock/runtime:pd_v0_%s", nonce);
    remember(computed);
    const char *targets[] = {victim, computed};
    const char *want[] = {"already names another image", "a tag the engine computes"};
    for (size_t i = 0; i < 2; i++) {
        struct reply r;
        post_build(ctx, targets[i], NULL, &r);
        assert_int_equal(r.status, 200);
        char *p = strdupf("/build_status?build_id=%s", jstr(r.json, "build_id"));
        json_t *st = NULL;
        for (double end = now_ms() + 120000; now_ms() < end; sleep_ms(200)) {
            json_decref(st);
            st = api_json(harness_eng, "GET", p, NULL, 200);
            if (strcmp(jstr(st, "status"), "RUNNING") != 0)
                break;
        }
        remember_tags(jpath(st, "paddock"));
        if (strcmp(jstr(st, "status"), "FAILURE") != 0 || !jstr(st, "error") ||
            !strstr(jstr(st, "error"), want[i]))
            fail_msg("/build to %s: %s %s", targets[i], jstr(st, "status"),
                     jstr(st, "error") ? jstr(st, "error") : "");
        json_decref(st);
        free(p);
        reply_free(&r);
    }
    json_t *after = docker_inspect_image(victim);
    assert_non_null(after);
    assert_string_equal(jstr(after, "Id"), jstr(before, "Id"));
    json_t *none = docker_inspect_image(computed);
    assert_null(none);
    /* the victim tag goes (by name: an untag, the base image keeps its own) */
    char *vp = strdupf("/images/%s", victim);
    docker("DELETE", vp, &x);
    reply_free(&x);
    free(vp);
    json_decref(after);
    json_decref(before);
    free(computed);
    free(ctx);
    free(df);
    free(tp);
    curl_free(esc);
    free(victim);
}

/* ---- a base image the daemon does not have ---- */

#define MISSING_IMAGE "paddock-test-missing/none:never"

static size_t images_with_base_missing(void)
{
    char *e = curl_easy_escape(NULL, "{\"label\":[\"paddock.base=" MISSING_IMAGE "\"]}", 0);
    char *p = strdupf("/images/json?all=1&filters=%s", e);
    struct reply r;
    docker("GET", p, &r);
    assert_int_equal(r.status, 200);
    size_t n = json_array_size(r.json);
    reply_free(&r);
    free(p);
    curl_free(e);
    return n;
}

/* The daemon's reason follows the image, in parentheses, whatever it is on this machine. */
static void assert_names_missing(const char *msg)
{
    const char *head = "image " MISSING_IMAGE " is not here and could not be pulled (";
    assert_non_null(msg);
    assert_non_null(strstr(msg, head));
    assert_true(strstr(msg, head)[strlen(head)] != ')');
}

static void test_missing_base(void **state)
{
    struct sse *ev = sse_open(harness_eng->socket, "/v1/events");
    /* POST /v1/images, waiting: the failure is the answer. */
    struct reply r;
    api(harness_eng, "POST", "/v1/images", "{\"image\": \"" MISSING_IMAGE "\"}", &r);
    assert_int_equal(r.status, 400);
    assert_string_equal(jstr(r.json, "error.code"), "image_not_found");
    assert_names_missing(jstr(r.json, "error.message"));
    const char *id = jstr(r.json, "error.build");
    assert_non_null(id);
    assert_non_null(sse_wait(ev, "build", "build", id, "stage", "pull", 10000));
    json_t *failed = sse_wait(ev, "build", "build", id, "stage", "failed", 10000);
    assert_non_null(failed);
    assert_string_equal(jstr(failed, "message"), jstr(r.json, "error.message"));
    json_t *b = wait_build(id, 1000);
    assert_string_equal(jstr(b, "state"), "failed");
    assert_string_equal(jstr(b, "error"), jstr(r.json, "error.message"));
    json_decref(b);
    reply_free(&r);

    /* Without wait: 202 at the pull, then the build's record says why. */
    json_t *started = api_json(harness_eng, "POST", "/v1/images",
                               "{\"image\": \"" MISSING_IMAGE "\", \"setup\": [\"echo never\"], "
                               "\"wait\": false}",
                               202);
    b = wait_build(jstr(started, "id"), 60000);
    assert_string_equal(jstr(b, "state"), "failed");
    assert_names_missing(jstr(b, "error"));
    json_decref(b);
    json_decref(started);

    /* OpenHands' /build of a Dockerfile FROM it: accepted, then FAILURE with the reason. */
    char *ctx = context_b64("FROM " MISSING_IMAGE "\nRUN exit 1\n");
    char *target = strdupf("paddock/runtime:oh_v0_missing_%s", nonce);
    post_build(ctx, target, NULL, &r);
    assert_int_equal(r.status, 200);
    char *p = strdupf("/build_status?build_id=%s", jstr(r.json, "build_id"));
    json_t *st = NULL;
    for (double end = now_ms() + 60000; now_ms() < end; sleep_ms(100)) {
        json_decref(st);
        st = api_json(harness_eng, "GET", p, NULL, 200);
        if (strcmp(jstr(st, "status"), "RUNNING") != 0)
            break;
    }
    assert_string_equal(jstr(st, "status"), "FAILURE");
    assert_names_missing(jstr(st, "error"));
    assert_null(docker_inspect_image(target));
    json_decref(st);
    free(p);
    reply_free(&r);
    free(target);
    free(ctx);

    /* Nothing made from it, and no image of that name. */
    assert_null(docker_inspect_image(MISSING_IMAGE));
    assert_int_equal(images_with_base_missing(), 0);
    sse_close(ev);
}

static void test_cli(void **state)
{
    char *step = strdupf("echo %s > /etc/cli", nonce);
    char *const argv[] = {(char *)harness_bin(),
                          "--socket",
                          harness_eng->socket,
                          "--state-dir",
                          harness_eng->state_dir,
                          "build",
                          "--setup",
                          step,
                          NULL};
    struct proc_result res;
    proc_run(argv, NULL, 120000, &res);
    assert_int_equal(res.status, 0);
    assert_non_null(strstr(res.out, "source     paddock/runtime:pd_v"));
    char source[256] = "";
    assert_int_equal(sscanf(strstr(res.out, "source"), "source %255s", source), 1);
    remember(source);
    char lock[256] = "";
    assert_int_equal(sscanf(strstr(res.out, "lock "), "lock %255s", lock), 1);
    remember(lock);
    proc_result_free(&res);

    char *const list[] = {(char *)harness_bin(),
                          "--socket",
                          harness_eng->socket,
                          "--state-dir",
                          harness_eng->state_dir,
                          "images",
                          NULL};
    proc_run(list, NULL, 30000, &res);
    assert_int_equal(res.status, 0);
    assert_non_null(strstr(res.out, "TAG"));
    assert_non_null(strstr(res.out, source));
    proc_result_free(&res);

    char *const rm[] = {(char *)harness_bin(),
                        "--socket",
                        harness_eng->socket,
                        "--state-dir",
                        harness_eng->state_dir,
                        "images",
                        "rm",
                        source,
                        NULL};
    proc_run(rm, NULL, 30000, &res);
    assert_int_equal(res.status, 0);
    proc_result_free(&res);
    json_t *gone = docker_inspect_image(source);
    assert_null(gone);

    if (!foreign[0])
        pick_platforms();
    char *const arm[] = {(char *)harness_bin(),
                         "--socket",
                         harness_eng->socket,
                         "--state-dir",
                         harness_eng->state_dir,
                         "build",
                         "--platform",
                         foreign,
                         NULL};
    proc_run(arm, NULL, 30000, &res);
    assert_int_equal(res.status, 1);
    assert_non_null(strstr(res.err, "cannot run on this Docker daemon"));
    proc_result_free(&res);
    free(step);
}

/* Exactly what this run made: by id, children (the executor layer) before their parents. */
static int remove_made(void **state)
{
    json_t *ids = json_array();
    size_t i;
    json_t *ref;
    json_array_foreach(made, i, ref)
    {
        json_t *img = docker_inspect_image(json_string_value(ref));
        if (img && test_label(img))
            json_array_append_new(ids, json_string(jstr(img, "Id")));
        json_decref(img);
    }
    for (int pass = 0; pass < 3; pass++) {
        json_t *id;
        json_array_foreach(ids, i, id)
        {
            char *d = strdupf("/images/%s?force=1", json_string_value(id));
            struct reply x;
            docker("DELETE", d, &x);
            reply_free(&x);
            free(d);
        }
    }
    json_decref(ids);
    json_decref(made);
    return harness_group_teardown_clean(state);
}

int main(void)
{
    harness_require();
    made = json_array();
    snprintf(nonce, sizeof(nonce), "t%ld%d", (long)time(NULL), (int)getpid());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_events_tags_reuse),
        cmocka_unit_test(test_no_wait_then_status),
        cmocka_unit_test(test_list_and_remove),
        cmocka_unit_test(test_agent_steps_follow_security),
        cmocka_unit_test(test_platform),
        cmocka_unit_test(test_remote_build),
        cmocka_unit_test(test_remote_build_does_not_repoint),
        cmocka_unit_test(test_missing_base),
        cmocka_unit_test(test_cli),
    };
    int failed = cmocka_run_group_tests_name("images", tests, harness_group_setup, remove_made);
    return failed || harness_teardown_failed ? 1 : 0;
}
