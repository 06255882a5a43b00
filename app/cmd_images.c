/* paddock images: the engine's runtime images (GET /v1/images) as a table or JSON, and
 * `paddock images rm TAG...` (DELETE /v1/images/{tag}). */
#include "app/app.h"
#include "app/cli.h"
#include "client/client.h"
#include "common/sanitize.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void images_size(double bytes, char *out, size_t n)
{
    const char *unit[] = {"B", "KB", "MB", "GB", "TB"};
    size_t u = 0;
    while (bytes >= 1000 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
        bytes /= 1000;
        u++;
    }
    snprintf(out, n, u ? "%.1f%s" : "%.0f%s", bytes, unit[u]);
}

static void images_age(double s, char *out, size_t n)
{
    if (s < 120)
        snprintf(out, n, "%.0fs", s);
    else if (s < 7200)
        snprintf(out, n, "%.0fm", s / 60);
    else if (s < 172800)
        snprintf(out, n, "%.0fh", s / 3600);
    else
        snprintf(out, n, "%.0fd", s / 86400);
}

/* Tags and labels are anyone's text (any image may carry paddock.image): sanitized. */
static void images_table(json_t *list)
{
    printf("%-58s %-24s %9s %6s\n", "TAG", "BASE", "SIZE", "AGE");
    size_t i;
    json_t *img;
    json_array_foreach(list, i, img)
    {
        const char *base = json_string_value(json_object_get(img, "base"));
        char b[64], size[16], age[16];
        sanitize_text(base ? base : "-", base ? strlen(base) : 1, b, sizeof(b));
        images_size(json_number_value(json_object_get(img, "size")), size, sizeof(size));
        images_age(json_number_value(json_object_get(img, "age_seconds")), age, sizeof(age));
        json_t *tags = json_object_get(img, "tags");
        size_t n = json_array_size(tags);
        for (size_t t = 0; t < (n ? n : 1); t++) {
            const char *tag = json_string_value(json_array_get(tags, t));
            char tg[160];
            sanitize_text(tag ? tag : "<none>", tag ? strlen(tag) : 6, tg, sizeof(tg));
            if (t == 0)
                printf("%-58s %-24s %9s %6s\n", tg, b, size, age);
            else
                printf("%-58s\n", tg);
        }
    }
}

static int images_remove(struct client *cl, int argc, char **argv, bool as_json)
{
    int rc = 0;
    for (int i = 0; i < argc; i++) {
        /* "repo:tag" as `paddock images` shows it, or the tag alone. */
        const char *tag = strrchr(argv[i], ':');
        tag = tag ? tag + 1 : argv[i];
        char *path = NULL;
        if (asprintf(&path, "/v1/images/%s", tag) < 0)
            return 1;
        json_t *reply = NULL;
        char *err = NULL;
        int st = client_request(cl, "DELETE", path, NULL, 60000, &reply, &err);
        if (st != 200) {
            fprintf(stderr, "paddock images rm: %s\n",
                    err ? err : client_error_message(reply, "no engine answers"));
            rc = 1;
        } else if (as_json) {
            json_dumpf(reply, stdout, cli_json_flags(JSON_COMPACT));
            putchar('\n');
        } else {
            char safe[200];
            sanitize_text(argv[i], strlen(argv[i]), safe, sizeof(safe));
            printf("removed %s\n", safe);
        }
        json_decref(reply);
        free(err);
        free(path);
    }
    return rc;
}

int cmd_images(struct app *app, int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    bool as_json = false;
    int c;
    while ((c = getopt_long(argc, argv, "+jh", opts, NULL)) != -1) {
        if (c == 'j') {
            as_json = true;
        } else if (c == 'h') {
            app_command_help(stdout, "images");
            return 0;
        } else {
            return 2;
        }
    }
    bool rm = optind < argc && strcmp(argv[optind], "rm") == 0;
    if (optind < argc && !rm) {
        fprintf(stderr, "paddock images: unknown command %s (rm)\n", argv[optind]);
        return 2;
    }
    if (rm && optind + 1 >= argc) {
        fprintf(stderr, "paddock images rm: which image? (a TAG from paddock images)\n");
        return 2;
    }
    struct client *cl = client_new(app->socket);
    if (!cl)
        return 1;
    if (rm) {
        int rc = images_remove(cl, argc - optind - 1, argv + optind + 1, as_json);
        client_free(cl);
        return rc;
    }
    json_t *reply = NULL;
    char *err = NULL;
    int st = client_request(cl, "GET", "/v1/images", NULL, 30000, &reply, &err);
    int rc = 0;
    if (st != 200) {
        fprintf(stderr, "paddock images: %s\n",
                err ? err : client_error_message(reply, "no engine answers"));
        rc = 1;
    } else if (as_json) {
        cli_print_json(reply);
    } else {
        images_table(json_object_get(reply, "images"));
    }
    json_decref(reply);
    free(err);
    client_free(cl);
    return rc;
}
