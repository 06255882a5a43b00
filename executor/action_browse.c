/* `browse` and `browse_interactive` (BrowseURLAction, BrowseInteractiveAction).
 *
 * OpenHands drives a headless Chromium through BrowserGym. Here: when the image has Chromium
 * or Chrome in PATH, `browse` runs `<browser> --headless --dump-dom <url>` as the agent user
 * (in the shell's directory, its own process group, killed at the action's timeout) and
 * replies with the page's text (htmltext.h) in a BrowserOutputObservation. browse_interactive
 * does the same for a `goto("<url>")` among its browser_actions; other BrowserGym actions
 * (click, fill, ...) need a live page and are not supported. With no browser, both reply
 * OpenHands' ErrorObservation "Browser functionality is not supported or disabled." */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "action.h"
#include "action_browse.h"
#include "common/utf8.h"
#include "executor.h"
#include "htmltext.h"
#include "observation.h"
#include "spawn.h"
#include "text.h"
#include "which.h"

#define BROWSE_DISABLED "Browser functionality is not supported or disabled."
#define BROWSE_PAGE_MAX (16u * 1024 * 1024) /* DOM bytes kept; the rest is read and dropped */

struct browse_args {
    char *url; /* NULL: browse_interactive without a goto() */
    bool interactive;
    double timeout;
};

struct browse {
    struct executor *ex;
    struct action_req *req;
    const struct browse_args *args;
    pid_t pid;  /* the browser, -1 when none runs or it was reaped */
    pid_t pgid; /* its process group (helpers may outlive it), -1 when none */
    struct evloop_watch out;
    struct evloop_watch timer;
    struct buf page;
    bool page_cut;
    char browser[4096];
};

static int get_args(const json_t *action, const char *field, const char *path, const char **value,
                    size_t *len, struct browse_args *a, struct buf *err)
{
    const json_t *args = action_get_args(action, err);
    a->timeout = EXECUTOR_DEFAULT_TIMEOUT;
    if (!args || action_get_string(args, field, path, true, value, len, err) < 0 ||
        action_get_timeout(action, &a->timeout, err) < 0)
        return -1;
    return 0;
}

static int keep_args(const struct browse_args *a, const char *url, size_t len, void **out,
                     struct buf *err)
{
    struct browse_args *copy = malloc(sizeof *copy);
    if (!copy || (url && !(copy->url = strndup(url, len)))) {
        free(copy);
        buf_printf(err, "Out of memory");
        return -1;
    }
    if (!url)
        copy->url = NULL;
    copy->interactive = a->interactive;
    copy->timeout = a->timeout;
    *out = copy;
    return 0;
}

int action_browse_parse(const json_t *action, void **out, struct buf *err)
{
    struct browse_args a = {0};
    const char *url = NULL;
    size_t len = 0;
    if (get_args(action, "url", "action.args.url", &url, &len, &a, err) < 0)
        return -1;
    return keep_args(&a, url, len, out, err);
}

int action_browse_interactive_parse(const json_t *action, void **out, struct buf *err)
{
    struct browse_args a = {.interactive = true};
    const char *s = NULL;
    size_t len = 0;
    if (get_args(action, "browser_actions", "action.args.browser_actions", &s, &len, &a, err) < 0)
        return -1;
    /* The first goto("...") or goto('...'). */
    const char *g = strstr(s, "goto(");
    if (g && (g[5] == '"' || g[5] == '\'')) {
        const char *end = strchr(g + 6, g[5]);
        if (end)
            return keep_args(&a, g + 6, (size_t)(end - g - 6), out, err);
    }
    return keep_args(&a, NULL, 0, out, err);
}

void action_browse_free(void *p)
{
    struct browse_args *a = p;
    free(a->url);
    free(a);
}

static const char *find_browser(struct browse *b)
{
    static const char *const names[] = {"chromium",      "chromium-browser",
                                        "google-chrome", "google-chrome-stable",
                                        "chrome",        "headless_shell"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (which_find_env(b->ex->shell.opt.envp, names[i], b->browser, sizeof b->browser))
            return b->browser;
    return NULL;
}

/* Kills the browser's process group and reaps it. */
static void stop_browser(struct browse *b)
{
    /* The group id stays taken while any helper of the browser lives in it. */
    spawn_stop(b->pgid, &b->pid);
    b->pgid = -1;
    if (b->out.fd >= 0) {
        evloop_del(b->ex->loop, &b->out);
        close(b->out.fd);
        b->out.fd = -1;
    }
    evloop_timer_at(&b->timer, INFINITY);
}

static json_t *observe(struct browse *b, const char *error)
{
    const struct browse_args *a = b->args;
    struct buf text = BUF_INIT, msg = BUF_INIT;
    if (error) {
        buf_append_str(&text, error);
    } else {
        struct buf fixed = BUF_INIT;
        htmltext_render(&text, b->page.data ? b->page.data : "", b->page.len);
        if (b->page_cut)
            buf_printf(&text, "\n[The page is longer than %u MiB; the rest is not shown.]",
                       BROWSE_PAGE_MAX >> 20);
        /* The 30,000-char cap of observations, on valid UTF-8. */
        if (utf8_repair(&fixed, text.data ? text.data : "", text.len, 0, NULL) == 0 &&
            text_truncate_middle(&fixed) == 0) {
            buf_free(&text);
            text = fixed;
        } else {
            buf_free(&fixed);
        }
    }
    buf_printf(&msg, "Visited %s", a->url);
    struct browser_result res = {
        .url = a->url,
        .trigger = a->interactive ? "browse_interactive" : "browse",
        .error = error != NULL,
        .error_text = error ? error : "",
    };
    json_t *obs =
        observation_browser(text.data ? text.data : "", text.len, &res, msg.data ? msg.data : "");
    buf_free(&text);
    buf_free(&msg);
    return obs;
}

static void finish(struct browse *b, const char *error)
{
    struct action_req *req = b->req;
    stop_browser(b);
    req->result = observe(b, error);
    buf_free(&b->page);
    b->req = NULL;
    b->args = NULL;
    action_finish(b->ex, req);
}

static void on_out(struct evloop_watch *w, uint32_t events)
{
    struct browse *b = EVLOOP_CONTAINER_OF(w, struct browse, out);
    char chunk[65536];
    (void)events;
    for (int i = 0; i < 16; i++) {
        ssize_t n = read(w->fd, chunk, sizeof chunk);
        if (n > 0) {
            size_t keep = b->page.len < BROWSE_PAGE_MAX ? BROWSE_PAGE_MAX - b->page.len : 0;
            if ((size_t)n > keep)
                b->page_cut = true;
            buf_append(&b->page, chunk, (size_t)n < keep ? (size_t)n : keep);
            continue;
        }
        if (n < 0 && (errno == EINTR))
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        /* The browser closed its output: the page is complete. */
        if (b->page.len == 0) {
            struct buf e = BUF_INIT;
            buf_printf(&e, "ERROR: The browser returned no page for %s.", b->args->url);
            finish(b, e.data ? e.data : "ERROR");
            buf_free(&e);
        } else {
            finish(b, NULL);
        }
        return;
    }
}

static void on_timer(struct evloop_watch *w, uint32_t events)
{
    struct browse *b = EVLOOP_CONTAINER_OF(w, struct browse, timer);
    (void)events;
    evloop_timer_ack(w);
    if (!b->req)
        return;
    char num[48];
    struct buf e = BUF_INIT;
    text_format_float(num, sizeof num, b->args->timeout);
    buf_printf(&e, "ERROR: The browser did not load %s within %s seconds.", b->args->url, num);
    finish(b, e.data ? e.data : "ERROR");
    buf_free(&e);
}

/* The URL as the browser gets it: a path becomes a file:// URL. */
static char *browser_url(const char *url)
{
    struct buf u = BUF_INIT;
    if (url[0] == '/')
        buf_append_str(&u, "file://");
    buf_append_str(&u, url);
    return u.data ? buf_steal(&u) : NULL;
}

enum action_status action_browse_start(struct executor *ex, struct action_req *req)
{
    struct browse *b = ex->browse;
    const struct browse_args *a = req->args;
    if (!b || !find_browser(b)) {
        req->result = observation_error(BROWSE_DISABLED);
        return ACTION_DONE;
    }
    if (!a->url) {
        req->result = observation_error(
            "ERROR: browse_interactive supports only goto(\"<url>\") here: there is no live "
            "browser page to click, type into or scroll.");
        return ACTION_DONE;
    }
    int p[2];
    char *url = browser_url(a->url);
    const char *cwd = ex->shell.marker.cwd[0] ? ex->shell.marker.cwd : ex->cfg.working_dir;
    if (!url || pipe2(p, O_CLOEXEC) < 0) {
        free(url);
        req->result = observation_error("ERROR: Could not start the browser.");
        return ACTION_DONE;
    }
    char *argv[] = {b->browser,
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-dev-shm-usage",
                    "--dump-dom",
                    url,
                    NULL};
    struct spawn_options so = {
        .path = b->browser,
        .argv = argv,
        .envp = ex->shell.opt.envp,
        .workdir = cwd,
        .switch_user = ex->cfg.switch_user,
        .uid = ex->cfg.uid,
        .gid = ex->cfg.gid,
        .fds = {-1, p[1], -1},
        .nfds = 3,
    };
    b->pid = b->pgid = spawn_process(&so);
    close(p[1]);
    free(url);
    if (b->pid < 0) {
        close(p[0]);
        req->result = observation_error("ERROR: Could not start the browser.");
        return ACTION_DONE;
    }
    fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
    b->out.fd = p[0];
    b->req = req;
    b->args = a;
    b->page_cut = false;
    buf_reset(&b->page);
    if (evloop_add(ex->loop, &b->out, EPOLLIN) < 0) {
        close(b->out.fd);
        b->out.fd = -1;
        stop_browser(b);
        b->req = NULL;
        req->result = observation_error("ERROR: Could not start the browser.");
        return ACTION_DONE;
    }
    evloop_timer_at(&b->timer, evloop_now() + a->timeout);
    return ACTION_PENDING;
}

void action_browse_cancel(struct executor *ex, struct action_req *req)
{
    struct browse *b = ex->browse;
    if (b && b->req == req) {
        stop_browser(b);
        buf_free(&b->page);
        b->req = NULL;
        b->args = NULL;
    }
}

int action_browse_init(struct executor *ex)
{
    struct browse *b = calloc(1, sizeof *b);
    if (!b)
        return -1;
    b->ex = ex;
    b->pid = b->pgid = -1;
    b->out = (struct evloop_watch){.fd = -1, .fn = on_out};
    if (evloop_timer_open(ex->loop, &b->timer, on_timer) < 0) {
        free(b);
        return -1;
    }
    ex->browse = b;
    return 0;
}

void action_browse_free_state(struct executor *ex)
{
    struct browse *b = ex->browse;
    if (!b)
        return;
    stop_browser(b);
    buf_free(&b->page);
    evloop_timer_close(ex->loop, &b->timer);
    free(b);
    ex->browse = NULL;
}

bool action_browse_reaped(struct executor *ex, pid_t pid, int status)
{
    struct browse *b = ex->browse;
    (void)status;
    if (!b || pid <= 0 || pid != b->pid)
        return false;
    /* Its output pipe says when the page is complete; helpers it left are killed then. */
    b->pid = -1;
    return true;
}
