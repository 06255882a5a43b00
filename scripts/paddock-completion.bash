# bash completion for paddock: commands and each command's options from the binary (its
# `paddock help CMD`), session names and ids from the engine, action ids from the approval
# queue.
_paddock_sessions()
{
    # $1: --all for deleted sessions too (show, export, history); live ones otherwise
    paddock ls ${1:-} --json 2>/dev/null | python3 -c 'import json,sys
for s in json.load(sys.stdin):
    print(s["id"]); print(s["name"])' 2>/dev/null
}

_paddock_pending()
{
    paddock approvals --json 2>/dev/null | python3 -c 'import json,sys
for a in json.load(sys.stdin): print(a["id"])' 2>/dev/null
}

_paddock_options()
{
    # the long options of the command's help ("options:" up to the blank line), and --help
    paddock help "$1" 2>/dev/null | awk '/^options:/ { o = 1; next } /^$/ { o = 0 } o' |
        grep -o -- '--[a-z][a-z-]*' | sort -u
    echo --help
}

_paddock()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} cmd="" i at=0 dashdash=0
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
        --socket | --state-dir | --config) ((i++)) ;;
        -*) ;;
        *) cmd=${COMP_WORDS[i]}; at=$i; break ;;
        esac
    done
    if [[ -z $cmd ]]; then
        if [[ $cur == -* ]]; then
            # the global options, and the default command's (the dashboard)
            COMPREPLY=($(compgen -W "--socket --state-dir --config --help --version $(_paddock_options dashboard)" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$(paddock __commands 2>/dev/null)" -- "$cur"))
        fi
        return
    fi
    # after "--" come a command and its arguments (run, risk, exec)
    for ((i = at + 1; i < COMP_CWORD; i++)); do
        [[ ${COMP_WORDS[i]} == -- ]] && dashdash=$i
    done
    if ((dashdash)); then
        if ((COMP_CWORD == dashdash + 1)); then
            COMPREPLY=($(compgen -c -- "$cur" | sort -u))
        else
            COMPREPLY=($(compgen -f -- "$cur"))
        fi
        return
    fi
    case $prev in
    --format) COMPREPLY=($(compgen -W "json md cast" -- "$cur")); return ;;
    --output | -o | --export | --token-file | --socket) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --state-dir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --session) COMPREPLY=($(compgen -W "$(_paddock_sessions)" -- "$cur")); return ;;
    --user) COMPREPLY=($(compgen -W "agent root" -- "$cur")); return ;;
    --network) COMPREPLY=($(compgen -W "none bridge host" -- "$cur")); return ;;
    --risk) COMPREPLY=($(compgen -W "low medium high" -- "$cur")); return ;;
    --confirm) COMPREPLY=($(compgen -W "never high medium always" -- "$cur")); return ;;
    --state) COMPREPLY=($(compgen -W "pending running done failed rejected interrupted skipped" -- "$cur")); return ;;
    --image | --name | --memory | --cpus | --env | --env-allow | --reason | --by | --pattern | \
        --search | --kind | --limit | --max | --disk | --before | --timeout | --theme | --pool | --listen | --driver)
        return ;; # a value of the user's
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_paddock_options "$cmd")" -- "$cur"))
        return
    fi
    case $cmd in
    exec | pause | resume | stop | rm | files | cat | limit | watch)
        COMPREPLY=($(compgen -W "$(_paddock_sessions)" -- "$cur")) ;;
    show | export | history | approvals | verify)
        COMPREPLY=($(compgen -W "$(_paddock_sessions --all)" -- "$cur")) ;;
    approve | reject)
        COMPREPLY=($(compgen -W "$(_paddock_pending)" -- "$cur")) ;;
    help)
        COMPREPLY=($(compgen -W "$(paddock __commands 2>/dev/null)" -- "$cur")) ;;
    rules)
        COMPREPLY=($(compgen -W "list add edit rm" -- "$cur")) ;;
    run | risk)
        COMPREPLY=($(compgen -W "--" -- "$cur")) ;;
    *)
        COMPREPLY=() ;;
    esac
}
complete -F _paddock paddock
