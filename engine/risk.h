#ifndef PADDOCK_RISK_H
#define PADDOCK_RISK_H
#include <jansson.h>
enum risk_level { RISK_LOW = 0, RISK_MEDIUM = 1, RISK_HIGH = 2 };
struct risk_result {
    enum risk_level level;
    char reason[200];
    int declared;
};
void risk_classify_action(const json_t *action, const char *workspace, const char *cwd,
                          struct risk_result *out);
const char *risk_level_name(enum risk_level l);
int risk_level_parse(const char *s);
#endif
