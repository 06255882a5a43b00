#!/usr/bin/env bash
# Integration test of the offline sandbox images built by scripts/build-image.
#
#   bash tests/integration/image_test.sh
#
# Builds (or finds up to date) $PADDOCK_IMAGE, checks inside it that the tools an agent needs work,
# then builds a throwaway busybox image with a unique name, runs it and removes it.
# Exit 0: all checks passed; 1: a check failed (each failure is printed); 77: skipped (no Docker).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$ROOT/scripts/lib.sh"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

MAX_MB=${PADDOCK_IMAGE_MAX_MB:-100}

if ! command -v docker >/dev/null; then
  echo "SKIP: no docker CLI" >&2
  exit 77
fi
if ! docker_ping; then
  echo "SKIP: no Docker daemon answers at $DOCKER_SOCK (source scripts/lib.sh && paddock_ensure_dockerd)" >&2
  exit 77
fi
dk() { docker -H "unix://$DOCKER_SOCK" "$@"; }

failed=0 passed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
fail() { failed=$((failed + 1)); echo "FAIL - $1" >&2; }

BB=paddock-test/busybox:$$-$RANDOM
cleanup() { dk rmi -f "$BB" >/dev/null 2>&1 || true; }
trap cleanup EXIT

run() { # run IMAGE [docker run options...] -- COMMAND...
  local image=$1
  shift
  local opts=()
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  dk run --rm --network none --label paddock.test=1 "${opts[@]}" "$image" "$@"
}

# ---------------------------------------------------------------- base image
img=$PADDOCK_IMAGE
if "$ROOT/scripts/build-image"; then ok "scripts/build-image builds $img"; else fail "scripts/build-image failed for $img"; fi
t0=$(date +%s%N)
if "$ROOT/scripts/build-image" 2>&1 | grep -q 'up to date'; then
  ok "second scripts/build-image finds $img up to date ($((($(date +%s%N) - t0) / 1000000)) ms)"
else
  fail "second scripts/build-image did not find $img up to date"
fi

labels=$(dk image inspect --format '{{index .Config.Labels "paddock.image"}} {{index .Config.Labels "paddock.stamp"}}' "$img" 2>/dev/null || true)
case $labels in
  "base "?*) ok "labels paddock.image=base and paddock.stamp set" ;;
  *) fail "labels of $img: got '$labels'" ;;
esac
size=$(dk image inspect --format '{{.Size}}' "$img" 2>/dev/null || echo 0)
if [ "$size" -gt 0 ] && [ "$size" -lt $((MAX_MB * 1000000)) ]; then
  ok "image size $((size / 1000000)) MB < $MAX_MB MB"
else
  fail "image size $size bytes (limit $MAX_MB MB)"
fi

# Each check prints "ok - NAME" or "FAIL - NAME"; the host counts them.
checks_root=$(
  cat <<'EOF'
c() { local name=$1; shift; if out=$("$@" 2>&1); then echo "ok - $name"; else echo "FAIL - $name: $(printf %s "$out" | head -c 300)"; fi; }
c "bash runs"                bash -c '[ "${BASH_VERSINFO[0]}" -ge 5 ]'
c "/bin/sh is dash"          sh -c '[ "$(readlink -f /bin/sh)" = /usr/bin/dash ] && echo ok | grep -qx ok'
c "usrmerged layout"         sh -c '[ "$(readlink /bin)" = usr/bin ] && [ "$(readlink /lib)" = usr/lib ] && [ "$(readlink /lib64)" = usr/lib64 ] && [ "$(readlink /sbin)" = usr/sbin ]'
c "loader present"           test -e /lib64/ld-linux-x86-64.so.2
c "python3 imports json,sqlite3,subprocess" python3 -c 'import json,sqlite3,subprocess'
c "python3 sqlite3 works"    python3 -c 'import sqlite3; assert sqlite3.connect(":memory:").execute("select 1+1").fetchone()[0] == 2'
c "python3 stdlib modules"   python3 -c 'import ssl,hashlib,ctypes,decimal,uuid,zlib,lzma,bz2,socket,readline,curses,xml.etree.ElementTree,asyncio,multiprocessing,venv,unittest; hashlib.sha256(b"x").hexdigest()'
c "python3 subprocess"       python3 -c 'import subprocess; assert subprocess.run(["echo","hi"],capture_output=True,text=True).stdout=="hi\n"'
c "python3 UTF-8 locale"     python3 -c 'import locale,sys; locale.setlocale(locale.LC_ALL,""); assert sys.getfilesystemencoding()=="utf-8" and locale.getpreferredencoding()=="UTF-8"'
c "python3 CA bundle"        python3 -c 'import ssl; assert ssl.create_default_context().cert_store_stats()["x509_ca"] > 50'
c "git --version"            sh -c 'git --version | grep -q "^git version"'
c "coreutils"                sh -c 'd=$(mktemp -d) && printf "b\na\n" > $d/f && [ "$(sort $d/f | head -n1)" = a ] && [ "$(wc -l < $d/f)" = 2 ] && ls $d >/dev/null && cp $d/f $d/g && sha256sum $d/g >/dev/null && timeout 5 true && env true && date +%s >/dev/null && rm -r $d'
c "grep sed awk"             sh -c '[ "$(echo abc | grep b | sed s/b/x/ | awk "{print toupper(\$0)}")" = AXC ]'
c "find xargs"               sh -c 'find /usr/bin -name bash | xargs -r ls >/dev/null'
c "diff patch"               sh -c 'cd $(mktemp -d) && echo a > x && echo b > y && ! diff -u x y > p && patch -s x < p && cmp -s x y'
c "tar gzip xz"              sh -c 'cd $(mktemp -d) && echo hi > f && tar -czf f.tgz f && tar -cJf f.txz f && tar -xzOf f.tgz | grep -qx hi && tar -xJOf f.txz | grep -qx hi'
c "ps which hostname"        sh -c 'ps -e >/dev/null && which bash >/dev/null && hostname >/dev/null'
c "uid 1000 in /etc/passwd"  sh -c 'awk -F: "\$3 == 1000 && \$6 == \"/home/agent\" && \$7 == \"/bin/bash\"" /etc/passwd | grep -q . && [ "$(id -u agent)" = 1000 ]'
c "/workspace owned by 1000" sh -c '[ "$(stat -c %u:%g /workspace)" = 1000:1000 ]'
c "/home/agent owned by 1000" sh -c '[ "$(stat -c %u:%g /home/agent)" = 1000:1000 ]'
c "openhands is uid 1000"    sh -c '[ "$(id -u openhands)" = 1000 ] && [ "$(stat -c %u:%g /home/openhands)" = 1000:1000 ] && [ "$(id -un 1000)" = agent ]'
c "/tmp is 1777"             sh -c '[ "$(stat -c %a /tmp)" = 1777 ]'
c "mount points"             sh -c '[ -d /run/paddock ] && [ -d /opt/paddock ]'
c "WORKDIR /workspace"       sh -c '[ "$(pwd)" = /workspace ]'
c "git templates"            test -d /usr/share/git-core/templates/hooks
c "pager for git (less)"     sh -c '[ "$(echo paged | pager)" = paged ]'
EOF
)
checks_agent=$(
  cat <<'EOF'
c() { local name=$1; shift; if out=$("$@" 2>&1); then echo "ok - $name"; else echo "FAIL - $name: $(printf %s "$out" | head -c 300)"; fi; }
c "runs as agent (uid 1000)" sh -c '[ "$(id -un)" = agent ] && [ "$HOME" = /home/agent ]'
c "agent writes /workspace"  sh -c 'echo x > /workspace/f && rm /workspace/f'
c "agent git commit"         sh -c 'cd /workspace && git init -q r && cd r && echo hi > a && git add a && git -c user.name=t -c user.email=t@t commit -qm init && [ "$(git log --format=%s)" = init ]'
EOF
)

check_output() { # parse "ok - / FAIL - " lines of a container run
  local out=$1 line
  while IFS= read -r line; do
    case $line in
      "ok - "*) ok "${line#ok - }" ;;
      "FAIL - "*) fail "${line#FAIL - }" ;;
    esac
  done <<<"$out"
}

if out=$(run "$img" -- bash -c "$checks_root" 2>&1); then check_output "$out"; else
  fail "docker run $img failed: $out"
fi
if out=$(run "$img" --user 1000 -- bash -c "$checks_agent" 2>&1); then check_output "$out"; else
  fail "docker run --user 1000 $img failed: $out"
fi

# ---------------------------------------------------------------- busybox image
if "$ROOT/scripts/build-image" --busybox "$BB" --test-label; then
  ok "scripts/build-image --busybox $BB"
  if [ "$(dk image inspect --format '{{index .Config.Labels "paddock.test"}}' "$BB" 2>/dev/null)" = 1 ]; then
    ok "busybox image labelled paddock.test=1"
  else
    fail "busybox image lacks label paddock.test=1"
  fi
  out=$(run "$BB" -- sh -c 'echo ok' 2>&1 || true)
  if [ "$out" = ok ]; then ok "busybox sh -c 'echo ok'"; else fail "busybox sh -c 'echo ok' printed: $out"; fi
  out=$(run "$BB" -- sh -c 'ls / >/dev/null && sleep 0 && cat /etc/passwd | grep -q "^agent:x:1000:" && ! test -e /lib64/ld-linux-x86-64.so.2 && ! test -e /bin/bash && echo ok' 2>&1 || true)
  if [ "$out" = ok ]; then ok "busybox applets work, no libc, no bash"; else fail "busybox contents check printed: $out"; fi
else
  fail "scripts/build-image --busybox $BB failed"
fi

cleanup
if dk image inspect "$BB" >/dev/null 2>&1; then fail "docker rmi $BB left the image"; else ok "removed $BB"; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
