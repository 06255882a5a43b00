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

/* An operator rule's decision; NONE: no rule matched. */
enum policy_rule { POLICY_RULE_NONE, POLICY_RULE_ALLOW, POLICY_RULE_DENY, POLICY_RULE_COUNT };
/* "allow", "deny": the text of the rules' JSON and of the store; NULL for NONE or out of range. */
const char *policy_rule_name(enum policy_rule d);
/* The decision named by text (allow or deny): 0 and *d, or -1 (*d untouched). */
int policy_rule_parse(const char *name, enum policy_rule *d);

/* Operator rules, [{"pattern", "decision": "allow"|"deny", ...}], matched in order against an
 * action's summary (its command or path) as a shell glob ("git push *", a path prefix); the
 * first deny wins over any allow. The decision (NONE when no rule matches), and the pattern
 * that matched in *pattern. */
enum policy_rule policy_rules_match(json_t *rules, const char *summary, const char **pattern);
/* A rule as given: {"pattern": non-empty string ≤ 4096, "decision": "allow"|"deny"}. NULL, or
 * why it is not one. */
const char *policy_rule_check(json_t *rule);

#endif
