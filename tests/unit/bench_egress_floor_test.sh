#!/bin/bash
# paddock-bench-egress-floor run small (it must run to the end; its speeds are not asserted):
# one row per kind, numbers for direct, recvsend and splice, and sockmap measured or skipped
# with the reason (bpf() needs CAP_BPF and CAP_NET_ADMIN). A bad option is refused.
# $1: the binary.
set -u
bin=$1
fail=0
out=$("$bin" --size 8388608 --rounds 1 2>&1)
rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; fail=1; }
num='([[:space:]]+[0-9]+){5} %$' # best, median, machine CPU, own CPU, best / direct
for kind in direct recvsend splice; do
    grep -Eq "^$kind$num" <<<"$out" || { echo "FAIL: no numbers for $kind"; fail=1; }
done
grep -Eq "^sockmap($num| +skipped: .{10,})" <<<"$out" || { echo "FAIL: no sockmap row"; fail=1; }
[ "$(grep -cE '^(direct|recvsend|splice|sockmap) ' <<<"$out")" -eq 4 ] ||
    { echo "FAIL: not one row per kind"; fail=1; }
"$bin" --rounds 0 >/dev/null 2>&1
rc=$?
[ "$rc" -eq 2 ] || { echo "FAIL: --rounds 0 exited $rc, not 2"; fail=1; }
[ "$fail" -eq 0 ] || echo "$out"
exit $fail
