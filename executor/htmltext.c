#include "htmltext.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/utf8.h"

struct writer {
    struct buf *out;
    size_t start; /* where this render began in out */
    bool space;   /* a space is due before the next word */
    int newlines; /* newlines due before the next word (at most 2: one blank line) */
    bool failed;
};

static void put(struct writer *w, const char *s, size_t n)
{
    if (w->out->len > w->start) {
        if (w->newlines)
            w->failed |= buf_append(w->out, "\n\n", (size_t)w->newlines) < 0;
        else if (w->space)
            w->failed |= buf_append(w->out, " ", 1) < 0;
    }
    w->space = false;
    w->newlines = 0;
    w->failed |= buf_append(w->out, s, n) < 0;
}

static void text_char(struct writer *w, const char *s, size_t n)
{
    if (n == 1 && isspace((unsigned char)s[0])) {
        w->space = true;
        return;
    }
    put(w, s, n);
}

static void line_break(struct writer *w, int count)
{
    if (w->newlines < count)
        w->newlines = count;
}

/* A character reference at s ('&' first): its UTF-8 into out and its length into *used, or 0
 * when it is none (the '&' is then text). */
static size_t entity(const char *s, size_t n, char *out, size_t *used)
{
    static const struct {
        const char *name;
        const char *text;
    } named[] = {
        {"amp", "&"},
        {"lt", "<"},
        {"gt", ">"},
        {"quot", "\""},
        {"apos", "'"},
        {"nbsp", " "},
        {"copy", "\xc2\xa9"},
        {"reg", "\xc2\xae"},
        {"mdash", "\xe2\x80\x94"},
        {"ndash", "\xe2\x80\x93"},
        {"hellip", "\xe2\x80\xa6"},
        {"laquo", "\xc2\xab"},
        {"raquo", "\xc2\xbb"},
        {"middot", "\xc2\xb7"},
    };
    const char *semi = memchr(s, ';', n < 12 ? n : 12);
    if (!semi || semi - s < 2)
        return 0;
    size_t len = (size_t)(semi - s) - 1;
    *used = len + 2;
    if (s[1] == '#') {
        char num[12];
        bool hex = len > 1 && (s[2] == 'x' || s[2] == 'X');
        size_t skip = hex ? 2 : 1;
        if (len <= skip || len - skip >= sizeof num)
            return 0;
        memcpy(num, s + 1 + skip, len - skip);
        num[len - skip] = '\0';
        char *end;
        unsigned long cp = strtoul(num, &end, hex ? 16 : 10);
        if (*end)
            return 0;
        return utf8_put(cp == 0 || cp > 0x10FFFF ? 0xFFFD : (uint32_t)cp, out);
    }
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (strlen(named[i].name) == len && memcmp(named[i].name, s + 1, len) == 0) {
            size_t tl = strlen(named[i].text);
            memcpy(out, named[i].text, tl);
            return tl;
        }
    return 0;
}

static bool name_is(const char *name, size_t len, const char *const *list)
{
    for (; *list; list++)
        if (strlen(*list) == len && strncasecmp(*list, name, len) == 0)
            return true;
    return false;
}

/* Elements whose content is not page text. */
static const char *const hidden_tags[] = {"script", "style",  "head",   "noscript", "template",
                                          "svg",    "iframe", "object", NULL};
/* Elements that stand on lines of their own. */
static const char *const block_tags[] = {
    "p",          "div",     "br",      "li",      "ul",         "ol",      "dl",      "dt",
    "dd",         "tr",      "table",   "thead",   "tbody",      "h1",      "h2",      "h3",
    "h4",         "h5",      "h6",      "pre",     "blockquote", "section", "article", "header",
    "footer",     "nav",     "aside",   "main",    "form",       "hr",      "title",   "figure",
    "figcaption", "address", "details", "summary", "body",       "html",    NULL};
static const char *const paragraph_tags[] = {"p",   "h1",         "h2",    "h3", "h4", "h5", "h6",
                                             "pre", "blockquote", "table", "ul", "ol", NULL};

/* Finds the end of the element called name (its closing tag) from s; returns the offset just
 * after it, or n. */
static size_t skip_element(const char *s, size_t n, const char *name, size_t len)
{
    for (size_t i = 0; i + 2 + len <= n; i++)
        if (s[i] == '<' && s[i + 1] == '/' && strncasecmp(s + i + 2, name, len) == 0) {
            const char *gt = memchr(s + i, '>', n - i);
            return gt ? (size_t)(gt - s) + 1 : n;
        }
    return n;
}

int htmltext_render(struct buf *out, const char *html, size_t n)
{
    struct writer w = {.out = out, .start = out->len};
    size_t i = 0;
    while (i < n && !w.failed) {
        char c = html[i];
        if (c == '&') {
            char text[8];
            size_t used = 0, k = entity(html + i, n - i, text, &used);
            if (k) {
                put(&w, text, k);
                i += used;
                continue;
            }
        }
        if (c != '<') {
            size_t k = utf8_next(html + i, n - i);
            text_char(&w, html + i, k);
            i += k;
            continue;
        }
        if (n - i >= 4 && memcmp(html + i, "<!--", 4) == 0) {
            const char *end = NULL;
            for (size_t j = i + 4; j + 3 <= n && !end; j++)
                if (memcmp(html + j, "-->", 3) == 0)
                    end = html + j + 3;
            i = end ? (size_t)(end - html) : n;
            continue;
        }
        const char *gt = memchr(html + i, '>', n - i);
        if (!gt) {
            text_char(&w, html + i, 1);
            i++;
            continue;
        }
        size_t tag_end = (size_t)(gt - html) + 1;
        const char *name = html + i + 1;
        bool closing = *name == '/';
        if (closing)
            name++;
        size_t len = 0;
        while (name + len < gt && (isalnum((unsigned char)name[len]) || name[len] == '-'))
            len++;
        if (len == 0 && !closing && *name != '!' && *name != '?') {
            text_char(&w, html + i, 1); /* a lone '<' */
            i++;
            continue;
        }
        i = tag_end;
        if (!closing && name_is(name, len, hidden_tags) && gt[-1] != '/') {
            i += skip_element(html + i, n - i, name, len);
            continue;
        }
        if (name_is(name, len, block_tags))
            line_break(&w, name_is(name, len, paragraph_tags) ? 2 : 1);
        else if (len == 2 && strncasecmp(name, "td", 2) == 0)
            w.space = true;
    }
    return w.failed ? -1 : 0;
}
