#!/bin/bash
# The man page names every command in the binary's table and renders without warnings; bash
# completion offers the commands. $1: the paddock binary; $2: the source tree.
set -u
bin=$1 src=$2
fail=0
cmds=$("$bin" __commands)
[ -n "$cmds" ] || { echo "FAIL: paddock __commands printed nothing"; exit 1; }
for c in $cmds; do
    if ! grep -q "^\.BR $c\b\|^\.BR .*\" $c \"\|\" $c \"" "$src/docs/paddock.1"; then
        echo "FAIL: the man page does not describe '$c'"
        fail=1
    fi
done
warn=$(groff -man -Tutf8 -ww -z "$src/docs/paddock.1" 2>&1)
if [ -n "$warn" ]; then
    echo "FAIL: groff warns: $warn"
    fail=1
fi
# completion, with the binary first on PATH
dir=$(mktemp -d)
ln -s "$bin" "$dir/paddock"
got=$(PATH="$dir:$PATH" bash -c "source '$src/scripts/paddock-completion.bash'; COMP_WORDS=(paddock ap); COMP_CWORD=1; _paddock; echo \${COMPREPLY[@]}")
[ "$got" = "approvals approve" ] || { echo "FAIL: completing 'ap' gave '$got'"; fail=1; }
got=$(PATH="$dir:$PATH" bash -c "source '$src/scripts/paddock-completion.bash'; COMP_WORDS=(paddock --config x ex); COMP_CWORD=3; _paddock; echo \${COMPREPLY[@]}")
[ "$got" = "exec export" ] || [ "$got" = "export" ] || { echo "FAIL: completing after --config gave '$got'"; fail=1; }
got=$(PATH="$dir:$PATH" bash -c "source '$src/scripts/paddock-completion.bash'; COMP_WORDS=(paddock approve --re); COMP_CWORD=2; _paddock; echo \${COMPREPLY[@]}")
[ "$got" = "--reason --remember" ] || { echo "FAIL: completing 'approve --re' gave '$got'"; fail=1; }
got=$(PATH="$dir:$PATH" bash -c "source '$src/scripts/paddock-completion.bash'; COMP_WORDS=(paddock dashboard --no); COMP_CWORD=2; _paddock; echo \${COMPREPLY[@]}")
[ "$got" = "--no-mouse" ] || { echo "FAIL: completing 'dashboard --no' gave '$got'"; fail=1; }
rm -rf "$dir"
# every command answers --help with its usage (no engine needed)
for c in $cmds; do
    out=$("$bin" "$c" --help 2>&1) || { echo "FAIL: paddock $c --help exited non-zero"; fail=1; }
    echo "$out" | grep -qi "usage" || { echo "FAIL: paddock $c --help shows no usage: $out"; fail=1; }
done
# the dashboard (the default command) from its option table: --help with and without its
# name, every flag in the usage, and an unknown flag refused with exit 2 before any engine
out=$("$bin" --help 2>&1) || { echo "FAIL: paddock --help exited non-zero"; fail=1; }
echo "$out" | grep -q "^  dashboard .*(the default)" || { echo "FAIL: paddock --help lists no default dashboard: $out"; fail=1; }
out=$("$bin" dashboard --help 2>&1) || { echo "FAIL: paddock dashboard --help exited non-zero"; fail=1; }
for flag in --read-only --theme --bell --mouse --no-mouse; do
    echo "$out" | grep -q -- "$flag" || { echo "FAIL: paddock dashboard --help does not name $flag: $out"; fail=1; }
done
for args in "dashboard --frobnicate" "--frobnicate" "--read-only --frobnicate" "dashboard --theme"; do
    out=$("$bin" $args 2>&1 </dev/null)
    rc=$?
    [ $rc = 2 ] || { echo "FAIL: paddock $args exited $rc, not 2: $out"; fail=1; }
    echo "$out" | grep -q "^dashboard: .*option '--\(frobnicate\|theme\)'" ||
        { echo "FAIL: paddock $args does not name the bad option: $out"; fail=1; }
done
out=$("$bin" dashboard stray 2>&1 </dev/null)
[ $? = 2 ] && echo "$out" | grep -q "unexpected argument stray" ||
    { echo "FAIL: paddock dashboard stray: $out"; fail=1; }
[ $fail = 0 ] && echo "ok: man page, completion and --help cover: $(echo $cmds)"
exit $fail
