#!/bin/sh
# The `board` CLI on generated boards of 1,000 and 10,000 tickets (~20 events each): the
# board-wide queries and the latency of a durable write, as whole processes.
#
#   bench/cli_bench.sh [BUILD_DIR] [RUNS]      (default build/release, 31 runs)
#
# Boards are generated in a scratch folder on the same disk as the system temp dir and
# removed afterwards. The first query of a board builds its caches (ticket.json snapshots,
# tickets/.index) and is reported separately as "cold".
set -eu
BUILD=${1:-build/release}
RUNS=${2:-31}
BOARD=$BUILD/src/cli/board
GEN=$BUILD/bench/board_gen
TIME=$BUILD/bench/board_cli_timing
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/board-cli-bench-XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT

for n in 1000 10000; do
  dir=$SCRATCH/b$n
  "$GEN" "$dir" $n > /dev/null
  echo "== $n tickets"
  "$TIME" 1 "cold: list --json (builds caches)" -- "$BOARD" list --json --board "$dir"
  # Interleaved with its floor: the listing and the stat of every log, nothing else
  # (bench/query_io_floor.cpp), what any query that believes no stale cache must do.
  "$TIME" "$RUNS" "list --json" -- "$BOARD" list --json --board "$dir" \
    :: "list tickets/ + stat every log (floor)" -- "$BUILD/bench/board_query_io_floor" "$dir/tickets"
  "$TIME" "$RUNS" "list" -- "$BOARD" list --board "$dir"
  "$TIME" "$RUNS" "ready" -- "$BOARD" ready --board "$dir"
  "$TIME" "$RUNS" "next" -- "$BOARD" next --board "$dir"
  "$TIME" "$RUNS" "next --awaiting" -- "$BOARD" next --awaiting --board "$dir"
  "$TIME" "$RUNS" "show (one ticket)" -- "$BOARD" show PROJ-$((n / 2)) --board "$dir"
done

# Writes: each run appends one durable event (write + fdatasync) and refreshes the snapshot.
# Interleaved with what they are compared to (board_cli_timing runs one of each in turn): the
# same durable file-system work with nothing else (bench/create_io_floor.cpp), `board list` on
# an empty board (what starting `board` costs), and /bin/true (what any process costs here).
mkdir -p "$SCRATCH/floor/tickets"  # not a board: its FLOOR-N folders would be tickets
"$BOARD" init "$SCRATCH/empty" > /dev/null
"$TIME" "$RUNS" "create on 10k (fsync)" -- "$BOARD" create "A ticket from the benchmark" --board "$SCRATCH/b10000" \
  :: "create on 1k (fsync)" -- "$BOARD" create "A ticket from the benchmark" --board "$SCRATCH/b1000" \
  :: "note (fsync)" -- "$BOARD" note PROJ-7 "a note from the benchmark" --board "$SCRATCH/b1000" \
  :: "create's file-system work alone" -- "$BUILD/bench/board_create_io_floor" "$SCRATCH/floor/tickets" \
  :: "list, empty board (board's floor)" -- "$BOARD" list --board "$SCRATCH/empty" \
  :: "/bin/true (machine floor)" -- /bin/true
# A query right after a write: the load stats every log, folds the one written and rewrites
# the index; less the write alone, that is what a query costs on a board a daemon is writing.
big=$SCRATCH/b10000
"$TIME" "$RUNS" "note && list --json, 10k" -- /bin/sh -c \
  "'$BOARD' note PROJ-7 'a note' --board '$big' && '$BOARD' list --json --board '$big' > /dev/null" \
  :: "note && true, 10k" -- /bin/sh -c "'$BOARD' note PROJ-7 'a note' --board '$big' && true"
