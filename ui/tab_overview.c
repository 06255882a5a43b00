/* The Overview tab: the selected session's configuration as the engine reports it (the model
 * keeps the whole session object), and its state history from GET /v1/sessions/{id}/events,
 * refetched after each `session` event of the session, and whether its tamper-evident record
 * verifies (GET /v1/verify?session=ID, asked once when the tab opens: a walk of the whole
 * record is not for every state change). Env values are never shown: only names, and only if
 * the engine sends them (it does not today). j/k scroll. */
#include "client/client.h"
#include "common/timeconv.h"
#include "ui/ui_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* This tab (ui.c's table lists it; no other file names it). */
extern const struct ui_page tab_overview;

#define TAB_OV_LABEL 12       /* the label column */
#define TAB_OV_REFETCH_MS 150 /* one events refetch per burst of state changes */

struct tab_ov {
    struct ui *ui; /* for the fetch's callback: a reply redraws the pane */
    char *sid;
    json_t *events; /* the reply's list, oldest first, or NULL */
    bool loading;
    char error[256];
    int64_t refetch_at; /* ms; 0 = none due */
    int top;            /* first line shown */
    int lines, rows;    /* lines in the last draw, rows the pane had */
    char tok;           /* the fetch's token (its address) */
    char vtok;          /* the verify request's token */
    bool verifying;
    int record; /* 0: not known yet, 1: verified, -1: broken or not checked */
    char record_text[256];
};

static struct tab_ov *tab_ov_state(struct ui *ui)
{
    void **slot = ui_page_slot(ui, &tab_overview);
    return slot ? *slot : NULL;
}

static void tab_ov_fetched(int status, json_t *reply, const char *err, void *ud)
{
    struct tab_ov *st = (struct tab_ov *)((char *)ud - offsetof(struct tab_ov, tok));
    st->loading = false;
    st->ui->dirty |= UI_DIRTY_DETAIL;
    json_t *arr = json_object_get(reply, "events");
    if (status != 200 || !json_is_array(arr)) {
        snprintf(st->error, sizeof(st->error), "%s",
                 status < 0 ? (err ? err : "no answer")
                            : client_error_message(reply, "the reply has no events"));
        return;
    }
    st->error[0] = '\0';
    json_decref(st->events);
    st->events = json_incref(arr);
}

static void tab_ov_verified(int status, json_t *reply, const char *err, void *ud)
{
    struct tab_ov *st = (struct tab_ov *)((char *)ud - offsetof(struct tab_ov, vtok));
    st->verifying = false;
    st->ui->dirty |= UI_DIRTY_DETAIL;
    json_t *b = json_object_get(reply, "broken");
    if (status != 200 || !json_is_boolean(json_object_get(reply, "ok"))) {
        st->record = -1;
        snprintf(st->record_text, sizeof(st->record_text), "not checked: %s",
                 status < 0 ? (err ? err : "no answer")
                            : client_error_message(reply, "the reply says nothing"));
    } else if (!b) {
        st->record = 1;
        snprintf(st->record_text, sizeof(st->record_text), "record verified (%lld entries)",
                 (long long)json_integer_value(json_object_get(reply, "entries")));
    } else {
        st->record = -1;
        snprintf(st->record_text, sizeof(st->record_text), "broken at %s %lld: %s",
                 json_string_value(json_object_get(b, "kind")) ?: "?",
                 (long long)json_integer_value(json_object_get(b, "ref")),
                 json_string_value(json_object_get(b, "what")) ?: "?");
    }
}

static void tab_ov_fetch(struct ui *ui, struct tab_ov *st)
{
    st->refetch_at = 0;
    ui_cancel(ui, &st->tok);
    char path[160];
    snprintf(path, sizeof(path), "/v1/sessions/%s/events", st->sid);
    st->loading = ui_request(ui, "GET", path, NULL, tab_ov_fetched, &st->tok) == 0;
}

static unsigned tab_ov_open(struct ui *ui)
{
    void **slot = ui_page_slot(ui, &tab_overview);
    if (!slot)
        return 0;
    struct tab_ov *st = calloc(1, sizeof(*st));
    if (!st) {
        ui_set_error(ui, "Overview: out of memory");
        return UI_DIRTY_FOOTER;
    }
    *slot = st;
    st->ui = ui;
    if (ui->sel_session && model_id_valid(ui->sel_session)) {
        st->sid = strdup(ui->sel_session);
        if (st->sid) {
            tab_ov_fetch(ui, st);
            char path[160];
            snprintf(path, sizeof(path), "/v1/verify?session=%s", st->sid);
            st->verifying = ui_request(ui, "GET", path, NULL, tab_ov_verified, &st->vtok) == 0;
        }
    }
    return UI_DIRTY_DETAIL;
}

static void tab_ov_close(struct ui *ui)
{
    void **slot = ui_page_slot(ui, &tab_overview);
    struct tab_ov *st = slot ? *slot : NULL;
    if (!st)
        return;
    ui_cancel(ui, &st->tok);
    ui_cancel(ui, &st->vtok);
    json_decref(st->events);
    free(st->sid);
    free(st);
    *slot = NULL;
}

static unsigned tab_ov_on_event(struct ui *ui, const char *type, json_t *data)
{
    struct tab_ov *st = tab_ov_state(ui);
    if (!st || !st->sid || strcmp(type, "session") != 0)
        return 0;
    const char *id = json_string_value(json_object_get(data, "id"));
    if (!id || strcmp(id, st->sid) != 0)
        return 0;
    if (!st->refetch_at)
        st->refetch_at = ui_now_ms() + TAB_OV_REFETCH_MS;
    return UI_DIRTY_DETAIL; /* the configuration part comes from the model: already new */
}

static int64_t tab_ov_next_tick(const struct ui *ui)
{
    struct tab_ov *st = tab_ov_state((struct ui *)ui);
    return st ? st->refetch_at : 0;
}

static unsigned tab_ov_on_tick(struct ui *ui)
{
    struct tab_ov *st = tab_ov_state(ui);
    if (st && st->refetch_at && st->sid)
        tab_ov_fetch(ui, st);
    return 0;
}

/* ---- the lines ---- */

/* Draws the lines from st->top that fit, and counts them all. */
struct tab_ov_out {
    struct ui *ui;
    WINDOW *w;
    int top, rows, width, n;
};

static void tab_ov_line(struct tab_ov_out *o, const char *label, enum ui_color color,
                        const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void tab_ov_line(struct tab_ov_out *o, const char *label, enum ui_color color,
                        const char *fmt, ...)
{
    int y = o->n++ - o->top;
    if (y < 0 || y >= o->rows)
        return;
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    int x = 1;
    if (label) {
        draw_text(o->ui, o->w, y, x, TAB_OV_LABEL, label, theme_attr(UI_C_COLUMNS));
        x += TAB_OV_LABEL;
    }
    draw_text(o->ui, o->w, y, x, o->width - x - 1, text, theme_attr(color));
}

static const char *tab_ov_str(json_t *o, const char *key, const char *none)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s && *s ? s : none;
}

/* Local time; with_ms: and milliseconds (state changes come fast at start). */
static void tab_ov_time(double t, bool with_ms, char *buf, size_t sz)
{
    /* rounded to the millisecond first, so .9996 shows as the next second's .000 */
    double ms = round(t * 1000);
    struct tm tm;
    size_t n;
    if (timeconv_to_local(floor(ms / 1000), &tm) < 0 ||
        !(n = strftime(buf, sz, "%Y-%m-%d %H:%M:%S", &tm))) {
        snprintf(buf, sz, "-");
        return;
    }
    if (with_ms)
        snprintf(buf + n, sz - n, ".%03d", (int)fmod(ms, 1000));
}

static void tab_ov_age(double t, char *buf, size_t sz)
{
    double d = (double)time(NULL) - t;
    if (!(t > 0) || d < 0)
        buf[0] = '\0';
    else if (d < 120)
        snprintf(buf, sz, " (%.0fs ago)", d);
    else if (d < 7200)
        snprintf(buf, sz, " (%.0fm ago)", d / 60);
    else if (d < 172800)
        snprintf(buf, sz, " (%.0fh ago)", d / 3600);
    else
        snprintf(buf, sz, " (%.0fd ago)", d / 86400);
}

/* Append "KEY VALUE" to a " · "-separated list. */
static void tab_ov_join(const struct ui *ui, char *buf, size_t sz, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void tab_ov_join(const struct ui *ui, char *buf, size_t sz, const char *fmt, ...)
{
    size_t len = strlen(buf);
    if (len && len < sz)
        len += (size_t)snprintf(buf + len, sz - len, " %s ", draw_glyph(ui, "\xC2\xB7", "-"));
    if (len >= sz)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, sz - len, fmt, ap);
    va_end(ap);
}

static void tab_ov_limits(struct tab_ov_out *o, json_t *opts)
{
    json_t *lim = json_object_get(opts, "limits");
    char text[256] = "", size[32];
    json_t *cpus = json_object_get(lim, "cpus"), *mem = json_object_get(lim, "memory");
    json_t *pids = json_object_get(lim, "pids"), *disk = json_object_get(lim, "disk");
    if (json_is_number(cpus) && json_number_value(cpus) > 0)
        tab_ov_join(o->ui, text, sizeof(text), "cpus %g", json_number_value(cpus));
    else
        tab_ov_join(o->ui, text, sizeof(text), "cpus unlimited");
    if (json_is_number(mem) && json_number_value(mem) > 0) {
        samples_format_bytes(json_number_value(mem), size, sizeof(size));
        tab_ov_join(o->ui, text, sizeof(text), "memory %s", size);
    } else {
        tab_ov_join(o->ui, text, sizeof(text), "memory unlimited");
    }
    if (json_is_integer(pids) && json_integer_value(pids) > 0)
        tab_ov_join(o->ui, text, sizeof(text), "pids %lld", (long long)json_integer_value(pids));
    else
        tab_ov_join(o->ui, text, sizeof(text), "pids unlimited");
    if (json_is_number(disk) && json_number_value(disk) > 0) {
        samples_format_bytes(json_number_value(disk), size, sizeof(size));
        tab_ov_join(o->ui, text, sizeof(text), "disk %s", size);
    }
    tab_ov_line(o, "Limits", UI_C_NORMAL, "%s", text);
}

static void tab_ov_ports(struct tab_ov_out *o, json_t *raw, json_t *opts)
{
    json_t *live = json_object_get(raw, "ports"), *asked = json_object_get(opts, "ports"), *p;
    size_t i;
    const char *arrow = draw_glyph(o->ui, "\xE2\x86\x92", "->");
    if (json_array_size(live)) {
        json_array_foreach(live, i, p)
        {
            tab_ov_line(o, i ? "" : "Ports", UI_C_NORMAL, "%lld/%s %s %s:%lld",
                        (long long)json_integer_value(json_object_get(p, "container_port")),
                        tab_ov_str(p, "protocol", "tcp"), arrow, tab_ov_str(p, "host_ip", "?"),
                        (long long)json_integer_value(json_object_get(p, "host_port")));
        }
        return;
    }
    if (!json_array_size(asked)) {
        tab_ov_line(o, "Ports", UI_C_DIM, "none published");
        return;
    }
    json_array_foreach(asked, i, p)
    {
        tab_ov_line(o, i ? "" : "Ports", UI_C_NORMAL, "%lld/%s (no host port while stopped)",
                    (long long)json_integer_value(json_object_get(p, "port")),
                    tab_ov_str(p, "protocol", "tcp"));
    }
}

static void tab_ov_mounts(struct tab_ov_out *o, json_t *opts)
{
    json_t *vols = json_object_get(opts, "volumes"), *v;
    size_t i;
    const char *arrow = draw_glyph(o->ui, "\xE2\x86\x92", "->");
    json_array_foreach(vols, i, v)
    {
        tab_ov_line(o, i ? "" : "Volumes", UI_C_NORMAL, "%s %s %s %s%s", tab_ov_str(v, "type", "?"),
                    tab_ov_str(v, "source", "?"), arrow, tab_ov_str(v, "target", "?"),
                    json_is_true(json_object_get(v, "read_only")) ? " (read-only)" : "");
    }
    if (!json_array_size(vols))
        tab_ov_line(o, "Volumes", UI_C_DIM, "none");
    json_t *ws = json_object_get(opts, "workspace");
    if (!ws) {
        tab_ov_line(o, "Workspace", UI_C_NORMAL, "/workspace in the container (from the image)");
        return;
    }
    const char *src = tab_ov_str(ws, "source", NULL), *upper = tab_ov_str(ws, "upper", NULL);
    tab_ov_line(o, "Workspace", UI_C_NORMAL, "%s%s%s%s%s%s", tab_ov_str(ws, "type", "?"),
                src ? " " : "", src ? src : "", upper ? " (changes in " : "", upper ? upper : "",
                upper ? ")" : "");
    if (json_is_true(json_object_get(ws, "read_only")))
        tab_ov_line(o, "", UI_C_NORMAL, "read-only");
}

/* Names joined with ", " (a JSON array of strings, or of objects with key), cut to fit. */
static void tab_ov_names(json_t *arr, const char *key, char *text, size_t size)
{
    size_t i;
    json_t *v;
    text[0] = '\0';
    json_array_foreach(arr, i, v)
    {
        const char *n = key ? tab_ov_str(v, key, "?") : json_string_value(v);
        size_t len = strlen(text);
        snprintf(text + len, size - len, "%s%s", len ? ", " : "", n ? n : "?");
    }
}

/* Env names only (never values: the engine keeps none), when the engine sends any; then the
 * credential-named ones it withheld. */
static void tab_ov_env(struct tab_ov_out *o, json_t *raw, json_t *opts)
{
    json_t *env = json_object_get(raw, "env");
    if (!json_is_array(env))
        env = json_object_get(opts, "env");
    char text[512];
    if (!json_is_array(env) || !json_array_size(env)) {
        tab_ov_line(o, "Env", UI_C_DIM, "%s",
                    json_is_array(env) ? "none"
                                       : "not shown by the engine (values may be secrets)");
    } else {
        tab_ov_names(env, NULL, text, sizeof(text));
        tab_ov_line(o, "Env", UI_C_NORMAL, "%s (names only)", text);
    }
    json_t *withheld = json_object_get(raw, "withheld_env");
    if (json_array_size(withheld)) {
        tab_ov_names(withheld, "name", text, sizeof(text));
        tab_ov_line(o, "Withheld", UI_C_DIM, "%s (names look like credentials; see env_allow)",
                    text);
    }
}

static void tab_ov_config(struct tab_ov_out *o, const struct model_session *s)
{
    json_t *raw = s->raw, *opts = json_object_get(raw, "options");
    char when[64], age[32];
    tab_ov_line(o, "Name", UI_C_TITLE, "%s", s->name && *s->name ? s->name : "-");
    tab_ov_line(o, "ID", UI_C_NORMAL, "%s", s->id);
    tab_ov_line(o, "Image", UI_C_NORMAL, "%s%s", s->image ? s->image : "-",
                json_object_get(opts, "setup") ? " (a runtime image is built from its setup steps)"
                                               : "");
    tab_ov_line(o, "State", theme_state_color(s->state), "%s", s->state ? s->state : "?");
    if (s->reason && *s->reason)
        tab_ov_line(o, "Reason", UI_C_WARN, "%s", s->reason);
    if (s->error && *s->error && (!s->reason || strcmp(s->error, s->reason) != 0))
        tab_ov_line(o, "Error", UI_C_BAD, "%s", s->error);
    tab_ov_time(s->created_at, false, when, sizeof(when));
    tab_ov_age(s->created_at, age, sizeof(age));
    tab_ov_line(o, "Created", UI_C_NORMAL, "%s%s", when, age);
    const char *cid = tab_ov_str(raw, "container_id", NULL);
    tab_ov_line(o, "Container", cid ? UI_C_NORMAL : UI_C_DIM, "%.12s", cid ? cid : "none");
    json_t *ec = json_object_get(raw, "exit_code");
    if (json_is_integer(ec))
        tab_ov_line(o, "Exit code", UI_C_WARN, "%lld", (long long)json_integer_value(ec));
    json_t *oom = json_object_get(raw, "oom_kills");
    if (json_is_integer(oom) && json_integer_value(oom) > 0)
        tab_ov_line(o, "OOM kills", UI_C_BAD, "%lld", (long long)json_integer_value(oom));
    tab_ov_line(o, "Actions", UI_C_NORMAL, "%lld (%zu waiting for approval)", s->action_count,
                model_count_approvals(&o->ui->model, s->engine, s->id));
    tab_ov_line(o, NULL, UI_C_NORMAL, "%s", "");

    tab_ov_limits(o, opts);
    tab_ov_line(o, "Network", UI_C_NORMAL, "%s", tab_ov_str(opts, "network", "none"));
    tab_ov_ports(o, raw, opts);
    tab_ov_mounts(o, opts);
    tab_ov_line(o, "Read-only", UI_C_NORMAL, "%s",
                json_is_true(json_object_get(opts, "read_only"))
                    ? "yes (root filesystem read-only, /tmp a tmpfs)"
                    : "no");
    tab_ov_line(o, "Runtime", UI_C_NORMAL, "%s",
                tab_ov_str(opts, "runtime", "the daemon's default"));
    json_t *uid = json_object_get(opts, "user_id");
    if (json_is_string(json_object_get(opts, "user")))
        tab_ov_line(o, "Agent user", UI_C_NORMAL, "%s (uid %lld)", tab_ov_str(opts, "user", "?"),
                    (long long)json_integer_value(uid));
    json_t *plugins = json_object_get(opts, "plugins");
    if (json_is_array(plugins)) {
        char list[160] = "";
        size_t i, used = 0;
        json_t *x;
        json_array_foreach(plugins, i, x)
        {
            int n = snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "",
                             json_string_value(x) ? json_string_value(x) : "?");
            if (n < 0 || (size_t)n >= sizeof(list) - used)
                break;
            used += (size_t)n;
        }
        tab_ov_line(o, "Plugins", UI_C_NORMAL, "%s", used ? list : "none");
    }
    json_t *ka = json_object_get(raw, "keep_alive");
    if (!ka)
        ka = json_object_get(opts, "keep_alive");
    tab_ov_line(o, "Keep alive", UI_C_NORMAL, "%s",
                json_is_false(ka) ? "no (deleted when the engine stops cleanly)"
                                  : "yes (outlives the engine)");
    json_t *conf = json_object_get(opts, "confirm"),
           *tmo = json_object_get(opts, "approval_timeout");
    if (conf || tmo)
        tab_ov_line(o, "Approvals", UI_C_NORMAL, "confirm %s, timeout %gs",
                    json_string_value(conf) ? json_string_value(conf) : "-",
                    json_is_number(tmo) ? json_number_value(tmo) : 0.0);
    json_t *gpus = json_object_get(opts, "gpus");
    if (json_is_string(gpus))
        tab_ov_line(o, "GPUs", UI_C_NORMAL, "%s", json_string_value(gpus));
    else if (json_is_integer(gpus))
        tab_ov_line(o, "GPUs", UI_C_NORMAL, "%lld", (long long)json_integer_value(gpus));
    else if (json_is_array(gpus))
        tab_ov_line(o, "GPUs", UI_C_NORMAL, "%zu by id", json_array_size(gpus));
    json_t *git = json_object_get(opts, "git");
    if (git)
        tab_ov_line(o, "Git", UI_C_NORMAL, "%s%s%s%s", tab_ov_str(git, "url", "?"),
                    json_object_get(git, "ref") ? " at " : "", tab_ov_str(git, "ref", ""),
                    json_is_true(json_object_get(git, "token")) ? " (with a token)" : "");
    json_t *setup = json_object_get(opts, "setup");
    if (json_is_array(setup))
        tab_ov_line(o, "Setup", UI_C_NORMAL, "%zu step%s", json_array_size(setup),
                    json_array_size(setup) == 1 ? "" : "s");
    tab_ov_env(o, raw, opts);
}

static void tab_ov_record(struct tab_ov_out *o, const struct tab_ov *st)
{
    if (st->record)
        tab_ov_line(o, "Record", st->record > 0 ? UI_C_OK : UI_C_BAD, "%s", st->record_text);
    else
        tab_ov_line(o, "Record", UI_C_DIM, "%s",
                    st->verifying ? draw_glyph(o->ui, "verifying\xE2\x80\xA6", "verifying...")
                                  : "-");
}

static void tab_ov_history(struct tab_ov_out *o, const struct tab_ov *st)
{
    tab_ov_line(o, NULL, UI_C_NORMAL, "%s", "");
    tab_ov_line(o, NULL, UI_C_TITLE, "State history (oldest first)");
    if (!st->events) {
        tab_ov_line(o, NULL, st->error[0] ? UI_C_BAD : UI_C_DIM, "%s%s",
                    st->error[0] ? "fetching the events: " : "",
                    st->error[0]  ? st->error
                    : st->loading ? draw_glyph(o->ui, "loading\xE2\x80\xA6", "loading...")
                                  : "none");
        return;
    }
    size_t i;
    json_t *e;
    json_array_foreach(st->events, i, e)
    {
        char when[64];
        json_t *at = json_object_get(e, "at");
        double t = json_is_number(at) ? json_number_value(at) : 0;
        tab_ov_time(t, true, when, sizeof(when));
        const char *kind = tab_ov_str(e, "kind", "?"), *detail = tab_ov_str(e, "detail", "");
        /* the time, the state in its colour, then why */
        int y = o->n - o->top;
        tab_ov_line(o, NULL, UI_C_DIM, "%s", when);
        if (y >= 0 && y < o->rows) {
            draw_text(o->ui, o->w, y, 25, 14, kind, theme_attr(theme_state_color(kind)));
            draw_text(o->ui, o->w, y, 40, o->width - 41, detail, theme_attr(UI_C_NORMAL));
        }
    }
    if (!json_array_size(st->events))
        tab_ov_line(o, NULL, UI_C_DIM, "none");
}

static void tab_ov_draw(struct ui *ui, WINDOW *w, bool focused)
{
    (void)focused;
    struct tab_ov *st = tab_ov_state(ui);
    const struct model_session *s = ui_session(ui);
    int h = getmaxy(w), width = getmaxx(w);
    if (!st || !s) {
        draw_text(ui, w, 0, 1, width - 2, "no session selected", theme_attr(UI_C_DIM));
        return;
    }
    struct tab_ov_out o = {.ui = ui, .w = w, .top = st->top, .rows = h, .width = width};
    tab_ov_config(&o, s);
    tab_ov_record(&o, st);
    tab_ov_history(&o, st);
    st->lines = o.n;
    st->rows = h;
    if (o.n > h) { /* more than fits: where we are */
        char more[64];
        snprintf(more, sizeof(more), " %d-%d of %d ", st->top + 1,
                 st->top + h < o.n ? st->top + h : o.n, o.n);
        draw_text_right(ui, w, 0, 0, width, more, theme_attr(UI_C_DIM));
    }
}

/* ---- keys: scrolling ---- */

static unsigned tab_ov_scroll(struct ui *ui, int delta)
{
    struct tab_ov *st = tab_ov_state(ui);
    if (!st)
        return 0;
    int most = st->lines - st->rows > 0 ? st->lines - st->rows : 0;
    long top = (long)st->top + delta;
    top = top < 0 ? 0 : top > most ? most : top;
    if (top == st->top)
        return 0;
    st->top = (int)top;
    return UI_DIRTY_DETAIL;
}

static int tab_ov_page(struct ui *ui)
{
    struct tab_ov *st = tab_ov_state(ui);
    return st && st->rows > 2 ? st->rows - 1 : 1;
}

static unsigned tab_ov_down(struct ui *ui)
{
    return tab_ov_scroll(ui, 1);
}

static unsigned tab_ov_up(struct ui *ui)
{
    return tab_ov_scroll(ui, -1);
}

static unsigned tab_ov_page_down(struct ui *ui)
{
    return tab_ov_scroll(ui, tab_ov_page(ui));
}

static unsigned tab_ov_page_up(struct ui *ui)
{
    return tab_ov_scroll(ui, -tab_ov_page(ui));
}

static unsigned tab_ov_top(struct ui *ui)
{
    return tab_ov_scroll(ui, -1000000);
}

static unsigned tab_ov_bottom(struct ui *ui)
{
    return tab_ov_scroll(ui, 1000000);
}

static const struct ui_key tab_ov_keys[] = {
    {.key = 'j', .name = "j", .help = "scroll down", .fn = tab_ov_down, .hint = "j/k scroll"},
    {.key = KEY_DOWN, .name = "Down", .help = "scroll down", .fn = tab_ov_down},
    {.key = 'k', .name = "k", .help = "scroll up", .fn = tab_ov_up},
    {.key = KEY_UP, .name = "Up", .help = "scroll up", .fn = tab_ov_up},
    {.key = KEY_NPAGE, .name = "PgDn", .help = "page down", .fn = tab_ov_page_down},
    {.key = KEY_PPAGE, .name = "PgUp", .help = "page up", .fn = tab_ov_page_up},
    {.key = 'g', .name = "g", .help = "go to the top", .fn = tab_ov_top},
    {.key = 'G',
     .name = "G",
     .help = "go to the end (the newest state changes)",
     .fn = tab_ov_bottom},
    {0},
};

const struct ui_page tab_overview = {
    .name = "Overview",
    .short_name = "Ovw",
    .keys = tab_ov_keys,
    .list = -1,
    .open = tab_ov_open,
    .close = tab_ov_close,
    .draw = tab_ov_draw,
    .on_event = tab_ov_on_event,
    .next_tick = tab_ov_next_tick,
    .on_tick = tab_ov_on_tick,
};
