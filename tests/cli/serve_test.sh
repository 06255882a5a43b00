#!/bin/bash
# `paddock serve --state-dir X` listens at X/engine.sock, as `paddock --state-dir X serve` does;
# --socket, given anywhere, still wins. No engine starts: a regular file where the socket
# would go stops it before it listens, and the error names the path it chose. $1: the binary.
set -u
bin=$1
fail=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/state" "$dir/xdg/paddock"
# the default socket (under XDG_STATE_HOME) and the state dir's both block listening
touch "$dir/state/engine.sock" "$dir/xdg/paddock/engine.sock" "$dir/other.sock"
serve() {
    env -u PADDOCK_SOCKET -u PADDOCK_STATE_DIR XDG_STATE_HOME="$dir/xdg" \
        DOCKER_HOST="unix://$dir/no-docker.sock" timeout 60 "$bin" "$@" 2>&1 </dev/null
}
check() { # what, want, args...
    local what=$1 want=$2
    shift 2
    local out
    out=$(serve "$@")
    case $out in
    *"$want exists and is not a socket"*) ;;
    *) echo "FAIL: $what: wanted $want, got: $out"; fail=1 ;;
    esac
}
check "serve --state-dir" "$dir/state/engine.sock" serve --state-dir "$dir/state"
check "--state-dir serve" "$dir/state/engine.sock" --state-dir "$dir/state" serve
check "--socket before serve" "$dir/other.sock" --socket "$dir/other.sock" serve --state-dir "$dir/state"
check "serve --socket" "$dir/other.sock" serve --state-dir "$dir/state" --socket "$dir/other.sock"
exit $fail
