/* Split a byte stream into lines and parse each as JSON, without copying complete lines that
 * arrive within one chunk. */
#include "engine/docker/jsonl.h"

#include <string.h>

static int jsonl_emit(const char *line, size_t len, jsonl_fn fn, void *ud)
{
    while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
        len--;
    if (len == 0)
        return 0;
    json_t *obj = json_loadb(line, len, JSON_DECODE_ANY, NULL);
    int rc = fn(obj, line, len, ud);
    json_decref(obj);
    return rc;
}

int jsonl_feed(struct jsonl *j, const char *p, size_t n, jsonl_fn fn, void *ud)
{
    while (n) {
        const char *nl = memchr(p, '\n', n);
        if (!nl) {
            if (j->pending.len + n > JSONL_MAX_LINE)
                return -1;
            return buf_append(&j->pending, p, n);
        }
        size_t seg = (size_t)(nl - p);
        int rc;
        if (j->pending.len) {
            if (j->pending.len + seg > JSONL_MAX_LINE || buf_append(&j->pending, p, seg) < 0)
                return -1;
            rc = jsonl_emit(j->pending.data, j->pending.len, fn, ud);
            buf_consume(&j->pending, j->pending.len);
        } else {
            rc = jsonl_emit(p, seg, fn, ud);
        }
        if (rc < 0)
            return -1;
        p = nl + 1;
        n -= seg + 1;
    }
    return 0;
}

int jsonl_finish(struct jsonl *j, jsonl_fn fn, void *ud)
{
    int rc = 0;
    if (j->pending.len) {
        rc = jsonl_emit(j->pending.data, j->pending.len, fn, ud);
        buf_consume(&j->pending, j->pending.len);
    }
    return rc;
}

void jsonl_free(struct jsonl *j)
{
    buf_free(&j->pending);
}
