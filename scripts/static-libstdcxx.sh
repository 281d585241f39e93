#!/usr/bin/env bash
# Usage: scripts/static-libstdcxx.sh DIR
#
# Puts a link to the C++ runtime's archive (libstdc++.a) in DIR and prints the swift build flag
# that puts DIR first on the linker's search path, so that a `--static-swift-stdlib` build links
# libstdc++ in as well: the Swift runtime's link flags ask for `-lstdc++`, which otherwise finds
# the shared library in GCC's folder. Loading libstdc++.so (and binding its symbols) was ~0.7 ms
# of a ~9 ms one-shot `wattle GET` (see Benchmarks/ANALYSIS.md). When no archive is found it
# prints nothing and the build links libstdc++ as a shared library, as before.
# SWIFT names the swift driver, as in the Makefile (default: swift on PATH).
set -euo pipefail
dir=${1:?usage: $0 DIR}
# The flag is passed to swift build unquoted (a Makefile substitution): a path with white space
# would be split, so keep libstdc++ a shared library there rather than break the build.
case "$(pwd)/$dir" in
    *[[:space:]]*) echo "static-libstdcxx: $dir has white space in its path; libstdc++ stays a shared library" >&2
                   exit 0 ;;
esac
# Ask the toolchain's own clang (it links the Swift program) where GCC's archive is; cc else.
swift_path=$(command -v "${SWIFT:-swift}" || true)
clang="$(dirname "$(readlink -f "${swift_path:-/nonexistent}")")/clang"
[ -x "$clang" ] || clang=cc
archive=$("$clang" -print-file-name=libstdc++.a 2>/dev/null || true)
if [ -z "$archive" ] || [ "$archive" = libstdc++.a ] || [ ! -f "$archive" ]; then
    echo "static-libstdcxx: no libstdc++.a found; libstdc++ stays a shared library" >&2
    exit 0
fi
mkdir -p "$dir"
ln -sf "$archive" "$dir/libstdc++.a"
echo "-Xswiftc -L$(cd "$dir" && pwd)"
