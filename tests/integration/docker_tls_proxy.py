#!/usr/bin/env python3
"""A TLS front for the local Docker daemon, for tests of DOCKER_HOST=tcp:// with TLS.

  docker_tls_proxy.py certs DIR
      Make with the openssl CLI, in DIR: a CA (ca.pem), the proxy's certificate for 127.0.0.1
      (server-cert.pem, server-key.pem), and two DOCKER_CERT_PATH directories:
      DIR/client (ca.pem, cert.pem, key.pem: all good) and DIR/wrongca (ca.pem is another CA).
  docker_tls_proxy.py serve DIR SOCKET
      Listen on 127.0.0.1 (a free port, printed on stdout), require a client certificate
      signed by DIR/ca.pem, and forward each connection to the unix socket SOCKET. Runs until
      killed.
"""
import asyncio
import os
import shutil
import ssl
import subprocess
import sys


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def make_ca(d, name, cn):
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-days", "2", "-subj", "/CN=" + cn,
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            "-keyout", name + "-key.pem", "-out", name + ".pem", cwd=d)


def make_cert(d, name, cn, ext):
    with open(os.path.join(d, name + ".ext"), "w") as f:
        f.write(ext)
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-subj", "/CN=" + cn, "-keyout", name + "-key.pem", "-out", name + ".csr", cwd=d)
    openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem",
            "-CAcreateserial", "-days", "2", "-extfile", name + ".ext",
            "-out", name + "-cert.pem", cwd=d)


def certs(d):
    make_ca(d, "ca", "paddock test CA")
    make_ca(d, "other-ca", "paddock test other CA")
    make_cert(d, "server", "127.0.0.1",
              "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    make_cert(d, "client", "paddock test client", "extendedKeyUsage=clientAuth\n")
    for sub, ca in (("client", "ca.pem"), ("wrongca", "other-ca.pem")):
        p = os.path.join(d, sub)
        os.makedirs(p, exist_ok=True)
        shutil.copy(os.path.join(d, ca), os.path.join(p, "ca.pem"))
        shutil.copy(os.path.join(d, "client-cert.pem"), os.path.join(p, "cert.pem"))
        shutil.copy(os.path.join(d, "client-key.pem"), os.path.join(p, "key.pem"))


async def pump(reader, writer):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (OSError, ssl.SSLError, asyncio.IncompleteReadError):
        pass
    finally:
        try:
            if writer.can_write_eof():
                writer.write_eof()
            else:
                writer.close()
        except (OSError, RuntimeError):
            pass


async def serve(d, sock):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(d, "server-cert.pem"), os.path.join(d, "server-key.pem"))
    ctx.load_verify_locations(os.path.join(d, "ca.pem"))
    ctx.verify_mode = ssl.CERT_REQUIRED

    async def handle(r, w):
        try:
            ur, uw = await asyncio.open_unix_connection(sock)
        except OSError:
            w.close()
            return
        await asyncio.gather(pump(r, uw), pump(ur, w))
        uw.close()
        w.close()

    loop = asyncio.get_running_loop()
    # Refused handshakes (the wrong-CA test) are expected: keep stderr quiet about them.
    loop.set_exception_handler(lambda _loop, _ctx: None)
    server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=ctx)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "certs":
        certs(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "serve":
        asyncio.run(serve(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
