#!/usr/bin/env bash
# Rules from the dashboard end to end, through a private tmux server against a real engine:
# `a` on the queue approves at once and proposes "allow commands like this in this session"
# with the engine's derived pattern, shown and editable; Enter saves the edited pattern as the
# session's rule, and a matching action then runs without waiting; Esc at the proposal saves
# nothing more than the approval. `R` lists the rules; there `e` edits a pattern and `d`
# removes a rule (after a yes), and the same action waits again.
#
#   tests/tui/rules_test.sh [PATH/TO/paddock]        (or PADDOCK_EXE=...)
set -uo pipefail
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"

export PADDOCK_CONFIRM=always # every action waits unless a rule allows it
export PADDOCK_DECIDE_GUARD_MS=1500
start_engine || { fail "engine answers GET /v1/info"; exit 1; }
NAME=rules-$$
create_session "$NAME" || exit 1
ok "session $SESSION_ID created"

# agent_action N COMMAND: the agent's blocking request in the background (see approvals_test.sh)
agent_action() {
  local body
  body=$(python3 -c 'import json,sys; print(json.dumps({"action":{"action":"run","args":{"command":sys.argv[1]}}}))' "$2")
  curl -s --max-time 120 -X POST --unix-socket "$SOCK" -H 'Content-Type: application/json' \
    --data-binary "$body" -o "$TMP/agent-$1.tmp" -w '%{http_code}' \
    "http://paddock/v1/sessions/$SESSION_ID/execute_action" >"$TMP/agent-$1.status" 2>/dev/null
  mv "$TMP/agent-$1.tmp" "$TMP/agent-$1.json"
}
pending_count() { api GET /v1/approvals | json_get '["approvals"].__len__()' 2>/dev/null; }
pending_is() { [ "$(pending_count)" = "$1" ]; }
settled() { wait_gone "wait: a new item is selected" 100; }
rules_count() { api GET "/v1/sessions/$SESSION_ID/rules" | json_get '["rules"].__len__()'; }
newest_approval() { api GET "/v1/sessions/$SESSION_ID/actions?limit=1" | json_get '["actions"][0]["approval"]'; }

open_tmux || exit 1
start_dashboard
wait_for "$NAME" || { fail "dashboard shows the session"; screen >&2; exit 1; }

# ---------------------------------------------------------------- a: approve and propose a rule
agent_action 1 "git status --short" &
agent1=$!
poll 100 pending_is 1 || fail "the action waits"
wait_for "run: git status --short" || { fail "queue shows the action"; screen >&2; }
settled
tm send-keys -t dash 2 a
if wait_for "approved; rule" && wait_for "git status --short *"; then
  ok "a approves and proposes the derived pattern (git status --short *)"
else
  fail "a proposes a rule"; screen >&2
fi
if wait "$agent1" && [ "$(cat "$TMP/agent-1.status")" = 200 ]; then
  ok "the action was approved at once (the agent got its observation)"
else
  fail "a approves ($(cat "$TMP/agent-1.status" 2>/dev/null))"
fi
# edit the pattern: shorter, then save
tm send-keys -t dash C-u
tm send-keys -t dash -l "git status *"
tm send-keys -t dash Enter
if wait_for "saved: allow git status *" && [ "$(rules_count)" = 1 ]; then
  ok "Enter saves the edited pattern as the session's rule"
else
  fail "rule saved ($(rules_count))"; screen >&2
fi
[ "$(api GET "/v1/sessions/$SESSION_ID/rules" | json_get '["rules"][0]["kind"]')" = run ] &&
  ok "the rule is for the action's kind (run)" || fail "rule kind"
agent_action 2 "git status" &
agent2=$!
if wait "$agent2" && [ "$(cat "$TMP/agent-2.status")" = 200 ] && [ "$(newest_approval)" = auto ]; then
  ok "a matching action runs without waiting (approval auto)"
else
  fail "rule applies ($(cat "$TMP/agent-2.status" 2>/dev/null), $(newest_approval))"
fi

tm send-keys -t dash 1
show_tab Actions SUMMARY
rule_row() { screen | grep -F "git status" | grep -qF "rule 1"; }
poll 100 rule_row && ok "the Actions tab names the rule that approved it (rule 1)" ||
  { fail "the rule in the Actions tab"; screen >&2; }

# ---------------------------------------------------------------- Esc: the approval only
agent_action 3 "ls -la /tmp" &
agent3=$!
wait_for "run: ls -la /tmp" || { fail "third action queued"; screen >&2; }
settled
tm send-keys -t dash 2 a
wait_for "approved; rule" || { fail "a proposes again"; screen >&2; }
tm send-keys -t dash Escape
if wait_for "no rule saved" && wait "$agent3" && [ "$(cat "$TMP/agent-3.status")" = 200 ] &&
  [ "$(rules_count)" = 1 ]; then
  ok "Esc at the proposal saves nothing more than the approval"
else
  fail "Esc ($(rules_count) rules)"; screen >&2
fi

# ---------------------------------------------------------------- R: list, edit, remove
tm send-keys -t dash R
if wait_for "Rules (1)" && wait_for "git status *"; then
  ok "R lists the rules"
else
  fail "rules window"; screen >&2
fi
tm send-keys -t dash e
wait_for "pattern (Esc keeps it)" || { fail "e asks for the pattern"; screen >&2; }
tm send-keys -t dash C-u
tm send-keys -t dash -l "git diff *"
tm send-keys -t dash Enter
pattern_is() { [ "$(api GET "/v1/sessions/$SESSION_ID/rules" | json_get '["rules"][0]["pattern"]')" = "$1" ]; }
if poll 100 pattern_is "git diff *" && wait_for "Rules (1)" && wait_for "git diff *"; then
  ok "e edits the pattern (the window shows the new one)"
else
  fail "edit"; screen >&2
fi
tm send-keys -t dash d
wait_for "Remove rule" || { fail "d asks first"; screen >&2; }
tm send-keys -t dash y
if wait_for "no rules:" && [ "$(rules_count)" = 0 ]; then
  ok "d and y remove the rule"
else
  fail "remove ($(rules_count))"; screen >&2
fi
tm send-keys -t dash Escape
wait_gone "no rules:" || fail "Esc closes the window"
agent_action 4 "git diff" &
agent4=$!
if poll 100 pending_is 1; then
  ok "after the removal the same kind of action waits again"
else
  fail "waits again"
fi
id4=$(api GET /v1/approvals | json_get '["approvals"][0]["id"]')
api POST "/v1/actions/$id4/reject" '{"reason":"test over"}' >/dev/null
wait "$agent4"
v=$(api GET /v1/verify | json_get '["ok"]')
[ "$v" = True ] && ok "the record verifies after the rule changes" || fail "verify: $v"

tm send-keys -t dash q
wait_for 'READY$' || fail "dashboard quits"
[ -s "$TMP/dash.err" ] && { fail "the dashboard wrote to stderr"; cat "$TMP/dash.err" >&2; }

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
