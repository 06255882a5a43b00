/* The Changes tab's pure part: GET /v1/sessions/{id}/changes' reply as a sorted list of
 * paths with their kind, the count of each kind, and a filter. No ncurses; paths stay raw
 * (they are the sandbox's bytes: draw_text sanitizes them). */
#ifndef PADDOCK_UI_CHANGESET_H
#define PADDOCK_UI_CHANGESET_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum changeset_kind { CHANGESET_ADDED, CHANGESET_CHANGED, CHANGESET_DELETED, CHANGESET_NKINDS };

struct changeset_entry {
    char *path;
    enum changeset_kind kind;
    bool workspace;      /* in /workspace (else the container's own filesystem) */
    long long action_id; /* the newest write/edit/upload of the path, 0: none */
};

struct changeset {
    struct changeset_entry *v; /* sorted by path, a directory before its entries */
    size_t n;
    size_t count[CHANGESET_NKINDS];
    long long total; /* the engine's count (more than n when it cut the list) */
    bool truncated;
    bool stored;   /* kept when the container went, not compared now */
    double at;     /* when the engine compared */
    json_t *notes; /* the reply's notes (strings), or NULL */
};

/* Replace *set with a reply's list. 0, or -1 with *err (static) when the reply has none; *set
 * is then unchanged. Entries with an unknown kind or no path are left out. */
int changeset_parse(json_t *reply, struct changeset *set, const char **err);
void changeset_free(struct changeset *set);

/* 'A', 'C', 'D'. */
char changeset_marker(enum changeset_kind kind);
/* "added", "changed", "deleted" (the engine's names). */
const char *changeset_kind_name(enum changeset_kind kind);
/* Whether the entry's path contains needle (case-insensitive; NULL or "" matches all). */
bool changeset_matches(const struct changeset_entry *e, const char *needle);
/* Whether the entry is a git repository's internals: its path has a component ".git" (the
 * directory or anything under it; .gitignore is not). */
bool changeset_in_git(const struct changeset_entry *e);

#endif
