/* Approval policy: which actions wait for the operator. Pure: no I/O. */
#ifndef PADDOCK_POLICY_H
#define PADDOCK_POLICY_H

#include <jansson.h>
#include <stdbool.h>

/* A session's policy: what waits. never: nothing; high: HIGH risk (the default); medium:
 * MEDIUM and HIGH; always: every action. */
enum policy { POLICY_NEVER, POLICY_HIGH, POLICY_MEDIUM, POLICY_ALWAYS };

/* -1 for an unknown name. */
int policy_parse(const char *name);
const char *policy_name(enum policy p);
/* The names, for error messages: "never, high, medium, always". */
const char *policy_names(void);
/* Whether an action of this risk level (0 low, 1 medium, 2 high) waits under p. */
bool policy_needs_approval(enum policy p, int level);

/* Operator rules, [{"pattern", "decision": "allow"|"deny", ...}], matched in order against an
 * action's summary (its command or path) as a shell glob ("git push *", a path prefix); the
 * first deny wins over any allow. The decision ("allow"/"deny") or NULL, and the pattern that
 * matched in *pattern. */
const char *policy_rules_match(json_t *rules, const char *summary, const char **pattern);
/* A rule as given: {"pattern": non-empty string ≤ 4096, "decision": "allow"|"deny"}. NULL, or
 * why it is not one. */
const char *policy_rule_check(json_t *rule);

#endif
