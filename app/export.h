/* paddock export: a session's record as JSON, a Markdown report or an asciinema cast, written
 * from the document app/cmd_export.c collects ({"session", "actions", "logs"}). Everything in it
 * came from the engine and, through it, from a sandbox: the writers pass text through
 * common/sanitize (the cast through its replay filter unless raw). */
#ifndef PADDOCK_APP_EXPORT_H
#define PADDOCK_APP_EXPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* format: "json", "md" or "cast"; raw: the cast keeps the output's bytes. */
void export_write(FILE *f, json_t *doc, const char *format, bool raw);

#endif
