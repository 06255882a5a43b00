# bash completion for paddock: commands from the binary, session ids and names from the
# engine, action ids from the approval queue.
_paddock_sessions()
{
    paddock ls --all --json 2>/dev/null | python3 -c 'import json,sys
for s in json.load(sys.stdin):
    print(s["id"]); print(s["name"])' 2>/dev/null
}

_paddock_pending()
{
    paddock approvals --json 2>/dev/null | python3 -c 'import json,sys
for a in json.load(sys.stdin): print(a["id"])' 2>/dev/null
}

_paddock()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} cmd="" i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
        --socket | --state-dir | --config) ((i++)) ;;
        -*) ;;
        *) cmd=${COMP_WORDS[i]}; break ;;
        esac
    done
    if [[ -z $cmd ]]; then
        if [[ $cur == -* ]]; then
            # the global options, and the default command's (the dashboard)
            COMPREPLY=($(compgen -W "--socket --state-dir --config --help --version --read-only --theme --bell --mouse --no-mouse" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$(paddock __commands 2>/dev/null)" -- "$cur"))
        fi
        return
    fi
    case $cmd in
    pause | resume | stop | rm | show | export | history | approvals | exec)
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--json --help --format --output --raw --search --state --kind --risk --limit --before" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$(_paddock_sessions)" -- "$cur"))
        fi
        ;;
    files | cat)
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--json --help --limit --max --raw" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$(_paddock_sessions)" -- "$cur"))
        fi
        ;;
    risk)
        if [[ $prev == --session ]]; then
            COMPREPLY=($(compgen -W "$(_paddock_sessions)" -- "$cur"))
        elif [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--session --json --help" -- "$cur"))
        else
            COMPREPLY=($(compgen -c -- "$cur"))
        fi
        ;;
    verify)
        if [[ $prev == --export ]]; then
            COMPREPLY=($(compgen -f -- "$cur"))
        elif [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--export --json --help" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$(_paddock_sessions)" -- "$cur"))
        fi
        ;;
    dashboard)
        COMPREPLY=($(compgen -W "--read-only --theme --bell --mouse --no-mouse --help" -- "$cur"))
        ;;
    approve | reject)
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--reason --by --remember --pattern --json --help" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$(_paddock_pending)" -- "$cur"))
        fi
        ;;
    *)
        COMPREPLY=($(compgen -f -- "$cur"))
        ;;
    esac
}
complete -F _paddock paddock
