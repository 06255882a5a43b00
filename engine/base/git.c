/* git clone into a session's workspace (see git.h): git clone [--branch REF], or clone then
 * checkout for a commit id, then chown -R -h to the workspace's owner; each step a child
 * watched on the loop. The environment is built from scratch: no proxy, no user or system
 * config, no prompt, http(s) only, no redirects (the auth header must not follow one). */
#include "engine/base/git.h"

#include "common/base64.h"
#include "engine/base/child.h"
#include "engine/base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum git_step { GIT_CLONE, GIT_CHECKOUT, GIT_CHOWN, GIT_DONE };

struct git_op {
    struct loop *loop;
    char *url, *ref, *dir, *token;
    char *header; /* "Authorization: Basic ..." */
    char *b64;    /* the credential as sent, to scrub it too */
    bool checkout, chown;
    uid_t uid;
    gid_t gid;
    long timeout_ms;
    enum git_step step;
    git_done_fn fn;
    void *ud;
};

bool git_url_valid(const char *url, const char **why)
{
    const char *rest = NULL;
    if (strncmp(url, "https://", 8) == 0)
        rest = url + 8;
    else if (strncmp(url, "http://", 7) == 0)
        rest = url + 7;
    if (!rest) {
        *why = "must start with https:// or http://";
        return false;
    }
    size_t n = strlen(url);
    if (n > 2048) {
        *why = "is longer than 2048 bytes";
        return false;
    }
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)url[i] <= ' ' || url[i] == 0x7f) {
            *why = "must not contain spaces or control characters";
            return false;
        }
    size_t host = strcspn(rest, "/?#");
    if (host == 0) {
        *why = "has no host";
        return false;
    }
    if (memchr(rest, '@', host)) {
        *why = "must not carry credentials (give the token in \"git.token\")";
        return false;
    }
    return true;
}

static bool git_is_commit(const char *ref)
{
    size_t n = strlen(ref);
    return (n == 40 || n == 64) && util_is_hex_id(ref, n, n);
}

bool git_ref_valid(const char *ref)
{
    size_t n = strlen(ref);
    if (n == 0 || n > 255 || ref[0] == '-' || ref[0] == '/' || ref[n - 1] == '/' ||
        strstr(ref, "..") || strstr(ref, "//") || strstr(ref, "@{") ||
        (n >= 5 && strcmp(ref + n - 5, ".lock") == 0))
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = ref[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              strchr("._/-", c)))
            return false;
    }
    return true;
}

static void git_wipe(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

static void git_op_free(struct git_op *op)
{
    free(op->url);
    free(op->ref);
    free(op->dir);
    git_wipe(op->token);
    git_wipe(op->header);
    git_wipe(op->b64);
    free(op);
}

/* Replace every occurrence of secret in s (in place) with "***". */
static void git_scrub(char *s, const char *secret)
{
    size_t n = secret ? strlen(secret) : 0;
    if (n < 3)
        return;
    char *p;
    while ((p = strstr(s, secret))) {
        memcpy(p, "***", 3);
        memmove(p + 3, p + n, strlen(p + n) + 1);
    }
}

/* Start the next step: 0 when one runs, 1 when none is left, -1 with *err. */
static int git_spawn_step(struct git_op *op, char **err);

static void git_finish(struct git_op *op, const char *err)
{
    op->fn(err, op->ud);
    git_op_free(op);
}

static void git_on_step(int status, const char *output, void *ud)
{
    struct git_op *op = ud;
    if (status == 0) {
        op->step++;
        char *err = NULL;
        int rc = git_spawn_step(op, &err);
        if (rc != 0) {
            git_finish(op, rc > 0 ? NULL : err ? err : "cannot start git");
            free(err);
        }
        return;
    }
    static const char *const what[] = {"git clone", "git checkout", "chown of the checkout"};
    char *out = strdup(output ? output : "");
    if (out) {
        git_scrub(out, op->token);
        git_scrub(out, op->b64);
        size_t n = strlen(out);
        while (n && (out[n - 1] == '\n' || out[n - 1] == ' '))
            out[--n] = '\0';
    }
    char *msg = status < 0 ? util_strdupf("%s did not finish within %ld s", what[op->step],
                                          op->timeout_ms / 1000)
                           : util_strdupf("%s failed (exit %d)%s%s", what[op->step], status,
                                          out && *out ? ": " : "", out ? out : "");
    free(out);
    git_finish(op, msg ? msg : "git failed");
    free(msg);
}

static int git_spawn_step(struct git_op *op, char **err)
{
    if (op->step == GIT_CHECKOUT && !op->checkout)
        op->step++;
    if (op->step == GIT_CHOWN && !op->chown)
        op->step++;
    if (op->step == GIT_DONE)
        return 1;
    const char *env[24];
    size_t ne = 0;
    env[ne++] = "PATH=/usr/local/bin:/usr/bin:/bin";
    env[ne++] = "HOME=/nonexistent";
    env[ne++] = "LC_ALL=C";
    env[ne++] = "GIT_TERMINAL_PROMPT=0";
    env[ne++] = "GIT_CONFIG_NOSYSTEM=1";
    env[ne++] = "GIT_CONFIG_GLOBAL=/dev/null";
    env[ne++] = "GIT_ALLOW_PROTOCOL=http:https";
    env[ne++] = "GIT_LFS_SKIP_SMUDGE=1";
    env[ne++] = "GIT_CONFIG_KEY_0=http.followRedirects";
    env[ne++] = "GIT_CONFIG_VALUE_0=false";
    env[ne++] = "GIT_CONFIG_KEY_1=advice.detachedHead";
    env[ne++] = "GIT_CONFIG_VALUE_1=false";
    /* The checkout runs as the engine's user in a directory another user may own. */
    char *sd = util_strdupf("GIT_CONFIG_VALUE_2=%s", op->dir);
    char *hv = op->header && op->step == GIT_CLONE
                   ? util_strdupf("GIT_CONFIG_VALUE_3=%s", op->header)
                   : NULL;
    if (!sd || (op->header && op->step == GIT_CLONE && !hv)) {
        free(sd);
        git_wipe(hv);
        *err = strdup("out of memory");
        return -1;
    }
    env[ne++] = "GIT_CONFIG_KEY_2=safe.directory";
    env[ne++] = sd;
    if (hv) {
        env[ne++] = "GIT_CONFIG_COUNT=4";
        env[ne++] = "GIT_CONFIG_KEY_3=http.extraHeader";
        env[ne++] = hv;
    } else {
        env[ne++] = "GIT_CONFIG_COUNT=3";
    }
    env[ne] = NULL;

    char ids[64];
    snprintf(ids, sizeof(ids), "%ld:%ld", (long)op->uid, (long)op->gid);
    const char *argv[12];
    size_t na = 0;
    if (op->step == GIT_CLONE) {
        argv[na++] = "git";
        argv[na++] = "clone";
        argv[na++] = "--quiet";
        if (op->checkout) {
            argv[na++] = "--no-checkout";
        } else if (op->ref) {
            argv[na++] = "--branch";
            argv[na++] = op->ref;
        }
        argv[na++] = "--";
        argv[na++] = op->url;
        argv[na++] = op->dir;
    } else if (op->step == GIT_CHECKOUT) {
        argv[na++] = "git";
        argv[na++] = "-C";
        argv[na++] = op->dir;
        argv[na++] = "checkout";
        argv[na++] = "--quiet";
        argv[na++] = "--detach";
        argv[na++] = op->ref;
    } else {
        /* -h with -R: symlinks in the checkout are changed themselves, never followed. */
        argv[na++] = "chown";
        argv[na++] = "-R";
        argv[na++] = "-h";
        argv[na++] = "--";
        argv[na++] = ids;
        argv[na++] = op->dir;
    }
    argv[na] = NULL;
    struct child_spec cs = {.argv = argv, .envp = env, .timeout_ms = op->timeout_ms};
    int rc = child_spawn(op->loop, &cs, git_on_step, op, err);
    free(sd);
    git_wipe(hv);
    return rc < 0 ? -1 : 0;
}

int git_clone_start(struct loop *l, const struct git_clone_spec *spec, git_done_fn fn, void *ud,
                    char **err)
{
    struct git_op *op = calloc(1, sizeof(*op));
    if (!op) {
        *err = strdup("out of memory");
        return -1;
    }
    op->loop = l;
    op->url = strdup(spec->url);
    op->dir = strdup(spec->dir);
    op->ref = spec->ref ? strdup(spec->ref) : NULL;
    op->checkout = spec->ref && git_is_commit(spec->ref);
    op->chown = spec->chown;
    op->uid = spec->owner_uid;
    op->gid = spec->owner_gid;
    op->timeout_ms = spec->timeout_ms;
    op->fn = fn;
    op->ud = ud;
    if (spec->token && *spec->token) {
        op->token = strdup(spec->token);
        /* GitHub's form (user x-access-token); GitLab and Gitea accept any user with a token. */
        char *cred = util_strdupf("x-access-token:%s", spec->token);
        struct buf b64 = BUF_INIT;
        if (cred && base64_encode(&b64, (const unsigned char *)cred, strlen(cred)) == 0)
            op->b64 = buf_steal(&b64);
        git_wipe(cred);
        op->header = op->b64 ? util_strdupf("Authorization: Basic %s", op->b64) : NULL;
        if (!op->header) {
            git_op_free(op);
            *err = strdup("out of memory");
            return -1;
        }
    }
    if (!op->url || !op->dir || (spec->ref && !op->ref)) {
        git_op_free(op);
        *err = strdup("out of memory");
        return -1;
    }
    op->step = GIT_CLONE;
    if (git_spawn_step(op, err) < 0) {
        git_op_free(op);
        return -1;
    }
    return 0;
}
