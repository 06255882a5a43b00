#!/usr/bin/env python3
"""The sandbox's side of test_egress.c (copied into the sandbox by the test).

  get URL [CAFILE]      urllib through HTTP(S)_PROXY, as pip's kind of client does
  raw METHOD TARGET     one request straight to the proxy at 127.0.0.1:3128 (any host, even
                        one NO_PROXY names); prints the status line and the body
  head TEXT             TEXT (backslash escapes decoded: \\r, \\n) sent as-is to the proxy;
                        prints the status line and the body, as raw does
  direct HOST PORT      a connection that ignores the proxy
  tls HOST PORT SNI [FRAG [FIRST [MAX]]]
                        CONNECT HOST:PORT, then TLS naming SNI ("-": no server name) and
                        GET /hello.txt in it; FRAG: the ClientHello in records of FRAG bytes,
                        sent a byte at a time (TCP_NODELAY; 0: as one write); FIRST: bytes
                        (hex; "-": none) sent before the hello in the same write; MAX: "1.2"
                        for a TLS 1.2 handshake; prints the tunnel's bytes each way too
  hrr HOST PORT SNI2    CONNECT HOST:PORT, then a ClientHello naming HOST with no key share
                        (the server asks for another: a HelloRetryRequest), the
                        compatibility change_cipher_spec and a second hello naming SNI2;
                        prints what answered the second hello and the first hello's size
  badhello HOST PORT [half]
                        CONNECT HOST:PORT, then a ClientHello whose extensions length is one
                        more than they are (half: the first half of a good one, and wait);
                        prints what came back
  tunnel HOST PORT TEXT CONNECT HOST:PORT, then TEXT (escapes decoded) in the tunnel as is
Each prints one line: OK/HTTP/ERR/CLOSED and what came back.
"""
import hashlib
import os
import socket
import ssl
import sys
import time
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
    answer("RAW", s)


def answer(tag, s):
    """Reads s to its end and prints TAG, the answer's first line and its body."""
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
    head, _, body = data.partition(b"\r\n\r\n")
    print(tag, head.split(b"\r\n")[0].decode(), "|", body.decode(errors="replace").strip())


def direct(host, port):
    try:
        socket.create_connection((host, int(port)), timeout=5)
        print("CONNECTED")
    except OSError as e:
        print("ERR", e.errno, e.strerror)


def tunnel_open(host, port):
    """A CONNECT tunnel through the proxy, its 200 read; None after printing why not."""
    s = socket.create_connection(("127.0.0.1", 3128), timeout=90)
    s.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        b = s.recv(1)
        if not b:
            break
        data += b
    if not data.startswith(b"HTTP/1.1 200"):
        print("HTTP", data.decode(errors="replace").strip())
        return None
    return s


def hello_of(sni, tls_max=""):
    """A real ClientHello (Python's TLS, naming sni or nothing; at most TLS 1.2 when tls_max is
    "1.2") as its records' bytes, and the TLS object waiting for the server's answer."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if tls_max == "1.2":
        ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_hostname=None if sni == "-" else sni)
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return obj, inc, out, out.read()


def reframe(records, frag):
    """The handshake payload of TLS records put again into records of frag bytes each."""
    payload, at = b"", 0
    while at + 5 <= len(records):
        n = int.from_bytes(records[at + 3:at + 5], "big")
        payload += records[at + 5:at + 5 + n]
        at += 5 + n
    return b"".join(b"\x16\x03\x01" + len(payload[i:i + frag]).to_bytes(2, "big") +
                    payload[i:i + frag] for i in range(0, len(payload), frag))


def tls(host, port, sni, frag="0", first="", tls_max=""):
    s = tunnel_open(host, port)
    if not s:
        return
    obj, inc, out, hello = hello_of(sni, tls_max)
    hello = bytes.fromhex(first if first != "-" else "") + hello
    sent, got = len(hello), 0
    try:
        if int(frag):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for b in reframe(hello, int(frag)):
                s.send(bytes([b]))
                time.sleep(0.0002)  # paces the segments apart; any split is right
        else:
            s.sendall(hello)
        while True:
            try:
                obj.do_handshake()
                break
            except ssl.SSLWantReadError:
                b = out.read()
                s.sendall(b)
                sent += len(b)
                b = s.recv(65536)
                if not b:
                    print("CLOSED in the handshake")
                    return
                got += len(b)
                inc.write(b)
        b = out.read()  # the handshake's last flight, if it ended on it
        obj.write(b"GET /hello.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        b += out.read()
        s.sendall(b)
        sent += len(b)
        data = b""
        while True:
            try:
                data += obj.read(65536)
            except ssl.SSLWantReadError:
                b = s.recv(65536)
                if not b:
                    break
                got += len(b)
                inc.write(b)
            except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                break
        print("OK", data.partition(b"\r\n\r\n")[2].decode(errors="replace").strip(),
              obj.version(), "sent", sent, "got", got)
    except (ssl.SSLError, OSError) as e:
        print("CLOSED", repr(e))


def client_hello(name, share, rnd, sid):
    """A TLS 1.3 ClientHello record built by hand: x25519 only, with share as its key_share
    entries (empty: the server asks for a share with a HelloRetryRequest)."""
    def vec(b, w):
        return len(b).to_bytes(w, "big") + b

    def ext(t, d):
        return t.to_bytes(2, "big") + vec(d, 2)

    exts = (ext(0, vec(b"\0" + vec(name.encode(), 2), 2)) + ext(10, vec(b"\0\x1d", 2)) +
            ext(13, vec(b"\x08\x04\x04\x03", 2)) + ext(43, vec(b"\x03\x04", 1)) +
            ext(51, vec(share, 2)))
    body = b"\x03\x03" + rnd + vec(sid, 1) + vec(b"\x13\x01", 2) + vec(b"\0", 1) + vec(exts, 2)
    msg = b"\x01" + vec(body, 3)
    return b"\x16\x03\x01" + vec(msg, 2)


def hrr(host, port, sni2):
    s = tunnel_open(host, port)
    if not s:
        return
    rnd, sid = os.urandom(32), os.urandom(32)
    first = client_hello(host, b"", rnd, sid)
    s.sendall(first)
    answer = b""
    try:
        while len(answer) < 5 + 4 + 2 + 32:
            b = s.recv(65536)
            if not b:
                break
            answer += b
    except OSError:
        pass
    # SHA-256 of "HelloRetryRequest" is the random of a HelloRetryRequest (RFC 8446 §4.1.3)
    if answer[11:43] != hashlib.sha256(b"HelloRetryRequest").digest():
        print("NOHRR", answer[:8].hex())
        return
    s.sendall(b"\x14\x03\x03\x00\x01\x01" +
              client_hello(sni2, b"\0\x1d" + vec32(os.urandom(32)), rnd, sid))
    answer = b""
    try:
        while len(answer) < 6:
            b = s.recv(65536)
            if not b:
                break
            answer += b
    except OSError:
        pass
    if answer[:1] == b"\x16" and answer[5:6] == b"\x02":
        print("HRR SERVERHELLO first", len(first))
    else:
        print("HRR CLOSED", answer[:6].hex() or "-", "first", len(first))


def vec32(b):
    return len(b).to_bytes(2, "big") + b


def badhello(host, port, half=None):
    s = tunnel_open(host, port)
    if not s:
        return
    hello = bytearray(hello_of("a.test")[3])
    if half:
        hello = hello[:len(hello) // 2]
    # record 5, handshake header 4, version 2, random 32, then the session id, suites and
    # compression vectors: the extensions' length is next
    at = 5 + 4 + 2 + 32
    at += 1 + hello[at]
    at += 2 + int.from_bytes(hello[at:at + 2], "big")
    at += 1 + hello[at]
    if not half:
        n = int.from_bytes(hello[at:at + 2], "big") + 1
        hello[at:at + 2] = n.to_bytes(2, "big")
    s.sendall(bytes(hello))
    data = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
    except OSError as e:
        print("CLOSED", repr(e), len(data), "bytes")
        return
    print("CLOSED", len(data), "bytes")


def tunnel(host, port, text):
    s = tunnel_open(host, port)
    if not s:
        return
    s.sendall(text.encode().decode("unicode_escape").encode("latin-1"))
    answer("TUNNEL", s)


if __name__ == "__main__":
    {"get": get, "raw": raw, "head": head, "direct": direct, "tls": tls, "badhello": badhello,
     "tunnel": tunnel, "hrr": hrr}[sys.argv[1]](*sys.argv[2:])
