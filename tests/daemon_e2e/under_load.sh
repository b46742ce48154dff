#!/usr/bin/env bash
# The daemon end-to-end suite under load (issue 21): two copies at once on a 2-core machine,
# ROUNDS times in a row (20 by default). Exits non-zero on the first round a copy fails; the
# failing copy's output stays in $TMPDIR/under-load-<round>-<copy>.log.
#   tests/daemon_e2e/under_load.sh build/release [ROUNDS]
set -uo pipefail
build=${1:?usage: under_load.sh BUILD_DIR [ROUNDS]}
rounds=${2:-20}
suite="$build/tests/daemon_e2e/board_daemon_e2e_tests"
logs=${TMPDIR:-/tmp}
for round in $(seq 1 "$rounds"); do
  "$suite" > "$logs/under-load-$round-a.log" 2>&1 & a=$!
  "$suite" > "$logs/under-load-$round-b.log" 2>&1 & b=$!
  wait $a; ra=$?
  wait $b; rb=$?
  if ((ra != 0 || rb != 0)); then
    echo "round $round of $rounds: FAILED (copies exited $ra and $rb; see $logs/under-load-$round-*.log)"
    exit 1
  fi
  echo "round $round of $rounds: both copies passed"
  rm -f "$logs/under-load-$round-a.log" "$logs/under-load-$round-b.log"
done
echo "passed $rounds rounds in a row ($((2 * rounds)) suite runs, two at once)"
