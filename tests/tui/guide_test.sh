#!/usr/bin/env bash
# What a new operator is told on the dashboard, through a private tmux server against a real
# engine: the empty sessions list says how to create one (c); a paused session's Terminal tab
# says "press u" (not the API's resume path) and u there resumes it; `:pause` takes a session
# by a unique prefix of its id; an engine that holds the state dir but does not answer is named
# (its pid) at once, before any screen; an engine that goes away is said as such.
#
#   tests/tui/guide_test.sh [PATH/TO/paddock]        (or PADDOCK_EXE=...)
set -uo pipefail
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"

start_engine || { fail "engine answers GET /v1/info"; exit 1; }
open_tmux 160 32 || exit 1
start_dashboard
if wait_for "press c to create one"; then
  ok "the empty sessions list says how to create a session (c)"
else
  fail "empty list hint"; screen >&2
fi

NAME=guide
create_session "$NAME" || exit 1
ID=$SESSION_ID
state_is() { [ "$(api GET "/v1/sessions/$ID" | json_get '["state"]' 2>/dev/null)" = "$1" ]; }
wait_for "$NAME" || { fail "the list shows $NAME"; screen >&2; exit 1; }

# :pause with the first 6 characters of the id (the list shows 8)
tm send-keys -t dash :
tm send-keys -t dash -l "pause ${ID:0:6}"
tm send-keys -t dash Enter
if poll 150 state_is paused; then
  ok ":pause takes a unique id prefix"
else
  fail ":pause ${ID:0:6} (state: $(api GET "/v1/sessions/$ID" | json_get '["state"]' 2>/dev/null))"
  screen >&2
  api POST "/v1/sessions/$ID/pause" >/dev/null
  poll 150 state_is paused
fi

tm send-keys -t dash t
if wait_for "Enter opens a shell" && tab_is Terminal; then
  tm send-keys -t dash Enter
  if wait_for "press u to resume it" && screen_lacks "POST /v1/sessions"; then
    ok "a paused session's Terminal tab says press u, not the API path"
  else
    fail "paused terminal message"; screen >&2
  fi
  tm send-keys -t dash u
  if poll 150 state_is ready; then
    ok "u in the Terminal tab resumes the session"
  else
    fail "u resumes (state: $(api GET "/v1/sessions/$ID" | json_get '["state"]' 2>/dev/null))"
    screen >&2
  fi
else
  fail "Terminal tab reached"; screen >&2
fi
tm send-keys -t dash q
terminal_restored || fail "q restores the terminal"

# the state dir held by this engine, the dashboard pointed at another socket: it says who
# holds it, with the pid, and exits (no blank screen while it waits for nothing)
tm send-keys -t dash -l "clear; $PADDOCK --state-dir $TMP/state --operator-socket $TMP/nobody.sock; echo EXIT=\$?"
tm send-keys -t dash Enter
if wait_for "EXIT=1" 200 && screen_has "pid $ENGINE_PID holds the state dir"; then
  ok "a locked state dir names the engine's pid at once"
else
  fail "locked state dir message"; screen >&2
fi

# the engine goes away under a running dashboard: it says what is wrong and what to do
tm send-keys -t dash -l "clear"
tm send-keys -t dash Enter
start_dashboard
wait_for "$NAME" || { fail "the dashboard is back"; screen >&2; }
api DELETE "/v1/sessions/$ID" >/dev/null # its container goes with the engine's help
stop_engine
if wait_for "no engine is running for" 200 && wait_for "engine disconnected"; then
  ok "an engine gone is said as such, with what to do"
else
  fail "engine gone message"; screen >&2
fi
tm send-keys -t dash q
terminal_restored || fail "q restores the terminal"

echo "# $passed passed, $failed failed"
[ "$failed" = 0 ]
