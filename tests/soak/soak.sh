#!/usr/bin/env bash
# The soak test: board-daemon (a release build's) under a storm of agents, CLI writers and
# HTTP approvals, killed with SIGKILL every few seconds, then every log, run and
# acknowledged write checked (docs/reliability.md).
#
#   tests/soak/soak.sh BUILD_DIR [SECONDS]     CI: 60 s; by hand: as long as you like
#
# BUILD_DIR is a CMake build with BOARD_BUILD_SOAK=ON (any build with the tests has it); the
# board and board-daemon under test are its own, or BOARD_BIN and BOARD_DAEMON when set (CI:
# the installed packages'). The daemon's memory limit is a release build's: a sanitized
# daemon does not meet it.
set -euo pipefail
build=${1:?usage: tests/soak/soak.sh BUILD_DIR [SECONDS]}
seconds=${2:-60}
soak="$build/tests/soak/board_soak"
if [[ ! -x $soak ]]; then
  echo "soak.sh: $soak is missing: configure $build with -DBOARD_BUILD_SOAK=ON and build it" >&2
  exit 2
fi
programs=()
[[ -n ${BOARD_BIN:-} ]] && programs+=(--board-binary "$BOARD_BIN")
[[ -n ${BOARD_DAEMON:-} ]] && programs+=(--daemon-binary "$BOARD_DAEMON")
exec "$soak" --seconds "$seconds" "${programs[@]}"
