/* Approval policy and operator rules. The risk level comes from engine/risk/risk.c; this only says
 * what waits. */
#include "engine/risk/policy.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

static const char *const policy_table[] = {
    [POLICY_NEVER] = "never",
    [POLICY_HIGH] = "high",
    [POLICY_MEDIUM] = "medium",
    [POLICY_ALWAYS] = "always",
};
/* The lowest risk level that waits under each policy (3: none). */
static const int policy_threshold[] = {
    [POLICY_NEVER] = 3,
    [POLICY_HIGH] = 2,
    [POLICY_MEDIUM] = 1,
    [POLICY_ALWAYS] = 0,
};

int policy_parse(const char *name)
{
    for (size_t i = 0; name && i < sizeof(policy_table) / sizeof(policy_table[0]); i++)
        if (strcmp(name, policy_table[i]) == 0)
            return (int)i;
    return -1;
}

const char *policy_name(enum policy p)
{
    return policy_table[p];
}

const char *policy_names(void)
{
    return "never, high, medium, always";
}

bool policy_needs_approval(enum policy p, int level)
{
    return level >= policy_threshold[p];
}

static const char *const policy_rule_names[POLICY_RULE_COUNT] = {
    [POLICY_RULE_ALLOW] = "allow",
    [POLICY_RULE_DENY] = "deny",
};

const char *policy_rule_name(enum policy_rule d)
{
    return (unsigned)d < POLICY_RULE_COUNT ? policy_rule_names[d] : NULL;
}

int policy_rule_parse(const char *name, enum policy_rule *d)
{
    for (int i = POLICY_RULE_ALLOW; name && i < POLICY_RULE_COUNT; i++)
        if (strcmp(policy_rule_names[i], name) == 0) {
            *d = (enum policy_rule)i;
            return 0;
        }
    return -1;
}

/* Characters a wildcard of an allow rule never matches: they end a command, start another,
 * substitute or redirect. */
static bool policy_meta(char c)
{
    return c != '\0' && strchr(";&|<>()$`\\\n\r", c) != NULL;
}

/* A [...] class at *p (after the '['): whether c is in it; *p moves past the ']'. -1 when the
 * class is not closed (then '[' is an ordinary character). */
static int policy_class_match(const char **p, char c)
{
    const char *q = *p;
    bool neg = *q == '!' || *q == '^';
    if (neg)
        q++;
    bool in = false, first = true;
    while (*q && (*q != ']' || first)) {
        first = false;
        char lo = *q == '\\' && q[1] ? *++q : *q;
        q++;
        char hi = lo;
        if (*q == '-' && q[1] && q[1] != ']') {
            q++;
            hi = *q == '\\' && q[1] ? *++q : *q;
            q++;
        }
        if (c >= lo && c <= hi)
            in = true;
    }
    if (*q != ']')
        return -1;
    *p = q + 1;
    return in != neg;
}

/* Steps one match may take: a pattern with many stars against a long command backtracks
 * without end otherwise; past it there is no match (the action goes to its policy). */
#define POLICY_GLOB_BUDGET 1000000

static bool policy_glob(const char *p, const char *s, long *budget)
{
    for (; *p; p++) {
        if (--*budget < 0)
            return false;
        switch (*p) {
        case '*':
            while (p[1] == '*')
                p++;
            for (const char *t = s;; t++) {
                if (policy_glob(p + 1, t, budget))
                    return true;
                if (*budget < 0)
                    return false;
                if (!*t || policy_meta(*t))
                    return false;
            }
        case '?':
            if (!*s || policy_meta(*s))
                return false;
            s++;
            break;
        case '[': {
            const char *q = p + 1;
            int in = *s && !policy_meta(*s) ? policy_class_match(&q, *s) : 0;
            if (in < 0) {
                if (*s != '[')
                    return false;
                s++;
                break;
            }
            if (!in)
                return false;
            p = q - 1;
            s++;
            break;
        }
        default:
            /* an escaped character is literal */
            if (*p == '\\' && p[1])
                p++;
            if (*p != *s)
                return false;
            s++;
        }
    }
    return *s == '\0';
}

bool policy_allow_match(const char *pattern, const char *summary)
{
    if (!pattern || !summary)
        return false;
    long budget = POLICY_GLOB_BUDGET;
    if (policy_glob(pattern, summary, &budget))
        return true;
    /* "prog sub *" covers "prog sub" too (an escaped "\ *" is no such ending). */
    size_t n = strlen(pattern);
    if (n >= 2 && strcmp(pattern + n - 2, " *") == 0 && (n < 3 || pattern[n - 3] != '\\')) {
        size_t k = n - 2;
        char buf[4200];
        if (k >= sizeof(buf))
            return false;
        memcpy(buf, pattern, k);
        buf[k] = '\0';
        budget = POLICY_GLOB_BUDGET;
        return policy_glob(buf, summary, &budget);
    }
    return false;
}

enum policy_rule policy_rules_match(json_t *rules, const char *kind, const char *summary,
                                    json_t **rule)
{
    enum policy_rule found = POLICY_RULE_NONE;
    size_t i;
    json_t *r;
    json_array_foreach(rules, i, r)
    {
        const char *pat = json_string_value(json_object_get(r, "pattern"));
        const char *rkind = json_string_value(json_object_get(r, "kind"));
        enum policy_rule dec;
        if (!pat || !summary ||
            policy_rule_parse(json_string_value(json_object_get(r, "decision")), &dec) < 0 ||
            (rkind && (!kind || strcmp(rkind, kind) != 0)))
            continue;
        if (dec == POLICY_RULE_DENY && fnmatch(pat, summary, 0) == 0) {
            *rule = r;
            return POLICY_RULE_DENY;
        }
        if (dec == POLICY_RULE_ALLOW && found == POLICY_RULE_NONE &&
            policy_allow_match(pat, summary)) {
            found = dec;
            *rule = r;
        }
    }
    return found;
}

char *policy_glob_escape(const char *text)
{
    size_t n = strlen(text);
    char *out = malloc(2 * n + 1), *o = out;
    if (!out)
        return NULL;
    for (const char *p = text; *p; p++) {
        if (strchr("*?[]\\", *p))
            *o++ = '\\';
        *o++ = *p;
    }
    *o = '\0';
    return out;
}

/* A word that can be a subcommand: lower-case letters, digits, '-', '_' ("push", "run-script"). */
static bool policy_word_sub(const char *w, size_t n)
{
    if (n == 0 || n > 32 || !(*w >= 'a' && *w <= 'z'))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((w[i] >= 'a' && w[i] <= 'z') || (w[i] >= '0' && w[i] <= '9') || w[i] == '-' ||
              w[i] == '_'))
            return false;
    return true;
}

/* A leading option: "-rf", "--force"; not one carrying a value ("--file=x"). */
static bool policy_word_option(const char *w, size_t n)
{
    if (n < 2 || n > 32 || w[0] != '-')
        return false;
    for (size_t i = 1; i < n; i++)
        if (!((w[i] >= 'a' && w[i] <= 'z') || (w[i] >= 'A' && w[i] <= 'Z') ||
              (w[i] >= '0' && w[i] <= '9') || w[i] == '-'))
            return false;
    return true;
}

/* Programs that run the command or code they are given: "commands like this one" is then the
 * whole command, never the program with a wildcard. */
static const char *const policy_runners[] = {
    "sh",    "bash",   "dash", "zsh",    "ksh",     "fish",    "env",    "sudo",   "su",
    "doas",  "xargs",  "eval", "exec",   "nohup",   "timeout", "nice",   "time",   "command",
    "watch", "strace", "ssh",  "python", "python2", "python3", "perl",   "ruby",   "node",
    "php",   "lua",    "awk",  "gawk",   "find",    "busybox", "setsid", "stdbuf", "script",
};

char *policy_rule_derive(const char *kind, const char *summary)
{
    bool plain = kind && strcmp(kind, "run") == 0 && summary;
    /* a tab between words: the " *" below would not cover it, so such a command is proposed
     * exactly */
    for (const char *p = summary; plain && *p; p++)
        if (policy_meta(*p) || strchr("'\"*?[]{}~#!=\t", *p))
            plain = false;
    const char *start = summary;
    while (plain && *start == ' ')
        start++;
    size_t n0 = plain ? strcspn(start, " ") : 0;
    for (size_t i = 0; n0 && i < sizeof(policy_runners) / sizeof(policy_runners[0]); i++)
        if (strlen(policy_runners[i]) == n0 && strncmp(start, policy_runners[i], n0) == 0)
            n0 = 0;
    if (n0 == 0)
        return policy_glob_escape(summary ? summary : "");
    /* the program; a subcommand or an option; then options; then " *" */
    const char *end = start + n0, *p = end;
    bool sub = false;
    for (int i = 1;; i++) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        if (n == 0 || !(policy_word_option(p, n) || (i == 1 && policy_word_sub(p, n))))
            break;
        sub |= i == 1 && policy_word_sub(p, n);
        end = p + n;
        p = end;
    }
    /* Without a subcommand first, a later word may be one ("git -C dir push"): the wildcard
     * would cover every subcommand, so the command is proposed exactly. */
    for (const char *q = end; !sub && *q;) {
        while (*q == ' ')
            q++;
        size_t n = strcspn(q, " ");
        if (n && policy_word_sub(q, n))
            return policy_glob_escape(summary);
        q += n;
    }
    size_t len = (size_t)(end - start);
    char *out = malloc(len + 3);
    if (!out)
        return NULL;
    memcpy(out, start, len);
    memcpy(out + len, " *", 3);
    return out;
}

const char *policy_rule_check(json_t *rule, const char *const *allowed)
{
    if (!json_is_object(rule))
        return "a rule is an object {\"pattern\": \"git push *\", \"decision\": "
               "\"allow\"|\"deny\"}";
    const char *pat = json_string_value(json_object_get(rule, "pattern"));
    enum policy_rule dec;
    if (!pat || !*pat || strlen(pat) > 4096)
        return "\"pattern\" must be a non-empty string (a shell glob such as \"git push *\")";
    if (policy_rule_parse(json_string_value(json_object_get(rule, "decision")), &dec) < 0)
        return "\"decision\" must be \"allow\" or \"deny\"";
    json_t *kind = json_object_get(rule, "kind");
    if (kind && !json_is_null(kind) && (!json_is_string(kind) || !*json_string_value(kind)))
        return "\"kind\" must be an action kind's name (\"run\", \"write\", ...) or null";
    const char *k;
    json_t *v;
    json_object_foreach(rule, k, v)
    {
        bool known = strcmp(k, "pattern") == 0 || strcmp(k, "decision") == 0;
        for (size_t i = 0; !known && allowed && allowed[i]; i++)
            known = strcmp(k, allowed[i]) == 0;
        if (!known)
            return "unknown key in the rule (it has \"pattern\", \"decision\" and \"kind\")";
    }
    return NULL;
}
