#!/bin/sh
# Linker launcher of the static `board` executable (see CMakeLists.txt): runs the link command
# it is given without the shared libraries CMake lists for the components' dependencies
# (libfmt, Boost.JSON, yaml-cpp). Their code is already in the link from static archives or
# fmt_impl.cpp; `-static` refuses any shared object on the command line. A new shared
# dependency without its archive fails the link with undefined symbols: loud, never wrong.
compiler=$1
shift
for arg do
    shift
    case $arg in
        *.so | *.so.[0-9]*) ;;
        *) set -- "$@" "$arg" ;;
    esac
done
exec "$compiler" "$@"
