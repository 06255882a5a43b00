#!/usr/bin/env bash
# The History page (`3`) end to end, through a private tmux server against a real engine:
# a deleted session shows with state deleted, its actions, its stored log tail and graphs of
# its stored samples; an action's whole observation (hostile output made visible); full-text
# search finds an action by a word of its output and Enter jumps to it in its session;
# filters by state, image and date narrow the list; with pages of 3 (PADDOCK_HISTORY_PAGE)
# the sessions and the actions load their next page only as the selection nears the end.
#
#   tests/tui/history_test.sh [PATH/TO/paddock]        (or PADDOCK_EXE=...)
set -uo pipefail
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"

export PADDOCK_CONFIRM=never # nothing here waits for an operator
start_engine || { fail "engine answers GET /v1/info"; exit 1; }
ok "engine started (pid $ENGINE_PID)"

# Oldest first: p1, p2 (deleted), p3, then OLD (seven actions, deleted): newest first that is
# OLD, p3, p2 | p1, so with pages of 3, p1 is on the second page.
P1=hp1-$$ P2=hp2-$$ P3=hp3-$$ OLD=hold-$$ WORD=wombat$$
create_session "$P1" || exit 1
create_session "$P2" || exit 1
P2_ID=$SESSION_ID
create_session "$P3" || exit 1
create_session "$OLD" || exit 1
OLD_ID=$SESSION_ID
ok "four sessions created"
for c in "echo act1" "echo $WORD" "echo act3" "echo act4" "printf '\\033]0;pwned\\007hostile$$\\n'" \
  "echo act6" "echo act7"; do
  run_action "$c" || fail "action '$c' ran: $(cat "$TMP/status") $(cat "$TMP/reply")"
done
ok "seven actions ran in $OLD"
# Graphs need samples: one a second while the container runs; they are kept after delete.
sampled() {
  n=$(api GET "/v1/sessions/$OLD_ID/stats" | json_get '["samples"].__len__()' 2>/dev/null)
  [ "${n:-0}" -ge 2 ]
}
n=
poll 100 sampled && ok "the engine sampled $OLD ($n samples)" || fail "samples of $OLD: ${n:-none}"
for id in "$P2_ID" "$OLD_ID"; do
  api DELETE "/v1/sessions/$id" >/dev/null
  [ "$(cat "$TMP/status")" = 200 ] || fail "DELETE /v1/sessions/$id: $(cat "$TMP/status")"
done
ok "$P2 and $OLD deleted"

open_tmux 160 40 || exit 1
tm send-keys -t dash -l "export PADDOCK_HISTORY_PAGE=3"
tm send-keys -t dash Enter
start_dashboard
wait_for "$P3" || { fail "dashboard shows the live sessions"; screen >&2; exit 1; }
screen | grep -qF "$OLD" && fail "the main screen lists the deleted $OLD" ||
  ok "the main screen does not list the deleted session"

# ---------------------------------------------------------------- 3: the page, the deleted session
# The page is told by its own frame (titled History): its list is titled Sessions too.
tm send-keys -t dash 3
if poll 100 page_is History && wait_for "$OLD" && screen | grep -F "$OLD" | grep -qF deleted; then
  ok "3 opens History: $OLD shows with state deleted"
else
  fail "History shows the deleted session"; screen >&2
fi
# Its actions on the right: the newest page of three.
if wait_for "echo act7" && wait_for "echo act6"; then
  ok "the deleted session's actions show (newest first)"
else
  fail "actions of the deleted session"; screen >&2
fi
screen | grep -qF "echo act4" && fail "act4 shown before its page was needed" ||
  ok "only the first page of actions is loaded (act4 not yet)"
# Sessions paging: three loaded, p1 only after moving down.
if screen | grep -qF "Sessions (3+)" && ! screen | grep -qF "$P1"; then
  ok "one page of sessions (3+) loaded, $P1 not yet"
else
  fail "first sessions page only"; screen >&2
fi
# Each move is seen on the detail pane's title (the session it shows) before the next key: the
# actions of the session left behind must not pass for those of the one arrived at.
tm send-keys -t dash j
wait_for "$P1" && wait_for "Sessions (4)" && ok "moving down fetched the next page of sessions ($P1)" ||
  { fail "next sessions page"; screen >&2; }
wait_for "─ $P3 (" && wait_gone "echo act7" || { fail "j shows $P3"; screen >&2; }
tm send-keys -t dash k
wait_for "─ $OLD (" && wait_for "echo act7" || { fail "back on $OLD"; screen >&2; }

# Actions paging: Tab to the right, one row down loads the next page.
tm send-keys -t dash Tab
tm send-keys -t dash j
wait_for "echo act4" && ok "moving down the actions fetched their next page (act4)" ||
  { fail "next actions page"; screen >&2; }

# Enter: an action's whole observation. Row 3 is the printf with an OSC 0 title change.
title_before=$(flag pane_title)
tm send-keys -t dash j
tm send-keys -t dash Enter
if wait_for "^[]0…hostile$$"; then
  ok "Enter shows the observation; its escape sequence is a visible token"
else
  fail "observation shown sanitized"; screen >&2
fi
[ "$(flag pane_title)" = "$title_before" ] && ok "the terminal title is untouched" ||
  fail "pane title changed to '$(flag pane_title)'"
tm send-keys -t dash Escape
wait_gone "^[]0…hostile$$" 50 && wait_for "echo act4" && ok "Esc closes the observation" ||
  { fail "Esc closes the observation"; screen >&2; }

# The stored log tail and the graphs: ] and ] again.
tm send-keys -t dash ']'
if wait_for 'paddock-executor: run "' && wait_for "kept when the container went"; then
  ok "the Log view shows the stored log tail"
else
  fail "stored log tail"; screen >&2
fi
tm send-keys -t dash ']'
if wait_for "CPU" && wait_for "Memory" && wait_for " samples, "; then
  ok "the Graphs view draws the stored samples"
else
  fail "graphs from stored samples"; screen >&2
fi
tm send-keys -t dash ']' # back to the actions
tm send-keys -t dash Escape # to the list

# ---------------------------------------------------------------- full-text search
tm send-keys -t dash /
tm send-keys -t dash -l "$WORD"
tm send-keys -t dash Enter
# the result row, and the preview's command and output lines
if wait_for "Search \"$WORD\"" && wait_for "echo $WORD" && wait_for "$ echo $WORD" &&
  [ "$(screen | grep -c "$WORD")" -ge 3 ]; then
  ok "search finds the action by its output; the preview shows the output"
else
  fail "full-text search"; screen >&2
fi
tm send-keys -t dash Enter
if wait_for "$OLD (" && wait_gone "echo act7" 50 && wait_for "echo act1"; then
  ok "Enter on a result shows its session's actions from that action"
else
  fail "jump to the result's action"; screen >&2
fi
tm send-keys -t dash g
wait_for "echo act7" && ok "g on a list that began at a result loads it from the newest" ||
  { fail "g from the newest"; screen >&2; }
tm send-keys -t dash Escape # to the results
tm send-keys -t dash Escape # the search ends
wait_gone "Search \"$WORD\"" 50 && wait_for "Sessions (" && ok "Esc ends the search" ||
  { fail "Esc ends the search"; screen >&2; }

# ---------------------------------------------------------------- filters
tm send-keys -t dash s
if wait_for "state deleted" && wait_for "$P2" && wait_gone "$P3" 50 && wait_gone "$P1" 50; then
  ok "s: state deleted lists only the deleted sessions"
else
  fail "state filter"; screen >&2
fi
tm send-keys -t dash s
if wait_for "state ready" && wait_for "$P3" && wait_gone "$OLD" 50; then
  ok "s again: state ready"
else
  fail "state filter ready"; screen >&2
fi
tm send-keys -t dash c
wait_for "$OLD" || { fail "c clears the filters"; screen >&2; }
tm send-keys -t dash i
tm send-keys -t dash -l "no-such-image"
tm send-keys -t dash Enter
if wait_for "image ~no-such-image" && wait_for "no session matches the filters" && wait_gone "$OLD" 50; then
  ok "i: an image nothing uses matches nothing"
else
  fail "image filter"; screen >&2
fi
tm send-keys -t dash i
tm send-keys -t dash C-u
tm send-keys -t dash -l "base:local"
tm send-keys -t dash Enter
wait_for "image ~base:local" && wait_for "$OLD" && ok "i: the image the sessions use lists them" ||
  { fail "image filter matching"; screen >&2; }
tm send-keys -t dash c
tm send-keys -t dash d
tm send-keys -t dash -l "..2020-01-01"
tm send-keys -t dash Enter
if wait_for "..2020-01-01" && wait_for "no session matches the filters"; then
  ok "d: created before 2020 matches nothing"
else
  fail "date filter"; screen >&2
fi
tm send-keys -t dash d
tm send-keys -t dash C-u
tm send-keys -t dash -l "1d"
tm send-keys -t dash Enter
wait_for " 1d " && wait_for "$OLD" && ok "d: created in the last day lists them" ||
  { fail "date filter 1d"; screen >&2; }
tm send-keys -t dash d
tm send-keys -t dash C-u
tm send-keys -t dash -l "yesterday"
tm send-keys -t dash Enter
wait_for "\"yesterday\": a time is" && ok "d: a time it cannot read is said in the footer" ||
  { fail "bad date message"; screen >&2; }

# ---------------------------------------------------------------- Esc leaves, q quits
tm send-keys -t dash Escape
if poll 100 main_shown && wait_for "$P3"; then
  ok "Esc leaves History for the main screen"
else
  fail "Esc leaves the page"; screen >&2
fi
tm send-keys -t dash q
terminal_restored && wait_for 'READY$' && ok "q quits and restores the terminal" ||
  { fail "q restores the terminal"; screen >&2; }
if [ -s "$TMP/dash.err" ]; then
  fail "the dashboard wrote to stderr"; cat "$TMP/dash.err" >&2
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
