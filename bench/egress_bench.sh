#!/usr/bin/env bash
# The egress proxy's cost (docs/egress.md): a download of SIZE bytes from a loopback server
# (tests/integration/egress_servers.py) made inside a "network": "egress" sandbox through the
# engine, against the same download made directly on the host in the same run (the two
# alternating, with the CPU per GB of the client, the engine and the server); then the time
# of a small request on a new connection, both ways (what the proxy adds to a connection).
# Both over plain HTTP (a request the engine forwards) and over HTTPS (a CONNECT tunnel to a
# loopback TLS server, what pip, npm and git do). A third column, for what the proxy is not:
# the same client and servers both inside the sandbox, on its own loopback (no proxy), which
# pays the sandbox's own costs (its seccomp filter, its cgroup, its Python) without the relay.
#   bench/egress_bench.sh BUILD_DIR [SIZE_BYTES] [RUNS] [SMALL_N]
# Starts its own engine on a temp state dir and removes its session and servers at the end.
set -euo pipefail
build=$(readlink -f "$1")
size=${2:-1073741824} runs=${3:-3} n=${4:-200}
src=$(dirname "$(readlink -f "$0")")/..
tmp=$(mktemp -d /tmp/paddock-egress-bench-XXXXXX)
engine_pid= servers_pid= sid=
cleanup() {
  [ -n "$sid" ] && curl -s --unix-socket "$tmp/state/engine.sock" -X DELETE "http://x/v1/sessions/$sid" >/dev/null || true
  [ -n "$engine_pid" ] && kill "$engine_pid" 2>/dev/null && wait "$engine_pid" 2>/dev/null || true
  [ -n "$servers_pid" ] && kill "$servers_pid" 2>/dev/null && wait "$servers_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/key.pem" -out "$tmp/cert.pem" -days 1 \
  -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1
# The servers stop when their stdin closes: this script holds its write end (fd 4).
mkfifo "$tmp/servers.in"
python3 "$src/tests/integration/egress_servers.py" "$tmp/cert.pem" "$tmp/key.pem" \
  <"$tmp/servers.in" >"$tmp/servers.out" &
servers_pid=$!
exec 4>"$tmp/servers.in"
for _ in $(seq 1 200); do [ -s "$tmp/servers.out" ] && break; sleep 0.05; done
read -r http https <"$tmp/servers.out"
mkdir -p "$tmp/state"
PADDOCK_STATE_DIR=$tmp/state PADDOCK_TEST_LABEL=1 PADDOCK_CONFIRM=never \
  PADDOCK_EXECUTOR=$build/executor/paddock-executor "$build/paddock" serve >"$tmp/serve.log" 2>&1 &
engine_pid=$!
sock=$tmp/state/engine.sock
for _ in $(seq 1 200); do curl -s --unix-socket "$sock" http://x/v1/info >/dev/null 2>&1 && break; sleep 0.05; done
# An allow entry naming a host address is the operator's to make (docs/security.md): the
# operator's socket creates the session.
sid=$(curl -s --unix-socket "$tmp/state/operator.sock" -X POST http://x/v1/sessions \
  -d "{\"network\":\"egress\",\"egress\":{\"allow\":[\"127.0.0.1:$http\",\"127.0.0.1:$https\"],\"ask\":false}}" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
run() {
  local body
  body=$(python3 -c 'import json,sys; print(json.dumps({"action":{"action":"run","args":{"command":sys.argv[1],"blocking":True},"timeout":600}}))' "$1")
  curl -s --max-time 700 --unix-socket "$sock" -X POST "http://x/v1/sessions/$sid/execute_action" -d "$body" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["content"].strip())'
}
run "printf %s $(base64 -w0 "$src/bench/egress_client.py") | base64 -d > /tmp/b.py && echo ok" >/dev/null
run "printf %s $(base64 -w0 "$tmp/cert.pem") | base64 -d > /tmp/b.pem && echo ok" >/dev/null
run "printf %s $(base64 -w0 "$tmp/key.pem") | base64 -d > /tmp/b.key && echo ok" >/dev/null
run "printf %s $(base64 -w0 "$src/tests/integration/egress_servers.py") | base64 -d > /tmp/s.py && echo ok" >/dev/null
args="http://127.0.0.1:$http https://127.0.0.1:$https"
# CPU time (ticks) of a host process: the engine relays, the servers serve; taken around each
# download alone (the small requests are a pass of their own)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
direct() {
  # shellcheck disable=SC2086
  env -u http_proxy -u HTTP_PROXY -u https_proxy -u HTTPS_PROXY \
    python3 "$src/bench/egress_client.py" $args "$tmp/cert.pem" "$size" "$@"
}
# The downloads through the proxy and direct are interleaved, one of each per round and
# protocol, the first of the pair alternating: on a shared machine both see the same moments of
# the others' load (measured one column after the other, a burst of load lands on one column).
# Each line: PATH PROTO ENGINE_TICKS SERVER_TICKS CLIENT_JSON
downloads=
for r in $(seq 1 "$runs"); do
  for p in http https; do
    order="inside direct"
    [ $((r % 2)) = 0 ] && order="direct inside"
    for w in $order; do
      e0=$(ticks "$engine_pid") s0=$(ticks "$servers_pid")
      if [ "$w" = inside ]; then
        out=$(run "python3 /tmp/b.py $args /tmp/b.pem $size 1 0 $p" | tail -1)
      else
        out=$(direct 1 0 "$p")
      fi
      e1=$(ticks "$engine_pid") s1=$(ticks "$servers_pid")
      downloads+="$w $p $((e1 - e0)) $((s1 - s0)) $out"$'\n'
    done
  done
done
inside_small=$(run "python3 /tmp/b.py $args /tmp/b.pem $size 0 $n" | tail -1)
# the sandbox's own loopback, in a subshell (the agent's shell is persistent): its servers
# stop when the subshell's fd 3, their stdin, closes
local_cmd="(rm -f /tmp/s.in /tmp/s.out; mkfifo /tmp/s.in; python3 /tmp/s.py /tmp/b.pem /tmp/b.key </tmp/s.in >/tmp/s.out &"
local_cmd+=" exec 3>/tmp/s.in; for _ in \$(seq 1 200); do [ -s /tmp/s.out ] && break; sleep 0.05; done; read -r h t </tmp/s.out;"
local_cmd+=" env -u http_proxy -u HTTP_PROXY -u https_proxy -u HTTPS_PROXY python3 /tmp/b.py http://127.0.0.1:\$h"
local_cmd+=" https://127.0.0.1:\$t /tmp/b.pem $size $runs $n; exec 3>&-; wait)"
sandboxed=$(run "$local_cmd" | tail -1)
direct_small=$(direct 0 "$n")
python3 - "$inside_small" "$direct_small" "$sandboxed" "$size" "$runs" "$n" "$hz" "$downloads" <<'PY'
import json, sys
i2, d2, l = (json.loads(a) for a in sys.argv[1:4])
size, runs, n, hz = int(sys.argv[4]), int(sys.argv[5]), sys.argv[6], int(sys.argv[7])
gb = size * runs / 1e9  # one protocol's downloads
res = {w: {p: {"mbps": 0.0, "client": 0, "engine": 0, "server": 0} for p in ("http", "https")}
       for w in ("inside", "direct")}
for line in sys.argv[8].splitlines():
    w, p, e, s, out = line.split(" ", 4)
    c, r = json.loads(out)[p], res[w][p]
    r["mbps"] = max(r["mbps"], c["mbps"])
    r["client"] += c["cpu_ms_per_gb"] / runs
    r["engine"] += int(e) * 1000 / hz / gb
    r["server"] += int(s) * 1000 / hz / gb
i, d = res["inside"], res["direct"]
for a, b in ((i, i2), (d, d2)):
    for k in a:
        a[k].update(b[k])
print(f"egress proxy bench: {size >> 20} MiB download (best of {runs}, through the proxy and direct "
      f"interleaved), {n} small requests")
print(f"{'':38}{'through the proxy':>18}{'direct on the host':>20}{'in-sandbox loopback':>21}")
for k, what in (("http", "HTTP"), ("https", "HTTPS (CONNECT)")):
    a, b, c = i[k], d[k], l[k]
    print(f"{what + ' download MB/s':38}{a['mbps']:>18}{b['mbps']:>20}{c['mbps']:>21}")
    print(f"{what + ' client CPU ms per GB':38}{a['client']:>18.0f}{b['client']:>20.0f}"
          f"{c['cpu_ms_per_gb']:>21}")
    print(f"{what + ' engine CPU ms per GB':38}{a['engine']:>18.0f}{'-':>20}{'-':>21}")
    print(f"{what + ' server CPU ms per GB':38}{a['server']:>18.0f}{b['server']:>20.0f}"
          f"{'(in the sandbox)':>21}")
    for f, name in (("small_ms_median", "small request ms, median"),
                    ("small_ms_p90", "small request ms, p90")):
        print(f"{what + ' ' + name:38}{a[f]:>18}{b[f]:>20}{c[f]:>21}")
for k, what in (("http", "HTTP"), ("https", "HTTPS")):
    a, b = i[k], d[k]
    print(f"{what}: through the proxy {a['mbps'] / b['mbps'] * 100:.0f} % of direct (goal: >= 80 %), "
          f"{a['mbps'] / l[k]['mbps'] * 100:.0f} % of the sandbox's own loopback; "
          f"added latency per connection (median): {a['small_ms_median'] - b['small_ms_median']:.2f} ms")
PY
