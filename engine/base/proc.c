/* Processes of a sandbox (see proc.h). */
#include "engine/base/proc.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
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
