/* Mediated network egress ("network": "egress", docs/egress.md): each such session's sandbox
 * has no interface but lo; its executor hands every connection made to its proxy port to the
 * engine's socket in the session's socket dir. Here the engine checks who handed it, reads the
 * request (CONNECT host:port, or a plain HTTP request by its target), decides by the session's
 * allow and deny lists and the operators' rules, asks the operator when it does not know (an
 * "egress" action in the approval queue), resolves the name once, refuses loopback, link-local
 * and private addresses unless named literally, connects to the exact address it checked and
 * relays the bytes untouched, all on the engine's loop. Every connection is a row of the record
 * (store_egress.c). */
#ifndef PADDOCK_EGRESS_H
#define PADDOCK_EGRESS_H

struct engine;
struct session;
struct api_req;

/* Before the sessions load: the config file's [egress] lists (NULL-terminated, may be NULL)
 * checked as patterns into eng->egress_allow/egress_deny, and its ask (-1: true). 0, or -1 with
 * *err (malloc'd) naming the bad pattern. */
int egress_load_config(struct engine *eng, const char *const *allow, const char *const *deny,
                       int ask, char **err);
/* At start-up, after the sessions and the waiting actions are loaded: rows a killed engine left
 * open end as interrupted, and every live egress session's socket listens again. 0, or -1 when
 * out of memory. */
int egress_init(struct engine *eng);
/* At a stop: every connection ends (recorded), the listeners close. */
void egress_shutdown(struct engine *eng);
/* The session changed state (session.c): its listener is up while it is live, and it and its
 * connections end when it is not. Sessions without egress cost one look at their config. */
void egress_session_sync(struct session *s);

/* GET /v1/sessions/{id}/egress?limit=N: {"session", "open", "connections": [...newest first],
 * "hosts": [totals per host and port], "rules": [the operators' rules that apply]}. */
void egress_route_list(struct api_req *r);

#endif
