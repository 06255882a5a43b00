#!/usr/bin/env bash
# The Changes tab and an action shown whole, through a private tmux server against a real
# engine. A session over an overlay workspace (host files mod.txt, del.txt, keep.txt): the
# agent's actions change mod.txt, delete del.txt, add new.txt and a file whose name holds an
# OSC 0 title change and an erase-screen sequence. The tab (last in the tab bar) lists each
# with its marker (A/C/D) and counts per kind, refreshes by itself when an action finishes,
# refreshes on `r` for a change made outside any action, filters with `/`, and Enter on a
# path opens the action that wrote it; the hostile name is made visible and neither retitles
# the pane nor clears the screen. The Actions tab's Enter shows an action whole: a long
# observation scrolled to its end with every scrolling key, and an edit's diff with its -
# line red and + line green; Esc goes back.
#
#   tests/tui/changes_test.sh [PATH/TO/paddock]        (or PADDOCK_EXE=...)
set -uo pipefail
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"

start_engine || { fail "engine answers GET /v1/info"; exit 1; }
WS=$TMP/ws
mkdir -p "$WS"
printf 'old line\n' >"$WS/mod.txt"
printf 'bye\n' >"$WS/del.txt"
printf 'same\n' >"$WS/keep.txt"
chown -R 1000 "$WS"
NAME=chg-$$
create_session "$NAME" "\"workspace\":{\"source\":\"$WS\",\"mode\":\"overlay\"}" || exit 1
CID=$(api GET "/v1/sessions/$SESSION_ID" | json_get '["container_id"]')
ok "session $SESSION_ID created over an overlay workspace"

action() { # action JSON-ACTION: POST it; 0 when the observation is not an error
  local r
  r=$(api POST "/v1/sessions/$SESSION_ID/execute_action" "{\"action\":$1}")
  [ "$(cat "$TMP/status")" = 200 ] && [ "$(printf '%s' "$r" | json_get '["observation"]')" != error ]
}
# marker_sgr PATH: the SGR sequences drawn right before the A/C/D marker of PATH's row.
marker_sgr() {
  tm capture-pane -p -e -t dash | python3 -c '
import re, sys
screen, path = sys.stdin.read(), sys.argv[1]
m = re.search(r"((?:\x1b\[[0-9;]*m)+)[ACD](?:\x1b\[[0-9;]*m| )*" + re.escape(path), screen)
print(m.group(1).replace("\x1b", "ESC") if m else "")' "$1"
}
hint() { screen | grep -E 'Esc back[─-]*┘' | tail -1; }
# top_line: the first observation line the action page shows (its hint: "#ID  A-B of N")
top_line() { hint | grep -oE '[0-9]+-[0-9]+ of' | cut -d- -f1; }
top_is() { [ "$(top_line)" = "$1" ]; }
top_not() { local t; t=$(top_line) && [ -n "$t" ] && [ "$t" != "$1" ]; }
filter_to() { tm send-keys -t dash / C-u; tm send-keys -t dash -l "$1"; tm send-keys -t dash Enter; }

open_tmux 160 40 || exit 1
start_dashboard
wait_for "$NAME" || { fail "dashboard shows the session"; screen >&2; exit 1; }
title_before=$(flag pane_title)

# ---------------------------------------------------------------- the tab, last in the bar
screen | grep -qE 'Overview ─ Logs ─ Actions ─ Resources ─ Terminal ─ Changes ─' &&
  ok "Changes comes after Terminal" || { fail "tab order"; screen >&2; }
show_tab Changes "changed  D " || { fail "the Changes tab shows its counts"; screen >&2; exit 1; }
tm send-keys -t dash l
wait_for "D 0 deleted" && wait_gone "/workspace/" 5 &&
  ok "before any action: nothing in the workspace, no deletion" || { fail "empty changes"; screen >&2; }

# ---------------------------------------------------------------- refreshed when an action ends
run_action "echo more >> mod.txt && rm del.txt && echo new > new.txt && touch \"\$(printf 'evil\\033]0;pwned\\007\\033[2J-$$')\"" ||
  fail "the agent's command ran"
if wait_for "A /workspace/new.txt" && wait_for "C /workspace/mod.txt" &&
  wait_for "D /workspace/del.txt"; then
  ok "after the action the tab lists the added, changed and deleted files with A/C/D"
else
  fail "changes listed with their markers"; screen >&2
fi
screen | grep -qF "keep.txt" && fail "an untouched file is listed" || ok "an untouched file is not listed"
wait_for "C 1 changed  D 1 deleted" && screen | grep -qE "A [0-9]+ added" &&
  ok "the first row counts each kind" || { fail "counts per kind"; screen >&2; }
del_sgr=$(marker_sgr /workspace/del.txt) add_sgr=$(marker_sgr /workspace/new.txt)
mod_sgr=$(marker_sgr /workspace/mod.txt)
[ -n "$del_sgr" ] && [ -n "$add_sgr" ] && [ -n "$mod_sgr" ] && [ "$del_sgr" != "$add_sgr" ] &&
  [ "$mod_sgr" != "$add_sgr" ] && [ "$mod_sgr" != "$del_sgr" ] &&
  ok "A, C and D are coloured apart ($add_sgr $mod_sgr $del_sgr)" || fail "marker colours: $add_sgr $mod_sgr $del_sgr"
# the order: del.txt, evil..., mod.txt, new.txt (sorted by path)
order=$(screen | grep -oE '/workspace/(del|evil|mod|new)' | tr '\n' ' ')
[ "$order" = "/workspace/del /workspace/evil /workspace/mod /workspace/new " ] &&
  ok "paths are sorted" || { fail "sorted paths: $order"; screen >&2; }

# ---------------------------------------------------------------- a hostile file name
if wait_for "A /workspace/evil^[]0…^[[2J-$$"; then
  ok "a file name with OSC 0 and ESC [2J is shown with its escapes made visible"
else
  fail "hostile name sanitized"; screen >&2
fi
[ "$(flag pane_title)" = "$title_before" ] && ok "the pane title is untouched" ||
  fail "pane title changed to '$(flag pane_title)'"
screen | head -1 | grep -qF "paddock " && screen | grep -qF "Sessions (1)" &&
  ok "the screen was not cleared: header and sessions stay" || { fail "layout intact"; screen >&2; }

# ---------------------------------------------------------------- r: a change made outside actions
exec_id=$(docker_api POST "/containers/$CID/exec" "{\"User\":\"1000\",\"Cmd\":[\"touch\",\"/workspace/byhand-$$\"]}" |
  json_get '["Id"]' 2>/dev/null)
docker_api POST "/exec/$exec_id/start" '{"Detach":false}' >/dev/null
sleep 1 # the file exists (the exec has ended): a grace period for a refresh that must NOT come
screen | grep -qF "byhand-$$" && fail "a change without an action appeared before r" ||
  ok "a change no action made waits for r"
tm send-keys -t dash r
wait_for "A /workspace/byhand-$$" && ok "r refetches the changes" || { fail "r refreshes"; screen >&2; }

# ---------------------------------------------------------------- / filter, Enter on a path
tm send-keys -t dash /
tm send-keys -t dash -l "byhand"
if wait_gone "/workspace/new.txt" && wait_for "byhand-$$"; then
  ok "/ narrows the list as it is typed"
else
  fail "/ filter"; screen >&2
fi
tm send-keys -t dash Enter
tm send-keys -t dash Enter
wait_for "no write, edit or upload action recorded" &&
  ok "Enter on a path no action wrote says so" || { fail "Enter without an action"; screen >&2; }

action '{"action":"edit","args":{"path":"/workspace/mod.txt","command":"str_replace","old_str":"old line","new_str":"new line"}}' ||
  fail "the edit action ran"
filter_to "mod.txt"
wait_for "C /workspace/mod.txt" && wait_gone "byhand-$$" || { fail "filter mod.txt"; screen >&2; }
names_action() { screen | grep -qE "$1"' +workspace +#[0-9]+'; } # names_action PATH-REGEX
poll 100 names_action 'mod\.txt' && ok "the edited path names its action" ||
  { fail "the edit names its action"; screen >&2; }
tm send-keys -t dash Enter
if wait_for "edit, done" && wait_for "-old line" && wait_for "+new line"; then
  ok "Enter on a path shows the action that wrote it, with its diff"
else
  fail "Enter on a path"; screen >&2
fi
tm send-keys -t dash Escape
wait_for "C /workspace/mod.txt" && wait_gone "edit, done" && ok "Esc goes back to the Changes tab" ||
  { fail "Esc back to Changes"; screen >&2; }
# a write over a file: its observation says only "wrote"; the diff the engine recorded shows
action '{"action":"write","args":{"path":"/workspace/new.txt","content":"newer"}}' ||
  fail "the write action ran"
filter_to "new.txt"
wait_gone "C /workspace/mod.txt" || { fail "filter new.txt"; screen >&2; }
poll 100 names_action 'new\.txt' || { fail "the write names its action"; screen >&2; }
tm send-keys -t dash Enter
if wait_for "write, done" && wait_for "@@ -1 +1 @@" && wait_for "-new" && wait_for "+newer"; then
  ok "Enter on a written path shows the write with what it changed (-new +newer)"
else
  fail "a write's diff"; screen >&2
fi
tm send-keys -t dash Escape
wait_gone "write, done" || { fail "Esc back from the write"; screen >&2; }
filter_to "mod.txt"
wait_for "C /workspace/mod.txt" || { fail "filter mod.txt after the write"; screen >&2; }
tm send-keys -t dash /
tm send-keys -t dash Escape
wait_for "A /workspace/new.txt" && ok "Esc at the prompt clears the filter" || { fail "filter cleared"; screen >&2; }
tm send-keys -t dash /
tm send-keys -t dash -l "mod.txt"
tm send-keys -t dash Enter
wait_gone "A /workspace/new.txt" || { fail "filter mod.txt again"; screen >&2; }
tm send-keys -t dash Escape
wait_for "A /workspace/new.txt" && wait_for "no filter" &&
  ok "Esc in the list clears the filter (as in the sessions list)" || { fail "Esc clears the filter"; screen >&2; }
tm send-keys -t dash Escape
wait_for "c new" && ok "Esc without a filter goes back to the sessions" || { fail "Esc back"; screen >&2; }
tm send-keys -t dash l

# ---------------------------------------------------------------- the Actions tab: Enter
run_action "seq 1 300" || fail "the long command ran"
tm send-keys -t dash '['
poll 100 tab_is Terminal || { fail "[ shows the Terminal tab"; screen >&2; }
show_tab Actions SUMMARY || { fail "the Actions tab"; screen >&2; }
wait_for "seq 1 300" || { fail "the long action listed"; screen >&2; }
tm send-keys -t dash g Enter
if wait_for "run, done, exit code 0" && wait_for "risk " && wait_for "approval not asked" &&
  wait_for '$ seq 1 300' && wait_for "observation (run, "; then
  ok "Enter shows the action: kind, state, exit code, risk, approval, command, observation"
else
  fail "action page"; screen >&2
fi
screen | grep -qxE '│ 300 +│' && fail "the end is on screen before scrolling" || ok "the observation is longer than the pane"
# Each key's effect is seen on the hint's first line number before the next key is sent.
poll 100 top_not "" || { fail "the action page says which lines it shows"; screen >&2; }
start=$(top_line)
tm send-keys -t dash PageDown
poll 100 top_not "$start" && ok "PgDn scrolls a page (from line $start to $(top_line))" ||
  { fail "PgDn"; screen >&2; }
page=$(top_line)
rows_ok=yes
for step in "j 1" "Down 2" "k 1" "Up 0"; do
  tm send-keys -t dash "${step% *}"
  poll 100 top_is "$((page + ${step#* }))" || { rows_ok="no: ${step% *} gave $(top_line), not $((page + ${step#* }))"; break; }
done
[ "$rows_ok" = yes ] && ok "j/Down/k/Up scroll a row" || fail "j/k from line $page: $rows_ok"
tm send-keys -t dash PageUp
poll 100 top_is "$start" && ok "PgUp scrolls back" || fail "PgUp: line $(top_line), not $start"
tm send-keys -t dash G
if wait_for "│ 300 " && screen | grep -qE '│ 300 +│'; then
  ok "G goes to the end of the full observation (300)"
else
  fail "G to the end"; screen >&2
fi
tm send-keys -t dash g
wait_for "run, done, exit code 0" && wait_gone "│ 300 " && ok "g goes back to the top" || fail "g"
tm send-keys -t dash End
wait_for "│ 300 " && ok "End goes to the end" || fail "End"
tm send-keys -t dash Home
wait_for "run, done, exit code 0" && ok "Home goes to the top" || fail "Home"
tm send-keys -t dash Escape
wait_for "seq 1 300" && wait_gone "run, done, exit code 0" && ok "Esc goes back to the Actions tab" ||
  { fail "Esc back to Actions"; screen >&2; }

# the edit: third newest (after the write over new.txt)
tm send-keys -t dash j j Enter
if wait_for "edit, done" && wait_for "str_replace" && wait_for "@@ -1 +1 @@" &&
  wait_for "-old line" && wait_for "+new line"; then
  ok "an edit shows its diff"
else
  fail "edit diff"; screen >&2
fi
minus=$(sgr_before "-old line") plus=$(sgr_before "+new line")
case "$minus" in *31*) ok "the - line is red ($minus)" ;; *) fail "- line colour: $minus" ;; esac
case "$plus" in *32*) ok "the + line is green ($plus)" ;; *) fail "+ line colour: $plus" ;; esac
tm send-keys -t dash '?'
wait_for "go to the end (of the observation)" && ok "the help lists the page's keys" ||
  { fail "help for the action page"; screen >&2; }
tm send-keys -t dash Escape
tm send-keys -t dash Escape
wait_gone "edit, done" && wait_for "seq 1 300" || fail "Esc back from the edit"

tm send-keys -t dash q
wait_for 'READY$' || fail "the dashboard quits"
[ -s "$TMP/dash.err" ] && { fail "the dashboard wrote to stderr"; cat "$TMP/dash.err" >&2; }

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
