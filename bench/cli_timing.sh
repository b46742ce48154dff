#!/usr/bin/env bash
# Times a whole command the way a person meets it: wall clock, process start to exit, output
# thrown away. Runs it once to warm the page cache, then RUNS times, and prints every sample,
# the median, min and max in milliseconds. No dependency beyond bash 5 (hyperfine does more,
# but is not installed everywhere). The clock is bash's own EPOCHREALTIME: calling `date`
# would add a process start to every sample, which is the very cost being measured.
#
#   bench/cli_timing.sh RUNS COMMAND [ARGS...]
#   bench/cli_timing.sh 11 build/release/src/cli/board --board /tmp/big verify
#
# A command that fails is reported and stops the measurement: a fast error is not a figure.
set -euo pipefail

if [[ $# -lt 2 || ! $1 =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: $0 RUNS COMMAND [ARGS...]" >&2
    exit 2
fi
runs=$1
shift

if [[ -z ${EPOCHREALTIME:-} ]]; then
    echo "$0: needs bash 5 (EPOCHREALTIME)" >&2
    exit 2
fi

if ! "$@" >/dev/null 2>&1; then
    echo "$0: the command failed (exit $?): $*" >&2
    exit 1
fi

samples=()
for ((i = 0; i < runs; i++)); do
    start=${EPOCHREALTIME/[.,]/}
    if ! "$@" >/dev/null 2>&1; then
        echo "$0: the command failed on run $((i + 1)): $*" >&2
        exit 1
    fi
    end=${EPOCHREALTIME/[.,]/}
    samples+=($((10#$end - 10#$start)))  # microseconds
done

sorted=($(printf '%s\n' "${samples[@]}" | sort -n))
count=${#sorted[@]}
if ((count % 2 == 1)); then
    median=${sorted[count / 2]}
else
    median=$(((sorted[count / 2 - 1] + sorted[count / 2]) / 2))
fi
ms() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }
printf 'samples (ms):'
for s in "${samples[@]}"; do printf ' %s' "$(ms "$s")"; done
printf '\n'
printf 'runs %d  median %s ms  min %s ms  max %s ms  : %s\n' "$count" "$(ms "$median")" \
    "$(ms "${sorted[0]}")" "$(ms "${sorted[count - 1]}")" "$*"
