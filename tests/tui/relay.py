# A unix-socket relay between the dashboard and the engine for the tmux tests:
#   relay.py UPSTREAM LISTEN LOG [HOLD-REGEX HOLD-FILE]
# Bytes pass unchanged both ways; each request line the dashboard sends is appended to LOG
# ("GET /v1/sessions"). With HOLD-REGEX, a request whose line matches it waits while
# HOLD-FILE exists: the test decides when the engine gets it (a slow engine, on demand).
import asyncio, os, re, sys

upstream, listen, log = sys.argv[1:4]
hold = re.compile(sys.argv[4].encode()) if len(sys.argv) > 5 else None
hold_file = sys.argv[5] if len(sys.argv) > 5 else None
REQUEST = re.compile(rb"(GET|POST|PUT|PATCH|DELETE) (\S+) HTTP/1")


async def pipe(reader, writer, tap):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            if tap:
                lines = [m.group(1) + b" " + m.group(2) for m in REQUEST.finditer(data)]
                with open(log, "ab") as f:
                    for line in lines:
                        f.write(line + b"\n")
                if hold and any(hold.search(line) for line in lines):
                    while os.path.exists(hold_file):
                        await asyncio.sleep(0.05)
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def client(cr, cw):
    try:
        sr, sw = await asyncio.open_unix_connection(upstream)
    except OSError:
        cw.close()
        return
    await asyncio.gather(pipe(cr, sw, True), pipe(sr, cw, False))


async def main():
    server = await asyncio.start_unix_server(client, listen)
    async with server:
        await server.serve_forever()


asyncio.run(main())
