#!/usr/bin/env python3
"""One side of bench/egress_bench.sh, through whatever proxy the environment names (urllib, as
pip does: a plain request for http://, a CONNECT tunnel for https://). For each base URL: a
download of SIZE bytes from BASE/bytes/SIZE (the best of RUNS), then N small requests to
BASE/hello.txt, each on a new connection. An https:// base is checked against CAFILE. RUNS 0
skips the downloads, N 0 the small requests. Prints one JSON line: {"http": {"mbps",
"cpu_ms_per_gb" (this process's CPU time over the downloads, per GB), "small_ms_median",
"small_ms_p90"}, "https": {...}}; PROTOS (default "http,https") names which of the two.

usage: egress_client.py HTTP_URL HTTPS_URL CAFILE SIZE RUNS N [PROTOS]"""
import json
import resource
import ssl
import statistics
import sys
import time
import urllib.request


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def measure(url, size, runs, n, ctx):
    out = {}
    best, cpu0 = 0.0, cpu()
    for _ in range(runs):
        t = time.perf_counter()
        r = urllib.request.urlopen(f"{url}/bytes/{size}", timeout=120, context=ctx)
        got = 0
        while True:
            b = r.read(1 << 20)
            if not b:
                break
            got += len(b)
        dt = time.perf_counter() - t
        assert got == size, (got, size)
        best = max(best, size / dt / 1e6)
    if runs:
        out["mbps"] = round(best, 1)
        out["cpu_ms_per_gb"] = round((cpu() - cpu0) * 1e3 / (size * runs / 1e9))
    small = []
    for _ in range(n):
        t = time.perf_counter()
        body = urllib.request.urlopen(f"{url}/hello.txt", timeout=30, context=ctx).read()
        assert body == b"hello-egress\n", body
        small.append((time.perf_counter() - t) * 1e3)
    small.sort()
    if n:
        out["small_ms_median"] = round(statistics.median(small), 3)
        out["small_ms_p90"] = round(small[max(int(len(small) * 0.9) - 1, 0)], 3)
    return out


http, https, cafile = sys.argv[1], sys.argv[2], sys.argv[3]
size, runs, n = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
protos = sys.argv[7].split(",") if len(sys.argv) > 7 else ["http", "https"]
ctx = ssl.create_default_context(cafile=cafile)
bases = {"http": (http, None), "https": (https, ctx)}
print(json.dumps({p: measure(bases[p][0], size, runs, n, bases[p][1]) for p in protos}))
