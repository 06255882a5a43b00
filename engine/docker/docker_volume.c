/* Docker volumes: the engine lists and removes the ones it labelled (delete, gc). */
#include "engine/base/util.h"
#include "engine/docker/docker.h"
#include "engine/docker/docker_internal.h"

#include <stdlib.h>

int docker_volume_list(struct docker *d, const char *label, docker_done_fn fn, void *ud)
{
    return docker_call_filtered(d, "/volumes?filters=%s", label, fn, ud);
}

int docker_volume_remove(struct docker *d, const char *name, docker_done_fn fn, void *ud)
{
    return docker_call_id(d, "DELETE", "/volumes/%s", name, NULL, 60000, 0, fn, ud);
}
