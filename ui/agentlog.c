/* The agent's shell as a transcript (agentlog.h). Entries wait in action-id order; the front
 * one is written when it can be: its prompt and command at once, its output as it comes (the
 * engine's `action_output` events) or, for an action that did not stream, its observation
 * once fetched. Actions of a session run one at a time, so the order written is the order
 * they ran. */
#include "ui/agentlog.h"

#include "client/action_view.h"
#include "client/client.h"
#include "client/live_output.h"
#include "common/buf.h"
#include "ui/ui_internal.h"
#include "ui/vt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AGENTLOG_SCROLLBACK 5000
#define AGENTLOG_OUTPUT_MAX (256 * 1024) /* per action: the tail is kept, the cut said */

struct agentlog_entry {
    struct agentlog *a;
    long long id;
    char *cmd;
    char *state;
    bool fetching, have_out, header_done;
    int exit_code; /* -1: none */
    char *out;     /* the observation's content (raw), or why it is missing */
    /* Output as it ran: pieces placed by offset; what is not written yet waits in pend (its
     * newest AGENTLOG_OUTPUT_MAX bytes), how much never came in missed. Once any came, the
     * observation is not written again at the end. */
    struct live_output lo;
    struct buf pend;
    unsigned long long missed;
    bool live, live_nl; /* live_nl: the last byte written was a newline */
    char tok_out;       /* the request for what it printed before the transcript opened */
};

struct agentlog {
    struct ui *ui;
    char sid[72];
    struct vt *vt;
    bool loading;
    bool listing; /* taking the actions listed when it opened */
    char error[200];
    struct agentlog_entry **e; /* by id, ascending */
    size_t n, cap;
    long long written; /* the highest id written whole */
    char tok_list;
};

static const char *const agentlog_final[] = {"done",        "failed",  "rejected",
                                             "interrupted", "skipped", NULL};

static bool agentlog_is_final(const char *state)
{
    for (size_t i = 0; state && agentlog_final[i]; i++)
        if (strcmp(state, agentlog_final[i]) == 0)
            return true;
    return false;
}

static void agentlog_entry_free(struct agentlog_entry *e)
{
    if (!e)
        return;
    ui_cancel(e->a->ui, e);
    ui_cancel(e->a->ui, &e->tok_out);
    buf_free(&e->pend);
    free(e->cmd);
    free(e->state);
    free(e->out);
    free(e);
}

/* ---- writing into the terminal ---- */

static void agentlog_put(struct agentlog *a, const char *s, size_t len)
{
    vt_write(a->vt, s, len);
    size_t n;
    vt_output(a->vt, &n);
    vt_output_consume(a->vt, n); /* answers to queries go nowhere: read-only */
}

static void agentlog_puts(struct agentlog *a, const char *s)
{
    agentlog_put(a, s, strlen(s));
}

/* Text as a terminal shows a program's output: each lone \n becomes \r\n (the executor's
 * output has bare newlines; a tty's onlcr would add the \r). */
static void agentlog_put_text(struct agentlog *a, const char *s, size_t len)
{
    size_t from = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] != '\n' || (i > 0 && s[i - 1] == '\r'))
            continue;
        agentlog_put(a, s + from, i - from);
        agentlog_puts(a, "\r\n");
        from = i + 1;
    }
    agentlog_put(a, s + from, len - from);
}

static void agentlog_write_header(struct agentlog *a, struct agentlog_entry *e)
{
    /* a reset first: whatever the previous output left set (colours, alternate screen) ends */
    agentlog_puts(a, "\x1b[0m\x1b[?1047l\x1b[1;32m$\x1b[0m ");
    agentlog_put_text(a, e->cmd ? e->cmd : "", e->cmd ? strlen(e->cmd) : 0);
    agentlog_puts(a, "\r\n");
    e->header_done = true;
}

/* What came live and is not written yet (the front entry only). */
static void agentlog_write_live(struct agentlog *a, struct agentlog_entry *e)
{
    if (e->missed) {
        char note[96];
        snprintf(note, sizeof(note), "%s\x1b[2m[%llu bytes of output not shown]\x1b[0m\r\n",
                 e->live_nl || !e->live ? "" : "\r\n", e->missed);
        agentlog_puts(a, note);
        e->missed = 0;
        e->live_nl = true;
    }
    if (!e->pend.len)
        return;
    agentlog_put_text(a, e->pend.data, e->pend.len);
    e->live_nl = e->pend.data[e->pend.len - 1] == '\n';
    buf_reset(&e->pend);
}

/* The end of an action that streamed: its output is written; only how it ended is left. */
static void agentlog_write_end(struct agentlog *a, struct agentlog_entry *e)
{
    agentlog_puts(a, "\x1b[0m");
    if (!e->live_nl)
        agentlog_puts(a, "\r\n");
    char note[96] = "";
    if (e->state && strcmp(e->state, "done") != 0 && strcmp(e->state, "failed") != 0)
        snprintf(note, sizeof(note), "\x1b[2m[%.40s]\x1b[0m\r\n", e->state);
    else if (e->exit_code > 0)
        snprintf(note, sizeof(note), "\x1b[2m[exit code %d]\x1b[0m\r\n", e->exit_code);
    agentlog_puts(a, note);
}

static void agentlog_write_output(struct agentlog *a, struct agentlog_entry *e)
{
    if (e->live) {
        agentlog_write_end(a, e);
        return;
    }
    const char *out = e->out ? e->out : "";
    size_t len = strlen(out);
    if (len > AGENTLOG_OUTPUT_MAX) {
        char note[96];
        snprintf(note, sizeof(note),
                 "\x1b[2m[%zu bytes of output before this not shown]\x1b[0m\r\n",
                 len - AGENTLOG_OUTPUT_MAX);
        agentlog_puts(a, note);
        out += len - AGENTLOG_OUTPUT_MAX;
        len = AGENTLOG_OUTPUT_MAX;
    }
    agentlog_put_text(a, out, len);
    agentlog_puts(a, "\x1b[0m");
    if (len && out[len - 1] != '\n')
        agentlog_puts(a, "\r\n");
    char note[96] = "";
    if (e->state && strcmp(e->state, "done") != 0 && strcmp(e->state, "failed") != 0)
        snprintf(note, sizeof(note), "\x1b[2m[%.40s]\x1b[0m\r\n", e->state);
    else if (e->exit_code > 0)
        snprintf(note, sizeof(note), "\x1b[2m[exit code %d]\x1b[0m\r\n", e->exit_code);
    agentlog_puts(a, note);
}

/* Write what can be written, front first. Returns whether anything was. */
static bool agentlog_flush(struct agentlog *a)
{
    bool wrote = false;
    while (!a->loading && a->n) {
        struct agentlog_entry *e = a->e[0];
        if (!e->header_done) {
            agentlog_write_header(a, e);
            wrote = true;
        }
        if (e->pend.len || e->missed) {
            agentlog_write_live(a, e);
            wrote = true;
        }
        if (!e->have_out)
            break;
        agentlog_write_output(a, e);
        a->written = e->id;
        memmove(a->e, a->e + 1, (a->n - 1) * sizeof(*a->e));
        a->n--;
        agentlog_entry_free(e);
        wrote = true;
    }
    return wrote;
}

/* ---- entries ---- */

static struct agentlog_entry *agentlog_find(struct agentlog *a, long long id, bool add)
{
    size_t at = 0;
    while (at < a->n && a->e[at]->id < id)
        at++;
    if (at < a->n && a->e[at]->id == id)
        return a->e[at];
    if (!add)
        return NULL;
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 16;
        struct agentlog_entry **d = realloc(a->e, cap * sizeof(*d));
        if (!d)
            return NULL;
        a->e = d;
        a->cap = cap;
    }
    struct agentlog_entry *e = calloc(1, sizeof(*e));
    if (!e)
        return NULL;
    e->a = a;
    e->id = id;
    e->exit_code = -1;
    memmove(a->e + at + 1, a->e + at, (a->n - at) * sizeof(*a->e));
    a->e[at] = e;
    a->n++;
    return e;
}

static void agentlog_fetched(int status, json_t *reply, const char *err, void *ud)
{
    struct agentlog_entry *e = ud;
    struct agentlog *a = e->a;
    e->fetching = false;
    const char *content =
        json_string_value(json_object_get(json_object_get(reply, "observation"), "content"));
    char why[300];
    if (status == 200 && content) {
        e->out = strdup(content);
    } else {
        snprintf(why, sizeof(why), "\x1b[2m[output unavailable: %.200s]\x1b[0m",
                 status < 0      ? (err ? err : "no answer")
                 : status == 200 ? "no observation"
                                 : client_error_message(reply, "refused"));
        e->out = strdup(why);
    }
    const char *state = json_string_value(json_object_get(reply, "state"));
    if (state) {
        free(e->state);
        e->state = strdup(state);
    }
    json_t *code = json_object_get(reply, "exit_code");
    if (json_is_integer(code))
        e->exit_code = (int)json_integer_value(code);
    e->have_out = true;
    if (agentlog_flush(a))
        a->ui->dirty |= UI_DIRTY_DETAIL;
}

/* A piece of what the action printed, at offset in its output. */
static void agentlog_take_output(struct agentlog_entry *e, unsigned long long offset,
                                 const char *text, size_t len)
{
    size_t skip;
    uint64_t missed;
    size_t n = live_output_place(&e->lo, offset, len, &skip, &missed);
    e->live = true;
    e->missed += missed;
    if (!n)
        return;
    if (buf_append(&e->pend, text + skip, n) < 0)
        e->missed += n;
    if (e->pend.len > AGENTLOG_OUTPUT_MAX) { /* not the front for long: its tail waits */
        size_t cut = e->pend.len - AGENTLOG_OUTPUT_MAX;
        while (cut < e->pend.len && ((unsigned char)e->pend.data[cut] & 0xC0) == 0x80)
            cut++;
        buf_consume(&e->pend, cut);
        e->missed += cut;
    }
}

/* What a running action printed before the transcript opened. */
static void agentlog_output_fetched(int status, json_t *reply, const char *err, void *ud)
{
    struct agentlog_entry *e =
        (struct agentlog_entry *)((char *)ud - offsetof(struct agentlog_entry, tok_out));
    (void)err;
    json_t *text = json_object_get(reply, "text");
    if (status != 200 || !json_is_true(json_object_get(reply, "running")) || !json_is_string(text))
        return; /* it ended meanwhile: its observation comes with the end */
    agentlog_take_output(e,
                         (unsigned long long)json_integer_value(json_object_get(reply, "offset")),
                         json_string_value(text), json_string_length(text));
    if (agentlog_flush(e->a))
        e->a->ui->dirty |= UI_DIRTY_DETAIL;
}

/* An action as the engine describes it (event or list): keep it, fetch its output when final. */
static bool agentlog_take(struct agentlog *a, json_t *j)
{
    const struct action_view *view =
        action_view_find(json_string_value(json_object_get(j, "kind")));
    json_t *jid = json_object_get(j, "id");
    if (!view->in_shell || !json_is_integer(jid))
        return false;
    long long id = (long long)json_integer_value(jid);
    if (id <= a->written)
        return false;
    struct agentlog_entry *e = agentlog_find(a, id, true);
    if (!e)
        return false;
    const char *summary = json_string_value(json_object_get(j, "summary"));
    if (summary && !e->cmd)
        e->cmd = strdup(summary);
    const char *state = json_string_value(json_object_get(j, "state"));
    if (state) {
        free(e->state);
        e->state = strdup(state);
    }
    if (state && strcmp(state, "running") == 0 && !e->live && a->listing) {
        char path[64];
        snprintf(path, sizeof(path), "/v1/actions/%lld/output", id);
        ui_request(a->ui, "GET", path, NULL, agentlog_output_fetched, &e->tok_out);
    }
    if (agentlog_is_final(state) && !e->fetching && !e->have_out && e->live) {
        /* It streamed: how it ended is in the event; the output is written already. */
        json_t *code = json_object_get(j, "exit_code");
        if (json_is_integer(code))
            e->exit_code = (int)json_integer_value(code);
        e->have_out = true;
    } else if (agentlog_is_final(state) && !e->fetching && !e->have_out) {
        char path[64];
        snprintf(path, sizeof(path), "/v1/actions/%lld", id);
        e->fetching = ui_request(a->ui, "GET", path, NULL, agentlog_fetched, e) == 0;
    }
    return true;
}

static void agentlog_listed(int status, json_t *reply, const char *err, void *ud)
{
    struct agentlog *a = (struct agentlog *)((char *)ud - offsetof(struct agentlog, tok_list));
    json_t *list = json_object_get(reply, "actions");
    a->loading = false;
    if (status != 200 || !json_is_array(list)) {
        snprintf(a->error, sizeof(a->error), "the agent's actions: %s",
                 status < 0 ? (err ? err : "no answer") : client_error_message(reply, "refused"));
    } else {
        a->listing = true;
        for (size_t i = json_array_size(list); i-- > 0;) /* newest first: oldest taken first */
            agentlog_take(a, json_array_get(list, i));
        a->listing = false;
        if (!a->n && !a->written)
            agentlog_puts(a, "\x1b[2m(no commands yet: they show here as the agent runs "
                             "them)\x1b[0m\r\n");
    }
    agentlog_flush(a);
    a->ui->dirty |= UI_DIRTY_DETAIL;
}

/* ---- the API ---- */

struct agentlog *agentlog_new(struct ui *ui, const char *sid, int rows, int cols)
{
    struct agentlog *a = calloc(1, sizeof(*a));
    if (!a)
        return NULL;
    a->ui = ui;
    snprintf(a->sid, sizeof(a->sid), "%s", sid);
    a->vt = vt_new(rows, cols, AGENTLOG_SCROLLBACK);
    if (!a->vt) {
        free(a);
        return NULL;
    }
    a->loading = true;
    char path[160];
    snprintf(path, sizeof(path), "/v1/sessions/%s/actions?limit=%d", a->sid, AGENTLOG_HISTORY);
    if (ui_request(ui, "GET", path, NULL, agentlog_listed, &a->tok_list) < 0)
        a->loading = false;
    return a;
}

void agentlog_free(struct agentlog *a)
{
    if (!a)
        return;
    ui_cancel(a->ui, &a->tok_list);
    for (size_t i = 0; i < a->n; i++)
        agentlog_entry_free(a->e[i]);
    free(a->e);
    vt_free(a->vt);
    free(a);
}

struct vt *agentlog_vt(struct agentlog *a)
{
    return a->vt;
}

const char *agentlog_status(const struct agentlog *a)
{
    if (a->loading)
        return "loading the agent's commands";
    return a->error[0] ? a->error : NULL;
}

unsigned agentlog_on_output(struct agentlog *a, json_t *ev)
{
    const char *sid = json_string_value(json_object_get(ev, "session"));
    json_t *jid = json_object_get(ev, "action");
    json_t *text = json_object_get(ev, "text");
    if (!sid || strcmp(sid, a->sid) != 0 || !json_is_integer(jid) || !json_is_string(text))
        return 0;
    long long id = (long long)json_integer_value(jid);
    if (id <= a->written)
        return 0;
    struct agentlog_entry *e = agentlog_find(a, id, true);
    if (!e)
        return 0;
    agentlog_take_output(e, (unsigned long long)json_integer_value(json_object_get(ev, "offset")),
                         json_string_value(text), json_string_length(text));
    return agentlog_flush(a) ? UI_DIRTY_DETAIL : 0;
}

unsigned agentlog_on_action(struct agentlog *a, json_t *action)
{
    const char *sid = json_string_value(json_object_get(action, "session_id"));
    if (!sid || strcmp(sid, a->sid) != 0 || !agentlog_take(a, action))
        return 0;
    return agentlog_flush(a) ? UI_DIRTY_DETAIL : 0;
}
