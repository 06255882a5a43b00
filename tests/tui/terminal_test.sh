#!/usr/bin/env bash
# The dashboard's Terminal tab end to end, driven through a private tmux server against a real
# engine and sandbox.
#
#   tests/tui/terminal_test.sh [PATH/TO/paddock]        (or PADDOCK_EXE=...)
#
# Switching to the tab opens nothing; Enter opens a shell in the sandbox inside the pane:
# typing `echo hi` shows hi, Tab, Esc and Ctrl-C reach the shell (Ctrl-C interrupts a sleep and
# the dashboard stays), ^] gives the keys back to the dashboard, a tmux resize reaches the
# shell's tty (stty size), hostile output stays inside the pane (the outer title and
# clipboard untouched), Shift-PgUp scrolls back, `exit 7` is shown with its code and Enter
# opens a new shell, a shell left (^], another session, another tab) is the same shell when
# coming back, x hangs it up, a refusal (paused session) is shown; 256
# colours and RGB reach the outer terminal as the nearest it has (and 8 on TERM=screen); `a`
# shows the agent's own shell live (an action run through the API appears with its output). Needs dockerd and the image
# paddock/base:local: without them it FAILS (exit 1), or skips (exit 77) with
# PADDOCK_ALLOW_SKIP=1.
set -uo pipefail
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"

RELAY_PID=
trap '[ -n "$RELAY_PID" ] && kill "$RELAY_PID" 2>/dev/null; cleanup' EXIT

start_engine || { fail "engine answers GET /v1/info"; exit 1; }
ok "engine started (pid $ENGINE_PID)"
NAME=term-$$
create_session "$NAME" || exit 1
ok "session $SESSION_ID created"
CID=$(api GET "/v1/sessions/$SESSION_ID" | json_get '["container_id"]')

# terminal_events: the session's terminal lifecycle events, one detail a line
terminal_events() {
  api GET "/v1/sessions/$SESSION_ID/events" |
    python3 -c 'import json,sys; [print(e["detail"]) for e in json.load(sys.stdin)["events"] if e["kind"] == "terminal"]'
}
# type_line TEXT: literal text, then Enter, once the pane takes keys for a shell (its border
# says ^] leaves); otherwise nothing is typed: text meant for a shell that is gone would reach
# the dashboard as keys (the q of "seq" quits it).
type_line() {
  wait_for "^] leaves" || { fail "no shell takes keys to type '$1'"; return 1; }
  tm send-keys -t dash -l "$1"
  tm send-keys -t dash Enter
}
# count_lines TEXT: how many pane lines hold exactly TEXT inside the detail pane's border
count_lines() { screen | grep -cE "│$1 *│\$"; }
lines_at_least() { [ "$(count_lines "$1")" -ge "$2" ]; }
wait_lines() { poll "${3:-100}" lines_at_least "$1" "$2"; } # wait_lines TEXT N [TRIES]

# to_terminal_tab: ] until the tab bar shows the Terminal tab (the tab order may grow), and its
# hint
to_terminal_tab() { show_tab Terminal "Enter opens a shell"; }
# colour_check FG BG: coloured output in the shell reaches the outer terminal as the nearest
# colours it has (the SGR parameters FG before RGB red, BG before index 21); bold, underline
# and reverse kept.
colour_check() {
  type_line "printf '\\e[38;2;255;0;0mRGBRED\\e[0m \\e[48;5;21mIDX21\\e[0m \\e[1;4;7mATTRS\\e[0m\\n'"
  wait_lines 'RGBRED IDX21 ATTRS' 1 || return 1
  local line esc=$'\e' sgr
  sgr="($esc\\[[0-9;]*m)*"
  line=$(tm capture-pane -e -p -t dash | grep -a 'RGBRED' | tail -n 1) # the output, not the command
  printf '%s' "$line" | grep -qaE "$esc\\[$1m${sgr}RGBRED" &&
    printf '%s' "$line" | grep -qaE "$esc\\[$2m${sgr}IDX21" &&
    printf '%s' "$line" | grep -qaE "$esc\\[1;4;7m${sgr}ATTRS"
}

# The dashboard talks to the engine through the relay (tests/tui/relay.py), which writes down
# each request it passes on: what r asks for is seen reaching the engine.
: >"$TMP/requests"
python3 "$TUI_DIR/relay.py" "$OPSOCK" "$TMP/relay.sock" "$TMP/requests" &
RELAY_PID=$!
poll 50 test -S "$TMP/relay.sock" || { fail "the relay listens"; exit 1; }

open_tmux 160 32 || exit 1
start_dashboard --operator-socket "$TMP/relay.sock"
wait_for "$NAME" && wait_for "● live" || { fail "dashboard shows the session"; screen >&2; exit 1; }

if to_terminal_tab && wait_for "a shows the agent's own shell"; then
  ok "the Terminal tab shows how to open a shell"
else
  fail "Terminal tab reached"; screen >&2; exit 1
fi
sleep 0.3 # the tab is on show: a grace period for a shell that must NOT be opened
[ -z "$(terminal_events)" ] && ok "switching to the tab opens no shell" ||
  fail "a terminal was opened on a mere tab switch: $(terminal_events)"

tm send-keys -t dash l
tm send-keys -t dash Enter
if wait_for 'workspace$' 150 && wait_for "^] leaves"; then
  ok "Enter opens a login shell in the sandbox inside the pane; the border says ^] leaves"
else
  fail "shell prompt in the pane"; screen >&2; exit 1
fi

type_line 'echo hi-$((40+2))'
wait_lines 'hi-42' 1 && ok "typing 'echo hi' in the terminal pane shows hi" ||
  { fail "echo in the pane"; screen >&2; }

# Tab: bash completes "ech" to "echo".
tm send-keys -t dash -l 'ech'
tm send-keys -t dash Tab
tm send-keys -t dash -l ' tab-$((1+1))'
tm send-keys -t dash Enter
wait_lines 'tab-2' 1 && ok "Tab reaches the shell (completion)" || { fail "Tab completion"; screen >&2; }

# Esc: readline's Esc . inserts the last argument of the previous line.
type_line 'echo esc-probe'
wait_lines 'esc-probe' 1
tm send-keys -t dash -l 'echo '
tm send-keys -t dash Escape
tm send-keys -t dash -l '.'
tm send-keys -t dash Enter
wait_lines 'esc-probe' 2 && ok "Esc reaches the shell (Esc . yanks the last argument)" ||
  { fail "Esc in the pane"; screen >&2; }

# Ctrl-C interrupts a sleep in the sandbox; the dashboard stays.
type_line 'sleep 100'
wait_for 'sleep 100'
# the sleep must be running when ^C comes: seen in the container, not after a guessed delay
poll 100 container_running "$CID" '^sleep 100' || fail "the sleep runs in the sandbox"
tm send-keys -t dash C-c
type_line 'echo after-ctrl-$((2*3))'
if wait_lines 'after-ctrl-6' 1 50 && wait_for "● live"; then
  ok "Ctrl-C interrupts a sleep in the sandbox; the dashboard stays"
else
  fail "Ctrl-C in the pane"; screen >&2
fi

# Hostile output: OSC 52 (clipboard) and OSC 0 (title) stay inside the pane.
title_before=$(flag pane_title)
type_line "printf '\\e]52;c;SGVsbG8=\\a\\e]0;pwned\\a'; echo hostile-\$((5*5))"
wait_lines 'hostile-25' 1 || { fail "hostile printf ran"; screen >&2; }
[ "$(flag pane_title)" = "$title_before" ] && ok "the outer terminal's title is untouched (OSC 0 in the shell)" ||
  fail "pane title changed to '$(flag pane_title)'"
tm show-buffer >/dev/null 2>&1 && fail "a tmux paste buffer appeared (OSC 52 from the shell)" ||
  ok "no clipboard write reached the outer terminal (OSC 52 in the shell)"

colour_check '38;5;196' '48;5;21' &&
  ok "256 colours: RGB red is drawn as colour 196, index 21 as itself; bold, underline, reverse kept" ||
  { fail "colours on a 256-colour terminal"; tm capture-pane -e -p -t dash | grep -a RGBRED | cat -v >&2; }

# Resize: the pane's inside is the shell's tty. At 120x40: left column 54, so the detail pane
# is 66 wide (64 inside) and 38 high (36 inside).
# The new size reaches the shell asynchronously: stty size is asked again until it tells (each
# answer waited for).
stty_says() { type_line 'stty size'; wait_lines "$1" 1 10; }
tm resize-window -t dash -x 120 -y 40
poll 20 stty_says '36 64' && ok "a tmux resize reaches the shell's tty (stty size 36 64)" ||
  { fail "resize follows the pane"; screen >&2; }
tm resize-window -t dash -x 160 -y 32
poll 20 stty_says '28 94' && ok "and back (stty size 28 94)" || { fail "resize back"; screen >&2; }

# Scrollback: Shift-PgUp while typing.
type_line 'seq -f sb-%g 1 300'
wait_lines 'sb-300' 1 || { fail "seq output"; screen >&2; }
for _ in 1 2 3 4; do tm send-keys -t dash S-PPage; done
if wait_for "scrolled back" && wait_gone "sb-300" && screen | grep -qE '│sb-1[0-9][0-9] '; then
  ok "Shift-PgUp scrolls back through the shell's output"
else
  fail "scrollback"; screen >&2
fi
tm send-keys -t dash -l 'echo back-$((3*3))'
tm send-keys -t dash Enter
wait_lines 'back-9' 1 && wait_gone "scrolled back" && ok "typing returns to the newest lines" ||
  { fail "typing after scrolling back"; screen >&2; }

# ^] gives the keys back: the dashboard's own keys work, typing goes nowhere near the shell.
tm send-keys -t dash C-]
wait_for "Enter types" || { fail "^] leaves the shell"; screen >&2; }
tm send-keys -t dash '?'
if wait_for "show or hide this help"; then
  ok "^] leaves the shell: the dashboard's keys work again (? shows the help)"
else
  fail "? after ^]"; screen >&2
fi
tm send-keys -t dash Escape
wait_gone "show or hide this help" || fail "help closes"
tm send-keys -t dash l
wait_for "Enter types" && ok "back in the pane without typing: the border says Enter types" ||
  { fail "hint after coming back"; screen >&2; }
tm send-keys -t dash Enter
wait_for "^] leaves" || fail "Enter types again"
type_line 'echo again-$((4*4))'
wait_lines 'again-16' 1 && ok "Enter types into the same shell again" || { fail "typing again"; screen >&2; }

# r refetches everything but keeps the open shell: its state is still there afterwards.
type_line 'export KEPT=still-$((3*3))'
tm send-keys -t dash C-]
wait_for "Enter types" || fail "^] before r"
sessions_asked() { grep -c '^GET /v1/sessions$' "$TMP/requests"; }
asked_again() { [ "$(sessions_asked)" -gt "$1" ]; }
asked=$(sessions_asked)
tm send-keys -t dash r
poll 100 asked_again "$asked" || fail "r asks the engine for the sessions again"
tm send-keys -t dash l
wait_for "Enter types" || fail "back in the pane after r"
tm send-keys -t dash Enter
wait_for "^] leaves" || fail "Enter types after r"
type_line 'echo "kept:$KEPT"'
wait_lines 'kept:still-9' 1 && ok "r (refetch) keeps the open shell: its variable is still set" ||
  { fail "the shell survives r"; screen >&2; }

# The shell ends: how it ended is shown; Enter opens a new one.
type_line 'exit 7'
if wait_for "the shell exited with code 7" 100 && wait_for "Enter opens a shell"; then
  ok "the shell's end is shown with its exit code (7)"
else
  fail "shell end shown"; screen >&2
fi
tm send-keys -t dash Enter
type_line 'echo new-$((5+5))'
opened_twice() { opened=$(terminal_events | grep -c '^opened'); [ "$opened" -ge 2 ]; }
opened=
wait_lines 'new-10' 1 100 && poll 100 opened_twice && ok "Enter opens a new shell after the end" ||
  { fail "reopen after exit (opened $opened)"; screen >&2; }

# The agent's own shell: read-only, live.
tm send-keys -t dash C-]
tm send-keys -t dash l
wait_for "Enter types" || fail "^] then l"
tm send-keys -t dash a
wait_for "agent's shell, read-only" && ok "a shows the agent's shell (read-only)" ||
  { fail "agent view"; screen >&2; }
run_action "echo agent-$$-\$((6*7)); echo second-line" &
action_pid=$!
if wait_for "\$ echo agent-$$-\$((6*7)); echo second-line" 150 && wait_lines "agent-$$-42" 1 150 &&
  wait_lines "second-line" 1; then
  ok "an action run through the API appears live in the agent's shell with its output"
else
  fail "agent action in the agent view"; screen >&2
fi
wait "$action_pid" || fail "the agent's action ran"
tm send-keys -t dash -l 'zzz'
sleep 0.3 # a grace period for keys that must NOT show anywhere
screen | grep -qF 'zzz' && fail "keys typed in the agent view went somewhere" ||
  ok "keys in the agent's view go nowhere"
tm send-keys -t dash a
wait_for "Enter types" && ok "a goes back to your shell" || { fail "a back"; screen >&2; }

# A detached shell keeps running whatever the selection does: moving to another session and
# back (j, k), or to another tab and back, shows the same shell, its screen as it was and its
# variable still set, and the engine records no close; x hangs it up.
MAIN_ID=$SESSION_ID
create_session "$NAME-b" || exit 1
OTHER_ID=$SESSION_ID
SESSION_ID=$MAIN_ID
wait_for "$NAME-b" || fail "the second session is listed"
closed_before=$(terminal_events | grep -c '^closed')
# the newest session is listed first (its name in the detail pane's title): the top one,
# then this one, whose shell is still open
tm send-keys -t dash h k k
wait_for "─ $NAME-b " || { fail "the top session is the new one"; screen >&2; }
tm send-keys -t dash j
wait_for "Enter types" || { fail "back on the first session"; screen >&2; }
tm send-keys -t dash l Enter
wait_for "^] leaves" || fail "Enter types before detaching"
# a marker, and output (7 MB, more than every buffer on the way holds) that starts once the
# shell is no longer shown (on /tmp/go): it finishes only if the hidden shell is still read
type_line 'export MARK=mark-$((6*7)); (until [ -e /tmp/go ]; do sleep 0.1; done; seq 1 1000000; touch /tmp/bg-done; echo bg-end-$((3*3))) &'
tm send-keys -t dash C-]
wait_for "the shell keeps running" || { fail "^] says the shell keeps running"; screen >&2; }
tm send-keys -t dash k
wait_for "─ $NAME-b " && wait_for "Enter opens a shell" ||
  { fail "k selects the other session"; screen >&2; }
run_action 'touch /tmp/go' || fail "the output starts"
poll 600 run_action 'test -e /tmp/bg-done' &&
  ok "a shell not shown keeps running: its 7 MB of output were read" ||
  fail "the hidden shell's output was not read (its command did not finish)"
tm send-keys -t dash j
if wait_for "Enter types" && wait_lines 'bg-end-9' 1 600; then
  ok "k then j: the session's shell is still there, its screen up to date"
else
  fail "the shell survives a selection change"; screen >&2
fi
tm send-keys -t dash '['
wait_gone "Enter types" || fail "[ leaves the Terminal tab"
tm send-keys -t dash ']'
wait_for "Enter types" && wait_lines 'bg-end-9' 1 600 && ok "another tab and back: the same screen" ||
  { fail "the shell survives a tab change"; screen >&2; }
tm send-keys -t dash l
tm send-keys -t dash Enter
wait_for "^] leaves" || fail "Enter types into the kept shell"
type_line 'echo "mark:$MARK"'
wait_lines 'mark:mark-42' 1 && ok "Enter types into the same shell: its variable is still set" ||
  { fail "the same shell after coming back"; screen >&2; }
[ "$(terminal_events | grep -c '^closed')" = "$closed_before" ] &&
  ok "no terminal was closed while the selection moved" ||
  fail "a terminal was closed: $(terminal_events | tail -n 3)"
tm send-keys -t dash C-]
tm send-keys -t dash l
wait_for "Enter types" || fail "back in the pane before x"
tm send-keys -t dash x
closed_more() { [ "$(terminal_events | grep -c '^closed')" -gt "$closed_before" ]; }
poll 100 closed_more && wait_for "hung up" && ok "x hangs the shell up" ||
  { fail "x hangs up: $(terminal_events | tail -n 2)"; screen >&2; }
api DELETE "/v1/sessions/$OTHER_ID" >/dev/null
[ "$(cat "$TMP/status")" = 200 ] || fail "DELETE the second session: $(cat "$TMP/status")"
tm send-keys -t dash '['

# A session that cannot take a shell (paused): the engine's refusal is shown in the pane.
api POST "/v1/sessions/$SESSION_ID/pause" >/dev/null
[ "$(cat "$TMP/status")" = 200 ] || fail "pause: $(cat "$TMP/status") $(cat "$TMP/reply")"
to_terminal_tab || fail "back to the Terminal tab"
tm send-keys -t dash Enter
wait_for "cannot open a shell" && screen | grep -F "cannot open a shell" | grep -qi "paused" &&
  ok "a refused shell (paused session) says why in the pane" || { fail "refusal shown"; screen >&2; }
api POST "/v1/sessions/$SESSION_ID/resume" >/dev/null
[ "$(cat "$TMP/status")" = 200 ] || fail "resume: $(cat "$TMP/status") $(cat "$TMP/reply")"

tm send-keys -t dash q
if terminal_restored && wait_for 'READY$'; then
  ok "q quits and restores the terminal"
else
  fail "q restores the terminal"; screen >&2
fi

# An 8-colour terminal: the same output folded to the nearest of its colours.
tm send-keys -t dash -l 'export TERM=screen' # to the outer shell
tm send-keys -t dash Enter
start_dashboard
wait_for "$NAME" && to_terminal_tab || { fail "dashboard on TERM=screen"; screen >&2; }
tm send-keys -t dash l
tm send-keys -t dash Enter
wait_for 'workspace$' 150 || fail "shell on TERM=screen"
colour_check '31' '44' &&
  ok "8 colours: RGB red is drawn as red, index 21 as blue" ||
  { fail "colours on an 8-colour terminal"; tm capture-pane -e -p -t dash | grep -a RGBRED | cat -v >&2; }
tm send-keys -t dash C-]
tm send-keys -t dash q
terminal_restored || fail "the second dashboard quits"

if [ -s "$TMP/dash.err" ]; then
  fail "the dashboard wrote to stderr"; cat "$TMP/dash.err" >&2
fi

api DELETE "/v1/sessions/$SESSION_ID" >/dev/null
[ "$(cat "$TMP/status")" = 200 ] && { ok "session deleted"; SESSION_IDS=(); } ||
  fail "DELETE /v1/sessions/$SESSION_ID: $(cat "$TMP/status") $(cat "$TMP/reply")"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
