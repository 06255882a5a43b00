#!/usr/bin/env bash
# The dashboard end to end, driven through a private tmux server against a real engine.
#
#   tests/tui/dashboard_test.sh [PATH/TO/paddock]        (or PADDOCK_EXE=...)
#
# Starts `paddock serve` on a temp state dir, creates a session and runs two actions with curl,
# opens the dashboard in tmux and reads the screen with capture-pane: the session and its
# actions show, a third action appears live, `?` shows the help, a too-small terminal says so,
# `q` quits with the terminal restored; then SIGTERM to a second dashboard also restores the
# terminal. Cleans up what it started (session, engine by PID, tmux server, temp dir).
# Needs dockerd and the image paddock/base:local: without them it FAILS (exit 1), or skips
# (exit 77) with PADDOCK_ALLOW_SKIP=1.
set -uo pipefail

PADDOCK=${1:-${PADDOCK_EXE:-}}
[ -n "$PADDOCK" ] && [ -x "$PADDOCK" ] || { echo "usage: $0 PATH/TO/paddock" >&2; exit 2; }
PADDOCK=$(readlink -f "$PADDOCK")
IMAGE=${PADDOCK_IMAGE:-paddock/base:local}
DOCKER_SOCK=${DOCKER_SOCK:-/var/run/docker.sock}
export PADDOCK_TEST_LABEL=1

failed=0 passed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
fail() { failed=$((failed + 1)); echo "FAIL - $1" >&2; }
unavailable() {
  if [ "${PADDOCK_ALLOW_SKIP:-}" = 1 ]; then echo "SKIP: $1" >&2; exit 77; fi
  echo "FAIL: $1 (PADDOCK_ALLOW_SKIP=1 to skip instead of failing)" >&2
  exit 1
}

for tool in tmux curl python3; do
  command -v "$tool" >/dev/null || unavailable "$tool is not installed"
done
curl -s --max-time 2 --unix-socket "$DOCKER_SOCK" http://d/_ping 2>/dev/null | grep -q OK ||
  unavailable "no Docker daemon answers at $DOCKER_SOCK (source scripts/lib.sh && paddock_ensure_dockerd)"
curl -s --max-time 5 --unix-socket "$DOCKER_SOCK" "http://d/images/$IMAGE/json" 2>/dev/null |
  grep -q '"Id"' || unavailable "image $IMAGE is missing (scripts/build-image)"

TMP=$(mktemp -d /tmp/paddock-tui.XXXXXX)
SOCK=$TMP/engine.sock
# A private tmux server whose socket lives in $TMP (removed with it).
export TMUX_TMPDIR=$TMP
unset TMUX
TMUX_CMD=(tmux -L "paddock-test-$$" -f /dev/null)
ENGINE_PID=
SESSION_ID=

api() { # api METHOD PATH [BODY] -> body on stdout; the HTTP status in $TMP/status
  local args=(-s --max-time 150 -X "$1" --unix-socket "$SOCK" -o "$TMP/reply" -w '%{http_code}')
  rm -f "$TMP/reply"
  [ $# -ge 3 ] && args+=(-H 'Content-Type: application/json' --data-binary "$3")
  curl "${args[@]}" "http://paddock$2" >"$TMP/status" 2>/dev/null || echo 000 >"$TMP/status"
  cat "$TMP/reply" 2>/dev/null
}
json_get() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval("d" + sys.argv[1]))' "$1"; }

cleanup() {
  "${TMUX_CMD[@]}" kill-server 2>/dev/null
  if [ -n "$SESSION_ID" ]; then
    [ -n "$ENGINE_PID" ] && api DELETE "/v1/sessions/$SESSION_ID" >/dev/null
    if [ "$(cat "$TMP/status" 2>/dev/null)" != 200 ]; then # no engine to ask: remove it directly
      local f ids
      f=$(python3 -c 'import json,sys,urllib.parse; print(urllib.parse.quote(json.dumps({"label":["paddock.session="+sys.argv[1]]})))' "$SESSION_ID")
      ids=$(curl -s --unix-socket "$DOCKER_SOCK" "http://d/containers/json?all=1&filters=$f" |
        python3 -c 'import json,sys; print(" ".join(c["Id"] for c in json.load(sys.stdin)))' 2>/dev/null)
      for id in $ids; do
        curl -s -X DELETE --unix-socket "$DOCKER_SOCK" "http://d/containers/$id?force=1&v=1" >/dev/null
      done
    fi
  fi
  [ -n "$ENGINE_PID" ] && kill -0 "$ENGINE_PID" 2>/dev/null && stop_engine
  if [ "$failed" -ne 0 ]; then
    for f in engine.log dash.err; do
      [ -s "$TMP/$f" ] && { echo "--- $f (last 30 lines)" >&2; tail -n 30 "$TMP/$f" >&2; }
    done
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT

# ---------------------------------------------------------------- engine, session, actions
start_engine() { # sets ENGINE_PID; 0 once GET /v1/info answers 200
  "$PADDOCK" serve --state-dir "$TMP/state" --socket "$SOCK" >>"$TMP/engine.log" 2>&1 &
  ENGINE_PID=$!
  for _ in $(seq 1 100); do
    [ "$(api GET /v1/info >/dev/null; cat "$TMP/status")" = 200 ] && return 0
    kill -0 "$ENGINE_PID" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
stop_engine() {
  kill -TERM "$ENGINE_PID"
  for _ in $(seq 1 100); do kill -0 "$ENGINE_PID" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$ENGINE_PID" 2>/dev/null && kill -KILL "$ENGINE_PID"
  wait "$ENGINE_PID" 2>/dev/null
  ENGINE_PID=
}
start_engine || { fail "engine answers GET /v1/info"; exit 1; }
ok "engine started (pid $ENGINE_PID)"

NAME=tui-$$
reply=$(api POST /v1/sessions "{\"name\":\"$NAME\",\"image\":\"$IMAGE\"}")
SESSION_ID=$(printf '%s' "$reply" | json_get '["id"]' 2>/dev/null)
if [ "$(cat "$TMP/status")" != 201 ] || [ -z "$SESSION_ID" ]; then
  fail "POST /v1/sessions: $(cat "$TMP/status") $reply"
  exit 1
fi
for _ in $(seq 1 300); do # creation may return before the sandbox is ready
  state=$(api GET "/v1/sessions/$SESSION_ID" | json_get '["state"]' 2>/dev/null)
  [ "$state" = ready ] || [ "$state" = error ] && break
  sleep 0.1
done
[ "$state" = ready ] || { fail "session $SESSION_ID is ready (state: $state)"; exit 1; }
ok "session $SESSION_ID created"

run_action() { # run_action COMMAND -> 0 when the observation says exit code 0
  local body
  body=$(python3 -c 'import json,sys; print(json.dumps({"action":{"action":"run","args":{"command":sys.argv[1]}}}))' "$1")
  local r
  r=$(api POST "/v1/sessions/$SESSION_ID/execute_action" "$body")
  [ "$(cat "$TMP/status")" = 200 ] && [ "$(printf '%s' "$r" | json_get '["extras"]["metadata"]["exit_code"]' 2>/dev/null)" = 0 ]
}
if run_action "echo hi" && run_action "echo second-$$"; then
  ok "two actions ran through POST /v1/sessions/{id}/execute_action"
else
  fail "actions ran: $(cat "$TMP/status") $(cat "$TMP/reply")"
  exit 1
fi

# ---------------------------------------------------------------- the dashboard in tmux
tm() { "${TMUX_CMD[@]}" "$@"; }
screen() { tm capture-pane -p -t dash; }
# wait_for TEXT [TRIES]: poll the screen every 0.1 s (bounded) until it shows TEXT.
wait_for() {
  local i
  for i in $(seq 1 "${2:-100}"); do
    screen | grep -qF -- "$1" && return 0
    sleep 0.1
  done
  return 1
}
wait_gone() {
  local i
  for i in $(seq 1 "${2:-100}"); do
    screen | grep -qF -- "$1" || return 0
    sleep 0.1
  done
  return 1
}
flag() { tm display -p -t dash "#{$1}"; }
# terminal_restored: the alternate screen is left, the cursor is visible, keypad mode is off.
terminal_restored() {
  local i
  for i in $(seq 1 100); do
    [ "$(flag alternate_on)" = 0 ] && [ "$(flag cursor_flag)" = 1 ] && [ "$(flag keypad_flag)" = 0 ] &&
      return 0
    sleep 0.1
  done
  return 1
}
start_dashboard() { # the pid is written by the sh that then execs paddock
  rm -f "$TMP/dash.pid"
  tm send-keys -t dash -l "clear; sh -c 'echo \$\$ >$TMP/dash.pid; exec \"\$0\" 2>>$TMP/dash.err' $PADDOCK"
  tm send-keys -t dash Enter
  for _ in $(seq 1 50); do [ -s "$TMP/dash.pid" ] && break; sleep 0.1; done
}

printf '%s\n' "PS1='READY\$ '" >"$TMP/bashrc"
tm new-session -d -s dash -x 160 -y 32 \
  -e "LANG=C.UTF-8" -e "LC_ALL=C.UTF-8" \
  -e "PADDOCK_SOCKET=$SOCK" -e "PADDOCK_STATE_DIR=$TMP/state" -e "HOME=$TMP" \
  "bash --noprofile --rcfile $TMP/bashrc -i" || { fail "tmux starts"; exit 1; }
# Let applications in the pane write the clipboard, so an OSC 52 that got through would show.
tm set -g set-clipboard on
wait_for 'READY$' || { fail "shell prompt in tmux"; exit 1; }

start_dashboard
short=${SESSION_ID:0:8}
if wait_for "$NAME" && wait_for "$short" && wait_for "paddock " && wait_for "● live"; then
  ok "dashboard shows the session ($short $NAME) and the engine link"
else
  fail "dashboard shows the session"; screen >&2
fi
if wait_for "echo hi" && wait_for "echo second-$$"; then
  ok "dashboard shows the actions (echo hi, echo second-$$)"
else
  fail "dashboard shows the actions"; screen >&2
fi
screen | grep -F "$short" | grep -qF ready && ok "session state shown (ready)" ||
  { fail "session row shows state ready"; screen >&2; }

# A third action while the dashboard is open: it appears without a key press.
run_action "echo live-$$" &
action_pid=$!
if wait_for "echo live-$$" 150; then
  ok "an action run while the dashboard is open appears live"
else
  fail "live action appears"; screen >&2
fi
wait "$action_pid" || fail "the live action ran"
for _ in $(seq 1 100); do
  screen | grep -F "echo live-$$" | grep -qF done && break
  sleep 0.1
done
screen | grep -F "echo live-$$" | grep -qF done && ok "the live action's state turns to done" ||
  { fail "live action reaches done"; screen >&2; }

# Hostile text from the sandbox side (security.md I06, I07, I09, I11): the command carries a
# title change (OSC 0), a clipboard write (OSC 52), an erase (CSI 2J) and a bidi override.
# The dashboard shows them as visible tokens; the terminal's title and clipboard stay untouched.
title_before=$(flag pane_title)
hostile=$(printf "echo '\033]0;pwned\007\033]52;c;eA==\007\033[2J\342\200\256x%s'" $$)
run_action "$hostile" || fail "hostile action ran: $(cat "$TMP/status")"
if wait_for "x$$'" && screen | grep -F "x$$'" |
  grep -qF "echo '^[]0…^[]52…^[[2J<U+202E>x$$'"; then
  ok "escape sequences and bidi controls in a command are shown as visible tokens"
else
  fail "hostile command shown sanitized"; screen >&2
fi
[ "$(flag pane_title)" = "$title_before" ] && ok "the terminal title is untouched (OSC 0)" ||
  fail "pane title changed to '$(flag pane_title)'"
tm show-buffer >/dev/null 2>&1 && fail "a tmux paste buffer appeared (OSC 52)" ||
  ok "no clipboard write reached the terminal (OSC 52)"

# The engine goes away: the header says so; it comes back: the dashboard reconnects by itself.
stop_engine
wait_for "engine disconnected" 50 && ok "the header shows 'engine disconnected' when the engine stops" ||
  { fail "engine disconnected shown"; screen >&2; }
if start_engine && wait_for "● live" 50 && wait_for "$NAME"; then
  ok "the dashboard reconnects when the engine is back (pid $ENGINE_PID)"
else
  fail "reconnect after engine restart"; screen >&2
fi

tm send-keys -t dash '?'
if wait_for "Keys" && wait_for "show or hide this help" && wait_for "quit"; then
  ok "? shows the help overlay from the key table"
else
  fail "? shows help"; screen >&2
fi
tm send-keys -t dash Escape
wait_gone "show or hide this help" && ok "a key closes the help" || { fail "help closes"; screen >&2; }

tm resize-window -t dash -x 50 -y 12
wait_for "terminal too small: have 50x12, need 60x15" && ok "a too-small terminal says so" ||
  { fail "too-small message"; screen >&2; }
tm resize-window -t dash -x 160 -y 32
wait_for "$NAME" && ok "resizing back lays the dashboard out again" ||
  { fail "relayout after resize"; screen >&2; }

tm send-keys -t dash q
if terminal_restored && wait_for 'READY$'; then
  ok "q quits and restores the terminal (alternate screen off, cursor on, keypad off)"
else
  fail "q restores the terminal (alternate_on=$(flag alternate_on) cursor=$(flag cursor_flag))"
  screen >&2
fi
tm send-keys -t dash -l 'echo "rc=$?"'
tm send-keys -t dash Enter
wait_for "rc=0" && ok "the dashboard exited 0" || { fail "exit code 0 after q"; screen >&2; }

# ---------------------------------------------------------------- SIGTERM restores the terminal
start_dashboard
dash_pid=$(cat "$TMP/dash.pid" 2>/dev/null)
if [ -n "$dash_pid" ] && wait_for "$NAME" && [ "$(flag alternate_on)" = 1 ]; then
  kill -TERM "$dash_pid"
  if terminal_restored && wait_for 'READY$'; then
    ok "SIGTERM to the dashboard restores the terminal"
  else
    fail "SIGTERM restores the terminal (alternate_on=$(flag alternate_on))"; screen >&2
  fi
  tm send-keys -t dash -l 'echo "rc=$?"'
  tm send-keys -t dash Enter
  wait_for "rc=143" && ok "the dashboard exited 143 (128 + SIGTERM) after cleaning up" ||
    { fail "exit code 143 after SIGTERM"; screen >&2; }
else
  fail "second dashboard started (pid '$dash_pid')"; screen >&2
fi

if [ -s "$TMP/dash.err" ]; then
  fail "the dashboard wrote to stderr"; cat "$TMP/dash.err" >&2
fi

# ---------------------------------------------------------------- paddock exec in tmux
# An interactive shell in the sandbox without the dashboard: typing runs in the sandbox, the
# window size follows tmux's, Ctrl-C goes to the sandbox, `exit 5` returns 5 to the outer shell.
tm new-window -t dash -n ex "bash --norc --noprofile"
exs() { tm capture-pane -p -t dash:ex; }
wait_ex() {
  local i
  for i in $(seq 1 "${2:-100}"); do
    exs | grep -qE -- "$1" && return 0
    sleep 0.1
  done
  return 1
}
tm send-keys -t dash:ex -l "PS1='OUTER\$ '; $PADDOCK --socket $SOCK --state-dir $TMP/state exec $NAME; echo EXEC-RC=\$?"
tm send-keys -t dash:ex Enter
if wait_ex 'agent@.*workspace' 100; then
  ok "paddock exec opened a login shell in the sandbox"
  tm send-keys -t dash:ex -l 'echo hi-$((40+2))'
  tm send-keys -t dash:ex Enter
  wait_ex '^hi-42$' && ok "typing 'echo hi' in the exec terminal shows hi" || { fail "exec echo"; exs >&2; }
  tm send-keys -t dash:ex -l 'sleep 100'
  tm send-keys -t dash:ex Enter
  sleep 0.3
  tm send-keys -t dash:ex C-c
  tm send-keys -t dash:ex -l 'echo after-ctrl-c'
  tm send-keys -t dash:ex Enter
  wait_ex '^after-ctrl-c$' && ok "Ctrl-C reaches the sandbox's shell, the terminal stays" ||
    { fail "Ctrl-C in exec"; exs >&2; }
  tm resize-window -t dash:ex -x 97 -y 31 2>/dev/null
  sleep 0.5
  tm send-keys -t dash:ex -l 'stty size'
  tm send-keys -t dash:ex Enter
  wait_ex '^31 97$' && ok "the exec terminal follows a resize (stty size 31 97)" ||
    { fail "exec resize"; exs >&2; }
  tm send-keys -t dash:ex -l 'exit 5'
  tm send-keys -t dash:ex Enter
  wait_ex '^EXEC-RC=5$' && ok "exit 5 in the sandbox: paddock exec returns 5 to the outer shell" ||
    { fail "exec exit code"; exs >&2; }
  tm send-keys -t dash:ex -l 'stty -a | grep -o " icanon" ; echo CANON-CHECKED'
  tm send-keys -t dash:ex Enter
  wait_ex '^ icanon$' && ok "the local terminal is back in canonical mode after exec" ||
    { fail "terminal mode restored after exec"; exs >&2; }
else
  fail "paddock exec shows the sandbox's prompt"; exs >&2
fi
out=$(printf 'echo piped-$((3*3))\nexit 6\n' | "$PADDOCK" --socket "$SOCK" --state-dir "$TMP/state" exec "$NAME")
rc=$?
[ "$out" = "piped-9" ] && [ $rc = 6 ] && ok "piped input to paddock exec: the output alone and the exit code" ||
  fail "piped exec: '$out' rc=$rc"

# ---------------------------------------------------------------- cleanup
api DELETE "/v1/sessions/$SESSION_ID" >/dev/null
[ "$(cat "$TMP/status")" = 200 ] && { ok "session deleted"; SESSION_ID=; } ||
  fail "DELETE /v1/sessions/$SESSION_ID: $(cat "$TMP/status") $(cat "$TMP/reply")"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
