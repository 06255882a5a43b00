#!/usr/bin/env bash
# Egress questions in the dashboard end to end (docs/egress.md), through a private tmux server
# against a real engine: an egress sandbox's connection to a destination nobody knows waits in
# the approvals queue as "egress 127.0.0.1:PORT" with the command that opened it; `y` lets it
# through (the sandbox's client gets the page), `n` with a reason refuses it (the client gets
# a 403 naming the person and the reason); `E` shows the session's connections with both
# decisions and the totals per host; the create form makes an egress session with a preset and
# a host. Network: only a server on 127.0.0.1
# (tests/integration/egress_servers.py), reached from the sandbox through the engine.
#
#   tests/tui/egress_test.sh [PATH/TO/paddock]        (or PADDOCK_EXE=...)
set -uo pipefail
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"
SRC=$(readlink -f "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../..")

export PADDOCK_CONFIRM=never # the agent's commands run; only the egress questions wait
export PADDOCK_DECIDE_GUARD_MS=3000
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TMP/key.pem" -out "$TMP/cert.pem" -days 1 \
  -subj /CN=127.0.0.1 >/dev/null 2>&1 || { fail "openssl makes a certificate"; exit 1; }
# The servers stop when their stdin closes: this script holds its write end (fd 5).
exec 5> >(exec python3 "$SRC/tests/integration/egress_servers.py" "$TMP/cert.pem" "$TMP/key.pem" >"$TMP/ports")
poll 100 test -s "$TMP/ports" || { fail "the loopback servers start"; exit 1; }
read -r HTTP_PORT _ <"$TMP/ports"
start_engine || { fail "engine answers GET /v1/info"; exit 1; }
NAME=egress-$$
create_session "$NAME" '"network":"egress","egress":{"allow":[],"ask":true},"approval_timeout":120' || exit 1
ok "egress session $SESSION_ID created"

run_body() { python3 -c 'import json,sys; print(json.dumps({"action":{"action":"run","args":{"command":sys.argv[1],"blocking":True},"timeout":150}}))' "$1"; }
api POST "/v1/sessions/$SESSION_ID/execute_action" \
  "$(run_body "printf %s $(base64 -w0 "$SRC/tests/integration/egress_client.py") | base64 -d > /tmp/c.py && echo copied")" |
  grep -q copied && ok "the client is in the sandbox" || fail "client copied: $(cat "$TMP/reply")"
# agent_get N: the sandbox's request in the background; its observation in $TMP/agent-N.json
agent_get() {
  curl -s --max-time 160 -X POST --unix-socket "$SOCK" -H 'Content-Type: application/json' \
    --data-binary "$(run_body "python3 /tmp/c.py get http://127.0.0.1:$HTTP_PORT/hello.txt")" \
    -o "$TMP/agent-$1.tmp" "http://paddock/v1/sessions/$SESSION_ID/execute_action" 2>/dev/null
  mv "$TMP/agent-$1.tmp" "$TMP/agent-$1.json"
}
settled() { wait_gone "wait: a new item is selected" 100; }

open_tmux || exit 1
start_dashboard
wait_for "$NAME" || { fail "dashboard shows the session"; screen >&2; exit 1; }

# ---------------------------------------------------------------- y: the connection goes through
agent_get 1 &
agent1=$!
if wait_for "127.0.0.1:$HTTP_PORT" 150 && wait_for "Approvals (1 waiting)"; then
  ok "the question waits in the queue with its destination"
else
  fail "egress question shown"; screen >&2
fi
screen | grep -F "127.0.0.1:$HTTP_PORT" | grep -qi egress && ok "the queue names its kind (egress)" ||
  { fail "kind shown"; screen >&2; }
tm send-keys -t dash 2
settled
tm send-keys -t dash y
if wait "$agent1" && grep -qF "OK 200 hello-egress" "$TMP/agent-1.json"; then
  ok "y lets the connection through: the sandbox's client gets the page"
else
  fail "approved connection ($(cat "$TMP/agent-1.json" 2>/dev/null))"
fi

# ---------------------------------------------------------------- n: 403 with who and why
agent_get 2 &
agent2=$!
wait_for "Approvals (1 waiting)" 150 || { fail "second question queued"; screen >&2; }
settled
tm send-keys -t dash 2 n
wait_for "reason (optional" || { fail "n asks for a reason"; screen >&2; }
tm send-keys -t dash -l "no new hosts $$"
tm send-keys -t dash Enter
if wait "$agent2" && grep -qF "HTTP 403" "$TMP/agent-2.json" && grep -qF "no new hosts $$" "$TMP/agent-2.json"; then
  ok "n refuses: the sandbox's client gets 403 with the operator's reason"
else
  fail "rejected connection ($(cat "$TMP/agent-2.json" 2>/dev/null))"
fi

# ---------------------------------------------------------------- E: the Egress tab, live
tm send-keys -t dash Escape 1 E
if poll 100 tab_is Egress && wait_for "2 connections, 0 open" && wait_for "approved" &&
  wait_for "rejected"; then
  ok "E shows the session's Egress tab: its connections with both decisions"
else
  fail "Egress tab"; screen >&2
fi
screen | grep -F "127.0.0.1:$HTTP_PORT" | grep -qE " 2 +1 " && ok "the totals count 2 connections, 1 allowed" ||
  { fail "totals per host"; screen >&2; }
# live: a new connection shows on the tab with no key pressed, and again once decided
agent_get 3 &
agent3=$!
wait_for "3 connections, 1 open" 150 && wait_for "pending" &&
  ok "the tab shows a new connection waiting, live" || { fail "live pending row"; screen >&2; }
pending=$(api GET /v1/approvals | python3 -c 'import json,sys
d = json.load(sys.stdin); a = d["approvals"] if isinstance(d, dict) else d
print(a[0].get("action_id") or a[0].get("id"))' 2>/dev/null)
api POST "/v1/actions/$pending/reject" '{"reason":"live tab"}' >/dev/null
wait "$agent3"
wait_for "3 connections, 0 open" && screen | grep -F "127.0.0.1:$HTTP_PORT" | grep -qE " 3 +1 " &&
  ok "the tab follows the API's rejection: 3 connections, 1 allowed" || { fail "live end"; screen >&2; }
tm send-keys -t dash ']'
poll 100 tab_is Overview && wait_gone "connections, 0 open" && ok "] leaves the Egress tab for Overview" ||
  { fail "] from Egress"; screen >&2; }
# ---------------------------------------------------------------- the create form offers egress
FORMED=egform-$$
tm send-keys -t dash c
wait_for "New session" || { fail "c opens the form"; screen >&2; }
tm send-keys -t dash Tab
tm send-keys -t dash -l "$FORMED"
tm send-keys -t dash Tab Tab Tab Right Tab # memory, cpus, network: none → egress; allow
tm send-keys -t dash -l "python, 127.0.0.1:$HTTP_PORT"
tm send-keys -t dash Enter
wait_gone "New session" || { fail "the form closes on Enter"; screen >&2; }
id_of() { # the live session called $1
  api GET /v1/sessions | python3 -c 'import json,sys
for s in json.load(sys.stdin)["sessions"]:
    if s.get("name") == sys.argv[1]: print(s["id"])' "$1"
}
FORMED_ID=
formed_known() { FORMED_ID=$(id_of "$FORMED"); [ -n "$FORMED_ID" ]; }
poll 150 formed_known && SESSION_IDS+=("$FORMED_ID")
opts=$(api GET "/v1/sessions/$FORMED_ID" | json_get '["options"]')
if [[ "$opts" == *"'network': 'egress'"* ]] && [[ "$opts" == *"'pypi.org:443'"* ]] &&
  [[ "$opts" == *"'127.0.0.1:$HTTP_PORT'"* ]]; then
  ok "the form creates an egress session with a preset and a host"
else
  fail "egress from the form: $opts"
fi
tm send-keys -t dash q
wait_for 'READY$' || fail "dashboard quits"
[ -s "$TMP/dash.err" ] && { fail "the dashboard wrote to stderr"; cat "$TMP/dash.err" >&2; }

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
