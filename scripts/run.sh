#!/usr/bin/env bash
# Installs what board needs, builds the release binaries, and replays the example board in
# tickets/: every ticket's history, event by event, with the state each event left.
# (Once board-daemon lands, this runs the daemon on the example board instead.)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target board

board=build/release/src/cli/board
for dir in tickets/*/; do
  id=$(basename "$dir")
  [[ -f $dir/events.jsonl ]] || continue
  "$board" replay "$id" --board .
  echo
done
echo "Next: \`$board show PROJ-3 --board .\` (awaiting your input), \`$board replay PROJ-1 --board . --diff\` (what each event changed), \`$board verify --board .\`."
