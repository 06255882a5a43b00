#!/usr/bin/env python3
"""A small coding agent for paddock, written with Python's standard library only.

It drives one session through the engine's HTTP API on its unix socket exactly as any agent
would (OpenHands actions in, observations out): it writes a program with the `write` action,
runs it, reads it back, edits it with the editor's `str_replace`, commits it with git, and then
asks for one risky action that the operator must approve (`paddock approve ID`, or `y` in the
dashboard). Approved, it prints what ran; rejected, it prints the operator's reason and goes on.

    python3 examples/agent.py [--socket PATH] [--name demo] [--pause SECS] [--no-approval]
                              [--delete]

The socket defaults to $PADDOCK_SOCKET, else $PADDOCK_STATE_DIR/engine.sock, else
$XDG_STATE_HOME/paddock/engine.sock (~/.local/state/paddock/engine.sock), as `paddock` does.
"""
import argparse
import http.client
import json
import os
import socket
import sys
import time


class UnixHTTPConnection(http.client.HTTPConnection):
    """http.client over a unix socket."""

    def __init__(self, path, timeout=900):
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


class EngineError(Exception):
    pass


class Engine:
    def __init__(self, path):
        self.path = path

    def call(self, method, url, body=None):
        conn = UnixHTTPConnection(self.path)
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if data else {}
        try:
            conn.request(method, url, body=data, headers=headers)
            resp = conn.getresponse()
            raw = resp.read()
        except OSError as e:
            raise EngineError(f"no engine answers at {self.path}: {e}") from None
        finally:
            conn.close()
        try:
            doc = json.loads(raw) if raw else None
        except ValueError:
            doc = {"raw": raw.decode(errors="replace")}
        return resp.status, doc

    def act(self, sid, action, wait=True):
        """An OpenHands action; the observation (or, with wait=False, the 202 answer)."""
        url = f"/v1/sessions/{sid}/execute_action" + ("" if wait else "?wait=0")
        status, doc = self.call("POST", url, {"action": action})
        if status not in (200, 202):
            msg = (doc or {}).get("error", {}).get("message", doc)
            raise EngineError(f"execute_action answered {status}: {msg}")
        return doc

    def run(self, sid, command, timeout=60):
        return self.act(sid, {"action": "run", "args": {"command": command, "blocking": True},
                              "timeout": timeout})


def show(obs):
    """What an agent's model would see."""
    code = obs.get("extras", {}).get("metadata", {}).get("exit_code")
    tail = f"[exit {code}]" if code is not None else f"[{obs.get('observation')}]"
    print(f"{obs.get('content', '')}\n{tail}")


PROGRAM = """def greet(name):
    return "hello, " + name

print(greet("sandbox"))
"""


def work(eng, sid, pause):
    """The steps a coding agent takes: write, run, read, edit, run, commit."""
    steps = [
        ("write hello.py", {"action": "write",
                            "args": {"path": "/workspace/demo/hello.py", "content": PROGRAM}}),
        ("run it", {"action": "run", "args": {"command": "cd /workspace/demo && python3 hello.py",
                                              "blocking": True}, "timeout": 60}),
        ("read it back", {"action": "read", "args": {"path": "/workspace/demo/hello.py"}}),
        ("edit it", {"action": "edit", "args": {"command": "str_replace",
                                                "path": "/workspace/demo/hello.py",
                                                "old_str": '"hello, "', "new_str": '"hi there, "'}}),
        ("run it again", {"action": "run", "args": {"command": "python3 /workspace/demo/hello.py",
                                                    "blocking": True}, "timeout": 60}),
        ("commit", {"action": "run", "args": {
            "command": "cd /workspace/demo && git init -q 2>/dev/null; git add . && "
                       "git -c user.email=agent@paddock.local -c user.name=agent commit -qm "
                       "'hello' && git log --oneline", "blocking": True}, "timeout": 60}),
    ]
    for title, action in steps:
        time.sleep(pause)
        print(f"--- {title}")
        show(eng.act(sid, action))


def ask_operator(eng, sid, command):
    """A risky action: sent with ?wait=0, then long-polled until the operator decides (or the
    approval times out, which is a rejection)."""
    print(f"--- a risky step: {command}")
    ack = eng.act(sid, {"action": "run", "args": {"command": command, "blocking": True},
                        "timeout": 60}, wait=False)
    aid = ack["action_id"]
    if ack.get("state") == "pending":
        print(f"waiting for the operator: approve with `paddock approve {aid}` "
              f"(or reject with `paddock reject {aid} --reason ...`), or press y / n on it in the "
              f"dashboard", flush=True)
    while True:
        status, action = eng.call("GET", f"/v1/actions/{aid}?wait=30")
        if status != 200:
            raise EngineError(f"GET /v1/actions/{aid} answered {status}: {action}")
        if action["state"] in ("done", "failed", "rejected", "interrupted", "skipped"):
            break
    obs = action.get("observation") or {}
    if action["state"] == "rejected":
        print(f"the operator said no ({action.get('decided_by')}): "
              f"{obs.get('content', '').splitlines()[-1]}")
        return False
    print(f"approved by {action.get('decided_by') or 'policy'}; it ran:")
    show(obs)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--socket", default=default_socket())
    ap.add_argument("--name", default="demo")
    ap.add_argument("--pause", type=float, default=1.0, help="seconds between steps")
    ap.add_argument("--no-approval", action="store_true", help="skip the risky step")
    ap.add_argument("--delete", action="store_true", help="delete the session at the end")
    args = ap.parse_args()
    eng = Engine(args.socket)
    try:
        # names are unique among live sessions: an older demo goes first
        _, listing = eng.call("GET", "/v1/sessions")
        for s in (listing or {}).get("sessions", []):
            if s.get("name") == args.name:
                eng.call("DELETE", f"/v1/sessions/{s['id']}")
        status, session = eng.call("POST", "/v1/sessions", {"name": args.name, "confirm": "high"})
        if status != 201:
            raise EngineError(f"cannot create a session ({status}): {session}")
        sid = session["id"]
        print(f"agent: session {sid} ({args.name}) ready, policy: HIGH risk waits", flush=True)
        work(eng, sid, args.pause)
        if not args.no_approval:
            ask_operator(eng, sid, "rm -rf /home/demo-cache && echo cache cleared")
        print("--- one more step after the decision")
        show(eng.run(sid, "echo done"))
        if args.delete:
            eng.call("DELETE", f"/v1/sessions/{sid}")
            print(f"agent: finished; session {sid} deleted (its history stays)")
        else:
            print(f"agent: finished; session {sid} stays for you to inspect")
        return 0
    except EngineError as e:
        print(f"agent: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
