/* The export formats (app/export.h): a Markdown report and an asciinema v2 cast. */
#include "app/export.h"

#include "app/cli.h"
#include "client/action_detail.h"
#include "client/action_view.h"
#include "common/sanitize.h"

#include <stdlib.h>
#include <string.h>

/* A fence longer than any run of backticks in the text. */
static void md_fence(FILE *f, const char *text, size_t len)
{
    size_t run = 0, best = 2;
    for (size_t i = 0; i < len; i++) {
        run = text[i] == '`' ? run + 1 : 0;
        if (run > best)
            best = run;
    }
    for (size_t i = 0; i < best + 1; i++)
        fputc('`', f);
}

static void md_block(FILE *f, const char *text)
{
    size_t len = strlen(text);
    md_fence(f, text, len);
    fputc('\n', f);
    cli_write_safe(f, text, len);
    if (len && text[len - 1] != '\n')
        fputc('\n', f);
    md_fence(f, text, len);
    fputc('\n', f);
}

/* Table cells: one line (a newline shows as ⏎), a pipe escaped as \| so it stays in the
 * cell, and a backslash as \\ so the one before a pipe does not escape the escape. */
static const char *md_cell(const char *s, char *buf, size_t size)
{
    char line[1024];
    /* half the room: each byte takes at most two once escaped */
    cli_safe(s, line, size / 2 < sizeof(line) ? size / 2 : sizeof(line));
    char *o = buf;
    for (const char *p = line; *p; p++) {
        if (*p == '|' || *p == '\\')
            *o++ = '\\';
        *o++ = *p;
    }
    *o = '\0';
    return buf;
}

static void export_md(FILE *f, json_t *doc)
{
    json_t *s = json_object_get(doc, "session");
    char a[512], b[512], c[64];
    fprintf(f, "# paddock session %s\n\n",
            md_cell(json_string_value(json_object_get(s, "name")), a, sizeof(a)));
    fprintf(f, "| | |\n|---|---|\n");
    static const char *const keys[] = {"id", "state", "reason", "image", NULL};
    for (const char *const *k = keys; *k; k++)
        fprintf(f, "| %s | %s |\n", *k,
                md_cell(json_string_value(json_object_get(s, *k)) ?: "-", a, sizeof(a)));
    fprintf(f, "| created | %s |\n",
            cli_time(json_number_value(json_object_get(s, "created_at")), c, sizeof(c)));
    json_t *actions = json_object_get(doc, "actions");
    fprintf(f, "| actions | %zu |\n\n## Actions\n\n", json_array_size(actions));
    fprintf(f, "| # | time | kind | risk | approval | exit | ms | summary |\n"
               "|---|---|---|---|---|---|---|---|\n");
    size_t i;
    json_t *x;
    json_array_foreach(actions, i, x)
    {
        json_t *ec = json_object_get(x, "exit_code"), *d = json_object_get(x, "duration_ms");
        char ecs[16] = "-", ds[24] = "-";
        if (json_is_integer(ec))
            snprintf(ecs, sizeof(ecs), "%lld", (long long)json_integer_value(ec));
        if (json_is_number(d))
            snprintf(ds, sizeof(ds), "%.1f", json_number_value(d));
        fprintf(f, "| %lld | %s | %s | %s | %s | %s | %s | %s |\n",
                (long long)json_integer_value(json_object_get(x, "id")),
                cli_time(json_number_value(json_object_get(x, "created_at")), c, sizeof(c)),
                md_cell(json_string_value(json_object_get(x, "kind")), a, sizeof(a)),
                json_string_value(json_object_get(x, "risk")) ?: "-",
                json_string_value(json_object_get(x, "approval")) ?: "-", ecs, ds,
                md_cell(json_string_value(json_object_get(x, "summary")), b, sizeof(b)));
    }
    json_array_foreach(actions, i, x)
    {
        fprintf(f, "\n### %lld. %s (%s, risk %s: %s)\n\n",
                (long long)json_integer_value(json_object_get(x, "id")),
                md_cell(json_string_value(json_object_get(x, "kind")), a, sizeof(a)),
                json_string_value(json_object_get(x, "state")) ?: "-",
                json_string_value(json_object_get(x, "risk")) ?: "-",
                md_cell(json_string_value(json_object_get(x, "risk_reason")) ?: "", b, sizeof(b)));
        const char *summary = json_string_value(json_object_get(x, "summary"));
        md_block(f, summary ? summary : "");
        const char *by = json_string_value(json_object_get(x, "decided_by"));
        if (by)
            fprintf(f, "\n%s by %s%s%s\n",
                    json_string_value(json_object_get(x, "approval")) ?: "decided",
                    md_cell(by, a, sizeof(a)),
                    json_string_value(json_object_get(x, "decision_reason")) ? ": " : "",
                    md_cell(json_string_value(json_object_get(x, "decision_reason")) ?: "", b,
                            sizeof(b)));
        const char *out =
            json_string_value(json_object_get(json_object_get(x, "observation"), "content"));
        if (out && *out) {
            fprintf(f, "\nOutput:\n\n");
            md_block(f, out);
        }
        const char *diff = action_detail_diff_of(x);
        if (diff) {
            fprintf(f, "\nChanges:\n\n");
            md_block(f, diff);
        }
    }
    json_t *conns = json_object_get(json_object_get(doc, "egress"), "connections");
    if (json_array_size(conns)) {
        fprintf(f, "\n## Egress\n\n| # | started | method | destination | decision | rule | by "
                   "| up | down | end |\n|---|---|---|---|---|---|---|---|---|---|\n");
        for (size_t k = json_array_size(conns); k-- > 0;) {
            x = json_array_get(conns, k);
            char dest[300], m[300], r[300], by[300], end[300];
            snprintf(dest, sizeof(dest), "%s:%lld",
                     json_string_value(json_object_get(x, "host")) ?: "-",
                     (long long)json_integer_value(json_object_get(x, "port")));
            fprintf(
                f, "| %lld | %s | %s | %s | %s | %s | %s | %lld | %lld | %s |\n",
                (long long)json_integer_value(json_object_get(x, "id")),
                cli_time(json_number_value(json_object_get(x, "started_at")), c, sizeof(c)),
                md_cell(json_string_value(json_object_get(x, "method")) ?: "-", m, sizeof(m)),
                md_cell(dest, b, sizeof(b)),
                json_string_value(json_object_get(x, "decision")) ?: "-",
                md_cell(json_string_value(json_object_get(x, "rule")) ?: "-", r, sizeof(r)),
                md_cell(json_string_value(json_object_get(x, "decided_by")) ?: "-", by, sizeof(by)),
                (long long)json_integer_value(json_object_get(x, "bytes_up")),
                (long long)json_integer_value(json_object_get(x, "bytes_down")),
                md_cell(json_string_value(json_object_get(x, "end_reason")) ?: "open", end,
                        sizeof(end)));
        }
    }
    const char *log = json_string_value(json_object_get(json_object_get(doc, "logs"), "text"));
    if (log && *log) {
        fprintf(f, "\n## Container log (tail)\n\n");
        md_block(f, log);
    }
}

/* Text as the terminal shows it: \n → \r\n. */
static json_t *cast_text(const char *s)
{
    size_t n = strlen(s), extra = 0;
    for (size_t i = 0; i < n; i++)
        extra += s[i] == '\n';
    char *o = malloc(n + extra + 1), *p = o;
    if (!o)
        return json_string("");
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n' && (i == 0 || s[i - 1] != '\r'))
            *p++ = '\r';
        *p++ = s[i];
    }
    *p = '\0';
    json_t *j = json_stringn(o, (size_t)(p - o));
    free(o);
    return j ? j : json_string("");
}

/* One output event. Each is filtered on its own and ends with nothing left open, so a player
 * may start at any event and a sequence cut off at the end of an action's output hides
 * nothing after it. */
static void cast_event(FILE *f, double t, const char *text, bool raw)
{
    char *safe = raw ? NULL : sanitize_replay_dup(text, strlen(text), NULL);
    if (!raw && !safe)
        return;
    json_t *e = json_pack("[f,s,o]", t < 0 ? 0 : t, "o", cast_text(raw ? text : safe));
    free(safe);
    char *line = json_dumps(e, JSON_COMPACT | JSON_REAL_PRECISION(6));
    if (line)
        fprintf(f, "%s\n", line);
    free(line);
    json_decref(e);
}

/* An action on the cast: when it ran (one that waited for approval ran once approved); one
 * that never ran (rejected) when it ended, else when it was created; id order breaks ties. */
static const char *state_of(json_t *x)
{
    return json_string_value(json_object_get(x, "state")) ?: "";
}

struct cast_item {
    json_t *x;
    double start;
    size_t seq;
};

static int cast_item_cmp(const void *pa, const void *pb)
{
    const struct cast_item *a = pa, *b = pb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The actions in the order they ran (malloc'd, *n of them; NULL when there are none). */
static struct cast_item *cast_items(json_t *actions, size_t *n)
{
    *n = 0;
    struct cast_item *items = calloc(json_array_size(actions) + 1, sizeof(*items));
    size_t i;
    json_t *x;
    json_array_foreach(actions, i, x)
    {
        if (!items)
            break;
        double start = json_number_value(json_object_get(x, "started_at"));
        if (start <= 0)
            start = json_number_value(json_object_get(x, "finished_at"));
        if (start <= 0)
            start = json_number_value(json_object_get(x, "created_at"));
        items[(*n)++] = (struct cast_item){.x = x, .start = start, .seq = i};
    }
    if (items)
        qsort(items, *n, sizeof(*items), cast_item_cmp);
    return items;
}

static void export_cast(FILE *f, json_t *doc, bool raw)
{
    json_t *s = json_object_get(doc, "session");
    /* a cast's times only grow: the actions go in the order they ran, from the first one */
    size_t nitems;
    struct cast_item *items = cast_items(json_object_get(doc, "actions"), &nitems);
    double t0 = nitems ? items[0].start : 0, last = t0;
    if (t0 <= 0)
        t0 = json_number_value(json_object_get(s, "created_at"));
    char title[300];
    snprintf(title, sizeof(title), "paddock session %s",
             json_string_value(json_object_get(s, "name")) ?: "?");
    /* a time past year 9999 is no time (cli_time): no integer may be made of it */
    json_int_t stamp = t0 > 0 && t0 < 253402300800.0 ? (json_int_t)t0 : 0;
    json_t *hdr =
        json_pack("{s:i,s:i,s:i,s:I,s:s,s:{s:s}}", "version", 2, "width", 120, "height", 36,
                  "timestamp", stamp, "title", title, "env", "TERM", "xterm-256color");
    char *h = json_dumps(hdr, JSON_COMPACT);
    fprintf(f, "%s\n", h ? h : "{}");
    free(h);
    json_decref(hdr);
    for (size_t k = 0; k < nitems; k++) {
        json_t *x = items[k].x;
        const struct action_view *view =
            action_view_find(json_string_value(json_object_get(x, "kind")));
        if (!view->cast_prompt)
            continue;
        /* actions that overlapped (a file read while a command ran) wait for the one before */
        double start = items[k].start > last ? items[k].start : last;
        double end = json_number_value(json_object_get(x, "finished_at"));
        if (end < start)
            end = start;
        last = end;
        const char *cmd = json_string_value(json_object_get(x, "summary")) ?: "";
        char *prompt = malloc(strlen(view->cast_prompt) + strlen(cmd) + 3);
        if (!prompt)
            continue;
        sprintf(prompt, "%s %s\n", view->cast_prompt, cmd);
        cast_event(f, start - t0, prompt, raw);
        free(prompt);
        /* an automatic decision names its rule, as in the history */
        json_t *rule = json_object_get(x, "rule");
        if (json_is_object(rule)) {
            char *line = NULL;
            if (asprintf(&line, "[%s by rule %lld \"%s\"]\n",
                         strcmp(state_of(x), "rejected") == 0 ? "denied" : "allowed",
                         (long long)json_integer_value(json_object_get(rule, "id")),
                         json_string_value(json_object_get(rule, "pattern")) ?: "") >= 0) {
                cast_event(f, start - t0, line, raw);
                free(line);
            }
        }
        const char *out =
            json_string_value(json_object_get(json_object_get(x, "observation"), "content"));
        const char *state = json_string_value(json_object_get(x, "state")) ?: "";
        if (out && *out) {
            size_t n = strlen(out);
            char *o = malloc(n + 2);
            if (o) {
                memcpy(o, out, n);
                o[n] = n && out[n - 1] == '\n' ? '\0' : '\n';
                o[n + 1] = '\0';
                cast_event(f, end - t0, o, raw);
                free(o);
            }
        } else if (strcmp(state, "rejected") == 0 && !json_is_object(rule)) {
            cast_event(f, end - t0, "[rejected by the operator]\n", raw);
        }
    }
    free(items);
}

void export_write(FILE *f, json_t *doc, const char *format, bool raw)
{
    if (strcmp(format, "json") == 0) {
        json_dumpf(doc, f, JSON_INDENT(2));
        fputc('\n', f);
    } else if (strcmp(format, "md") == 0) {
        export_md(f, doc);
    } else {
        export_cast(f, doc, raw);
    }
}
