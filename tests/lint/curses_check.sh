#!/usr/bin/env bash
# curses stays where the dashboard draws: in ui/*.c and ui/ui_internal.h. Every other header
# under ui/ (the model, themes, the command line, the text viewer's state, graphs, logs ...)
# includes neither curses nor ui_internal.h, so the unit tests of those modules compile
# without curses headers; the tests listed below include only such headers.
set -euo pipefail
cd "${1:?source root}"
bad=0
incl='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^">]*/)?(n?curses|ui_internal)\.h[">]'
for f in $(git ls-files 'ui/*.h' | grep -v '^ui/ui_internal\.h$'); do
  if grep -qE "$incl" "$f"; then
    echo "$f includes curses or ui_internal.h: only ui/ui_internal.h and ui/*.c may"
    bad=1
  fi
done
for t in model theme textview graph logview logbuf history samples paircache changeset; do
  f=tests/tui/test_$t.c
  if grep -qE "$incl" "$f"; then
    echo "$f includes curses or ui_internal.h: its module is pure"
    bad=1
  fi
done
[ "$bad" -eq 0 ] || exit 1
echo "curses stays in ui/*.c and ui/ui_internal.h"
