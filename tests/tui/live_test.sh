#!/usr/bin/env bash
# A command's output on the dashboard while the command runs, driven through a private tmux
# server against a real engine and sandbox.
#
#   tests/tui/live_test.sh [PATH/TO/paddock]        (or PADDOCK_EXE=...)
#
# The agent's view (Terminal tab, a) shows the first line a command prints while it still
# waits (for a file the test makes only after seeing that line), then the rest once it goes
# on; escape sequences in that output stay inside the view (the pane's title and clipboard
# untouched). The action page (Actions tab, Enter) of a running command shows its output so
# far and what comes after. Needs dockerd and the image paddock/base:local: without them it
# FAILS (exit 1), or skips (exit 77) with PADDOCK_ALLOW_SKIP=1.
set -uo pipefail
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"

export PADDOCK_CONFIRM=never # no approval in the way of the commands
start_engine || { fail "engine answers GET /v1/info"; exit 1; }
ok "engine started (pid $ENGINE_PID)"
WS=$TMP/ws
mkdir -p "$WS" && chown 1000:1000 "$WS"
NAME=live-$$
create_session "$NAME" "\"workspace\":\"$WS\"" || exit 1
ok "session $SESSION_ID created"

# start_action COMMAND -> ACTION (its id): execute_action?wait=0, it runs on its own
start_action() {
  local body
  body=$(python3 -c 'import json,sys; print(json.dumps({"action":{"action":"run","args":{"command":sys.argv[1],"blocking":True}}}))' "$1")
  ACTION=$(api POST "/v1/sessions/$SESSION_ID/execute_action?wait=0" "$body" | json_get '["action_id"]')
  [ "$(cat "$TMP/status")" = 202 ] && [ -n "$ACTION" ]
}
action_state() { api GET "/v1/actions/$1" | json_get '["state"]'; }
action_final() { [ "$(action_state "$1")" = done ]; }
# count_lines TEXT: how many pane lines hold exactly TEXT inside the detail pane's border (the
# action page indents its text by one column)
count_lines() { screen | grep -cE "│ ?$1 *│\$"; }
has_line() { [ "$(count_lines "$1")" -ge 1 ]; }
wait_line() { poll "${2:-150}" has_line "$1"; }

open_tmux 160 32 || exit 1
start_dashboard
wait_for "$NAME" && wait_for "● live" || { fail "dashboard shows the session"; screen >&2; exit 1; }
show_tab Terminal "a shows the agent's own shell" || { fail "Terminal tab"; screen >&2; exit 1; }
tm send-keys -t dash l
tm send-keys -t dash a
wait_for "agent's shell, read-only" || { fail "a shows the agent's shell"; screen >&2; exit 1; }
title_before=$(flag pane_title)

# ---------------------------------------------------------------- the agent's view
start_action "echo first-$$; printf 'x\\033]0;pwned\\007\\033]52;c;cHduZWQ=\\007y-$$\\n'; until [ -e /workspace/go1 ]; do sleep 0.05; done; echo second-$$" ||
  { fail "the action starts"; exit 1; }
if wait_line "first-$$" && wait_line "xy-$$"; then
  ok "the first line shows in the agent's view while the command runs"
else
  fail "first line live in the agent's view"; screen >&2
fi
[ "$(action_state "$ACTION")" = running ] && ! has_line "second-$$" &&
  ok "... and the command was still running (it waits for the test)" ||
  fail "the action was not running any more: $(action_state "$ACTION")"
[ "$(flag pane_title)" = "$title_before" ] && ok "an OSC 0 in the live output leaves the title" ||
  fail "pane title changed to '$(flag pane_title)'"
tm show-buffer >/dev/null 2>&1 && fail "a tmux paste buffer appeared (OSC 52)" ||
  ok "an OSC 52 in the live output wrote no clipboard"
touch "$WS/go1"
wait_line "second-$$" && ok "the rest shows once the command goes on" ||
  { fail "second line in the agent's view"; screen >&2; }
poll 100 action_final "$ACTION" || fail "the action ended"
[ "$(count_lines "first-$$")" = 1 ] && ok "the output is shown once (not again at the end)" ||
  { fail "first line shown $(count_lines "first-$$") times"; screen >&2; }

# ---------------------------------------------------------------- the action page
tm send-keys -t dash a
wait_for "Enter types" || wait_for "Enter opens a shell" || fail "a leaves the agent's view"
show_tab Actions || { fail "Actions tab"; screen >&2; }
start_action "echo page-first-$$; until [ -e /workspace/go2 ]; do sleep 0.05; done; echo page-second-$$" ||
  fail "the second action starts"
wait_for "page-first-$$; until" || { fail "the running action is listed"; screen >&2; }
tm send-keys -t dash g Enter # the newest action is the first row
if wait_for "output so far, still running" && wait_line "page-first-$$"; then
  ok "the action page of a running command shows its output so far"
else
  fail "action page live output"; screen >&2
fi
touch "$WS/go2"
wait_line "page-second-$$" && ok "the action page shows the rest, then the observation" ||
  { fail "action page after the end"; screen >&2; }
poll 100 action_final "$ACTION" || fail "the second action ended"

echo "# $passed passed, $failed failed"
[ "$failed" -eq 0 ]
