/* paddock-bench-egress-floor: what any relay costs on this machine, whatever the engine does
 * (docs/egress.md, "Throughput"). A server process answers a one-byte request with SIZE bytes;
 * this process downloads them into a 1 MiB buffer directly and through a relay process of each
 * kind: recv/send through a 1 MiB buffer (the engine's way), splice through a 1 MiB pipe, a
 * BPF sockmap redirecting each skb to the peer socket in the kernel (needs CAP_BPF and
 * CAP_NET_ADMIN, else skipped with the reason). Each round runs every kind once, the order
 * rotating, so bursts of others' load hit all kinds alike. Per kind: best and median MB/s, CPU
 * per GB of the whole machine (/proc/stat) and of the bench's own processes, best / direct.
 * On 127.0.0.1 at ports the kernel chooses; its processes die with it, ended by PID and reaped.
 *
 *   paddock-bench-egress-floor [--size BYTES] [--rounds N]   (default 1 GiB, 5 rounds)
 */
#include "procstat.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/bpf.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FLOOR_BUF (1 << 20)
#define FLOOR_ERR 512
#define FLOOR_MAX_ROUNDS 100
#define FLOOR_STALL_S 60 /* no byte for this long: a relay is stuck, the bench stops */

enum floor_kind { FLOOR_DIRECT, FLOOR_RECVSEND, FLOOR_SPLICE, FLOOR_SOCKMAP, FLOOR_KINDS };

struct floor_bench {
    long long size;
    uint16_t port[FLOOR_KINDS]; /* where the client connects for each kind (direct: the server) */
    pid_t pid[FLOOR_KINDS];     /* each kind's relay (direct: the server); 0 when none */
    int sockmap, peers, prog;   /* the sockmap kind's BPF objects, -1 when not loaded */
    char skipped[FLOOR_KINDS][FLOOR_ERR]; /* why a kind is not measured; "" when it is */
    double mbps[FLOOR_KINDS][FLOOR_MAX_ROUNDS];
    int runs[FLOOR_KINDS];
    double machine[FLOOR_KINDS], own[FLOOR_KINDS]; /* CPU ms over the downloads */
};

/* What a relay kind does with one connection (c: the client's socket, s: the server's): attach
 * runs before the request reaches the server, pump until the download's end. 0, or -1 with
 * err (FLOOR_ERR bytes). */
typedef int floor_conn_fn(struct floor_bench *b, int c, int s, char *err);

static floor_conn_fn floor_pump_recvsend, floor_pump_splice, floor_sockmap_attach,
    floor_pump_sockmap;

static const struct floor_kind_row {
    const char *name;
    floor_conn_fn *attach, *pump; /* pump NULL: no relay */
} floor_kinds[FLOOR_KINDS] = {
    [FLOOR_DIRECT] = {.name = "direct"},
    [FLOOR_RECVSEND] = {.name = "recvsend", .pump = floor_pump_recvsend},
    [FLOOR_SPLICE] = {.name = "splice", .pump = floor_pump_splice},
    [FLOOR_SOCKMAP] = {.name = "sockmap",
                       .attach = floor_sockmap_attach,
                       .pump = floor_pump_sockmap},
};

/* err = "what: errno's text"; errno is kept for the caller to tell causes apart. */
static int floor_fail(char *err, const char *what)
{
    int saved = errno;
    snprintf(err, FLOOR_ERR, "%s: %s", what, strerror(saved));
    errno = saved;
    return -1;
}

static int floor_send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0)
            return -1;
        p += w, n -= (size_t)w;
    }
    return 0;
}

/* A socket connected to 127.0.0.1:*port, or with *port 0 one listening there at a port the
 * kernel chose (*port set); -1 with err. */
static int floor_socket(uint16_t *port, char *err)
{
    struct sockaddr_in a = {
        .sin_family = AF_INET, .sin_port = htons(*port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && (*port ? connect(fd, (struct sockaddr *)&a, len) == 0
                          : bind(fd, (struct sockaddr *)&a, len) == 0 && listen(fd, 16) == 0 &&
                                getsockname(fd, (struct sockaddr *)&a, &len) == 0)) {
        *port = ntohs(a.sin_port);
        return fd;
    }
    floor_fail(err, *port ? "connecting on 127.0.0.1" : "listening on 127.0.0.1");
    if (fd >= 0)
        close(fd);
    return -1;
}

/* The server: each connection's one-byte request is answered with size bytes, then closed.
 * Returns only on error. */
static int floor_serve(struct floor_bench *b, int l, enum floor_kind kind, char *err)
{
    static char buf[FLOOR_BUF];
    memset(buf, 'x', sizeof(buf));
    for (;;) {
        int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0)
            return floor_fail(err, "accept");
        char req;
        long long left = recv(c, &req, 1, 0) == 1 ? b->size : 0;
        while (left > 0) {
            ssize_t n = send(c, buf, left < FLOOR_BUF ? (size_t)left : FLOOR_BUF, MSG_NOSIGNAL);
            if (n < 0)
                break; /* the client went away: its side reports it */
            left -= n;
        }
        close(c);
    }
}

/* A relay of one kind: for each client, its request read, the server connected, the request
 * forwarded, the download relayed. Returns only on error. */
static int floor_relay(struct floor_bench *b, int l, enum floor_kind kind, char *err)
{
    const struct floor_kind_row *k = &floor_kinds[kind];
    for (;;) {
        int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0)
            return floor_fail(err, "accept");
        char req;
        if (recv(c, &req, 1, 0) != 1) { /* a client gone before its request */
            close(c);
            continue;
        }
        uint16_t port = b->port[FLOOR_DIRECT];
        int s = floor_socket(&port, err), rc = s < 0 ? -1 : 0;
        if (rc == 0 && k->attach)
            rc = k->attach(b, c, s, err);
        if (rc == 0 && floor_send_all(s, &req, 1) < 0)
            rc = floor_fail(err, "send the request");
        if (rc == 0)
            rc = k->pump(b, c, s, err);
        if (s >= 0)
            close(s);
        close(c);
        if (rc < 0)
            return -1;
    }
}

static int floor_pump_recvsend(struct floor_bench *b, int c, int s, char *err)
{
    static char buf[FLOOR_BUF];
    ssize_t n;
    while ((n = recv(s, buf, sizeof(buf), 0)) > 0)
        if (floor_send_all(c, buf, (size_t)n) < 0)
            return floor_fail(err, "send to the client");
    return n < 0 ? floor_fail(err, "recv from the server") : 0;
}

static int floor_pump_splice(struct floor_bench *b, int c, int s, char *err)
{
    int p[2], rc = 0;
    ssize_t n;
    if (pipe2(p, O_CLOEXEC) < 0)
        return floor_fail(err, "pipe");
    if (fcntl(p[1], F_SETPIPE_SZ, FLOOR_BUF) < 0)
        rc = floor_fail(err, "a 1 MiB pipe (F_SETPIPE_SZ; /proc/sys/fs/pipe-max-size)");
    while (rc == 0 && (n = splice(s, NULL, p[1], NULL, FLOOR_BUF, SPLICE_F_MOVE)) != 0) {
        if (n < 0)
            rc = floor_fail(err, "splice from the server");
        while (rc == 0 && n > 0) {
            ssize_t w = splice(p[0], NULL, c, NULL, (size_t)n, SPLICE_F_MOVE);
            if (w < 0)
                rc = floor_fail(err, "splice to the client");
            n -= w;
        }
    }
    close(p[0]);
    close(p[1]);
    return rc;
}

static int floor_bpf(int cmd, union bpf_attr a)
{
    return (int)syscall(SYS_bpf, cmd, &a, sizeof(a));
}

/* One element of a map looked up, updated (flags 0: BPF_ANY) or deleted (value NULL). */
static int floor_bpf_elem(int cmd, int map, const void *key, const void *value)
{
    return floor_bpf(cmd, (union bpf_attr){.map_fd = (uint32_t)map,
                                           .key = (uintptr_t)key,
                                           .value = (uintptr_t)value});
}

/* The value of the peers map, keyed by a socket's cookie: the slot of the socket its bytes go
 * to, and how many the program redirected there. */
struct floor_peer {
    uint32_t slot, pad;
    uint64_t bytes;
};

#define FLOOR_INSN(c, d, s, o, i)                                                                  \
    ((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})
#define FLOOR_MAP(reg, fd)                                                                         \
    FLOOR_INSN(BPF_LD | BPF_DW | BPF_IMM, reg, BPF_PSEUDO_MAP_FD, 0, fd), FLOOR_INSN(0, 0, 0, 0, 0)

/* The sockmap, the peers map and the verdict program (attached to the sockmap): every skb that
 * arrives on a socket in the map is counted and sent out of its peer's socket. 0, or -1 with
 * err; the descriptors are b's. */
static int floor_sockmap_open(struct floor_bench *b, char *err)
{
    union bpf_attr map = {.map_type = BPF_MAP_TYPE_SOCKMAP, .key_size = 4, .value_size = 4};
    map.max_entries = 2; /* the relay's two sockets */
    if ((b->sockmap = floor_bpf(BPF_MAP_CREATE, map)) < 0)
        return floor_fail(err, "bpf(BPF_MAP_CREATE) of a sockmap");
    map.map_type = BPF_MAP_TYPE_HASH, map.key_size = 8, map.value_size = sizeof(struct floor_peer);
    if ((b->peers = floor_bpf(BPF_MAP_CREATE, map)) < 0)
        return floor_fail(err, "bpf(BPF_MAP_CREATE) of a hash");
    const struct bpf_insn prog[] = {
        FLOOR_INSN(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0), /* r6 = the skb */
        FLOOR_INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_socket_cookie),
        FLOOR_INSN(BPF_STX | BPF_MEM | BPF_DW, 10, 0, -8, 0), /* the key on the stack */
        FLOOR_MAP(1, b->peers),
        FLOOR_INSN(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0),
        FLOOR_INSN(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -8),
        FLOOR_INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
        FLOOR_INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 9, 0),           /* no peer: pass it up */
        FLOOR_INSN(BPF_LDX | BPF_MEM | BPF_W, 1, 6, 0, 0),           /* skb->len */
        FLOOR_INSN(BPF_STX | BPF_ATOMIC | BPF_DW, 0, 1, 8, BPF_ADD), /* peer->bytes += len */
        FLOOR_INSN(BPF_LDX | BPF_MEM | BPF_W, 3, 0, 0, 0),           /* peer->slot */
        FLOOR_INSN(BPF_ALU64 | BPF_MOV | BPF_X, 1, 6, 0, 0),
        FLOOR_MAP(2, b->sockmap),
        FLOOR_INSN(BPF_ALU64 | BPF_MOV | BPF_K, 4, 0, 0, 0), /* to the peer's egress */
        FLOOR_INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_sk_redirect_map),
        FLOOR_INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
        FLOOR_INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, SK_PASS),
        FLOOR_INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
    };
    b->prog = floor_bpf(BPF_PROG_LOAD, (union bpf_attr){.prog_type = BPF_PROG_TYPE_SK_SKB,
                                                        .insns = (uintptr_t)prog,
                                                        .insn_cnt = sizeof(prog) / sizeof(prog[0]),
                                                        .license = (uintptr_t) "GPL"});
    if (b->prog < 0)
        return floor_fail(err, "bpf(BPF_PROG_LOAD) of an SK_SKB verdict program");
    if (floor_bpf(BPF_PROG_ATTACH, (union bpf_attr){.target_fd = (uint32_t)b->sockmap,
                                                    .attach_bpf_fd = (uint32_t)b->prog,
                                                    .attach_type = BPF_SK_SKB_VERDICT}) < 0)
        return floor_fail(err, "bpf(BPF_PROG_ATTACH) to the sockmap");
    return 0;
}

static uint64_t floor_cookie(int fd)
{
    uint64_t cookie = 0;
    socklen_t len = sizeof(cookie);
    getsockopt(fd, SOL_SOCKET, SO_COOKIE, &cookie, &len);
    return cookie;
}

/* Both sockets go in (the client's at slot 0, the server's at 1, each cookie's entry naming
 * the other's slot) before the request is forwarded: the program never sees the bytes queued
 * on a socket before it enters the map. */
static int floor_sockmap_attach(struct floor_bench *b, int c, int s, char *err)
{
    for (uint32_t slot = 0; slot < 2; slot++) {
        uint32_t fd = (uint32_t)(slot ? s : c);
        uint64_t cookie = floor_cookie((int)fd);
        struct floor_peer peer = {.slot = !slot};
        if (floor_bpf_elem(BPF_MAP_UPDATE_ELEM, b->sockmap, &slot, &fd) < 0 ||
            floor_bpf_elem(BPF_MAP_UPDATE_ELEM, b->peers, &cookie, &peer) < 0)
            return floor_fail(err, "a socket into the sockmap");
    }
    return 0;
}

/* The kernel moves the bytes; the relay only passes the end on: after the server's FIN, once
 * the client has acknowledged every byte redirected to it (its socket's tcpi_bytes_acked),
 * closing the client's socket sends the FIN there. A stall ends the client's wait (its
 * FLOOR_STALL_S), and the bench ends this process. */
static int floor_pump_sockmap(struct floor_bench *b, int c, int s, char *err)
{
    struct pollfd pf = {.fd = s, .events = POLLRDHUP};
    struct tcp_info ti = {0};
    socklen_t len = sizeof(ti);
    uint64_t cookie[2] = {floor_cookie(s), floor_cookie(c)};
    struct floor_peer server = {0};
    if (poll(&pf, 1, -1) < 0 ||
        floor_bpf_elem(BPF_MAP_LOOKUP_ELEM, b->peers, &cookie[0], &server) < 0)
        return floor_fail(err, "waiting for the server's end");
    while (getsockopt(c, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 &&
           ti.tcpi_bytes_acked < server.bytes)
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    if (ti.tcpi_bytes_acked < server.bytes)
        return floor_fail(err, "TCP_INFO");
    for (int i = 0; i < 2; i++) /* the sockets leave the sockmap as they close; these go too */
        if (floor_bpf_elem(BPF_MAP_DELETE_ELEM, b->peers, &cookie[i], NULL) < 0)
            return floor_fail(err, "removing a peer entry");
    return 0;
}

/* Runs fn in a child process that dies with this one; its pid goes into b->pid[kind]. */
static int floor_spawn(struct floor_bench *b, int l, enum floor_kind kind, const char *what,
                       int (*fn)(struct floor_bench *, int, enum floor_kind, char *), char *err)
{
    pid_t parent = getpid(), pid = fork();
    if (pid < 0)
        return floor_fail(err, "fork");
    if (pid == 0) {
        char child_err[FLOOR_ERR] = "";
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
            floor_fail(child_err, "prctl(PR_SET_PDEATHSIG)");
        else if (getppid() == parent)
            fn(b, l, kind, child_err);
        fprintf(stderr, "paddock-bench-egress-floor: %s: %s\n", what, child_err);
        _exit(1);
    }
    b->pid[kind] = pid;
    return 0;
}

static void floor_stop(struct floor_bench *b)
{
    for (int k = 0; k < FLOOR_KINDS; k++)
        if (b->pid[k] > 0) {
            kill(b->pid[k], SIGTERM);
            while (waitpid(b->pid[k], NULL, 0) < 0 && errno == EINTR)
                ;
            b->pid[k] = 0;
        }
    int fds[] = {b->sockmap, b->peers, b->prog};
    for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* The server and one relay per kind that can run here; 0, or -1 with err. */
static int floor_start(struct floor_bench *b, char *err)
{
    int l = floor_socket(&b->port[FLOOR_DIRECT], err);
    if (l < 0)
        return -1;
    int rc = floor_spawn(b, l, FLOOR_DIRECT, "server", floor_serve, err);
    close(l);
    if (rc < 0)
        return -1;
    if (floor_sockmap_open(b, b->skipped[FLOOR_SOCKMAP]) < 0 && errno == EPERM)
        strncat(b->skipped[FLOOR_SOCKMAP], " (the sockmap kind needs CAP_BPF and CAP_NET_ADMIN)",
                FLOOR_ERR - strlen(b->skipped[FLOOR_SOCKMAP]) - 1);
    for (int k = FLOOR_RECVSEND; k < FLOOR_KINDS; k++) {
        if (b->skipped[k][0])
            continue;
        if ((l = floor_socket(&b->port[k], err)) < 0)
            return -1;
        rc = floor_spawn(b, l, (enum floor_kind)k, floor_kinds[k].name, floor_relay, err);
        close(l);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* The CPU of this process (the client), the server and kind's relay, ms; kernel threads working
 * for them (softirq, a sockmap's backlog worker) are not in it. */
static double floor_own_ms(struct floor_bench *b, enum floor_kind kind)
{
    return procstat_cpu_ms(getpid()) + procstat_cpu_ms(b->pid[FLOOR_DIRECT]) +
           (kind == FLOOR_DIRECT ? 0 : procstat_cpu_ms(b->pid[kind]));
}

/* One download of b->size bytes through kind's port; its seconds, or -1 with err. */
static double floor_download(struct floor_bench *b, enum floor_kind kind, char *err)
{
    static char buf[FLOOR_BUF];
    struct timespec t0, t1;
    struct timeval stall = {.tv_sec = FLOOR_STALL_S};
    long long got = 0;
    ssize_t n = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint16_t port = b->port[kind];
    int fd = floor_socket(&port, err);
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &stall, sizeof(stall));
    if (send(fd, "g", 1, MSG_NOSIGNAL) == 1)
        while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
            got += n;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    int saved = errno;
    close(fd);
    if (n < 0 || got != b->size) {
        snprintf(err, FLOOR_ERR, "%s: %lld of %lld bytes arrived%s%s", floor_kinds[kind].name, got,
                 b->size, n < 0 ? ": " : "", n < 0 ? strerror(saved) : "");
        return -1;
    }
    return (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

/* Every round runs every kind once, starting one kind further each round. */
static int floor_rounds(struct floor_bench *b, int rounds, char *err)
{
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < FLOOR_KINDS; i++) {
            int k = (r + i) % FLOOR_KINDS;
            if (b->skipped[k][0])
                continue;
            double m0 = procstat_machine_ms(), o0 = floor_own_ms(b, k);
            double secs = floor_download(b, (enum floor_kind)k, err);
            if (secs < 0)
                return -1;
            b->machine[k] += procstat_machine_ms() - m0;
            b->own[k] += floor_own_ms(b, k) - o0;
            b->mbps[k][b->runs[k]++] = (double)b->size / secs / 1e6;
        }
    return 0;
}

static int floor_cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static void floor_loadavg(char *out, size_t len)
{
    FILE *f = fopen("/proc/loadavg", "r");
    float l1 = 0, l5 = 0, l15 = 0;
    if (!f || fscanf(f, "%f %f %f", &l1, &l5, &l15) != 3)
        l1 = l5 = l15 = -1;
    if (f)
        fclose(f);
    snprintf(out, len, "%.2f %.2f %.2f", l1, l5, l15);
}

static void floor_print(struct floor_bench *b, int rounds, const char *load0)
{
    char load1[64];
    double direct = 0;
    floor_loadavg(load1, sizeof(load1));
    printf("egress floor: %lld-byte downloads on 127.0.0.1, %d rounds, the kinds interleaved\n"
           "load average %s before, %s after\n",
           b->size, rounds, load0, load1);
    printf("%-10s %10s %12s %19s %15s %14s\n", "kind", "best MB/s", "median MB/s",
           "machine CPU ms/GB", "own CPU ms/GB", "best / direct");
    for (int k = 0; k < FLOOR_KINDS; k++) {
        if (b->skipped[k][0]) {
            printf("%-10s skipped: %s\n", floor_kinds[k].name, b->skipped[k]);
            continue;
        }
        int n = b->runs[k];
        double *v = b->mbps[k];
        qsort(v, (size_t)n, sizeof(double), floor_cmp);
        double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        double gb = (double)b->size * n / 1e9;
        if (k == FLOOR_DIRECT)
            direct = v[n - 1];
        printf("%-10s %10.0f %12.0f %19.0f %15.0f %12.0f %%\n", floor_kinds[k].name, v[n - 1], med,
               b->machine[k] / gb, b->own[k] / gb, v[n - 1] / direct * 100);
    }
    printf("CPU over each kind's downloads: machine = /proc/stat's user+nice+system+irq+softirq\n"
           "(kernel threads and others' work included), own = /proc/PID/stat of the client, the\n"
           "server and the relay\n");
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {{"size", required_argument, NULL, 's'},
                                         {"rounds", required_argument, NULL, 'r'},
                                         {NULL, 0, NULL, 0}};
    static struct floor_bench b = {.size = 1LL << 30, .sockmap = -1, .peers = -1, .prog = -1};
    long long rounds = 5;
    char *end = NULL, err[FLOOR_ERR] = "", load0[64];
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        long long *v = c == 's' ? &b.size : c == 'r' ? &rounds : NULL;
        if (v)
            *v = strtoll(optarg, &end, 10);
        if (!v || *end || b.size < 1 || rounds < 1 || rounds > FLOOR_MAX_ROUNDS) {
            fprintf(stderr,
                    "usage: %s [--size BYTES] [--rounds N]   (size >= 1, default 1 GiB; "
                    "1 <= N <= %d, default 5)\n",
                    argv[0], FLOOR_MAX_ROUNDS);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument %s\n", argv[0], argv[optind]);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN); /* splice to a socket whose client went away */
    floor_loadavg(load0, sizeof(load0));
    int rc = floor_start(&b, err) < 0 || floor_rounds(&b, (int)rounds, err) < 0 ? -1 : 0;
    floor_stop(&b);
    if (rc < 0) {
        fprintf(stderr, "paddock-bench-egress-floor: %s\n", err);
        return 1;
    }
    floor_print(&b, (int)rounds, load0);
    return 0;
}
