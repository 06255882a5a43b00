/* paddock (no command): the dashboard, starting an engine when none answers. */
#include "app/app.h"
#include "app/client.h"
#include "ui/ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_dashboard(struct app *app, int argc, char **argv)
{
    struct ui_options opt = {.theme = app->config.theme, .bell = app->config.bell == 1};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--read-only") == 0) {
            opt.read_only = true;
        } else if (strcmp(argv[i], "--bell") == 0) {
            opt.bell = true;
        } else if (strcmp(argv[i], "--theme") == 0 && i + 1 < argc) {
            opt.theme = argv[++i];
        } else {
            fprintf(stderr, "paddock: unknown dashboard option %s\n", argv[i]);
            return 2;
        }
    }
    opt.no_color = getenv("NO_COLOR") && *getenv("NO_COLOR");
    struct client *cl = client_new(app->socket);
    char *err = NULL;
    if (!cl || client_ensure_engine(cl, app->self_exe, app->state_dir, &err) < 0) {
        fprintf(stderr, "paddock: %s\n", err ? err : "out of memory");
        free(err);
        client_free(cl);
        return 1;
    }
    int rc = ui_run(cl, &opt, &err);
    if (err) {
        fprintf(stderr, "paddock: %s\n", err);
        free(err);
    }
    client_free(cl);
    return rc;
}
