/* paddock egress SESSION [--json]: a session's connections through its egress proxy, newest
 * first, and the totals per destination (GET /v1/sessions/{id}/egress; docs/egress.md). */
#include "app/app.h"
#include "app/cli.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *egress_str(json_t *o, const char *key, char *buf, size_t size)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? cli_safe(s, buf, size) : "-";
}

int cmd_egress(struct app *app, int argc, char **argv)
{
    bool as_json = false;
    int rc = cli_parse_json_only(argc, argv, &as_json);
    if (rc >= 0)
        return rc;
    if (optind >= argc) {
        fprintf(stderr, "paddock egress: name a session (id or name)\n");
        return 2;
    }
    char id[80], path[200];
    if (!cli_session_id(app, "egress", argv[optind], id, sizeof(id)))
        return 1;
    snprintf(path, sizeof(path), "/v1/sessions/%s/egress?limit=1000", id);
    json_t *reply = cli_call(app, "egress", "GET", path, NULL, 200);
    if (!reply)
        return 1;
    if (as_json) {
        cli_print_json(reply);
        json_decref(reply);
        return 0;
    }
    char a[300], b[300], c[300], d[600], when[32];
    printf("%-6s  %-19s  %-8s  %-32s  %-9s  %10s  %10s  %s\n", "ID", "STARTED", "METHOD",
           "DESTINATION", "DECISION", "UP", "DOWN", "RULE / BY / END");
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(reply, "connections"), i, x)
    {
        char dest[300];
        snprintf(dest, sizeof(dest), "%s:%lld", egress_str(x, "host", a, sizeof(a)),
                 (long long)json_integer_value(json_object_get(x, "port")));
        printf("%-6lld  %-19s  %-8s  %-32.32s  %-9s  %10lld  %10lld  %s / %s / %s\n",
               (long long)json_integer_value(json_object_get(x, "id")),
               cli_time(json_number_value(json_object_get(x, "started_at")), when, sizeof(when)),
               egress_str(x, "method", b, sizeof(b)), dest,
               json_string_value(json_object_get(x, "decision")),
               (long long)json_integer_value(json_object_get(x, "bytes_up")),
               (long long)json_integer_value(json_object_get(x, "bytes_down")),
               egress_str(x, "rule", c, sizeof(c)), egress_str(x, "decided_by", b, sizeof(b)),
               json_is_null(json_object_get(x, "ended_at"))
                   ? "open"
                   : egress_str(x, "end_reason", d, sizeof(d)));
    }
    printf("\n%-40s  %6s  %7s  %12s  %12s\n", "HOST", "CONNS", "ALLOWED", "BYTES UP", "BYTES DOWN");
    json_array_foreach(json_object_get(reply, "hosts"), i, x)
    {
        char dest[300];
        snprintf(dest, sizeof(dest), "%s:%lld", egress_str(x, "host", a, sizeof(a)),
                 (long long)json_integer_value(json_object_get(x, "port")));
        printf("%-40.40s  %6lld  %7lld  %12lld  %12lld\n", dest,
               (long long)json_integer_value(json_object_get(x, "connections")),
               (long long)json_integer_value(json_object_get(x, "allowed")),
               (long long)json_integer_value(json_object_get(x, "bytes_up")),
               (long long)json_integer_value(json_object_get(x, "bytes_down")));
    }
    printf("\n%lld open now\n", (long long)json_integer_value(json_object_get(reply, "open")));
    json_decref(reply);
    return 0;
}
