/* The three runtime-image tags (lock, source, versioned: OpenHands'
 * openhands/runtime/utils/runtime_build.py) and the hashes behind them. */
#include "engine/builder.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void builder_base36(const unsigned char *digest, size_t n, char out[17])
{
    static const char alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    unsigned char num[64];
    if (n > sizeof(num))
        n = sizeof(num);
    memcpy(num, digest, n);
    size_t k = 0;
    for (;;) {
        bool zero = true;
        for (size_t i = 0; i < n; i++)
            if (num[i]) {
                zero = false;
                break;
            }
        if (zero || k == 16)
            break;
        /* Long division of the big-endian number by 36; the remainder is the next digit. */
        unsigned rem = 0;
        for (size_t i = 0; i < n; i++) {
            unsigned cur = rem * 256 + num[i];
            num[i] = (unsigned char)(cur / 36);
            rem = cur % 36;
        }
        out[k++] = alphabet[rem];
    }
    out[k] = '\0';
}

static void builder_hash_str(EVP_MD_CTX *c, const char *s)
{
    /* NUL ends each field: validated inputs hold none, so fields cannot run together. */
    EVP_DigestUpdate(c, s, strlen(s) + 1);
}

static void builder_hash_final(EVP_MD_CTX *c, char out[17])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    EVP_DigestFinal_ex(c, md, &len);
    builder_base36(md, len, out);
}

int builder_tags_compute(const char *repo, const char *version, const char *base,
                         const char *base_id, json_t *steps, const char *platform,
                         const unsigned char exec_digest[32], struct builder_tags *out)
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    if (!c)
        return -1;
    /* lock: what the dependency layer depends on — the base (by name and by content, so a
     * rebuilt base gets a new lock) and the setup commands. */
    EVP_DigestInit_ex(c, EVP_sha256(), NULL);
    builder_hash_str(c, "paddock-lock-1");
    builder_hash_str(c, base);
    builder_hash_str(c, base_id);
    size_t i;
    json_t *st;
    json_array_foreach(steps, i, st)
    {
        builder_hash_str(c, "RUN");
        builder_hash_str(c, json_string_value(st));
    }
    if (platform) { /* only when asked: the tags of images built without one stay as they were */
        builder_hash_str(c, "PLATFORM");
        builder_hash_str(c, platform);
    }
    builder_hash_final(c, out->lock_hash);
    /* source: the lock plus our code, i.e. the executor binary. */
    EVP_DigestInit_ex(c, EVP_sha256(), NULL);
    builder_hash_str(c, "paddock-source-1");
    builder_hash_str(c, out->lock_hash);
    EVP_DigestUpdate(c, exec_digest, 32);
    builder_hash_final(c, out->source_hash);
    EVP_MD_CTX_free(c);

    char flat[1024];
    size_t o = 0;
    for (const char *p = base; *p && o + 4 < sizeof(flat); p++) {
        const char *rep = *p == '/' ? "_s_" : *p == ':' ? "_t_" : *p == '@' ? "_a_" : NULL;
        if (rep) {
            memcpy(flat + o, rep, 3);
            o += 3;
        } else {
            flat[o++] = (char)tolower((unsigned char)*p);
        }
    }
    flat[o] = '\0';
    const char *tail = o > 96 ? flat + o - 96 : flat;
    int n1 = snprintf(out->versioned, sizeof(out->versioned), "%s:pd_v%s_%s", repo, version, tail);
    int n2 = snprintf(out->lock, sizeof(out->lock), "%s:pd_v%s_%s", repo, version, out->lock_hash);
    int n3 = snprintf(out->source, sizeof(out->source), "%s:pd_v%s_%s_%s", repo, version,
                      out->lock_hash, out->source_hash);
    /* Docker allows 128 characters in a tag. */
    size_t rl = strlen(repo) + 1;
    if (n1 < 0 || n2 < 0 || n3 < 0 || (size_t)n1 >= sizeof(out->versioned) ||
        (size_t)n3 >= sizeof(out->source) || (size_t)n1 - rl > 128 || (size_t)n3 - rl > 128)
        return -1;
    return 0;
}

int builder_file_digest(const char *path, unsigned char digest[32])
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    if (!c) {
        close(fd);
        errno = ENOMEM;
        return -1;
    }
    EVP_DigestInit_ex(c, EVP_sha256(), NULL);
    char buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0)
        EVP_DigestUpdate(c, buf, (size_t)n);
    int saved = errno;
    close(fd);
    unsigned len = 0;
    EVP_DigestFinal_ex(c, digest, &len);
    EVP_MD_CTX_free(c);
    if (n < 0) {
        errno = saved;
        return -1;
    }
    return 0;
}

json_t *builder_tags_json(const struct builder_tags *t)
{
    return json_pack("{s:s,s:s,s:s}", "versioned", t->versioned, "lock", t->lock, "source",
                     t->source);
}
