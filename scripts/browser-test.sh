#!/usr/bin/env bash
# The web page in headless Chromium: installs Debian's chromium (apt) and playwright-core
# (npm ci in tests/browser; no browser download), builds `board`, board-daemon and the fake
# agent, and runs tests/browser/board_page.test.mjs (the daemon working a board in a git
# repository, a person acting through the page). Screenshots land in $BUILD_DIR/browser/.
# Usage: scripts/browser-test.sh [BUILD_DIR]   (default build/dev, configured with the dev preset)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build/dev}

missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v npm >/dev/null || missing+=(nodejs npm)
if ((${#missing[@]})); then
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# playwright-core comes from the npm registry. Where the machine cannot reach it, say so and
# exit 77 ("cannot run here", as automake has it), so scripts/test.sh reports a skip, loudly.
if ! (cd tests/browser && npm ci --no-audit --no-fund --loglevel=error); then
  echo "browser-test: npm ci failed (is the npm registry reachable?); the browser test did NOT run" >&2
  exit 77
fi

if [[ ! -f $build_dir/CMakeCache.txt ]]; then
  cmake --preset dev -B "$build_dir"
fi
cmake --build "$build_dir" --target board board-daemon board_fake_agent

BOARD_BIN=$PWD/$build_dir/src/cli/board \
BOARD_DAEMON=$PWD/$build_dir/src/orchestrator/board-daemon \
BOARD_FAKE_AGENT=$PWD/$build_dir/tests/fake_agent/board_fake_agent \
BOARD_SCREENSHOT_DIR=$PWD/$build_dir/browser \
  node tests/browser/board_page.test.mjs
