#!/bin/bash
# The dashboard's keys for the man page, from the key tables (`paddock __keys`): prints the
# troff of the DASHBOARD KEYS section; with --write, puts it between the marker comments of
# docs/paddock.1. tests/cli/docs_test.sh fails when the page and the tables differ.
# $1: the paddock binary; $2: the source tree (default: this script's).
set -eu
bin=$1 src=${2:-$(dirname "$0")/..} write=${3:-}
section() {
    "$bin" __keys | awk -F'\t' '
        function esc(s) { gsub(/\\/, "\\e", s); gsub(/-/, "\\-", s); gsub(/…/, "\\[u2026]", s); gsub(/⏎/, "\\[u23CE]", s); return s }
        $1 != where { where = $1; printf ".SS %s\n", (where == "commands" ? "Commands (: then Enter)" : where) }
        { printf ".TP\n.B %s\n%s\n", esc($2), esc($3) }'
}
if [ "$write" = --write ]; then
    page=$src/docs/paddock.1
    tmp=$(mktemp)
    awk -v body="$(section)" '
        /^\.\\" keys: begin/ { print; print body; skip = 1; next }
        /^\.\\" keys: end/ { skip = 0 }
        !skip' "$page" > "$tmp"
    mv "$tmp" "$page"
else
    section
fi
