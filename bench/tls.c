/* paddock-bench-tls: an action over the engine's TLS listener versus its unix socket, in the
 * same run on the same engine and session: `echo hi` interleaved over the unix socket, over
 * https on a kept connection (the engine keeps one after a reply that is not an error:
 * api_queue in engine/api.c; what an agent's HTTP client or the dashboard does), and over
 * https with a new connection and a full handshake each time (no session cache: what one
 * `paddock` command costs); medians and p95. The certificate is made with the openssl CLI in a
 * temp dir.
 *
 *   paddock-bench-tls --paddock build/paddock [--image IMG] [--echo N]
 * Containers are labelled paddock.test=bench and removed with their session. */
#include "bench.h"

#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define ECHO "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"echo hi\"}}}"

struct tls_bench {
    char dir[64], sock[128], ca[128], url[128], auth[160];
    pid_t pid;
    CURL *unix_h, *tls_h;
    char *sid;
};

/* One request over https on handle h (on its kept connection unless fresh); the HTTP status,
 * -1: transport. */
static long tls_req(struct tls_bench *b, CURL *h, const char *method, const char *path,
                    const char *payload, bool fresh)
{
    char url[512];
    struct bench_body body = {0};
    snprintf(url, sizeof(url), "%s%s", b->url, path);
    curl_easy_reset(h);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CAINFO, b->ca);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, bench_on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
    if (fresh) {
        curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
        curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
        curl_easy_setopt(h, CURLOPT_SSL_SESSIONID_CACHE, 0L);
    }
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    hdr = curl_slist_append(hdr, "Expect:");
    hdr = curl_slist_append(hdr, b->auth);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    if (payload)
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, payload);
    long status = -1;
    if (curl_easy_perform(h) == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(hdr);
    free(body.p);
    return status;
}

static int tls_sh(const char *cmd)
{
    int rc = system(cmd);
    return rc == 0 ? 0 : -1;
}

/* A CA and a certificate for 127.0.0.1 in b->dir. */
static int tls_certs(struct tls_bench *b)
{
    char cmd[2048];
    snprintf(cmd, sizeof(cmd),
             "cd '%s' && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
             "-keyout ca-key.pem -out ca.pem -days 1 -subj '/CN=bench CA' 2>/dev/null && "
             "openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout key.pem "
             "-out csr.pem -subj '/CN=127.0.0.1' 2>/dev/null && "
             "printf 'subjectAltName=IP:127.0.0.1\\n' > ext && "
             "openssl x509 -req -in csr.pem -CA ca.pem -CAkey ca-key.pem -CAcreateserial "
             "-out cert.pem -days 1 -extfile ext 2>/dev/null",
             b->dir);
    return tls_sh(cmd);
}

static int tls_up(struct tls_bench *b, const char *paddock, const char *image)
{
    snprintf(b->dir, sizeof(b->dir), "/tmp/paddock-benchtls-XXXXXX");
    if (!mkdtemp(b->dir) || tls_certs(b) < 0) {
        fprintf(stderr, "bench: no certificate (openssl)\n");
        return -1;
    }
    snprintf(b->sock, sizeof(b->sock), "%s/engine.sock", b->dir);
    snprintf(b->ca, sizeof(b->ca), "%s/ca.pem", b->dir);
    char log[128], cert[128], key[128];
    snprintf(log, sizeof(log), "%s/engine.log", b->dir);
    snprintf(cert, sizeof(cert), "%s/cert.pem", b->dir);
    snprintf(key, sizeof(key), "%s/key.pem", b->dir);
    b->pid = fork();
    if (b->pid == 0) {
        if (!freopen(log, "w", stderr))
            _exit(126);
        setenv("PADDOCK_TEST_LABEL", "bench", 1);
        setenv("PADDOCK_CONFIRM", "never", 1);
        if (image)
            setenv("PADDOCK_IMAGE", image, 1);
        execl(paddock, paddock, "serve", "--state-dir", b->dir, "--socket", b->sock, "--listen",
              "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key, (char *)NULL);
        _exit(127);
    }
    b->unix_h = curl_easy_init();
    b->tls_h = curl_easy_init();
    json_t *info = NULL;
    for (int i = 0; i < 1000 && !info; i++) {
        if (req_on(b->unix_h, b->sock, "GET", "/v1/info", NULL, &info) != 200) {
            json_decref(info);
            info = NULL;
            usleep(10000);
        }
    }
    const char *addr =
        json_string_value(json_object_get(json_object_get(info, "listen"), "address"));
    const char *tfile =
        json_string_value(json_object_get(json_object_get(info, "listen"), "token_file"));
    char tok[128] = "";
    FILE *f = tfile ? fopen(tfile, "r") : NULL;
    if (f && fgets(tok, sizeof(tok), f))
        tok[strcspn(tok, "\r\n")] = '\0';
    if (f)
        fclose(f);
    if (addr)
        snprintf(b->url, sizeof(b->url), "https://%s", addr);
    json_decref(info);
    snprintf(b->auth, sizeof(b->auth), "Authorization: Bearer %s", tok);
    if (!b->url[0] || !tok[0]) {
        fprintf(stderr, "bench: the TLS engine did not answer (log: %s)\n", log);
        return -1;
    }
    json_t *j = NULL;
    long st = req_on(b->unix_h, b->sock, "POST", "/v1/sessions", "{}", &j);
    const char *id = json_string_value(json_object_get(j, "id"));
    b->sid = st == 201 && id ? strdup(id) : NULL;
    json_decref(j);
    if (!b->sid)
        fprintf(stderr, "bench: no session (%ld)\n", st);
    return b->sid ? 0 : -1;
}

static void tls_down(struct tls_bench *b)
{
    if (b->sid) {
        char path[128];
        snprintf(path, sizeof(path), "/v1/sessions/%s", b->sid);
        req_on(b->unix_h, b->sock, "DELETE", path, NULL, NULL);
        free(b->sid);
    }
    if (b->pid > 0) {
        kill(b->pid, SIGTERM);
        waitpid(b->pid, NULL, 0);
    }
    if (b->unix_h)
        curl_easy_cleanup(b->unix_h);
    if (b->tls_h)
        curl_easy_cleanup(b->tls_h);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", b->dir);
    if (tls_sh(cmd) < 0)
        fprintf(stderr, "bench: could not remove %s\n", b->dir);
}

/* One `echo hi` by way k (0 unix, 1 TLS kept, 2 TLS full handshake); ms, or -1. */
static double tls_echo(struct tls_bench *b, int k)
{
    char path[128];
    snprintf(path, sizeof(path), "/v1/sessions/%s/execute_action", b->sid);
    double t0 = now_ms();
    long st = k == 0 ? req_on(b->unix_h, b->sock, "POST", path, ECHO, NULL)
                     : tls_req(b, b->tls_h, "POST", path, ECHO, k == 2);
    double ms = now_ms() - t0;
    return st == 200 ? ms : -1;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {{"paddock", required_argument, NULL, 'p'},
                                         {"image", required_argument, NULL, 'i'},
                                         {"echo", required_argument, NULL, 'e'},
                                         {NULL, 0, NULL, 0}};
    const char *paddock = "build/paddock", *image = NULL;
    int n = 300, c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'p')
            paddock = optarg;
        else if (c == 'i')
            image = optarg;
        else if (c == 'e')
            n = atoi(optarg) > 0 ? atoi(optarg) : n;
        else
            return 2;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    struct tls_bench b = {0};
    int rc = 1;
    static const char *const what[] = {
        "echo hi, unix socket",
        "echo hi, TLS listener (connection kept)",
        "echo hi, TLS listener (full handshake)",
    };
    struct timings t[3] = {{0}};
    if (tls_up(&b, paddock, image) == 0) {
        for (int k = 0; k < 3; k++) /* warm up each way (and the kept connections) */
            tls_echo(&b, k);
        int failed = 0;
        /* Interleaved in a rotating order: each way sees the same machine. */
        for (int i = 0; i < n; i++)
            for (int j = 0; j < 3; j++) {
                int k = (i + j) % 3;
                double ms = tls_echo(&b, k);
                if (ms < 0)
                    failed++;
                else
                    timings_add(&t[k], ms);
            }
        printf("\n## an action over TLS versus the unix socket (one engine, one session, %d each, "
               "interleaved)\n\n",
               n);
        printf("| %-56s | %9s | %9s | %6s |\n", "", "median ms", "p95 ms", "n");
        printf("|%s|-----------|-----------|--------|\n",
               "----------------------------------------------------------");
        for (int k = 0; k < 3; k++)
            printf("| %-56s | %9.3f | %9.3f | %6zu |\n", what[k], timings_pct(&t[k], 0.5),
                   timings_pct(&t[k], 0.95), t[k].n);
        printf("\nTLS adds %.3f ms at the median on a kept connection, %.3f ms with a full "
               "handshake%s\n",
               timings_pct(&t[1], 0.5) - timings_pct(&t[0], 0.5),
               timings_pct(&t[2], 0.5) - timings_pct(&t[0], 0.5),
               failed ? " (some actions failed: see the engine log)" : "");
        rc = failed ? 1 : 0;
    }
    tls_down(&b);
    for (int k = 0; k < 3; k++)
        free(t[k].v);
    curl_global_cleanup();
    return rc;
}
