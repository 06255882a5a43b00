#!/usr/bin/env bash
# docs/ and README.md speak of the repository alone: every path they name in the repository
# (`engine/base/loop.c`, docs/risk.md, a Markdown link) exists (a glob must match something),
# and nothing cites a document that is not in it (research notes, openhands-protocol.md,
# DESIGN.md, ../shared). Code comments are held to the second rule too.
set -euo pipefail
cd "${1:?source root}"
bad=0
tops='app|ui|client|common|engine|executor|tests|docs|scripts|bench|examples|themes|screenshots'
docs=$(git ls-files README.md 'docs/*')
# Paths starting at a top-level folder, not inside a longer path (/opt/paddock/..., <state>/...).
for f in $docs; do
  while IFS= read -r p; do
    p=${p%%#*}   # an anchor is not part of the path
    p=${p%[.,:;]} # nor the sentence's punctuation
    [ -n "$p" ] || continue
    # shellcheck disable=SC2086 # a glob in the document (engine/docker/docker*.c) expands
    if ! compgen -G "$p" >/dev/null; then
      echo "$f names $p, which is not in the repository"
      bad=1
    fi
  done < <(grep -oP "(?<![A-Za-z0-9_./<>~\$-])(${tops})/[A-Za-z0-9_.*/-]*[A-Za-z0-9_*/]" "$f" | sort -u)
  # Markdown links to files, relative to the document.
  while IFS= read -r p; do
    p=${p%%#*}
    [ -n "$p" ] || continue
    case $p in http:* | https:* | mailto:*) continue ;; esac
    if [ ! -e "$(dirname "$f")/$p" ]; then
      echo "$f links to $p, which is not in the repository"
      bad=1
    fi
  done < <(grep -oP '\]\(\K[^)\s]+(?=\))' "$f" | sort -u)
done
# Documents that live outside the repository.
outside='research/[A-Za-z0-9_-]+\.md|openhands-protocol\.md|DESIGN\.md|\.\./shared|security\.md §|protocol §'
if git grep -nIE "$outside" -- README.md docs '*.c' '*.h' '*.sh' '*.py' ':!tests/lint/docs_check.sh'; then
  echo "the lines above cite documents that are not in the repository"
  bad=1
fi
[ "$bad" -eq 0 ] || exit 1
echo "docs name only what the repository has"
