#!/bin/sh
# Build musl-libc static copies of libmicrohttpd (no TLS), jansson and zlib from Debian's own
# source packages, for the static paddock-executor.
#
#   scripts/build-musl-deps.sh PREFIX [COPY_DIR]
#
# PREFIX receives include/ and lib/{libmicrohttpd.a,libjansson.a,libz.a}. With COPY_DIR the
# three .a files and the five headers the executor includes are also copied there (meson's
# custom_target declares them as its outputs, which must sit in the build dir).
# Idempotent: when PREFIX already holds the libraries and a stamp of this script's version,
# nothing is rebuilt. Downloaded source packages are cached in PREFIX's parent
# (<parent>/musl-deps-cache), so a rebuild after `rm -rf PREFIX` does not download again.
# The system apt configuration is never changed: a throwaway deb-src list, derived from the
# Debian entries of the system's own sources, is passed with -o options.
set -eu

SCRIPT_VERSION=2
STAMP_NAME=.paddock-musl-deps.stamp

say() { printf 'build-musl-deps: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: $0 PREFIX [COPY_DIR]"
case $1 in /*) PREFIX=$1 ;; *) PREFIX=$(pwd)/$1 ;; esac
COPY_DIR=${2:-}
PARENT=$(dirname "$PREFIX")
CACHE=$PARENT/musl-deps-cache
STAMP=$PREFIX/$STAMP_NAME

copy_out() {
    [ -n "$COPY_DIR" ] || return 0
    mkdir -p "$COPY_DIR"
    for f in lib/libmicrohttpd.a lib/libjansson.a lib/libz.a include/microhttpd.h \
        include/jansson.h include/jansson_config.h include/zlib.h include/zconf.h; do
        # Copy only when different, so an up-to-date build does not relink the executor.
        dst=$COPY_DIR/$(basename "$f")
        cmp -s "$PREFIX/$f" "$dst" 2>/dev/null || cp "$PREFIX/$f" "$dst"
    done
}

if [ -f "$PREFIX/lib/libmicrohttpd.a" ] && [ -f "$PREFIX/lib/libjansson.a" ] &&
    [ -f "$PREFIX/lib/libz.a" ] && [ -f "$PREFIX/include/microhttpd.h" ] &&
    [ -f "$PREFIX/include/jansson.h" ] && [ -f "$PREFIX/include/zlib.h" ] && [ -f "$STAMP" ] &&
    [ "$(sed -n 1p "$STAMP")" = "version=$SCRIPT_VERSION" ]; then
    copy_out
    exit 0
fi

for tool in musl-gcc make cmake dpkg-source apt-get; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool not found (packages: musl-tools cmake make dpkg-dev apt)"
done

mkdir -p "$CACHE"

# Source packages (Debian source package names): download once into the cache.
SOURCES="libmicrohttpd jansson zlib"
missing_sources() {
    for pkg in $SOURCES; do
        ls "$CACHE/${pkg}"_*.dsc >/dev/null 2>&1 || printf '%s ' "$pkg"
    done
}

MISSING=$(missing_sources)
if [ -n "$MISSING" ]; then
    APTDIR=$CACHE/apt
    rm -rf "$APTDIR"
    mkdir -p "$APTDIR/lists/partial" "$APTDIR/cache/archives/partial"
    # deb-src entries mirror the system's Debian "deb" entries (same mirror, suites, keyring).
    SRC=$APTDIR/sources.sources
    : >"$SRC"
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk -v RS= -v ORS='\n\n' '
            /(^|\n)Types:[^\n]*deb/ && /(^|\n)URIs:[^\n]*\/debian(-security)?\/?([ \t\n]|$)/ {
                sub(/Types:[^\n]*/, "Types: deb-src"); print }' "$f" >>"$SRC"
    done
    LIST=$APTDIR/sources.list
    : >"$LIST"
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        sed -n 's#^[[:space:]]*deb[[:space:]]\(.*/debian\(-security\)\{0,1\}/\{0,1\}[[:space:]].*\)#deb-src \1#p' "$f" >>"$LIST"
    done
    [ -s "$SRC" ] || [ -s "$LIST" ] || die "no Debian entries found in the system apt sources"
    set -- -o "Dir::Etc::SourceList=$LIST" -o "Dir::Etc::SourceParts=$APTDIR/parts" \
        -o "Dir::State::Lists=$APTDIR/lists" -o "Dir::Cache=$APTDIR/cache" \
        -o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache=" -o "Debug::NoLocking=1" \
        -o "APT::Sandbox::User=root"
    mkdir -p "$APTDIR/parts"
    [ -s "$SRC" ] && cp "$SRC" "$APTDIR/parts/paddock.sources"
    say "downloading Debian source packages ${MISSING}into $CACHE"
    apt-get "$@" -qq update >&2 || die "apt-get update (deb-src) failed"
    # shellcheck disable=SC2086 # one word per package
    (cd "$CACHE" && apt-get "$@" -qq source --download-only $MISSING >&2) ||
        die "apt-get source failed"
    [ -z "$(missing_sources)" ] || die "source packages missing after download: $(missing_sources)"
    rm -rf "$APTDIR" # 20 MB of package indexes, needed only for the download
fi

MHD_DSC=$(ls "$CACHE"/libmicrohttpd_*.dsc | sort -V | tail -n 1)
JANSSON_DSC=$(ls "$CACHE"/jansson_*.dsc | sort -V | tail -n 1)
ZLIB_DSC=$(ls "$CACHE"/zlib_*.dsc | sort -V | tail -n 1)

WORK=$PARENT/musl-deps-work
rm -rf "$WORK" "$PREFIX"
mkdir -p "$WORK" "$PREFIX"
trap 'rm -rf "$WORK"' EXIT

# A fresh unpack every build: copied trees break autotools' timestamps.
say "unpacking $(basename "$MHD_DSC"), $(basename "$JANSSON_DSC") and $(basename "$ZLIB_DSC")"
dpkg-source --no-check -x "$MHD_DSC" "$WORK/mhd" >/dev/null
dpkg-source --no-check -x "$JANSSON_DSC" "$WORK/jansson" >/dev/null
dpkg-source --no-check -x "$ZLIB_DSC" "$WORK/zlib" >/dev/null

JOBS=$(nproc 2>/dev/null || echo 2)

say "building libmicrohttpd (no TLS) with musl-gcc"
(
    cd "$WORK/mhd"
    CC=musl-gcc CFLAGS="-O2" ./configure --prefix="$PREFIX" --disable-https --disable-curl \
        --disable-doc --disable-examples --disable-tools --enable-static --disable-shared \
        --without-gnutls --disable-dauth --disable-postprocessor --disable-messages >build.log 2>&1 ||
        { tail -n 30 build.log >&2; exit 1; }
    make -j"$JOBS" >>build.log 2>&1 && make install >>build.log 2>&1 ||
        { tail -n 30 build.log >&2; exit 1; }
) || die "libmicrohttpd build failed"

say "building jansson with musl-gcc"
(
    cd "$WORK/jansson"
    cmake -S . -B build -DCMAKE_C_COMPILER=musl-gcc -DCMAKE_BUILD_TYPE=Release \
        -DJANSSON_BUILD_SHARED_LIBS=OFF -DJANSSON_BUILD_DOCS=OFF -DJANSSON_WITHOUT_TESTS=ON \
        -DJANSSON_EXAMPLES=OFF -DCMAKE_INSTALL_PREFIX="$PREFIX" -DCMAKE_INSTALL_LIBDIR=lib \
        >build.log 2>&1 && cmake --build build -j"$JOBS" >>build.log 2>&1 &&
        cmake --install build >>build.log 2>&1 || { tail -n 30 build.log >&2; exit 1; }
) || die "jansson build failed"

say "building zlib with musl-gcc"
(
    cd "$WORK/zlib"
    # zlib's own configure script (not autoconf): static library only.
    CC=musl-gcc CFLAGS="-O2" ./configure --static --prefix="$PREFIX" >build.log 2>&1 ||
        { tail -n 30 build.log >&2; exit 1; }
    make -j"$JOBS" libz.a >>build.log 2>&1 && make install >>build.log 2>&1 ||
        { tail -n 30 build.log >&2; exit 1; }
) || die "zlib build failed"

[ -f "$PREFIX/lib/libmicrohttpd.a" ] && [ -f "$PREFIX/lib/libjansson.a" ] &&
    [ -f "$PREFIX/lib/libz.a" ] || die "libraries missing after build"

{
    echo "version=$SCRIPT_VERSION"
    echo "libmicrohttpd=$(basename "$MHD_DSC" .dsc)"
    echo "jansson=$(basename "$JANSSON_DSC" .dsc)"
    echo "zlib=$(basename "$ZLIB_DSC" .dsc)"
} >"$STAMP"
copy_out
say "done: $PREFIX"
