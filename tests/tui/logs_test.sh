#!/usr/bin/env bash
# The Logs tab end to end, through a private tmux server against a real engine: the container's
# log shows live (stdout and stderr in different colours), the f/w/t toggles change the screen,
# / highlights every match and n/N move between them (wrapping, "no match"), s saves the lines
# to a file (raw bytes; overwrite asked first; errors said), the buffer's bound drops the
# oldest lines and the border counts them (PADDOCK_LOG_LINES), c clears, hostile bytes in the
# log (OSC 52, a title, an erase, cursor moves, bidi) are shown as visible tokens and never
# reach the terminal, a stopped container ends the stream and a restart follows again, and a
# session whose container is gone says what the engine kept.
#
#   tests/tui/logs_test.sh [PATH/TO/paddock]        (or PADDOCK_EXE=...)
#
# What writes the container's log: the executor itself (one line per action on its stdout,
# warnings on its stderr: the container's log), and, for exact text on stdout or stderr, `docker exec`
# as root writing to PID 1's descriptors. Nothing the agent runs can do that: its commands run
# as uid 1000 (no access to /proc/1/fd) and the IPython kernel's output is piped to the
# executor, by design.
set -uo pipefail
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"

BOUND=200 # the dashboard's log buffer (PADDOCK_LOG_LINES) for this test

start_engine || { fail "engine answers GET /v1/info"; exit 1; }
NAME=logs-$$
create_session "$NAME" || exit 1
CID=$(api GET "/v1/sessions/$SESSION_ID" | json_get '["container_id"]')
ok "session $SESSION_ID created (container ${CID:0:12})"

# container_log SH-COMMAND: run it as root in the container with its output on PID 1's
# stdout (stderr: >&2 inside), i.e. into the container's log; returns once it has ended.
container_log() {
  local body id
  body=$(python3 -c 'import json,sys; print(json.dumps({"User":"0","Cmd":["sh","-c","exec >/proc/1/fd/1 2>/proc/1/fd/2; "+sys.argv[1]]}))' "$1")
  id=$(docker_api POST "/containers/$CID/exec" "$body" | json_get '["Id"]' 2>/dev/null)
  [ -n "$id" ] || { fail "docker exec in $CID"; return 1; }
  docker_api POST "/exec/$id/start" '{"Detach":true}' >/dev/null
  exec_ended() { [ "$(docker_api GET "/exec/$id/json" | json_get '["Running"]' 2>/dev/null)" = False ]; }
  poll 100 exec_ended && return 0
  fail "docker exec $id ended"
  return 1
}
hint() { screen | grep -E '(lines|dropped)[─-]*┘' | tail -1; }
# line_count: how many lines the tab holds (its border: "N lines"), whether shown or not
line_count() { hint | grep -oE '[0-9]+ lines' | cut -d' ' -f1; }
more_lines_than() { local n; n=$(line_count) && [ -n "$n" ] && [ "$n" -gt "$1" ]; }

# Before the dashboard: an action (the executor's line for it, stdout) and exact lines.
run_action "echo warmup" || fail "an action ran"
container_log "echo out-$$-hello; echo err-$$-oops >&2" || exit 1

open_tmux 160 40 || exit 1
tm send-keys -t dash -l "export PADDOCK_LOG_LINES=$BOUND"
tm send-keys -t dash Enter
start_dashboard
wait_for "$NAME" || { fail "dashboard shows the session"; screen >&2; exit 1; }
tm send-keys -t dash l
show_tab Logs # wherever it is in the tab bar
if wait_for "live, following the end" && wait_for "out-$$-hello" && wait_for "err-$$-oops" &&
  wait_for 'paddock-executor: run "echo warmup" exit 0'; then
  ok "the Logs tab follows the container's log: stdout, stderr and the executor's action line"
else
  fail "Logs tab shows the log"; screen >&2
fi
sgr_out=$(sgr_before "out-$$-hello")
sgr_err=$(sgr_before "err-$$-oops")
[ -n "$sgr_err" ] && [ "$sgr_out" != "$sgr_err" ] &&
  ok "stderr lines are coloured differently ($sgr_err vs $sgr_out)" ||
  fail "stderr colour: stdout '$sgr_out' stderr '$sgr_err'"
# The executor's action lines are its stdout: not in the stderr colour, and no access log.
sgr_act=$(sgr_before 'paddock-executor: run "echo warmup"')
[ -n "$sgr_act" ] && [ "$sgr_act" != "$sgr_err" ] &&
  ok "the executor's action line is not in the stderr colour ($sgr_act)" ||
  fail "action line colour '$sgr_act' (stderr is '$sgr_err')"
screen | grep -qF "POST /execute_action" && fail "an access-log line is shown" ||
  ok "no access-log line (POST /execute_action) in the log"
hint | grep -qF "[follow]" && ok "the border says it follows" || { fail "[follow] on the border"; screen >&2; }

# ---------------------------------------------------------------- live lines
container_log "echo live-$$-line" || exit 1
wait_for "live-$$-line" && ok "a line written while the tab is open appears without a key" ||
  { fail "live line"; screen >&2; }
access_lines() { screen | grep -cF 'paddock-executor: run "echo second" exit 0'; }
more_access_lines() { [ "$(access_lines)" -gt "$before" ]; }
before=$(access_lines)
run_action "echo second" || fail "second action ran"
poll 100 more_access_lines &&
  ok "an action's line (the executor's stdout) appears live" ||
  { fail "action line live"; screen >&2; }

# ---------------------------------------------------------------- hostile bytes
title_before=$(flag pane_title)
container_log "printf '\\033]52;c;cHduZWQ=\\007\\033]0;pwned\\007\\033[2J\\033[5;5H\\033[31m\\342\\200\\256evil-$$\\n'" ||
  exit 1
if wait_for "evil-$$" && screen | grep -F "evil-$$" | grep -qF "^[]52…^[]0…^[[2J^[[5;5H^[[31m<U+202E>evil-$$"; then
  ok "escape sequences and a bidi override in the log are shown as visible tokens"
else
  fail "hostile log line shown sanitized"; screen >&2
fi
[ "$(flag pane_title)" = "$title_before" ] && ok "the terminal title is untouched (OSC 0)" ||
  fail "pane title changed to '$(flag pane_title)'"
tm show-buffer >/dev/null 2>&1 && fail "a tmux paste buffer appeared (OSC 52)" ||
  ok "no clipboard write reached the terminal (OSC 52)"
screen | head -1 | grep -qF "paddock " && screen | grep -qF "Sessions (1)" &&
  ok "no erase or cursor move reached the terminal: header and sessions stay" ||
  { fail "layout intact after hostile log"; screen >&2; }

# ---------------------------------------------------------------- timestamps and wrap
screen | grep -qE "[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} out-$$-hello" &&
  fail "times shown before t" || ok "no times by default"
tm send-keys -t dash t
if wait_for "[time]" && screen | grep -qE "[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} out-$$-hello"; then
  ok "t shows each line's time (Docker's timestamp) and the border says so"
else
  fail "t shows times"; screen >&2
fi
tm send-keys -t dash t
wait_gone "[time]" && ! screen | grep -qE "[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} out-$$-hello" &&
  ok "t again hides them" || { fail "t hides times"; screen >&2; }

container_log "printf 'long-$$-%0300d-END$$\\n' 7" || exit 1
if wait_for "long-$$-" && ! screen | grep -qF "END$$" && screen | grep -F "long-$$-" | grep -qF "…"; then
  ok "a line longer than the pane is cut and marked (…)"
else
  fail "long line cut with a marker"; screen >&2
fi
tm send-keys -t dash w
wait_for "END$$" && wait_for "[wrap]" && ok "w wraps it: its end shows, the border says [wrap]" ||
  { fail "w wraps"; screen >&2; }
tm send-keys -t dash w
wait_gone "END$$" && wait_gone "[wrap]" && ok "w again cuts it again" || { fail "w unwraps"; screen >&2; }

# ---------------------------------------------------------------- follow and scrolling
container_log "for i in \$(seq 1 80); do case \$i in 10|70) echo num-$$-\$i zebra;; 20) echo num-$$-\$i zebra ZEBRA;; *) echo num-$$-\$i;; esac; done" ||
  exit 1
wait_for "num-$$-80" && ! screen | grep -qE "num-$$-1( |$)" &&
  ok "following: the newest line shows at the bottom, the oldest scrolled away" ||
  { fail "follow shows the end"; screen >&2; }
tm send-keys -t dash g
wait_for "follow off" && wait_for "out-$$-hello" && ok "g goes to the first line and stops following" ||
  { fail "g"; screen >&2; }
hint | grep -qF "[follow]" && fail "[follow] still on the border after g" || ok "the border no longer says [follow]"
# The border counts the new line once the tab has it: then, and not after a guessed delay, it
# must not be on screen.
n=$(line_count)
container_log "echo unseen-$$-tail" || exit 1
poll 100 more_lines_than "$n" || { fail "the tab counts the new line (had $n)"; screen >&2; }
screen | grep -qF "unseen-$$-tail" && fail "a new line moved the view while not following" ||
  ok "not following: a new line does not move the view"
tm send-keys -t dash f
wait_for "unseen-$$-tail" && wait_for "following the end" && ok "f follows again: the new line shows" ||
  { fail "f follows"; screen >&2; }
tm send-keys -t dash k
wait_for "follow off" && ok "scrolling up (k) stops following" || { fail "k stops follow"; screen >&2; }
tm send-keys -t dash G
wait_for "following the end" && ok "G follows the end again" || { fail "G"; screen >&2; }
tm send-keys -t dash g
wait_for "out-$$-hello" || fail "g to the top"
first_num() { screen | grep -m1 -oE "num-$$-[0-9]+"; }
scrolled_from() { top_after=$(first_num); [ -n "$top_after" ] && [ "$top_after" != "$1" ]; }
top_before=$(first_num) top_after=''
tm send-keys -t dash NPage
poll 100 scrolled_from "$top_before" && ok "PgDn scrolls a page ($top_before -> $top_after)" ||
  { fail "PgDn scrolls: '$top_before' -> '$top_after'"; screen >&2; }
tm send-keys -t dash j PPage k
wait_for "out-$$-hello" && ok "PgUp and k scroll back up" || { fail "PgUp/k"; screen >&2; }

# ---------------------------------------------------------------- search
tm send-keys -t dash /
wait_for "search:" || fail "/ opens the search prompt"
tm send-keys -t dash -l "zebra"
tm send-keys -t dash Enter
wait_for "\"zebra\": 3 of" && ok "/ zebra: the footer counts the matching lines" ||
  { fail "search count"; screen >&2; }
wait_for "num-$$-10 zebra" || fail "the first match is shown"
# sgr_in LINE-TEXT: the background colour set right before each "zebra" (any case) on the
# screen line holding LINE-TEXT ("-" when none is set there).
sgr_in() {
  tm capture-pane -p -e -t dash | python3 -c '
import re, sys
def bg(seq):
    codes = [c for s in re.findall(r"\x1b\[([0-9;]*)m", seq) for c in s.split(";")]
    found = [c for c in codes if re.fullmatch(r"4[0-7]|10[0-7]", c)]
    return found[-1] if found else "-"
for line in sys.stdin.read().split("\n"):
    if sys.argv[1] in line:
        print(" ".join(bg(m) for m in re.findall(r"((?:\x1b\[[0-9;]*m)+)zebra", line, re.I)))
        break' "$1"
}
cur=$(sgr_in "num-$$-10 ")
other=$(sgr_in "num-$$-20 ")
if [ -n "$cur" ] && [ "$cur" != - ] && [ "$(wc -w <<<"$other")" = 2 ] && [ "${other%% *}" != - ] &&
  [ "${other%% *}" = "${other##* }" ] && [ "$cur" != "${other%% *}" ]; then
  ok "every match is highlighted (two in one line, either case), the current one differently ($cur / $other)"
else
  fail "match highlights: current '$cur', others '$other'"; tm capture-pane -p -e -t dash | grep -i zebra | cat -v >&2
fi
sgr_in "num-$$-11" | grep -q . && fail "a line without a match has a highlight"
tm send-keys -t dash n
wait_for "\"zebra\": line" && [ "$(sgr_in "num-$$-20 " | cut -d' ' -f1)" = "$cur" ] &&
  ok "n goes to the next match (now the current one)" ||
  { fail "n"; screen >&2; }
tm send-keys -t dash n
wait_for "num-$$-70 zebra" || fail "n to the third match"
tm send-keys -t dash n
wait_for "wrapped to the top" && ok "n after the last match wraps to the first and says so" ||
  { fail "n wraps"; screen >&2; }
tm send-keys -t dash N
wait_for "wrapped to the end" && wait_for "num-$$-70 zebra" && ok "N goes back, wrapping to the last" ||
  { fail "N"; screen >&2; }
tm send-keys -t dash /
wait_for "search:" || fail "/ again"
tm send-keys -t dash C-u
tm send-keys -t dash -l "no-such-text-$$"
tm send-keys -t dash Enter
wait_for "no match for \"no-such-text-$$\"" && ok "a search without a match says \"no match\"" ||
  { fail "no match"; screen >&2; }
tm send-keys -t dash n
wait_for "no match for" && ok "n without a match says so too" || fail "n no match"
tm send-keys -t dash /
tm send-keys -t dash C-u Enter
wait_for "search cleared" || fail "an empty search clears it"

# ---------------------------------------------------------------- save
tm send-keys -t dash s
wait_for "save the lines to: ./paddock-$NAME-logs.txt" && ok "s proposes ./paddock-$NAME-logs.txt" ||
  { fail "save prompt default"; screen >&2; }
tm send-keys -t dash C-u
tm send-keys -t dash -l "$TMP/saved.txt"
tm send-keys -t dash Enter
if wait_for "saved " && wait_for " lines to /tmp/" && grep -qx "out-$$-hello" "$TMP/saved.txt" &&
  grep -qx "err-$$-oops" "$TMP/saved.txt" && grep -qx "num-$$-80" "$TMP/saved.txt"; then
  ok "s writes the lines to the file and says where"
else
  fail "save"; screen >&2; head -5 "$TMP/saved.txt" >&2
fi
grep -q $'\033]52;c;cHduZWQ=' "$TMP/saved.txt" && ok "the file keeps the log's bytes as they came" ||
  fail "saved file raw"
lines_saved=$(wc -l <"$TMP/saved.txt")
tm send-keys -t dash s
tm send-keys -t dash C-u
tm send-keys -t dash -l "$TMP/saved.txt"
tm send-keys -t dash Enter
wait_for "exists: overwrite it?" && ok "saving over a file asks first" || { fail "overwrite asked"; screen >&2; }
tm send-keys -t dash n
wait_gone "exists: overwrite it?" || fail "n closes the question"
[ "$(wc -l <"$TMP/saved.txt")" = "$lines_saved" ] || fail "n kept the file" # written in the key's handler, if at all
tm send-keys -t dash t s
tm send-keys -t dash C-u
tm send-keys -t dash -l "$TMP/saved.txt"
tm send-keys -t dash Enter
wait_for "exists: overwrite it?" || fail "asked again"
tm send-keys -t dash y
stamped() { grep -qE "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{3}Z out-$$-hello$" "$TMP/saved.txt"; }
wait_gone "exists: overwrite it?" && poll 100 stamped &&
  ok "y overwrites; with times shown the file has them (RFC 3339)" || { fail "overwrite with times"; head -3 "$TMP/saved.txt" >&2; }
tm send-keys -t dash t
tm send-keys -t dash s
tm send-keys -t dash C-u
tm send-keys -t dash -l "$TMP/no-such-dir/x.txt"
tm send-keys -t dash Enter
wait_for "cannot save to" && ok "a file that cannot be written: the error is said" ||
  { fail "save error"; screen >&2; }

# ---------------------------------------------------------------- the bound
tm send-keys -t dash G
container_log "seq 1 300 | sed 's/^/bulk-$$-/'" || exit 1
wait_for "bulk-$$-300" || fail "bulk lines shown"
if hint | grep -qE "$BOUND lines, [0-9]+ dropped"; then
  ok "past $BOUND lines the oldest go and the border counts them: $(hint | grep -oE "$BOUND lines, [0-9]+ dropped")"
else
  fail "dropped count on the border"; screen >&2
fi
tm send-keys -t dash g
wait_for "follow off" && wait_for "bulk-$$-" && ! screen | grep -qF "out-$$-hello" && ok "the dropped lines are gone from the view" ||
  { fail "oldest dropped"; screen >&2; }
tm send-keys -t dash G

# ---------------------------------------------------------------- clear
tm send-keys -t dash c
wait_for "no log lines yet" && ok "c clears the view" || { fail "c clears"; screen >&2; }
container_log "echo after-clear-$$" || exit 1
wait_for "after-clear-$$" && ok "after c, new lines keep coming" || { fail "lines after clear"; screen >&2; }

# ---------------------------------------------------------------- help lists the tab's keys
tm send-keys -t dash '?'
wait_for "follow the end on/off" && wait_for "save the lines to a file" &&
  ok "? lists the Logs tab's keys (from its table)" || { fail "help for the Logs tab"; screen >&2; }
tm send-keys -t dash Escape

# ---------------------------------------------------------------- stop, start again
api POST "/v1/sessions/$SESSION_ID/stop" >/dev/null
wait_for "ended: the container stopped" 150 && wait_for "after-clear-$$" &&
  ok "a stopped container ends the stream; its lines stay" || { fail "stop ends the stream"; screen >&2; }
api POST "/v1/sessions/$SESSION_ID/resume" >/dev/null
wait_for "live, following the end" 150 && wait_for "after-clear-$$" &&
  ok "started again: the tab follows the new stream (from the kept log)" ||
  { fail "resume follows again"; screen >&2; }

# ---------------------------------------------------------------- no container
# Removed behind paddock's back: the stream ends; opened again, there is nothing to follow and
# the tab says what the engine kept (here: nothing).
docker_api DELETE "/containers/$CID?force=1&v=1" >/dev/null
wait_for "ended: the container stopped" 150 || wait_for "ended:" 10 || fail "the stream ended"
state_error() { [ "$(api GET "/v1/sessions/$SESSION_ID" | json_get '["state"]' 2>/dev/null)" = error ]; }
poll 100 state_error || fail "the session is in error once its container is gone"
# Out of the tab (seen on the tab bar) and back: the tab opens afresh.
tm send-keys -t dash '['
poll 100 tab_not Logs || { fail "[ leaves the Logs tab"; screen >&2; }
tm send-keys -t dash ']'
if wait_for "the container is gone" && wait_for "the engine kept no log tail"; then
  ok "a session without its container: the tab says it is gone and that no tail was kept"
else
  fail "no container"; screen >&2
fi

tm send-keys -t dash q
terminal_restored || fail "q restores the terminal"
[ -s "$TMP/dash.err" ] && { fail "the dashboard wrote to stderr"; cat "$TMP/dash.err" >&2; }

api DELETE "/v1/sessions/$SESSION_ID" >/dev/null
[ "$(cat "$TMP/status")" = 200 ] && { ok "session deleted"; SESSION_IDS=(); } ||
  fail "DELETE /v1/sessions/$SESSION_ID: $(cat "$TMP/status") $(cat "$TMP/reply")"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
