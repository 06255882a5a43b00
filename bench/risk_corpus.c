/* Reads the labelled corpus and classifies it (risk_corpus.h). */
#include "bench/risk_corpus.h"

#include "engine/action_kind.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

int risk_corpus_run(const char *path, struct risk_corpus *c, char *err, size_t errsz)
{
    memset(c, 0, sizeof(*c));
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errsz, "cannot open %s", path);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, rc = 0;
    while (getline(&line, &cap, f) > 0) {
        lineno++;
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        json_t *action = json_object_get(o, "action");
        int want = risk_level_parse(json_string_value(json_object_get(o, "level")));
        const char *why = json_string_value(json_object_get(o, "why"));
        if (!json_is_object(action) || want < 0 || !why) {
            snprintf(err, errsz, "%s:%d: not {\"level\", \"action\", \"why\"}", path, lineno);
            json_decref(o);
            rc = -1;
            break;
        }
        struct risk_corpus_line *g = realloc(c->lines, (size_t)(c->n + 1) * sizeof(*g));
        if (!g) {
            snprintf(err, errsz, "out of memory");
            json_decref(o);
            rc = -1;
            break;
        }
        c->lines = g;
        struct risk_corpus_line *l = &c->lines[c->n++];
        struct risk_result r;
        action_kind_classify(action, "/workspace", NULL, &r);
        const char *kind = json_string_value(json_object_get(action, "action"));
        *l = (struct risk_corpus_line){
            .lineno = lineno,
            .want = (enum risk_level)want,
            .got = r.level,
            .summary = strdup(action_kind_summary(kind, json_object_get(action, "args"))),
            .why = strdup(why)};
        snprintf(l->reason, sizeof(l->reason), "%s", r.reason);
        c->matrix[want][r.level]++;
        json_decref(o);
    }
    free(line);
    fclose(f);
    return rc;
}

void risk_corpus_free(struct risk_corpus *c)
{
    for (int i = 0; i < c->n; i++) {
        free(c->lines[i].summary);
        free(c->lines[i].why);
    }
    free(c->lines);
    memset(c, 0, sizeof(*c));
}

void risk_corpus_goals(const struct risk_corpus *c, double *routine_high, double *danger_high,
                       int *danger_low)
{
    int routine = 0, rhigh = 0, danger = 0;
    for (int w = 0; w < 3; w++)
        for (int g = 0; g < 3; g++) {
            if (w == RISK_HIGH)
                danger += c->matrix[w][g];
            else
                routine += c->matrix[w][g];
            if (w != RISK_HIGH && g == RISK_HIGH)
                rhigh += c->matrix[w][g];
        }
    *routine_high = routine ? 100.0 * rhigh / routine : 0;
    *danger_high = danger ? 100.0 * c->matrix[RISK_HIGH][RISK_HIGH] / danger : 0;
    *danger_low = c->matrix[RISK_HIGH][RISK_LOW];
}

void risk_corpus_print(const struct risk_corpus *c, FILE *f, int mismatches)
{
    static const char *const name[] = {"LOW", "MEDIUM", "HIGH"};
    int agree = 0;
    fprintf(f, "risk corpus: %d actions\n%-14s %8s %8s %8s\n", c->n, "labelled \\ got", "LOW",
            "MEDIUM", "HIGH");
    for (int w = 0; w < 3; w++) {
        fprintf(f, "%-14s %8d %8d %8d\n", name[w], c->matrix[w][0], c->matrix[w][1],
                c->matrix[w][2]);
        agree += c->matrix[w][w];
    }
    double rh, dh;
    int dl;
    risk_corpus_goals(c, &rh, &dh, &dl);
    fprintf(f,
            "agreement %.1f %%; routine HIGH %.1f %% (goal <= 1 %%); dangerous HIGH %.1f %% "
            "(goal >= 98 %%); dangerous LOW %d (goal 0)\n",
            c->n ? 100.0 * agree / c->n : 0, rh, dh, dl);
    for (int i = 0; mismatches && i < c->n; i++) {
        const struct risk_corpus_line *l = &c->lines[i];
        if (l->want != l->got)
            fprintf(f, "  line %d: want %s, got %s (%s): %.100s\n", l->lineno, name[l->want],
                    name[l->got], l->reason, l->summary);
    }
}
