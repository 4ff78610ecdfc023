#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tests/test_install.sh SRCDIR BUILDDIR - TAP: the library as its users get
# it.  `meson install` of BUILDDIR into a temporary folder (DESTDIR), then,
# against that copy alone, found by pkg-config:
#   - libtopocoll.so has a versioned SONAME and exports only the public
#     tc_ functions (none of the internal tc__);
#   - tests/cxx_allreduce.cpp builds with c++ and
#     `pkg-config --cflags --libs topocoll` and runs (p = 4 allreduce);
#   - tests/c99_header.c builds under -std=c99 -pedantic -Werror and runs.
# A step whose compiler is missing is skipped.
set -u
src=${1:?usage: test_install.sh srcdir builddir}
build=${2:?usage: test_install.sh srcdir builddir}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/topocoll-install.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
. "$(cd "$(dirname "$0")" && pwd)/tap.sh" # ok, not_ok, skip, check; n, nfail

if out=$(DESTDIR="$tmp/root" meson install -C "$build" --no-rebuild 2>&1); then
	ok "meson install into a temporary folder"
else
	not_ok "meson install into a temporary folder" "$out"
	echo "1..$n"
	exit 1
fi
pc=$(find "$tmp/root" -name topocoll.pc | head -n 1)
lib=$(find "$tmp/root" -name 'libtopocoll.so.*' -type f | head -n 1)
if [ -z "$pc" ] || [ -z "$lib" ]; then
	not_ok "installed topocoll.pc and libtopocoll.so" "pc: '$pc' lib: '$lib'"
	echo "1..$n"
	exit 1
fi
libdir=$(dirname "$lib")
# pkg-config reads the installed .pc; the sysroot puts its paths under DESTDIR.
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR="$tmp/root"
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
flags=$(pkg-config --cflags --libs topocoll 2>&1) || { not_ok "pkg-config topocoll" "$flags"; flags=; }
[ -n "$flags" ] && ok "pkg-config --cflags --libs topocoll: $flags"

soname=$(readelf -d "$lib" | sed -n 's/.*SONAME.*\[\(.*\)\].*/\1/p')
if [[ $soname =~ ^libtopocoll\.so\.[0-9]+$ ]] && [ -e "$libdir/$soname" ] && [ -e "$libdir/libtopocoll.so" ]; then
	ok "SONAME $soname, installed with the libtopocoll.so link"
else
	not_ok "versioned SONAME" "SONAME '$soname'; $(ls "$libdir")"
fi

syms=$(nm -D --defined-only "$lib" | awk '{print $3}')
others=$(printf '%s\n' "$syms" | grep -v '^tc_[a-z0-9]' || true)
public=$(printf '%s\n' "$syms" | grep -c '^tc_[a-z0-9]')
if [ -z "$others" ] && [ "$public" -gt 0 ]; then
	ok "exports $public public tc_ functions and nothing else"
else
	not_ok "exports only public tc_ functions" "$others"
fi
# Every exported function is declared in an installed header (as the
# compiler reads it: some declarations are written by a macro).
incdir=$(dirname "$(find "$tmp/root" -name topocoll.h | head -n 1)")
decls=$(printf '#include <topocoll.h>\n' | ${CC:-cc} -E -P -I"$incdir" - 2>/dev/null)
undeclared=$(printf '%s\n' "$syms" | while read -r s; do
	grep -qw -- "$s" <<<"$decls" || echo "$s"; done)
if [ -z "$undeclared" ]; then ok "every exported function is in the installed headers"
else not_ok "every exported function is in the installed headers" "$undeclared"; fi

run_built() {
	# run_built NAME COMPILER ARGS...: compiles against the installed copy, runs.
	local name=$1 cc=$2
	shift 2
	if ! command -v "$cc" >/dev/null 2>&1; then
		skip "$name" "$cc not found"
		return
	fi
	local out
	# shellcheck disable=SC2086 # flags are words
	if ! out=$("$cc" "$@" $flags -o "$tmp/$name" 2>&1); then
		not_ok "$name builds against the installed library" "$out"
		return
	fi
	ok "$name builds against the installed library"
	if ldd "$tmp/$name" | grep -q "$libdir/libtopocoll" && out=$("$tmp/$name" 2>&1); then
		ok "$name runs with the installed library: $out"
	else
		not_ok "$name runs with the installed library" "$out
$(ldd "$tmp/$name")"
	fi
}
[ -n "$flags" ] && run_built cxx_allreduce c++ -std=c++11 -Wall -Wextra -pedantic -Werror \
	"$src/tests/cxx_allreduce.cpp"
[ -n "$flags" ] && run_built c99_header cc -std=c99 -Wall -Wextra -pedantic -Werror \
	"$src/tests/c99_header.c"
echo "1..$n"
[ "$nfail" -eq 0 ]
