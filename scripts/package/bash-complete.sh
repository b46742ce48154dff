#!/usr/bin/env bash
# bash-complete.sh WORD...: the candidates bash offers for the last WORD, board loaded the way
# bash-completion loads it on first use.
source /usr/share/bash-completion/bash_completion
source "${BOARD_BASH_COMPLETION:-/usr/share/bash-completion/completions/board}"
COMP_WORDS=("$@")
COMP_CWORD=$(($# - 1))
COMP_LINE="$*"
COMP_POINT=${#COMP_LINE}
_board
printf '%s\n' "${COMPREPLY[@]}"
