# Shared helpers for scripts/run and scripts/test. Sourced, never executed.
# Everything here is idempotent: a second call finds the work done and returns quickly.

PADDOCK_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PADDOCK_BUILD=${PADDOCK_BUILD:-$PADDOCK_ROOT/build}
PADDOCK_IMAGE=${PADDOCK_IMAGE:-paddock/base:local}
DOCKER_SOCK=${DOCKER_SOCK:-/var/run/docker.sock}
PADDOCK_RUNTIME_DIR=${PADDOCK_RUNTIME_DIR:-/var/lib/paddock-host}

say() { printf 'paddock: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

# Debian packages the project needs, build and test time included.
PADDOCK_PACKAGES=(
  build-essential pkg-config meson ninja-build cmake
  libncurses-dev libvterm-dev libjansson-dev libcurl4-openssl-dev libssl-dev
  libsqlite3-dev sqlite3 libmicrohttpd-dev libgnutls28-dev zlib1g-dev
  libseccomp-dev # the local backend's seccomp filter (engine/local_seccomp.c)
  openssl # test certificates (engines, egress)
  musl-tools musl-dev dpkg-dev
  docker.io tini busybox-static
  bubblewrap # the local backend's sandbox (docs/architecture.md)
  tmux curl libcmocka-dev clang-format python3
  git patch procps xz-utils file less hostname
  python3-pil fonts-dejavu-core # scripts/ansi2png.py: screenshots and its test
  clang libclang-rt-14-dev # scripts/fuzz: libFuzzer targets (tests/fuzz)
)

paddock_install_packages() {
  local missing=() p
  for p in "${PADDOCK_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" -eq 0 ] || die "missing packages (${missing[*]}); run as root to install them"
  say "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null || die "apt-get update failed"
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || die "apt-get install failed for: ${missing[*]}"
}

docker_ping() {
  curl -s --max-time 2 --unix-socket "$DOCKER_SOCK" http://d/_ping 2>/dev/null | grep -q OK
}

# Start dockerd in the background when no daemon answers; never start a second one.
paddock_ensure_dockerd() {
  if docker_ping; then
    say "Docker daemon answers at $DOCKER_SOCK"
    return 0
  fi
  command -v dockerd >/dev/null || die "dockerd not installed (package docker.io)"
  mkdir -p "$PADDOCK_RUNTIME_DIR"
  local pidfile=$PADDOCK_RUNTIME_DIR/dockerd.pid log=$PADDOCK_RUNTIME_DIR/dockerd.log
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    say "dockerd (pid $(cat "$pidfile")) is starting; waiting for it"
  else
    say "no Docker daemon answers at $DOCKER_SOCK: starting dockerd (log: $log)"
    # setsid: the daemon must outlive this script and the terminal it ran in.
    setsid dockerd --host "unix://$DOCKER_SOCK" --pidfile "$pidfile" >>"$log" 2>&1 </dev/null &
  fi
  local i
  for i in $(seq 1 300); do
    docker_ping && { say "dockerd is up (pid $(cat "$pidfile" 2>/dev/null))"; return 0; }
    sleep 0.1
  done
  tail -n 20 "$log" >&2
  die "dockerd did not answer /_ping within 30 s; see $log"
}

# Configure (once) and build a meson tree. $1 = build dir, rest = extra meson options.
paddock_build() {
  local dir=$1
  shift
  if [ ! -f "$dir/build.ninja" ]; then
    say "configuring $dir"
    meson setup "$dir" "$PADDOCK_ROOT" "$@" >"$dir.setup.log" 2>&1 || {
      cat "$dir.setup.log" >&2
      die "meson setup failed for $dir"
    }
    rm -f "$dir.setup.log"
  fi
  ninja -C "$dir" >"$dir.ninja.log" 2>&1 || {
    cat "$dir.ninja.log" >&2
    die "build failed in $dir"
  }
  rm -f "$dir.ninja.log"
}

paddock_state_dir() {
  if [ -n "${PADDOCK_STATE_DIR:-}" ]; then
    echo "$PADDOCK_STATE_DIR"
  elif [ -n "${XDG_STATE_HOME:-}" ]; then
    echo "$XDG_STATE_HOME/paddock"
  else
    echo "${HOME:-/root}/.local/state/paddock"
  fi
}

# Start `paddock serve` in the background unless an engine answers on its socket.
paddock_ensure_engine() {
  local bin=$1 state sock i
  state=$(paddock_state_dir)
  sock=${PADDOCK_SOCKET:-$state/engine.sock}
  mkdir -p "$state"
  if curl -s --max-time 2 --unix-socket "$sock" http://paddock/v1/info >/dev/null 2>&1; then
    say "engine answers at $sock"
    return 0
  fi
  say "starting the engine (log: $state/engine.log)"
  setsid "$bin" --state-dir "$state" --socket "$sock" serve >>"$state/engine.log" 2>&1 </dev/null &
  for i in $(seq 1 100); do
    curl -s --max-time 1 --unix-socket "$sock" http://paddock/v1/info >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  tail -n 20 "$state/engine.log" >&2
  die "the engine did not answer at $sock"
}
