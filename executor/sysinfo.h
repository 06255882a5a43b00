/* /server_info: uptime, idle time and the executor's own resource use (docs/protocol.md). */
#ifndef PADDOCK_EXECUTOR_SYSINFO_H
#define PADDOCK_EXECUTOR_SYSINFO_H

#include <jansson.h>

/* Best effort: values that cannot be read are 0. */
json_t *sysinfo_json(double uptime, double idle_time);

#endif
