#!/usr/bin/env bash
# Approvals in the dashboard end to end, through a private tmux server against a real engine:
# an agent's request blocks until the operator presses `y` (and then gets the command's
# observation); `n` with a typed reason gives the agent a `user_rejected` observation carrying
# it; Enter on the queue decides nothing; the header counts what waits; `--read-only` refuses
# `y`; the help lists the queue's keys; `--bell` rings when an action starts waiting; each item
# counts down the time left before it expires; a second quick `y` never decides the item the
# selection moved onto; an expiry is announced; `y` in the Actions tab approves.
#
#   tests/tui/approvals_test.sh [PATH/TO/paddock]        (or PADDOCK_EXE=...)
set -uo pipefail
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"

export PADDOCK_CONFIRM=high # HIGH actions wait for the operator (the default, said explicitly)
# A newly selected item cannot be decided for a moment (500 ms): long here, so that a key the
# test sends as soon as it sees the new selection surely lands inside it on a loaded machine.
export PADDOCK_DECIDE_GUARD_MS=3000
start_engine || { fail "engine answers GET /v1/info"; exit 1; }
NAME=appr-$$
create_session "$NAME" || exit 1
ok "session $SESSION_ID created"

# agent_action N COMMAND: the agent's blocking request in the background; its reply in
# $TMP/agent-N.json once the engine answers, its HTTP status in $TMP/agent-N.status.
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
wait_pending() { poll 100 pending_is "$1"; } # wait_pending N: the engine's queue holds N
# settled: the item the selection landed on by itself may be decided now (the guard is over)
settled() { wait_gone "wait: a new item is selected" 100; }

open_tmux || exit 1
start_dashboard
wait_for "$NAME" || { fail "dashboard shows the session"; screen >&2; exit 1; }

# ---------------------------------------------------------------- y: the agent's request runs
agent_action 1 "rm -rf /opt/nothing-$$" &
agent1=$!
wait_pending 1 || fail "the action waits in the engine's queue"
if wait_for "1 action waits for approval: press 2" && wait_for "Approvals (1 waiting)" &&
  wait_for "run: rm -rf /opt/nothing"; then
  ok "the header counts the waiting action and the queue shows its exact command"
else
  fail "queue shown"; screen >&2
fi
screen | grep -F "rm -rf /opt/nothing" | grep -qiF high && ok "the queue shows the risk (high)" ||
  { fail "risk shown"; screen >&2; }
tm send-keys -t dash 2
tm send-keys -t dash '?'
wait_for "approve the selected action" && wait_for "reject the selected action" &&
  ok "the help lists the queue's keys (generated from its table)" || { fail "help for the queue"; screen >&2; }
tm send-keys -t dash Escape
wait_gone "approve the selected action" || fail "help closes"

# Enter is never a decision: a grace period for a decision that must NOT come.
tm send-keys -t dash 2 Enter
sleep 0.5
[ "$(pending_count)" = 1 ] && [ ! -e "$TMP/agent-1.json" ] &&
  ok "Enter on the queue decides nothing (the agent still waits)" || fail "Enter decided something"

settled
tm send-keys -t dash 2 y
if wait "$agent1" && [ "$(cat "$TMP/agent-1.status")" = 200 ] &&
  [ "$(json_get '["observation"]' <"$TMP/agent-1.json")" = run ]; then
  ok "y approves: the agent's blocked request returns the command's observation"
else
  fail "y approves ($(cat "$TMP/agent-1.status" 2>/dev/null) $(cat "$TMP/agent-1.json" 2>/dev/null))"
fi
wait_gone "waits for approval" && wait_gone "waiting for approval" && ok "the queue empties and the header count goes" ||
  { fail "queue empties"; screen >&2; }
by=$(api GET "/v1/actions/$(api GET "/v1/sessions/$SESSION_ID/actions?limit=1" | json_get '["actions"][0]["id"]')" |
  json_get '["decided_by"]')
case "$by" in *dashboard*) ok "the decision is recorded as the dashboard's ($by)" ;;
*) fail "decided_by is '$by'" ;; esac

# ---------------------------------------------------------------- n: user_rejected with the reason
agent_action 2 "rm -rf /srv/nothing-$$" &
agent2=$!
wait_for "run: rm -rf /srv/nothing" || { fail "second action queued"; screen >&2; }
settled
tm send-keys -t dash 2 n
wait_for "reason (optional" || { fail "n asks for a reason"; screen >&2; }
tm send-keys -t dash -l "not on this box $$"
tm send-keys -t dash Enter
if wait "$agent2" && [ "$(json_get '["observation"]' <"$TMP/agent-2.json")" = user_rejected ] &&
  grep -qF "not on this box $$" "$TMP/agent-2.json"; then
  ok "n rejects: the agent gets user_rejected with the operator's reason"
else
  fail "n rejects ($(cat "$TMP/agent-2.json" 2>/dev/null))"
fi

# The session's Actions tab: each row's risk and approval as recorded.
# The tab's heading shows before its rows have loaded: the rows are polled for.
decisions_shown() {
  local s
  s=$(screen)
  grep -F "rm -rf /opt/nothing" <<<"$s" | grep -qE 'high +approved' &&
    grep -F "rm -rf /srv/nothing" <<<"$s" | grep -qE 'high +rejected'
}
tm send-keys -t dash 1
show_tab Actions SUMMARY
if wait_for "APPROVAL" && poll 100 decisions_shown; then
  ok "the Actions tab shows each action's risk and approval (high approved, high rejected)"
else
  fail "risk and approval columns"; screen >&2
fi

# Esc at the reason prompt decides nothing.
agent_action 3 "rm -rf /mnt/nothing-$$" &
agent3=$!
wait_for "run: rm -rf /mnt/nothing" || { fail "third action queued"; screen >&2; }
settled
tm send-keys -t dash 2 n
wait_for "reason (optional" || fail "n asks for a reason"
tm send-keys -t dash Escape
wait_gone "reason (optional" || fail "Esc closes the reason prompt"
sleep 0.5 # Esc was handled: a grace period for a rejection that must NOT come
[ "$(pending_count)" = 1 ] && ok "Esc at the reason prompt rejects nothing" || fail "Esc decided"

# ---------------------------------------------------------------- --read-only cannot approve
tm send-keys -t dash q
wait_for 'READY$' || fail "dashboard quits"
start_dashboard --read-only
wait_for "[read-only]" || { fail "read-only dashboard starts"; screen >&2; }
wait_for "run: rm -rf /mnt/nothing" || fail "read-only dashboard shows the queue"
tm send-keys -t dash 2 y
wait_for "read-only dashboard: y" && ok "--read-only refuses y with a message" ||
  { fail "read-only y message"; screen >&2; }
sleep 0.3 # y was handled (refused): a grace period for an approval that must NOT come
[ "$(pending_count)" = 1 ] && ok "--read-only: the action still waits" || fail "read-only approved"
tm send-keys -t dash q
wait_for 'READY$' || fail "read-only dashboard quits"
id3=$(api GET /v1/approvals | json_get '["approvals"][0]["id"]')
api POST "/v1/actions/$id3/reject" '{"reason":"test over"}' >/dev/null
wait "$agent3"

# ---------------------------------------------------------------- --bell rings once per new wait
tm set -g monitor-bell on
tm set -g bell-action any
tm set-hook -g alert-bell "run-shell 'touch $TMP/bell'"
tm new-window -d -t dash -n other "sleep 600" # alerts are for windows other than the current
start_dashboard --bell
wait_for "$NAME" || fail "bell dashboard starts"
tm select-window -t dash:other
agent_action 4 "rm -rf /media/nothing-$$" &
agent4=$!
wait_pending 1 || fail "fourth action waits"
poll 100 test -e "$TMP/bell" && ok "--bell rings the terminal bell when an action starts waiting" ||
  fail "no bell with --bell"
tm select-window -t dash:0
id4=$(api GET /v1/approvals | json_get '["approvals"][0]["id"]')
api POST "/v1/actions/$id4/reject" '{"reason":"test over"}' >/dev/null
wait "$agent4"
tm send-keys -t dash q
wait_for 'READY$' || fail "bell dashboard quits"

# ---------------------------------------------------------------- the time left counts down
start_dashboard
wait_for "$NAME" || fail "dashboard starts again"
agent_action 5 "rm -rf /var/nothing-$$" &
agent5=$!
wait_for "run: rm -rf /var/nothing" || { fail "fifth action queued"; screen >&2; }
# left_now: the LEFT cell (M:SS) of the queued row, in seconds, from one capture
left_now() {
  screen | grep -F "rm -rf /var/nothing" | python3 -c '
import re, sys
m = re.search(r"(?<![0-9:])([0-9]+):([0-9]{2})(?![0-9:])", sys.stdin.read())
print(int(m.group(1)) * 60 + int(m.group(2)) if m else "")'
}
left_below() { local l; l=$(left_now) && [ -n "$l" ] && [ "$l" -lt "$1" ]; }
first=$(left_now)
if [ -n "$first" ] && [ "$first" -gt 0 ] && [ "$first" -le 600 ] && poll 100 left_below "$first"; then
  ok "the queue shows the time left ($first s) and it counts down"
else
  fail "countdown (first: '$first')"; screen >&2
fi
reason=$(api GET /v1/approvals | json_get '["approvals"][0]["risk_reason"]')
wait_for "why: ${reason:0:20}" && ok "the queue shows the selected item's reason ($reason)" ||
  { fail "reason '$reason' shown"; screen >&2; }

# ---------------------------------------------------------------- y, y never decides two
agent_action 6 "rm -rf /etc/nothing-$$" &
agent6=$!
wait_pending 2 || fail "two actions wait"
wait_for "Approvals (2 waiting)" || { fail "the queue shows two"; screen >&2; }
settled
id5=$(api GET /v1/approvals | json_get '["approvals"][0]["id"]')
id6=$(api GET /v1/approvals | json_get '["approvals"][1]["id"]')
tm send-keys -t dash 2 y
wait_for "Approvals (1 waiting)" || { fail "y decides the first"; screen >&2; }
tm send-keys -t dash y # at once: the selection has just moved onto the other one
if wait_for "was just selected: not decided" 100; then
  ok "a y on the item the selection just moved onto is refused (the footer said wait)"
else
  fail "the second y was not refused"; screen >&2
fi
a5=$(api GET "/v1/actions/$id5" | json_get '["approval"]')
a6=$(api GET "/v1/actions/$id6" | json_get '["approval"]')
[ "$a5" = approved ] && [ "$a6" = pending ] && ok "y y decided exactly one (approved, pending)" ||
  fail "y y: $a5, $a6"
agent_action 7 "rm -rf /boot/nothing-$$" &
agent7=$!
wait_for "Approvals (2 waiting)" || { fail "the queue shows two again"; screen >&2; }
settled
approved6() { [ "$(api GET "/v1/actions/$id6" | json_get '["approval"]')" = approved ]; }
# typed at once; the help that `?` opens after them says both were handled (keys go in order)
tm send-keys -t dash y y '?'
poll 100 approved6 || fail "the first y of y y approves"
wait_for "approve the selected action" || { fail "the keys after y y were handled"; screen >&2; }
tm send-keys -t dash Escape
wait_gone "approve the selected action" || fail "help closes"
sleep 0.3 # both y were handled: a grace period for a second decision that must NOT come
[ "$(api GET "/v1/actions/$id6" | json_get '["approval"]')" = approved ] && [ "$(pending_count)" = 1 ] &&
  ok "y y typed at once decides exactly one (one approved, one still pending)" ||
  fail "y y at once: $(pending_count) pending"

# ---------------------------------------------------------------- y in the Actions tab
tm send-keys -t dash 2 Enter # the queue's Enter: the session's Actions tab, focused
poll 100 tab_is Actions || { fail "Enter shows the Actions tab"; screen >&2; }
row_pending() { screen | grep -F "rm -rf /boot/nothing" | grep -qF pending; }
poll 100 row_pending || { fail "the Actions tab shows the pending action"; screen >&2; }
settled
id7=$(api GET /v1/approvals | json_get '["approvals"][0]["id"]')
tm send-keys -t dash y
if wait "$agent7" && [ "$(api GET "/v1/actions/$id7" | json_get '["approval"]')" = approved ]; then
  ok "y in the Actions tab approves the pending action"
else
  fail "y in the Actions tab ($(api GET "/v1/actions/$id7" | json_get '["approval"]'))"; screen >&2
fi
wait "$agent5" "$agent6"

# ---------------------------------------------------------------- an expiry is announced
create_session "$NAME-x" '"approval_timeout": 3' || exit 1
agent_action 8 "rm -rf /usr/nothing-$$" &
agent8=$!
wait_for "run: rm -rf /usr/nothing" || { fail "the short-lived action queued"; screen >&2; }
if wait_for "expired without a decision" 150; then
  ok "an expiry is announced in the footer"
else
  fail "expiry announced"; screen >&2
fi
wait "$agent8"
id8=$(api GET "/v1/sessions/$SESSION_ID/actions?limit=1" | json_get '["actions"][0]["id"]')
[ "$(api GET "/v1/actions/$id8" | json_get '["approval"]')" = expired ] &&
  ok "the history records it as expired" || fail "approval of the expired action"
tm send-keys -t dash q
wait_for 'READY$' || fail "dashboard quits"
[ -s "$TMP/dash.err" ] && { fail "the dashboard wrote to stderr"; cat "$TMP/dash.err" >&2; }

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
