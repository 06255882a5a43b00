/* The start-up check that the daemon applies paddock's seccomp profile (seccomp.h): a throwaway
 * container of the default image, labelled like every engine container, runs
 * `paddock-executor --seccomp-probe` under the profile and is removed. It runs in the
 * background from the engine's start; a session's create waits for it, and is refused while the
 * profile is known not to apply (unless PADDOCK_SECCOMP_UNVERIFIED=1). When the probe could not
 * run (the daemon unreachable, the default image missing) creates go on and the next create
 * probes again. */
#ifndef PADDOCK_SECCOMP_PROBE_H
#define PADDOCK_SECCOMP_PROBE_H

#include <jansson.h>

struct engine;

/* refusal: NULL to go on with the create, else why it may not (valid during the call). */
typedef void (*seccomp_probe_fn)(const char *refusal, void *ud);

/* Start the probe (engine start). -1 when out of memory. */
int seccomp_probe_start(struct engine *eng);
/* Call fn once the profile's state is known: at once, or when the running probe ends. */
void seccomp_probe_wait(struct engine *eng, seccomp_probe_fn fn, void *ud);
/* The engine stops (eng->stopping): done once a running probe has removed its container (it
 * skips its remaining steps), at once when none runs. */
void seccomp_probe_settle(struct engine *eng, void (*done)(void *ud), void *ud);
/* GET /v1/info's "seccomp": {"profile", "removed", "state", "error", "probe_ms", "override"}. */
json_t *seccomp_probe_info(const struct engine *eng);
/* Drop the state (after http_cancel_all); waiters still queued are refused: the engine stops. */
void seccomp_probe_free(struct engine *eng);

#endif
