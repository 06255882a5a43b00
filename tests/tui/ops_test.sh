#!/usr/bin/env bash
# Operations in the dashboard, through a private tmux server against a real engine: create a
# session with the form (a bad value is refused in the form; the limits reach the engine);
# pause, resume, stop and resume again; delete asks (n keeps it, y deletes it); the `/`
# filter narrows the list while typing and Esc clears it; the `:` command line (:pause NAME,
# an unknown command, :theme light changes the colours on screen); export writes the three
# files (a missing directory is made); t opens the Terminal tab (or says there is none);
# --mouse: a click selects; --read-only refuses p, S, D, c, :pause and y with a message and changes nothing.
#
#   tests/tui/ops_test.sh [PATH/TO/paddock]        (or PADDOCK_EXE=...)
set -uo pipefail
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"

export PADDOCK_CONFIRM=high
RELAY_PID=
trap '[ -n "$RELAY_PID" ] && kill "$RELAY_PID" 2>/dev/null; cleanup' EXIT
start_engine || { fail "engine answers GET /v1/info"; exit 1; }
A=opsa B=opsb NEW=opsnew # the engine is private: short names fit the NAME column
create_session "$A" || exit 1
A_ID=$SESSION_ID
create_session "$B" || exit 1
B_ID=$SESSION_ID
ok "sessions $A and $B created"

state_of() { api GET "/v1/sessions/$1" | json_get '["state"]' 2>/dev/null; }
state_is() { [ "$(state_of "$1")" = "$2" ]; }
wait_state() { poll 150 state_is "$1" "$2"; } # wait_state ID STATE
id_of() { # the live session called $1
  api GET /v1/sessions | python3 -c 'import json,sys
for s in json.load(sys.stdin)["sessions"]:
    if s.get("name") == sys.argv[1]: print(s["id"])' "$1"
}
# The sessions pane's rows (not the header, the detail pane or the footer): its 64 columns are
# cut by characters (chars), a braille sparkline's cells being three bytes each.
list_rows() { screen | sed '1,3d;$d' | chars 1 64; }
# row_shows NAME TEXT: the list's row of session NAME shows TEXT (one capture).
row_shows() { list_rows | grep -F " $1 " | grep -qF -- "$2"; }
listed() { list_rows | grep -qF " $1 "; }
unlisted() { ! listed "$1"; }
# selected_is NAME: the detail pane's title (the second row) names the selected session NAME.
selected_is() { screen | sed -n 2p | grep -qF "┌─ $1 "; }
cmd() { tm send-keys -t dash :; tm send-keys -t dash -l "$1"; tm send-keys -t dash Enter; }
export_into() { # export_into DIR: e on the selected session, DIR typed at its prompt
  tm send-keys -t dash e
  wait_for "into directory:" || { fail "e asks for a directory ($1)"; screen >&2; }
  tm send-keys -t dash C-u
  tm send-keys -t dash -l "$1"
  tm send-keys -t dash Enter
}

open_tmux || exit 1
start_dashboard
wait_for "$B" || { fail "dashboard shows the sessions"; screen >&2; exit 1; }

# ---------------------------------------------------------------- create with the form
tm send-keys -t dash c
if wait_for "New session" && wait_for "image      $IMAGE"; then
  ok "c opens the form with the engine's default image filled in"
else
  fail "create form"; screen >&2
fi
tm send-keys -t dash Tab
tm send-keys -t dash -l "$NEW"
tm send-keys -t dash Tab
tm send-keys -t dash -l 256m
tm send-keys -t dash Tab
tm send-keys -t dash -l lots
tm send-keys -t dash Enter
wait_for "cpus: a number above 0" && ok "a bad value is refused in the form, which stays open" ||
  { fail "cpus checked"; screen >&2; }
tm send-keys -t dash C-u
tm send-keys -t dash -l 1.5
tm send-keys -t dash Tab Tab Tab Right Right # network none; allow empty; approvals default → never → high
tm send-keys -t dash Enter
wait_gone "New session" || fail "the form closes on Enter"
NEW_ID=
new_id_known() { NEW_ID=$(id_of "$NEW"); [ -n "$NEW_ID" ]; }
poll 150 new_id_known && SESSION_IDS+=("$NEW_ID")
if [ -n "$NEW_ID" ] && wait_for "$NEW" && wait_state "$NEW_ID" ready; then
  ok "the form creates the session and the list shows it"
else
  fail "created session ($NEW_ID)"; screen >&2
fi
opts=$(api GET "/v1/sessions/$NEW_ID" | json_get '["options"]')
case "$opts" in
*"'memory': 268435456"*"'cpus': 1.5"* | *"'cpus': 1.5"*"'memory': 268435456"*) ok "the form's limits reach the engine" ;;
*) fail "limits: $opts" ;;
esac
case "$opts" in *"'confirm': 'high'"*) ok "the form's approval policy reaches the engine" ;;
*) fail "confirm: $opts" ;; esac
# The engine said ready; the list learns it by an event of its own: polled, not read once.
poll 100 row_shows "$NEW" ready && ok "the new session is listed as ready" ||
  { fail "ready shown"; screen >&2; }

# ---------------------------------------------------------------- pause, resume, stop, resume
# The new session is the selected one (the newest, first row).
poll 100 selected_is "$NEW" && ok "the new session is selected" || { fail "selection"; screen >&2; }
tm send-keys -t dash h p
wait_state "$NEW_ID" paused && wait_for "paused $NEW" &&
  ok "p pauses it (state paused; the footer says so)" || { fail "p pauses"; screen >&2; }
poll 100 row_shows "$NEW" paused && ok "the list shows paused" || { fail "paused shown"; screen >&2; }
tm send-keys -t dash u
wait_state "$NEW_ID" ready && ok "u resumes it (ready)" || fail "u resumes"
wait_for "resumed $NEW" || fail "resumed said"
tm send-keys -t dash S
wait_state "$NEW_ID" stopped && ok "S stops it" || fail "S stops ($(state_of "$NEW_ID"))"
tm send-keys -t dash u
wait_state "$NEW_ID" ready && ok "u starts a stopped one again (ready)" || fail "u after stop"

# ---------------------------------------------------------------- the command line
cmd "pause $B"
wait_state "$B_ID" paused && ok ":pause NAME pauses that session" || fail ":pause NAME"
cmd "resume $B"
wait_state "$B_ID" ready && ok ":resume NAME resumes it" || fail ":resume NAME"
cmd "frobnicate"
wait_for ":frobnicate: unknown command (:help lists the commands)" &&
  ok "an unknown command is a clear error" || { fail "unknown command"; screen >&2; }
cmd "pause no-such-$$"
wait_for "no-such-$$: no such session" && ok "an unknown session is a clear error" || fail "no such"
tm send-keys -t dash '?'
wait_for ":reject ID [REASON]" && wait_for ":theme [NAME]" &&
  ok "? lists the commands (from their table)" || { fail "help lists commands"; screen >&2; }
tm send-keys -t dash Escape
wait_gone ":reject ID [REASON]" || fail "help closes"

# ---------------------------------------------------------------- themes
# The first three rows (header, pane titles, column headings) with their SGR, from one capture.
# Their text must hold still while the colours change: the header counts the states, so it
# is read once it shows all three ready (the list learns $B's resume by an event of its own).
top3() { local s; s=$(tm capture-pane -p -e -t dash) && head -n 3 <<<"$s"; }
plain() { sed 's/\x1b\[[0-9;]*m//g'; }
wait_for "3 sessions (3 ready)" || { fail "the header counts three ready"; screen >&2; }
before=$(top3)
recoloured() { # the same text as before in other colours
  after=$(top3)
  [ "$after" != "$before" ] && [ "$(plain <<<"$after")" = "$(plain <<<"$before")" ]
}
as_before() { [ "$(top3)" = "$before" ]; }
cmd "theme light"
wait_for "theme light" || fail ":theme light answered"
poll 100 recoloured && ok ":theme light changes the colours (same text, other SGR)" ||
  { fail ":theme light: colours unchanged"; top3 | cat -v >&2; }
cmd "theme no-such-theme"
wait_for "no theme 'no-such-theme' (have: dark, high-contrast, light, solarized" &&
  ok "an unknown theme is refused, naming the themes there are" || { fail "bad theme"; screen >&2; }
cmd "theme dark"
wait_for "theme dark" || fail ":theme dark"
poll 100 as_before && ok ":theme dark gives the first colours back" ||
  { fail "dark again"; top3 | cat -v >&2; }

# ---------------------------------------------------------------- filter
tm send-keys -t dash /
tm send-keys -t dash -l "$A"
narrowed() { # one capture: $B hidden, $A listed
  local rows
  rows=$(list_rows) && ! grep -qF " $B " <<<"$rows" && grep -qF " $A " <<<"$rows"
}
if poll 100 narrowed; then
  ok "/ narrows the list while typing"
else
  fail "live filter"; screen >&2
fi
tm send-keys -t dash Enter
wait_for "Sessions (1 of 3) /$A" && ok "the pane title shows the filter" || { fail "title"; screen >&2; }
list_rows | grep -qF " $NEW " && fail "filtered list shows $NEW" || ok "the filter keeps hiding the others"
tm send-keys -t dash /
tm send-keys -t dash Escape
wait_for "$B" && wait_for "Sessions (3)" && ok "Esc at / clears the filter" || { fail "clear"; screen >&2; }
tm send-keys -t dash /
tm send-keys -t dash -l "paddock/base"
tm send-keys -t dash Enter
wait_for "Sessions (3 of 3) /paddock/base" && ok "the filter matches images too" || fail "image filter"
tm send-keys -t dash Escape
wait_for "Sessions (3)" && ok "Esc in the list clears it too" || fail "Esc clears"

# ---------------------------------------------------------------- export, terminal
mkdir -p "$TMP/export"
tm send-keys -t dash g # the first row: the new session
export_into "$TMP/export"
if wait_for "exported" && [ -s "$TMP/export/$NEW.json" ] && [ -s "$TMP/export/$NEW.md" ] &&
  [ -s "$TMP/export/$NEW.cast" ]; then
  ok "e exports JSON, Markdown and a cast into the directory and says where"
else
  fail "export"; ls -la "$TMP/export" >&2; screen >&2
fi
[ "$(json_get '["session"]["id"]' <"$TMP/export/$NEW.json")" = "$NEW_ID" ] &&
  ok "the exported JSON is that session's" || fail "export content"
export_into "$TMP/no/such/dir"
if wait_for "exported" && [ -s "$TMP/no/such/dir/$NEW.md" ]; then
  ok "an export into a missing directory creates it"
else
  fail "export into a missing directory"; screen >&2
fi
export_into "$TMP/export/$NEW.json/sub" # a file where a directory should be
wait_for "export: $TMP/export/$NEW.json is not a directory" &&
  ok "an export that cannot write says why" || { fail "export error"; screen >&2; }

# Either answer is polled for; the tab bar names Terminal in both cases, so the tab on show
# and the footer (no longer the list's) tell that t opened it.
terminal_opened() { tab_is Terminal && ! screen | tail -n 1 | grep -qF "/ filter"; }
t_answered() { screen_has "has no Terminal tab" || terminal_opened; }
tm send-keys -t dash h t
if ! poll 100 t_answered; then
  fail "t"; screen >&2
elif screen_has "has no Terminal tab"; then
  ok "t says there is no Terminal tab in this build"
else
  ok "t opens the Terminal tab (the keyboard left the sessions)"
  tm send-keys -t dash C-]
fi

# ---------------------------------------------------------------- delete asks
tm send-keys -t dash h g D
wait_for "Delete session $NEW?" && ok "D asks before deleting" || { fail "D asks"; screen >&2; }
# n and Enter must NOT delete: once the question is gone (the key was handled), a grace period
# for a request that should not come, then the engine still has the session.
tm send-keys -t dash n
wait_gone "Delete session" || fail "n closes the question"
sleep 0.3
[ "$(state_of "$NEW_ID")" = ready ] && ok "n keeps the session" || fail "n deleted"
tm send-keys -t dash D
wait_for "Delete session $NEW?" || fail "D asks again"
tm send-keys -t dash Enter
wait_gone "Delete session" || fail "Enter closes the question"
sleep 0.3
[ "$(state_of "$NEW_ID")" = ready ] && ok "Enter is no too" || fail "Enter deleted"
tm send-keys -t dash D
wait_for "Delete session $NEW?" || fail "D asks a third time"
tm send-keys -t dash y
wait_state "$NEW_ID" deleted && ok "y deletes it" || fail "y deletes ($(state_of "$NEW_ID"))"
poll 100 unlisted "$NEW" && ok "the deleted session leaves the list" ||
  { fail "list after delete"; screen >&2; }

tm send-keys -t dash q
terminal_restored && wait_for 'READY$' && ok "q quits" || fail "quit"

# ---------------------------------------------------------------- an export that takes a while
# The dashboard talks to the engine through the relay (tests/tui/relay.py), which holds each
# request for one action while $TMP/hold exists: an engine as slow as the test wants.
SESSION_ID=$A_ID
run_action "echo one" && run_action "echo two" || fail "two actions in $A"
python3 "$TUI_DIR/relay.py" "$OPSOCK" "$TMP/relay.sock" "$TMP/requests" \
  '^GET /v1/actions/[0-9]+$' "$TMP/hold" &
RELAY_PID=$!
poll 50 test -S "$TMP/relay.sock" || fail "the relay listens"
touch "$TMP/hold"
mkdir -p "$TMP/slow" "$TMP/quit"
start_dashboard --operator-socket "$TMP/relay.sock"
wait_for "$A" || { fail "the dashboard through the relay"; screen >&2; }
tm send-keys -t dash G # the last row: $A, the oldest
export_into "$TMP/slow"
wait_for "exporting to $TMP/slow: 0 of 2 actions" &&
  ok "the footer counts the actions fetched while an export runs" || { fail "progress"; screen >&2; }
tm send-keys -t dash '?'
wait_for ":reject ID [REASON]" && ok "the dashboard takes keys while the export waits on the engine" ||
  { fail "live during export"; screen >&2; }
tm send-keys -t dash Escape
wait_gone ":reject ID [REASON]" || fail "help closes during the export"
export_into "$TMP/quit"
wait_for "export: export is still running (exporting to $TMP/slow); wait for it" &&
  ok "a second export while one runs is refused, naming the first" || { fail "one at a time"; screen >&2; }
[ -z "$(ls -A "$TMP/slow")" ] && ok "nothing is written before the export has the whole record" ||
  { fail "early files"; ls -la "$TMP/slow" >&2; }
rm -f "$TMP/hold"
if wait_for "exported 2 actions to $TMP/slow/$A.{json,md,cast}" && [ -s "$TMP/slow/$A.json" ] &&
  [ -s "$TMP/slow/$A.md" ] && [ -s "$TMP/slow/$A.cast" ] && ! ls "$TMP/slow" | grep -q '\.part$'; then
  ok "once the engine answers, the export ends: three files and the footer says so"
else
  fail "slow export's end"; ls -la "$TMP/slow" >&2; screen >&2
fi
[ "$(json_get '["actions"].__len__()' <"$TMP/slow/$A.json")" = 2 ] &&
  ok "the slow export holds both actions" || fail "slow export content"
# q during an export ends its worker process (by its PID) and leaves no file behind.
touch "$TMP/hold"
export_into "$TMP/quit"
wait_for "exporting to $TMP/quit: 0 of 2 actions" || { fail "second slow export"; screen >&2; }
dash=$(cat "$TMP/dash.pid")
worker=$(pgrep -P "$dash" | head -n 1)
[ -n "$worker" ] && ok "the export runs in a child process of the dashboard ($worker)" ||
  fail "no worker process under $dash"
tm send-keys -t dash q
wait_for 'READY$' || fail "q during an export quits"
worker_gone() { [ -n "$worker" ] && ! kill -0 "$worker" 2>/dev/null; }
poll 100 worker_gone && ok "q ends the export's worker" || fail "worker $worker outlived the dashboard"
rm -f "$TMP/hold"
# The dashboard and its worker are gone: nothing is left that could write into $TMP/quit.
[ -z "$(ls -A "$TMP/quit")" ] && ok "an export ended by q leaves no file" ||
  { fail "files after q"; ls -la "$TMP/quit" >&2; }
kill "$RELAY_PID" 2>/dev/null
wait "$RELAY_PID" 2>/dev/null
RELAY_PID=

# ---------------------------------------------------------------- the mouse (--mouse)
start_dashboard --mouse
wait_for "$B" || fail "mouse dashboard starts"
# rows: 0 header, 1 border, 2 headings, 3 first session ($B, the newer), 4 $A
click() { tm send-keys -t dash -l "$(printf '\033[M%b%b%b' "\\x$(printf %x $((32 + $1)))" \
  "\\x$(printf %x $((33 + $2)))" "\\x$(printf %x $((33 + $3)))")"; }
poll 100 selected_is "$B" || { fail "the first session is selected first"; screen >&2; }
click 0 5 4
poll 100 selected_is "$A" && ok "--mouse: a click selects the row" || { fail "click"; screen >&2; }
tm send-keys -t dash q
wait_for 'READY$' || fail "mouse dashboard quits"

# ---------------------------------------------------------------- --read-only
agent_body=$(python3 -c 'import json,sys; print(json.dumps({"action":{"action":"run","args":{"command":sys.argv[1]}}}))' "rm -rf /opt/nothing-$$")
curl -s --max-time 120 -X POST --unix-socket "$SOCK" -H 'Content-Type: application/json' \
  --data-binary "$agent_body" -o "$TMP/agent.json" \
  "http://paddock/v1/sessions/$A_ID/execute_action" >/dev/null 2>&1 &
agent=$!
start_dashboard --read-only
wait_for "[read-only]" || { fail "read-only dashboard starts"; screen >&2; }
wait_for "Approvals (1 waiting)" || fail "the queue shows the waiting action"
tm send-keys -t dash h p
wait_for "read-only dashboard: p" && ok "--read-only refuses p with a message" ||
  { fail "read-only p"; screen >&2; }
tm send-keys -t dash S
wait_for "read-only dashboard: S" || fail "read-only S"
tm send-keys -t dash D
wait_for "read-only dashboard: D" || fail "read-only D"
screen | grep -q "Delete session" && fail "read-only D asked anyway"
tm send-keys -t dash c
wait_for "read-only dashboard: c" || fail "read-only c"
screen | grep -q "New session" && fail "read-only c opened the form"
cmd "pause $A"
wait_for "read-only dashboard: :pause" || fail "read-only :pause"
tm send-keys -t dash 2 y
wait_for "read-only dashboard: y" && ok "--read-only refuses y" || { fail "read-only y"; screen >&2; }
sleep 0.3 # y was handled (refused): a grace period for a change that must NOT come
[ "$(state_of "$A_ID")" = ready ] && [ "$(state_of "$B_ID")" = ready ] &&
  [ "$(api GET /v1/approvals | json_get '["approvals"].__len__()')" = 1 ] &&
  ok "--read-only: nothing changed (states, the queue)" || fail "read-only changed something"
screen | tail -n 1 | grep -qE "c new|p/u|D delete" && fail "read-only footer offers mutating keys" ||
  ok "--read-only: the footer offers no key that changes anything"
tm send-keys -t dash q
wait_for 'READY$' || fail "read-only dashboard quits"
id=$(api GET /v1/approvals | json_get '["approvals"][0]["id"]')
api POST "/v1/actions/$id/reject" '{"reason":"test over"}' >/dev/null
wait "$agent"

# ---------------------------------------------------------------- a bad theme file
mkdir -p "$TMP/.config/paddock/themes"
printf 'header = black cyan\nfooter = purple default\n' >"$TMP/.config/paddock/themes/bad.theme"
start_dashboard --theme bad
poll 100 test -s "$TMP/dash.err"
if wait_for 'READY$' &&
  grep -qF "paddock: $TMP/.config/paddock/themes/bad.theme:2: unknown colour 'purple'" "$TMP/dash.err"; then
  ok "a bad theme file is refused at start, naming the file and the line"
else
  fail "bad theme: $(cat "$TMP/dash.err")"; screen >&2
fi
: >"$TMP/dash.err" # that message went to stderr on purpose

[ -s "$TMP/dash.err" ] && { fail "the dashboard wrote to stderr"; cat "$TMP/dash.err" >&2; }
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
