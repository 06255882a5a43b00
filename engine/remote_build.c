/* OpenHands' remote-runtime builds (RemoteRuntimeBuilder): POST /build takes a multipart form
 * with "context" (the base64 of a gzipped tar holding OpenHands' Dockerfile), "target_image"
 * and any number of "tags"; GET /build_status?build_id= says how it goes. paddock's sandbox
 * runs its own executor, not OpenHands' action server, so of OpenHands' Dockerfile only the
 * base image counts (its first FROM): the build is the image builder's runtime image of that
 * base (images.h), tagged target_image and the tags, which OpenHands then starts. */
#include "engine/remote_runtime.h"

#include "common/base64.h"
#include "common/buf.h"
#include "engine/api.h"
#include "engine/builder.h"
#include "engine/engine_internal.h"
#include "engine/images.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#define REMOTE_BUILD_CONTEXT_MAX (256L * 1024 * 1024) /* the context unpacked */
#define REMOTE_BUILD_MAX_TAGS 16

/* ---- multipart/form-data (RFC 7578), only what RemoteRuntimeBuilder sends ---- */

struct form_part {
    char name[64];
    const char *data;
    size_t len;
};

static const char *mem_find(const char *hay, size_t n, const char *needle, size_t m)
{
    for (size_t i = 0; m && i + m <= n; i++)
        if (hay[i] == needle[0] && memcmp(hay + i, needle, m) == 0)
            return hay + i;
    return NULL;
}

/* The boundary parameter of a multipart/form-data Content-Type; 0, or -1. */
static int form_boundary(const char *ctype, char *out, size_t size)
{
    if (!ctype || strncasecmp(ctype, "multipart/form-data", 19) != 0)
        return -1;
    const char *b = strcasestr(ctype, "boundary=");
    if (!b)
        return -1;
    b += 9;
    bool quoted = *b == '"';
    b += quoted;
    size_t n = quoted ? strcspn(b, "\"") : strcspn(b, "; \t");
    if (n == 0 || n > 70 || n + 1 > size)
        return -1;
    memcpy(out, b, n);
    out[n] = '\0';
    return 0;
}

/* Each part's name and content in order; the number of parts, or -1 when malformed. */
static int form_parse(const char *body, size_t len, const char *boundary, struct form_part *parts,
                      int max)
{
    char delim[80];
    int dn = snprintf(delim, sizeof(delim), "--%s", boundary);
    const char *p = mem_find(body, len, delim, (size_t)dn);
    const char *end = body + len;
    int n = 0;
    while (p) {
        p += dn;
        if (end - p >= 2 && p[0] == '-' && p[1] == '-')
            return n; /* the closing delimiter */
        if (end - p < 2 || p[0] != '\r' || p[1] != '\n')
            return -1;
        p += 2;
        const char *hend = mem_find(p, (size_t)(end - p), "\r\n\r\n", 4);
        if (!hend)
            return -1;
        const char *disp = mem_find(p, (size_t)(hend - p), "name=\"", 6);
        const char *content = hend + 4;
        char next[84];
        int nn = snprintf(next, sizeof(next), "\r\n%s", delim);
        const char *stop = mem_find(content, (size_t)(end - content), next, (size_t)nn);
        if (!stop)
            return -1;
        if (disp && n < max) {
            disp += 6;
            size_t k = 0;
            while (disp + k < hend && disp[k] != '"' && k + 1 < sizeof(parts[n].name))
                k++;
            memcpy(parts[n].name, disp, k);
            parts[n].name[k] = '\0';
            parts[n].data = content;
            parts[n].len = (size_t)(stop - content);
            n++;
        }
        p = stop + 2;
    }
    return -1;
}

/* ---- the context: gunzip, then the Dockerfile out of the tar ---- */

static int context_gunzip(const unsigned char *in, size_t n, struct buf *out)
{
    z_stream z = {0};
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
        return -1;
    z.next_in = (unsigned char *)in;
    z.avail_in = (uInt)n;
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
        if (buf_reserve(out, 65536) < 0 || out->len + 65536 > REMOTE_BUILD_CONTEXT_MAX) {
            rc = Z_MEM_ERROR;
            break;
        }
        z.next_out = (unsigned char *)out->data + out->len;
        z.avail_out = 65536;
        rc = inflate(&z, Z_NO_FLUSH);
        out->len += 65536 - z.avail_out;
        if (rc != Z_OK && rc != Z_STREAM_END)
            break;
        if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) {
            rc = Z_DATA_ERROR; /* truncated */
            break;
        }
    }
    inflateEnd(&z);
    return rc == Z_STREAM_END ? 0 : -1;
}

/* The Dockerfile at the tar's root ("Dockerfile" or "./Dockerfile"): its bytes, or NULL. */
static const char *context_dockerfile(const struct buf *tar, size_t *len)
{
    for (size_t off = 0; off + 512 <= tar->len;) {
        const char *h = tar->data + off;
        if (!h[0])
            return NULL; /* the end blocks */
        char name[101];
        memcpy(name, h, 100);
        name[100] = '\0';
        char size_txt[13];
        memcpy(size_txt, h + 124, 12);
        size_txt[12] = '\0';
        size_t size = (size_t)strtoull(size_txt, NULL, 8);
        size_t data = off + 512;
        if (data + size > tar->len)
            return NULL;
        if ((h[156] == '0' || h[156] == '\0') &&
            (strcmp(name, "Dockerfile") == 0 || strcmp(name, "./Dockerfile") == 0)) {
            *len = size;
            return tar->data + data;
        }
        off = data + (size + 511) / 512 * 512;
    }
    return NULL;
}

/* The image of the Dockerfile's first FROM (flags such as --platform skipped); malloc'd, or
 * NULL when there is none or it is not a plain reference (an ARG in it, say). */
static char *context_base(const char *df, size_t len)
{
    for (size_t i = 0; i < len;) {
        const char *line = df + i;
        const char *nl = memchr(line, '\n', len - i);
        size_t n = nl ? (size_t)(nl - line) : len - i;
        i += n + 1;
        size_t k = 0;
        while (k < n && isspace((unsigned char)line[k]))
            k++;
        if (n - k < 5 || strncasecmp(line + k, "FROM", 4) != 0 ||
            !isspace((unsigned char)line[k + 4]))
            continue;
        k += 4;
        for (;;) {
            while (k < n && isspace((unsigned char)line[k]))
                k++;
            if (k + 1 < n && line[k] == '-' && line[k + 1] == '-') {
                while (k < n && !isspace((unsigned char)line[k]))
                    k++;
                continue;
            }
            break;
        }
        size_t s = k;
        while (k < n && !isspace((unsigned char)line[k]))
            k++;
        if (k == s || k - s > 255)
            return NULL;
        for (size_t j = s; j < k; j++)
            if (!(isalnum((unsigned char)line[j]) || strchr("_.-/:@", line[j])))
                return NULL;
        return strndup(line + s, k - s);
    }
    return NULL;
}

static bool ref_valid(const char *s, size_t n)
{
    if (n == 0 || n > 255)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || strchr("_.-/:@", s[i])))
            return false;
    return true;
}

/* ---- routes ---- */

void remote_route_build(struct api_req *r)
{
    char boundary[72];
    size_t len = 0;
    const char *body = api_req_body(r, &len);
    if (form_boundary(api_req_header(r, "Content-Type"), boundary, sizeof(boundary)) < 0) {
        api_reply_error(r, ERR_BAD_REQUEST,
                        "POST /build takes multipart/form-data (context, target_image, tags), "
                        "as OpenHands' RemoteRuntimeBuilder sends it");
        return;
    }
    struct form_part parts[2 + REMOTE_BUILD_MAX_TAGS];
    int n = form_parse(body ? body : "", len, boundary, parts, 2 + REMOTE_BUILD_MAX_TAGS);
    if (n < 0) {
        api_reply_error(r, ERR_BAD_REQUEST, "the multipart body is malformed");
        return;
    }
    const struct form_part *context = NULL, *target = NULL;
    json_t *refs = json_array();
    for (int i = 0; i < n; i++) {
        if (strcmp(parts[i].name, "context") == 0)
            context = &parts[i];
        else if (strcmp(parts[i].name, "target_image") == 0)
            target = &parts[i];
    }
    if (target)
        json_array_append_new(refs, json_stringn(target->data, target->len));
    for (int i = 0; i < n; i++)
        if (strcmp(parts[i].name, "tags") == 0)
            json_array_append_new(refs, json_stringn(parts[i].data, parts[i].len));
    size_t i;
    json_t *ref;
    bool refs_ok = target != NULL;
    json_array_foreach(refs, i, ref) refs_ok =
        refs_ok && ref_valid(json_string_value(ref), json_string_length(ref));
    struct buf gz = {0}, tar = {0};
    char *base = NULL;
    const char *df = NULL;
    size_t df_len = 0;
    if (!context || !refs_ok) {
        api_reply_error(r, ERR_BAD_REQUEST,
                        "POST /build needs \"context\" and \"target_image\" (and \"tags\" that "
                        "are image references)");
    } else if (base64_decode(&gz, context->data, context->len) < 0 ||
               context_gunzip((const unsigned char *)gz.data, gz.len, &tar) < 0) {
        api_reply_error(r, ERR_BAD_REQUEST,
                        "\"context\" must be the base64 of a gzipped tar (at most %ld bytes "
                        "unpacked)",
                        REMOTE_BUILD_CONTEXT_MAX);
    } else if (!(df = context_dockerfile(&tar, &df_len)) || !(base = context_base(df, df_len))) {
        api_reply_error(r, ERR_BAD_REQUEST,
                        "the context has no Dockerfile at its root with a FROM naming an image");
    } else {
        struct engine *eng = api_req_engine(r);
        struct builder_spec spec = {.image = base, .extra_tags = refs};
        const char *id = NULL, *why = NULL;
        enum err_code err = ERR_NONE;
        if (!eng->executor_path)
            api_reply_error(r, ERR_EXECUTOR_MISSING,
                            "no paddock-executor binary: runtime images bake it in");
        else if (images_build_start(eng, &spec, &id, &err, &why) < 0)
            api_reply_error(r, err, "%s", why);
        else
            api_reply_json(r, 200, json_pack("{s:s}", "build_id", id));
    }
    free(base);
    buf_free(&gz);
    buf_free(&tar);
    json_decref(refs);
}

void remote_route_build_status(struct api_req *r)
{
    const char *id = api_req_query(r, "build_id");
    json_t *b = id ? images_build_json(api_req_engine(r), id) : NULL;
    if (!b) {
        api_reply_error(r, ERR_NOT_FOUND, "no build %.64s", id ? id : "(build_id missing)");
        return;
    }
    /* OpenHands' states: SUCCESS and FAILURE end its polling; anything else is in progress. */
    const char *state = json_string_value(json_object_get(b, "state"));
    const char *status = strcmp(state, "done") == 0     ? "SUCCESS"
                         : strcmp(state, "failed") == 0 ? "FAILURE"
                                                        : "RUNNING";
    /* The image OpenHands asked for (target_image) is the one it starts. */
    json_t *target = json_array_get(json_object_get(b, "references"), 0);
    json_t *reply =
        json_pack("{s:s,s:s,s:O,s:O}", "build_id", id, "status", status, "image",
                  target && strcmp(status, "SUCCESS") == 0 ? target : json_object_get(b, "image"),
                  "error", json_object_get(b, "error"));
    json_object_set_new(reply, "paddock", b);
    api_reply_json(r, 200, reply);
}
