#!/usr/bin/env bash
# Every key of the dashboard's global table and of the list table, end to end in tmux against
# a real engine, with NO_COLOR set (the other tmux tests drive each tab's and pane's own keys).
#
#   tests/tui/keys_test.sh [PATH/TO/paddock]        (or PADDOCK_EXE=...)
#
# Three sessions and one action waiting for approval. What each key did is read off the
# screen: the selected row is the reverse-video run (capture-pane -e, tests/tui/cells.py), the
# focused pane by its footer hints, the tab by its underlined title. `r` is seen as new
# requests at the engine (the dashboard talks to it through a counting relay on a unix
# socket), ^L as the repaint of cells written behind the dashboard's back. NO_COLOR: no colour
# SGR anywhere on the screen, while the same dashboard without it does use colours.
set -uo pipefail
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"

RELAY_PID=
trap '[ -n "$RELAY_PID" ] && kill "$RELAY_PID" 2>/dev/null; cleanup' EXIT

start_engine || { fail "engine answers GET /v1/info"; exit 1; }
for n in a b c; do
  create_session "keys-$n-$$" || exit 1
done
ok "three sessions (keys-a/b/c-$$)"

# The relay (tests/tui/relay.py): what the dashboard sends goes to the engine unchanged; each
# request line is appended to $TMP/requests.
: >"$TMP/requests"
python3 "$TUI_DIR/relay.py" "$OPSOCK" "$TMP/relay.sock" "$TMP/requests" &
RELAY_PID=$!
poll 50 test -S "$TMP/relay.sock" || { fail "the relay listens"; exit 1; }

open_tmux 160 32 || exit 1
tm send-keys -t dash -l "export NO_COLOR=1"
tm send-keys -t dash Enter
start_dashboard --operator-socket "$TMP/relay.sock"
if wait_for "keys-a-$$" && wait_for "keys-b-$$" && wait_for "keys-c-$$" && wait_for "● live"; then
  ok "the dashboard (through the relay) lists the three sessions"
else
  fail "dashboard shows the sessions"; screen >&2; exit 1
fi

# ---------------------------------------------------------------- NO_COLOR
used=$(cells colours)
[ -z "$used" ] && ok "NO_COLOR=1: no colour anywhere on the screen (attributes only)" ||
  { fail "NO_COLOR: colours in use: $(echo $used)"; }

# ---------------------------------------------------------------- list keys (sessions pane)
selected() { cells runs reverse | grep -v '^0:' | grep -oE "keys-[abc]-$$" | head -1; }
selected_is() { [ "$(selected)" = "$1" ]; }
expect_selected() { poll 100 selected_is "$2"; } # expect_selected KEY-DESCRIPTION NAME
# The newest session comes first and is selected.
expect_selected start "keys-c-$$" && ok "the first row (keys-c, the newest) is selected at start" ||
  { fail "initial selection is keys-c (got '$(selected)')"; screen >&2; }
for step in "j b" "Down a" "j a" "k b" "Up c" "k c" "G a" "g c" "End a" "Home c" "NPage a" \
  "PPage c" "C-f a" "C-b c"; do
  key=${step% *} want="keys-${step#* }-$$"
  tm send-keys -t dash "$key"
  if expect_selected "$key" "$want"; then
    ok "$key in the sessions list selects $want"
  else
    fail "$key selects $want (selected: '$(selected)')"; screen >&2
  fi
done
tm send-keys -t dash j
expect_selected j "keys-b-$$" && wait_for "─ keys-b-$$ " &&
  ok "the session's tabs follow the selection (their title names keys-b)" ||
  { fail "the detail pane follows the selection"; screen >&2; }

# ---------------------------------------------------------------- focus keys
footer() { screen | tail -1; }
focus() { # sessions | approvals | detail, by the footer's hints
  case "$(footer)" in
  *"/ filter"*) echo sessions ;;
  *"y approve"*) echo approvals ;;
  *) echo detail ;;
  esac
}
focus_is() { [ "$(focus)" = "$1" ]; }
expect_focus() { poll 100 focus_is "$1"; }
for step in "l detail" "h sessions" "Right detail" "Left sessions" "Enter detail" \
  "Escape sessions" "Tab detail" "BTab sessions" "l detail" "1 sessions"; do
  key=${step% *} want=${step#* }
  tm send-keys -t dash "$key"
  expect_focus "$want" && ok "$key focuses the $want pane" ||
    { fail "$key focuses $want (footer: $(footer))"; screen >&2; }
done
tm send-keys -t dash 2
wait_for "nothing waits for approval" && [ "$(focus)" = sessions ] &&
  ok "2 with an empty queue says so and leaves the focus" ||
  { fail "2 with nothing waiting"; screen >&2; }

# ---------------------------------------------------------------- tabs: ] and [
active_tab() { cells runs underline | grep '^1:' | head -1 | sed 's/^1: *//; s/ *$//'; }
active_tab_is() { [ "$(active_tab)" = "$1" ]; }
expect_tab() { poll 100 active_tab_is "$1"; }
expect_tab Overview && ok "Overview is the first tab" || fail "first tab (got '$(active_tab)')"
for want in Logs Actions Resources Terminal Changes Files Egress Overview; do
  tm send-keys -t dash ']'
  expect_tab "$want" && ok "] shows the $want tab" || { fail "] to $want (got '$(active_tab)')"; }
done
for want in Egress Files Changes Terminal Resources Actions Logs Overview; do
  tm send-keys -t dash '['
  expect_tab "$want" && ok "[ shows the $want tab" || { fail "[ to $want (got '$(active_tab)')"; }
done
tm send-keys -t dash E
expect_tab Egress && ok "E shows the Egress tab" || fail "E to Egress (got '$(active_tab)')"
tm send-keys -t dash '['
expect_tab Files || fail "[ from Egress to Files (got '$(active_tab)')"
tm send-keys -t dash E
expect_tab Egress && ok "E shows the Egress tab from another tab" || fail "E again (got '$(active_tab)')"
tm send-keys -t dash ']'
expect_tab Overview || fail "] from Egress to Overview (got '$(active_tab)')"

# ---------------------------------------------------------------- the queue: 2, Tab through three
SESSION_ID=$(api GET /v1/sessions | python3 -c 'import json,sys
print(next(s["id"] for s in json.load(sys.stdin)["sessions"] if s["name"] == sys.argv[1]))' "keys-a-$$")
risky=$(python3 -c 'import json,sys; print(json.dumps({"action":{"action":"run","args":{"command":sys.argv[1]}}}))' "rm -rf /opt/keys-$$")
api POST "/v1/sessions/$SESSION_ID/execute_action" "$risky" >"$TMP/agent.json" &
agent_pid=$!
if wait_for "rm -rf /opt/keys-$$" 150; then
  ok "the risky action waits in the queue"
  tm send-keys -t dash 2
  expect_focus approvals && ok "2 focuses the approvals queue" ||
    { fail "2 focuses the queue (footer: $(footer))"; screen >&2; }
  for step in "Tab detail" "Tab sessions" "Tab approvals" "BTab sessions" "BTab detail" \
    "BTab approvals" "h sessions"; do
    key=${step% *} want=${step#* }
    tm send-keys -t dash "$key"
    expect_focus "$want" && ok "$key (with a waiting action) focuses the $want pane" ||
      { fail "$key focuses $want (footer: $(footer))"; screen >&2; }
  done
  action_id=$(api GET /v1/approvals | python3 -c 'import json,sys
d = json.load(sys.stdin); a = d["approvals"] if isinstance(d, dict) else d
print(a[0].get("action_id") or a[0].get("id"))' 2>/dev/null)
  api POST "/v1/actions/$action_id/reject" '{"reason":"keys test"}' >/dev/null
  wait "$agent_pid"
  wait_gone "rm -rf /opt/keys-$$" 50 || true
else
  fail "the risky action shows in the queue"; screen >&2
  kill "$agent_pid" 2>/dev/null
fi

# ---------------------------------------------------------------- r: refetch everything
count() { grep -c "^GET /v1/sessions" "$TMP/requests"; }
# Quiet first: nothing else asks for the session list while nothing happens (the count holds
# for 1.5 s; a grace period for what must NOT happen, polled to a deadline of 30 s).
quiet() {
  before=$(count)
  sleep 1.5
  [ "$(count)" = "$before" ]
}
poll 20 quiet
tm send-keys -t dash r
more_requests() { [ "$(count)" -gt "$before" ]; }
poll 100 more_requests && ok "r asks the engine for the sessions again ($before, then $(count) GET /v1/sessions)" ||
  fail "r refetches (GET /v1/sessions stayed at $before)"

# ---------------------------------------------------------------- ^L: repaint
tty=$(flag pane_tty)
printf '\0337\033[28;20HSCRIBBLE-%s\0338' $$ >"$tty"
if wait_for "SCRIBBLE-$$"; then
  sleep 0.5 # a grace period: nothing but ^L may wipe the scribble
  screen_has "SCRIBBLE-$$" || fail "the scribble outlived a redraw without ^L"
  tm send-keys -t dash C-l
  wait_gone "SCRIBBLE-$$" && wait_for "keys-a-$$" &&
    ok "^L repaints the whole screen (cells written behind its back are gone)" ||
    { fail "^L repaints"; screen >&2; }
else
  fail "writing to the pane's tty ($tty) shows"
fi

# ---------------------------------------------------------------- ? and the help's contents
tm send-keys -t dash '?'
if wait_for "show or hide this help"; then
  # Each entry is a cell of its own (the help's columns are runs of two or more spaces).
  missing=$(screen | python3 -c '
import re, sys
cells = {c.strip() for line in sys.stdin for c in re.split(r"\s{2,}|│", line)}
print(" ".join(repr(n) for n in sys.argv[1:] if n not in cells))' q '?' Tab S-Tab 'h, Left, 1' \
    'l, Right, Enter' Esc ']' '[' 2 3 E r '^L' : 'j, Down' 'k, Up' 'PgDn, ^F' 'PgUp, ^B' \
    'g, Home' 'G, End')
  [ -z "$missing" ] && ok "? lists every global and list key from the tables" ||
    { fail "help is missing: $missing"; screen >&2; }
else
  fail "? opens the help"; screen >&2
fi
tm send-keys -t dash '?'
wait_gone "show or hide this help" && ok "? again closes the help" || { fail "? closes"; screen >&2; }

# ---------------------------------------------------------------- : and 3
footer_is() { footer | grep -qE "$1"; } # footer_is REGEX
tm send-keys -t dash ':'
poll 100 footer_is '^ ?:' && ok ": opens the command line" ||
  { fail ": opens the command line (footer: $(footer))"; screen >&2; }
tm send-keys -t dash Escape
poll 100 footer_is "/ filter" && ok "Esc closes the command line" || { fail "Esc closes :"; screen >&2; }
# The History page lists sessions too ("Sessions (3)"): what tells it apart is its own frame,
# titled History, where the main screen has the sessions pane's.
tm send-keys -t dash 3
poll 100 page_is History && ok "3 opens the History page (full screen)" ||
  { fail "3 opens History"; screen >&2; }
tm send-keys -t dash Escape
poll 100 main_shown && wait_for "Sessions (3)" && ok "Esc leaves History for the sessions" ||
  { fail "Esc from History"; screen >&2; }

# ---------------------------------------------------------------- smallest sizes
# Until the dashboard redraws, tmux shows the old cells cut to the new size: laid_out waits
# for the frame drawn for that size.
tm resize-window -t dash -x 60 -y 15
poll 100 laid_out 60 15 && screen_has "Sessions (3)" && ! screen_has "terminal too small" &&
  ok "60x15, the smallest size, still lays the dashboard out" || { fail "60x15 layout"; screen >&2; }
tm resize-window -t dash -x 59 -y 15
wait_for "terminal too small: have 59x15, need 60x15" && ok "59x15 says it is too small" ||
  { fail "59x15"; screen >&2; }
tm resize-window -t dash -x 160 -y 32
poll 100 laid_out 160 32 && wait_for "Sessions (3)" || fail "back to 160x32"

# ---------------------------------------------------------------- q, then colours without NO_COLOR
tm send-keys -t dash q
terminal_restored && wait_for 'READY$' && ok "q quits and restores the terminal" ||
  { fail "q quits"; screen >&2; }
tm send-keys -t dash -l "unset NO_COLOR; clear"
tm send-keys -t dash Enter
start_dashboard --operator-socket "$TMP/relay.sock"
if wait_for "keys-a-$$" && wait_for "● live"; then
  used=$(cells colours)
  [ -n "$used" ] && ok "without NO_COLOR the same screen uses colours ($(echo $used | wc -w) of them)" ||
    fail "no colours without NO_COLOR"
else
  fail "second dashboard"; screen >&2
fi
tm send-keys -t dash q
terminal_restored || fail "second q"

[ -s "$TMP/dash.err" ] && { fail "the dashboard wrote to stderr"; cat "$TMP/dash.err" >&2; }
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
