/* app/export.c: a session's record, as the engine returns it and with what its sandbox
 * printed, written as an asciinema cast (filtered or raw) or a Markdown report. The first
 * byte picks the format and --raw; the rest is the document. Every line of a cast must be one
 * JSON value (a player reads it line by line), and a filtered cast's text must hold no string
 * sequence (title, clipboard, hyperlink) for the player's terminal to run. */
#include "app/app.h"
#include "app/export.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* app/cli.c (linked for its text helpers) refers to the command table's help, which lives
 * beside main() in app/main.c; the writers never print help, so reaching this is a finding. */
void app_command_help(FILE *f, const char *name)
{
    abort();
}

static void check_cast(const char *out, size_t len, bool raw)
{
    const char *line = out, *end = out + len;
    while (line < end) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        if (!nl)
            abort(); /* every record ends its line */
        json_t *j = json_loadb(line, (size_t)(nl - line), 0, NULL);
        if (!j)
            abort();
        const char *text = json_string_value(json_array_get(j, 2));
        if (!raw && text)
            for (const char *e = strchr(text, '\x1b'); e; e = strchr(e + 1, '\x1b'))
                if (strchr("]PX^_", e[1]))
                    abort();
        json_decref(j);
        line = nl + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    json_t *doc = json_loadb((const char *)data + 1, size - 1, 0, NULL);
    if (!doc)
        return 0;
    bool raw = data[0] & 1, md = data[0] & 2;
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f)
        abort();
    export_write(f, doc, md ? "md" : "cast", raw);
    fclose(f);
    if (!md)
        check_cast(out, len, raw);
    free(out);
    json_decref(doc);
    return 0;
}
