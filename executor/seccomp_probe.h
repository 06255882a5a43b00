/* `paddock-executor --seccomp-probe`: what the engine runs in a throwaway container at start to
 * check that the daemon applied paddock's seccomp profile (engine/seccomp_probe.c). */
#ifndef PADDOCK_EXECUTOR_SECCOMP_PROBE_H
#define PADDOCK_EXECUTOR_SECCOMP_PROBE_H

/* Prints one line per check and returns 0 when the process runs under a seccomp filter and the
 * calls paddock's profile removes (io_uring_setup, and name_to_handle_at, which Docker's own
 * profile allows) answer ENOSYS; else 1. */
int seccomp_probe_run(void);

#endif
