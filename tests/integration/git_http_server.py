#!/usr/bin/env python3
"""Loopback-only "dumb HTTP" git server for test_options.c.

Serves ROOT (bare repositories after `git update-server-info`) on 127.0.0.1, port chosen by
the kernel and printed on the first stdout line. Every request must carry
`Authorization: Basic base64("x-access-token:" + $GIT_TEST_TOKEN)`, else 401. For each request
it appends one line to REPORT: the path, whether the header was right, and any process (other
than this one) whose command line contains the token while the request is served.

usage: GIT_TEST_TOKEN=... git_http_server.py ROOT REPORT
"""
import base64
import functools
import http.server
import os
import sys

ROOT, REPORT = sys.argv[1], sys.argv[2]
TOKEN = os.environ["GIT_TEST_TOKEN"]
WANT = "Basic " + base64.b64encode(("x-access-token:" + TOKEN).encode()).decode()


def argv_leaks():
    """Pids whose argv holds the token (the git client runs while its request is served)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if TOKEN.encode() in f.read():
                    found.append(pid)
        except OSError:
            pass
    return found


class Handler(http.server.SimpleHTTPRequestHandler):
    def check(self):
        got = self.headers.get("Authorization")
        auth = "ok" if got == WANT else ("none" if got is None else "wrong")
        leaks = argv_leaks()
        with open(REPORT, "a") as f:
            f.write(f"{self.command} {self.path} auth={auth} argv_leaks={','.join(leaks) or '-'}\n")
        if auth == "ok":
            return True
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="paddock-test"')
        self.send_header("Content-Length", "0")
        self.end_headers()
        return False

    def do_GET(self):
        if self.check():
            super().do_GET()

    def do_HEAD(self):
        if self.check():
            super().do_HEAD()

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(
    ("127.0.0.1", 0), functools.partial(Handler, directory=ROOT)
)
print(server.server_address[1], flush=True)
server.serve_forever()
