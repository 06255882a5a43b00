/* The agent_skills plugin: OpenHands' file_ops helpers (`from agentskills import *`) for the
 * agent's Python. At start the module is written into a fresh root-owned directory under /tmp
 * that goes first on the shell's PYTHONPATH, so IPython cells and `python3 -c` import it. Its
 * file_editor runs this binary as `paddock-executor --file-editor`: the executor's own editor,
 * one call per process, as the agent (the caller). */
#ifndef PADDOCK_EXECUTOR_SKILLS_H
#define PADDOCK_EXECUTOR_SKILLS_H

#include "common/buf.h"

struct executor;

/* The module's text, with '@EXECUTOR@' and '@WORKDIR@' (quotes included) to fill in. */
extern const char skills_module_source[];

/* Writes the module and puts its directory first on PYTHONPATH in the executor's environment
 * (the shell's is built from it). -1 with a message. */
int skills_prepare(struct executor *ex, struct buf *err);
/* Removes the module and its directory. */
void skills_free(struct executor *ex);
/* `paddock-executor --file-editor`: a JSON request on stdin ({"args": the edit action's
 * args, "workdir", "history": {key: the newest undo text}}), a JSON reply on stdout
 * ({"output", "result": openhands-aci's result fields in its order, "history"?: {"op",
 * "path", "text"?}}). Returns the exit code. */
int skills_file_editor_main(void);

#endif
