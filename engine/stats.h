/* Resource sampling: Docker's stats stream per running session (up to a cap; past it the
 * sessions take turns), into the store once a second and out as "stats" events. */
#ifndef PADDOCK_STATS_H
#define PADDOCK_STATS_H

#include "engine/base/session_state.h"
#include "engine/store/store.h"

#include <jansson.h>

struct engine;
struct stats;

struct stats *stats_new(struct engine *eng);
/* Closes every stream (no callbacks) and writes what is buffered. */
void stats_free(struct stats *st);

/* A session changed state: sample while its container exists and runs or is paused; stop
 * otherwise. Idempotent. */
void stats_on_state(struct stats *st, const char *session_id, const char *container_id,
                    enum session_st state);

/* Write a session's buffered samples now (before the API reads the store); the session is
 * being looked at, so it streams (past the cap, for the next minute). */
void stats_flush(struct stats *st, const char *session_id);

/* One object of Docker's stats stream as `docker stats` computes it: CPU % from the deltas
 * against precpu_stats scaled by the online CPUs, memory without the inactive page cache,
 * network and block I/O summed over interfaces and devices. Returns 0, or -1 when the object
 * carries no usable numbers (the first sample of a stream has no precpu: cpu is then -1). */
int stats_compute(json_t *docker_stats, struct store_sample *out);
/* A sample as the API and the events show it. */
json_t *stats_sample_json(const struct store_sample *v);

#endif
