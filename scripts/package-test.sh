#!/usr/bin/env bash
# board installed the ways an embedder or a user gets it, each checked working:
#  1. the reducer installed to a temporary prefix: each installed header compiles alone, and
#     docs/examples builds (default flags, no -std of its own) and runs by find_package, by
#     pkg-config on a plain g++ line, and by add_subdirectory of this tree;
#  2. the Debian packages built from the tree (reducer, board and board-daemon only, release,
#     no tests), lintian without errors, installed with dpkg -i: board --version, man -w, the
#     installed CMake and pkg-config packages, and bash, zsh and fish completing ids from a
#     real board.
# Needs scripts/setup.sh's packages and root (or sudo) for dpkg -i. Leaves the packages
# installed. Called by scripts/test.sh; runs alone too.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
step() { printf '\n== %s\n' "$*"; }
fail() { echo "FAIL $*" >&2; exit 1; }
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"

version=$(sed -nE 's/^project\(board VERSION ([0-9]+\.[0-9]+\.[0-9]+).*/\1/p' CMakeLists.txt)
[[ -n $version ]] || fail "no version on the project(board VERSION ...) line"
changelog=$(dpkg-parsechangelog -l debian/changelog -S Version)
[[ $changelog == "$version" ]] || fail "debian/changelog is at $changelog, CMakeLists.txt at $version"

example="PROJ-1 is in ready; a human starts planning"
run_example() {  # $1: how it was built, $2: the program
    local out
    out=$("$2")
    [[ $out == "$example" ]] || fail "$1: printed \"$out\""
    echo "ok  $1"
}

step "the reducer installed to a prefix, docs/examples built against it"
prefix=$work/prefix
cmake -S . -B "$work/reducer" -G Ninja -DBOARD_REDUCER_ONLY=ON -DBOARD_BUILD_TESTS=OFF \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" >/dev/null
cmake --build "$work/reducer" --target board_reducer >/dev/null
cmake --install "$work/reducer" >/dev/null
headers=("$prefix"/include/board/*.hpp)
# Each by itself, and every board header it reaches must come from the prefix (not from an
# installed libboard-reducer-dev).
for header in "${headers[@]}"; do
    deps=$(printf '#include <board/%s>\n' "${header##*/}" |
        g++ -std=c++20 -M -I "$prefix/include" -x c++ -)
    stray=$(tr ' \\' '\n\n' <<<"$deps" | grep '/board/' | grep -v "^$prefix/" || true)
    [[ -z $stray ]] || fail "board/${header##*/} reaches headers outside the prefix: $stray"
done
echo "ok  ${#headers[@]} installed headers, each compiled alone: $(cd "$prefix/include" && echo board/*.hpp)"

cmake -S docs/examples -B "$work/find" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/find" >/dev/null
run_example "find_package(board $version REQUIRED COMPONENTS reducer)" "$work/find/embed_reducer"

flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs board-reducer)
# shellcheck disable=SC2086 # the flags are words
g++ -o "$work/pc_example" docs/examples/embed_reducer.cpp $flags
run_example "g++ embed_reducer.cpp \$(pkg-config --cflags --libs board-reducer)" "$work/pc_example"

cmake -S docs/examples -B "$work/subdir" -G Ninja -DBOARD_SOURCE_DIR="$src" >/dev/null
cmake --build "$work/subdir" >/dev/null
run_example "add_subdirectory(board)" "$work/subdir/embed_reducer"

step "Debian packages: dpkg-buildpackage -us -uc -b (nocheck), lintian"
# Built in a copy: dpkg-buildpackage writes beside the tree and into debian/.
tree=$work/deb/board-$version
mkdir -p "$tree"
git ls-files -z --cached --others --exclude-standard |
    tar --null -T - --ignore-failed-read -cf - | tar -xf - -C "$tree"
started=$SECONDS
# CI's time counts: no debug symbols here (a release build keeps dpkg-buildflags' -g and its
# dbgsym package); what is checked (install, man, completion, lintian) does not need them.
# BOARD_WERROR=1 (CI): warnings are errors, as this is CI's only optimised build.
werror=""
[[ ${BOARD_WERROR:-0} == 1 ]] && werror=-Werror
(cd "$tree" && DEB_BUILD_OPTIONS="nocheck parallel=2 noddebs" DEB_CXXFLAGS_STRIP=-g \
    DEB_CXXFLAGS_APPEND="$werror" dpkg-buildpackage -us -uc -b \
    >"$work/dpkg-buildpackage.log" 2>&1) || { tail -n 40 "$work/dpkg-buildpackage.log"; fail "dpkg-buildpackage"; }
echo "ok  dpkg-buildpackage in $((SECONDS - started)) s: $(cd "$work/deb" && echo *.deb)"
# One run, its report shown and its status kept.
lint_status=0
lint_report=$(lintian --fail-on error "$work"/deb/board_"$version"_*.changes 2>&1) || lint_status=$?
printf '%s\n' "$lint_report" | grep -v '^running with root' || true
((lint_status == 0)) || fail "lintian reports errors"
echo "ok  lintian: no errors"

step "the packages installed"
$sudo dpkg -i "$work"/deb/board_"$version"_*.deb "$work"/deb/libboard-reducer-dev_"$version"_*.deb >/dev/null
[[ $(board --version) == "board $version" ]] || fail "board --version: $(board --version)"
[[ $(board-daemon --version) == "board-daemon $version" ]] || fail "board-daemon --version"
echo "ok  $(board --version), $(board-daemon --version)"
man -w board >/dev/null && man -w board-daemon >/dev/null || fail "man -w"
echo "ok  man -w: $(man -w board) $(man -w board-daemon)"
man board 2>/dev/null | grep -q "board answer" || fail "man board has no COMMANDS section"
cmake -S docs/examples -B "$work/system" -G Ninja >/dev/null
cmake --build "$work/system" >/dev/null
run_example "find_package against /usr (libboard-reducer-dev)" "$work/system/embed_reducer"
# shellcheck disable=SC2046
g++ -o "$work/system_pc" docs/examples/embed_reducer.cpp $(pkg-config --cflags --libs board-reducer)
run_example "pkg-config against /usr (libboard-reducer-dev)" "$work/system_pc"

step "completions of the installed board on a real board"
# The example board, with PROJ-9 forked from PROJ-2 just after its agent asked a question, so
# one question is pending.
mkdir "$work/board"
cp -r board.yaml tickets "$work/board/"
(cd "$work/board" && board fork PROJ-2 --at 4 >/dev/null)
ids="PROJ-1 PROJ-2 PROJ-3 PROJ-4 PROJ-5 PROJ-6 PROJ-7 PROJ-8 PROJ-9"
expect() {  # $1: shell, $2: the line, $3: the candidates expected (sorted, space-separated)
    local got
    case $1 in
        bash) local words
              read -ra words <<<"$2"
              [[ $2 == *" " ]] && words+=("")
              got=$(cd "$work/board" && bash "$src/scripts/package/bash-complete.sh" "${words[@]}") ;;
        zsh) got=$(cd "$work/board" && timeout 30 zsh -f "$src/scripts/package/zsh-complete.zsh" "$2") ;;
        fish) got=$(cd "$work/board" && fish -c "complete -C'$2'" | cut -f1) ;;
    esac
    got=$(printf '%s\n' "$got" | sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ $//')
    [[ $got == "$3" ]] || fail "$1: \"$2\" offered [$got], expected [$3]"
}
for shell in bash zsh fish; do
    expect "$shell" "board show " "$ids"
    expect "$shell" "board --board $work/board show PROJ-" "$ids"
    expect "$shell" "board answer " "PROJ-9.q1"
    expect "$shell" "board list --status " "backlog done implementing planning ready research review"
    expect "$shell" "board list --awaiting app" "approval"
    expect "$shell" "board move PROJ-1 " "backlog implementing planning ready research"
    expect "$shell" "board note PROJ-1 " ""
    expect "$shell" "board completion " "bash fish zsh"
    echo "ok  $shell: ticket ids, question ids, statuses, awaiting kinds; no file where text goes"
done
