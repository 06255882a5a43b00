#!/usr/bin/env python3
"""One side of bench/egress_bench.sh: a download of SIZE bytes from URL/bytes/SIZE (the best
of RUNS), then N small requests to URL/hello.txt, each on a new connection (urllib), through
whatever proxy the environment names. Prints one JSON line: {"mbps", "small_ms_median",
"small_ms_p90"}."""
import json
import statistics
import sys
import time
import urllib.request

url, size, runs, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
best = 0.0
for _ in range(runs):
    t = time.perf_counter()
    r = urllib.request.urlopen(f"{url}/bytes/{size}", timeout=120)
    got = 0
    while True:
        b = r.read(1 << 20)
        if not b:
            break
        got += len(b)
    dt = time.perf_counter() - t
    assert got == size, (got, size)
    best = max(best, size / dt / 1e6)
small = []
for _ in range(n):
    t = time.perf_counter()
    assert urllib.request.urlopen(f"{url}/hello.txt", timeout=30).read() == b"hello-egress\n"
    small.append((time.perf_counter() - t) * 1e3)
small.sort()
print(json.dumps({"mbps": round(best, 1), "small_ms_median": round(statistics.median(small), 3),
                  "small_ms_p90": round(small[int(len(small) * 0.9) - 1], 3)}))
