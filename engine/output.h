/* The live output of running actions: what a shell command prints, from the executor's
 * stream (?paddock_stream=1, docs/protocol.md) to the engine's event feeds (`action_output`)
 * and to GET /v1/actions/{id}/output. Bounded: each running action keeps its newest
 * OUTPUT_KEEP bytes (the older ones are counted as dropped); the observation the agent gets
 * and the store keeps is the executor's, whole and unchanged. Text goes on as UTF-8 repaired
 * (NUL and bad bytes become U+FFFD), not sanitized: whoever shows it on a terminal does. */
#ifndef PADDOCK_OUTPUT_H
#define PADDOCK_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

struct engine;
struct api_req;

/* Bytes of output a running action keeps for a late reader. */
#define OUTPUT_KEEP (256 * 1024)
/* Text one `action_output` event carries at most; more in one burst is skipped there (the
 * event's offset says how much) but kept for GET .../output. */
#define OUTPUT_EVENT_MAX (64 * 1024)

/* 0, or -1 when out of memory. */
int output_init(struct engine *eng);
/* Ends every follower (the engine stops). */
void output_shutdown(struct engine *eng);

/* The action started running with its output streamed. */
void output_begin(struct engine *eng, int64_t id, const char *session_id);
/* Bytes it printed, raw as the executor sent them (any chunking, a character may be cut). */
void output_append(struct engine *eng, int64_t id, const char *data, size_t n);
/* The action is final (any action: those waiting for it without a stream are answered too). */
void output_end(struct engine *eng, int64_t id);
/* Publish the output of action id not yet sent as an event (held back to merge a burst), so
 * an event about the action that follows comes after all of its output. */
void output_flush(struct engine *eng, int64_t id);

/* GET /v1/actions/{id}/output[?follow=1] (docs/architecture.md). */
void output_route_get(struct api_req *r);

#endif
