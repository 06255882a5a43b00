#include "common/env_secret.h"

#include <ctype.h>
#include <string.h>

static bool contains_ci(const char *s, size_t len, const char *word)
{
    size_t wl = strlen(word);
    for (size_t i = 0; i + wl <= len; i++) {
        size_t j = 0;
        while (j < wl && toupper((unsigned char)s[i + j]) == word[j])
            j++;
        if (j == wl)
            return true;
    }
    return false;
}

const char *env_secret_word(const char *name, size_t len)
{
    static const char *const words[] = {"KEY",        "TOKEN",   "SECRET", "PASSW",
                                        "CREDENTIAL", "PRIVATE", "COOKIE"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (contains_ci(name, len, words[i]))
            return words[i];
    /* ..._AUTH, but not GIT_AUTHOR_NAME and friends. */
    return len >= 5 && contains_ci(name + len - 5, 5, "_AUTH") ? "_AUTH" : NULL;
}

bool env_secret_allowed(const char *list, const char *name, size_t len)
{
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == len && memcmp(p, name, len) == 0)
            return true;
        p = end ? end + 1 : p + n;
    }
    return false;
}
