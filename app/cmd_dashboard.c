/* paddock (no command): the dashboard, starting an engine when none answers. */
#include "app/app.h"
#include "client/client.h"
#include "ui/ui.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PADDOCK_DATADIR
#define PADDOCK_DATADIR "/usr/local/share"
#endif

#define DASH_THEME_DIRS 4
#define DASH_ENGINES_MAX 7 /* beside the local one: the dashboard shows 8 at most */

/* Where NAME.theme is looked for, in order: the operator's own, next to the binary (the build
 * tree's build/themes), the install relative to the binary, the configured data dir. */
static void dashboard_theme_dirs(const struct app *app, char *dirs[DASH_THEME_DIRS + 1])
{
    size_t n = 0;
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    if (xdg && *xdg) {
        if (asprintf(&dirs[n], "%s/paddock/themes", xdg) >= 0)
            n++;
    } else if (home && *home) {
        if (asprintf(&dirs[n], "%s/.config/paddock/themes", home) >= 0)
            n++;
    }
    if (app->self_exe) {
        char exe_dir[PATH_MAX];
        snprintf(exe_dir, sizeof(exe_dir), "%s", app->self_exe);
        char *slash = strrchr(exe_dir, '/');
        if (slash)
            *slash = '\0';
        if (asprintf(&dirs[n], "%s/themes", exe_dir) >= 0)
            n++;
        if (asprintf(&dirs[n], "%s/../share/paddock/themes", exe_dir) >= 0)
            n++;
    }
    if ((dirs[n] = strdup(PADDOCK_DATADIR "/paddock/themes")))
        n++;
    dirs[n] = NULL;
}

int cmd_dashboard(struct app *app, int argc, char **argv)
{
    struct ui_options opt = {
        .theme = app->config.theme,
        .bell = app->config.bell == 1,
        .mouse = app->config.mouse == 1,
        .export_session = app_export_session,
        .export_ctx = app,
    };
    enum { OPT_NO_MOUSE = 256 };
    static const struct option opts[] = {{"read-only", no_argument, NULL, 'r'},
                                         {"theme", required_argument, NULL, 't'},
                                         {"bell", no_argument, NULL, 'b'},
                                         {"mouse", no_argument, NULL, 'm'},
                                         {"no-mouse", no_argument, NULL, OPT_NO_MOUSE},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        if (c == 'r') {
            opt.read_only = true;
        } else if (c == 't') {
            opt.theme = optarg;
        } else if (c == 'b') {
            opt.bell = true;
        } else if (c == 'm') {
            opt.mouse = true;
        } else if (c == OPT_NO_MOUSE) {
            opt.mouse = false;
        } else if (c == 'h') {
            app_command_help(stdout, "dashboard");
            return 0;
        } else {
            return 2; /* getopt said why */
        }
    }
    if (optind < argc) {
        fprintf(stderr, "paddock dashboard: unexpected argument %s\n", argv[optind]);
        return 2;
    }
    opt.no_color = getenv("NO_COLOR") && *getenv("NO_COLOR");
    char *dirs[DASH_THEME_DIRS + 1] = {NULL};
    dashboard_theme_dirs(app, dirs);
    opt.theme_dirs = (const char *const *)dirs;
    char *err = NULL;
    if (ui_check_options(&opt, &err) < 0) { /* before an engine is started for nothing */
        fprintf(stderr, "paddock: %s\n", err ? err : "out of memory");
        free(err);
        for (size_t i = 0; dirs[i]; i++)
            free(dirs[i]);
        return 2;
    }
    /* A remote engine (--engine NAME): no state dir here to diagnose, none to start. */
    bool remote = app->engine && strcmp(app->engine, APP_ENGINE_LOCAL) != 0;
    opt.state_dir = remote ? NULL : app->state_dir;
    opt.engine_name = app->engine;
    /* No engine named: the config file's engines beside the local one. */
    struct ui_engine_conf others[DASH_ENGINES_MAX];
    size_t nothers = 0;
    int rc = 1;
    for (size_t i = 1; !app->engine && i < app_engine_count(app) && nothers < DASH_ENGINES_MAX;
         i++) {
        others[nothers].name = app_engine_name(app, i);
        if (!(others[nothers].client = app_client_of(app, others[nothers].name, &err))) {
            fprintf(stderr, "paddock: engine %s: %s\n", others[nothers].name,
                    err ? err : "out of memory");
            goto out;
        }
        nothers++;
    }
    opt.engines = others;
    opt.nengines = nothers;
    struct client *cl = app_client_new(app);
    if (remote && cl) {
        rc = ui_run(cl, &opt, &err);
        if (err)
            fprintf(stderr, "paddock: %s\n", err);
    } else if (cl && !client_ping(cl) && client_engine_holder(app->state_dir) <= 0)
        fprintf(stderr, "paddock: no engine answers at %s; starting one (its log: %s/engine.log)\n",
                app->socket, app->state_dir);
    if (remote || !cl) {
        /* ran above, or app_client_new said why */
    } else if (client_ensure_engine(cl, app->self_exe, app->state_dir, app->agent_socket, &err) <
               0) {
        fprintf(stderr, "paddock: %s\n", err ? err : "out of memory");
    } else {
        rc = ui_run(cl, &opt, &err);
        if (err)
            fprintf(stderr, "paddock: %s\n", err);
    }
    client_free(cl);
out:
    free(err);
    for (size_t i = 0; i < nothers; i++)
        client_free(others[i].client);
    for (size_t i = 0; dirs[i]; i++)
        free(dirs[i]);
    return rc;
}
