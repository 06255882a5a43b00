/* paddock-bench-risk: the risk classifier against the labelled corpus; prints the confusion
 * matrix and the goals (docs/risk.md).
 *
 *   paddock-bench-risk [--mismatches] [CORPUS]   (default: tests/risk/corpus.jsonl)
 */
#include "bench/risk_corpus.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *path = PADDOCK_RISK_CORPUS;
    int mismatches = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mismatches") == 0)
            mismatches = 1;
        else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: %s [--mismatches] [CORPUS]\n", argv[0]);
            return 2;
        } else
            path = argv[i];
    }
    struct risk_corpus c;
    char err[512];
    if (risk_corpus_run(path, &c, err, sizeof(err)) < 0) {
        fprintf(stderr, "paddock-bench-risk: %s\n", err);
        risk_corpus_free(&c);
        return 1;
    }
    risk_corpus_print(&c, stdout, mismatches);
    risk_corpus_free(&c);
    return 0;
}
