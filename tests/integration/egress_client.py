#!/usr/bin/env python3
"""The sandbox's side of test_egress.c (copied into the sandbox by the test).

  get URL [CAFILE]      urllib through HTTP(S)_PROXY, as pip's kind of client does
  raw METHOD TARGET     one request straight to the proxy at 127.0.0.1:3128 (any host, even
                        one NO_PROXY names); prints the status line and the body
  head TEXT             TEXT (backslash escapes decoded: \\r, \\n) sent as-is to the proxy;
                        prints the status line and the body, as raw does
  direct HOST PORT      a connection that ignores the proxy
Each prints one line: OK/HTTP/ERR and what came back.
"""
import socket
import ssl
import sys
import urllib.error
import urllib.request


def get(url, cafile=None):
    ctx = ssl.create_default_context(cafile=cafile) if cafile else None
    try:
        r = urllib.request.urlopen(url, timeout=90, context=ctx)
        print("OK", r.status, r.read().decode(errors="replace").strip())
    except urllib.error.HTTPError as e:
        print("HTTP", e.code, e.read().decode(errors="replace").strip())
    except Exception as e:  # the test reads the text
        print("ERR", repr(e))


def raw(method, target):
    host = target.split("/")[2] if "://" in target else target
    send(f"{method} {target} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())


def head(text):
    send(text.encode().decode("unicode_escape").encode("latin-1"))


def send(request):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=90)
    s.sendall(request)
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
    head, _, body = data.partition(b"\r\n\r\n")
    print("RAW", head.split(b"\r\n")[0].decode(), "|", body.decode(errors="replace").strip())


def direct(host, port):
    try:
        socket.create_connection((host, int(port)), timeout=5)
        print("CONNECTED")
    except OSError as e:
        print("ERR", e.errno, e.strerror)


if __name__ == "__main__":
    {"get": get, "raw": raw, "head": head, "direct": direct}[sys.argv[1]](*sys.argv[2:])
