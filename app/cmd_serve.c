/* paddock serve: the engine in the foreground. */
#include "app/app.h"
#include "engine/engine.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

static void serve_on_ready(const char *socket_path, void *ud)
{
    const struct engine_options *o = ud;
    fprintf(stderr, "paddock engine %s listening on %s (state %s, image %s, executor %s)\n",
            PADDOCK_VERSION, socket_path, o->state_dir, o->image,
            o->executor ? o->executor : "NOT FOUND");
}

int cmd_serve(struct app *app, int argc, char **argv)
{
    static const struct option opts[] = {{"socket", required_argument, NULL, 's'},
                                         {"state-dir", required_argument, NULL, 'd'},
                                         {"pool", required_argument, NULL, 'p'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *sock = NULL, *state = NULL, *pool = getenv("PADDOCK_POOL");
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            sock = optarg;
            break;
        case 'd':
            state = optarg;
            break;
        case 'p':
            pool = optarg;
            break;
        case 'h':
            printf("usage: paddock serve [--socket PATH] [--state-dir DIR] [--pool N|IMAGE=N,...]\n"
                   "  --pool  keep N sandboxes started ahead (per image); also $PADDOCK_POOL\n");
            return 0;
        default:
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "paddock serve: unexpected argument %s\n", argv[optind]);
        return 2;
    }
    char *exe = app_find_executor(app);
    const char *image = getenv("PADDOCK_IMAGE");
    struct engine_options o = {
        .state_dir = state ? state : app->state_dir,
        .socket_path = sock ? sock : app->socket,
        .executor = exe,
        .image = image && *image ? image : "paddock/base:local",
        .pool = pool,
        .on_ready = serve_on_ready,
    };
    o.ud = &o;
    char *err = NULL;
    int rc = engine_serve(&o, &err);
    if (rc < 0) {
        fprintf(stderr, "paddock serve: %s\n", err ? err : "failed");
        free(err);
    }
    free(exe);
    return rc < 0 ? 1 : 0;
}
