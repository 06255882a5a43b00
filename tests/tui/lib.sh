#!/usr/bin/env bash
# Shared by the tmux-driven dashboard tests (tests/tui/*_test.sh), sourced first: takes
# PATH/TO/paddock as $1 (or PADDOCK_EXE), checks dockerd and the image (FAIL, or skip with
# PADDOCK_ALLOW_SKIP=1), makes $TMP, and gives: ok/fail, api, json_get, start_engine/
# stop_engine, create_session NAME (sets SESSION_ID; each one is deleted at exit),
# run_action COMMAND, docker_api, container_running, poll, chars, and the tmux helpers (tm,
# screen, cells, screen_has, wait_for, wait_gone, flag, terminal_restored, start_dashboard,
# open_tmux, current_tab, show_tab, page_is, main_shown). The exit trap removes what it started.
#
# Deterministic on any machine, loaded or not (docs/style.md): every wait for a state polls it
# to a deadline (poll, wait_for, wait_gone), never sleeps a guessed time; a comparison reads
# both of its sides from one sample (one capture, or one record the API identifies); screen
# text is cut by characters (chars), never bytes. A bare sleep only gives something the time
# NOT to happen, after a positive sign that the input which could cause it was handled.
set -uo pipefail
# The tests' own tools read text as UTF-8 whatever the machine's locale is (grep, bash's
# ${var:0:N}, python's stdin): a screen is cut and matched the same way everywhere. The pane
# has its own locale (open_tmux).
export LC_ALL=C.UTF-8

PADDOCK=${1:-${PADDOCK_EXE:-}}
[ -n "$PADDOCK" ] && [ -x "$PADDOCK" ] || { echo "usage: $0 PATH/TO/paddock" >&2; exit 2; }
PADDOCK=$(readlink -f "$PADDOCK")
IMAGE=${PADDOCK_IMAGE:-paddock/base:local}
DOCKER_SOCK=${DOCKER_SOCK:-/var/run/docker.sock}
export PADDOCK_TEST_LABEL=${PADDOCK_TEST_LABEL:-1} # paddock.test=VALUE on what the engine makes

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
# The tests act as the operator, as the dashboard does: its channel (docs/security.md).
OPSOCK=$TMP/state/operator.sock
# A private tmux server whose socket lives in $TMP (removed with it).
export TMUX_TMPDIR=$TMP
unset TMUX
TMUX_CMD=(tmux -L "paddock-test-$$" -f /dev/null)
ENGINE_PID=
SESSION_ID=
SESSION_IDS=()

api() { # api METHOD PATH [BODY] -> body on stdout; the HTTP status in $TMP/status
  local args=(-s --max-time 150 -X "$1" --unix-socket "$OPSOCK" -o "$TMP/reply" -w '%{http_code}')
  rm -f "$TMP/reply"
  [ $# -ge 3 ] && args+=(-H 'Content-Type: application/json' --data-binary "$3")
  curl "${args[@]}" "http://paddock$2" >"$TMP/status" 2>/dev/null || echo 000 >"$TMP/status"
  cat "$TMP/reply" 2>/dev/null
}
json_get() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval("d" + sys.argv[1]))' "$1"; }
docker_api() { # docker_api METHOD PATH [BODY]: the Docker Engine API on $DOCKER_SOCK
  local args=(-s --max-time 60 -X "$1" --unix-socket "$DOCKER_SOCK")
  [ $# -ge 3 ] && args+=(-H 'Content-Type: application/json' --data-binary "$3")
  curl "${args[@]}" "http://d$2"
}

# ---------------------------------------------------------------- polling and text
# poll TRIES COMMAND [ARG...]: run COMMAND until it succeeds, TRIES times at most, 0.1 s apart;
# its status. The deadline is at least TRIES/10 s: a loaded machine stretches it (each check
# takes longer), never shortens it.
poll() {
  local tries=$1 i
  shift
  for ((i = 1; ; i++)); do
    "$@" && return 0
    [ "$i" -ge "$tries" ] && return 1
    sleep 0.1
  done
}
# chars FIRST LAST: each line of stdin cut to its characters FIRST..LAST (from 1), decoded
# UTF-8 characters, never bytes: GNU `cut -c` counts bytes, so a cut through a braille
# sparkline (three bytes a cell) left half a character and grep saw a "binary file".
chars() {
  python3 -c '
import sys
first, last = int(sys.argv[1]), int(sys.argv[2])
data = sys.stdin.buffer.read().decode("utf-8", "surrogateescape")
lines = data.split("\n")
if lines and lines[-1] == "":
    lines.pop()
out = "".join(l[first - 1 : last] + "\n" for l in lines)
sys.stdout.buffer.write(out.encode("utf-8", "surrogateescape"))' "$1" "$2"
}
# container_running CONTAINER PATTERN: some process in the container has a command line
# matching PATTERN (pgrep -f, through docker exec as root): a process the test started, seen
# running before the test acts on it.
container_running() {
  local body id code
  body=$(python3 -c 'import json,sys; print(json.dumps({"User":"0","Cmd":["pgrep","-f",sys.argv[1]]}))' "$2")
  id=$(docker_api POST "/containers/$1/exec" "$body" | json_get '["Id"]' 2>/dev/null)
  [ -n "$id" ] || return 1
  docker_api POST "/exec/$id/start" '{"Detach":false}' >/dev/null
  code=$(docker_api GET "/exec/$id/json" | json_get '["ExitCode"]' 2>/dev/null)
  [ "$code" = 0 ]
}

cleanup() {
  "${TMUX_CMD[@]}" kill-server 2>/dev/null
  local SESSION_ID
  for SESSION_ID in "${SESSION_IDS[@]}"; do
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
  done
  [ -n "$ENGINE_PID" ] && kill -0 "$ENGINE_PID" 2>/dev/null && stop_engine
  local rc=0
  # A sanitizer report from the dashboard or the engine (the ASan build) fails the test.
  if grep -qE "ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:" \
    "$TMP/dash.err" "$TMP/engine.log" 2>/dev/null; then
    fail "a sanitizer reported an error (dash.err / engine.log below)"
    rc=1
  fi
  if [ "$failed" -ne 0 ]; then
    for f in engine.log dash.err; do
      [ -s "$TMP/$f" ] && { echo "--- $f (last 30 lines)" >&2; tail -n 30 "$TMP/$f" >&2; }
    done
  fi
  rm -rf "$TMP"
  [ "$rc" -eq 0 ] || exit "$rc"
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
create_session() { # create_session NAME [EXTRA-JSON-FIELDS] -> SESSION_ID; 0 once ready
  local reply state
  reply=$(api POST /v1/sessions "{\"name\":\"$1\",\"image\":\"$IMAGE\"${2:+,$2}}")
  SESSION_ID=$(printf '%s' "$reply" | json_get '["id"]' 2>/dev/null)
  if [ "$(cat "$TMP/status")" != 201 ] || [ -z "$SESSION_ID" ]; then
    fail "POST /v1/sessions: $(cat "$TMP/status") $reply"
    return 1
  fi
  SESSION_IDS+=("$SESSION_ID")
  for _ in $(seq 1 300); do # creation may return before the sandbox is ready
    state=$(api GET "/v1/sessions/$SESSION_ID" | json_get '["state"]' 2>/dev/null)
    [ "$state" = ready ] || [ "$state" = error ] && break
    sleep 0.1
  done
  [ "$state" = ready ] || { fail "session $SESSION_ID is ready (state: $state)"; return 1; }
}
run_action() { # run_action COMMAND -> 0 when the observation says exit code 0
  local body
  body=$(python3 -c 'import json,sys; print(json.dumps({"action":{"action":"run","args":{"command":sys.argv[1]}}}))' "$1")
  local r
  r=$(api POST "/v1/sessions/$SESSION_ID/execute_action" "$body")
  [ "$(cat "$TMP/status")" = 200 ] && [ "$(printf '%s' "$r" | json_get '["extras"]["metadata"]["exit_code"]' 2>/dev/null)" = 0 ]
}
# ---------------------------------------------------------------- the dashboard in tmux
tm() { "${TMUX_CMD[@]}" "$@"; }
screen() { tm capture-pane -p -t dash; }
# cells runs ATTR | cells colours: the pane's cells by attribute (tests/tui/cells.py).
TUI_DIR=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
cells() { tm capture-pane -p -e -t dash | python3 "$TUI_DIR/cells.py" "$@"; }
# sgr_before TEXT: the SGR sequences drawn right before TEXT's first occurrence (capture -e).
sgr_before() {
  tm capture-pane -p -e -t dash | python3 -c '
import re, sys
screen, text = sys.stdin.read(), sys.argv[1]
i = screen.find(text)
if i < 0:
    sys.exit(1)
seqs = re.findall(r"((?:\x1b\[[0-9;]*m)+)$", screen[:i])
print(seqs[0].replace("\x1b", "ESC") if seqs else "none")' "$1"
}
# screen_has TEXT: the pane shows TEXT now (one capture, read whole before grep looks at it).
screen_has() {
  local s
  s=$(screen) && grep -qF -- "$1" <<<"$s"
}
# wait_for TEXT [TRIES]: poll the screen every 0.1 s (bounded) until it shows TEXT.
wait_for() { poll "${2:-100}" screen_has "$1"; }
screen_lacks() { ! screen_has "$1"; }
# wait_gone TEXT [TRIES]: poll the screen until it no longer shows TEXT.
wait_gone() { poll "${2:-100}" screen_lacks "$1"; }
flag() { tm display -p -t dash "#{$1}"; }
# terminal_restored: the alternate screen is left, the cursor is visible, keypad mode is off.
restored_now() {
  [ "$(flag alternate_on)" = 0 ] && [ "$(flag cursor_flag)" = 1 ] && [ "$(flag keypad_flag)" = 0 ]
}
terminal_restored() { poll 100 restored_now; }
start_dashboard() { # start_dashboard [ARGS]: the pid is written by the sh that then execs paddock
  rm -f "$TMP/dash.pid"
  tm send-keys -t dash -l "clear; sh -c 'echo \$\$ >$TMP/dash.pid; exec \"\$0\" \"\$@\" 2>>$TMP/dash.err' $PADDOCK $*"
  tm send-keys -t dash Enter
  poll 50 test -s "$TMP/dash.pid"
}

open_tmux() { # open_tmux [COLS ROWS]: the private tmux server with bash at a READY$ prompt
  printf '%s\n' "PS1='READY\$ '" >"$TMP/bashrc"
  tm new-session -d -s dash -x "${1:-160}" -y "${2:-32}" \
    -e "LANG=C.UTF-8" -e "LC_ALL=C.UTF-8" \
    -e "PADDOCK_SOCKET=$SOCK" -e "PADDOCK_STATE_DIR=$TMP/state" -e "HOME=$TMP" \
    "bash --noprofile --rcfile $TMP/bashrc -i" || { fail "tmux starts"; return 1; }
  # Let applications in the pane write the clipboard, so an OSC 52 that got through would show.
  tm set -g set-clipboard on
  wait_for 'READY$' || { fail "shell prompt in tmux"; return 1; }
}
# current_tab: the name of the selected session's tab on show (the one tab name on the detail
# pane's top border drawn unlike the others; tests/tui/cells.py), or nothing.
current_tab() { cells tab; }
tab_is() { [ "$(current_tab)" = "$1" ]; }
tab_not() { local t; t=$(current_tab) && [ -n "$t" ] && [ "$t" != "$1" ]; }
# show_tab NAME [TEXT]: press ] (next tab) until the tab bar says NAME is on show, each press
# seen on the tab bar before the next, then wait for TEXT (what that tab shows once loaded).
read_tab() { cur=$(current_tab) && [ -n "$cur" ]; } # sets the caller's cur
show_tab() {
  local i cur
  for i in $(seq 1 12); do
    poll 100 read_tab || return 1
    [ "$cur" = "$1" ] && break
    tm send-keys -t dash ']'
    poll 100 tab_not "$cur" || return 1
  done
  tab_is "$1" || return 1
  [ -z "${2:-}" ] || wait_for "$2"
}
# page_is NAME: a full-screen page (3: History) is on show: its name titles the outer frame.
page_is() {
  local s
  s=$(screen) && [[ "$(sed -n 2p <<<"$s")" == "┌─ $1 ─"* ]]
}
# laid_out COLS ROWS: the dashboard has drawn its frame for a COLS x ROWS pane: the second row is
# COLS characters ending in the detail pane's corner (┐), row ROWS-1 ends in its other (┘).
# After a resize tmux keeps the old cells, cut to the new size, until the dashboard redraws.
laid_out() {
  local s top bottom
  s=$(screen) || return 1
  top=$(sed -n 2p <<<"$s")
  bottom=$(sed -n "$(($2 - 1))p" <<<"$s")
  [ "${#top}" = "$1" ] && [ "${top: -1}" = ┐ ] && [ "${bottom: -1}" = ┘ ]
}
# main_shown: the main screen is on show: the sessions list's frame begins the second row.
main_shown() {
  local s
  s=$(screen) && [[ "$(sed -n 2p <<<"$s")" == "┌─ Sessions ("* ]]
}
