/* paddock's seccomp table (seccomp.h) as a classic BPF program, for the local backend: bubblewrap
 * loads it (--seccomp FD) before it runs the executor, and the engine loads it itself before an
 * unsandboxed executor or a terminal's shell runs, so a local session is refused what a Docker
 * session is refused, with the same errno. Compiled with libseccomp (Debian's libseccomp-dev). */
#ifndef PADDOCK_LOCAL_SECCOMP_H
#define PADDOCK_LOCAL_SECCOMP_H

#include <stddef.h>

/* The program (struct sock_filter[], *len bytes, malloc'd) for this host's architecture (with
 * the x86 and x32 spellings on x86_64, as the Docker profile): 0, or -1 with *err. */
int local_seccomp_compile(void **bpf, size_t *len, char **err);

/* Load it on the calling process (no_new_privs set first); async-signal-safe, for a child
 * between fork and exec. 0, or -1 with errno. */
int local_seccomp_load(const void *bpf, size_t len);

#endif
