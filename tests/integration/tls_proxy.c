/* See tls_proxy.h. */
#include "tls_proxy.h"

#include "harness.h"

#include <errno.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char *proxy_script(void)
{
    const char *src = getenv("PADDOCK_SRC");
    return strdupf("%s/tests/integration/docker_tls_proxy.py", src ? src : ".");
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    remove(path);
    return 0;
}

int tls_proxy_start(struct tls_proxy *p, const char *docker_socket)
{
    memset(p, 0, sizeof(*p));
    char tmpl[] = "/tmp/paddock-tls-XXXXXX";
    if (!mkdtemp(tmpl)) {
        fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
        return -1;
    }
    p->dir = strdup(tmpl);
    p->certs = strdupf("%s/client", p->dir);
    p->wrong_ca = strdupf("%s/wrongca", p->dir);
    char *script = proxy_script();
    char *const certs_argv[] = {"/usr/bin/env", "python3", script, "certs", p->dir, NULL};
    struct proc_result res;
    proc_run(certs_argv, NULL, 60000, &res);
    if (res.status != 0) {
        fprintf(stderr, "making certificates failed (%d): %s%s\n", res.status, res.out, res.err);
        proc_result_free(&res);
        free(script);
        return -1;
    }
    proc_result_free(&res);

    int out[2];
    if (pipe(out) < 0) {
        free(script);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], 1);
        close(out[0]);
        close(out[1]);
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        execlp("python3", "python3", script, "serve", p->dir, docker_socket, (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    free(script);
    if (pid < 0) {
        close(out[0]);
        return -1;
    }
    p->pid = pid;
    /* The port comes as one line once the proxy listens. */
    char line[32] = "";
    size_t len = 0;
    struct pollfd pfd = {.fd = out[0], .events = POLLIN};
    while (len < sizeof(line) - 1 && !strchr(line, '\n') && poll(&pfd, 1, 30000) > 0) {
        ssize_t n = read(out[0], line + len, sizeof(line) - 1 - len);
        if (n <= 0)
            break;
        len += (size_t)n;
        line[len] = '\0';
    }
    close(out[0]);
    p->port = atoi(line);
    if (p->port <= 0) {
        fprintf(stderr, "the TLS proxy did not start (it said \"%s\")\n", line);
        tls_proxy_stop(p);
        return -1;
    }
    p->host = strdupf("tcp://127.0.0.1:%d", p->port);
    return 0;
}

void tls_proxy_stop(struct tls_proxy *p)
{
    if (p->pid > 0) {
        kill(p->pid, SIGTERM);
        waitpid(p->pid, NULL, 0);
        p->pid = 0;
    }
    if (p->dir)
        nftw(p->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(p->dir);
    free(p->certs);
    free(p->wrong_ca);
    free(p->host);
    memset(p, 0, sizeof(*p));
}
