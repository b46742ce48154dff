#!/usr/bin/env bash
# The code's shape, as docs/architecture.md draws it, checked rather than hoped for: front ends
# never reach into one another (the HTTP server and the daemon go through src/app, not the
# CLI), no source file in src/ grows past 600 lines (a file that long holds more than one
# job), and the CLI's main.cpp stays a command table (250 lines). Prints each breach and
# exits 1 if there is any.
set -euo pipefail
cd "$(dirname "$0")/.."

status=0
while IFS= read -r hit; do
  echo "layering: $hit: src/http and src/orchestrator use src/app, never a src/cli header" >&2
  status=1
done < <(grep -rn --include='*.cpp' --include='*.hpp' '#include "cli/' src/http src/orchestrator || true)

while read -r lines file; do
  [[ $file == total ]] && continue
  if ((lines > 600)); then
    echo "size: $file has $lines lines (at most 600: split it by responsibility)" >&2
    status=1
  fi
done < <(find src \( -name '*.cpp' -o -name '*.hpp' \) -exec wc -l {} +)

# The CLI's main is its command table and nothing else.
main_lines=$(wc -l <src/cli/main.cpp)
if ((main_lines > 250)); then
  echo "size: src/cli/main.cpp has $main_lines lines (at most 250: commands live in commands_*.cpp)" >&2
  status=1
fi

((status == 0)) && echo "shape: layering and file sizes hold"
exit "$status"
