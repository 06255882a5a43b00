#include "cmdline.h"

#include <ctype.h>

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
