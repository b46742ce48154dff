#!/usr/bin/env zsh
# zsh-complete.zsh LINE: prints, one a line, the candidates zsh's completion system offers when
# TAB is pressed after LINE, in an interactive zsh with compinit and the installed functions.
zmodload zsh/zpty || exit 2
setup=$(mktemp)
trap 'rm -f $setup' EXIT
cat > $setup <<'SETUP'
PROMPT='capture> ' RPROMPT=
unset zle_bracketed_paste
unsetopt prompt_sp
autoload -Uz compinit && compinit -u -D
bindkey '^I' complete-word
# NUL lines before and after the candidates; each candidate printed as zsh adds it.
mark() { print -n -- $'\0\n' }
compprefuncs=(mark)
comppostfuncs=(mark exit)
compadd() {
    # Calls that only compute matches for another (-O, -A, -D) add nothing: passed through.
    if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi
    local -a hits
    builtin compadd -A hits "$@"
    (( $#hits )) && print -rl -- ${^hits}
    builtin compadd "$@"
}
SETUP
zpty z zsh -f -i
zpty -w z "source $setup"
local line
zpty -r z line '*capture> *' || exit 2   # zle is reading: the setup is done
zpty -w z "$1"$'\t'
integer marks=0
while zpty -r z line; do
    line=${line//$'\r'/}
    line=${line%$'\n'}
    if [[ $line == *$'\0'* ]]; then
        (( marks++ )) && break || continue
    fi
    (( marks )) && print -r -- "$line"
done
zpty -d z
