/* The bench's client: one keep-alive request over a unix socket (bench.h). */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

size_t bench_on_body(char *p, size_t sz, size_t n, void *ud)
{
    struct bench_body *b = ud;
    char *q = realloc(b->p, b->n + sz * n + 1);
    if (!q)
        return 0;
    memcpy(q + b->n, p, sz * n);
    b->p = q;
    b->n += sz * n;
    b->p[b->n] = '\0';
    return sz * n;
}

/* One keep-alive request on handle e over a unix socket. */
long req_on(CURL *e, const char *sock, const char *method, const char *path, const char *payload,
            json_t **out)
{
    char url[512];
    struct bench_body b = {0};
    snprintf(url, sizeof(url), "http://paddock%s", path);
    curl_easy_reset(e);
    curl_easy_setopt(e, CURLOPT_UNIX_SOCKET_PATH, sock);
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, bench_on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &b);
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    hdr = curl_slist_append(hdr, "Expect:");
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdr);
    if (payload)
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, payload);
    else if (!strcmp(method, "POST"))
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, "");
    long status = -1;
    if (curl_easy_perform(e) == CURLE_OK)
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(hdr);
    if (out)
        *out = b.p ? json_loads(b.p, 0, NULL) : NULL;
    free(b.p);
    return status;
}
