#!/usr/bin/env bash
# Installs what board needs, builds it and runs every test: the pure reducer alone (as an
# embedder builds it), everything under ASan+UBSan with a smoke run of each benchmark, then
# board built as Debian builds it (-O2, hardened, warnings as errors here) and installed
# (scripts/package-test.sh), the soak test on the installed daemon, and the web page in a
# browser. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
scripts/agent-clis.sh   # Claude Code and Codex from npm, for tests/real_agents

step() { printf '\n== %s  [%d s in]\n' "$*" "$SECONDS"; }

step "the code's shape: layering and file sizes"
scripts/shape-check.sh

step "reducer alone: no Boost, fmt or yaml-cpp"
cmake --workflow --preset reducer-only

# With clang 14, eight sources to a unity file: its sanitized build and the processes it makes
# cost far less than GCC's (docs/benchmarks.md, "The time CI takes"); GCC builds the packages
# below one object per source, so each production source still compiles on its own.
step "all components under ASan + UBSan (clang 14)"
cmake --workflow --preset asan-ubsan

# The sanitized build's benchmarks: each must run (figures come from a release build,
# docs/benchmarks.md). One optimised build in CI, the Debian package's, since CI time counts.
step "benchmarks, smoke run under ASan + UBSan"
build=build/asan-ubsan
benches=("$build"/bench/board_*_bench)
[[ -x ${benches[0]} ]] || { echo "no benchmarks in $build/bench" >&2; exit 1; }
for bench in "${benches[@]}"; do
  [[ $(basename "$bench") == board_daemon_bench ]] && continue  # whole processes, below
  # Not replay_vs_bare: 30 fixed rounds of a 100,000-event replay take minutes under ASan, and
  # bench_replay and bench_bare_json_parse_file run the same code once.
  "$bench" --benchmark_min_time=0.01 --benchmark_filter=-replay_vs_bare >/dev/null
  echo "ok  $(basename "$bench")"
done
(cd "$build" && ./bench/board_daemon_bench src/orchestrator/board-daemon bench/board_null_agent \
  bench/board_gen --tickets 20 --rounds 1 --rss-tickets 200 >/dev/null)
echo "ok  board_daemon_bench"
(cd "$build" && ./bench/board_approve_latency src/orchestrator/board-daemon src/cli/board \
  bench/board_null_agent --approvals 3 >/dev/null)
echo "ok  board_approve_latency"
bench/cli_bench.sh "$build" 1 >/dev/null 2>&1
echo "ok  bench/cli_bench.sh"

step "installed: the reducer's CMake and pkg-config packages, the Debian packages (docs/embedding.md)"
BOARD_WERROR=1 scripts/package-test.sh

step "soak: the installed daemon killed with SIGKILL every few seconds under a storm, 60 s (docs/reliability.md)"
BOARD_BIN=/usr/bin/board BOARD_DAEMON=/usr/bin/board-daemon tests/soak/soak.sh "$build" 60

step "the web page in headless Chromium (approve, reject with feedback, a live column move)"
status=0
scripts/browser-test.sh "$build" || status=$?
if ((status == 77)); then
  echo "SKIPPED: the browser test (playwright-core could not be installed from npm here)"
elif ((status != 0)); then
  exit "$status"
fi

step "fuzz the log line decoder (libFuzzer, 30 s)"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target board_decode_line_fuzz
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
cp tests/fuzz/corpus/* "$corpus"/
build/fuzz/tests/fuzz/board_decode_line_fuzz "$corpus" -max_total_time=30 -print_final_stats=1 2>&1 | tail -n 3

step "all tests passed"
