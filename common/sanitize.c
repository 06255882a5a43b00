/* The sanitizer for untrusted text; the rules are in sanitize.h. */
#include "common/sanitize.h"

#include "common/utf8.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SANITIZE_CSI_BODY_MAX 32 /* bytes of CSI parameters shown before `…` */
#define SANITIZE_OSC_NUM_MAX 8   /* digits of an OSC number shown */
#define SANITIZE_NF_MAX 38       /* intermediates of an escape shown */

struct sanitize_buf {
    char *out;
    size_t cap;  /* usable bytes, without the NUL */
    size_t soft; /* cap minus room for the truncation marker */
    size_t len;
    unsigned flags;
    size_t col;   /* code points since the last kept newline (tab stops) */
    bool cut_set; /* first token that passed soft: where the marker would go */
    size_t cut_out;
    size_t cut_in;
    bool overflow; /* a token did not fit in cap: stop */
};

/* Characters that are invisible or reorder text: shown as <U+XXXX>. Sorted ranges. */
static const struct {
    uint32_t lo, hi;
} sanitize_invisible[] = {
    {0x0080, 0x009F},   /* C1 controls */
    {0x00AD, 0x00AD},   /* soft hyphen */
    {0x034F, 0x034F},   /* combining grapheme joiner */
    {0x061C, 0x061C},   /* Arabic letter mark (bidi) */
    {0x115F, 0x1160},   /* Hangul fillers */
    {0x17B4, 0x17B5},   /* Khmer inherent vowels */
    {0x180B, 0x180E},   /* Mongolian variation selectors, vowel separator */
    {0x200B, 0x200F},   /* zero-width space/non-joiner/joiner, LRM, RLM */
    {0x2028, 0x202E},   /* line/paragraph separators, bidi embeddings and overrides */
    {0x2060, 0x206F},   /* word joiner, invisible operators, bidi isolates, deprecated */
    {0x3164, 0x3164},   /* Hangul filler */
    {0xFEFF, 0xFEFF},   /* zero-width no-break space (BOM) */
    {0xFFA0, 0xFFA0},   /* halfwidth Hangul filler */
    {0xFFF0, 0xFFFB},   /* specials, interlinear annotation */
    {0xFFFE, 0xFFFF},   /* noncharacters */
    {0x1D173, 0x1D17A}, /* musical format controls */
    {0xE0000, 0xE0FFF}, /* tags ("ASCII smuggling"), variation selectors supplement */
};

static bool sanitize_is_invisible(uint32_t cp)
{
    for (size_t i = 0; i < sizeof(sanitize_invisible) / sizeof(sanitize_invisible[0]); i++) {
        if (cp < sanitize_invisible[i].lo)
            return false;
        if (cp <= sanitize_invisible[i].hi)
            return true;
    }
    return false;
}

bool sanitize_codepoint_ok(uint32_t cp)
{
    return cp >= 0x20 && cp != 0x7F && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF) &&
           !sanitize_is_invisible(cp);
}

/* Append one token, never split; in_pos is where the token started in the input. */
static void sanitize_emit(struct sanitize_buf *b, const char *p, size_t n, size_t in_pos)
{
    if (b->overflow)
        return;
    if (!b->cut_set && b->len + n > b->soft) {
        b->cut_set = true;
        b->cut_out = b->len;
        b->cut_in = in_pos;
    }
    if (b->len + n > b->cap) {
        b->overflow = true;
        return;
    }
    memcpy(b->out + b->len, p, n);
    b->len += n;
    b->col += utf8_count(p, n);
}

static void sanitize_emit_str(struct sanitize_buf *b, const char *s, size_t in_pos)
{
    sanitize_emit(b, s, strlen(s), in_pos);
}

static const char *sanitize_ellipsis(const struct sanitize_buf *b)
{
    return (b->flags & SANITIZE_ASCII) ? "..." : "\xE2\x80\xA6";
}

/* ---------------------------------------------------------------- the parser
 * One byte at a time, so input may come in chunks: every byte ends up in exactly one token,
 * handed to the sink, which renders it (sanitize_text: a visible token; replay: the kept
 * bytes or nothing). */

enum sanitize_state {
    SCAN_GROUND,
    SCAN_UTF8,       /* inside a multi-byte character */
    SCAN_ESC,        /* after ESC */
    SCAN_CSI,        /* parameters 0x20-0x3F until a final byte 0x40-0x7E */
    SCAN_NF,         /* ESC, intermediates 0x20-0x2F until a final byte 0x30-0x7E */
    SCAN_STRING,     /* OSC, DCS, SOS, PM, APC body */
    SCAN_STRING_ESC, /* an ESC in a string: ST when `\` follows */
};

enum sanitize_kind {
    TOK_CHAR,   /* a well-formed UTF-8 character, or a run of printable ASCII; no control */
    TOK_CTRL,   /* a C0 control or DEL */
    TOK_BAD,    /* one byte that starts no well-formed character */
    TOK_C1,     /* a C1 control that introduces nothing (replay only) */
    TOK_CSI,    /* seq: parameters and intermediates; final: 0 when cut short */
    TOK_STRING, /* intro: `]` `P` `X` `^` `_`; seq: an OSC's number */
    TOK_ESC,    /* seq: intermediates; final: 0 for a lone ESC */
};

struct sanitize_token {
    enum sanitize_kind kind;
    uint32_t cp;                /* CHAR, C1: the (first) code point; CTRL, BAD: the byte */
    const unsigned char *bytes; /* CHAR: its UTF-8 bytes (n of them) */
    size_t n;
    unsigned char intro, final;
    const unsigned char *seq; /* the first SANITIZE_SEQ_MAX bytes */
    size_t seq_len, seq_total;
    bool more;  /* STRING: a body besides the number */
    size_t pos; /* input offset where it started */
};

static void scan_emit(struct sanitize_scan *s, struct sanitize_token *t)
{
    if (!s->stop && !s->sink(s->ctx, t))
        s->stop = true;
}

static void scan_simple(struct sanitize_scan *s, enum sanitize_kind kind, uint32_t cp,
                        const unsigned char *bytes, size_t n, size_t pos)
{
    struct sanitize_token t = {.kind = kind, .cp = cp, .bytes = bytes, .n = n, .pos = pos};
    scan_emit(s, &t);
}

/* The open sequence as a token: CSI, ESC (nF or lone) or STRING. */
static void scan_emit_seq(struct sanitize_scan *s, enum sanitize_kind kind, unsigned char final)
{
    struct sanitize_token t = {.kind = kind,
                               .intro = s->intro,
                               .final = final,
                               .seq = s->seq,
                               .seq_len = s->seq_len,
                               .seq_total = s->seq_total,
                               .more = s->body > 0,
                               .pos = s->tok_pos};
    s->state = SCAN_GROUND;
    scan_emit(s, &t);
}

static void scan_open(struct sanitize_scan *s, enum sanitize_state state, unsigned char intro)
{
    s->state = state;
    s->intro = intro;
    s->seq_len = s->seq_total = s->body = 0;
    s->str_cont = 0;
}

static void scan_seq_add(struct sanitize_scan *s, unsigned char c)
{
    if (s->seq_len < SANITIZE_SEQ_MAX)
        s->seq[s->seq_len++] = c;
    s->seq_total++;
}

/* A C1 control (replay), raw or decoded, starting at tok_pos: opens what it introduces. */
static void scan_c1(struct sanitize_scan *s, uint32_t cp)
{
    static const unsigned char strings[][2] = {
        {0x9D, ']'}, {0x90, 'P'}, {0x98, 'X'}, {0x9E, '^'}, {0x9F, '_'}};
    if (cp == 0x9B) {
        scan_open(s, SCAN_CSI, '[');
        return;
    }
    for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
        if (cp == strings[i][0]) {
            scan_open(s, SCAN_STRING, strings[i][1]);
            return;
        }
    scan_simple(s, TOK_C1, cp, NULL, 0, s->tok_pos);
}

static void scan_byte(struct sanitize_scan *s, unsigned char c, size_t pos);

/* The collected bytes are no character: the lead is bad, the rest are seen again on their
 * own (as the whole-input sanitizer always did). */
static void scan_utf8_bad(struct sanitize_scan *s)
{
    unsigned char u8[4];
    size_t n = s->u8_len, at = s->tok_pos;
    memcpy(u8, s->u8, n);
    s->state = SCAN_GROUND;
    scan_simple(s, TOK_BAD, u8[0], NULL, 0, at);
    for (size_t i = 1; i < n; i++)
        scan_byte(s, u8[i], at + i);
}

static void scan_utf8_done(struct sanitize_scan *s)
{
    uint32_t v;
    if (!utf8_decode((const char *)s->u8, s->u8_need, &v)) { /* overlong, surrogate, too big */
        scan_utf8_bad(s);
        return;
    }
    s->state = SCAN_GROUND;
    if (s->c1 && v >= 0x80 && v <= 0x9F)
        scan_c1(s, v);
    else
        scan_simple(s, TOK_CHAR, v, s->u8, s->u8_need, s->tok_pos);
}

/* A byte of a string's body; in replay, a C1 ST (raw, or U+009C) ends it, a 0x9C inside a
 * UTF-8 character does not; past string_max bytes it ends too. */
static void scan_string_body(struct sanitize_scan *s, unsigned char c)
{
    if (s->c1) {
        bool cont = utf8_is_cont(c);
        if (cont && s->str_cont > 0) {
            if (s->lead == 0xC2 && c == 0x9C) {
                s->body--; /* the C2 before it was the terminator's */
                scan_emit_seq(s, TOK_STRING, 0);
                return;
            }
            s->str_cont--;
        } else if (c == 0x9C) {
            scan_emit_seq(s, TOK_STRING, 0);
            return;
        } else {
            size_t need = utf8_lead_len(c);
            s->str_cont = need ? (unsigned char)(need - 1) : 0;
            s->lead = c;
        }
    }
    s->body++;
    if (s->string_max && s->body >= s->string_max)
        scan_emit_seq(s, TOK_STRING, 0);
}

static void scan_byte(struct sanitize_scan *s, unsigned char c, size_t pos)
{
    for (;;) {
        switch ((enum sanitize_state)s->state) {
        case SCAN_GROUND:
            s->tok_pos = pos;
            if (c == 0x1B) {
                scan_open(s, SCAN_ESC, 0);
            } else if (c < 0x20 || c == 0x7F) {
                scan_simple(s, TOK_CTRL, c, NULL, 0, pos);
            } else if (c < 0x80) {
                s->u8[0] = c;
                scan_simple(s, TOK_CHAR, c, s->u8, 1, pos);
            } else if (utf8_lead_len(c)) {
                s->u8[0] = c;
                s->u8_len = 1;
                s->u8_need = (unsigned char)utf8_lead_len(c);
                s->state = SCAN_UTF8;
            } else if (s->c1 && c <= 0x9F) {
                scan_c1(s, c);
            } else {
                scan_simple(s, TOK_BAD, c, NULL, 0, pos);
            }
            return;
        case SCAN_UTF8:
            if (!utf8_is_cont(c)) {
                scan_utf8_bad(s);
                continue; /* c on its own */
            }
            s->u8[s->u8_len++] = c;
            if (s->u8_len == s->u8_need)
                scan_utf8_done(s);
            return;
        case SCAN_ESC:
            if (c == '[') {
                scan_open(s, SCAN_CSI, '[');
            } else if (c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_') {
                scan_open(s, SCAN_STRING, c);
            } else if (c >= 0x20 && c <= 0x2F) {
                s->state = SCAN_NF;
                scan_seq_add(s, c);
            } else if (c >= 0x30 && c <= 0x7E) {
                scan_emit_seq(s, TOK_ESC, c);
            } else {
                scan_emit_seq(s, TOK_ESC, 0); /* lone ESC */
                continue;
            }
            return;
        case SCAN_CSI:
            if (c >= 0x20 && c <= 0x3F) {
                scan_seq_add(s, c);
            } else if (c >= 0x40 && c <= 0x7E) {
                scan_emit_seq(s, TOK_CSI, c);
            } else {
                scan_emit_seq(s, TOK_CSI, 0);
                continue;
            }
            return;
        case SCAN_NF:
            if (c >= 0x20 && c <= 0x2F) {
                scan_seq_add(s, c);
            } else if (c >= 0x30 && c <= 0x7E) {
                scan_emit_seq(s, TOK_ESC, c);
            } else {
                scan_emit_seq(s, TOK_ESC, 0);
                continue;
            }
            return;
        case SCAN_STRING:
            if (s->intro == ']' && s->body == 0 && s->seq_len < SANITIZE_OSC_NUM_MAX && c >= '0' &&
                c <= '9') {
                scan_seq_add(s, c);
            } else if (c == 0x07 || c == 0x18 || c == 0x1A) {
                scan_emit_seq(s, TOK_STRING, 0);
            } else if (c == 0x1B) {
                s->esc_pos = pos;
                s->state = SCAN_STRING_ESC;
            } else {
                scan_string_body(s, c);
            }
            return;
        case SCAN_STRING_ESC:
            if (c == '\\') {
                scan_emit_seq(s, TOK_STRING, 0);
                return;
            }
            /* the ESC aborts the string and starts its own sequence */
            scan_emit_seq(s, TOK_STRING, 0);
            scan_open(s, SCAN_ESC, 0);
            s->tok_pos = s->esc_pos;
            continue;
        }
        return;
    }
}

static void scan_init(struct sanitize_scan *s, bool (*sink)(void *, const struct sanitize_token *),
                      void *ctx)
{
    memset(s, 0, sizeof(*s));
    s->sink = sink;
    s->ctx = ctx;
}

static void scan_feed(struct sanitize_scan *s, const unsigned char *in, size_t len)
{
    for (size_t i = 0; i < len && !s->stop;) {
        /* printable ASCII, most of any text, goes to the sink a run at a time */
        size_t run = 0;
        while (s->state == SCAN_GROUND && i + run < len && in[i + run] >= 0x20 &&
               in[i + run] < 0x7F)
            run++;
        if (run) {
            s->tok_pos = s->pos;
            scan_simple(s, TOK_CHAR, in[i], in + i, run, s->pos);
            s->pos += run;
            i += run;
            continue;
        }
        scan_byte(s, in[i++], s->pos++);
    }
}

/* The end of the input: what is open becomes its token, cut short. */
static void scan_finish(struct sanitize_scan *s)
{
    while (s->state != SCAN_GROUND && !s->stop) {
        switch ((enum sanitize_state)s->state) {
        case SCAN_UTF8:
            scan_utf8_bad(s);
            break;
        case SCAN_ESC:
        case SCAN_NF:
            scan_emit_seq(s, TOK_ESC, 0);
            break;
        case SCAN_CSI:
            scan_emit_seq(s, TOK_CSI, 0);
            break;
        case SCAN_STRING:
            scan_emit_seq(s, TOK_STRING, 0);
            break;
        case SCAN_STRING_ESC:
            scan_emit_seq(s, TOK_STRING, 0);
            scan_open(s, SCAN_ESC, 0);
            s->tok_pos = s->esc_pos;
            break;
        case SCAN_GROUND:
            break;
        }
    }
    s->state = SCAN_GROUND;
}

/* ---------------------------------------------------------------- visible tokens */

static void sanitize_seq_token(struct sanitize_buf *b, const struct sanitize_token *t)
{
    char tok[8 + SANITIZE_SEQ_MAX + 8];
    size_t n = 0;
    tok[n++] = '^';
    tok[n++] = '[';
    if (t->kind == TOK_CSI) {
        /* the parameters and final byte, at most SANITIZE_CSI_BODY_MAX of them */
        tok[n++] = '[';
        size_t body = t->seq_total + (t->final != 0);
        size_t show = body > SANITIZE_CSI_BODY_MAX ? SANITIZE_CSI_BODY_MAX : body;
        size_t from_seq = show < t->seq_len ? show : t->seq_len;
        memcpy(tok + n, t->seq, from_seq);
        n += from_seq;
        if (from_seq < show)
            tok[n++] = (char)t->final;
        if (show < body) {
            memcpy(tok + n, sanitize_ellipsis(b), strlen(sanitize_ellipsis(b)));
            n += strlen(sanitize_ellipsis(b));
        }
    } else if (t->kind == TOK_STRING) {
        tok[n++] = (char)t->intro;
        memcpy(tok + n, t->seq, t->seq_len);
        n += t->seq_len;
        if (t->more) {
            memcpy(tok + n, sanitize_ellipsis(b), strlen(sanitize_ellipsis(b)));
            n += strlen(sanitize_ellipsis(b));
        }
    } else {
        size_t show = t->seq_len < SANITIZE_NF_MAX ? t->seq_len : SANITIZE_NF_MAX;
        memcpy(tok + n, t->seq, show);
        n += show;
        if (t->final)
            tok[n++] = (char)t->final;
    }
    sanitize_emit(b, tok, n, t->pos);
}

static bool sanitize_sink(void *ctx, const struct sanitize_token *t)
{
    struct sanitize_buf *b = ctx;
    char tok[16];
    switch (t->kind) {
    case TOK_CTRL:
        if (t->cp == '\n') {
            if (b->flags & SANITIZE_MULTILINE) {
                sanitize_emit(b, "\n", 1, t->pos);
                b->col = 0;
            } else {
                sanitize_emit_str(b, (b->flags & SANITIZE_ASCII) ? "^J" : "\xE2\x8F\x8E", t->pos);
            }
        } else if (t->cp == '\t') {
            size_t n = (b->flags & SANITIZE_MULTILINE) ? 8 - b->col % 8 : 1;
            sanitize_emit(b, "        ", n, t->pos);
        } else {
            tok[0] = '^';
            tok[1] = t->cp == 0x7F ? '?' : (char)(t->cp + 0x40);
            sanitize_emit(b, tok, 2, t->pos);
        }
        break;
    case TOK_CHAR:
        if (t->cp < 0x80) {
            for (size_t i = 0; i < t->n && !b->overflow; i++)
                sanitize_emit(b, (const char *)t->bytes + i, 1, t->pos + i);
        } else if ((b->flags & SANITIZE_ASCII) || sanitize_is_invisible(t->cp)) {
            snprintf(tok, sizeof(tok), "<U+%04X>", (unsigned)t->cp);
            sanitize_emit_str(b, tok, t->pos);
        } else {
            sanitize_emit(b, (const char *)t->bytes, t->n, t->pos);
        }
        break;
    case TOK_BAD:
    case TOK_C1:
        snprintf(tok, sizeof(tok), "\\x%02X", (unsigned)t->cp);
        sanitize_emit_str(b, tok, t->pos);
        break;
    case TOK_CSI:
    case TOK_STRING:
    case TOK_ESC:
        sanitize_seq_token(b, t);
        break;
    }
    return !b->overflow;
}

size_t sanitize_text_flags(const char *in_chars, size_t len, char *out, size_t outsz,
                           unsigned flags)
{
    if (outsz == 0)
        return 0;
    const unsigned char *in = (const unsigned char *)(in_chars ? in_chars : "");
    if (!in_chars)
        len = 0;
    struct sanitize_buf b = {.out = out, .cap = outsz - 1, .flags = flags};
    /* Room for the longest marker this input can need. */
    char marker[64];
    int mlen = snprintf(marker, sizeof(marker), "%s[+%zu bytes]", sanitize_ellipsis(&b), len);
    b.soft = b.cap >= (size_t)mlen ? b.cap - (size_t)mlen : b.cap;

    struct sanitize_scan scan;
    scan_init(&scan, sanitize_sink, &b);
    scan_feed(&scan, in, len);
    scan_finish(&scan);
    if (b.overflow) {
        b.len = b.cut_out;
        int m = snprintf(marker, sizeof(marker), "%s[+%zu bytes]", sanitize_ellipsis(&b),
                         len - b.cut_in);
        if (m > 0 && b.len + (size_t)m <= b.cap) {
            memcpy(out + b.len, marker, (size_t)m);
            b.len += (size_t)m;
        }
    }
    out[b.len] = '\0';
    return b.len;
}

size_t sanitize_text(const char *in, size_t len, char *out, size_t outsz)
{
    return sanitize_text_flags(in, len, out, outsz, 0);
}

char *sanitize_dup(const char *in, size_t len, size_t max, unsigned flags)
{
    /* Tokens expand at most 8 bytes per input byte (`<U+XXXX>` for 1..4 bytes, `\xNN` for 1). */
    size_t need = len <= (SIZE_MAX - 64) / 8 ? len * 8 + 64 : SIZE_MAX;
    size_t sz = (need < max ? need : max) + 1;
    char *out = malloc(sz);
    if (!out)
        return NULL;
    size_t n = sanitize_text_flags(in, len, out, sz, flags);
    char *shrunk = realloc(out, n + 1);
    return shrunk ? shrunk : out;
}

/* ---------------------------------------------------------------- replay */

/* DEC private modes that stay on the screen (sanitize.h). */
static const unsigned sanitize_replay_dec_modes[] = {6, 7, 25, 47, 1047, 1048, 1049};

/* What a kept CSI may end with, and how many parameters it may have (-1: any). */
static const struct {
    char final;
    int max_params;
} sanitize_replay_csi[] = {
    {'A', -1}, {'B', -1}, {'C', -1}, {'D', -1}, {'E', -1}, {'F', -1}, {'G', -1}, {'H', -1},
    {'f', -1}, {'d', -1}, {'e', -1}, {'a', -1}, {'`', -1}, {'I', -1}, {'Z', -1}, {'J', -1},
    {'K', -1}, {'X', -1}, {'P', -1}, {'@', -1}, {'L', -1}, {'M', -1}, {'S', -1}, {'b', -1},
    {'g', -1}, {'r', -1}, {'m', -1}, {'T', 1},  {'s', 0},  {'u', 0},
};

/* Whether every parameter of p[0..n) (digits and `;`) is in modes[0..count). */
static bool sanitize_replay_modes_in(const unsigned char *p, size_t n, const unsigned *modes,
                                     size_t count)
{
    size_t i = 0;
    do {
        unsigned v = 0;
        size_t digits = 0;
        for (; i < n && p[i] >= '0' && p[i] <= '9' && digits < 6; i++, digits++)
            v = v * 10 + (p[i] - '0');
        if (digits == 0 || (i < n && p[i] != ';'))
            return false;
        bool found = false;
        for (size_t k = 0; k < count && !found; k++)
            found = modes[k] == v;
        if (!found)
            return false;
    } while (i++ < n);
    return true;
}

static bool sanitize_replay_csi_ok(const struct sanitize_token *t)
{
    if (!t->final || t->seq_total != t->seq_len)
        return false;
    const unsigned char *p = t->seq;
    size_t n = t->seq_len;
    if (n && p[0] == '?') {
        return (t->final == 'h' || t->final == 'l') &&
               sanitize_replay_modes_in(p + 1, n - 1, sanitize_replay_dec_modes,
                                        sizeof(sanitize_replay_dec_modes) /
                                            sizeof(sanitize_replay_dec_modes[0]));
    }
    int params = n ? 1 : 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == ';')
            params++;
        else if (!(p[i] >= '0' && p[i] <= '9') && p[i] != ':')
            return false; /* an intermediate or a prefix: another set of sequences */
    }
    if (t->final == 'h' || t->final == 'l') {
        static const unsigned insert_mode[] = {4};
        return sanitize_replay_modes_in(p, n, insert_mode, 1);
    }
    for (size_t i = 0; i < sizeof(sanitize_replay_csi) / sizeof(sanitize_replay_csi[0]); i++)
        if (sanitize_replay_csi[i].final == (char)t->final)
            return sanitize_replay_csi[i].max_params < 0 ||
                   params <= sanitize_replay_csi[i].max_params;
    return false;
}

static bool sanitize_replay_esc_ok(const struct sanitize_token *t)
{
    if (!t->final)
        return false;
    if (t->seq_total == 0)
        return strchr("78DEMH", t->final) != NULL;
    return t->seq_total == 1 && t->seq[0] == '(' && (t->final == '0' || t->final == 'B');
}

static bool sanitize_replay_sink(void *ctx, const struct sanitize_token *t)
{
    struct sanitize_replay *r = ctx;
    switch (t->kind) {
    case TOK_CHAR:
        r->write(r->ctx, (const char *)t->bytes, t->n);
        break;
    case TOK_CTRL:
        if (t->cp == '\b' || t->cp == '\t' || t->cp == '\n' || t->cp == '\r') {
            char c = (char)t->cp;
            r->write(r->ctx, &c, 1);
        }
        break;
    case TOK_BAD:
        r->write(r->ctx, "\xEF\xBF\xBD", 3); /* U+FFFD, as a UTF-8 terminal shows it */
        break;
    case TOK_CSI:
        if (sanitize_replay_csi_ok(t)) {
            char final = (char)t->final;
            r->write(r->ctx, "\x1b[", 2);
            r->write(r->ctx, (const char *)t->seq, t->seq_len);
            r->write(r->ctx, &final, 1);
        }
        break;
    case TOK_ESC:
        if (sanitize_replay_esc_ok(t)) {
            char final = (char)t->final;
            r->write(r->ctx, "\x1b", 1);
            r->write(r->ctx, (const char *)t->seq, t->seq_len);
            r->write(r->ctx, &final, 1);
        }
        break;
    case TOK_C1:
    case TOK_STRING:
        break;
    }
    return true;
}

void sanitize_replay_init(struct sanitize_replay *r,
                          void (*write)(void *ctx, const char *p, size_t n), void *ctx)
{
    scan_init(&r->scan, sanitize_replay_sink, r);
    r->scan.c1 = true;
    r->scan.string_max = SANITIZE_STRING_MAX;
    r->write = write;
    r->ctx = ctx;
}

void sanitize_replay_feed(struct sanitize_replay *r, const char *in, size_t len)
{
    if (in)
        scan_feed(&r->scan, (const unsigned char *)in, len);
}

void sanitize_replay_finish(struct sanitize_replay *r)
{
    scan_finish(&r->scan);
}

struct sanitize_growbuf {
    char *p;
    size_t len, cap;
    bool failed;
};

static void sanitize_growbuf_write(void *ctx, const char *p, size_t n)
{
    struct sanitize_growbuf *g = ctx;
    if (g->failed)
        return;
    if (g->len + n + 1 > g->cap) {
        size_t cap = (g->len + n + 1) * 2;
        char *q = realloc(g->p, cap);
        if (!q) {
            g->failed = true;
            return;
        }
        g->p = q;
        g->cap = cap;
    }
    memcpy(g->p + g->len, p, n);
    g->len += n;
}

char *sanitize_replay_dup(const char *in, size_t len, size_t *outlen)
{
    struct sanitize_growbuf g = {.p = malloc(len + 1), .cap = len + 1};
    g.failed = !g.p;
    struct sanitize_replay r;
    sanitize_replay_init(&r, sanitize_growbuf_write, &g);
    sanitize_replay_feed(&r, in, len);
    sanitize_replay_finish(&r);
    if (g.failed) {
        free(g.p);
        return NULL;
    }
    g.p[g.len] = '\0';
    if (outlen)
        *outlen = g.len;
    return g.p;
}
