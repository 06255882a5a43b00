#!/usr/bin/env bash
# The dashboard over three engines on loopback (issue 20), through a private tmux server: each
# engine has its own state dir and a TLS listener with its own certificate (made here with
# openssl, one CA; the dashboard's certificate is the operator's credential on the remote
# ones). The local engine (one) and the config file's two and three are shown at once: the
# ENGINE column and each engine's state in the header; an action held on engine three is in
# the one queue and `y` there approves it on three; a remote session's Logs and Terminal tabs
# show its output; engine three killed (SIGKILL, by the PID this test started) shows as down
# while the others keep working, and restarted on its port it comes back up by itself, its
# sessions live again.
#
#   tests/tui/engines_test.sh [PATH/TO/paddock]        (or PADDOCK_EXE=...)
set -uo pipefail
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"

command -v openssl >/dev/null || unavailable "openssl is not installed"

# ---------------------------------------------------------------- certificates
cert() { # cert DIR: a key and a certificate for 127.0.0.1 signed by the test's CA
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1/key.pem" \
    -out "$1/csr.pem" -subj "/CN=127.0.0.1" 2>/dev/null &&
    printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n' >"$1/ext" &&
    openssl x509 -req -in "$1/csr.pem" -CA "$TMP/ca.pem" -CAkey "$TMP/ca-key.pem" \
      -CAcreateserial -out "$1/cert.pem" -days 2 -extfile "$1/ext" 2>/dev/null
}
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$TMP/ca-key.pem" \
  -out "$TMP/ca.pem" -days 2 -subj "/CN=paddock tui test ca" 2>/dev/null ||
  { fail "openssl makes the CA"; exit 1; }
mkdir -p "$TMP/client"
cert "$TMP/client" || { fail "openssl makes the client certificate"; exit 1; }

# ---------------------------------------------------------------- engines
# one is the dashboard's local engine: lib.sh's state dir and socket ($TMP/state, $SOCK), so
# that api() (the operator's socket) reaches it; two and three have their own.
declare -A PID PORT DIR
NAMES=(one two three)
DIR=([one]=$TMP/state [two]=$TMP/two [three]=$TMP/three)
unix_api() { # unix_api ENGINE METHOD PATH [BODY]: through the engine's operator socket
  local args=(-s --max-time 60 -X "$2" --unix-socket "${DIR[$1]}/operator.sock")
  [ $# -ge 4 ] && args+=(-H 'Content-Type: application/json' --data-binary "$4")
  curl "${args[@]}" "http://p$3"
}
answers() { [ "$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "${DIR[$1]}/operator.sock" http://p/v1/info)" = 200 ]; }
start_tls_engine() { # start_tls_engine NAME [LISTEN]
  local n=$1 listen=${2:-127.0.0.1:0} sock=${DIR[$1]}/engine.sock
  [ "$n" = one ] && sock=$SOCK
  mkdir -p "${DIR[$n]}"
  [ -f "${DIR[$n]}/cert.pem" ] || cert "${DIR[$n]}" || return 1
  "$PADDOCK" serve --state-dir "${DIR[$n]}" --socket "$sock" --listen "$listen" \
    --tls-cert "${DIR[$n]}/cert.pem" --tls-key "${DIR[$n]}/key.pem" \
    --tls-client-ca "$TMP/ca.pem" >>"$TMP/engine-$n.log" 2>&1 &
  PID[$n]=$!
  poll 300 answers "$n" || return 1
  local addr
  addr=$(unix_api "$n" GET /v1/info | json_get '["listen"]["address"]')
  PORT[$n]=${addr##*:}
}
stop_tls_engine() {
  local p=${PID[$1]:-}
  [ -n "$p" ] || return 0
  kill -TERM "$p" 2>/dev/null
  for _ in $(seq 1 300); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$p" 2>/dev/null && kill -KILL "$p"
  wait "$p" 2>/dev/null
  PID[$1]=
}
SILENT_PID= STOPPED=
engines_cleanup() {
  tm kill-server 2>/dev/null
  [ -n "$STOPPED" ] && kill -CONT "$STOPPED" 2>/dev/null
  [ -n "$SILENT_PID" ] && kill "$SILENT_PID" 2>/dev/null && wait "$SILENT_PID" 2>/dev/null
  local n id
  for n in "${NAMES[@]}"; do
    [ -n "${PID[$n]:-}" ] || continue
    # every session the test made goes with its engine's record of it
    for id in $(unix_api "$n" GET /v1/sessions 2>/dev/null |
      python3 -c 'import json,sys; print(" ".join(s["id"] for s in json.load(sys.stdin)["sessions"]))' 2>/dev/null); do
      unix_api "$n" DELETE "/v1/sessions/$id" >/dev/null
    done
    stop_tls_engine "$n"
  done
  if [ "$failed" -ne 0 ]; then
    for n in "${NAMES[@]}"; do
      echo "--- engine-$n.log (last 15 lines)" >&2
      tail -n 15 "$TMP/engine-$n.log" >&2 2>/dev/null
    done
  fi
  cleanup
}
trap engines_cleanup EXIT

for n in "${NAMES[@]}"; do
  start_tls_engine "$n" || { fail "engine $n starts with TLS"; exit 1; }
done
ok "three engines serve TLS on 127.0.0.1:${PORT[one]}, :${PORT[two]}, :${PORT[three]}"

export PADDOCK_STATE_DIR=$TMP/state PADDOCK_SOCKET=$SOCK PADDOCK_CONFIG=$TMP/config.toml
cat >"$PADDOCK_CONFIG" <<EOF
[engines.two]
url = "https://127.0.0.1:${PORT[two]}"
ca = "$TMP/ca.pem"
tls_cert = "$TMP/client/cert.pem"
tls_key = "$TMP/client/key.pem"

[engines.three]
url = "https://127.0.0.1:${PORT[three]}"
ca = "$TMP/ca.pem"
tls_cert = "$TMP/client/cert.pem"
tls_key = "$TMP/client/key.pem"
EOF
P() { "$PADDOCK" "$@"; }

# A session on each, each with one action run.
declare -A ENG=([one]=local [two]=two [three]=three)
# short names: the NAME column of a 64-column list shows 12 characters
declare -A SNAME=([one]=one-$$ [two]=two-$$ [three]=thr-$$)
for n in "${NAMES[@]}"; do
  P new --name "${SNAME[$n]}" --engine "${ENG[$n]}" >"$TMP/new.out" 2>&1 ||
    { fail "new ${SNAME[$n]} on ${ENG[$n]}: $(cat "$TMP/new.out")"; exit 1; }
  out=$(P run --engine "${ENG[$n]}" --session "${SNAME[$n]}" -- echo "in-$n-$$" 2>&1)
  [ "$out" = "in-$n-$$" ] || { fail "run on s-$n: $out"; exit 1; }
done
ok "a session on each engine, each with an action"

# ---------------------------------------------------------------- all three at once
# monochrome: the selected row is the reverse-video one, a stale row the dim one
export NO_COLOR=1
open_tmux 200 40 || exit 1
start_dashboard
# row_of TEXT: the left column's row showing TEXT (one capture; the left column is 64
# characters wide in a 200-column pane: the detail pane's title names the selected session)
row_of() { screen | chars 1 64 | grep -F -- "$1" | head -n 1; }
# row_engine NAME ENGINE: the sessions list's row of NAME names ENGINE before it
row_engine() { [[ "$(row_of "$1")" == *" $2 "*"$1"* ]]; }
if wait_for "thr-$$" 300 && wait_for "ENGINE" && poll 100 row_engine "one-$$" local &&
  poll 100 row_engine "two-$$" two && poll 100 row_engine "thr-$$" three; then
  ok "the sessions of all three engines in one list, each with its ENGINE"
else
  fail "all three engines listed with an ENGINE column"; screen >&2
fi
header() { screen | head -n 1; }
header_has() { [[ "$(header)" == *"$1"* ]]; }
if poll 100 header_has "local up" && poll 100 header_has "two up" && poll 100 header_has "three up"; then
  ok "the header shows each engine up: $(header | chars 1 120)"
else
  fail "header states"; header >&2
fi

# ---------------------------------------------------------------- one queue: held on three
P new --name "ap-$$" --confirm always --engine three >"$TMP/new.out" 2>&1 ||
  fail "new --confirm always on three: $(cat "$TMP/new.out")"
tok3=$(cat "$TMP/three/token")
curl -s --max-time 120 --cacert "$TMP/ca.pem" -H "Authorization: Bearer $tok3" \
  "https://127.0.0.1:${PORT[three]}/v1/sessions/ap-$$/execute_action" \
  -d "{\"action\": {\"action\": \"run\", \"args\": {\"command\": \"echo approved-$$-on-three\"}}}" \
  >"$TMP/approved.out" &
waiter=$!
# the queue's row: ENGINE, then the session, then the command (cut to the column)
queue_row() { screen | chars 1 64 | grep -F "run: echo" | grep -qE " three +ap-$$ "; }
if wait_for "Approvals (1 waiting)" 300 && poll 100 queue_row; then
  ok "the action held on engine three is in the one queue, its ENGINE three"
else
  fail "the queue shows the action held on three"; screen >&2
fi
tm send-keys -t dash 2
wait_gone "wait: a new item is selected" 100
tm send-keys -t dash y
approved() { grep -q "approved-$$-on-three" "$TMP/approved.out"; }
if poll 300 approved; then
  ok "y in the queue approved it on engine three: the agent got its output"
else
  fail "y approves on three"; screen >&2
fi
wait "$waiter" 2>/dev/null
wait_gone "Approvals (" 100 && ok "the queue empties after the decision" || fail "queue empties"

# ---------------------------------------------------------------- a remote session's tabs
# select_row NAME: g to the list's top, then j until the reverse-video row is NAME's, each
# press seen before the next
tm send-keys -t dash 1
selected_is() { cells runs reverse | grep -qF -- "$1"; }
sel_row() { cells runs reverse | grep -v '^0:' | head -n 1; }
sel_moved() { [ "$(sel_row)" != "$1" ]; }
select_row() {
  local i was
  tm send-keys -t dash g
  for i in $(seq 1 10); do
    poll 30 selected_is "$1" && return 0
    was=$(sel_row)
    tm send-keys -t dash j
    poll 30 sel_moved "$was" || return 1
  done
  return 1
}
select_row "two-$$" || { fail "two (engine two) is selected"; screen >&2; }
# the executor's line for the action run there (the CLI wraps the command: { ...; } </dev/null)
if show_tab Logs && wait_for "echo in-two-$$" 300 && screen | grep -F "echo in-two-$$" | grep -qF "exit 0"; then
  ok "Logs tab of s-two (engine two): its log over TLS"
else
  fail "Logs tab on a remote session"; screen >&2
fi
if show_tab Terminal "Enter opens a shell"; then
  tm send-keys -t dash l
  tm send-keys -t dash Enter
  if wait_for "^] leaves" 300; then
    tm send-keys -t dash -l "echo term-\$((6*7))-$$"
    tm send-keys -t dash Enter
    wait_for "term-42-$$" 300 && ok "Terminal tab of s-two (engine two): the shell's output" ||
      { fail "terminal output on a remote session"; screen >&2; }
    tm send-keys -t dash -l "exit"
    tm send-keys -t dash Enter
    wait_for "the shell exited with code 0" 300 && ok "Terminal tab of s-two: its end is seen" ||
      { fail "the remote shell's end"; screen >&2; }
    tm send-keys -t dash C-]
  else
    fail "a shell opens on s-two"; screen >&2
  fi
else
  fail "Terminal tab reached"; screen >&2
fi
# ---------------------------------------------------------------- more of s-two's tabs, export
# a file written in s-two's workspace on engine two: its Changes and Files tabs show it (each
# fetched from engine two over TLS), Resources its figures, and e exports it from there
P run --engine two --session "two-$$" -- sh -c "echo remote > /workspace/rem-$$.txt" \
  >/dev/null 2>&1 || fail "a file written on s-two"
tm send-keys -t dash 1
select_row "two-$$" || { fail "two (engine two) is selected again"; screen >&2; }
mkdir -p "$TMP/export"
tm send-keys -t dash e
if wait_for "into directory:" 100; then
  tm send-keys -t dash C-u
  tm send-keys -t dash -l "$TMP/export"
  tm send-keys -t dash Enter
  exported() { [ -s "$TMP/export/two-$$.json" ] && [ -s "$TMP/export/two-$$.md" ] && [ -s "$TMP/export/two-$$.cast" ]; }
  if wait_for "exported" 300 && poll 300 exported &&
    [ "$(json_get '["session"]["name"]' <"$TMP/export/two-$$.json")" = "two-$$" ]; then
    ok "e exports s-two (engine two): JSON, Markdown and cast, the JSON its own"
  else
    fail "export of a remote session"; ls -la "$TMP/export" >&2; screen >&2
  fi
else
  fail "e asks for a directory on s-two"; screen >&2
fi
show_tab Changes "rem-$$.txt" && wait_for "A /workspace/rem-$$.txt" &&
  ok "Changes tab of s-two (engine two): the file written there" ||
  { fail "Changes tab on a remote session"; screen >&2; }
show_tab Files "rem-$$.txt" && ok "Files tab of s-two (engine two): the workspace and its file" ||
  { fail "Files tab on a remote session"; screen >&2; }
show_tab Resources "% of one CPU" && ok "Resources tab of s-two (engine two): its figures" ||
  { fail "Resources tab on a remote session"; screen >&2; }
tm send-keys -t dash 1
# the selection goes to one (local) for what follows: two's and thr's rows then show
# unselected, as drawn for their engine's state
select_row "one-$$" || fail "one (local) is selected"

# ---------------------------------------------------------------- three killed, then back
# sgr NAME: the attributes the row of NAME's name is drawn with
sgr() { sgr_before "$1"; }
same_look() { [ "$(sgr "thr-$$")" = "$(sgr "two-$$")" ]; }
other_look() { [ "$(sgr "thr-$$")" != "$(sgr "two-$$")" ]; }
poll 100 same_look || fail "s-two and s-three look alike while both engines are up"
kill -KILL "${PID[three]}"
wait "${PID[three]}" 2>/dev/null
PID[three]=
if poll 300 header_has "three down" && header_has "local up" && header_has "two up"; then
  ok "engine three killed: the header shows it down, the others up"
else
  fail "header shows three down"; header >&2
fi
poll 100 other_look && wait_for "thr-$$" 10 &&
  ok "thr (engine three) is kept, drawn stale ($(sgr "thr-$$") against $(sgr "two-$$"))" ||
  { fail "s-three drawn stale"; screen >&2; }
P new --name "late-$$" --engine two >"$TMP/new.out" 2>&1 || fail "new on two while three is down"
poll 300 row_engine "late-$$" two && ok "engine two keeps working: its new session shows" ||
  { fail "a new session on two shows while three is down"; screen >&2; }
# the counter of s-two follows the action events (one more action, no refetch of the list)
# ACTS: the third word after the name (STATE, AGE, ACTS)
acts() { row_of "two-$$" | python3 -c '
import sys
w = sys.stdin.read().replace("│", " ").split()
print(w[w.index(sys.argv[1]) + 3] if sys.argv[1] in w else "")' "two-$$"; }
before=$(acts)
P run --engine two --session "two-$$" -- true >/dev/null 2>&1 || fail "run on two"
more() { [ -n "$before" ] && [ "$(acts)" = $((before + 1)) ]; }
poll 300 more && ok "s-two's action count went from $before to $((before + 1))" ||
  { fail "s-two's count follows ($before: $(row_of "two-$$"))"; }

start_tls_engine three "127.0.0.1:${PORT[three]}" || fail "engine three restarts on its port"
if poll 300 header_has "three up"; then
  ok "engine three restarted: the header shows it up again, without a key"
else
  fail "three comes back up"; header >&2
fi
poll 300 same_look && poll 100 row_engine "thr-$$" three &&
  ok "s-three is live again (drawn as s-two is)" || { fail "s-three live again"; screen >&2; }
P new --name "back-$$" --engine three >"$TMP/new.out" 2>&1 || fail "new on three after restart"
poll 300 row_engine "back-$$" three && ok "three's event stream is back: its new session shows" ||
  { fail "a new session on three shows after the restart"; screen >&2; }

# ---------------------------------------------------------------- an engine that never answers
# A loopback listener whose accept queue is full and never drained: a connect to it waits for
# an answer that never comes (curl's connect timeout, 5 s). The dashboard starts again with it
# in the config: it shows silent as connecting and moves with every key all the while.
tm send-keys -t dash q
wait_for 'READY$' 100 || fail "the dashboard quits on q"
python3 -c '
import socket, sys, time
l = socket.socket()
l.bind(("127.0.0.1", 0))
l.listen(0)
# fill the queue: later SYNs are dropped, so a connect hangs
fill = []
for _ in range(4):
    s = socket.socket()
    s.setblocking(False)
    s.connect_ex(l.getsockname())
    fill.append(s)
open(sys.argv[1], "w").write(str(l.getsockname()[1]))
time.sleep(3600)
' "$TMP/silent.port" &
SILENT_PID=$!
poll 100 test -s "$TMP/silent.port" || fail "the silent listener starts"
cat >>"$PADDOCK_CONFIG" <<EOF

[engines.silent]
url = "https://127.0.0.1:$(cat "$TMP/silent.port")"
ca = "$TMP/ca.pem"
tls_cert = "$TMP/client/cert.pem"
tls_key = "$TMP/client/key.pem"
EOF
start_dashboard
wait_for "silent connecting" 300 && ok "an engine that never answers is shown connecting" ||
  { fail "silent shown connecting"; header >&2; }
# Each key must show while silent's connect is still under way (a loop held by the connect
# would show it only after the connect gave up): connecting=0 when it stopped first.
connecting=1
moved_or_gone() { header_has "silent connecting" || { connecting=0; return 0; }; sel_moved "$1"; }
tab_or_gone() { header_has "silent connecting" || { connecting=0; return 0; }; tab_not "$1"; }
# The list's top is back only once engine three's sessions are in: a slow TLS handshake (the
# ASan build) lists local's first, and g would select one of them.
wait_for "back-$$" 100 || fail "back (engine three) listed while silent connects"
tm send-keys -t dash g # the list's top (the newest, back): from there j, j, k, j all move
poll 100 selected_is "back-$$" || fail "g selects the list's top"
# silent's connect gives up after 5 s and is retried (1, 2, 4, 8 s later): a key that lands
# after a window closed is tried again in the next one, so a slow machine only takes longer.
moves=0 tries=0
while [ "$moves" -lt 4 ] && [ "$tries" -lt 16 ]; do
  tries=$((tries + 1))
  poll 300 header_has "silent connecting" || break
  was=$(sel_row)
  if selected_is "back-$$"; then key=j; else key=k; fi
  connecting=1
  tm send-keys -t dash "$key"
  poll 100 moved_or_gone "$was" || break
  [ "$connecting" = 1 ] && moves=$((moves + 1))
done
[ "$moves" = 4 ] && ok "j/k move the selection while silent is connecting ($moves keys)" ||
  { fail "keys move while silent connects ($moves of 4 in $tries tries)"; screen >&2; }
tabbed=0 tries=0
while [ "$tabbed" -lt 2 ] && [ "$tries" -lt 8 ]; do
  tries=$((tries + 1))
  poll 300 header_has "silent connecting" || break
  poll 100 read_tab || break
  connecting=1
  tm send-keys -t dash ']'
  poll 100 tab_or_gone "$cur" || break
  [ "$connecting" = 1 ] && tabbed=$((tabbed + 1))
done
[ "$tabbed" = 2 ] && ok "tab switches show while silent is connecting" ||
  { fail "tabs switch while silent connects ($tabbed of 2 in $tries tries)"; screen >&2; }
if poll 300 header_has "silent down" && header_has "two up"; then
  ok "silent's connect gives up: down, the others up ($(header | chars 1 120))"
else
  fail "silent down after its connect timeout"; header >&2
fi

# A shell on a remote engine that stops answering (engine two stopped by this test's PID: its
# listener still takes the TCP connect, the TLS handshake never comes): the Terminal tab
# shows it connecting and ^] gives the keys back meanwhile (the old code sat in the connect).
# the log stream's connect gave up (curl's connect timeout): not what a moving selection shows
logs_gave_up() { screen | grep -qF "cannot reach"; }
tm send-keys -t dash 1
select_row "two-$$" || { fail "two (engine two) is selected"; screen >&2; }
if show_tab Terminal "Enter opens a shell"; then
  kill -STOP "${PID[two]}"
  STOPPED=${PID[two]}
  tm send-keys -t dash l
  tm send-keys -t dash Enter
  if wait_for "connecting · " 100; then
    ok "a shell on an engine that does not answer shows connecting"
    tm send-keys -t dash C-]
    if wait_for "the shell keeps running" 100 && screen_lacks "connecting · "; then
      ok "^] gives the keys back while the shell connects"
    else
      fail "^] while the shell connects"; screen >&2
    fi
  else
    fail "the shell on a stopped engine shows connecting"; screen >&2
  fi
  # Its log stream too connects in the loop: the Logs tab says so while keys still move the
  # selection (the old code sat in the connect, and showed nothing until it gave up).
  if show_tab Logs && wait_for "connecting to the engine" 100; then
    was=$(sel_row)
    tm send-keys -t dash j
    if poll 100 sel_moved "$was" && ! logs_gave_up; then
      ok "keys move the selection while a remote log stream connects"
    else
      fail "keys while the log stream connects"; screen >&2
    fi
    tm send-keys -t dash k
  else
    fail "the Logs tab on a stopped engine shows connecting"; screen >&2
  fi
  kill -CONT "$STOPPED"
  STOPPED=
else
  fail "Terminal tab reached"; screen >&2
fi

tm send-keys -t dash q
echo "passed: $passed, failed: $failed"
[ "$failed" -eq 0 ]
