/* The dashboard's copy of the engine's sessions and of one session's actions. Filled by a
 * fetch on (re)connect and on selection, then kept current from events. No ncurses here. */
#include "ui/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *model_strdup(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? strdup(s) : NULL;
}

static double model_number(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : 0.0;
}

static void model_session_clear(struct model_session *s)
{
    free(s->id);
    free(s->name);
    free(s->image);
    free(s->state);
    free(s->error);
    free(s->reason);
    json_decref(s->raw);
    memset(s, 0, sizeof(*s));
}

static void model_action_clear(struct model_action *a)
{
    free(a->kind);
    free(a->summary);
    free(a->state);
    free(a->risk);
    free(a->approval);
    memset(a, 0, sizeof(*a));
}

/* Parse a session object; false when it has no usable id. */
static bool model_session_parse(json_t *j, struct model_session *s)
{
    memset(s, 0, sizeof(*s));
    const char *id = json_string_value(json_object_get(j, "id"));
    if (!id || !model_id_valid(id))
        return false;
    s->id = strdup(id);
    s->name = model_strdup(j, "name");
    s->image = model_strdup(j, "image");
    s->state = model_strdup(j, "state");
    s->error = model_strdup(j, "error");
    s->reason = model_strdup(j, "reason");
    s->created_at = model_number(j, "created_at");
    json_t *n = json_object_get(j, "action_count");
    s->action_count = json_is_integer(n) ? json_integer_value(n) : 0;
    s->raw = json_incref(j);
    if (!s->id) {
        model_session_clear(s);
        return false;
    }
    return true;
}

static bool model_action_parse(json_t *j, struct model_action *a)
{
    memset(a, 0, sizeof(*a));
    json_t *id = json_object_get(j, "id");
    if (!json_is_integer(id))
        return false;
    a->id = json_integer_value(id);
    a->kind = model_strdup(j, "kind");
    a->summary = model_strdup(j, "summary");
    a->state = model_strdup(j, "state");
    a->risk = model_strdup(j, "risk");
    a->approval = model_strdup(j, "approval");
    a->rule_id = (long long)json_integer_value(json_object_get(json_object_get(j, "rule"), "id"));
    json_t *ec = json_object_get(j, "exit_code");
    a->has_exit = json_is_integer(ec);
    a->exit_code = a->has_exit ? (int)json_integer_value(ec) : 0;
    a->created_at = model_number(j, "created_at");
    a->started_at = model_number(j, "started_at");
    json_t *d = json_object_get(j, "duration_ms");
    a->has_duration = json_is_number(d);
    a->duration_ms = a->has_duration ? json_number_value(d) : 0.0;
    return true;
}

bool model_id_valid(const char *id)
{
    size_t n = 0;
    for (const char *p = id; *p; p++, n++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_'))
            return false;
    return n >= 1 && n <= 64;
}

void model_clear_actions(struct model *m)
{
    for (size_t i = 0; i < m->nactions; i++)
        model_action_clear(&m->actions[i]);
    free(m->actions);
    m->actions = NULL;
    m->nactions = 0;
    free(m->actions_for);
    m->actions_for = NULL;
}

static void model_clear_sessions(struct model *m)
{
    for (size_t i = 0; i < m->nsessions; i++)
        model_session_clear(&m->sessions[i]);
    free(m->sessions);
    m->sessions = NULL;
    m->nsessions = 0;
}

void model_free(struct model *m)
{
    model_clear_sessions(m);
    model_clear_actions(m);
    json_decref(m->approvals);
    m->approvals = NULL;
}

static json_t *model_list(json_t *reply, const char *key, const char **err)
{
    json_t *arr = json_object_get(reply, key);
    if (!json_is_array(arr)) {
        *err = "the engine's reply has no list";
        return NULL;
    }
    return arr;
}

/* Newest first; ties by engine, then id, so a refetch never reorders the list. */
static int model_session_cmp(const void *pa, const void *pb)
{
    const struct model_session *a = pa, *b = pb;
    if (a->created_at != b->created_at)
        return a->created_at > b->created_at ? -1 : 1;
    if (a->engine != b->engine)
        return a->engine < b->engine ? -1 : 1;
    return strcmp(a->id, b->id);
}

int model_set_sessions_of(struct model *m, size_t engine, json_t *reply, const char **err)
{
    json_t *arr = model_list(reply, "sessions", err);
    if (!arr)
        return -1;
    size_t n = json_array_size(arr);
    struct model_session *list = calloc(n + m->nsessions + 1, sizeof(*list));
    if (!list) {
        *err = "out of memory";
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (model_session_parse(json_array_get(arr, i), &list[k]))
            list[k++].engine = engine;
    for (size_t i = 0; i < k; i++) { /* the sparklines outlive a refetch */
        ssize_t old = model_find_session(m, list[i].id);
        if (old < 0 || m->sessions[old].engine != engine)
            continue;
        list[i].spark = m->sessions[old].spark;
        /* counted from action events since the engine's snapshot: never count down */
        if (m->sessions[old].action_count > list[i].action_count)
            list[i].action_count = m->sessions[old].action_count;
    }
    /* the other engines' sessions stay as they are */
    for (size_t i = 0; i < m->nsessions; i++) {
        if (m->sessions[i].engine == engine) {
            model_session_clear(&m->sessions[i]);
            continue;
        }
        list[k++] = m->sessions[i];
    }
    free(m->sessions);
    qsort(list, k, sizeof(*list), model_session_cmp);
    m->sessions = list;
    m->nsessions = k;
    return 0;
}

int model_set_sessions(struct model *m, json_t *reply, const char **err)
{
    return model_set_sessions_of(m, 0, reply, err);
}

bool model_count_action(struct model *m, json_t *data)
{
    if (!json_is_true(json_object_get(data, "new")))
        return false;
    ssize_t at = model_find_session(m, json_string_value(json_object_get(data, "session_id")));
    if (at < 0)
        return false;
    m->sessions[at].action_count++;
    return true;
}

int model_set_actions(struct model *m, const char *session_id, json_t *reply, const char **err)
{
    json_t *arr = model_list(reply, "actions", err);
    if (!arr)
        return -1;
    size_t n = json_array_size(arr);
    struct model_action *list = calloc(n ? n : 1, sizeof(*list));
    char *owner = strdup(session_id);
    if (!list || !owner) {
        free(list);
        free(owner);
        *err = "out of memory";
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (model_action_parse(json_array_get(arr, i), &list[k]))
            k++;
    model_clear_actions(m);
    m->actions = list;
    m->nactions = k;
    m->actions_for = owner;
    return 0;
}

#define MODEL_ENGINE_KEY "_engine" /* which engine an approval came from (set here) */

size_t model_approval_engine(json_t *a)
{
    return (size_t)json_integer_value(json_object_get(a, MODEL_ENGINE_KEY));
}

/* Oldest first across engines: by when each action was asked, then by engine and id (an
 * engine's ids grow with time), so that the order is total and a refetch keeps it. */
static int model_approval_cmp(const void *pa, const void *pb)
{
    json_t *x = *(json_t *const *)pa, *y = *(json_t *const *)pb;
    double a = json_number_value(json_object_get(x, "created_at"));
    double b = json_number_value(json_object_get(y, "created_at"));
    if (a != b)
        return a < b ? -1 : 1;
    size_t ex = model_approval_engine(x), ey = model_approval_engine(y);
    if (ex != ey)
        return ex < ey ? -1 : 1;
    json_int_t ix = json_integer_value(json_object_get(x, "id"));
    json_int_t iy = json_integer_value(json_object_get(y, "id"));
    return ix < iy ? -1 : ix > iy;
}

int model_set_approvals_of(struct model *m, size_t engine, json_t *reply, const char **err)
{
    json_t *arr = model_list(reply, "approvals", err);
    if (!arr)
        return -1;
    size_t n = json_array_size(arr), i;
    json_t **items = calloc(n + json_array_size(m->approvals) + 1, sizeof(*items));
    json_t *merged = json_array();
    if (!items || !merged) {
        free(items);
        json_decref(merged);
        *err = "out of memory";
        return -1;
    }
    size_t k = 0;
    json_t *a;
    json_array_foreach(m->approvals, i, a) if (model_approval_engine(a) != engine) items[k++] = a;
    json_array_foreach(arr, i, a)
    {
        json_object_set_new(a, MODEL_ENGINE_KEY, json_integer((json_int_t)engine));
        items[k++] = a;
    }
    qsort(items, k, sizeof(*items), model_approval_cmp);
    for (size_t j = 0; j < k; j++)
        json_array_append(merged, items[j]);
    free(items);
    json_decref(m->approvals);
    m->approvals = merged;
    return 0;
}

int model_set_approvals(struct model *m, json_t *reply, const char **err)
{
    return model_set_approvals_of(m, 0, reply, err);
}

size_t model_count_approvals(const struct model *m, const char *session_id)
{
    if (!session_id)
        return json_array_size(m->approvals);
    size_t n = 0, i;
    json_t *a;
    json_array_foreach(m->approvals, i, a)
    {
        const char *sid = json_string_value(json_object_get(a, "session_id"));
        if (sid && strcmp(sid, session_id) == 0)
            n++;
    }
    return n;
}

ssize_t model_find_session(const struct model *m, const char *id)
{
    if (!id)
        return -1;
    for (size_t i = 0; i < m->nsessions; i++)
        if (strcmp(m->sessions[i].id, id) == 0)
            return (ssize_t)i;
    return -1;
}

ssize_t model_find_action(const struct model *m, long long id)
{
    for (size_t i = 0; i < m->nactions; i++)
        if (m->actions[i].id == id)
            return (ssize_t)i;
    return -1;
}

bool model_upsert_session(struct model *m, json_t *j)
{
    return model_upsert_session_of(m, 0, j);
}

bool model_upsert_session_of(struct model *m, size_t engine, json_t *j)
{
    struct model_session s;
    if (!model_session_parse(j, &s))
        return false;
    s.engine = engine;
    ssize_t at = model_find_session(m, s.id);
    if (s.state && strcmp(s.state, "deleted") == 0) {
        /* The list shows live sessions only (GET /v1/sessions without ?all). */
        if (at >= 0) {
            model_session_clear(&m->sessions[at]);
            memmove(&m->sessions[at], &m->sessions[at + 1],
                    (m->nsessions - (size_t)at - 1) * sizeof(*m->sessions));
            m->nsessions--;
        }
        model_session_clear(&s);
        return at >= 0;
    }
    if (at >= 0) {
        /* Events may lag the counter a fetch returned: never count down. */
        if (s.action_count < m->sessions[at].action_count)
            s.action_count = m->sessions[at].action_count;
        s.spark = m->sessions[at].spark;
        model_session_clear(&m->sessions[at]);
        m->sessions[at] = s;
        return true;
    }
    struct model_session *grown = realloc(m->sessions, (m->nsessions + 1) * sizeof(*grown));
    if (!grown) {
        model_session_clear(&s);
        return false;
    }
    m->sessions = grown;
    /* newest first */
    size_t pos = 0;
    while (pos < m->nsessions && m->sessions[pos].created_at >= s.created_at)
        pos++;
    memmove(&m->sessions[pos + 1], &m->sessions[pos], (m->nsessions - pos) * sizeof(*grown));
    m->sessions[pos] = s;
    m->nsessions++;
    return true;
}

bool model_upsert_action(struct model *m, const char *session_id, json_t *j)
{
    struct model_action a;
    if (!session_id || !m->actions_for || strcmp(session_id, m->actions_for) != 0)
        return false;
    if (!model_action_parse(j, &a))
        return false;
    ssize_t at = model_find_action(m, a.id);
    if (at >= 0) {
        model_action_clear(&m->actions[at]);
        m->actions[at] = a;
        return true;
    }
    size_t pos = 0; /* largest id first */
    while (pos < m->nactions && m->actions[pos].id > a.id)
        pos++;
    if (pos >= MODEL_ACTIONS_LIMIT) { /* older than everything we keep */
        model_action_clear(&a);
        return false;
    }
    if (m->nactions == MODEL_ACTIONS_LIMIT) { /* drop the oldest */
        model_action_clear(&m->actions[m->nactions - 1]);
        m->nactions--;
    } else {
        struct model_action *grown = realloc(m->actions, (m->nactions + 1) * sizeof(*grown));
        if (!grown) {
            model_action_clear(&a);
            return false;
        }
        m->actions = grown;
    }
    memmove(&m->actions[pos + 1], &m->actions[pos], (m->nactions - pos) * sizeof(a));
    m->actions[pos] = a;
    m->nactions++;
    return true;
}

long long model_count_actions(const struct model *m)
{
    long long n = 0;
    for (size_t i = 0; i < m->nsessions; i++)
        n += m->sessions[i].action_count;
    return n;
}

size_t model_count_sessions_in(const struct model *m, const char *state)
{
    size_t n = 0;
    for (size_t i = 0; i < m->nsessions; i++)
        if (m->sessions[i].state && strcmp(m->sessions[i].state, state) == 0)
            n++;
    return n;
}

bool model_add_sample(struct model *m, json_t *data)
{
    struct sample x;
    ssize_t at = model_find_session(m, json_string_value(json_object_get(data, "session")));
    if (at < 0 || !sample_parse(data, &x))
        return false;
    return samples_spark_push(&m->sessions[at].spark, &x);
}

bool model_seed_samples(struct model *m, const char *session_id, json_t *reply)
{
    ssize_t at = model_find_session(m, session_id);
    json_t *arr = json_object_get(reply, "samples");
    if (at < 0 || !json_is_array(arr))
        return false;
    /* Only the newest SAMPLES_SPARK_N can show. */
    size_t n = json_array_size(arr), from = n > SAMPLES_SPARK_N ? n - SAMPLES_SPARK_N : 0, k = 0;
    struct sample hist[SAMPLES_SPARK_N];
    for (size_t i = from; i < n; i++)
        if (sample_parse(json_array_get(arr, i), &hist[k]))
            k++;
    if (!k)
        return false;
    samples_spark_seed(&m->sessions[at].spark, hist, k);
    return true;
}

bool model_session_matches(const struct model_session *s, const char *needle)
{
    if (!needle || !*needle)
        return true;
    const char *fields[] = {s->id, s->name, s->image, s->state};
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        if (fields[i] && strcasestr(fields[i], needle))
            return true;
    return false;
}
