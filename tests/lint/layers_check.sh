#!/usr/bin/env bash
# The layers read top down, and each folder includes only the folders below it:
#   app -> ui -> client -> common;  app -> engine -> common;  executor -> common.
# Inside the engine, the lower layer (engine/docker, engine/store, engine/risk, engine/base)
# never includes the upper one (the files directly in engine/).
set -euo pipefail
cd "${1:?source root}"
bad=0
# check DIR-GLOB ALLOWED-PREFIX-REGEX: every project include of the files must match.
check() {
  local where=$1 allowed=$2 f line
  for f in $(git ls-files "$where" 2>/dev/null | grep -E '\.[ch]$'); do
    while IFS= read -r line; do
      inc=${line#*\"}
      inc=${inc%%\"*}
      # Same-folder includes without a folder (the executor's style) stay in the folder.
      [[ $inc == */* ]] || continue
      if ! [[ $inc =~ $allowed ]]; then
        echo "$f includes \"$inc\" (allowed: $allowed)"
        bad=1
      fi
    done < <(grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" || true)
  done
}
check 'common/*' '^common/'
check 'client/*' '^(client|common)/'
check 'ui/*' '^(ui|client|common)/'
check 'engine/docker/*' '^(engine/(docker|store|risk|base)|common)/'
check 'engine/store/*' '^(engine/(docker|store|risk|base)|common)/'
check 'engine/risk/*' '^(engine/(docker|store|risk|base)|common)/'
check 'engine/base/*' '^(engine/(docker|store|risk|base)|common)/'
check 'engine/*' '^(engine|common)/'
check 'executor/*' '^(executor|common)/'
check 'app/*' '^(app|ui|client|engine|common)/'
[ "$bad" -eq 0 ] || exit 1
echo "layers hold"
