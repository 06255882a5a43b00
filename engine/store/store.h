/* The SQLite store (WAL): sessions, actions, lifecycle events. The engine is its only writer. */
#ifndef PADDOCK_STORE_H
#define PADDOCK_STORE_H

#include "engine/base/action_state.h"
#include "engine/base/session_state.h"
#include "engine/risk/policy.h"
#include "engine/risk/risk.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct store;

#define STORE_NO_EXIT_CODE INT32_MIN

struct store *store_open(const char *path, char **err);
void store_close(struct store *s);
/* Schema version the store is at (PRAGMA user_version). */
int store_schema_version(struct store *s);
/* The last failed write failed because the disk is full (or would not take the write). */
bool store_last_error_was_full(struct store *s);
/* The version this build migrates to (the number of migrations it knows). */
int store_schema_latest(void);

int store_session_insert(struct store *s, const char *id, const char *name, const char *image,
                         enum session_st state, json_t *config, double now, char **err);
int store_session_update(struct store *s, const char *id, enum session_st state,
                         const char *container_id, const char *error, double now, char **err);
/* Set one top-level key of sessions.config (a plain name) to value. */
int store_session_config_set(struct store *s, const char *id, const char *key, json_t *value,
                             char **err);
/* A state change and its lifecycle event (kind = state, detail = reason), in one transaction:
 * reason says why it is in that state (NULL for none; also the "error" of the error state),
 * exit_code is the container's (STORE_NO_EXIT_CODE: none), container_id is set when not NULL. */
int store_session_transition(struct store *s, const char *id, enum session_st state,
                             const char *container_id, const char *reason, int exit_code,
                             double now, char **err);
/* Record the session's container id (no state change). */
int store_session_set_container(struct store *s, const char *id, const char *container_id,
                                double now);
/* One more process of the session killed by the OOM killer. */
int store_session_count_oom(struct store *s, const char *id, double now);
/* The session's stored options (always an object; empty when unknown). */
json_t *store_session_config(struct store *s, const char *id);
/* Session objects (see docs/architecture.md), newest first; flags add deleted sessions and
 * the warm pool's unclaimed ones. */
#define STORE_LIST_DELETED 1
#define STORE_LIST_POOLED 2
json_t *store_sessions_list(struct store *s, int flags);
/* One page of sessions, newest first (created_at, then id): flags as above; state: only that
 * state when not NULL (deleted included when it is the one asked for); image: text the image
 * contains; since/until: created at or after / before (<= 0: unbounded); before: the id of the last
 * session of the previous page (NULL: from the newest); limit <= 0: all. NULL with *err
 * (err may be NULL) when `before` is no session or the store fails. */
struct store_session_query {
    int flags;
    const enum session_st *state;
    const char *image, *before;
    double since, until;
    int limit;
};
json_t *store_sessions_query(struct store *s, const struct store_session_query *q, char **err);
/* A warm-pool session becomes an ordinary one: its name, creation time and what patch says
 * (a JSON merge patch of its stored config: options keep_alive, confirm..., env names) are the
 * claimer's. -1 when it is not (or no longer) pooled. */
int store_session_claim(struct store *s, const char *id, const char *name, json_t *patch,
                        double now, char **err);
json_t *store_session_get(struct store *s, const char *id);
/* The sessions ref may name (not the pool's): {id, name, state, exact, named} objects, the one
 * whose id is ref first, then those named ref (newest first), then those whose id begins with
 * ref; at most 64. An empty array when none (or the store fails; NULL without memory). */
json_t *store_session_match(struct store *s, const char *ref);

/* Group commit (engine/commit.c): the writes between these two share one transaction and one
 * commit, synced (synchronous=FULL) when durable. With savepoints, each write's own
 * transaction becomes a savepoint: one that fails is undone alone. Without (bare), the writes
 * run in the batch's transaction as they are: no savepoint opened and released per write, and
 * the full-text index is flushed once, at the commit, not at every savepoint; a write that
 * fails spoils the batch: store_batch_commit then fails and the caller undoes the batch with
 * store_batch_rollback (and runs it again with savepoints). Nothing written in the batch is on
 * disk before store_batch_commit returns 0; when it fails every write of the batch is gone. */
int store_batch_begin(struct store *s, bool durable, bool savepoints, char **err);
/* 0, or -1 with *err (malloc'd; a spoiled bare batch too) and the batch rolled back. */
int store_batch_commit(struct store *s, char **err);
/* The write-ahead log's file, opened read-only, so that another thread can sync it while this
 * one goes on (engine/commit.c): a batch committed without its own sync (durable false) is on
 * disk once an fdatasync of this descriptor, begun after the commit, has returned 0. The
 * caller's descriptor (close it), or -1 (errno set: no log yet, or none at all). */
int store_wal_open(struct store *s);

/* ---- actions (store_actions.c) ---- */
/* A new action row. state: running (it runs now: committed before it reaches the sandbox),
 * pending (it waits for the operator until deadline), rejected (decided at once: a deny rule or
 * confirmation_state "rejected"; observation is what the agent got), skipped. approval: none,
 * pending, auto (an allow rule), rejected; decided_by/decision_reason for the last two. durable:
 * commit with synchronous=FULL (the action is acknowledged before it finishes). */
struct store_action_new {
    const char *session_id, *kind, *summary, *args_json;
    enum risk_level risk;
    const char *risk_reason;
    const enum risk_level *declared_risk; /* NULL: the agent declared none */
    enum action_st state;
    enum action_approval approval;
    double deadline;
    const char *decided_by, *decision_reason, *observation;
    /* The rule that decided it (approval auto or a deny rule's rejection): 0 and NULL when none. */
    int64_t rule_id;
    const char *rule_pattern;
    bool durable;
    double now;
};
/* The row (and its search entry, its approval) in one transaction; its id, or -1. */
int64_t store_action_add(struct store *s, const struct store_action_new *a, char **err);
/* The same for an action that runs now (state running, no approval). */
int64_t store_action_insert(struct store *s, const char *session_id, const char *kind,
                            const char *summary, const char *args_json, double now, char **err);
/* Decide a pending action: approved (state running), rejected or expired (state rejected,
 * observation recorded). 1 when decided, 0 when it was not pending (nothing changed), -1. */
int store_action_decide(struct store *s, int64_t id, enum action_approval decision, const char *by,
                        const char *reason, const char *observation, double now, char **err);
/* The end: state, exit code, the observation (kept up to 1 MiB, its full size recorded; its
 * "content" indexed for search). */
int store_action_finish(struct store *s, int64_t id, enum action_st state, int exit_code,
                        const char *observation, size_t observation_len, const char *error,
                        double now, char **err);
/* The same, with what a write changed (a unified diff; NULL: none), shown as the action's
 * "diff" by store_action_get_full. */
int store_action_finish_diff(struct store *s, int64_t id, enum action_st state, int exit_code,
                             const char *observation, size_t observation_len, const char *diff,
                             const char *error, double now, char **err);
/* The action object (docs/approvals.md), or NULL. */
json_t *store_action_get(struct store *s, int64_t id);
/* The same with "args" (the OpenHands action) and "observation" (parsed). */
json_t *store_action_get_full(struct store *s, int64_t id);
/* Newest first; before <= 0 means from the newest. */
json_t *store_actions_list(struct store *s, const char *session_id, int limit, int64_t before);
/* Actions waiting for the operator, oldest first, with "args"; session_id NULL: all. */
json_t *store_actions_pending(struct store *s, const char *session_id);
/* History: newest first, id < before (<= 0: from the newest); text: words that must all appear
 * in the command or its output; the others: exact filters, NULL for any. */
struct store_search {
    const char *text, *session_id, *kind;
    const enum action_st *state;
    const enum risk_level *risk;
    int64_t before;
    int limit;
};
json_t *store_actions_search(struct store *s, const struct store_search *q, char **err);
/* What is derived from the record (store_derived.c) is written off the action path, in
 * batches: the actions whose entries in the record (their intent, their end) came after its
 * mark are indexed for search, each once with its command and its output as they are now, and
 * counted in their sessions' action_count, at most limit entries of the record (0: all), in
 * one transaction with the new mark (synchronous=NORMAL: a crash loses all of it or none).
 * Not inside a batch. Returns 1 when entries remain, 0 when all is up to date, -1 with *err.
 * store_actions_search calls it first; a session's action_count as read adds what is past
 * the mark. */
int store_derived_update(struct store *s, int limit, char **err);
/* At start-up: actions a dead engine left in flight become "interrupted" (pending ones keep
 * waiting). Returns the count. */
int store_actions_interrupt_inflight(struct store *s, double now);
/* ---- operator rules (store_rules.c) ---- */
/* A rule: session_id NULL for an engine-wide one; kind NULL for every kind of action; origin
 * "config" (the config file's, kept in step by store_rules_sync_config) or "operator". */
struct store_rule {
    const char *session_id, *pattern, *kind, *origin, *by;
    enum policy_rule decision;
};
/* Add a rule and its entry in the record, in one transaction: its id, or -1 with *err. */
int64_t store_rule_add(struct store *s, const struct store_rule *r, double now, char **err);
/* Change a rule that is not removed: pattern, kind (empty: every kind) or decision where
 * given (NULL / POLICY_RULE_NONE: kept). 1 when changed, 0 when there is no such rule, -1. */
int store_rule_edit(struct store *s, int64_t id, const char *pattern, const char *kind,
                    enum policy_rule decision, const char *by, double now, char **err);
/* Mark a rule removed (the row stays for the record). 1, 0 when there is no such rule, -1. */
int store_rule_remove(struct store *s, int64_t id, const char *by, double now, char **err);
/* A rule that is not removed: {"id", "session_id", "pattern", "decision", "kind", "origin",
 * "created_by", "created_at", "changed_by", "changed_at"} (the caller's reference), or NULL. */
json_t *store_rule_get(struct store *s, int64_t id);
/* The rules in force, in order: the engine-wide ones, then session_id's (NULL: every
 * session's). A new array (empty when the store cannot be read). */
json_t *store_rules_list(struct store *s, const char *session_id);
/* Make the engine-wide rules of origin "config" the list given ([{"pattern", "decision"}],
 * in order): those no longer there are removed, new ones added, each change recorded, in one
 * transaction. 0, or -1 with *err. */
int store_rules_sync_config(struct store *s, json_t *rules, double now, char **err);
/* Remove deleted sessions last updated before the time, with all their history. Returns how
 * many sessions went, or -1. */
int store_retention_apply(struct store *s, double before, char **err);
/* Append a lifecycle event for a session. */
int store_event_add(struct store *s, const char *session_id, const char *kind, const char *detail,
                    double now);
/* A session's newest limit lifecycle events, oldest first: [{"id", "kind", "detail", "at"}]. */
json_t *store_events_list(struct store *s, const char *session_id, int limit);

/* ---- resource samples and log tails (store_samples.c) ---- */
struct store_sample {
    double at;   /* wall clock, seconds */
    double span; /* seconds this row stands for (1, or the bucket once downsampled) */
    double cpu;  /* percent of one CPU, as `docker stats` shows it (may exceed 100) */
    int64_t mem, mem_limit, pids, net_rx, net_tx, blk_read, blk_write; /* -1: unknown */
};
/* Many samples in one transaction (synchronous=NORMAL: losing the last seconds of graphs in
 * a power cut is fine). */
int store_samples_add(struct store *s, const char *session_id, const struct store_sample *v,
                      size_t n, char **err);
/* Oldest first, at > since, at most limit (the newest limit when there are more). */
json_t *store_samples_list(struct store *s, const char *session_id, double since, int limit);
/* Rows older than before collapse into one row per bucket seconds (average CPU and memory,
 * maximum pids, the last counters). Returns how many rows were removed, or -1. */
int store_samples_downsample(struct store *s, double before, double bucket);
/* The container log's tail at the end of a session (replaces an earlier one). */
int store_log_tail_set(struct store *s, const char *session_id, const char *text, size_t len,
                       size_t total, double now, char **err);
/* {"text", "size", "at"} or NULL. */
json_t *store_log_tail_get(struct store *s, const char *session_id);

/* ---- file changes (store_changes.c; engine/changes.c) ---- */
/* The changes reply (JSON text) kept when a session's container goes (replaces an earlier
 * one). */
int store_changes_set(struct store *s, const char *session_id, const char *body, double now,
                      char **err);
/* That reply with "at" (when it was kept), or NULL. */
json_t *store_changes_get(struct store *s, const char *session_id);
/* The session's actions of these kinds (names, NULL-terminated: the ones that write files)
 * that succeeded, newest first, at most limit: [{"id", "kind", "path"?, "observed_path"?,
 * "command"?}]: args.path, the observation's "path" (an upload's: the file it wrote),
 * args.command. */
json_t *store_actions_file_writes(struct store *s, const char *session_id, const char *const *kinds,
                                  int limit);
/* How many of the session's actions of these kinds (NULL-terminated) ran to an end: done,
 * failed or interrupted. */
long long store_actions_count_finished(struct store *s, const char *session_id,
                                       const char *const *kinds);
/* When the session's container first started (its first started/ready event), or 0. */
double store_session_first_start(struct store *s, const char *session_id);

/* ---- the tamper-evident record (store_chain.c; docs/record.md) ---- */
/* Walk the record (one session's chain, or NULL: every entry and the engine's chain) and
 * compare it with the rows: {"ok", "session", "entries", "head", "broken"?: {"seq", "session",
 * "kind", "ref", "what"}} naming the first entry that does not match; NULL with *err. */
json_t *store_chain_verify(struct store *s, const char *session_id, char **err);
/* A session's entries, oldest first: [{"seq", "kind", "ref", "body", "prev", "hash"}]. */
json_t *store_chain_entries(struct store *s, const char *session_id);
/* The hashes, for checking an exported record on its own: the SHA-256 (lowercase hex) of
 * bytes; an entry's hash; the engine chain's link after engine_prev. */
void store_chain_sha256(const void *data, size_t len, char out[65]);
void store_chain_entry_hash(int64_t seq, const char *session_id, const char *kind, int64_t ref,
                            const char *prev, const char *body, char out[65]);
void store_chain_engine_hash(const char *engine_prev, const char *hash, char out[65]);

/* ---- the egress record (store_egress.c; engine/egress.c writes it) ---- */
struct store_egress_new {
    const char *session_id, *host, *method; /* method: "CONNECT" or the HTTP method */
    int port;
    const char *decision; /* allowed, denied, refused, pending */
    const char *rule, *decided_by, *command;
    int64_t action_id; /* the approval's action, 0: none */
    double now;
};
/* A connection's row, committed before anything is sent for it (synchronous=NORMAL: it
 * survives the engine's crash); its id, or -1 with *err. */
int64_t store_egress_add(struct store *s, const struct store_egress_new *e, char **err);
/* The operator's decision of a pending row (approved, rejected, expired). */
int store_egress_decide(struct store *s, int64_t id, const char *decision, const char *rule,
                        const char *by, char **err);
/* The end: the address connected to (NULL: none), bytes each way, why it ended. */
int store_egress_end(struct store *s, int64_t id, const char *address, int64_t up, int64_t down,
                     double now, const char *reason, char **err);
/* At start-up: rows a killed engine left open end now, "interrupted". How many, or -1. */
int store_egress_interrupt(struct store *s, double now, char **err);
/* {"connections": [...newest first, at most limit], "hosts": [{"host", "port", "connections",
 * "bytes_up", "bytes_down", "last"}...]}; the caller's reference. */
json_t *store_egress_list(struct store *s, const char *session_id, int limit);
/* The bytes the session's connections moved, both ways, as their rows hold them. */
int64_t store_egress_bytes(struct store *s, const char *session_id);
/* An operator's allow rule: for session_id, or for every session (NULL). Its id, or -1. */
int64_t store_egress_rule_add(struct store *s, const char *session_id, const char *pattern,
                              const char *by, double now, char **err);
/* The rules that apply to session_id (its own and the engine's), oldest first:
 * [{"id", "pattern", "scope": "session"|"engine", "created_by", "created_at"}]. */
json_t *store_egress_rules(struct store *s, const char *session_id);

#endif
