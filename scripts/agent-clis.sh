#!/usr/bin/env bash
# Installs the agent CLIs the real-agent tests drive (tests/real_agents), from npm into
# build/agent-clis: Claude Code and Codex, at the versions the dialects were checked against.
# Without npm or the registry it says so and exits 0: those tests then report that they were
# skipped, and why.
set -uo pipefail
cd "$(dirname "$0")/.."

prefix=build/agent-clis
packages=(@anthropic-ai/claude-code@2.1.197 @openai/codex@0.169.0)

if [[ -x $prefix/node_modules/.bin/claude && -x $prefix/node_modules/.bin/codex ]]; then
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "agent CLIs not installed: npm is not on PATH (the real-agent tests will be skipped)"
  exit 0
fi
mkdir -p "$prefix"
if ! npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "${packages[@]}"; then
  echo "agent CLIs not installed: npm install failed (the real-agent tests will be skipped)"
fi
exit 0
