#include "engine/risk.h"
#include <stdio.h>
#include <string.h>
#include <strings.h>
void risk_classify_action(const json_t *action, const char *workspace, const char *cwd,
                          struct risk_result *out)
{
    (void)workspace;
    (void)cwd;
    json_t *args = json_object_get(action, "args");
    const char *cmd = json_string_value(json_object_get(args, "command"));
    out->declared = -1;
    out->level = RISK_LOW;
    snprintf(out->reason, sizeof(out->reason), "read-only inspection");
    if (cmd && strstr(cmd, "rm -rf")) {
        out->level = RISK_HIGH;
        snprintf(out->reason, sizeof(out->reason), "deletes recursively");
    }
    json_t *d = json_object_get(args, "security_risk");
    if (json_is_integer(d) && json_integer_value(d) >= 0 && json_integer_value(d) <= 2) {
        out->declared = (int)json_integer_value(d);
        if (out->declared > (int)out->level) {
            out->level = out->declared;
            snprintf(out->reason, sizeof(out->reason), "the agent declared it %s",
                     risk_level_name(out->level));
        }
    }
}
const char *risk_level_name(enum risk_level l)
{
    static const char *n[] = {"low", "medium", "high"};
    return n[l];
}
int risk_level_parse(const char *s)
{
    for (int i = 0; i < 3; i++)
        if (s && strcasecmp(s, risk_level_name(i)) == 0)
            return i;
    return -1;
}
