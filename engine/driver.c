/* The table of sandbox drivers (driver.h): a new runtime is one line here. */
#include "engine/driver.h"

#include <stdio.h>
#include <string.h>

static const struct sandbox_driver *const drivers[] = {
    &driver_docker,
    &driver_local,
};
#define N_DRIVERS (sizeof(drivers) / sizeof(drivers[0]))

const struct sandbox_driver *driver_find(const char *name)
{
    for (size_t i = 0; i < N_DRIVERS; i++)
        if (strcmp(drivers[i]->name, name) == 0)
            return drivers[i];
    return NULL;
}

const char *driver_names(void)
{
    static char names[256];
    if (!names[0]) {
        size_t n = 0;
        for (size_t i = 0; i < N_DRIVERS && n < sizeof(names); i++)
            n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s", i ? ", " : "",
                                  drivers[i]->name);
    }
    return names;
}
