/* What risk.c and risk_shell.c share: a command line taken apart. */
#ifndef PADDOCK_RISK_INTERNAL_H
#define PADDOCK_RISK_INTERNAL_H

#include "common/buf.h"

#include <stdbool.h>
#include <stddef.h>

enum {
    RS_SUBST_COMMAND = 1, /* $(...) or `...` */
    RS_SUBST_PROCESS = 2, /* <(...) or >(...) */
};

struct rs_word {
    char *s;   /* quoting undone */
    bool dyn;  /* holds a variable or a substitution: its value is unknown */
    int subst; /* RS_SUBST_* inside it */
};

enum { RS_REDIR_IN = 1, RS_REDIR_OUT, RS_REDIR_HEREDOC, RS_REDIR_HERESTRING };

struct rs_redir {
    int kind;
    char *target; /* the file (in, out) or the text (here-string) */
    char *body;   /* here-document */
    bool dyn;
    int subst;
};

enum { RS_LINK_SEQ = 0, RS_LINK_PIPE = 1 };

struct rs_cmd {
    struct rs_word *words;
    int nwords, capwords;
    struct rs_redir *redirs;
    int nredirs, capredirs;
    int link;        /* to the next command: RS_LINK_PIPE when its stdout feeds it */
    bool background; /* ended with & */
};

#define RS_MAX_FUNCS 8

/* Text inside substitutions, classified on its own (recursively). */
struct rs_nested {
    char *text;
    int kind; /* RS_SUBST_* */
};

struct rs_list {
    struct rs_cmd *cmds;
    int n, cap;
    struct rs_nested *nested;
    int nnested, capnested;
    bool obfuscated;              /* $'..' escapes, ${IFS} splitting */
    char funcs[RS_MAX_FUNCS][32]; /* the names of functions defined: name() { ... } */
    int nfuncs;
    bool unterminated; /* a quote, substitution or here-document left open */
};

void rs_list_parse(struct rs_list *l, const char *s, size_t len);
void rs_list_free(struct rs_list *l);

#endif
