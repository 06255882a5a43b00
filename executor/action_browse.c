/* `browse` and `browse_interactive`: OpenHands answers these with BrowserGym in a headless
 * Chromium. Our images have no browser, so both get OpenHands' own "no browser" reply. */
#include <stdlib.h>
#include <string.h>

#include "action.h"
#include "observation.h"

#define BROWSE_DISABLED "Browser functionality is not supported or disabled."

/* Checks that args.<field> is a string; the action keeps nothing of it. */
static int parse_string_arg(const json_t *action, const char *field, void **out, struct buf *err)
{
    const json_t *args = json_object_get(action, "args");
    if (!args) {
        buf_printf(err, "Missing field: action.args");
        return -1;
    }
    if (!json_is_object(args)) {
        buf_printf(err, "Invalid field: action.args (expected an object)");
        return -1;
    }
    const json_t *v = json_object_get(args, field);
    if (!v) {
        buf_printf(err, "Missing field: action.args.%s", field);
        return -1;
    }
    if (!json_is_string(v)) {
        buf_printf(err, "Invalid field: action.args.%s (expected a string)", field);
        return -1;
    }
    *out = NULL;
    return 0;
}

int action_browse_parse(const json_t *action, void **args, struct buf *err)
{
    return parse_string_arg(action, "url", args, err);
}

int action_browse_interactive_parse(const json_t *action, void **args, struct buf *err)
{
    return parse_string_arg(action, "browser_actions", args, err);
}

enum action_status action_browse_start(struct executor *ex, struct action_req *req)
{
    (void)ex;
    req->result = observation_error(BROWSE_DISABLED);
    return ACTION_DONE;
}

void action_browse_cancel(struct executor *ex, struct action_req *req)
{
    (void)ex;
    (void)req;
}

void action_browse_free(void *args)
{
    free(args);
}
