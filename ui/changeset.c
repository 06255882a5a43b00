/* A session's file changes as the Changes tab lists them. */
#include "ui/changeset.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The engine's kind names, in enum order, with their markers. */
static const struct {
    const char *name;
    char marker;
} changeset_kinds[CHANGESET_NKINDS] = {
    [CHANGESET_ADDED] = {"added", 'A'},
    [CHANGESET_CHANGED] = {"changed", 'C'},
    [CHANGESET_DELETED] = {"deleted", 'D'},
};

static int changeset_kind_of(const char *name)
{
    for (int k = 0; name && k < CHANGESET_NKINDS; k++)
        if (strcmp(name, changeset_kinds[k].name) == 0)
            return k;
    return -1;
}

/* Tree order: '/' before every other byte, so a directory's entries follow it at once. */
static int changeset_cmp(const void *pa, const void *pb)
{
    const char *a = ((const struct changeset_entry *)pa)->path;
    const char *b = ((const struct changeset_entry *)pb)->path;
    for (;; a++, b++) {
        int ca = *a == '/' ? 1 : *a ? (unsigned char)*a + 1 : 0;
        int cb = *b == '/' ? 1 : *b ? (unsigned char)*b + 1 : 0;
        if (ca != cb || !ca)
            return ca - cb;
    }
}

int changeset_parse(json_t *reply, struct changeset *set, const char **err)
{
    json_t *arr = json_object_get(reply, "changes");
    if (!json_is_array(arr)) {
        *err = "the reply has no list of changes";
        return -1;
    }
    struct changeset n = {0};
    n.v = calloc(json_array_size(arr) + 1, sizeof(*n.v));
    if (!n.v) {
        *err = "out of memory";
        return -1;
    }
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e)
    {
        const char *path = json_string_value(json_object_get(e, "path"));
        int kind = changeset_kind_of(json_string_value(json_object_get(e, "kind")));
        if (!path || kind < 0)
            continue;
        struct changeset_entry *c = &n.v[n.n];
        c->path = strdup(path);
        if (!c->path)
            continue;
        c->kind = (enum changeset_kind)kind;
        const char *where = json_string_value(json_object_get(e, "where"));
        c->workspace = where && strcmp(where, "workspace") == 0;
        json_t *aid = json_object_get(e, "action_id");
        c->action_id = json_is_integer(aid) ? (long long)json_integer_value(aid) : 0;
        n.count[kind]++;
        n.n++;
    }
    if (n.n > 1)
        qsort(n.v, n.n, sizeof(*n.v), changeset_cmp);
    json_t *total = json_object_get(reply, "total");
    n.total = json_is_integer(total) ? (long long)json_integer_value(total) : (long long)n.n;
    n.truncated = json_is_true(json_object_get(reply, "truncated"));
    const char *source = json_string_value(json_object_get(reply, "source"));
    n.stored = source && strcmp(source, "stored") == 0;
    json_t *at = json_object_get(reply, "at");
    n.at = json_is_number(at) ? json_number_value(at) : 0;
    json_t *notes = json_object_get(reply, "notes");
    n.notes = json_is_array(notes) ? json_incref(notes) : NULL;
    changeset_free(set);
    *set = n;
    return 0;
}

void changeset_free(struct changeset *set)
{
    for (size_t i = 0; i < set->n; i++)
        free(set->v[i].path);
    free(set->v);
    json_decref(set->notes);
    memset(set, 0, sizeof(*set));
}

char changeset_marker(enum changeset_kind kind)
{
    return kind < CHANGESET_NKINDS ? changeset_kinds[kind].marker : '?';
}

const char *changeset_kind_name(enum changeset_kind kind)
{
    return kind < CHANGESET_NKINDS ? changeset_kinds[kind].name : "?";
}

bool changeset_matches(const struct changeset_entry *e, const char *needle)
{
    if (!needle || !*needle)
        return true;
    size_t n = strlen(needle);
    for (const char *p = e->path; *p; p++)
        if (strncasecmp(p, needle, n) == 0)
            return true;
    return false;
}

bool changeset_in_git(const struct changeset_entry *e)
{
    for (const char *p = e->path; p && (p = strstr(p, ".git")); p += 4)
        if ((p == e->path || p[-1] == '/') && (p[4] == '\0' || p[4] == '/'))
            return true;
    return false;
}
