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
comp() { # $1: the words (bash syntax), the last one completed
    PATH="$dir:$PATH" bash -c "source '$src/scripts/paddock-completion.bash'; COMP_WORDS=($1); COMP_CWORD=\$((\${#COMP_WORDS[@]} - 1)); _paddock; echo \${COMPREPLY[@]}"
}
got=$(comp "paddock export demo --format ''")
[ "$got" = "json md cast" ] || { echo "FAIL: completing after --format gave '$got'"; fail=1; }
got=$(comp "paddock ls --")
[ "$got" = "--all --json --help" ] || { echo "FAIL: completing 'ls --' gave '$got'"; fail=1; }
got=$(comp "paddock run --image x -- ech")
echo " $got " | grep -q " echo " || { echo "FAIL: completing 'run -- ech' gave '$got'"; fail=1; }
got=$(comp "paddock help ru")
[ "$got" = "run rules" ] || { echo "FAIL: completing 'help ru' gave '$got'"; fail=1; }
# sessions: exec offers the live ones, show the deleted ones too (an engine stand-in)
rm -f "$dir/paddock" # the link to the binary, replaced (not written through)
cat > "$dir/paddock" <<STUB
#!/bin/sh
case "\$*" in
"ls --all --json") echo '[{"id":"aaaa1111","name":"live1","state":"ready"},{"id":"bbbb2222","name":"gone1","state":"deleted"}]' ;;
"ls --json") echo '[{"id":"aaaa1111","name":"live1","state":"ready"}]' ;;
*) exec "$bin" "\$@" ;;
esac
STUB
chmod +x "$dir/paddock"
got=$(comp "paddock exec ''")
[ "$got" = "aaaa1111 live1" ] || { echo "FAIL: completing 'exec' offered '$got' (only live sessions)"; fail=1; }
got=$(comp "paddock show ''")
[ "$got" = "aaaa1111 live1 bbbb2222 gone1" ] || { echo "FAIL: completing 'show' offered '$got'"; fail=1; }
rm -rf "$dir"
# every command's help: what it does, its options, an example; the same text from
# `paddock help CMD` and `paddock CMD --help` (no engine needed)
for c in $cmds; do
    out=$("$bin" "$c" --help 2>&1) || { echo "FAIL: paddock $c --help exited non-zero"; fail=1; }
    echo "$out" | grep -q "^usage: paddock $c" || { echo "FAIL: paddock $c --help shows no usage: $out"; fail=1; }
    echo "$out" | grep -q "^example:" || { echo "FAIL: paddock $c --help has no example: $out"; fail=1; }
    [ "$(echo "$out" | wc -l)" -ge 6 ] || { echo "FAIL: paddock $c --help is too short: $out"; fail=1; }
    other=$("$bin" help "$c" 2>&1) || { echo "FAIL: paddock help $c exited non-zero"; fail=1; }
    [ "$out" = "$other" ] || { echo "FAIL: paddock help $c differs from paddock $c --help"; fail=1; }
done
for args in "help" "version" "help run"; do
    out=$("$bin" $args 2>&1) || { echo "FAIL: paddock $args exited non-zero: $out"; fail=1; }
    echo "$out" | grep -qi "unknown command" && { echo "FAIL: paddock $args: $out"; fail=1; }
done
"$bin" version | grep -q "^paddock [0-9]" || { echo "FAIL: paddock version: $("$bin" version)"; fail=1; }
out=$("$bin" help frob 2>&1)
[ $? = 2 ] && echo "$out" | grep -q "no command 'frob'" || { echo "FAIL: paddock help frob: $out"; fail=1; }
# the man page's dashboard keys are the key tables (scripts/man-keys.sh --write updates it)
want=$(bash "$src/scripts/man-keys.sh" "$bin" "$src")
have=$(awk '/^\.\\" keys: end/ { p = 0 } p; /^\.\\" keys: begin/ { p = 1 }' "$src/docs/paddock.1")
[ -n "$want" ] && [ "$want" = "$have" ] || {
    echo "FAIL: the man page's DASHBOARD KEYS differ from the key tables; run scripts/man-keys.sh BIN . --write:"
    diff <(echo "$want") <(echo "$have") | head -20
    fail=1
}
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
