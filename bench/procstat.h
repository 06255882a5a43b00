/* CPU time from /proc, for the benches that say where a run's CPU went (scale.c,
 * egress_floor.c). */
#ifndef PADDOCK_BENCH_PROCSTAT_H
#define PADDOCK_BENCH_PROCSTAT_H

#include <stddef.h>
#include <sys/types.h>

/* /proc/PID/stat into buf ("" when the process is gone, or for pid 0). */
void procstat_text(pid_t pid, char *buf, size_t cap);
/* The CPU (user + system) of a /proc/PID/stat text, ms; 0 when it is none. */
double procstat_text_cpu_ms(const char *text);
/* The CPU a process used so far (user + system), ms; 0 when it is gone. */
double procstat_cpu_ms(pid_t pid);
/* Every core's busy time so far (/proc/stat's first line: user, nice, system, irq, softirq;
 * not idle, iowait, or steal, the hypervisor's), ms: other work on the machine counts too. */
double procstat_machine_ms(void);

/* A thread's time on a CPU and waiting on a run queue for one so far, ms
 * (/proc/PID/task/TID/schedstat, the scheduler's own clock); -1 when it cannot be read (no
 * such thread, or a kernel without schedstat). */
int procstat_sched_ms(pid_t pid, pid_t tid, double *run_ms, double *wait_ms);
/* The time on a CPU of every thread of pid, summed, ms; -1 when none can be read. */
int procstat_sched_all_ms(pid_t pid, double *run_ms);

#endif
