/* engine/risk/risk_shell.c through risk_classify_command: a command line as an agent sends it
 * in a `run` action, with or without a known working directory. The first byte picks the cwd;
 * the rest is the command (cut at a NUL, as the JSON string the engine reads would be). */
#include "engine/risk/risk.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const cwds[] = {NULL, "/workspace", "/workspace/sub", "/", "/tmp/x"};
    if (size == 0)
        return 0;
    const char *cwd = cwds[data[0] % (sizeof(cwds) / sizeof(cwds[0]))];
    char *cmd = strndup((const char *)data + 1, size - 1);
    if (!cmd)
        return 0;
    struct risk_result r;
    risk_classify_command(cmd, "/workspace", cwd, &r);
    if (r.level < RISK_LOW || r.level > RISK_HIGH || !memchr(r.reason, '\0', sizeof(r.reason)))
        abort();
    free(cmd);
    return 0;
}
