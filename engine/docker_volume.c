/* Docker volumes: the engine lists and removes the ones it labelled (delete, gc). */
#include "engine/docker.h"
#include "engine/docker_internal.h"
#include "engine/util.h"

#include <stdlib.h>

int docker_volume_list(struct docker *d, const char *label, docker_done_fn fn, void *ud)
{
    json_t *f = json_pack("{s:[s]}", "label", label);
    char *fj = f ? json_dumps(f, JSON_COMPACT) : NULL;
    char *e = fj ? docker_escape(fj) : NULL;
    char *path = e ? util_strdupf("/volumes?filters=%s", e) : NULL;
    int rc = path ? docker_call(d, "GET", path, NULL, 30000, 0, fn, ud) : -1;
    json_decref(f);
    free(fj);
    free(e);
    free(path);
    return rc;
}

int docker_volume_remove(struct docker *d, const char *name, docker_done_fn fn, void *ud)
{
    return docker_call_id(d, "DELETE", "/volumes/%s", name, NULL, 60000, 0, fn, ud);
}
