#!/usr/bin/env bash
# The main job, for a newcomer: installs what board needs, builds the release binaries, and
# runs board-daemon with the bundled example agent (examples/example_agent, no model needed) on a
# fresh copy of the example board (board.yaml + tickets/) in build/demo-board. The copy keeps
# the repository's tickets, which are test fixtures, untouched.
#
# Act 1: the daemon works the board until no ticket can move without a human.
# Act 2: a human answers a question and approves a plan; the daemon picks both up.
# Then it prints what to type next.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target board board-daemon board-example-agent

bin="$PWD/build/release"
export PATH="$bin/src/cli:$bin/src/orchestrator:$bin/examples/example_agent:$PATH"
demo="$PWD/build/demo-board"
rm -rf "$demo"
mkdir -p "$demo"
cp board.yaml "$demo/"
cp -r tickets "$demo/"
export BOARD_DIR="$demo"

echo
echo "== Act 1: board-daemon works the example board until only humans can move it"
board-daemon
echo
echo "== Act 2: a human answers PROJ-6's question and approves PROJ-4's plan"
echo "\$ board answer PROJ-6.q1 sqlite --as you"
board answer PROJ-6.q1 sqlite --as you
echo "\$ board approve PROJ-4 \"The plan is right; go ahead.\" --as you"
board approve PROJ-4 "The plan is right; go ahead." --as you
echo
board-daemon
echo
echo "== The board now"
board list --all
cat <<NEXT

Your turn. In this shell:
  export PATH="$bin/src/cli:$bin/src/orchestrator:$bin/examples/example_agent:\$PATH" BOARD_DIR="$demo"
  board show PROJ-4                 # the ticket, its artifacts and notes
  board approve PROJ-4 "Ship it"    # pass the review: PROJ-4 is done
  board reject PROJ-2 "Use the existing cache helper"   # the next plan is redone with your feedback
  board-daemon --watch              # keeps working as you answer (Ctrl-C stops it gracefully)
  board-daemon --http 8080          # the same, plus the inbox page at http://127.0.0.1:8080/
  board replay PROJ-1 --diff        # why a ticket is where it is, event by event
NEXT
