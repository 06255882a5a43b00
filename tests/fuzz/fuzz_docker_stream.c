/* What the Docker daemon streams to the engine, split anywhere across reads: the multiplexed
 * log framing (engine/docker/docker.c's demuxer, as docker_stream.c feeds it) or
 * newline-delimited JSON (engine/docker/jsonl.c) whose objects go where the engine sends
 * them: the stats decoder (engine/stats.c), the container event handler
 * (session_on_sandbox_event, with no session live) and the engine's event point
 * (engine/events.c) formatted as the API's SSE feed does. A container's output and names
 * reach all of these. Input: a mode byte (bit 0: framed), a seed byte for the chunk sizes,
 * then the stream. */
#include "engine/api.h"
#include "engine/docker/docker_internal.h"
#include "engine/docker/jsonl.h"
#include "engine/engine_internal.h"
#include "engine/events.h"
#include "engine/session.h"
#include "engine/stats.h"
#include "engine/store/store.h"

#include "fuzz_input.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct sink {
    struct engine *eng;
    struct events *ev;
    size_t bytes; /* payload bytes the demuxer handed over */
};

static void on_event(const char *type, json_t *data, void *ud)
{
    char *msg = api_sse_format(type, data);
    /* the feed's framing: one event is "event: T\ndata: JSON\n\n", and JSON has no raw '\n' */
    if (msg && strchr(strstr(msg, "data: "), '\n') != msg + strlen(msg) - 2)
        abort();
    free(msg);
}

static int on_line(json_t *obj, const char *line, size_t len, void *ud)
{
    struct sink *s = ud;
    if (!obj)
        return 0;
    struct store_sample v;
    if (stats_compute(obj, &v) == 0)
        json_decref(stats_sample_json(&v));
    session_on_sandbox_event(s->eng, obj);
    events_publish(s->ev, "stats", obj);
    return 0;
}

static int on_frame(const char *p, size_t n, int fd, void *ud)
{
    struct sink *s = ud;
    if (fd != 1 && fd != 2)
        abort();
    s->bytes += n;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_input in = {data, size};
    bool framed = fuzz_byte(&in) & 1;
    uint32_t seed = fuzz_byte(&in) | 1u;
    size_t total = in.n;
    struct engine eng = {0};
    struct sink s = {.eng = &eng, .ev = events_new()};
    if (!s.ev || events_subscribe(s.ev, on_event, NULL) < 0)
        abort();
    struct jsonl lines = {0};
    struct docker_demux dm = {0};
    while (in.n) {
        seed = seed * 1103515245u + 12345u;
        size_t n = fuzz_chunk(&in, (uint8_t)(seed >> 16), 97);
        int rc = framed ? docker_demux_feed(&dm, (const char *)in.p, n, on_frame, &s)
                        : jsonl_feed(&lines, (const char *)in.p, n, on_line, &s);
        if (rc < 0)
            break;
        in.p += n;
        in.n -= n;
    }
    if (!framed)
        jsonl_finish(&lines, on_line, &s);
    if (s.bytes > total)
        abort();
    jsonl_free(&lines);
    events_free(s.ev);
    return 0;
}
