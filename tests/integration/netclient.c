/* The client of netclient.h: libcurl easy, blocking. */
#include "netclient.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct net_buf {
    char *p;
    size_t len;
};

static size_t net_on_body(char *data, size_t size, size_t n, void *ud)
{
    struct net_buf *b = ud;
    size_t k = size * n;
    char *p = realloc(b->p, b->len + k + 1);
    if (!p)
        return 0;
    memcpy(p + b->len, data, k);
    b->p = p;
    b->len += k;
    b->p[b->len] = '\0';
    return k;
}

/* Keep Content-Type and Content-Disposition. */
static size_t net_on_header(char *data, size_t size, size_t n, void *ud)
{
    struct net_reply *out = ud;
    size_t k = size * n;
    char line[512];
    snprintf(line, sizeof(line), "%.*s", (int)(k < sizeof(line) - 1 ? k : sizeof(line) - 1), data);
    line[strcspn(line, "\r\n")] = '\0';
    if (strncasecmp(line, "Content-Type: ", 14) == 0)
        snprintf(out->content_type, sizeof(out->content_type), "%.127s", line + 14);
    else if (strncasecmp(line, "Content-Disposition: ", 21) == 0)
        snprintf(out->disposition, sizeof(out->disposition), "%.255s", line + 21);
    return k;
}

const char *net_header(const char *name, const char *value)
{
    static char bufs[8][512];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, sizeof(bufs[0]), "%s: %s", name, value);
    return b;
}

void net_do(const struct net_req *q, struct net_reply *out)
{
    memset(out, 0, sizeof(*out));
    out->r.status = -1;
    CURL *h = curl_easy_init();
    if (!h) {
        snprintf(out->r.err, sizeof(out->r.err), "curl_easy_init failed");
        return;
    }
    struct net_buf b = {0};
    char errbuf[CURL_ERROR_SIZE] = "";
    struct curl_slist *hdrs = NULL;
    bool expect = false;
    for (const char *const *hl = q->headers; hl && *hl; hl++)
        expect |= strncasecmp(*hl, "Expect:", 7) == 0;
    if (!expect) /* no 100-continue round trip unless the test asks for one */
        hdrs = curl_slist_append(hdrs, "Expect:");
    curl_mime *mime = NULL;
    if (q->unix_socket)
        curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, q->unix_socket);
    curl_easy_setopt(h, CURLOPT_URL, q->url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, net_on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, net_on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, out);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, q->timeout_ms ? q->timeout_ms : 60000L);
    for (const char *const *hl = q->headers; hl && *hl; hl++)
        hdrs = curl_slist_append(hdrs, *hl);
    const char *method = q->method;
    if (q->file_name) {
        mime = curl_mime_init(h);
        curl_mimepart *part = curl_mime_addpart(mime);
        curl_mime_name(part, "file");
        curl_mime_filename(part, q->file_name);
        curl_mime_data(part, q->file_data, q->file_len);
        curl_easy_setopt(h, CURLOPT_MIMEPOST, mime);
        method = method ? method : "POST";
    } else if (q->body) {
        char *ct = NULL;
        if (asprintf(&ct, "Content-Type: %s",
                     q->content_type ? q->content_type : "application/json") > 0)
            hdrs = curl_slist_append(hdrs, ct);
        free(ct);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, q->body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(q->body));
        method = method ? method : "POST";
    }
    if (method)
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    CURLcode rc = curl_easy_perform(h);
    if (rc != CURLE_OK) {
        snprintf(out->r.err, sizeof(out->r.err), "%s %s: %s", method ? method : "GET", q->url,
                 errbuf[0] ? errbuf : curl_easy_strerror(rc));
        free(b.p);
    } else {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out->r.status);
        out->r.body = b.p ? b.p : strdup("");
        out->r.len = b.len;
        out->r.json = json_loadb(out->r.body, out->r.len, 0, NULL);
    }
    curl_mime_free(mime);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
}

void net_reply_free(struct net_reply *out)
{
    reply_free(&out->r);
}
