#!/usr/bin/env bash
# The dashboard's small frictions a new user hit (issue 18), each end to end in tmux against a
# real engine:
#
#   tests/tui/frictions_test.sh [PATH/TO/paddock]        (or PADDOCK_EXE=...)
#
# - `:p` (a start of "pause") asks y/n before it pauses; n leaves the session ready, y pauses
#   it; the full name (`:resume`) runs at once.
# - The create form keeps everything typed when the engine refuses a value (memory 10m): the
#   memory field is marked, the engine's reason shown; corrected, the same form creates it.
# - `d` says that D deletes; the message goes when the tab changes (no stale footer).
# - The Actions tab has an ID column with the action's id.
# - `t` opens the shell at once (no extra Enter).
# - The Changes tab hides .git internals (`.` shows and hides them); a filter survives a
#   visit to the action opened from the filtered list.
set -uo pipefail
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"

start_engine || { fail "engine answers GET /v1/info"; exit 1; }
NAME=fr-$$
create_session "$NAME" || exit 1
SID=$SESSION_ID
run_action "git init -q /workspace/r && echo x > /workspace/r/a.txt" || fail "git init in the sandbox"
w=$(api POST "/v1/sessions/$SID/execute_action" '{"action":{"action":"write","args":{"path":"/workspace/r/w.txt","content":"written\n"}}}')
[ "$(cat "$TMP/status")" = 200 ] || fail "the write action: $(cat "$TMP/status") $w"
WRITE_ID=$(api GET "/v1/sessions/$SID/actions" | python3 -c 'import json,sys
print(next(a["id"] for a in json.load(sys.stdin)["actions"] if a.get("kind") == "write"))')
ok "session $NAME with a git repository and a written file"

state_of() { api GET "/v1/sessions/$1" | json_get '["state"]' 2>/dev/null; }
state_is() { [ "$(state_of "$1")" = "$2" ]; }
footer() { screen | tail -1; }
command_line() { tm send-keys -t dash :; tm send-keys -t dash -l "$1"; tm send-keys -t dash Enter; }

open_tmux 160 40 || exit 1
start_dashboard
wait_for "$NAME" && wait_for "live" || { fail "the dashboard shows the session"; screen >&2; exit 1; }

# ---------------------------------------------------------------- :p asks first
command_line p
if wait_for "run :pause ?"; then
  ok ":p asks before it pauses (the question names :pause whole)"
else
  fail ":p asks"; screen >&2
fi
tm send-keys -t dash n
wait_gone "run :pause ?" && wait_for "cancelled" || fail "n closes the question"
sleep 0.5 # n was handled (the question is gone): time for a pause that must NOT happen
state_is "$SID" ready && ok "n: the session stays ready" || fail "after n the session is $(state_of "$SID")"
command_line "pa $NAME"
wait_for "run :pause $NAME ?" || { fail ":pa NAME asks"; screen >&2; }
tm send-keys -t dash y
poll 100 state_is "$SID" paused && ok "y: :pa NAME pauses it" || fail "after y the session is $(state_of "$SID")"
command_line "resume $NAME"
poll 100 state_is "$SID" ready && ok ":resume (the full name) runs at once" ||
  { fail ":resume runs at once (state $(state_of "$SID"))"; screen >&2; }
screen | grep -qF "run :resume" && fail ":resume asked"

# ---------------------------------------------------------------- the form keeps its input
tm send-keys -t dash c
wait_for "New session" || { fail "c opens the form"; screen >&2; }
tm send-keys -t dash Tab
tm send-keys -t dash -l "kept-$$"
tm send-keys -t dash Tab
tm send-keys -t dash -l "10m"
tm send-keys -t dash Tab
tm send-keys -t dash -l "1.5"
tm send-keys -t dash Enter
if wait_for "the engine refused" && wait_for "New session"; then
  s=$(screen)
  grep -qE "name +kept-$$" <<<"$s" && grep -qE "memory.*10m" <<<"$s" && grep -qE "cpus +1.5" <<<"$s" &&
    ok "a value the engine refuses: the form stays with everything typed" ||
    { fail "the form keeps the input"; screen >&2; }
  grep -qE "memory +✗" <<<"$s" && ok "the refused field (memory) is marked" ||
    { fail "memory marked"; screen >&2; }
  grep -qF "memory" <<<"$(grep -F "the engine refused" <<<"$s")" &&
    ok "the form says why (the engine's reason names memory)" || fail "why shown"
else
  fail "the form stays open after the engine refused memory 10m"; screen >&2
fi
tm send-keys -t dash BSpace BSpace BSpace
tm send-keys -t dash -l "256m"
tm send-keys -t dash Enter
if wait_gone "New session" 150 && wait_for "kept-$$" 150; then
  ok "corrected, the same form creates the session"
else
  fail "the corrected form creates the session"; screen >&2
fi
KEPT_ID=$(api GET /v1/sessions | python3 -c 'import json,sys
for s in json.load(sys.stdin)["sessions"]:
    if s.get("name") == sys.argv[1]: print(s["id"])' "kept-$$")
[ -n "$KEPT_ID" ] && SESSION_IDS+=("$KEPT_ID") # deleted at exit
mem=$(api GET "/v1/sessions/$KEPT_ID" | json_get '["options"]["limits"]["memory"]' 2>/dev/null)
[ "$mem" = 268435456 ] && ok "its memory is the corrected 256m" || fail "memory of the new session: $mem"

# back to the first session
tm send-keys -t dash Escape 1
tm send-keys -t dash :
tm send-keys -t dash -l "filter $NAME"
tm send-keys -t dash Enter
wait_for "Sessions (1 of" || { fail "filtered to $NAME"; screen >&2; }

# ---------------------------------------------------------------- d, and stale messages
tm send-keys -t dash d
wait_for "D deletes the selected session" && ok "d says that D deletes" || { fail "d says D deletes"; screen >&2; }
tm send-keys -t dash ']'
wait_gone "D deletes the selected session" && ok "the message goes when the tab changes" ||
  { fail "a stale footer message after a tab switch"; screen >&2; }

# ---------------------------------------------------------------- Actions: an ID column
tm send-keys -t dash l
if show_tab Actions "git init"; then
  s=$(screen)
  grep -qE "│ +ID +TIME" <<<"$s" && grep -qE "│ +$WRITE_ID +[0-9]{2}:[0-9]{2}" <<<"$s" &&
    ok "the Actions tab has an ID column ($WRITE_ID on the write's row)" ||
    { fail "Actions ID column (write $WRITE_ID)"; screen >&2; }
else
  fail "the Actions tab lists the actions"; screen >&2
fi

# ---------------------------------------------------------------- Changes: .git hidden, filter kept
if show_tab Changes "/workspace/r/a.txt"; then
  s=$(screen)
  ! grep -qF "/workspace/r/.git" <<<"$s" && grep -qE "[0-9]+ in .git hidden" <<<"$s" &&
    ok "Changes: .git internals are hidden, and how many is said" || { fail ".git hidden"; screen >&2; }
  tm send-keys -t dash .
  wait_for "/workspace/r/.git/" && ok ". shows the .git internals" || { fail ". shows .git"; screen >&2; }
  tm send-keys -t dash .
  wait_gone "/workspace/r/.git/" && ok ". hides them again" || { fail ". hides .git"; screen >&2; }
  tm send-keys -t dash /
  tm send-keys -t dash -l "w.txt"
  tm send-keys -t dash Enter
  wait_gone "/workspace/r/a.txt" && wait_for "/workspace/r/w.txt" || { fail "the filter narrows"; screen >&2; }
  tm send-keys -t dash Enter
  if wait_for "Esc back"; then
    tm send-keys -t dash Escape
    if poll 100 tab_is Changes && wait_for "/workspace/r/w.txt" && wait_for ", /w.txt"; then
      s=$(screen)
      grep -qF "/workspace/r/a.txt" <<<"$s" && fail "back from the action: the filter was cleared" ||
        ok "back from the action opened in a filtered list, the filter is kept"
    else
      fail "back on the Changes tab with its filter"; screen >&2
    fi
  else
    fail "Enter opens the action that wrote w.txt"; screen >&2
  fi
else
  fail "the Changes tab lists the sandbox's files"; screen >&2
fi

# ---------------------------------------------------------------- t: the shell at once
tm send-keys -t dash Escape h t
if wait_for 'workspace$' 150 && wait_for "^] leaves"; then
  ok "t opens the shell at once (its prompt, no Enter pressed)"
else
  fail "t opens the shell at once"; screen >&2
fi
tm send-keys -t dash C-]

tm send-keys -t dash q
terminal_restored && wait_for 'READY$' && ok "q quits" || { fail "q quits"; screen >&2; }
[ -s "$TMP/dash.err" ] && fail "the dashboard wrote to stderr: $(head -c 300 "$TMP/dash.err")"

echo "# $passed passed, $failed failed"
[ "$failed" -eq 0 ]
