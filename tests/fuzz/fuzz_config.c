/* app/config.c: the config file's text. It is the operator's own file, but it may come from a
 * checked-out project or be edited by a tool; a damaged one must give an error with a line
 * number, never a crash. */
#include "app/config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct config c;
    memset(&c, 0, sizeof(c));
    char *warnings = NULL, *err = NULL;
    int rc = config_parse((const char *)data, size, "config.toml", &c, &warnings, &err);
    if ((rc < 0) != (err != NULL))
        abort();
    config_confirm(&c);
    free(warnings);
    free(err);
    config_free(&c);
    return 0;
}
