/* Processes of a sandbox as the host sees them. The engine runs as the host's root, so a pid
 * Docker reported a moment ago may already name another process (pids wrap): it only ever
 * signals a process it has pinned with a pidfd and found inside the sandbox. */
#ifndef PADDOCK_PROC_H
#define PADDOCK_PROC_H

#include <stddef.h>
#include <sys/types.h>

/* Whether process pid is in the pid namespace of process init (a container's first process,
 * as this host sees it): 1 yes, 0 no, -1 when either is gone (errno set). */
int proc_in_pidns_of(pid_t pid, pid_t init);

/* Send sig to pid when, pinned by a pidfd, it is in init's pid namespace: a reused pid is never
 * signalled. 0; -1 with why in err (gone, elsewhere, or the kernel refused). */
int proc_signal_in_pidns(pid_t pid, pid_t init, int sig, char *err, size_t errlen);

/* The command line of the process in init's pid namespace that owns the TCP socket whose local
 * port is local_port and whose peer port is peer_port, both on the sandbox's loopback (the
 * client end of a connection to its proxy, found in init's /proc/net/tcp{,6}); its arguments
 * joined by spaces, cut to outlen. The sandbox's own bytes: untrusted, never a path to follow.
 * 0, or -1 when no such process is found. */
int proc_socket_owner(pid_t init, int local_port, int peer_port, char *out, size_t outlen);

#endif
