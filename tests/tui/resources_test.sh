#!/usr/bin/env bash
# The dashboard's Overview and Resources tabs and the sessions' sparklines, in tmux against a
# real engine.
#
#   tests/tui/resources_test.sh [PATH/TO/paddock]        (or PADDOCK_EXE=...)
#
# A session created with limits (1 CPU, 256 MiB, 100 pids) and a secret env value: the
# Overview shows the limits and the state history (each lifecycle event the API lists), never
# the secret. A CPU-burning action: the list's CPU sparkline rises and the Resources tab shows
# non-zero CPU; its CPU and MEM figures equal the API's record of the sample the tab shows (the
# one its time names), formatted as docker stats does; b cycles braille -> blocks -> ASCII
# (checked by the characters in the pane), +/- change the window; j/k scroll the Overview; a
# non-UTF-8 terminal gets ASCII graphs by itself.
# Needs dockerd and the image paddock/base:local: without them it FAILS (exit 1), or skips
# (exit 77) with PADDOCK_ALLOW_SKIP=1.
set -uo pipefail
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"

start_engine || { fail "engine answers GET /v1/info"; exit 1; }
ok "engine started (pid $ENGINE_PID)"

NAME=res-$$
SECRET=hunter2-$$
create_session "$NAME" "\"limits\":{\"cpus\":1,\"memory\":\"256m\",\"pids\":100},\"env\":{\"PADDOCK_TEST_SECRET\":\"$SECRET\"}" ||
  exit 1
ok "session $SESSION_ID created with cpus 1, memory 256m, pids 100"
short=${SESSION_ID:0:8}

# Screen helpers (python: columns are characters, not bytes).
cat >"$TMP/pane.py" <<'PY'
import re, sys
lines = sys.stdin.read().split("\n")
what = sys.argv[1]
def right_pane():
    """The detail pane: what is right of the left column's top-right corner."""
    for l in lines:
        i = l.find("\u2510\u250c")
        if i >= 0:
            return [x[i + 1:] for x in lines]
    return lines
if what == "spark":  # the CPU column of the session's row in the list
    short = sys.argv[2]
    head = next(l for l in lines if "ACTS" in l and "STATE" in l)
    col = head.index(" CPU") + 1
    row = next(l for l in lines if short in l[:col])
    print(row[col:col + 8])
elif what == "now":  # the docker stats line of the Resources tab: CPU and MEM
    for l in right_pane():
        m = re.search(r"CPU ([0-9.]+%|--)  MEM (\S+ / \S+) ", l)
        if m and "NET I/O" in l:
            print(m.group(1), m.group(2))
            break
elif what == "sample":  # "HH:MM:SS CPU MEM / LIMIT": the newest sample's time and figures
    pane, now, at = right_pane(), None, None
    for l in pane:
        m = re.search(r"CPU ([0-9.]+%|--)  MEM (\S+ / \S+) ", l)
        if m and "NET I/O" in l and not now:
            now = m.group(1) + " " + m.group(2)
        m = re.search(r"as docker stats\) \S+ ([0-9]{2}:[0-9]{2}:[0-9]{2})", l)
        if m and not at:
            at = m.group(1)
    if now and at:
        print(at, now)
elif what == "chars":  # which kinds of graph characters the detail pane holds
    text = "".join(right_pane())
    kinds = []
    if any(0x2801 <= ord(c) <= 0x28FF for c in text): kinds.append("braille")
    if any(0x2581 <= ord(c) <= 0x2588 for c in text): kinds.append("blocks")
    if "#" in text: kinds.append("hash")
    # the borders may come from the terminal's line-drawing set (U+2500..U+257F)
    if all(ord(c) < 128 or 0x2500 <= ord(c) <= 0x257F for c in text): kinds.append("ascii-only")
    print(" ".join(kinds))
PY
pane() { screen | python3 "$TMP/pane.py" "$@"; }
# docker stats' formats (go-units): BytesSize "%.4g" base 1024, CPU "%.2f%%".
samples_at() { # samples_at HH:MM:SS -> "CPU% MEM / LIMIT" of each API sample of that second
  api GET "/v1/sessions/$SESSION_ID/stats?limit=300" | python3 -c '
import json, sys, time
def size(v):
    units = ["B", "KiB", "MiB", "GiB", "TiB"]
    i = 0
    while v >= 1024 and i < len(units) - 1:
        v /= 1024; i += 1
    return "%.4g%s" % (v, units[i])
for s in json.load(sys.stdin)["samples"]:
    # the dashboard shows localtime((time_t)at) as %H:%M:%S; the pane has this environment TZ
    if time.strftime("%H:%M:%S", time.localtime(int(s["at"]))) != sys.argv[1]:
        continue
    cpu = "--" if s["cpu"] is None else "%.2f%%" % s["cpu"]
    print(cpu, size(s["mem"]), "/", size(s["mem_limit"]))' "$1"
}

open_tmux 160 40 || exit 1
start_dashboard
wait_for "$NAME" || { fail "dashboard shows the session"; screen >&2; exit 1; }

# ---------------------------------------------------------------- Overview (the first tab)
if wait_for "State history" && wait_for "memory 256MiB" && wait_for "pids 100" &&
  wait_for "cpus 1 "; then
  ok "Overview shows the limits the session was created with (cpus 1, memory 256MiB, pids 100)"
else
  fail "Overview shows the limits"; screen >&2
fi
# The tamper-evident record, checked once when the tab opens (GET /v1/verify?session=ID).
wait_for "record verified" && ok "Overview says the session's record verified" ||
  { fail "Overview says the record verified"; screen >&2; }
# The session is ready and idle: its events are final. They are read from the API once, and the
# screen (which fetches them on its own, then follows the events) is polled until it shows them.
api_kinds() { api GET "/v1/sessions/$SESSION_ID/events" | json_get '["events"]' | python3 -c '
import ast, sys; print(" ".join(e["kind"] for e in ast.literal_eval(sys.stdin.read())))'; }
missing_kinds() { # the kinds of $kinds the screen's state history does not show (one capture)
  local s k
  s=$(screen)
  missing=
  for k in $kinds; do
    grep -qE "[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} +$k( |$)" <<<"$s" || missing="$missing $k"
  done
  [ -z "$missing" ]
}
# shown_events: how many lifecycle events (a time to the millisecond, then a kind) are on screen
shown_events() { screen | grep -cE "[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} +[a-z]"; }
kinds=$(api_kinds)
[ -n "$kinds" ] && poll 100 missing_kinds &&
  ok "Overview's state history shows every lifecycle event with its time ($kinds)" ||
  { fail "state history: '$kinds', missing:$missing"; screen >&2; }
screen_has "$SECRET" && fail "an env value (a possible secret) is on the screen" ||
  ok "no env value on the screen"
wait_for "Withheld    PADDOCK_TEST_SECRET" &&
  ok "Overview names the variable withheld for its credential-like name" ||
  { fail "withheld env not shown"; screen >&2; }
wait_for "$IMAGE" && wait_for "Network     none" &&
  ok "Overview shows the image and the network" || { fail "image/network"; screen >&2; }

# A state change while the Overview is open: the history gets it without a key.
paused_shown() { screen | grep -qE "[0-9]{3} +paused"; }
api POST "/v1/sessions/$SESSION_ID/pause" >/dev/null
poll 100 paused_shown && ok "a pause appears in the state history live" ||
  { fail "live state history (pause)"; screen >&2; }
api POST "/v1/sessions/$SESSION_ID/resume" >/dev/null
[ "$(cat "$TMP/status")" = 200 ] || fail "resume: $(cat "$TMP/status") $(cat "$TMP/reply")"
# Ready again and idle: the events are final; the screen is given time to show them all before
# the history is scrolled (an event coming in after G would move its end).
state_ready() { [ "$(api GET "/v1/sessions/$SESSION_ID" | json_get '["state"]' 2>/dev/null)" = ready ]; }
poll 150 state_ready || fail "ready after the resume"
nevents=$(api_kinds | wc -w)
events_at_least() { [ "$(shown_events)" -ge "$1" ]; }
poll 100 events_at_least "$nevents" ||
  { fail "the state history shows the $nevents events after the resume"; screen >&2; }

# j/k scroll the Overview when it is longer than the pane.
tm resize-window -t dash -x 160 -y 20
range() { screen | grep -oE ' [0-9]+-[0-9]+ of [0-9]+ ' | head -1; }
if wait_for " 1-16 of "; then
  tm send-keys -t dash l j
  wait_for " 2-17 of " && ok "j scrolls the Overview (lines 2-17)" || { fail "j scrolls"; screen >&2; }
  tm send-keys -t dash G
  at_end() { # one capture: the range ends at the last line, and the last event (ready) shows
    local s
    s=$(screen)
    r=$(grep -oE ' [0-9]+-[0-9]+ of [0-9]+ ' <<<"$s" | head -1)
    [ -n "$r" ] && [ "$(awk '{split($1, a, "-"); print a[2]}' <<<"$r")" = "$(awk '{print $3}' <<<"$r")" ] &&
      grep -qE "[0-9]{3} +ready" <<<"$s"
  }
  r=
  poll 100 at_end && ok "G shows the end of the state history ($r)" ||
    { fail "G scrolls to the end ($r)"; screen >&2; }
  tm send-keys -t dash k
  wait_gone "$r" && ok "k scrolls back up ($(range))" || { fail "k scrolls"; screen >&2; }
  tm send-keys -t dash g h
else
  fail "a long Overview says which lines it shows"; screen >&2
fi
tm resize-window -t dash -x 160 -y 40
poll 100 laid_out 160 40 && wait_for "State history" || fail "Overview after the resize"

# ---------------------------------------------------------------- a CPU-burning action
body='{"action":{"action":"run","args":{"command":"timeout 90 sh -c '"'"'while :; do :; done'"'"'"}}}'
api POST "/v1/sessions/$SESSION_ID/execute_action?wait=0" "$body" >/dev/null
[ "$(cat "$TMP/status")" = 202 ] && ok "a CPU-burning action started (202)" ||
  fail "burner: $(cat "$TMP/status") $(cat "$TMP/reply")"

# The list's CPU sparkline (scaled to the session's 1 CPU) rises above the idle line.
spark_risen() { spark=$(pane spark "$short"); grep -q '[▂▃▄▅▆▇█]' <<<"$spark"; }
spark=
poll 150 spark_risen && ok "the list's CPU sparkline rises ('$spark')" ||
  { fail "CPU sparkline '$spark'"; screen >&2; }

# ---------------------------------------------------------------- Resources
show_tab Resources "% of one CPU" || { fail "the Resources tab opens"; screen >&2; }
tm send-keys -t dash l # its keys work while the pane has the focus
cpu_busy() { # the tab's CPU figure is 10% or more
  cpu=$(pane now | cut -d' ' -f1)
  python3 -c 'import sys; sys.exit(0 if float(sys.argv[1].rstrip("%")) >= 10 else 1)' "${cpu:-0%}" 2>/dev/null
}
cpu=
poll 100 cpu_busy &&
  ok "the Resources tab shows the burner's CPU ($cpu of one CPU)" ||
  { fail "Resources CPU '$cpu'"; screen >&2; }

# The figures equal the API's record of the very sample on screen (as docker stats prints it).
# Both sides come from one sample: one capture gives the figures and the time of the sample they
# are from (the tab's info line), then the API, asked afterwards, has that sample (it stores
# what it publishes before it answers) and is looked up by that time. Samples may come faster
# than the test reads, so the newest ones are never compared. A capture taken while the
# dashboard was halfway through a frame (the figures new, the time old) is retried.
same_sample() {
  shown=$(pane sample)
  [ -n "$shown" ] || return 1
  api_side=$(samples_at "${shown%% *}")
  grep -qxF -- "${shown#* }" <<<"$api_side"
}
shown='' api_side=''
poll 100 same_sample && ok "CPU and MEM on screen equal the API's record of that sample (${shown#* } at ${shown%% *})" ||
  { fail "screen '$shown' vs the API's samples of that second: '$(echo $api_side)'"; screen >&2; }

# b: braille -> blocks -> ASCII -> braille.
graphs_are() { # graphs_are KIND [NOT...]: one capture's detail pane holds KIND and none of NOT
  local k
  c=" $(pane chars) "
  [[ "$c" == *" $1 "* ]] || return 1
  shift
  for k; do [[ "$c" == *" $k "* ]] && return 1; done
  return 0
}
c=
wait_for " braille " && poll 100 graphs_are braille && ok "graphs are braille (U+2800..U+28FF) by default" ||
  { fail "braille graphs:$c"; screen >&2; }
tm send-keys -t dash b
wait_for " blocks " && poll 100 graphs_are blocks braille && ok "b: block graphs (▁..█), no braille" ||
  { fail "b: block graphs, no braille:$c"; screen >&2; }
tm send-keys -t dash b
wait_for " ASCII " && poll 100 graphs_are hash braille blocks &&
  ok "b: ASCII graphs (#), no braille or block characters" || { fail "b: ASCII graphs:$c"; screen >&2; }
tm send-keys -t dash b
wait_for " braille " && ok "b again: back to braille" || { fail "b cycles back"; screen >&2; }

# +/- change the time window.
tm send-keys -t dash -- -
wait_for "last 5m " && ok "- zooms out (last 5m)" || { fail "- zooms out"; screen >&2; }
tm send-keys -t dash + +
wait_for "last 1m " && ok "+ zooms in (last 1m)" || { fail "+ zooms in"; screen >&2; }
tm send-keys -t dash '?'
wait_for "graph style: braille, blocks, ASCII" && ok "? lists the Resources keys" ||
  { fail "help for the Resources keys"; screen >&2; }
tm send-keys -t dash Escape

tm send-keys -t dash q
wait_for 'READY$' || fail "dashboard quits"

# ---------------------------------------------------------------- a terminal without UTF-8
# The session is stopped first: its graphs come from the stored samples alone (no events).
api POST "/v1/sessions/$SESSION_ID/stop" >/dev/null
[ "$(cat "$TMP/status")" = 200 ] || fail "stop: $(cat "$TMP/status") $(cat "$TMP/reply")"
tm send-keys -t dash -l "export LANG=C LC_ALL=C"
tm send-keys -t dash Enter
start_dashboard
wait_for "$NAME" || fail "the dashboard starts in the C locale"
show_tab Resources "% of one CPU" || { fail "the Resources tab opens (C locale)"; screen >&2; }
tm send-keys -t dash l
ascii_only() { graphs_are hash braille blocks && graphs_are ascii-only; }
if wait_for " ASCII " && poll 100 ascii_only; then
  ok "a non-UTF-8 terminal gets ASCII graphs by itself (a stopped session: the stored samples)"
else
  fail "ASCII without UTF-8:$c"; screen >&2
fi
tm send-keys -t dash b
wait_for "the terminal is not UTF-8" && ok "b says why the graphs stay ASCII" ||
  { fail "b without UTF-8"; screen >&2; }
tm send-keys -t dash q
wait_for 'READY$' || fail "dashboard quits (C locale)"

if [ -s "$TMP/dash.err" ]; then
  fail "the dashboard wrote to stderr"; cat "$TMP/dash.err" >&2
fi

api DELETE "/v1/sessions/$SESSION_ID" >/dev/null
[ "$(cat "$TMP/status")" = 200 ] && { ok "session deleted"; SESSION_IDS=(); } ||
  fail "DELETE /v1/sessions/$SESSION_ID: $(cat "$TMP/status") $(cat "$TMP/reply")"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
