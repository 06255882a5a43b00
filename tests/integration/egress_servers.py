#!/usr/bin/env python3
"""Loopback-only destinations for test_egress.c and bench/egress_bench.sh.

Serves on 127.0.0.1, ports chosen by the kernel, printed as one stdout line "HTTP HTTPS":
  plain HTTP:  GET /hello.txt -> "hello-egress\\n"; GET /host -> "host=" and the Host headers
               it got, comma-separated; GET /bytes/N -> N bytes (a download);
               GET /slow -> headers, one byte a second for at most 60 s (a connection held open);
               GET /keepalive -> "kept" and the connection stays open for one more request
               whatever Connection says (a destination that ignores Connection: close);
               POST /ANY -> "got=" and its Content-Length body (/keepalive...: kept open too)
  HTTPS:       the same over TLS with CERT and KEY (a self-signed certificate the test made).
Every request's line and Host go to LOG (one "METHOD PATH HOST" line each) when it is given.
It stops by itself when its stdin closes (the test that started it ended) or after 600 s.

usage: egress_servers.py CERT KEY [LOG]
"""
import http.server
import os
import socketserver
import ssl
import sys
import threading
import time

CHUNK = b"x" * 65536
LOG = None
LOG_LOCK = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def seen(self):
        if LOG:
            with LOG_LOCK, open(LOG, "a") as f:
                f.write(f"{self.command} {self.path} {self.headers.get('Host')}\n")

    def do_POST(self):
        self.seen()
        n = int(self.headers.get("Content-Length") or 0)
        body = b"got=" + self.rfile.read(n)
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = not self.path.startswith("/keepalive")

    def do_GET(self):
        self.seen()
        path = self.path.split("?")[0]
        if path == "/keepalive":
            body = b"kept"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif path == "/hello.txt":
            body = b"hello-egress\n"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif path == "/host":
            body = ("host=" + ",".join(self.headers.get_all("Host") or [])).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif path.startswith("/bytes/"):
            n = int(path[len("/bytes/"):])
            self.send_response(200)
            self.send_header("Content-Length", str(n))
            self.end_headers()
            while n > 0:
                k = min(n, len(CHUNK))
                self.wfile.write(CHUNK[:k])
                n -= k
        elif path == "/slow":
            self.send_response(200)
            self.send_header("Content-Length", "60")
            self.end_headers()
            for _ in range(60):
                self.wfile.write(b"s")
                self.wfile.flush()
                time.sleep(1)
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
        # only /keepalive holds the connection open: a test on old code ends, not hangs
        self.close_connection = path != "/keepalive"


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def main():
    global LOG
    cert, key = sys.argv[1], sys.argv[2]
    LOG = sys.argv[3] if len(sys.argv) > 3 else None
    plain = Server(("127.0.0.1", 0), Handler)
    tls = Server(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
    for s in (plain, tls):
        threading.Thread(target=s.serve_forever, daemon=True).start()
    print(plain.server_address[1], tls.server_address[1], flush=True)
    deadline = time.time() + 600
    stdin = threading.Thread(target=sys.stdin.read, daemon=True)
    stdin.start()
    while stdin.is_alive() and time.time() < deadline:
        stdin.join(1)
    os._exit(0)


if __name__ == "__main__":
    main()
