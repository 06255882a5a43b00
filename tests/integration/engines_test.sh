#!/usr/bin/env bash
# Many engines on loopback: three `paddock serve`, each with its own state dir and a TLS
# listener with its own certificate (made here with openssl, one CA), reached by the CLI
# through a config file's [engines.NAME]. Checks: an action over TLS; ls, approvals and
# history over all three with an engine field; sessions, approvals and export on a remote
# one; one engine killed (ls says it is down and lists the others) and restarted; run
# --engine auto; a wrong CA, a wrong token, plain HTTP to the TLS port, each refused with a
# clear error; a client certificate instead of the token, and as the operator's credential
# (a token alone is an agent's: approve refused); the OpenHands remote-runtime API over TLS;
# the dashboard on a remote engine (tmux).
#
#   bash tests/integration/engines_test.sh PATH/TO/paddock
#
# Exit 0: all passed; 1: a check failed (each is printed); 77: skipped (PADDOCK_ALLOW_SKIP=1).
set -uo pipefail
export LC_ALL=C.UTF-8

PADDOCK=$(readlink -f "${1:-${PADDOCK_BIN:-}}")
[ -x "$PADDOCK" ] || { echo "usage: $0 PATH/TO/paddock" >&2; exit 2; }
IMAGE=${PADDOCK_IMAGE:-paddock/base:local}
DOCKER_SOCK=${DOCKER_SOCK:-/var/run/docker.sock}
export PADDOCK_TEST_LABEL=1 # paddock.test=1 on what the engines make

unavailable() {
  if [ "${PADDOCK_ALLOW_SKIP:-}" = 1 ]; then echo "SKIP: $1" >&2; exit 77; fi
  echo "FAIL: $1 (PADDOCK_ALLOW_SKIP=1 to skip instead of failing)" >&2
  exit 1
}
for tool in openssl curl python3; do
  command -v "$tool" >/dev/null || unavailable "$tool is not installed"
done
curl -s --max-time 2 --unix-socket "$DOCKER_SOCK" http://d/_ping 2>/dev/null | grep -q OK ||
  unavailable "no Docker daemon answers at $DOCKER_SOCK"

failed=0 passed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
fail() { failed=$((failed + 1)); echo "FAIL - $1" >&2; }
check() { # check NAME COMMAND...: ok when COMMAND succeeds
  local name=$1
  shift
  if "$@"; then ok "$name"; else fail "$name"; fi
}
poll() { # poll TRIES COMMAND...: until it succeeds, 0.1 s apart
  local tries=$1 i
  shift
  for ((i = 1; ; i++)); do
    "$@" && return 0
    [ "$i" -ge "$tries" ] && return 1
    sleep 0.1
  done
}
json_get() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval("d" + sys.argv[1]))' "$1"; }

TMP=$(mktemp -d /tmp/paddock-engines.XXXXXX)
declare -A PID PORT
NAMES=(one two three)

cleanup() {
  local n
  for n in "${NAMES[@]}"; do
    [ -n "${PID[$n]:-}" ] || continue
    # every session the test made goes with its engine's record of it
    for id in $(curl -s --unix-socket "$TMP/$n/engine.sock" "http://p/v1/sessions" 2>/dev/null |
      python3 -c 'import json,sys; print(" ".join(s["id"] for s in json.load(sys.stdin)["sessions"]))' 2>/dev/null); do
      curl -s -X DELETE --unix-socket "$TMP/$n/engine.sock" "http://p/v1/sessions/$id" >/dev/null
    done
    stop_engine "$n"
  done
  if [ "$failed" -ne 0 ]; then
    for n in "${NAMES[@]}"; do
      echo "--- $n/engine.log (last 20 lines)" >&2
      tail -n 20 "$TMP/$n/engine.log" >&2 2>/dev/null
    done
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT

# ---------------------------------------------------------------- certificates
cert() { # cert DIR CA-NAME: a key and a certificate for 127.0.0.1 signed by CA-NAME
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1/key.pem" \
    -out "$1/csr.pem" -subj "/CN=127.0.0.1" 2>/dev/null &&
    printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n' >"$1/ext" &&
    openssl x509 -req -in "$1/csr.pem" -CA "$TMP/$2.pem" -CAkey "$TMP/$2-key.pem" \
      -CAcreateserial -out "$1/cert.pem" -days 2 -extfile "$1/ext" 2>/dev/null
}
for ca in ca other-ca; do
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$TMP/$ca-key.pem" \
    -out "$TMP/$ca.pem" -days 2 -subj "/CN=paddock test $ca" 2>/dev/null ||
    { fail "openssl makes the CA $ca"; exit 1; }
done
mkdir -p "$TMP/client"
cert "$TMP/client" ca || { fail "openssl makes the client certificate"; exit 1; }

# ---------------------------------------------------------------- engines
unix_api() { # unix_api ENGINE METHOD PATH [BODY]
  local args=(-s --max-time 60 -X "$2" --unix-socket "$TMP/$1/engine.sock")
  [ $# -ge 4 ] && args+=(-H 'Content-Type: application/json' --data-binary "$4")
  curl "${args[@]}" "http://p$3"
}
answers() { [ "$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$TMP/$1/engine.sock" http://p/v1/info)" = 200 ]; }
start_engine() { # start_engine NAME [LISTEN]: its own state dir, certificate and port
  local n=$1 listen=${2:-127.0.0.1:0}
  mkdir -p "$TMP/$n"
  [ -f "$TMP/$n/cert.pem" ] || cert "$TMP/$n" ca || return 1
  local extra=()
  [ "$n" = three ] && extra=(--tls-client-ca "$TMP/ca.pem")
  "$PADDOCK" serve --state-dir "$TMP/$n" --socket "$TMP/$n/engine.sock" --listen "$listen" \
    --tls-cert "$TMP/$n/cert.pem" --tls-key "$TMP/$n/key.pem" "${extra[@]}" \
    >>"$TMP/$n/engine.log" 2>&1 &
  PID[$n]=$!
  poll 150 answers "$n" || return 1
  local addr
  addr=$(unix_api "$n" GET /v1/info | json_get '["listen"]["address"]')
  PORT[$n]=${addr##*:}
}
stop_engine() {
  local p=${PID[$1]:-}
  [ -n "$p" ] || return 0
  kill -TERM "$p" 2>/dev/null
  for _ in $(seq 1 300); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$p" 2>/dev/null && kill -KILL "$p"
  wait "$p" 2>/dev/null
  PID[$1]=
}
for n in "${NAMES[@]}"; do
  start_engine "$n" || { fail "engine $n starts with TLS"; exit 1; }
done
ok "three engines serve TLS on 127.0.0.1:${PORT[one]}, :${PORT[two]}, :${PORT[three]}"

# The CLI's own engine is "one" (its unix socket); two and three are remote.
export PADDOCK_STATE_DIR=$TMP/one PADDOCK_SOCKET=$TMP/one/engine.sock
printf 'wrong-token-0123456789abcdef\n' >"$TMP/wrong-token"
chmod 600 "$TMP/wrong-token"
cat >"$TMP/config.toml" <<EOF
[engines.two]
url = "https://127.0.0.1:${PORT[two]}"
token_file = "$TMP/two/token"
ca = "$TMP/ca.pem"

[engines.three]
url = "https://127.0.0.1:${PORT[three]}"
token_file = "$TMP/three/token"
ca = "$TMP/ca.pem"
tls_cert = "$TMP/client/cert.pem"
tls_key = "$TMP/client/key.pem"
EOF
cat >"$TMP/bad.toml" <<EOF
[engines.wrongca]
url = "https://127.0.0.1:${PORT[two]}"
token_file = "$TMP/two/token"
ca = "$TMP/other-ca.pem"

[engines.wrongtoken]
url = "https://127.0.0.1:${PORT[two]}"
token_file = "$TMP/wrong-token"
ca = "$TMP/ca.pem"

[engines.plain]
url = "http://127.0.0.1:${PORT[two]}"
token_file = "$TMP/two/token"

[engines.cert]
url = "https://127.0.0.1:${PORT[three]}"
ca = "$TMP/ca.pem"
tls_cert = "$TMP/client/cert.pem"
tls_key = "$TMP/client/key.pem"

[engines.nocert]
url = "https://127.0.0.1:${PORT[three]}"
ca = "$TMP/ca.pem"
EOF
export PADDOCK_CONFIG=$TMP/config.toml
P() { "$PADDOCK" "$@"; }

# ---------------------------------------------------------------- an action over TLS
out=$(P run --engine two -- echo hi over tls 2>&1)
check "run --engine two: an action over TLS prints its output ($out)" [ "$out" = "hi over tls" ]

# ---------------------------------------------------------------- sessions on each engine
declare -A ENG=([one]=local [two]=two [three]=three)
for n in "${NAMES[@]}"; do
  at=@${ENG[$n]}
  [ "$n" = one ] && at= # the local engine needs no @
  P new --name "s-$n" --engine "${ENG[$n]}" >"$TMP/new.out" 2>&1 ||
    fail "new --name s-$n --engine ${ENG[$n]}: $(cat "$TMP/new.out")"
  out=$(P run --session "s-$n$at" -- echo "in $n" 2>&1)
  check "run --session s-$n$at runs there ($out)" [ "$out" = "in $n" ]
done
P ls >"$TMP/ls.out" 2>"$TMP/ls.err"
check "ls has an ENGINE column" grep -q '^ENGINE ' "$TMP/ls.out"
for n in "${NAMES[@]}"; do
  check "ls lists s-$n on engine ${ENG[$n]}" grep -qE "^${ENG[$n]} +[0-9a-f]+ +s-$n " "$TMP/ls.out"
done
engines_of() { P ls --json | python3 -c 'import json,sys; print(" ".join(sorted(s["engine"] + ":" + s["name"] for s in json.load(sys.stdin))))'; }
check "ls --json: every session with its engine" [ "$(engines_of)" = "local:s-one three:s-three two:s-two" ]
out=$(P ls --engine two --json | python3 -c 'import json,sys; print(" ".join(s["name"] for s in json.load(sys.stdin)))')
check "ls --engine two: that engine's alone ($out)" [ "$out" = s-two ]
out=$(P show s-two@two --json | json_get '["name"]')
check "show s-two@two ($out)" [ "$out" = s-two ]

# ---------------------------------------------------------------- a terminal on a remote one
# A terminal is the operator's: engine three (a client certificate) opens one over TLS; engine
# two (a token: an agent's) refuses it, saying why.
out=$(P exec s-three@three -- sh -c 'echo terminal on three; exit 3' </dev/null 2>&1)
rc=$?
check "exec s-three@three: a terminal over TLS prints its output ($out)" bash -c '[[ $1 == *"terminal on three"* ]]' _ "$out"
check "exec s-three@three: its exit code comes back ($rc)" [ "$rc" = 3 ]
out=$(P exec s-two@two -- true </dev/null 2>&1)
check "exec s-two@two (a token only) is refused as the operator's: $out" bash -c '[[ $1 == *"refused on the agents"* ]]' _ "$out"

if command -v tmux >/dev/null; then
  # The dashboard's Terminal tab on engine three: a shell over TLS, and its end seen.
  export TMUX_TMPDIR=$TMP
  unset TMUX
  TM=(tmux -L "paddock-engines-$$" -f /dev/null)
  "${TM[@]}" new-session -d -s dash -x 160 -y 40 \
    "env PADDOCK_CONFIG=$PADDOCK_CONFIG PADDOCK_STATE_DIR=$PADDOCK_STATE_DIR LC_ALL=C.UTF-8 TERM=xterm-256color $PADDOCK --engine three 2>$TMP/dash3.err"
  shows() { "${TM[@]}" capture-pane -p -t dash 2>/dev/null | grep -qF "$1"; }
  to_terminal() { # ] moves to the next tab until the Terminal tab's hint shows
    local i
    for i in $(seq 1 10); do
      shows "Enter opens a shell" && return 0
      "${TM[@]}" send-keys -t dash ']'
      poll 20 shows "Enter opens a shell" && return 0
    done
    return 1
  }
  if poll 150 shows "s-three" && poll 150 shows "● live" && to_terminal; then
    "${TM[@]}" send-keys -t dash l # the detail pane takes the keys
    "${TM[@]}" send-keys -t dash Enter
    if poll 150 shows "^] leaves"; then
      "${TM[@]}" send-keys -t dash -l 'echo remote-$((6*7)); exit 7'
      "${TM[@]}" send-keys -t dash Enter
      check "Terminal tab on engine three: the shell's output over TLS" poll 150 shows "remote-42"
      check "Terminal tab on engine three: its end is seen (exit code 7)" poll 150 shows "the shell exited with code 7"
    else
      fail "Terminal tab on engine three: a shell opens"; "${TM[@]}" capture-pane -p -t dash >&2
    fi
  else
    fail "dashboard --engine three reaches its Terminal tab"
  fi
  "${TM[@]}" kill-server 2>/dev/null
fi

# ---------------------------------------------------------------- approvals on a remote one
# Engine three takes client certificates (--tls-client-ca): the CLI's is the operator's
# credential there. On engine two it holds only the token: an agent's, refused the operator's
# routes.
P new --name ap --confirm always --engine three >"$TMP/new.out" 2>&1 ||
  fail "new --confirm always on three: $(cat "$TMP/new.out")"
tok3=$(cat "$TMP/three/token")
curl -s --max-time 120 --cacert "$TMP/ca.pem" -H "Authorization: Bearer $tok3" \
  "https://127.0.0.1:${PORT[three]}/v1/sessions/ap/execute_action" \
  -d '{"action": {"action": "run", "args": {"command": "echo approved on three"}}}' \
  >"$TMP/approved.out" &
waiter=$!
waiting() { P approvals --json 2>/dev/null | python3 -c 'import json,sys; a=json.load(sys.stdin); sys.exit(0 if any(x["engine"] == "three" for x in a) else 1)'; }
check "approvals: the action waiting on engine three is in the one queue" poll 300 waiting
aid=$(P approvals --json | python3 -c 'import json,sys; print([x["id"] for x in json.load(sys.stdin) if x["engine"] == "three"][0])')
P approvals >"$TMP/approvals.out" 2>&1
check "approvals (table) names it $aid@three" grep -q "^$aid@three " "$TMP/approvals.out"
out=$(P approve 999@two 2>&1)
check "approve on engine two with a token only is refused as the operator's: $out" bash -c '[[ $1 == *"is the operator"* ]]' _ "$out"
check "approve $aid@three (a client certificate: the operator)" P approve "$aid@three" --reason "test"
wait "$waiter"
check "the approved action ran on three" grep -q '"content":"approved on three"' "$TMP/approved.out"
hist() { P history --json | python3 -c 'import json,sys; a=json.load(sys.stdin)["actions"]; print(" ".join(sorted(set(x["engine"] for x in a))))'; }
check "history covers all three engines ($(hist))" [ "$(hist)" = "local three two" ]
P history >"$TMP/history.out"
check "history (table) names the remote action $aid@three" grep -q "^$aid@three " "$TMP/history.out"

# ---------------------------------------------------------------- export of a remote session
P export s-two@two --format json -o "$TMP/export/s-two.json" 2>"$TMP/export.err"
check "export s-two@two has its action" python3 -c '
import json,sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if any("in two" in json.dumps(a) for a in d["actions"]) else 1)' "$TMP/export/s-two.json"

# ---------------------------------------------------------------- the dashboard on a remote one
if command -v tmux >/dev/null; then
  export TMUX_TMPDIR=$TMP
  unset TMUX
  TM=(tmux -L "paddock-engines-$$" -f /dev/null)
  "${TM[@]}" new-session -d -s dash -x 160 -y 40 \
    "env PADDOCK_CONFIG=$PADDOCK_CONFIG PADDOCK_STATE_DIR=$PADDOCK_STATE_DIR PADDOCK_SOCKET=$PADDOCK_SOCKET LC_ALL=C.UTF-8 TERM=xterm-256color $PADDOCK --engine two 2>$TMP/dash.err"
  shows() { "${TM[@]}" capture-pane -p -t dash 2>/dev/null | grep -qF "$1"; }
  check "dashboard --engine two: its header names the engine's url" poll 150 shows "https://127.0.0.1:${PORT[two]}"
  check "dashboard --engine two: its session s-two is listed, live" poll 150 shows "s-two"
  check "dashboard --engine two: the event stream over TLS is live" poll 150 shows "● live"
  "${TM[@]}" send-keys -t dash q
  gone() { ! "${TM[@]}" has-session -t dash 2>/dev/null; }
  poll 100 gone || "${TM[@]}" kill-server 2>/dev/null
else
  echo "skip - the dashboard on a remote engine (no tmux)"
fi

# ---------------------------------------------------------------- refusals, with their reasons
export PADDOCK_CONFIG=$TMP/bad.toml
out=$(P ls --engine wrongca 2>&1)
check "a wrong CA is refused: $out" bash -c '[[ $1 == *"not signed by the CA"* ]]' _ "$out"
out=$(P ls --engine wrongtoken 2>&1)
check "a wrong token is refused: $out" bash -c '[[ $1 == *"engine wrongtoken: wrong credentials"* ]]' _ "$out"
out=$(P ls --engine plain 2>&1)
check "plain HTTP to the TLS port is refused: $out" bash -c '[[ $1 == *"this port speaks TLS: use https://"* ]]' _ "$out"
out=$(curl -s "http://127.0.0.1:${PORT[two]}/v1/info")
check "curl over plain HTTP hears why: $out" bash -c '[[ $1 == *"this port speaks TLS"* ]]' _ "$out"
out=$(P ls --engine cert --json 2>&1 | python3 -c 'import json,sys; print(" ".join(s["name"] for s in json.load(sys.stdin)))' 2>&1)
check "a client certificate of the CA opens engine three without a token ($out)" bash -c '[[ $1 == *s-three* ]]' _ "$out"
out=$(P ls --engine nocert 2>&1)
check "neither token nor certificate: refused: $out" bash -c '[[ $1 == *"no credentials"* ]]' _ "$out"
export PADDOCK_CONFIG=$TMP/config.toml

# ---------------------------------------------------------------- OpenHands' remote-runtime API
rr() { curl -s --max-time 120 --cacert "$TMP/ca.pem" -H "X-API-Key: $(cat "$TMP/two/token")" "$@"; }
rt=$(rr -H 'Content-Type: application/json' "https://127.0.0.1:${PORT[two]}/start" \
  -d "{\"image\": \"$IMAGE\", \"command\": [], \"session_id\": \"oh-tls\"}")
url=$(printf '%s' "$rt" | json_get '["url"]' 2>/dev/null)
skey=$(printf '%s' "$rt" | json_get '["session_api_key"]' 2>/dev/null)
check "remote-runtime /start over TLS gives an https url ($url)" bash -c '[[ $1 == https://127.0.0.1:* ]]' _ "$url"
alive() { [ "$(curl -s --cacert "$TMP/ca.pem" -H "X-Session-API-Key: $skey" "$url/alive" | json_get '["status"]' 2>/dev/null)" = ok ]; }
check "its session is alive through the url over TLS" poll 300 alive
obs=$(curl -s --max-time 120 --cacert "$TMP/ca.pem" -H "X-Session-API-Key: $skey" \
  "$url/execute_action" -d '{"action": {"action": "run", "args": {"command": "echo oh over tls"}}}')
check "execute_action through the runtime url over TLS" bash -c '[[ $1 == *"\"content\":\"oh over tls\""* ]]' _ "$obs"

# ---------------------------------------------------------------- one engine killed, restarted
kill -KILL "${PID[three]}"
wait "${PID[three]}" 2>/dev/null
PID[three]=
P ls >"$TMP/ls.out" 2>"$TMP/ls.err"
rc=$?
check "ls with engine three killed exits 0" [ "$rc" = 0 ]
check "ls says engine three is down ($(cat "$TMP/ls.err"))" grep -q "engine three is down" "$TMP/ls.err"
check "ls still lists the others" grep -qE "^two +[0-9a-f]+ +s-two " "$TMP/ls.out"
out=$(P approvals 2>&1 >/dev/null)
check "approvals says engine three is down" bash -c '[[ $1 == *"engine three is down"* ]]' _ "$out"
start_engine three "127.0.0.1:${PORT[three]}" || fail "engine three restarts on its port"
check "after the restart ls lists s-three again" bash -c '"$1" ls | grep -qE "^three +[0-9a-f]+ +s-three "' _ "$PADDOCK"

# ---------------------------------------------------------------- --engine auto
out=$(P run --engine auto -- echo picked 2>&1)
check "run --engine auto runs on the engine with the most room ($out)" [ "$out" = picked ]
out=$(P ls --engine auto 2>&1)
check "ls --engine auto is refused (auto is for run and new): $out" bash -c '[[ $1 == *"auto is for run and new"* ]]' _ "$out"
info=$(curl -s --unix-socket "$TMP/one/engine.sock" http://p/v1/info | json_get '["capacity"]')
check "GET /v1/info has the capacity ($info)" bash -c '[[ $1 == *cpus* && $1 == *memory_free* && $1 == *sessions* ]]' _ "$info"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
