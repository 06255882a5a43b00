/* paddock verify [SESSION] [--json] | --export FILE: walk the tamper-evident record
 * (docs/record.md). With a session, its chain; without, every entry and the engine's chain
 * (GET /v1/verify: the engine is the store's one reader). --export checks an exported JSON
 * record on its own: its entries' links and hashes, its head, and that every exported action
 * and event is the one its entry recorded. Exits 1 naming the first entry that does not
 * match. */
#include "app/app.h"
#include "app/cli.h"
#include "engine/store/store.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VERIFY_ZERO "0000000000000000000000000000000000000000000000000000000000000000"

/* The value of field name in an entry's body ("name=value" lines) into out, or "". */
static const char *verify_body_field(const char *body, const char *name, char *out, size_t size)
{
    size_t n = strlen(name);
    out[0] = '\0';
    for (const char *p = body; p && *p;) {
        size_t len = strcspn(p, "\n");
        if (len > n && strncmp(p, name, n) == 0 && p[n] == '=') {
            snprintf(out, size, "%.*s", (int)(len - n - 1), p + n + 1);
            break;
        }
        p += len + (p[len] != '\0');
    }
    return out;
}

/* A JSON value as the body writes its column: null, t:<sha256>, r:<%.17g> or i:<n>. */
static void verify_value_form(json_t *v, char *out, size_t size)
{
    if (json_is_string(v)) {
        char h[65];
        store_chain_sha256(json_string_value(v), json_string_length(v), h);
        snprintf(out, size, "t:%s", h);
    } else if (json_is_real(v)) {
        snprintf(out, size, "r:%.17g", json_real_value(v));
    } else if (json_is_integer(v)) {
        snprintf(out, size, "i:%lld", (long long)json_integer_value(v));
    } else {
        snprintf(out, size, "null");
    }
}

static json_t *verify_break(json_t *e, const char *session, const char *what)
{
    return json_pack("{s:O?,s:s?,s:O?,s:O?,s:s}", "seq", json_object_get(e, "seq"), "session",
                     session, "kind", json_object_get(e, "kind"), "ref", json_object_get(e, "ref"),
                     "what", what);
}

/* Exported records (actions or events) against their newest entries of kind: each field
 * (export's key, body's name) must be what the entry recorded. */
static json_t *verify_export_rows(json_t *rows, json_t *latest, const char *kind,
                                  const char *session, const char *const (*fields)[2])
{
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        char key[64], want[80], got[80];
        snprintf(key, sizeof(key), "%s %lld", kind,
                 (long long)json_integer_value(json_object_get(row, "id")));
        json_t *e = json_object_get(latest, key);
        if (!e) {
            json_t *b =
                json_pack("{s:n,s:s?,s:s,s:O,s:s}", "seq", "session", session, "kind", kind, "ref",
                          json_object_get(row, "id"), "what", "it is not in the record");
            return b;
        }
        const char *body = json_string_value(json_object_get(e, "body"));
        for (int f = 0; fields[f][0]; f++) {
            verify_value_form(json_object_get(row, fields[f][0]), got, sizeof(got));
            verify_body_field(body, fields[f][1], want, sizeof(want));
            if (strcmp(want, got) != 0) {
                char what[120];
                snprintf(what, sizeof(what), "the exported %s differs from what was recorded",
                         fields[f][0]);
                return verify_break(e, session, what);
            }
        }
    }
    return NULL;
}

/* The exported record on its own: {"ok", "session", "entries", "head", "broken"?}. */
static json_t *verify_export_doc(json_t *doc)
{
    static const char *const action_fields[][2] = {
        {"kind", "kind"}, {"summary", "summary"},         {"created_at", "created_at"},
        {"risk", "risk"}, {"risk_reason", "risk_reason"}, {NULL, NULL}};
    static const char *const event_fields[][2] = {
        {"kind", "kind"}, {"detail", "detail"}, {"at", "at"}, {NULL, NULL}};
    const char *session = json_string_value(json_object_get(json_object_get(doc, "session"), "id"));
    json_t *chain = json_object_get(doc, "chain");
    json_t *entries = json_object_get(chain, "entries");
    json_t *brk = NULL;
    char prev[65] = VERIFY_ZERO;
    json_t *latest = json_object();
    size_t i;
    json_t *e;
    if (!session || !json_is_array(entries))
        brk = json_pack("{s:n,s:s?,s:s,s:n,s:s}", "seq", "session", session, "kind", "export",
                        "ref", "what", "the export carries no record (no session or no chain)");
    json_array_foreach(entries, i, e)
    {
        if (brk)
            break;
        const char *kind = json_string_value(json_object_get(e, "kind"));
        const char *body = json_string_value(json_object_get(e, "body"));
        const char *p = json_string_value(json_object_get(e, "prev"));
        const char *hash = json_string_value(json_object_get(e, "hash"));
        char h[65], key[64];
        if (!kind || !body || !p || !hash) {
            brk = verify_break(e, session, "the entry is incomplete");
            break;
        }
        if (strcmp(p, prev) != 0) {
            brk = verify_break(e, session,
                               "the entry before it is missing or out of order (its previous "
                               "hash does not match)");
            break;
        }
        store_chain_entry_hash(json_integer_value(json_object_get(e, "seq")), session, kind,
                               json_integer_value(json_object_get(e, "ref")), p, body, h);
        if (strcmp(h, hash) != 0) {
            brk = verify_break(e, session, "the entry was changed (its hash does not match)");
            break;
        }
        snprintf(prev, sizeof(prev), "%s", hash);
        snprintf(key, sizeof(key), "%s %lld", kind,
                 (long long)json_integer_value(json_object_get(e, "ref")));
        json_object_set(latest, key, e);
    }
    const char *head = json_string_value(json_object_get(chain, "head"));
    if (!brk && (!head || strcmp(head, prev) != 0))
        brk = json_pack("{s:n,s:s?,s:s,s:n,s:s}", "seq", "session", session, "kind", "export",
                        "ref", "what", "the chain head is not its last entry's hash");
    if (!brk)
        brk = verify_export_rows(json_object_get(doc, "actions"), latest, "action", session,
                                 action_fields);
    if (!brk)
        brk = verify_export_rows(json_object_get(doc, "events"), latest, "event", session,
                                 event_fields);
    json_decref(latest);
    json_t *out = json_pack("{s:b,s:s?,s:I,s:s}", "ok", brk == NULL, "session", session, "entries",
                            (json_int_t)json_array_size(entries), "head", prev);
    if (brk)
        json_object_set_new(out, "broken", brk);
    return out;
}

static void verify_print(json_t *r, const char *what)
{
    json_t *b = json_object_get(r, "broken");
    char safe[400];
    if (!b) {
        printf("record verified: %s, %lld entries, head %s\n", what,
               (long long)json_integer_value(json_object_get(r, "entries")),
               json_string_value(json_object_get(r, "head")));
        return;
    }
    const char *sid = json_string_value(json_object_get(b, "session"));
    printf("record broken: %s %lld", json_string_value(json_object_get(b, "kind")),
           (long long)json_integer_value(json_object_get(b, "ref")));
    if (sid)
        printf(" of session %s", cli_safe(sid, safe, sizeof(safe)));
    if (json_is_integer(json_object_get(b, "seq")))
        printf(" (entry %lld)", (long long)json_integer_value(json_object_get(b, "seq")));
    printf(": %s\n", cli_safe(json_string_value(json_object_get(b, "what")), safe, sizeof(safe)));
}

int cmd_verify(struct app *app, int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                         {"export", required_argument, NULL, 'e'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *file = NULL;
    bool as_json = false;
    int c;
    while ((c = getopt_long(argc, argv, "je:h", opts, NULL)) != -1) {
        switch (c) {
        case 'j':
            as_json = true;
            break;
        case 'e':
            file = optarg;
            break;
        case 'h':
            app_command_help(stdout, "verify");
            return 0;
        default:
            return 2;
        }
    }
    if (optind + 1 < argc || (file && optind < argc)) {
        fprintf(stderr, "paddock verify: one session, or --export FILE\n");
        return 2;
    }
    json_t *r;
    char what[200];
    if (file) {
        json_error_t jerr;
        json_t *doc = json_load_file(file, 0, &jerr);
        if (!doc) {
            char safe[300];
            fprintf(stderr, "paddock verify: %s: %s\n", cli_safe(file, what, sizeof(what)),
                    cli_safe(jerr.text, safe, sizeof(safe)));
            return 1;
        }
        r = verify_export_doc(doc);
        json_decref(doc);
        snprintf(what, sizeof(what), "the export");
    } else {
        char path[200] = "/v1/verify";
        char id[80];
        if (optind < argc) {
            if (!cli_session_id(app, "verify", argv[optind], id, sizeof(id)))
                return 1;
            cli_query_add(path, sizeof(path), "session", id);
            snprintf(what, sizeof(what), "session %s", id);
        } else {
            snprintf(what, sizeof(what), "every session and the engine's chain");
        }
        r = cli_call(app, "verify", "GET", path, NULL, 200);
        if (!r)
            return 1;
    }
    if (as_json)
        cli_print_json(r);
    else
        verify_print(r, what);
    int rc = json_is_true(json_object_get(r, "ok")) ? 0 : 1;
    json_decref(r);
    return rc;
}
