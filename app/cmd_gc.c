/* paddock gc: remove the containers, volumes and socket dirs of no live session (the engine
 * decides: POST /v1/gc). */
#include "app/app.h"
#include "app/cli.h"
#include "common/sanitize.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Docker labels and names are anyone's text: sanitized before they reach the terminal. */
static const char *gc_safe(json_t *j, const char *key, char *buf, size_t size)
{
    const char *v = json_string_value(json_object_get(j, key));
    if (!v)
        return "-";
    sanitize_text(v, strlen(v), buf, size);
    return buf;
}

static size_t gc_print(json_t *report, bool dry_run)
{
    const char *verb = dry_run ? "would remove" : "removed";
    size_t n = 0, i;
    json_t *it;
    char a[160], b[160], c[160], d[160];
    json_array_foreach(json_object_get(report, "containers"), i, it)
    {
        printf("%s container %s (%.12s, %s) of session %s\n", verb,
               gc_safe(it, "name", a, sizeof(a)), gc_safe(it, "id", b, sizeof(b)),
               gc_safe(it, "state", c, sizeof(c)), gc_safe(it, "session", d, sizeof(d)));
        n++;
    }
    json_array_foreach(json_object_get(report, "volumes"), i, it)
    {
        printf("%s volume %s of session %s\n", verb, gc_safe(it, "name", a, sizeof(a)),
               gc_safe(it, "session", b, sizeof(b)));
        n++;
    }
    json_array_foreach(json_object_get(report, "socket_dirs"), i, it)
    {
        const char *p = json_string_value(it);
        sanitize_text(p ? p : "", p ? strlen(p) : 0, a, sizeof(a));
        printf("%s socket directory %s\n", verb, a);
        n++;
    }
    if (n == 0)
        printf("nothing to remove: every container, volume and socket directory of this engine "
               "belongs to a live session\n");
    return n;
}

int cmd_gc(struct app *app, int argc, char **argv)
{
    static const struct option opts[] = {{"dry-run", no_argument, NULL, 'n'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    bool dry_run = false, as_json = false;
    int c;
    while ((c = getopt_long(argc, argv, "njh", opts, NULL)) != -1) {
        if (c == 'n') {
            dry_run = true;
        } else if (c == 'j') {
            as_json = true;
        } else if (c == 'h') {
            app_command_help(stdout, "gc");
            return 0;
        } else {
            return 2;
        }
    }
    json_t *body = json_pack("{s:b}", "dry_run", dry_run);
    json_t *reply = cli_call(app, "gc", "POST", "/v1/gc", body, 200);
    int rc = 0;
    if (!reply) {
        rc = 1;
    } else {
        if (as_json) {
            cli_print_json(reply);
        } else {
            gc_print(reply, dry_run);
        }
        size_t i;
        json_t *e;
        json_array_foreach(json_object_get(reply, "errors"), i, e)
        {
            char buf[400];
            const char *m = json_string_value(e);
            sanitize_text(m ? m : "", m ? strlen(m) : 0, buf, sizeof(buf));
            fprintf(stderr, "paddock gc: %s\n", buf);
            rc = 1;
        }
    }
    json_decref(body);
    json_decref(reply);
    return rc;
}
