#!/usr/bin/env bash
# The dashboard end to end, driven through a private tmux server against a real engine.
#
#   tests/tui/dashboard_test.sh [PATH/TO/paddock]        (or PADDOCK_EXE=...)
#
# Starts `paddock serve` on a temp state dir, creates a session and runs two actions with curl,
# opens the dashboard in tmux and reads the screen with capture-pane: the session and its
# actions show, a third action appears live, `?` shows the help, a too-small terminal says so,
# `q` quits with the terminal restored; then SIGTERM to a second dashboard also restores the
# terminal. Cleans up what it started (session, engine by PID, tmux server, temp dir).
# Needs dockerd and the image paddock/base:local: without them it FAILS (exit 1), or skips
# (exit 77) with PADDOCK_ALLOW_SKIP=1.
set -uo pipefail
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"

start_engine || { fail "engine answers GET /v1/info"; exit 1; }
ok "engine started (pid $ENGINE_PID)"

NAME=tui-$$
create_session "$NAME" || exit 1
ok "session $SESSION_ID created"

if run_action "echo hi" && run_action "echo second-$$"; then
  ok "two actions ran through POST /v1/sessions/{id}/execute_action"
else
  fail "actions ran: $(cat "$TMP/status") $(cat "$TMP/reply")"
  exit 1
fi

open_tmux || exit 1
start_dashboard
short=${SESSION_ID:0:8}
if wait_for "$NAME" && wait_for "$short" && wait_for "paddock " && wait_for "● live"; then
  ok "dashboard shows the session ($short $NAME) and the engine link"
else
  fail "dashboard shows the session"; screen >&2
fi
show_tab Actions SUMMARY # Overview is the first tab
if wait_for "echo hi" && wait_for "echo second-$$"; then
  ok "dashboard shows the actions (echo hi, echo second-$$)"
else
  fail "dashboard shows the actions"; screen >&2
fi
screen | grep -F "$short" | grep -qF ready && ok "session state shown (ready)" ||
  { fail "session row shows state ready"; screen >&2; }
# AGE: since the session was created, right after the state (seconds here, or minutes when
# the machine was slow enough to take one getting this far).
if screen | grep -qE 'STATE +AGE' && screen | grep -F "$short" | grep -qE 'ready +[0-9]+[sm] '; then
  ok "the sessions list has an AGE column counting since creation"
else
  fail "AGE column"; screen >&2
fi

# A third action while the dashboard is open: it appears without a key press.
run_action "echo live-$$" &
action_pid=$!
if wait_for "echo live-$$" 150; then
  ok "an action run while the dashboard is open appears live"
else
  fail "live action appears"; screen >&2
fi
wait "$action_pid" || fail "the live action ran"
live_done() { screen | grep -F "echo live-$$" | grep -qF done; }
poll 100 live_done && ok "the live action's state turns to done" ||
  { fail "live action reaches done"; screen >&2; }

# Hostile text from the sandbox side (security.md I06, I07, I09, I11): the command carries a
# title change (OSC 0), a clipboard write (OSC 52), an erase (CSI 2J) and a bidi override.
# The dashboard shows them as visible tokens; the terminal's title and clipboard stay untouched.
title_before=$(flag pane_title)
hostile=$(printf "echo '\033]0;pwned\007\033]52;c;eA==\007\033[2J\342\200\256x%s'" $$)
run_action "$hostile" || fail "hostile action ran: $(cat "$TMP/status")"
# (the summary column may cut the line's end, after the tokens: its width is what the Actions
# tab's other columns leave)
if wait_for "<U+202E>x" && screen | grep -F "<U+202E>x" |
  grep -qF "echo '^[]0…^[]52…^[[2J<U+202E>x"; then
  ok "escape sequences and bidi controls in a command are shown as visible tokens"
else
  fail "hostile command shown sanitized"; screen >&2
fi
[ "$(flag pane_title)" = "$title_before" ] && ok "the terminal title is untouched (OSC 0)" ||
  fail "pane title changed to '$(flag pane_title)'"
tm show-buffer >/dev/null 2>&1 && fail "a tmux paste buffer appeared (OSC 52)" ||
  ok "no clipboard write reached the terminal (OSC 52)"

# The engine goes away: the header says so; it comes back: the dashboard reconnects by itself.
stop_engine
wait_for "engine disconnected" 50 && ok "the header shows 'engine disconnected' when the engine stops" ||
  { fail "engine disconnected shown"; screen >&2; }
if start_engine && wait_for "● live" 50 && wait_for "$NAME"; then
  ok "the dashboard reconnects when the engine is back (pid $ENGINE_PID)"
else
  fail "reconnect after engine restart"; screen >&2
fi

tm send-keys -t dash '?'
if wait_for "Keys" && wait_for "show or hide this help" && wait_for "quit"; then
  ok "? shows the help overlay from the key table"
else
  fail "? shows help"; screen >&2
fi
tm send-keys -t dash Escape
wait_gone "show or hide this help" && ok "a key closes the help" || { fail "help closes"; screen >&2; }

tm resize-window -t dash -x 50 -y 12
wait_for "terminal too small: have 50x12, need 60x15" && ok "a too-small terminal says so" ||
  { fail "too-small message"; screen >&2; }
tm resize-window -t dash -x 160 -y 32
wait_for "$NAME" && ok "resizing back lays the dashboard out again" ||
  { fail "relayout after resize"; screen >&2; }

tm send-keys -t dash q
if terminal_restored && wait_for 'READY$'; then
  ok "q quits and restores the terminal (alternate screen off, cursor on, keypad off)"
else
  fail "q restores the terminal (alternate_on=$(flag alternate_on) cursor=$(flag cursor_flag))"
  screen >&2
fi
tm send-keys -t dash -l 'echo "rc=$?"'
tm send-keys -t dash Enter
wait_for "rc=0" && ok "the dashboard exited 0" || { fail "exit code 0 after q"; screen >&2; }

# ---------------------------------------------------------------- SIGTERM restores the terminal
start_dashboard
dash_pid=$(cat "$TMP/dash.pid" 2>/dev/null)
if [ -n "$dash_pid" ] && wait_for "$NAME" && [ "$(flag alternate_on)" = 1 ]; then
  kill -TERM "$dash_pid"
  if terminal_restored && wait_for 'READY$'; then
    ok "SIGTERM to the dashboard restores the terminal"
  else
    fail "SIGTERM restores the terminal (alternate_on=$(flag alternate_on))"; screen >&2
  fi
  tm send-keys -t dash -l 'echo "rc=$?"'
  tm send-keys -t dash Enter
  wait_for "rc=143" && ok "the dashboard exited 143 (128 + SIGTERM) after cleaning up" ||
    { fail "exit code 143 after SIGTERM"; screen >&2; }
else
  fail "second dashboard started (pid '$dash_pid')"; screen >&2
fi

if [ -s "$TMP/dash.err" ]; then
  fail "the dashboard wrote to stderr"; cat "$TMP/dash.err" >&2
fi

# ---------------------------------------------------------------- paddock exec in tmux
# An interactive shell in the sandbox without the dashboard: typing runs in the sandbox, the
# window size follows tmux's, Ctrl-C goes to the sandbox, `exit 5` returns 5 to the outer shell.
CID=$(api GET "/v1/sessions/$SESSION_ID" | json_get '["container_id"]')
tm new-window -t dash -n ex "bash --norc --noprofile"
exs() { tm capture-pane -p -t dash:ex; }
ex_has() { local s; s=$(exs) && grep -qE -- "$1" <<<"$s"; }
wait_ex() { poll "${2:-100}" ex_has "$1"; } # wait_ex REGEX [TRIES]
tm send-keys -t dash:ex -l "PS1='OUTER\$ '; $PADDOCK --socket $SOCK --state-dir $TMP/state exec $NAME; echo EXEC-RC=\$?"
tm send-keys -t dash:ex Enter
if wait_ex 'agent@.*workspace' 100; then
  ok "paddock exec opened a login shell in the sandbox"
  tm send-keys -t dash:ex -l 'echo hi-$((40+2))'
  tm send-keys -t dash:ex Enter
  wait_ex '^hi-42$' && ok "typing 'echo hi' in the exec terminal shows hi" || { fail "exec echo"; exs >&2; }
  # ^C is sent once the sleep runs (seen in the container), not after a guessed delay.
  tm send-keys -t dash:ex -l 'sleep 100'
  tm send-keys -t dash:ex Enter
  poll 100 container_running "$CID" '^sleep 100' || fail "the sleep runs in the sandbox"
  tm send-keys -t dash:ex C-c
  tm send-keys -t dash:ex -l 'echo after-ctrl-c'
  tm send-keys -t dash:ex Enter
  wait_ex '^after-ctrl-c$' && ok "Ctrl-C reaches the sandbox's shell, the terminal stays" ||
    { fail "Ctrl-C in exec"; exs >&2; }
  # The new size reaches the sandbox's tty asynchronously: stty size is asked again until it
  # tells (each answer waited for), not after a guessed delay.
  tm resize-window -t dash:ex -x 97 -y 31 2>/dev/null
  stty_says() {
    tm send-keys -t dash:ex -l 'stty size'
    tm send-keys -t dash:ex Enter
    wait_ex "^$1\$" 10
  }
  poll 20 stty_says '31 97' && ok "the exec terminal follows a resize (stty size 31 97)" ||
    { fail "exec resize"; exs >&2; }
  tm send-keys -t dash:ex -l 'exit 5'
  tm send-keys -t dash:ex Enter
  wait_ex '^EXEC-RC=5$' && ok "exit 5 in the sandbox: paddock exec returns 5 to the outer shell" ||
    { fail "exec exit code"; exs >&2; }
  tm send-keys -t dash:ex -l 'stty -a | grep -o " icanon" ; echo CANON-CHECKED'
  tm send-keys -t dash:ex Enter
  wait_ex '^ icanon$' && ok "the local terminal is back in canonical mode after exec" ||
    { fail "terminal mode restored after exec"; exs >&2; }
else
  fail "paddock exec shows the sandbox's prompt"; exs >&2
fi
out=$(printf 'echo piped-$((3*3))\nexit 6\n' | "$PADDOCK" --socket "$SOCK" --state-dir "$TMP/state" exec "$NAME")
rc=$?
[ "$out" = "piped-9" ] && [ $rc = 6 ] && ok "piped input to paddock exec: the output alone and the exit code" ||
  fail "piped exec: '$out' rc=$rc"

# ---------------------------------------------------------------- cleanup
api DELETE "/v1/sessions/$SESSION_ID" >/dev/null
[ "$(cat "$TMP/status")" = 200 ] && { ok "session deleted"; SESSION_IDS=(); } ||
  fail "DELETE /v1/sessions/$SESSION_ID: $(cat "$TMP/status") $(cat "$TMP/reply")"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
