/* A recursive-descent reader of bash's command structure (not its meaning): enough to tell
 * where one top-level command ends and the next begins. */
#include "bashsplit.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

#define SPLIT_OK 0
#define SPLIT_MAX_DEPTH 200   /* nesting of groups, blocks and substitutions */
#define SPLIT_MAX_HEREDOCS 64 /* here-documents opened on one line */

/* What ends the list being read. */
enum closer {
    CLOSE_EOF,   /* the end of the text (top level) */
    CLOSE_PAREN, /* `)`: subshell, $( ), <( ), >( ) */
    CLOSE_BRACE, /* `}` */
    CLOSE_FI,    /* `fi` */
    CLOSE_DONE,  /* `done` */
    CLOSE_CASE,  /* `;;`, `;&`, `;;&` or `esac`: one branch of a case */
};

/* How a case branch ended (parse_list's positive results for CLOSE_CASE). */
#define CASE_NEXT 1
#define CASE_END 2

struct heredoc {
    char *delim;
    size_t len;
    bool strip_tabs; /* <<- */
    bool quoted;     /* the body is literal: no backslash-newline joining */
};

struct parser {
    const char *s;
    size_t n, i;
    int depth;
    struct heredoc pending[SPLIT_MAX_HEREDOCS];
    size_t npending;
    /* Top level: where each command starts. */
    size_t *starts;
    size_t count, cap;
    bool seen;     /* the current top-level command has a token */
    bool need_new; /* a newline ended it: the next token starts another */
};

static int parse_list(struct parser *p, enum closer want, bool top, bool cmdpos);
static int scan_dollar(struct parser *p, bool in_dq);

static int peek(const struct parser *p, size_t k)
{
    return p->i + k < p->n ? (unsigned char)p->s[p->i + k] : -1;
}

static bool is_meta(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' ||
           c == ')' || c == '<' || c == '>';
}

/* Blanks and backslash-newline continuations. */
static void skip_blanks(struct parser *p)
{
    for (;;) {
        int c = peek(p, 0);
        if (c == ' ' || c == '\t')
            p->i++;
        else if (c == '\\' && peek(p, 1) == '\n')
            p->i += 2;
        else
            return;
    }
}

static void skip_comment(struct parser *p)
{
    while (p->i < p->n && p->s[p->i] != '\n')
        p->i++;
}

static int record_start(struct parser *p, size_t at)
{
    if (p->count == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 8;
        size_t *s = realloc(p->starts, cap * sizeof *s);
        if (!s)
            return BASHSPLIT_NOMEM;
        p->starts = s;
        p->cap = cap;
    }
    p->starts[p->count++] = at;
    return SPLIT_OK;
}

/* A token begins at p->i: at the top level it may start a new command. */
static int top_token(struct parser *p, bool top)
{
    if (!top)
        return SPLIT_OK;
    p->seen = true;
    if (!p->need_new)
        return SPLIT_OK;
    p->need_new = false;
    return record_start(p, p->i);
}

/* ---- quoting and substitutions inside words ------------------------------------------- */

static int scan_squote(struct parser *p)
{
    const char *q = memchr(p->s + p->i + 1, '\'', p->n - p->i - 1);
    if (!q)
        return BASHSPLIT_INVALID;
    p->i = (size_t)(q - p->s) + 1;
    return SPLIT_OK;
}

/* $'...': backslash escapes, so \' does not close it. p->i is at the quote. */
static int scan_ansi(struct parser *p)
{
    for (p->i++; p->i < p->n; p->i++) {
        if (p->s[p->i] == '\\')
            p->i++;
        else if (p->s[p->i] == '\'')
            return p->i++, SPLIT_OK;
    }
    return BASHSPLIT_INVALID;
}

static int scan_backtick(struct parser *p)
{
    for (p->i++; p->i < p->n; p->i++) {
        if (p->s[p->i] == '\\')
            p->i++;
        else if (p->s[p->i] == '`')
            return p->i++, SPLIT_OK;
    }
    return BASHSPLIT_INVALID;
}

static int scan_dquote(struct parser *p)
{
    int rc = BASHSPLIT_INVALID;
    if (++p->depth > SPLIT_MAX_DEPTH)
        goto out;
    p->i++;
    while (p->i < p->n) {
        char c = p->s[p->i];
        rc = SPLIT_OK;
        if (c == '"') {
            p->i++;
            goto out;
        }
        if (c == '\\')
            p->i += 2;
        else if (c == '`')
            rc = scan_backtick(p);
        else if (c == '$')
            rc = scan_dollar(p, true);
        else
            p->i++;
        if (rc < 0)
            goto out;
    }
    rc = BASHSPLIT_INVALID;
out:
    p->depth--;
    return rc;
}

/* ${...}: up to the first unquoted `}` (bash does not pair inner braces). */
static int scan_param(struct parser *p, bool in_dq)
{
    while (p->i < p->n) {
        char c = p->s[p->i];
        int rc = SPLIT_OK;
        if (c == '}')
            return p->i++, SPLIT_OK;
        if (c == '\\')
            p->i += 2;
        else if (c == '\'') /* even inside "...": bash's parser pairs them here */
            rc = scan_squote(p);
        else if (c == '"')
            rc = scan_dquote(p);
        else if (c == '`')
            rc = scan_backtick(p);
        else if (c == '$')
            rc = scan_dollar(p, in_dq);
        else
            p->i++;
        if (rc < 0)
            return rc;
    }
    return BASHSPLIT_INVALID;
}

/* Balanced parentheses taken as raw text: (( )), $(( )), extglob groups, array values.
 * p->i is at the first `(`. */
static int scan_parens(struct parser *p)
{
    int level = 0;
    while (p->i < p->n) {
        char c = p->s[p->i];
        int rc = SPLIT_OK;
        if (c == '(') {
            level++;
            p->i++;
        } else if (c == ')') {
            p->i++;
            if (--level == 0)
                return SPLIT_OK;
        } else if (c == '\\') {
            p->i += 2;
        } else if (c == '\'') {
            rc = scan_squote(p);
        } else if (c == '"') {
            rc = scan_dquote(p);
        } else if (c == '`') {
            rc = scan_backtick(p);
        } else if (c == '$') {
            rc = scan_dollar(p, false);
        } else {
            p->i++;
        }
        if (rc < 0)
            return rc;
    }
    return BASHSPLIT_INVALID;
}

/* A command list in parentheses, $( ) or <( ): p->i is just after the `(`. */
static int scan_subcommand(struct parser *p)
{
    return parse_list(p, CLOSE_PAREN, false, true);
}

/* p->i is at a `$`: $'...', $"...", $(( )), $( ), ${ } or a plain `$`. */
static int scan_expansion(struct parser *p, bool in_dq)
{
    int c = peek(p, 1);
    if (c == '\'' && !in_dq) {
        p->i++;
        return scan_ansi(p);
    }
    if (c == '"' && !in_dq) {
        p->i++;
        return scan_dquote(p);
    }
    if (c == '(' && peek(p, 2) == '(') {
        p->i++;
        return scan_parens(p);
    }
    if (c == '(') {
        p->i += 2;
        return scan_subcommand(p);
    }
    if (c == '{') {
        p->i += 2;
        return scan_param(p, in_dq);
    }
    p->i++;
    return SPLIT_OK;
}

/* Every nesting of quotes and substitutions passes through here or scan_dquote, so the
 * depth bound keeps the recursion finite whatever the input. */
static int scan_dollar(struct parser *p, bool in_dq)
{
    int rc;
    if (++p->depth > SPLIT_MAX_DEPTH)
        rc = BASHSPLIT_INVALID;
    else
        rc = scan_expansion(p, in_dq);
    p->depth--;
    return rc;
}

/* NAME= or NAME+= or NAME[...]= : a `(` right after it opens an array value. */
static bool is_assignment_prefix(const char *w, size_t n)
{
    size_t i = 0;
    if (n < 2 || w[n - 1] != '=')
        return false;
    n--;
    if (n > 0 && w[n - 1] == '+')
        n--;
    if (n > 0 && w[n - 1] == ']') {
        const char *open = memchr(w, '[', n);
        if (!open)
            return false;
        n = (size_t)(open - w);
    }
    if (n == 0 || !(w[0] == '_' || (w[0] >= 'a' && w[0] <= 'z') || (w[0] >= 'A' && w[0] <= 'Z')))
        return false;
    for (i = 1; i < n; i++)
        if (!(w[i] == '_' || (w[i] >= 'a' && w[i] <= 'z') || (w[i] >= 'A' && w[i] <= 'Z') ||
              (w[i] >= '0' && w[i] <= '9')))
            return false;
    return true;
}

/* Reads one word at p->i (nothing when p->i is at a metacharacter). */
static int read_word(struct parser *p, bool *found)
{
    size_t start = p->i;
    while (p->i < p->n) {
        char c = p->s[p->i];
        int rc = SPLIT_OK;
        if (c == '\\') {
            if (p->i + 1 >= p->n)
                return BASHSPLIT_INVALID; /* bash would wait for the next line */
            p->i += 2;
        } else if (c == '\'') {
            rc = scan_squote(p);
        } else if (c == '"') {
            rc = scan_dquote(p);
        } else if (c == '`') {
            rc = scan_backtick(p);
        } else if (c == '$') {
            rc = scan_dollar(p, false);
        } else if ((c == '<' || c == '>') && p->i == start && peek(p, 1) == '(') {
            p->i += 2; /* process substitution */
            rc = scan_subcommand(p);
        } else if (c == '(' && p->i > start && memchr("@!+*?", p->s[p->i - 1], 5)) {
            rc = scan_parens(p); /* extglob */
        } else if (c == '(' && is_assignment_prefix(p->s + start, p->i - start)) {
            rc = scan_parens(p); /* array value */
        } else if (is_meta((unsigned char)c)) {
            break;
        } else {
            p->i++;
        }
        if (rc < 0)
            return rc;
    }
    *found = p->i > start;
    return SPLIT_OK;
}

static bool word_is(const struct parser *p, size_t start, const char *kw)
{
    size_t len = strlen(kw);
    return p->i - start == len && memcmp(p->s + start, kw, len) == 0;
}

/* ---- here-documents ------------------------------------------------------------------- */

/* The delimiter as bash compares it: quotes removed. */
static int queue_heredoc(struct parser *p, size_t start, size_t end, bool strip_tabs)
{
    if (p->npending == SPLIT_MAX_HEREDOCS)
        return BASHSPLIT_INVALID;
    char *d = malloc(end - start + 1);
    if (!d)
        return BASHSPLIT_NOMEM;
    size_t len = 0;
    bool quoted = false;
    char q = 0;
    for (size_t i = start; i < end; i++) {
        char c = p->s[i];
        if (q == '\'') {
            if (c == '\'')
                q = 0;
            else
                d[len++] = c;
        } else if (q == '"') {
            if (c == '"')
                q = 0;
            else if (c == '\\' && i + 1 < end && strchr("\"\\$`", p->s[i + 1]))
                d[len++] = p->s[++i];
            else
                d[len++] = c;
        } else if (c == '\'' || c == '"') {
            q = c;
            quoted = true;
        } else if (c == '\\' && i + 1 < end) {
            d[len++] = p->s[++i];
            quoted = true;
        } else {
            d[len++] = c;
        }
    }
    d[len] = '\0';
    p->pending[p->npending++] = (struct heredoc){d, len, strip_tabs, quoted};
    return SPLIT_OK;
}

static void free_heredocs(struct parser *p)
{
    for (size_t k = 0; k < p->npending; k++)
        free(p->pending[k].delim);
    p->npending = 0;
}

/* After a newline token: the bodies of the here-documents opened on that line. */
static int read_heredoc_bodies(struct parser *p)
{
    for (size_t k = 0; k < p->npending; k++) {
        const struct heredoc *h = &p->pending[k];
        bool found = false, joined = false;
        while (!found && p->i < p->n) {
            const char *line = p->s + p->i;
            const char *nl = memchr(line, '\n', p->n - p->i);
            size_t len = nl ? (size_t)(nl - line) : p->n - p->i;
            size_t from = 0;
            if (!joined) {
                if (h->strip_tabs)
                    while (from < len && line[from] == '\t')
                        from++;
                found = len - from == h->len && memcmp(line + from, h->delim, h->len) == 0;
            }
            /* An unquoted body joins backslash-newline lines before it looks for the end. */
            size_t bs = 0;
            while (bs < len && line[len - 1 - bs] == '\\')
                bs++;
            joined = !h->quoted && bs % 2 == 1;
            p->i += len + (nl ? 1 : 0);
        }
        if (!found)
            return BASHSPLIT_INVALID;
    }
    free_heredocs(p);
    return SPLIT_OK;
}

static int take_newline(struct parser *p)
{
    p->i++;
    return read_heredoc_bodies(p);
}

/* ---- commands ------------------------------------------------------------------------- */

/* Length of an IO number (digits, or {name}) glued to a redirection operator, or 0. */
static size_t io_number_len(const struct parser *p)
{
    size_t k = 0;
    if (peek(p, 0) == '{') {
        k = 1;
        while (peek(p, k) == '_' || (peek(p, k) >= 'a' && peek(p, k) <= 'z') ||
               (peek(p, k) >= 'A' && peek(p, k) <= 'Z') ||
               (k > 1 && peek(p, k) >= '0' && peek(p, k) <= '9'))
            k++;
        if (k == 1 || peek(p, k) != '}')
            return 0;
        k++;
    } else {
        while (peek(p, k) >= '0' && peek(p, k) <= '9')
            k++;
    }
    return k && (peek(p, k) == '<' || peek(p, k) == '>') && peek(p, k + 1) != '(' ? k : 0;
}

/* A redirection operator at p->i and its target word. */
static int parse_redirection(struct parser *p)
{
    bool heredoc = false, strip_tabs = false, found;
    char c = p->s[p->i];
    if (c == '<' && peek(p, 1) == '<' && peek(p, 2) == '<') {
        p->i += 3;
    } else if (c == '<' && peek(p, 1) == '<') {
        p->i += 2;
        heredoc = true;
        if (peek(p, 0) == '-') {
            strip_tabs = true;
            p->i++;
        }
    } else if (c == '&') { /* &> &>> */
        p->i += peek(p, 2) == '>' ? 3 : 2;
    } else if (peek(p, 1) == '>' || peek(p, 1) == '&' || (c == '>' && peek(p, 1) == '|')) {
        p->i += 2; /* >> >& <& <> >| */
    } else {
        p->i++;
    }
    skip_blanks(p);
    size_t start = p->i;
    int rc = read_word(p, &found);
    if (rc < 0)
        return rc;
    if (!found)
        return BASHSPLIT_INVALID;
    return heredoc ? queue_heredoc(p, start, p->i, strip_tabs) : SPLIT_OK;
}

/* Blanks, comments and newlines between the parts of a compound command. */
static int skip_separators(struct parser *p)
{
    for (;;) {
        skip_blanks(p);
        int c = peek(p, 0);
        if (c == '#') {
            skip_comment(p);
        } else if (c == '\n') {
            int rc = take_newline(p);
            if (rc < 0)
                return rc;
        } else {
            return SPLIT_OK;
        }
    }
}

/* case WORD in [(]PAT[|PAT]...) LIST ;; ... esac -- p->i is after `case`. */
static int parse_case(struct parser *p)
{
    bool found;
    size_t start;
    int rc;
    skip_blanks(p);
    if ((rc = read_word(p, &found)) < 0)
        return rc;
    if (!found || (rc = skip_separators(p)) < 0)
        return found ? rc : BASHSPLIT_INVALID;
    start = p->i;
    if ((rc = read_word(p, &found)) < 0)
        return rc;
    if (!word_is(p, start, "in"))
        return BASHSPLIT_INVALID;
    for (;;) {
        if ((rc = skip_separators(p)) < 0)
            return rc;
        start = p->i;
        if ((rc = read_word(p, &found)) < 0)
            return rc;
        if (found && word_is(p, start, "esac"))
            return SPLIT_OK;
        p->i = start;
        if (peek(p, 0) == '(')
            p->i++;
        for (;;) {
            skip_blanks(p);
            if ((rc = read_word(p, &found)) < 0)
                return rc;
            if (!found)
                return BASHSPLIT_INVALID;
            skip_blanks(p);
            if (peek(p, 0) == '|') {
                p->i++;
                continue;
            }
            if (peek(p, 0) != ')')
                return BASHSPLIT_INVALID;
            p->i++;
            break;
        }
        rc = parse_list(p, CLOSE_CASE, false, true);
        if (rc == CASE_END)
            return SPLIT_OK;
        if (rc != CASE_NEXT)
            return rc < 0 ? rc : BASHSPLIT_INVALID;
    }
}

/* [[ ... ]]: words and operators up to the word `]]`. p->i is after `[[`. */
static int parse_test(struct parser *p)
{
    for (;;) {
        int rc = skip_separators(p);
        if (rc < 0)
            return rc;
        int c = peek(p, 0);
        if (c < 0)
            return BASHSPLIT_INVALID;
        if (is_meta(c)) {
            p->i++; /* ( ) < > && || ! are operators of the test, not of the shell */
            continue;
        }
        size_t start = p->i;
        bool found;
        if ((rc = read_word(p, &found)) < 0)
            return rc;
        if (word_is(p, start, "]]"))
            return SPLIT_OK;
    }
}

/* `function NAME [()]`: p->i is after `function`. The body follows, maybe after newlines. */
static int parse_function_header(struct parser *p)
{
    bool found;
    skip_blanks(p);
    int rc = read_word(p, &found);
    if (rc < 0)
        return rc;
    if (!found)
        return BASHSPLIT_INVALID;
    size_t save = p->i;
    skip_blanks(p);
    if (peek(p, 0) == '(') {
        p->i++;
        skip_blanks(p);
        if (peek(p, 0) != ')')
            return BASHSPLIT_INVALID;
        p->i++;
    } else {
        p->i = save;
    }
    return SPLIT_OK;
}

/* `NAME ()` after a word in command position: a function header. */
static bool take_function_parens(struct parser *p)
{
    size_t save = p->i;
    skip_blanks(p);
    if (peek(p, 0) == '(') {
        p->i++;
        skip_blanks(p);
        if (peek(p, 0) == ')') {
            p->i++;
            return true;
        }
    }
    p->i = save;
    return false;
}

/* Reads commands until `want` closes the list. cmdpos: the first word is a command name
 * (reserved words count). Returns SPLIT_OK, CASE_NEXT/CASE_END for a case branch, or an
 * error. */
static int parse_list(struct parser *p, enum closer want, bool top, bool cmdpos)
{
    bool have = false;   /* the current pipeline has something */
    bool cont = false;   /* a newline here continues the command (after && || | or f()) */
    bool closed = false; /* a compound command just ended: no plain word may follow */
    int rc = SPLIT_OK;
    if (++p->depth > SPLIT_MAX_DEPTH)
        return BASHSPLIT_INVALID;
    for (;;) {
        skip_blanks(p);
        int c = peek(p, 0);
        if (c < 0) {
            rc = want == CLOSE_EOF && !cont && p->npending == 0 ? SPLIT_OK : BASHSPLIT_INVALID;
            break;
        }
        if (c == '#') {
            skip_comment(p);
            continue;
        }
        if (c == '\n') {
            if ((rc = take_newline(p)) < 0)
                break;
            if (!cont) {
                if (top && p->seen)
                    p->need_new = true;
                cmdpos = true;
                have = closed = false;
            }
            continue;
        }
        if ((rc = top_token(p, top)) < 0)
            break;
        if (c == ';') {
            if (peek(p, 1) == ';' || peek(p, 1) == '&') { /* ;; ;& ;;& end a case branch */
                if (want != CLOSE_CASE) {
                    rc = BASHSPLIT_INVALID;
                    break;
                }
                p->i += 2;
                if (peek(p, 0) == '&')
                    p->i++;
                rc = CASE_NEXT;
                break;
            }
            if (!have) {
                rc = BASHSPLIT_INVALID;
                break;
            }
            p->i++;
            cmdpos = true;
            have = cont = closed = false;
            continue;
        }
        if (c == '&' && peek(p, 1) != '>') {
            if (!have) {
                rc = BASHSPLIT_INVALID;
                break;
            }
            cont = peek(p, 1) == '&';
            p->i += cont ? 2 : 1;
            cmdpos = true;
            have = closed = false;
            continue;
        }
        if (c == '|') {
            if (!have) {
                rc = BASHSPLIT_INVALID;
                break;
            }
            p->i += peek(p, 1) == '|' || peek(p, 1) == '&' ? 2 : 1;
            cmdpos = cont = true;
            have = closed = false;
            continue;
        }
        if (c == ')') {
            rc = want == CLOSE_PAREN && !cont ? SPLIT_OK : BASHSPLIT_INVALID;
            p->i++;
            break;
        }
        if (c == '(') {
            if (!cmdpos) {
                rc = BASHSPLIT_INVALID;
                break;
            }
            if (peek(p, 1) == '(') {
                rc = scan_parens(p); /* (( arithmetic )) */
            } else {
                p->i++;
                rc = scan_subcommand(p);
            }
            if (rc < 0)
                break;
            have = closed = true;
            cmdpos = cont = false;
            continue;
        }
        size_t io = io_number_len(p);
        if (io || ((c == '<' || c == '>' || c == '&') && peek(p, 1) != '(')) {
            p->i += io; /* 2>&1, {fd}>file: the number belongs to the operator */
            if ((rc = parse_redirection(p)) < 0)
                break;
            have = true;
            cont = false;
            continue;
        }

        size_t start = p->i;
        bool found;
        if ((rc = read_word(p, &found)) < 0)
            break;
        if (!found) {
            rc = BASHSPLIT_INVALID;
            break;
        }
        cont = false;
        if (closed) {
            /* After `}`, `fi`, `)`...: only words that close or continue a block. */
            static const char *const closers[] = {"}",    "fi",   "done", "esac",
                                                  "then", "else", "elif", "do"};
            bool ok = false;
            for (size_t k = 0; k < sizeof closers / sizeof closers[0] && !ok; k++)
                ok = word_is(p, start, closers[k]);
            if (!ok) {
                rc = BASHSPLIT_INVALID;
                break;
            }
            cmdpos = true;
            closed = false;
        }
        if (cmdpos) {
            if (word_is(p, start, "{")) {
                rc = parse_list(p, CLOSE_BRACE, false, true);
            } else if (word_is(p, start, "if")) {
                rc = parse_list(p, CLOSE_FI, false, true);
            } else if (word_is(p, start, "while") || word_is(p, start, "until")) {
                rc = parse_list(p, CLOSE_DONE, false, true);
            } else if (word_is(p, start, "for") || word_is(p, start, "select")) {
                skip_blanks(p);
                bool arith = peek(p, 0) == '(' && peek(p, 1) == '(';
                if (arith) { /* for ((i = 0; i < n; i++)) [;] do ... done */
                    if ((rc = scan_parens(p)) < 0)
                        break;
                    skip_blanks(p);
                    if (peek(p, 0) == ';')
                        p->i++;
                }
                rc = parse_list(p, CLOSE_DONE, false, arith);
            } else if (word_is(p, start, "case")) {
                rc = parse_case(p);
            } else if (word_is(p, start, "[[")) {
                rc = parse_test(p);
            } else if (word_is(p, start, "}") || word_is(p, start, "fi") ||
                       word_is(p, start, "done")) {
                enum closer w = p->s[start] == '}'   ? CLOSE_BRACE
                                : p->s[start] == 'f' ? CLOSE_FI
                                                     : CLOSE_DONE;
                rc = want == w ? SPLIT_OK : BASHSPLIT_INVALID;
                break;
            } else if (word_is(p, start, "esac")) {
                rc = want == CLOSE_CASE ? CASE_END : BASHSPLIT_INVALID;
                break;
            } else if (word_is(p, start, "then") || word_is(p, start, "else") ||
                       word_is(p, start, "elif") || word_is(p, start, "do")) {
                if (want != (p->s[start] == 'd' ? CLOSE_DONE : CLOSE_FI)) {
                    rc = BASHSPLIT_INVALID;
                    break;
                }
                have = false;
                continue; /* the next word is a command name again */
            } else if (word_is(p, start, "!") || word_is(p, start, "time")) {
                have = false;
                continue;
            } else if (word_is(p, start, "function")) {
                if ((rc = parse_function_header(p)) < 0)
                    break;
                cont = true;
                have = false;
                continue;
            } else if (take_function_parens(p)) {
                cont = true;
                have = false;
                continue;
            } else {
                have = true;
                cmdpos = false;
                continue;
            }
            if (rc < 0)
                break;
            have = closed = true;
            cmdpos = false;
            continue;
        }
        have = true;
    }
    p->depth--;
    return rc;
}

int bashsplit_split(const char *text, size_t n, struct bashsplit_span **spans)
{
    struct parser p = {.s = text, .n = n};
    int rc;
    *spans = NULL;
    if (n == 0)
        return 0;
    if ((rc = record_start(&p, 0)) < 0 || (rc = parse_list(&p, CLOSE_EOF, true, true)) < 0) {
        free_heredocs(&p);
        free(p.starts);
        return rc;
    }
    struct bashsplit_span *out = malloc(p.count * sizeof *out);
    if (!out) {
        free(p.starts);
        return BASHSPLIT_NOMEM;
    }
    for (size_t k = 0; k < p.count; k++) {
        size_t end = k + 1 < p.count ? p.starts[k + 1] : n;
        out[k].start = p.starts[k];
        out[k].len = text_rstrip_len(text + p.starts[k], end - p.starts[k]);
    }
    rc = (int)p.count;
    free(p.starts);
    *spans = out;
    return rc;
}
