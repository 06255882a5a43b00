/* What the engine told the dashboard: sessions, one session's actions, the approvals. Pure:
 * no ncurses (the views draw it; tests/tui/test_model.c runs it without a terminal). Strings
 * are raw engine text: the views sanitize them when drawing. */
#ifndef PADDOCK_UI_MODEL_H
#define PADDOCK_UI_MODEL_H

#include "ui/samples.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define MODEL_ACTIONS_LIMIT 200

struct model_session {
    char *id, *name, *image, *state, *error, *reason;
    double created_at;
    long long action_count;
    json_t *raw;                /* the engine's whole session object (config, limits, ports ...) */
    struct samples_spark spark; /* the list's CPU/MEM sparklines (kept across refetches) */
    size_t engine;              /* which engine holds it: the dashboard's index (0: the first) */
};

struct model_action {
    long long id;
    char *kind, *summary, *state;
    char *risk, *approval; /* low/medium/high; none, pending, approved, rejected, expired, auto */
    long long rule_id;     /* the rule that decided it, 0 when none */
    bool has_exit;
    int exit_code;
    double created_at, started_at;
    bool has_duration;
    double duration_ms;
};

struct model {
    struct model_session *sessions; /* newest first, every engine's together */
    size_t nsessions;
    struct model_action *actions; /* of actions_for; newest first (largest id first) */
    size_t nactions;
    char *actions_for; /* session id the actions belong to, or NULL */
    json_t *approvals; /* GET /v1/approvals' lists: action objects, oldest first, each engine's */
};

void model_free(struct model *m);
/* Replace the sessions / one session's actions / the approvals with a reply's list. 0, or -1
 * with a message (*err static) when the reply has no list. */
int model_set_sessions(struct model *m, json_t *reply, const char **err);
int model_set_actions(struct model *m, const char *session_id, json_t *reply, const char **err);
int model_set_approvals(struct model *m, json_t *reply, const char **err);
/* The same for one engine of several (index engine): its entries are replaced, the other
 * engines' kept; the lists stay in order across engines (sessions newest first, approvals
 * oldest first). A session's action counter never goes down at a refetch (the action events
 * counted it since the engine's snapshot). */
int model_set_sessions_of(struct model *m, size_t engine, json_t *reply, const char **err);
int model_set_approvals_of(struct model *m, size_t engine, json_t *reply, const char **err);
/* The engine an approval (an item of m->approvals) came from. */
size_t model_approval_engine(json_t *a);
/* An `action` event that announces a new action ("new": true) counts it in its session's
 * counter: true when it did. The list is not fetched again for a counter. */
bool model_count_action(struct model *m, json_t *data);
size_t model_count_approvals(const struct model *m, const char *session_id);
/* Apply an event's data. Return true when the model changed. */
bool model_upsert_session(struct model *m, json_t *j);
bool model_upsert_session_of(struct model *m, size_t engine, json_t *j);
bool model_upsert_action(struct model *m, const char *session_id, json_t *j);
void model_clear_actions(struct model *m);
ssize_t model_find_session(const struct model *m, const char *id);
ssize_t model_find_action(const struct model *m, long long id);
long long model_count_actions(const struct model *m);
size_t model_count_sessions_in(const struct model *m, const char *state);
/* Session ids go into URL paths: only [A-Za-z0-9_-], 1..64 bytes. */
bool model_id_valid(const char *id);
/* A `stats` event's data (a sample plus "session") into that session's sparklines; true when
 * it changed. */
bool model_add_sample(struct model *m, json_t *data);
/* A GET /v1/sessions/{id}/stats reply into the session's sparklines (before the live ones);
 * true when it changed. */
bool model_seed_samples(struct model *m, const char *session_id, json_t *reply);
/* Whether needle is in the session's id, name, image or state (case-insensitive). */
bool model_session_matches(const struct model_session *s, const char *needle);

#endif
