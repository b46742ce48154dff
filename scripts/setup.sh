#!/usr/bin/env bash
# Installs everything board needs on Debian 12, by named package. Idempotent: a second run
# installs nothing. Never libboost-all-dev or any 1.74 -dev: they remove the 1.81 headers.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev libboost-filesystem1.81-dev
  libfmt-dev libyaml-cpp-dev catch2 libcli11-dev libbenchmark-dev nettle-dev libutf8proc-dev
  libmd4c-dev libmd4c-html0-dev
  clang-14 libclang-rt-14-dev lld-14   # the sanitized build (CMakePresets.json) and the fuzzer
  llvm-14                              # llvm-symbolizer-14: names in the sanitizers' reports
  debhelper help2man lintian man-db bash-completion zsh fish   # scripts/package-test.sh
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if ((${#missing[@]})); then
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
