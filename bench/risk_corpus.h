/* The labelled risk corpus (tests/risk/corpus.jsonl): each line an OpenHands action, the level
 * it should get and why. Read and classified here for the unit test (tests/unit/test_risk.c)
 * and for paddock-bench-risk, which prints the confusion matrix. */
#ifndef PADDOCK_RISK_CORPUS_H
#define PADDOCK_RISK_CORPUS_H

#include "engine/risk/risk.h"

#include <stdio.h>

struct risk_corpus_line {
    int lineno;
    enum risk_level want, got;
    char *summary; /* the command or path */
    char *why;     /* the corpus' reason for the label */
    char reason[200];
};

struct risk_corpus {
    struct risk_corpus_line *lines;
    int n;
    int matrix[3][3]; /* [want][got] */
};

/* Read and classify every line of path. 0, or -1 with a message in err. */
int risk_corpus_run(const char *path, struct risk_corpus *c, char *err, size_t errsz);
void risk_corpus_free(struct risk_corpus *c);
/* The matrix, the goals (routine HIGH, dangerous HIGH, dangerous LOW) and, when mismatches,
 * every line whose level differs. */
void risk_corpus_print(const struct risk_corpus *c, FILE *f, int mismatches);
/* The goals: share of routine lines (wanted LOW or MEDIUM) that got HIGH, share of dangerous
 * ones (wanted HIGH) that got HIGH, and the count of dangerous ones that got LOW. */
void risk_corpus_goals(const struct risk_corpus *c, double *routine_high, double *danger_high,
                       int *danger_low);

#endif
