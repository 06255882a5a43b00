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

/* Operator rules, [{"id", "pattern", "decision": "allow"|"deny", "kind"?, ...}], matched in
 * order against an action's summary (its command or path); a rule with a "kind" (an action
 * kind's name) applies to that kind only. A deny is a shell glob (fnmatch: its * reaches
 * anything, so "rm -rf *" also stops "rm -rf / ; true"); an allow is matched by
 * policy_allow_match. The first deny wins over any allow. The decision (NONE when no rule
 * matches), and the rule that matched in *rule (borrowed from rules). */
enum policy_rule policy_rules_match(json_t *rules, const char *kind, const char *summary,
                                    json_t **rule);
/* Whether an allow pattern covers the summary: a shell glob over the whole text whose
 * wildcards (*, ?, [...]) never match a shell metacharacter (; & | < > ( ) $ ` \ and line
 * breaks), so "ls *" never covers "ls; rm -rf /" nor "ls $(rm -rf /)"; what the pattern spells
 * out literally may contain them. A pattern ending in " *" also covers the text without its
 * last word ("git status *" covers "git status"). */
bool policy_allow_match(const char *pattern, const char *summary);
/* The allow pattern proposed for "commands like this one" (malloc'd; NULL when out of
 * memory): for a run command, the program and its subcommand and leading options, then " *"
 * ("git push origin main" -> "git push *", "ls -la /tmp" -> "ls -la *"); never only a
 * wildcard, never broader than the program and its subcommand. Exactly the summary, its glob
 * characters escaped: a command with shell metacharacters, quotes, glob characters, a tab or
 * an assignment first; a program that runs what it is given (sh, python3, sudo, xargs, find...);
 * options first and a word that may be a subcommand later ("rm -rf build", "git -C d push");
 * any other kind's summary (a path, code, a URL). */
char *policy_rule_derive(const char *kind, const char *summary);
/* The glob matching exactly text, its glob characters escaped (malloc'd; NULL when out of
 * memory). */
char *policy_glob_escape(const char *text);
/* A rule as given: {"pattern": non-empty string <= 4096, "decision": "allow"|"deny",
 * "kind"?: string, "session"?: string} (only the keys in allowed, a NULL-terminated list, may
 * appear beside pattern and decision). NULL, or why it is not one. */
const char *policy_rule_check(json_t *rule, const char *const *allowed);

#endif
