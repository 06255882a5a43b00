/* Operations on sessions: pause, resume, stop, delete (asked first, default no), create (a
 * form), open the terminal, export, and the sessions filter; as the sessions list's keys and
 * as the `:` commands (cmdline.c). Every request is asynchronous; the engine's answer (the
 * session) updates the model at once, its events follow. */
#include "client/client.h"
#include "ui/ui_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const struct {
    const char *verb, *doing, *done; /* path verb, "pausing", "paused" */
} ops_names[OPS_COUNT] = {
    [OPS_PAUSE] = {"pause", "pausing", "paused"},
    [OPS_RESUME] = {"resume", "resuming", "resumed"},
    [OPS_STOP] = {"stop", "stopping", "stopped"},
    [OPS_DELETE] = {"delete", "deleting", "deleted"},
    [OPS_CREATE] = {"create", "creating", "created"},
};

/* The ui from the address of its tok_ops[op], which holds op. */
static struct ui *ops_ui(void *ud, enum ops_kind *op)
{
    *op = (enum ops_kind) * (char *)ud;
    return (struct ui *)((char *)ud - *op - offsetof(struct ui, tok_ops));
}

static void *ops_token(struct ui *ui, enum ops_kind op)
{
    ui->tok_ops[op] = (char)op;
    return &ui->tok_ops[op];
}

static const char *ops_label(const struct model_session *s)
{
    return s->name && *s->name ? s->name : s->id;
}

ssize_t ops_find_session(const struct ui *ui, const char *ref, char *why, size_t size)
{
    const struct model *m = &ui->model;
    ssize_t at = model_find_session(m, ref);
    if (at >= 0)
        return at;
    for (size_t i = 0; i < m->nsessions; i++)
        if (m->sessions[i].name && strcmp(m->sessions[i].name, ref) == 0)
            return (ssize_t)i;
    size_t n = strlen(ref), hits = 0;
    for (size_t i = 0; n && i < m->nsessions; i++) {
        if (strncmp(m->sessions[i].id, ref, n) == 0) {
            at = (ssize_t)i;
            hits++;
        }
    }
    if (hits == 1)
        return at;
    if (!hits) {
        snprintf(why, size, "no such session (an id or a name)");
        return -1;
    }
    /* as the CLI and the API say it: the candidates, by their short id and name */
    size_t len = (size_t)snprintf(why, size, "begins %zu sessions:", hits);
    for (size_t i = 0, shown = 0; i < m->nsessions && len < size; i++) {
        const struct model_session *s = &m->sessions[i];
        if (strncmp(s->id, ref, n) != 0)
            continue;
        if (shown++ == 4) {
            len += (size_t)snprintf(why + len, size - len, " ...");
            break;
        }
        len += (size_t)snprintf(why + len, size - len, " %.8s%s%s%s", s->id, s->name ? " (" : "",
                                s->name ? s->name : "", s->name ? ")" : "");
    }
    if (len < size)
        snprintf(why + len, size - len, "; type more of the id, or the name");
    return -1;
}

/* The session an operation is about: id, else the selected one. */
static const struct model_session *ops_target(struct ui *ui, const char *id)
{
    if (!id) {
        const struct model_session *s = ui_session(ui);
        if (!s)
            ui_set_error(ui, "no session selected");
        return s;
    }
    char why[300];
    ssize_t at = ops_find_session(ui, id, why, sizeof(why));
    if (at < 0) {
        ui_set_error(ui, "%s: %s", id, why);
        return NULL;
    }
    return &ui->model.sessions[at];
}

static bool ops_create_refused(struct ui *ui, const char *why);

/* The engine's answer to an operation: the session as it is now. */
static void ops_done(int status, json_t *reply, const char *err, void *ud)
{
    enum ops_kind op;
    struct ui *ui = ops_ui(ud, &op);
    if (status < 0 || (status != 200 && status != 201)) {
        const char *why = status < 0 ? (err ? err : "the engine did not answer")
                                     : client_error_message(reply, "the engine refused");
        /* the create form still open: it keeps what was typed and says why there */
        if (op == OPS_CREATE && ops_create_refused(ui, why))
            return;
        ui_set_error(ui, "%s: %s", ops_names[op].verb, why);
        return;
    }
    if (op == OPS_CREATE)
        form_answer(ui, -1, NULL);
    const char *name = json_string_value(json_object_get(reply, "name"));
    const char *id = json_string_value(json_object_get(reply, "id"));
    const char *state = json_string_value(json_object_get(reply, "state"));
    if (model_upsert_session(&ui->model, reply)) {
        if (op == OPS_CREATE && id && model_id_valid(id)) { /* show the new one */
            ui->dirty |= ui_select_session(ui, id);
            ui->focus = UI_PANE_SESSIONS;
        }
        view_sessions.sync(ui);
    }
    const char *who = name && *name ? name : id ? id : "?";
    if (state && strcmp(state, ops_names[op].done) != 0)
        ui_set_status(ui, "%s %s (%s)", ops_names[op].done, who, state);
    else
        ui_set_status(ui, "%s %s", ops_names[op].done, who);
    ui->dirty |= UI_DIRTY_ALL;
}

static unsigned ops_send(struct ui *ui, enum ops_kind op, const char *id, const char *label)
{
    char path[160];
    if (op == OPS_DELETE)
        snprintf(path, sizeof(path), "/v1/sessions/%s", id);
    else
        snprintf(path, sizeof(path), "/v1/sessions/%s/%s", id, ops_names[op].verb);
    ui_request(ui, op == OPS_DELETE ? "DELETE" : "POST", path, NULL, ops_done, ops_token(ui, op));
    ui_set_status(ui, "%s %s ...", ops_names[op].doing, label);
    return UI_DIRTY_FOOTER;
}

static unsigned ops_delete_yes(struct ui *ui, void *ud)
{
    (void)ud;
    ssize_t at = model_find_session(&ui->model, ui->ops_id);
    if (at < 0) {
        ui_set_error(ui, "that session is already gone");
        return UI_DIRTY_FOOTER;
    }
    return ops_send(ui, OPS_DELETE, ui->ops_id, ops_label(&ui->model.sessions[at]));
}

unsigned ops_session(struct ui *ui, enum ops_kind op, const char *id)
{
    const struct model_session *s = ops_target(ui, id);
    if (!s)
        return UI_DIRTY_FOOTER;
    if (!model_id_valid(s->id))
        return 0;
    if (op != OPS_DELETE)
        return ops_send(ui, op, s->id, ops_label(s));
    snprintf(ui->ops_id, sizeof(ui->ops_id), "%s", s->id);
    char q[256];
    snprintf(q, sizeof(q), "Delete session %s? Its container goes; its history stays.",
             ops_label(s));
    confirm_open(ui, q, ops_delete_yes, NULL);
    return UI_DIRTY_ALL;
}

/* ---- create ---- */

static const char *const ops_networks[] = {"none", "egress", "bridge", NULL};
/* The engine's built-in egress presets (engine/session_config.c, docs/egress.md). */
static const char *const ops_egress_presets[] = {"python", "node", "git-hosts"};
static const char *const ops_policies[] = {"default", "never", "high", "medium", "always", NULL};

enum { F_IMAGE, F_NAME, F_MEMORY, F_CPUS, F_NETWORK, F_EGRESS, F_CONFIRM, F_COUNT };

/* The field an engine's refusal is about: the first whose word its message names (the
 * engine says "limits.memory", "cpus", "image" ...). */
static const struct {
    int field;
    const char *word;
} ops_create_words[] = {
    {F_EGRESS, "egress."},  {F_MEMORY, "memory"},   {F_CPUS, "cpus"}, {F_IMAGE, "image"},
    {F_NETWORK, "network"}, {F_CONFIRM, "confirm"}, {F_NAME, "name"},
};

static bool ops_create_refused(struct ui *ui, const char *why)
{
    if (!form_waiting(ui))
        return false;
    int bad = -1;
    for (size_t i = 0; bad < 0 && i < sizeof(ops_create_words) / sizeof(ops_create_words[0]); i++)
        if (strstr(why, ops_create_words[i].word))
            bad = ops_create_words[i].field;
    char msg[300];
    snprintf(msg, sizeof(msg), "the engine refused: %s", why);
    form_answer(ui, bad, msg);
    ui_set_status(ui, "%s", "");
    ui->dirty |= UI_DIRTY_ALL;
    return true;
}

static int ops_create_submit(struct ui *ui, const char *const *v, void *ud, char *err, size_t errsz,
                             int *bad)
{
    (void)ud;
    json_t *body = json_object(), *limits = json_object();
    if (*v[F_IMAGE])
        json_object_set_new(body, "image", json_string(v[F_IMAGE]));
    if (*v[F_NAME])
        json_object_set_new(body, "name", json_string(v[F_NAME]));
    if (*v[F_MEMORY])
        json_object_set_new(limits, "memory", json_string(v[F_MEMORY]));
    if (*v[F_CPUS]) {
        char *end = NULL;
        errno = 0;
        double cpus = strtod(v[F_CPUS], &end);
        if (errno || end == v[F_CPUS] || *end || !(cpus > 0)) {
            snprintf(err, errsz, "cpus: a number above 0, such as 1.5 (empty: the default)");
            *bad = F_CPUS;
            json_decref(body);
            json_decref(limits);
            return -1;
        }
        json_object_set_new(limits, "cpus", json_real(cpus));
    }
    if (json_object_size(limits))
        json_object_set(body, "limits", limits);
    json_decref(limits);
    /* "none" is the default: leaving it out keeps the warm pool usable */
    if (strcmp(v[F_NETWORK], "none") != 0)
        json_object_set_new(body, "network", json_string(v[F_NETWORK]));
    if (strcmp(v[F_NETWORK], "egress") == 0) {
        /* Presets by name, the rest as patterns; what neither names is asked about. */
        json_t *allow = json_array(), *presets = json_array();
        char *list = strdup(v[F_EGRESS]);
        for (char *save = NULL, *t = list ? strtok_r(list, ", ", &save) : NULL; t;
             t = strtok_r(NULL, ", ", &save)) {
            bool preset = false;
            for (size_t i = 0; i < sizeof ops_egress_presets / sizeof ops_egress_presets[0]; i++)
                preset = preset || strcmp(t, ops_egress_presets[i]) == 0;
            json_array_append_new(preset ? presets : allow, json_string(t));
        }
        free(list);
        json_object_set_new(
            body, "egress",
            json_pack("{s:o,s:o,s:b}", "allow", allow, "presets", presets, "ask", 1));
    } else if (*v[F_EGRESS]) {
        snprintf(err, errsz, "allow: hosts for network egress only");
        *bad = F_EGRESS;
        json_decref(body);
        return -1;
    }
    if (strcmp(v[F_CONFIRM], "default") != 0)
        json_object_set_new(body, "confirm", json_string(v[F_CONFIRM]));
    ui_request(ui, "POST", "/v1/sessions", body, ops_done, ops_token(ui, OPS_CREATE));
    json_decref(body);
    ui_set_status(ui, "creating a session from %s ...",
                  *v[F_IMAGE] ? v[F_IMAGE] : "the default image");
    return 1; /* the form waits: a value the engine refuses is corrected there */
}

static void ops_create_form(struct ui *ui, const char *image)
{
    const struct form_field fields[F_COUNT] = {
        [F_IMAGE] = {"image", FORM_TEXT, image, NULL,
                     "the sandbox's image (empty: the engine's default)"},
        [F_NAME] = {"name", FORM_TEXT, "", NULL, "optional; letters, digits, - _ ."},
        [F_MEMORY] = {"memory", FORM_TEXT, "", NULL, "such as 512m or 2g (empty: 2g)"},
        [F_CPUS] = {"cpus", FORM_TEXT, "", NULL, "such as 0.5 or 2 (empty: 2)"},
        [F_NETWORK] = {"network", FORM_CHOICE, "none", ops_networks,
                       "none: no network; egress: through the engine's proxy, per host; bridge: "
                       "Docker's bridge"},
        [F_EGRESS] = {"allow", FORM_TEXT, "", NULL,
                      "hosts (pypi.org, *.github.com) or presets (python, node, git-hosts); "
                      "other hosts wait for you"},
        [F_CONFIRM] = {"approvals", FORM_CHOICE, "default", ops_policies,
                       "which actions wait for the operator (default: the engine's policy)"},
    };
    /* with several engines: the selected session's engine makes it (ui_request) */
    char title[96];
    snprintf(title, sizeof(title), "New session on %s",
             ui->engines[ui_engine_index(ui, NULL)].name);
    form_open(ui, ui->nengines > 1 ? title : "New session", fields, F_COUNT, ops_create_submit,
              NULL);
}

static void ops_info_fetched(int status, json_t *reply, const char *err, void *ud)
{
    (void)err;
    struct ui *ui = (struct ui *)((char *)ud - offsetof(struct ui, tok_info));
    const char *image =
        status == 200 ? json_string_value(json_object_get(reply, "default_image")) : NULL;
    if (ui->modal) /* something else took the keyboard meanwhile */
        return;
    ui_set_status(ui, "%s", "");
    ops_create_form(ui, image ? image : "");
    ui->dirty |= UI_DIRTY_ALL;
}

unsigned ops_create_open(struct ui *ui)
{
    if (!ui_engine_up(ui, ui->sel_session)) {
        ops_create_form(ui, "");
        return UI_DIRTY_ALL;
    }
    /* the default image first: the form opens with it filled in */
    ui_cancel(ui, &ui->tok_info);
    ui_request(ui, "GET", "/v1/info", NULL, ops_info_fetched, &ui->tok_info);
    ui_set_status(ui, "asking the engine for its default image ...");
    return UI_DIRTY_FOOTER;
}

/* ---- terminal, export ---- */

unsigned ops_terminal(struct ui *ui)
{
    if (!ui_session(ui)) {
        ui_set_error(ui, "no session selected");
        return UI_DIRTY_FOOTER;
    }
    for (size_t t = 0; t < ui_ntabs; t++) {
        if (strcasecmp(ui_tabs[t]->name, "Terminal") == 0) {
            unsigned dirty = ui_show_tab(ui, t), opened = 0;
            ui->focus = UI_PANE_DETAIL;
            /* the shell at once: t says what is wanted (the tab's Enter, refused read-only) */
            if (!ui->opt->read_only)
                keys_run(ui, ui_tabs[t]->keys, '\n', false, &opened);
            return dirty | opened | UI_DIRTY_ALL;
        }
    }
    ui_set_error(ui, "this dashboard has no Terminal tab (paddock exec SESSION opens a shell)");
    return UI_DIRTY_FOOTER;
}

/* What the export's child process reads (its own copy of it). */
struct ops_export_arg {
    const struct ui_options *opt;
    const char *engine, *id, *dir;
};

static int ops_export_run(void *arg, ui_progress_fn progress, void *progress_ctx, char **msg)
{
    const struct ops_export_arg *a = arg;
    return a->opt->export_session(a->opt->export_ctx, a->engine, a->id, a->dir, progress,
                                  progress_ctx, msg);
}

static unsigned ops_export_to(struct ui *ui, const char *id, const char *dir)
{
    if (!ui->opt->export_session) {
        ui_set_error(ui, "export is not available here (paddock export SESSION)");
        return UI_DIRTY_FOOTER;
    }
    /* A session of many actions takes a while: a child process fetches and writes it while
     * the dashboard stays live; the footer counts the actions fetched. */
    struct ops_export_arg arg = {
        .opt = ui->opt, .engine = ui->engines[ui_engine_index(ui, id)].name, .id = id, .dir = dir};
    char what[200], *err = NULL;
    snprintf(what, sizeof(what), "exporting to %s", dir);
    if (job_start(ui, "export", what, "actions", ops_export_run, &arg, &err) < 0) {
        ui_set_error(ui, "%s", err ? err : "export: out of memory");
        free(err);
    }
    return UI_DIRTY_FOOTER;
}

static unsigned ops_export_dir(struct ui *ui, const char *dir, void *ud)
{
    (void)ud;
    if (!dir) {
        ui_set_status(ui, "not exported");
        return UI_DIRTY_FOOTER;
    }
    if (!*dir) {
        ui_set_error(ui, "not exported: no directory given");
        return UI_DIRTY_FOOTER;
    }
    return ops_export_to(ui, ui->ops_id, dir);
}

unsigned ops_export(struct ui *ui, const char *id, const char *dir)
{
    const struct model_session *s = ops_target(ui, id);
    if (!s)
        return UI_DIRTY_FOOTER;
    snprintf(ui->ops_id, sizeof(ui->ops_id), "%s", s->id);
    if (dir)
        return ops_export_to(ui, s->id, dir);
    char cwd[1024];
    if (!getcwd(cwd, sizeof(cwd)))
        snprintf(cwd, sizeof(cwd), ".");
    char label[160];
    snprintf(label, sizeof(label),
             "export %.60s (JSON, Markdown, cast) into directory: ", ops_label(s));
    prompt_open(ui, label, cwd, ops_export_dir, NULL);
    return UI_DIRTY_ALL;
}

/* ---- theme ---- */

unsigned ops_theme(struct ui *ui, const char *name)
{
    struct ui_theme t;
    char *err = NULL;
    if (theme_load(name, ui->opt->theme_dirs, &t, &err) < 0) {
        ui_set_error(ui, "%s", err ? err : "cannot load the theme");
        free(err);
        return UI_DIRTY_FOOTER;
    }
    ui->theme_cur = t;
    ui->theme = &ui->theme_cur;
    theme_apply(ui->theme, ui->color);
    ui_set_status(ui, "theme %s%s", t.name, ui->color ? "" : " (no colours: its monochrome look)");
    clearok(curscr, TRUE);
    return UI_DIRTY_LAYOUT | UI_DIRTY_ALL;
}

/* ---- the sessions list's keys ---- */

static unsigned ops_key_pause(struct ui *ui)
{
    return ops_session(ui, OPS_PAUSE, NULL);
}

static unsigned ops_key_resume(struct ui *ui)
{
    return ops_session(ui, OPS_RESUME, NULL);
}

static unsigned ops_key_stop(struct ui *ui)
{
    return ops_session(ui, OPS_STOP, NULL);
}

/* d deletes in other tools: here it only says which key does, so that it is not silent. */
static unsigned ops_key_d(struct ui *ui)
{
    ui_set_status(ui, "D deletes the selected session (it asks first)");
    return UI_DIRTY_FOOTER;
}

static unsigned ops_key_delete(struct ui *ui)
{
    return ops_session(ui, OPS_DELETE, NULL);
}

static unsigned ops_key_export(struct ui *ui)
{
    return ops_export(ui, NULL, NULL);
}

static unsigned ops_filter_changed(struct ui *ui, const char *text, void *ud)
{
    (void)ud;
    return view_sessions_set_filter(ui, text);
}

unsigned ops_filter_apply(struct ui *ui, const char *text)
{
    unsigned dirty = view_sessions_set_filter(ui, text); /* NULL or "": no filter */
    if (ui->sessions_filter)
        ui_set_status(ui, "%zu of %zu sessions match /%s", ui->sessions_nrows, ui->model.nsessions,
                      ui->sessions_filter);
    else
        ui_set_status(ui, "no filter");
    return dirty | UI_DIRTY_FOOTER;
}

static unsigned ops_filter_done(struct ui *ui, const char *text, void *ud)
{
    (void)ud;
    return ops_filter_apply(ui, text); /* Esc (NULL): no filter */
}

static unsigned ops_key_filter(struct ui *ui)
{
    prompt_open_live(ui, "/", ui->sessions_filter, ops_filter_done, ops_filter_changed, NULL);
    return UI_DIRTY_FOOTER;
}

static unsigned ops_key_clear_filter(struct ui *ui)
{
    if (!ui->sessions_filter)
        return 0;
    ui_set_status(ui, "no filter");
    return view_sessions_set_filter(ui, NULL) | UI_DIRTY_FOOTER;
}

const struct ui_key ops_session_keys[] = {
    {.key = '/',
     .name = "/",
     .help = "filter by id, name, image or state (Esc clears)",
     .fn = ops_key_filter,
     .hint = "/ filter"},
    {.key = 27, .name = "Esc", .help = "clear the filter", .fn = ops_key_clear_filter},
    {.key = 'c',
     .name = "c",
     .help = "create a session (a form)",
     .fn = ops_create_open,
     .hint = "c new",
     .mutates = true},
    {.key = 'p',
     .name = "p",
     .help = "pause the selected session (a freeze)",
     .fn = ops_key_pause,
     .hint = "p/u pause/resume",
     .mutates = true},
    {.key = 'u',
     .name = "u",
     .help = "resume it (unfreeze, or start a stopped one)",
     .fn = ops_key_resume,
     .mutates = true},
    {.key = 'S',
     .name = "S",
     .help = "stop its container (resume starts it again)",
     .fn = ops_key_stop,
     .hint = "S stop",
     .mutates = true},
    {.key = 'D',
     .name = "D",
     .help = "delete it (asks first; its history stays)",
     .fn = ops_key_delete,
     .hint = "D delete",
     .mutates = true},
    {.key = 'd', .name = "d", .help = "says that D deletes", .fn = ops_key_d},
    {.key = 't', .name = "t", .help = "open a shell in it (the Terminal tab)", .fn = ops_terminal},
    {.key = 'e',
     .name = "e",
     .help = "export its record (JSON, Markdown, cast)",
     .fn = ops_key_export,
     .hint = "e export"},
    {0},
};

void ops_free(struct ui *ui)
{
    free(ui->sessions_filter);
    ui->sessions_filter = NULL;
    free(ui->sessions_rows);
    ui->sessions_rows = NULL;
    ui->sessions_nrows = 0;
}
