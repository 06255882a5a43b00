#include "cmdline.h"

#include <ctype.h>
#include <stdio.h>

#include "common/utf8.h"
#include "text.h"

static bool is_control(unsigned char c)
{
    return (c < 0x20 && c != '\t') || c == 0x7f;
}

bool cmdline_is_direct(const char *cmd, size_t n, size_t max_line)
{
    if (n == 0 || n > max_line || cmd[n - 1] == '\\')
        return false;
    for (size_t i = 0; i < n; i++)
        if (is_control((unsigned char)cmd[i]))
            return false;
    return true;
}

int cmdline_encode(struct buf *out, const char *cmd, size_t n, size_t max_line)
{
    /* Room for the longest piece (an escaped control byte) and the continuation. */
    size_t chunk = max_line < CMDLINE_CHUNK ? max_line - 16 : CMDLINE_CHUNK;
    if (cmdline_is_direct(cmd, n, max_line))
        return buf_append(out, cmd, n) < 0 || buf_append(out, "\n", 1) < 0 ? -1 : 0;
    if (buf_append_str(out, "eval '") < 0)
        return -1;
    size_t col = 6;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)cmd[i];
        char piece[16];
        size_t plen;
        if (c == '\'') {
            plen = (size_t)snprintf(piece, sizeof piece, "'\\''");
        } else if (c == '\n') {
            plen = 1;
            piece[0] = '\n';
        } else if (c == 0) {
            continue; /* a shell string cannot hold NUL */
        } else if (is_control(c)) {
            plen = (size_t)snprintf(piece, sizeof piece, "'$'\\%03o''", c);
        } else {
            plen = 1;
            piece[0] = (char)c;
        }
        /* Break the physical line, but never inside a UTF-8 sequence. */
        if (col + plen > chunk && !utf8_is_cont(c)) {
            if (buf_append_str(out, "'\\\n'") < 0)
                return -1;
            col = 1;
        }
        if (buf_append(out, piece, plen) < 0)
            return -1;
        col = c == '\n' ? 0 : col + plen;
    }
    return buf_append_str(out, "'\n");
}

/* The trimmed text as [*start, *start + *len). */
static void trim(const char *cmd, size_t n, size_t *start, size_t *len)
{
    size_t a = 0, b = n;
    while (a < b && text_is_space((unsigned char)cmd[a]))
        a++;
    while (b > a && text_is_space((unsigned char)cmd[b - 1]))
        b--;
    *start = a;
    *len = b - a;
}

int cmdline_special_key(const char *cmd, size_t n)
{
    size_t a, len;
    trim(cmd, n, &a, &len);
    if (len != 3 || cmd[a] != 'C' || cmd[a + 1] != '-')
        return -1;
    unsigned char k = (unsigned char)cmd[a + 2];
    if (isalpha(k))
        return toupper(k) & 0x1f;
    switch (k) {
    case '@':
    case ' ':
        return 0;
    case '[':
    case '\\':
    case ']':
    case '^':
    case '_':
        return k & 0x1f;
    case '?':
        return 0x7f;
    default:
        return -1;
    }
}

char cmdline_special_key_name(const char *cmd, size_t n)
{
    size_t a, len;
    trim(cmd, n, &a, &len);
    return len ? (char)toupper((unsigned char)cmd[a + len - 1]) : '?';
}
