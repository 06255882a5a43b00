/* Page text from HTML, for the browse action: what a reader sees, roughly. Tags go; block
 * elements (p, div, li, h1, br, tr, ...) start new lines; script, style, head and the like go
 * with their content; character references (&amp; &#233; &#x2014; ...) are decoded; runs of
 * white space become one space and blank lines collapse. */
#ifndef PADDOCK_EXECUTOR_HTMLTEXT_H
#define PADDOCK_EXECUTOR_HTMLTEXT_H

#include <stddef.h>

#include "common/buf.h"

/* Appends the text of html to out; -1 when memory runs out. */
int htmltext_render(struct buf *out, const char *html, size_t n);

#endif
