/* Processes of a sandbox (see proc.h). */
#include "engine/base/proc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int proc_pidns(pid_t pid, struct stat *st)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
    return stat(path, st);
}

int proc_in_pidns_of(pid_t pid, pid_t init)
{
    struct stat want, have;
    if (proc_pidns(init, &want) < 0 || proc_pidns(pid, &have) < 0)
        return -1;
    return have.st_dev == want.st_dev && have.st_ino == want.st_ino;
}

int proc_signal_in_pidns(pid_t pid, pid_t init, int sig, char *err, size_t errlen)
{
    if (pid <= 1 || init <= 1) {
        snprintf(err, errlen, "no process to signal (pid %d, sandbox %d)", (int)pid, (int)init);
        return -1;
    }
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd < 0) {
        snprintf(err, errlen, "process %d is gone (%s)", (int)pid, strerror(errno));
        return -1;
    }
    /* Read after the pidfd pinned the process: if the pid was reused before the pin, the
     * namespace read is the new process's and it is refused (or the pidfd is of that one and
     * the check says so). */
    int in = proc_in_pidns_of(pid, init);
    int rc = -1;
    if (in < 0)
        snprintf(err, errlen, "process %d or the sandbox is gone (%s)", (int)pid, strerror(errno));
    else if (in == 0)
        snprintf(err, errlen, "process %d is not in the sandbox: not signalled", (int)pid);
    else if (syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0) < 0)
        snprintf(err, errlen, "signal %d to process %d: %s", sig, (int)pid, strerror(errno));
    else
        rc = 0;
    close(fd);
    return rc;
}

/* The inode of the socket in init's network namespace with those ports on loopback. */
static unsigned long proc_socket_inode(pid_t init, int local_port, int peer_port)
{
    static const char *const tables[] = {"tcp", "tcp6"};
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/net/%s", (int)init, tables[t]);
        FILE *f = fopen(path, "re");
        if (!f)
            continue;
        char line[512];
        unsigned long found = 0;
        while (!found && fgets(line, sizeof(line), f)) {
            char local[64], remote[64];
            unsigned long inode;
            /* "sl local rem st tx:rx tr:when retrnsmt uid timeout inode" */
            if (sscanf(line, " %*s %63s %63s %*s %*s %*s %*s %*s %*s %lu", local, remote, &inode) !=
                3)
                continue;
            const char *lc = strrchr(local, ':'), *rc = strrchr(remote, ':');
            if (lc && rc && strtol(lc + 1, NULL, 16) == local_port &&
                strtol(rc + 1, NULL, 16) == peer_port)
                found = inode;
        }
        fclose(f);
        if (found)
            return found;
    }
    return 0;
}

int proc_socket_owner(pid_t init, int local_port, int peer_port, char *out, size_t outlen)
{
    unsigned long inode = init > 1 ? proc_socket_inode(init, local_port, peer_port) : 0;
    if (!inode || outlen == 0)
        return -1;
    char want[64];
    snprintf(want, sizeof(want), "socket:[%lu]", inode);
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    int rc = -1;
    struct dirent *e;
    while (rc < 0 && (e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        pid_t pid = (pid_t)atoi(e->d_name);
        if (proc_in_pidns_of(pid, init) != 1)
            continue;
        char fds[64];
        snprintf(fds, sizeof(fds), "/proc/%d/fd", (int)pid);
        DIR *fd = opendir(fds);
        if (!fd)
            continue;
        struct dirent *x;
        while (rc < 0 && (x = readdir(fd))) {
            char link[320], target[64];
            snprintf(link, sizeof(link), "%s/%s", fds, x->d_name);
            ssize_t n = readlink(link, target, sizeof(target) - 1);
            if (n <= 0)
                continue;
            target[n] = '\0';
            if (strcmp(target, want) != 0)
                continue;
            char cmd[64];
            snprintf(cmd, sizeof(cmd), "/proc/%d/cmdline", (int)pid);
            int cfd = open(cmd, O_RDONLY | O_CLOEXEC);
            ssize_t m = cfd >= 0 ? read(cfd, out, outlen - 1) : -1;
            if (cfd >= 0)
                close(cfd);
            if (m <= 0)
                continue;
            while (m > 0 && out[m - 1] == '\0')
                m--;
            for (ssize_t i = 0; i < m; i++)
                if (out[i] == '\0')
                    out[i] = ' ';
            out[m] = '\0';
            rc = 0;
        }
        closedir(fd);
    }
    closedir(d);
    return rc;
}
