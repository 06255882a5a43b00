#!/usr/bin/env bash
# An exported cast replayed in a terminal (issue 15 §8): the agent prints a hostile payload
# (OSC 0 and OSC 2 titles, an OSC 52 clipboard write, a DCS, an APC, a CSI 22 t title push,
# mouse tracking on) between harmless coloured text; `paddock export --format cast` writes
# the cast; a tmux pane (set-clipboard on, so an OSC 52 that got through makes a tmux buffer)
# plays its output events as asciinema does, by writing them to the pane's terminal.
# With --raw the attack reproduces (the title changes, a buffer appears, mouse tracking is
# on: the test can fail); the default export changes none of them and the text and its
# colour still show.
#
#   tests/tui/cast_test.sh [PATH/TO/paddock]        (or PADDOCK_EXE=...)
set -uo pipefail
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"

start_engine || { fail "engine answers GET /v1/info"; exit 1; }
NAME=cast-$$
create_session "$NAME" || exit 1
ok "session $SESSION_ID created"

# The command carries no escape bytes itself (printf makes them); its output is the payload.
# The harmless words come from $((...)) so that the command line, which the cast shows too,
# does not hold them.
B64=$(printf 'pwned-clipboard' | base64)
PAYLOAD="printf 'before \\033[31mHARMLESS-'\$((40+2))'\\033[0m plain-text-'\$((1+1))\
'\\033]0;PWNED-TITLE-0\\007\\033]2;PWNED-TITLE-2\\033\\\\'\
'\\033]52;c;$B64\\007'\
'\\033Pq#0;2;0;0;0#0~~\\033\\\\\\033_apc-payload\\033\\\\'\
'\\033[22;0t\\033[?1000h after\\n'"
run_action "$PAYLOAD" && ok "the agent printed the hostile payload" ||
  fail "run_action: $(cat "$TMP/status") $(cat "$TMP/reply")"

export_cast() { # export_cast FILE [--raw]
  "$PADDOCK" --socket "$SOCK" --state-dir "$TMP/state" export "$NAME" --format cast -o "$1" ${2:-} 2>"$TMP/export.err" &&
    [ -s "$1" ]
}
export_cast "$TMP/safe.cast" && ok "paddock export --format cast" ||
  fail "export: $(cat "$TMP/export.err")"
export_cast "$TMP/raw.cast" --raw && ok "paddock export --format cast --raw" ||
  fail "export --raw: $(cat "$TMP/export.err")"

# What each cast's output events hold (ESC and BEL spelled out): the raw one has the payload.
events() { python3 -c '
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
json.loads(lines[0])  # the header
print("".join(e[2] for e in map(json.loads, lines[1:]) if e[1] == "o"))' "$1"; }
for marker in $'\e]0;' $'\e]52;' $'\eP' $'\e_' $'\e[22;0t' $'\e[?1000h'; do
  grep -F -- "$marker" <(events "$TMP/raw.cast") >/dev/null ||
    fail "the raw cast keeps $(printf '%q' "$marker")"
  grep -F -- "$marker" <(events "$TMP/safe.cast") >/dev/null &&
    fail "the filtered cast still has $(printf '%q' "$marker")"
done
if grep -F $'\e[31mHARMLESS-42\e[0m plain-text-2' <(events "$TMP/safe.cast") >/dev/null; then
  ok "the filtered cast keeps the text and its colour"
else
  fail "filtered cast events: $(events "$TMP/safe.cast" | od -c | head -20)"
fi

# play CAST TARGET: its output events written to the pane's terminal, then a marker line that
# shows once the pane has read everything before it.
play() {
  local tty
  tty=$(tm display -p -t "$2" '#{pane_tty}')
  python3 -c '
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
with open(sys.argv[2], "w", encoding="utf-8") as tty:
    for e in map(json.loads, lines[1:]):
        if e[1] == "o":
            tty.write(e[2])
    tty.write("\r\nREPLAY-" + "DONE\r\n")' "$1" "$tty"
}
# pane_screen TARGET: its text; wait_screen TARGET TEXT: poll to a deadline until it shows.
pane_screen() { tm capture-pane -p -t "$1"; }
pane_has() { local s; s=$(pane_screen "$1") && grep -qF -- "$2" <<<"$s"; }
wait_screen() { poll 100 pane_has "$1" "$2"; }
buffers() { tm list-buffers -F '#{buffer_name}' 2>/dev/null | wc -l; }

open_tmux || exit 1 # session "dash": the filtered cast plays there
tm new-session -d -s rawplay -x 160 -y 32 "bash --noprofile --norc -i" ||
  fail "a second tmux session"
TITLE0=$(tm display -p -t dash '#{pane_title}')
[ "$(buffers)" = 0 ] || fail "tmux starts with no buffer"

play "$TMP/safe.cast" dash
if wait_screen dash "REPLAY-DONE"; then
  ok "the filtered cast played in the pane"
else
  fail "the filtered cast played"; pane_screen dash >&2
fi
title=$(tm display -p -t dash '#{pane_title}')
[ "$title" = "$TITLE0" ] && ok "the filtered cast leaves the pane title alone ($title)" ||
  fail "the filtered cast set the pane title to '$title'"
# (its first 200 characters, not bytes: lib.sh's locale is UTF-8)
[ "$(buffers)" = 0 ] && ok "the filtered cast made no tmux buffer (no OSC 52)" ||
  { buf=$(tm show-buffer 2>&1); fail "the filtered cast made a buffer: ${buf:0:200}"; }
[ "$(tm display -p -t dash '#{mouse_standard_flag}#{mouse_any_flag}')" = 00 ] &&
  ok "the filtered cast left mouse tracking off" || fail "the filtered cast turned mouse tracking on"
# the harmless text, a whole line of the screen (no cutting), with its colour
line=$(pane_screen dash | grep -F "plain-text-2" | head -n 1)
[ "$line" = "before HARMLESS-42 plain-text-2 after" ] &&
  ok "the text shows: $line" || fail "the pane shows '$line'"
[ "$(sgr_before HARMLESS-42)" = "ESC[31m" ] && ok "in its colour (SGR 31)" ||
  fail "HARMLESS-42 is drawn after '$(sgr_before HARMLESS-42)'"

# The raw cast, in its own pane: the attack the filter stops.
TITLE1=$(tm display -p -t rawplay '#{pane_title}')
BUFFERS1=$(buffers)
play "$TMP/raw.cast" rawplay
wait_screen rawplay "REPLAY-DONE" || { fail "the raw cast played"; pane_screen rawplay >&2; }
title=$(tm display -p -t rawplay '#{pane_title}')
# (tmux takes an APC as a title too: whichever came last is the pane's title)
[ "$title" != "$TITLE1" ] && case $title in PWNED-TITLE-* | apc-payload) true ;; *) false ;; esac &&
  ok "with --raw the cast sets the pane title ($title)" ||
  fail "the raw cast left the title '$title': the attack did not reproduce"
if [ "$(buffers)" -gt "$BUFFERS1" ] && tm show-buffer | grep -qF pwned-clipboard; then
  ok "with --raw OSC 52 writes the clipboard (a tmux buffer holds pwned-clipboard)"
else
  fail "the raw cast made no buffer: the attack did not reproduce"
fi
[ "$(tm display -p -t rawplay '#{mouse_standard_flag}')" = 1 ] &&
  ok "with --raw the cast turns mouse tracking on" || fail "the raw cast left mouse tracking off"

api DELETE "/v1/sessions/$SESSION_ID" >/dev/null
[ "$(cat "$TMP/status")" = 200 ] && { ok "session deleted"; SESSION_IDS=(); } ||
  fail "DELETE /v1/sessions/$SESSION_ID: $(cat "$TMP/status") $(cat "$TMP/reply")"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
