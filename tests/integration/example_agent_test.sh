#!/usr/bin/env bash
# examples/agent.py against a real engine: its steps run and are recorded; its risky step waits
# until the operator approves it (paddock approve) and then runs; in a second run the operator
# rejects it and the agent hears the reason and carries on.
#   tests/integration/example_agent_test.sh PATH/TO/paddock SOURCE_DIR
set -uo pipefail
PADDOCK=$(readlink -f "$1") SRC=$2
export PADDOCK_TEST_LABEL=1
TMP=$(mktemp -d /tmp/paddock-agent.XXXXXX)
SOCK=$TMP/engine.sock
failed=0 passed=0 ENGINE_PID=
ok() { passed=$((passed + 1)); echo "ok - $1"; }
fail() { failed=$((failed + 1)); echo "FAIL - $1" >&2; }
p() { "$PADDOCK" --socket "$SOCK" --state-dir "$TMP/state" "$@"; }
cleanup() {
  for id in $(p ls --json 2>/dev/null | python3 -c 'import json,sys; print(" ".join(s["id"] for s in json.load(sys.stdin)))' 2>/dev/null); do
    p rm "$id" >/dev/null 2>&1
  done
  if [ -n "$ENGINE_PID" ]; then
    kill -TERM "$ENGINE_PID" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$ENGINE_PID" 2>/dev/null || break; sleep 0.1; done
  fi
  [ $failed -ne 0 ] && for f in engine.log agent1.out agent2.out; do
    [ -s "$TMP/$f" ] && { echo "--- $f" >&2; tail -n 40 "$TMP/$f" >&2; }
  done
  rm -rf "$TMP"
}
trap cleanup EXIT
"$PADDOCK" serve --state-dir "$TMP/state" --socket "$SOCK" >>"$TMP/engine.log" 2>&1 &
ENGINE_PID=$!
for _ in $(seq 1 100); do p ls >/dev/null 2>&1 && break; sleep 0.1; done

pending_id() { # wait (≤ 60 s) for the agent's action to wait for approval; print its id
  for _ in $(seq 1 300); do
    id=$(p approvals --json 2>/dev/null | python3 -c 'import json,sys; a=json.load(sys.stdin); print(a[0]["id"] if a else "")')
    [ -n "$id" ] && { echo "$id"; return 0; }
    sleep 0.2
  done
  return 1
}

# 1. approved
python3 "$SRC/examples/agent.py" --socket "$SOCK" --pause 0 --name agent1 >"$TMP/agent1.out" 2>&1 &
agent=$!
if id=$(pending_id); then
  ok "the agent's risky step waits for the operator (action $id)"
  grep -q "waiting for the operator: approve with \`paddock approve $id\`" "$TMP/agent1.out" &&
    ok "the agent says how to approve it" || fail "the agent's waiting message"
  p approve "$id" --by tester --reason fine >/dev/null && ok "paddock approve $id" || fail "approve"
else
  fail "an action of the agent waits for approval"
fi
wait $agent
rc=$?
[ $rc = 0 ] && ok "the agent finished (exit 0)" || fail "the agent exited $rc"
grep -q '^hi there, sandbox$' "$TMP/agent1.out" && ok "write, run, edit, run: the edited program's output" ||
  fail "the edited program ran"
grep -q '^approved by tester; it ran:$' "$TMP/agent1.out" && grep -q '^cache cleared$' "$TMP/agent1.out" &&
  ok "the approved step ran and the agent printed its observation" || fail "approved observation"
sid=$(p ls --json | python3 -c 'import json,sys; print([s["id"] for s in json.load(sys.stdin) if s["name"]=="agent1"][0])')
kinds=$(p history "$sid" --json --limit 100 | python3 -c 'import json,sys; print(" ".join(a["kind"]+":"+a["state"] for a in reversed(json.load(sys.stdin)["actions"])))')
[ "$kinds" = "write:done run:done read:done edit:done run:done run:done run:done run:done" ] &&
  ok "the history has every step in order: $kinds" || fail "history: $kinds"
approval=$(p show "$id" --json | python3 -c 'import json,sys; a=json.load(sys.stdin); print(a["approval"], a["decided_by"], a["risk"])')
[ "$approval" = "approved tester high" ] && ok "the record says who approved it ($approval)" ||
  fail "approval record: $approval"

# 2. rejected
python3 "$SRC/examples/agent.py" --socket "$SOCK" --pause 0 --name agent2 --delete >"$TMP/agent2.out" 2>&1 &
agent=$!
if id=$(pending_id); then
  p reject "$id" --by tester --reason "not on this box" >/dev/null && ok "paddock reject $id" || fail "reject"
else
  fail "the second run's action waits"
fi
wait $agent
rc=$?
[ $rc = 0 ] && ok "the agent carried on after the rejection (exit 0)" || fail "the agent exited $rc"
grep -q '^the operator said no (tester): Reason: not on this box$' "$TMP/agent2.out" &&
  ok "the agent heard the rejection and the reason" || fail "rejection text"
grep -q '^done$' "$TMP/agent2.out" && ok "its next step ran" || fail "step after the rejection"
grep -q '^cache cleared$' "$TMP/agent2.out" && fail "the rejected command ran" ||
  ok "the rejected command did not run"

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
