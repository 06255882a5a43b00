/* An action as text to read, built once per reply; lines are classified by where they are (a
 * heading, inside the diff) so the page can colour them without parsing the text again. */
#include "client/action_detail.h"

#include "client/action_view.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The engine keeps the first MiB of an observation; bigger ones say how big they were. */
#define ACTION_DETAIL_KEPT (1024 * 1024)

/* A diff line's class by its first bytes, most specific first; the file names (the first two)
 * only come before the hunks. */
static const struct {
    const char *prefix;
    enum action_line cls;
} action_detail_prefixes[] = {
    {"+++", ACTION_LINE_FILE}, {"---", ACTION_LINE_FILE}, {"@@", ACTION_LINE_HUNK},
    {"+", ACTION_LINE_ADD},    {"-", ACTION_LINE_DEL},
};

enum action_line action_detail_diff_line(const char *line, size_t len, bool in_hunks)
{
    for (size_t i = in_hunks ? 2 : 0;
         i < sizeof(action_detail_prefixes) / sizeof(action_detail_prefixes[0]); i++) {
        size_t n = strlen(action_detail_prefixes[i].prefix);
        if (len >= n && memcmp(line, action_detail_prefixes[i].prefix, n) == 0)
            return action_detail_prefixes[i].cls;
    }
    return ACTION_LINE_PLAIN;
}

static const char *action_detail_str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static void action_detail_time(json_t *o, const char *key, char *buf, size_t sz)
{
    json_t *v = json_object_get(o, key);
    double t = json_is_number(v) ? json_number_value(v) : 0;
    time_t sec = (time_t)t;
    struct tm tm;
    if (t <= 0 || !localtime_r(&sec, &tm) || strftime(buf, sz, "%Y-%m-%d %H:%M:%S", &tm) == 0)
        snprintf(buf, sz, "-");
}

/* A heading line; its offset is kept for action_detail_line. */
static void action_detail_title(FILE *f, struct action_detail *d, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void action_detail_title(FILE *f, struct action_detail *d, const char *fmt, ...)
{
    fflush(f);
    if (d->ntitles < ACTION_DETAIL_TITLES)
        d->title[d->ntitles++] = (size_t)ftell(f);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
}

static void action_detail_raw(FILE *f, const char *s)
{
    size_t n = strlen(s);
    fwrite(s, 1, n, f);
    if (n && s[n - 1] != '\n')
        fputc('\n', f);
}

/* What it was, when, how it ended. */
static void action_detail_head(FILE *f, json_t *a)
{
    fprintf(f, "#%lld %s, %s", (long long)json_integer_value(json_object_get(a, "id")),
            action_detail_str(a, "kind"), action_detail_str(a, "state"));
    if (json_is_integer(json_object_get(a, "exit_code")))
        fprintf(f, ", exit code %lld",
                (long long)json_integer_value(json_object_get(a, "exit_code")));
    json_t *ms = json_object_get(a, "duration_ms");
    if (json_is_number(ms))
        fprintf(f, ", %.1f ms", json_number_value(ms));
    char t1[32], t2[32], t3[32];
    action_detail_time(a, "created_at", t1, sizeof(t1));
    action_detail_time(a, "started_at", t2, sizeof(t2));
    action_detail_time(a, "finished_at", t3, sizeof(t3));
    fprintf(f, "\nsession %s\ncreated %s, started %s, finished %s\n",
            action_detail_str(a, "session_id"), t1, t2, t3);
}

/* Risk, and the approval: who decided, when, why. */
static void action_detail_risk(FILE *f, json_t *a)
{
    const char *reason = action_detail_str(a, "risk_reason");
    fprintf(f, "risk %s%s%s", *action_detail_str(a, "risk") ? action_detail_str(a, "risk") : "-",
            *reason ? ": " : "", reason);
    if (*action_detail_str(a, "declared_risk"))
        fprintf(f, " (the agent declared %s)", action_detail_str(a, "declared_risk"));
    const char *approval = action_detail_str(a, "approval");
    if (!*approval || strcmp(approval, "none") == 0) {
        fprintf(f, "\napproval not asked\n");
    } else {
        fprintf(f, "\napproval %s", approval);
        if (*action_detail_str(a, "decided_by"))
            fprintf(f, " by %s", action_detail_str(a, "decided_by"));
        char at[32];
        action_detail_time(a, "decided_at", at, sizeof(at));
        if (strcmp(at, "-") != 0)
            fprintf(f, " at %s", at);
        if (*action_detail_str(a, "decision_reason"))
            fprintf(f, ": %s", action_detail_str(a, "decision_reason"));
        action_detail_time(a, "deadline", at, sizeof(at));
        if (strcmp(approval, "pending") == 0 && strcmp(at, "-") != 0)
            fprintf(f, " (rejected at %s without a decision)", at);
        fputc('\n', f);
    }
    if (*action_detail_str(a, "error"))
        fprintf(f, "error: %s\n", action_detail_str(a, "error"));
}

/* The command or path, then the other arguments (a write's content as it was written). */
static void action_detail_args(FILE *f, struct action_detail *d, json_t *a)
{
    const struct action_view *view = action_view_find(action_detail_str(a, "kind"));
    json_t *args = json_object_get(json_object_get(a, "args"), "args");
    fprintf(f, "\n$ %s\n", action_detail_str(a, "summary"));
    if (view->args == ACTION_VIEW_ARGS_NONE || !json_is_object(args))
        return;
    json_t *content = json_object_get(args, "content");
    if (view->args == ACTION_VIEW_ARGS_CONTENT && json_is_string(content)) {
        fputc('\n', f);
        /* an engine before schema 7, or an executor that was not asked, recorded no diff */
        bool diffed = json_is_string(json_object_get(a, "diff"));
        action_detail_title(f, d, "content written (%zu bytes; %s)", json_string_length(content),
                            diffed ? "what it changed in the file is the diff below"
                                   : "the file's earlier content is not recorded");
        action_detail_raw(f, json_string_value(content));
        return;
    }
    char *j = json_dumps(args, JSON_INDENT(2) | JSON_SORT_KEYS);
    if (j)
        action_detail_raw(f, j);
    free(j);
}

const char *action_detail_diff_of(json_t *action)
{
    json_t *obs = json_object_get(action, "observation");
    const char *diff = action_detail_str(json_object_get(obs, "extras"), "diff");
    if (!*diff)
        diff = action_detail_str(action, "diff");
    return *diff ? diff : NULL;
}

static void action_detail_diff(FILE *f, struct action_detail *d, json_t *action)
{
    const char *diff = action_detail_diff_of(action);
    if (!diff)
        return;
    fputc('\n', f);
    action_detail_title(f, d, "diff");
    fflush(f);
    d->diff_start = (size_t)ftell(f);
    action_detail_raw(f, diff);
    fflush(f);
    d->diff_end = (size_t)ftell(f);
    const char *hunk = strncmp(diff, "@@", 2) == 0 ? diff : strstr(diff, "\n@@");
    d->diff_hunks = hunk ? d->diff_start + (size_t)(hunk - diff) + (hunk != diff) : d->diff_end;
}

static void action_detail_observation(FILE *f, struct action_detail *d, json_t *a)
{
    json_t *obs = json_object_get(a, "observation");
    const char *content = json_string_value(json_object_get(obs, "content"));
    if (!content)
        content = json_string_value(json_object_get(obs, "truncated_text"));
    fputc('\n', f);
    if (!content) {
        action_detail_title(f, d, "observation");
        fprintf(f, "(no observation recorded)\n");
        return;
    }
    json_t *size = json_object_get(a, "observation_size");
    action_detail_title(
        f, d, "observation (%s, %zu bytes)",
        *action_detail_str(obs, "observation") ? action_detail_str(obs, "observation") : "?",
        strlen(content));
    action_detail_raw(f, content);
    if (!*content && *action_detail_str(obs, "message")) /* a write answers with only this */
        action_detail_raw(f, action_detail_str(obs, "message"));
    if (json_is_integer(size) && json_integer_value(size) > ACTION_DETAIL_KEPT)
        fprintf(f, "… %lld bytes in all; the first MiB is kept\n",
                (long long)json_integer_value(size));
    const char *input = action_view_input(action_view_find(action_detail_str(a, "kind")), a);
    if (input) {
        fputc('\n', f);
        action_detail_title(f, d, "input (what was typed or piped in)");
        action_detail_raw(f, input);
    }
}

int action_detail_build(json_t *action, struct action_detail *d)
{
    memset(d, 0, sizeof(*d));
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return -1;
    action_detail_head(f, action);
    action_detail_risk(f, action);
    action_detail_args(f, d, action);
    action_detail_diff(f, d, action);
    action_detail_observation(f, d, action);
    if (fclose(f) != 0 || !buf) {
        free(buf);
        memset(d, 0, sizeof(*d));
        return -1;
    }
    d->text = buf;
    d->len = len;
    return 0;
}

void action_detail_free(struct action_detail *d)
{
    free(d->text);
    memset(d, 0, sizeof(*d));
}

enum action_line action_detail_line(const struct action_detail *d, size_t off)
{
    for (int i = 0; i < d->ntitles; i++)
        if (d->title[i] == off)
            return ACTION_LINE_TITLE;
    if (off < d->diff_start || off >= d->diff_end)
        return ACTION_LINE_PLAIN;
    const char *nl = memchr(d->text + off, '\n', d->diff_end - off);
    size_t n = nl ? (size_t)(nl - (d->text + off)) : d->diff_end - off;
    return action_detail_diff_line(d->text + off, n, off >= d->diff_hunks);
}
