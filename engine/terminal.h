/* Operator terminals into sandboxes (terminal.c): an HTTP upgrade joined to a Docker exec
 * with a TTY. docs/terminal.md. */
#ifndef PADDOCK_TERMINAL_H
#define PADDOCK_TERMINAL_H

struct api_req;
struct engine;

/* POST /v1/sessions/{id}/terminal?rows=&cols=&cmd=&user= (Connection: Upgrade, Upgrade: tcp):
 * 101 with X-Paddock-Terminal: <id>, then raw bytes both ways. */
void terminal_route_open(struct api_req *r);
/* POST /v1/sessions/{id}/terminal/resize {"terminal", "rows", "cols"} */
void terminal_route_resize(struct api_req *r);
/* GET /v1/sessions/{id}/terminal/{tid}: {"terminal", "cmd", "rows", "cols", "running",
 * "exit_code", "error"} (ended terminals for a minute). */
void terminal_route_get(struct api_req *r);
/* At engine stop: every terminal closed. */
void terminals_free(struct engine *eng);

#endif
