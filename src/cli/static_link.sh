#!/bin/sh
# Linker launcher of the static `board` executable (see CMakeLists.txt):
#   static_link.sh [ARCHIVE...] -- COMPILER ARGS...
# runs the link command it is given without the shared libraries CMake lists for the
# components' dependencies (libfmt, Boost.JSON, yaml-cpp): their code is already in the link
# from static archives or fmt_impl.cpp; `-static` refuses any shared object on the command
# line. A shared library named by one of the ARCHIVEs (libnettle.so for .../libnettle.a) is
# replaced by it in place, after the libraries that use it. A new shared dependency without
# its archive fails the link with undefined symbols: loud, never wrong.
archives=
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    archives="$archives $1"
    shift
done
[ $# -gt 0 ] && shift
compiler=$1
shift
for arg do
    shift
    case $arg in
        *.so | *.so.[0-9]*)
            name=${arg##*/}
            name=${name%%.so*}.a
            for archive in $archives; do
                case $archive in */"$name") set -- "$@" "$archive" ;; esac
            done
            ;;
        *) set -- "$@" "$arg" ;;
    esac
done
exec "$compiler" "$@"
