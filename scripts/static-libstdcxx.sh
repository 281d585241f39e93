#!/usr/bin/env bash
# Usage: scripts/static-libstdcxx.sh DIR
#
# Puts a link to the C++ runtime's archive (libstdc++.a) in DIR and prints the swift build flag
# that puts DIR first on the linker's search path, so that a `--static-swift-stdlib` build links
# libstdc++ in as well: the Swift runtime's link flags ask for `-lstdc++`, which otherwise finds
# the shared library in GCC's folder. Loading libstdc++.so (and binding its symbols) was ~0.7 ms
# of a ~9 ms one-shot `wattle GET` (see Benchmarks/ANALYSIS.md). When no archive is found it
# prints nothing and the build links libstdc++ as a shared library, as before.
set -euo pipefail
dir=${1:?usage: $0 DIR}
# Ask the toolchain's own clang (it links the Swift program) where GCC's archive is; cc else.
clang="$(dirname "$(readlink -f "$(command -v swift)")")/clang"
[ -x "$clang" ] || clang=cc
archive=$("$clang" -print-file-name=libstdc++.a 2>/dev/null || true)
if [ -z "$archive" ] || [ "$archive" = libstdc++.a ] || [ ! -f "$archive" ]; then
    echo "static-libstdcxx: no libstdc++.a found; libstdc++ stays a shared library" >&2
    exit 0
fi
mkdir -p "$dir"
ln -sf "$archive" "$dir/libstdc++.a"
echo "-Xswiftc -L$(cd "$dir" && pwd)"
