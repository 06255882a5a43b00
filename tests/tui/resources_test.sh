#!/usr/bin/env bash
# The dashboard's Overview and Resources tabs and the sessions' sparklines, in tmux against a
# real engine.
#
#   tests/tui/resources_test.sh [PATH/TO/paddock]        (or PADDOCK_EXE=...)
#
# A session created with limits (1 CPU, 256 MiB, 100 pids) and a secret env value: the
# Overview shows the limits and the state history (each lifecycle event the API lists), never
# the secret. A CPU-burning action: the list's CPU sparkline rises and the Resources tab shows
# non-zero CPU; its CPU and MEM figures equal the API's latest sample formatted as docker stats
# does; b cycles braille -> blocks -> ASCII (checked by the characters in the pane), +/- change
# the window; j/k scroll the Overview; a non-UTF-8 terminal gets ASCII graphs by itself.
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
        m = re.search(r"CPU ([0-9.]+%)  MEM (\S+ / \S+) ", l)
        if m and "NET I/O" in l:
            print(m.group(1), m.group(2))
            break
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
latest() { # latest -> "AT CPU% MEM / LIMIT" of the API's newest sample
  api GET "/v1/sessions/$SESSION_ID/stats?limit=1" | python3 -c '
import json, sys
s = json.load(sys.stdin)["samples"][-1]
def size(v):
    units = ["B", "KiB", "MiB", "GiB", "TiB"]
    i = 0
    while v >= 1024 and i < len(units) - 1:
        v /= 1024; i += 1
    return "%.4g%s" % (v, units[i])
cpu = "--" if s["cpu"] is None else "%.2f%%" % s["cpu"]
print(s["at"], cpu, size(s["mem"]), "/", size(s["mem_limit"]))'
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
kinds=$(api GET "/v1/sessions/$SESSION_ID/events" | json_get '["events"]' | python3 -c '
import ast, sys; print(" ".join(e["kind"] for e in ast.literal_eval(sys.stdin.read())))')
missing=
for k in $kinds; do
  screen | grep -qE "[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} +$k( |$)" || missing="$missing $k"
done
[ -n "$kinds" ] && [ -z "$missing" ] &&
  ok "Overview's state history shows every lifecycle event with its time ($kinds)" ||
  { fail "state history: '$kinds', missing:$missing"; screen >&2; }
screen | grep -qF "$SECRET" && fail "an env value (a possible secret) is on the screen" ||
  ok "no env value on the screen"
screen | grep -qF "$IMAGE" && screen | grep -qF "Network     none" &&
  ok "Overview shows the image and the network" || { fail "image/network"; screen >&2; }

# A state change while the Overview is open: the history gets it without a key.
api POST "/v1/sessions/$SESSION_ID/pause" >/dev/null
for _ in $(seq 1 100); do screen | grep -qE "[0-9]{3} +paused" && break; sleep 0.1; done
screen | grep -qE "[0-9]{3} +paused" && ok "a pause appears in the state history live" ||
  { fail "live state history (pause)"; screen >&2; }
api POST "/v1/sessions/$SESSION_ID/resume" >/dev/null
[ "$(cat "$TMP/status")" = 200 ] || fail "resume: $(cat "$TMP/status") $(cat "$TMP/reply")"

# j/k scroll the Overview when it is longer than the pane.
tm resize-window -t dash -x 160 -y 20
range() { screen | grep -oE ' [0-9]+-[0-9]+ of [0-9]+ ' | head -1; }
if wait_for " 1-16 of "; then
  tm send-keys -t dash l j
  wait_for " 2-17 of " && ok "j scrolls the Overview (lines 2-17)" || { fail "j scrolls"; screen >&2; }
  tm send-keys -t dash G
  for _ in $(seq 1 50); do
    r=$(range)
    [ -n "$r" ] && [ "$(echo "$r" | awk '{split($1, a, "-"); print a[2]}')" = "$(echo "$r" | awk '{print $3}')" ] && break
    sleep 0.1
  done
  screen | grep -qE "[0-9]{3} +ready" && [ "$(echo "$r" | awk '{split($1, a, "-"); print a[2]}')" = "$(echo "$r" | awk '{print $3}')" ] &&
    ok "G shows the end of the state history ($r)" || { fail "G scrolls to the end ($r)"; screen >&2; }
  tm send-keys -t dash k
  wait_gone "$r" 20 && ok "k scrolls back up ($(range))" || { fail "k scrolls"; screen >&2; }
  tm send-keys -t dash g h
else
  fail "a long Overview says which lines it shows"; screen >&2
fi
tm resize-window -t dash -x 160 -y 40
wait_for "State history" || fail "Overview after the resize"

# ---------------------------------------------------------------- a CPU-burning action
body='{"action":{"action":"run","args":{"command":"timeout 90 sh -c '"'"'while :; do :; done'"'"'"}}}'
api POST "/v1/sessions/$SESSION_ID/execute_action?wait=0" "$body" >/dev/null
[ "$(cat "$TMP/status")" = 202 ] && ok "a CPU-burning action started (202)" ||
  fail "burner: $(cat "$TMP/status") $(cat "$TMP/reply")"

# The list's CPU sparkline (scaled to the session's 1 CPU) rises above the idle line.
for _ in $(seq 1 150); do
  pane spark "$short" | grep -q '[▂▃▄▅▆▇█]' && break
  sleep 0.1
done
spark=$(pane spark "$short")
printf '%s' "$spark" | grep -q '[▂▃▄▅▆▇█]' && ok "the list's CPU sparkline rises ('$spark')" ||
  { fail "CPU sparkline '$spark'"; screen >&2; }

# ---------------------------------------------------------------- Resources
show_tab Resources "% of one CPU" || { fail "the Resources tab opens"; screen >&2; }
tm send-keys -t dash l # its keys work while the pane has the focus
for _ in $(seq 1 100); do
  cpu=$(pane now | cut -d' ' -f1)
  python3 -c 'import sys; sys.exit(0 if float(sys.argv[1].rstrip("%")) >= 10 else 1)' "${cpu:-0%}" 2>/dev/null && break
  sleep 0.1
done
python3 -c 'import sys; sys.exit(0 if float(sys.argv[1].rstrip("%")) >= 10 else 1)' "${cpu:-0%}" 2>/dev/null &&
  ok "the Resources tab shows the burner's CPU ($cpu of one CPU)" ||
  { fail "Resources CPU '$cpu'"; screen >&2; }

# The figures equal the API's newest sample (as docker stats prints it): read the API, the
# screen, the API again; when no sample came in between, the screen must show that one.
matched=
for _ in $(seq 1 30); do
  a1=$(latest)
  sleep 0.3
  shown=$(pane now)
  a2=$(latest)
  [ "${a1%% *}" = "${a2%% *}" ] || continue
  if [ "$shown" = "${a2#* }" ]; then matched=1; break; fi
done
[ -n "$matched" ] && ok "CPU and MEM on screen equal the API's latest sample ($shown)" ||
  { fail "screen '$shown' vs API '${a2#* }'"; screen >&2; }

# b: braille -> blocks -> ASCII -> braille.
wait_for " braille " && pane chars | grep -qw braille && ok "graphs are braille (U+2800..U+28FF) by default" ||
  { fail "braille graphs: $(pane chars)"; screen >&2; }
tm send-keys -t dash b
wait_for " blocks " && for _ in $(seq 1 20); do pane chars | grep -qw braille || break; sleep 0.1; done
c=$(pane chars)
case " $c " in *" blocks "*) case " $c " in *" braille "*) fail "b: still braille ($c)" ;;
  *) ok "b: block graphs (▁..█), no braille" ;; esac ;;
*) fail "b: block graphs ($c)"; screen >&2 ;; esac
tm send-keys -t dash b
wait_for " ASCII " && for _ in $(seq 1 20); do pane chars | grep -qw blocks || break; sleep 0.1; done
c=$(pane chars)
case " $c " in *" hash "*) case " $c " in *" braille "* | *" blocks "*) fail "b: not ASCII ($c)" ;;
  *) ok "b: ASCII graphs (#), no braille or block characters" ;; esac ;;
*) fail "b: ASCII graphs ($c)"; screen >&2 ;; esac
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
if wait_for " ASCII " && pane chars | grep -qw hash && pane chars | grep -qw ascii-only; then
  ok "a non-UTF-8 terminal gets ASCII graphs by itself (a stopped session: the stored samples)"
else
  fail "ASCII without UTF-8: $(pane chars)"; screen >&2
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
