#!/usr/bin/env python3
"""A tiny agent for the demo: drives one paddock session through the engine API.

Standard library only. It talks the engine's HTTP API on its unix socket exactly as any agent
would: create a session, send OpenHands actions, read observations.

    PADDOCK_SOCKET=~/.local/state/paddock/engine.sock examples/demo_agent.py [--pause SECS]
"""
import argparse
import http.client
import json
import os
import socket
import sys
import time


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout=300):
        super().__init__("paddock", timeout=timeout)
        self.unix_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.unix_path)


def default_socket():
    if os.environ.get("PADDOCK_SOCKET"):
        return os.environ["PADDOCK_SOCKET"]
    state = os.environ.get("PADDOCK_STATE_DIR") or os.path.join(
        os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state"), "paddock")
    return os.path.join(state, "engine.sock")


class Engine:
    def __init__(self, path):
        self.path = path

    def call(self, method, url, body=None):
        conn = UnixHTTPConnection(self.path)
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if data else {}
        conn.request(method, url, body=data, headers=headers)
        resp = conn.getresponse()
        raw = resp.read()
        conn.close()
        return resp.status, json.loads(raw) if raw else None

    def run(self, sid, command, timeout=60):
        action = {"action": "run", "args": {"command": command, "blocking": True},
                  "timeout": timeout}
        status, obs = self.call("POST", f"/v1/sessions/{sid}/execute_action", {"action": action})
        if status != 200:
            raise RuntimeError(f"execute_action answered {status}: {obs}")
        return obs


STEPS = [
    "uname -srm && id",
    "cd /workspace && mkdir -p demo && cd demo && git init -q && pwd",
    "printf 'print(\"hello from the sandbox\")\\n' > hello.py && python3 hello.py",
    "ls -la",
    "git add . && git -c user.email=demo@paddock.local -c user.name=demo commit -qm 'first' "
    "&& git log --oneline",
    "python3 -c 'import sys; print(sys.version.split()[0])'",
    "sh -c 'echo about to fail >&2; exit 3'",
    "echo done",
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--socket", default=default_socket())
    ap.add_argument("--pause", type=float, default=1.5, help="seconds between actions")
    ap.add_argument("--name", default="demo")
    ap.add_argument("--keep-old", action="store_true",
                    help="go on in the existing session of this name (names are unique)")
    args = ap.parse_args()
    eng = Engine(args.socket)

    status, session = 0, None
    if args.keep_old:  # attach: resumed when paused or stopped
        status, session = eng.call("POST", "/v1/sessions", {"attach": args.name})
    else:  # one demo session at a time: names are unique among live sessions
        _, listing = eng.call("GET", "/v1/sessions")
        for s in (listing or {}).get("sessions", []):
            if s.get("name") == args.name:
                eng.call("DELETE", f"/v1/sessions/{s['id']}")
    if status != 200:
        status, session = eng.call("POST", "/v1/sessions", {"name": args.name})
    if status not in (200, 201):
        print(f"demo agent: cannot create a session ({status}): {session}", file=sys.stderr)
        return 1
    sid = session["id"]
    print(f"demo agent: session {sid} ready")
    for cmd in STEPS:
        time.sleep(args.pause)
        obs = eng.run(sid, cmd)
        code = obs["extras"]["metadata"]["exit_code"]
        print(f"$ {cmd}\n{obs['content']}\n[exit {code}]")
    print(f"demo agent: finished; session {sid} stays for you to inspect")
    return 0


if __name__ == "__main__":
    sys.exit(main())
