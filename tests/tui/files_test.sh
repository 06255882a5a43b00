#!/usr/bin/env bash
# The Files tab, through a private tmux server against a real engine. A session over an
# overlay workspace (host files mod.txt, del.txt, keep.txt); the agent changes mod.txt, deletes
# del.txt, adds new.txt, src/main.py (200 lines, a needle on line 150), an ELF header bin.o and
# a file whose name holds an OSC 0 title change and an erase-screen sequence. The tab (after
# Changes) shows the workspace as a tree with the Changes tab's marks (A, C, D; the deleted file
# dim in its directory, an untouched one unmarked); Enter opens a directory lazily and a file in
# the viewer with line numbers; / finds the needle; Esc goes back to the tree; a binary file is
# described, not dumped; the hostile name is made visible and neither retitles the pane nor
# clears the screen. The reads are the operator's: none among the agent's actions, each an
# "operator" event.
#
#   tests/tui/files_test.sh [PATH/TO/paddock]        (or PADDOCK_EXE=...)
set -uo pipefail
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"

start_engine || { fail "engine answers GET /v1/info"; exit 1; }
WS=$TMP/ws
mkdir -p "$WS"
printf 'old line\n' >"$WS/mod.txt"
printf 'bye\n' >"$WS/del.txt"
printf 'same\n' >"$WS/keep.txt"
chown -R 1000 "$WS"
NAME=files-$$
create_session "$NAME" "\"workspace\":{\"source\":\"$WS\",\"mode\":\"overlay\"}" || exit 1
ok "session $SESSION_ID created over an overlay workspace"
run_action "echo more >> mod.txt && rm del.txt && echo new > new.txt && mkdir src &&
  for i in \$(seq 1 200); do if [ \$i = 150 ]; then echo needle-here; else echo line \$i; fi; done > src/main.py &&
  printf '\\177ELF\\002\\001\\001\\000\\000\\000' > bin.o &&
  touch \"\$(printf 'evil\\033]0;pwned\\007\\033[2J-$$')\"" || fail "the agent's command ran"

open_tmux 160 40 || exit 1
start_dashboard
wait_for "$NAME" || { fail "dashboard shows the session"; screen >&2; exit 1; }
title_before=$(flag pane_title)

# ---------------------------------------------------------------- the tree and its marks
screen | grep -qE 'Terminal ─ Changes ─ Files ─' && ok "Files comes after Changes in the tab bar" ||
  { fail "tab order"; screen >&2; }
show_tab Files "keep.txt" || { fail "the Files tab lists the workspace"; screen >&2; exit 1; }
tm send-keys -t dash l
if wait_for "A   new.txt" && wait_for "C   mod.txt" && wait_for "D   del.txt"; then
  ok "the tree carries the Changes tab's marks: A new.txt, C mod.txt, D del.txt"
else
  fail "change marks on the tree"; screen >&2
fi
screen | grep -qE '[ACD] +keep\.txt' && fail "an untouched file is marked" ||
  ok "an untouched file has no mark"
wait_for "A ▸ src/" && ok "a new directory is marked and folded" || { fail "src/ folded"; screen >&2; }
screen | grep -qF "main.py" && fail "a folded directory's files are listed" ||
  ok "a folded directory is not listed (lazy)"

# ---------------------------------------------------------------- a hostile file name
if wait_for "evil^[]0…^[[2J-$$"; then
  ok "a file name with OSC 0 and ESC [2J is shown with its escapes made visible"
else
  fail "hostile name sanitized"; screen >&2
fi
[ "$(flag pane_title)" = "$title_before" ] && ok "the pane title is untouched" ||
  fail "pane title changed to '$(flag pane_title)'"
screen | head -1 | grep -qF "paddock " && screen | grep -qF "Sessions (1)" &&
  ok "the screen was not cleared: header and sessions stay" || { fail "layout intact"; screen >&2; }

# ---------------------------------------------------------------- open a directory, a file
tm send-keys -t dash g Enter # the first row: src/ (directories first)
wait_for "▾ src/" && wait_for "    main.py" && ok "Enter opens the directory: its file appears indented" ||
  { fail "Enter on src/"; screen >&2; }
tm send-keys -t dash j Enter
if wait_for "/workspace/src/main.py" && wait_for "UTF-8 text · 1" && wait_for "  1 line 1" &&
  wait_for " 10 line 10"; then
  ok "Enter on a file opens it read-only with line numbers"
else
  fail "file viewer"; screen >&2
fi
screen | grep -qF "needle-here" && fail "line 150 is on screen before the search" ||
  ok "line 150 is below the screen"
tm send-keys -t dash /
tm send-keys -t dash -l "needle"
tm send-keys -t dash Enter
wait_for "150 needle-here" && ok "/ finds the needle on line 150" || { fail "search"; screen >&2; }
tm send-keys -t dash Escape
wait_for "▾ src/" && wait_gone "150 needle-here" && ok "Esc goes back to the tree" ||
  { fail "Esc back to the tree"; screen >&2; }

# ---------------------------------------------------------------- a binary file
tm send-keys -t dash j Enter # after main.py: bin.o
if wait_for "binary file: ELF executable or library, 10 bytes" && wait_for "Not shown"; then
  ok "a binary file is described (type, size), not dumped"
else
  fail "binary described"; screen >&2
fi
tm send-keys -t dash Escape
wait_for "▾ src/" || { fail "Esc back from the binary"; screen >&2; }
tm send-keys -t dash g h
wait_gone "    main.py" && wait_for "▸ src/" && ok "h folds the directory" || { fail "h folds"; screen >&2; }

# ---------------------------------------------------------------- the operator's, not the agent's
kinds=$(api GET "/v1/sessions/$SESSION_ID/actions" | python3 -c '
import json, sys
print(" ".join(sorted({a["kind"] for a in json.load(sys.stdin)["actions"]})))')
[ "$kinds" = run ] && ok "the agent's actions hold only its command" || fail "action kinds: $kinds"
ops=$(api GET "/v1/sessions/$SESSION_ID/events" | python3 -c '
import json, sys
print("\n".join(e["detail"] for e in json.load(sys.stdin)["events"] if e["kind"] == "operator"))')
grep -q "uid [0-9]* read /workspace/src/main.py: 1" <<<"$ops" &&
  grep -q "uid [0-9]* listed /workspace/src: 1 entries" <<<"$ops" &&
  ok "the reads are recorded as the operator's" || fail "operator events: $ops"

# ---------------------------------------------------------------- JSON to a terminal
# JSON escapes C0 controls but not C1 ones (U+009B is CSI) nor bidi overrides: to a terminal,
# --json writes every non-ASCII character as \uXXXX (under script(1), a pty).
run_action "touch \"\$(printf 'c1\\302\\2332J\\342\\200\\256-$$')\"" ||
  fail "the agent made a file named with C1 CSI and RLO"
script -qec "'$PADDOCK' --state-dir '$TMP/state' --socket '$SOCK' files --json $SESSION_ID" \
  /dev/null >"$TMP/json.tty" 2>&1
if LC_ALL=C grep -q $'\xc2\x9b\|\xe2\x80\xae' "$TMP/json.tty"; then
  fail "paddock files --json wrote a raw C1 control or RLO to the terminal"
elif grep -qiF 'c1\u009b2J\u202e' "$TMP/json.tty"; then
  ok "paddock files --json to a terminal escapes C1 controls and bidi overrides"
else
  fail "the hostile name in paddock files --json"; cat "$TMP/json.tty" >&2
fi

tm send-keys -t dash q
wait_for 'READY$' || fail "the dashboard quits"
[ -s "$TMP/dash.err" ] && { fail "the dashboard wrote to stderr"; cat "$TMP/dash.err" >&2; }

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
