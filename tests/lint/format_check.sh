#!/usr/bin/env bash
# Every C file in the repository is formatted by the repository's .clang-format.
set -euo pipefail
cd "${1:?source root}"
command -v clang-format >/dev/null || { echo "clang-format not installed"; exit 1; }
mapfile -t files < <(git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]' -not -path './build*')
[ ${#files[@]} -gt 0 ] || { echo "no C files found"; exit 1; }
if ! clang-format --dry-run --Werror "${files[@]}" 2>/tmp/paddock-format.$$; then
  head -40 /tmp/paddock-format.$$
  rm -f /tmp/paddock-format.$$
  echo "run: clang-format -i \$(git ls-files '*.c' '*.h')"
  exit 1
fi
rm -f /tmp/paddock-format.$$
echo "${#files[@]} files formatted"
