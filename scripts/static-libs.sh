#!/usr/bin/env bash
# Usage: scripts/static-libs.sh DIR
#
# Prepares DIR so that a `--static-swift-stdlib` build (`make cli`, `make bench`'s static CLI)
# links in the C libraries it would otherwise load at every start, and prints the swift build
# flags that put DIR first on the linker's search path and pick the linker:
# - libstdc++: the Swift runtime's link flags ask for `-lstdc++`, which otherwise finds the
#   shared library in GCC's folder. Loading libstdc++.so (and binding its symbols) was ~0.7 ms
#   of a ~9 ms one-shot `wattle GET` (see Benchmarks/ANALYSIS.md).
# - libsodium and SQLite: their archives from the -dev packages. pkg-config puts the system's
#   library folder (where the shared libraries are) ahead of any -L flag, so DIR/pkgconfig gets
#   copies of their .pc files pointing at DIR: build with PKG_CONFIG_PATH=DIR/pkgconfig. Loading
#   the two shared libraries, relocating them and the longer symbol search they cause for every
#   other library were ~0.5 ms of a one-shot `wattle GET` (see Benchmarks/ANALYSIS.md).
# libcurl stays shared: its archive needs archives of its own dependencies (Kerberos, LDAP) that
# Debian does not ship. A library whose archive is not found stays shared, with a message.
# Linked in, a library's security updates reach the program only when it is built again.
# - The linker: the toolchain's lld, with `-z pack-relative-relocs` (DT_RELR, which glibc reads
#   since 2.36), through DIR/toolset.json. The Swift runtime linked in needs ~41,600 relative
#   relocations; as RELA entries they were 1 MB that the loader read at every start, as RELR
#   8 KB (gold, the default, cannot write RELR). Without lld or with an older glibc, the default
#   linker is kept, with a message.
# SWIFT names the swift driver, as in the Makefile (default: swift on PATH).
set -euo pipefail
dir=${1:?usage: $0 DIR}
# The flag is passed to swift build unquoted (a Makefile substitution): a path with white space
# would be split, so keep every library shared there rather than break the build.
case "$(pwd)/$dir" in
    *[[:space:]]*) echo "static-libs: $dir has white space in its path; the libraries stay shared" >&2
                   exit 0 ;;
esac
mkdir -p "$dir/pkgconfig"
dir=$(cd "$dir" && pwd)

# Ask the toolchain's own clang (it links the Swift program) where GCC's archive is; cc else.
swift_path=$(command -v "${SWIFT:-swift}" || true)
toolchain_bin=$(dirname "$(readlink -f "${swift_path:-/nonexistent}")")
clang="$toolchain_bin/clang"
[ -x "$clang" ] || clang=cc
archive=$("$clang" -print-file-name=libstdc++.a 2>/dev/null || true)
if [ -z "$archive" ] || [ "$archive" = libstdc++.a ] || [ ! -f "$archive" ]; then
    echo "static-libs: no libstdc++.a found; libstdc++ stays a shared library" >&2
else
    ln -sf "$archive" "$dir/libstdc++.a"
fi

# PACKAGE (pkg-config name) and LIBRARY (lib*.a): link the archive in DIR and write a .pc that
# finds it there, with the private flags (what the archive itself needs) among the public ones.
link_archive() {
    local package=$1 library=$2 libdir pcdir
    rm -f "$dir/pkgconfig/$package.pc" "$dir/$library.a"
    if ! libdir=$(pkg-config --variable=libdir "$package" 2>/dev/null) ||
       ! pcdir=$(pkg-config --variable=pcfiledir "$package" 2>/dev/null) ||
       [ ! -f "$libdir/$library.a" ] || [ ! -f "$pcdir/$package.pc" ]; then
        echo "static-libs: no $library.a found through pkg-config; $package stays a shared library" >&2
        return
    fi
    ln -sf "$libdir/$library.a" "$dir/$library.a"
    sed -e "s|^libdir=.*|libdir=$dir|" "$pcdir/$package.pc" |
        awk '/^Libs\.private:/ { sub(/^Libs\.private:/, ""); private = private $0; next }
             /^Libs:/ { libs = NR }
             { line[NR] = $0 }
             END { for (i = 1; i <= NR; i++) if (i in line) print line[i] (i == libs ? private : "") }' \
        > "$dir/pkgconfig/$package.pc"
}
link_archive sqlite3 libsqlite3
link_archive libsodium libsodium

# glibc's version as "2.36" (getconf prints "glibc 2.36"); empty when it is not glibc.
glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '$1 == "glibc" { print $2 }' || true)
lld="$toolchain_bin/ld.lld"
# lld's major version: `-z pack-relative-relocs` is there since 15.
lld_major=$("$lld" --version 2>/dev/null | sed -n 's/^LLD \([0-9][0-9]*\)\..*/\1/p' | head -n 1 || true)
rm -f "$dir/toolset.json"
toolset=
if [ ! -x "$lld" ] || [ -z "$lld_major" ]; then
    echo "static-libs: the toolchain has no ld.lld; the default linker stays (relocations as RELA)" >&2
elif [ "$lld_major" -lt 15 ]; then
    echo "static-libs: ld.lld $lld_major writes no RELR relocations (15 does); the default linker stays" >&2
elif [[ "$lld" == *[\"\\]* ]]; then
    echo "static-libs: $lld has a quote or backslash in its path; the default linker stays" >&2
elif [ -z "$glibc" ] || [ "$(printf '%s\n2.36\n' "$glibc" | sort -V | head -n 1)" != 2.36 ]; then
    echo "static-libs: glibc ${glibc:-not found} reads no RELR relocations (2.36 does); the default linker stays" >&2
else
    printf '{"schemaVersion": "1.0", "linker": {"path": "%s", "extraCLIOptions": ["-z", "pack-relative-relocs"]}}\n' \
        "$lld" > "$dir/toolset.json"
    toolset=" --toolset $dir/toolset.json"
fi

echo "-Xswiftc -L$dir$toolset"
