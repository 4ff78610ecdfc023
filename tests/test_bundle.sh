#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tests/test_bundle.sh SOURCE_ROOT BUNDLE_BUILD_DIR [--prebuilt] - TAP tests of the
# portable bundle (tools/bundle) and its many-core report (bench/manycore.sh).
#
# Builds the bundle into a temporary folder (its release build in
# BUNDLE_BUILD_DIR, kept between runs so that a rebuild is incremental),
# checks that no program of it loads a library from outside it except
# glibc's family (with the LD_LIBRARY_PATH its run script sets, and the
# meson-built programs without any, through their rpath), runs `run --quick`
# (p = 2 only; no figure is asserted, the machine may be loaded) and checks
# that report.json is one well-formed JSON object (braces and brackets
# balanced outside strings: awk, no python) with every section and every
# part ended ok, and that report.md holds the summary table.  Also the
# usage errors of tools/bundle.  Plan printed at the end.
set -u

src=${1:?usage: test_bundle.sh SOURCE_ROOT BUNDLE_BUILD_DIR}
build=${2:?usage: test_bundle.sh SOURCE_ROOT BUNDLE_BUILD_DIR}
shift 2
extra=("$@") # --prebuilt: BUNDLE_BUILD_DIR is a finished build, taken as it is
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(cd "$(dirname "$0")" && pwd)/tap.sh" # ok, not_ok, skip, check; n, nfail

check() { # check NAME COMMAND...: ok when the command succeeds (not tap.sh's check)
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then ok "$name"; else not_ok "$name" "$out"; fi
}

# ---- usage errors: exit 2 and a message, nothing written
out=$("$src/tools/bundle" 2>&1); rc=$?
if [ $rc -eq 2 ] && grep -q usage <<<"$out"; then ok "bundle without DIR: usage, exit 2"
else not_ok "bundle without DIR: usage, exit 2" "rc=$rc $out"; fi
mkdir -p "$tmp/other" && echo keep > "$tmp/other/file"
out=$("$src/tools/bundle" "$tmp/other" --build "$build" "${extra[@]}" 2>&1); rc=$?
if [ $rc -eq 2 ] && grep -q 'not a bundle' <<<"$out" && [ "$(cat "$tmp/other/file")" = keep ]; then
	ok "bundle into a folder that is not a bundle: refused, exit 2, nothing touched"
else
	not_ok "bundle into a folder that is not a bundle: refused, exit 2, nothing touched" "rc=$rc $out"
fi

# ---- the bundle
b=$tmp/bundle
if out=$("$src/tools/bundle" "$b" --build "$build" "${extra[@]}" 2>&1); then
	ok "tools/bundle builds the bundle"
else
	not_ok "tools/bundle builds the bundle" "$out"
	echo "1..$n"
	exit 1
fi
for f in run env.sh manycore.sh manycore_report.awk tools/topocoll bench/model_fidelity \
	bench/replay_native bench/rounds bench/copies \
	peers/peers peers/peer_ours peers/peer_openmp examples/ring_sum lib/libtopocoll.so.0; do
	[ -e "$b/$f" ] || missing="${missing:-} $f"
done
if [ -z "${missing:-}" ]; then ok "the bundle holds its programs, libraries and scripts"
else not_ok "the bundle holds its programs, libraries and scripts" "missing:$missing"; fi

# Every library a program or library of the bundle resolves: inside the
# bundle, or glibc's family.  $1: the LD_LIBRARY_PATH to check with ("" for
# none); the rest: the files.
system_lib='^(linux-vdso|linux-gate|ld-linux|libc|libm|libpthread|libdl|librt|libutil|libresolv|libmvec)\.so'
outside() {
	local llp=$1 f
	shift
	for f in "$@"; do
		if [ -n "$llp" ]; then LD_LIBRARY_PATH=$llp ldd "$f"; else env -u LD_LIBRARY_PATH ldd "$f"; fi |
			awk -v f="$f" -v b="$b/" -v sys="$system_lib" '
				/not found/ { print f ": " $0; next }
				$2 == "=>" && $3 ~ /^\// && index($3, b) != 1 && $1 !~ sys { print f ": " $1 " => " $3 }'
	done
}
progs=()
for f in "$b"/tools/* "$b"/bench/* "$b"/peers/* "$b"/examples/* "$b"/lib/*; do
	[ -f "$f" ] && progs+=("$f")
done
bad=$(outside "$b/lib" "${progs[@]}")
if [ -z "$bad" ]; then ok "ldd: nothing outside the bundle but glibc (LD_LIBRARY_PATH of run)"
else not_ok "ldd: nothing outside the bundle but glibc (LD_LIBRARY_PATH of run)" "$bad"; fi
# By rpath alone: the libraries each meson-built file names itself (its
# DT_NEEDED; a runpath does not reach its libraries' own needs, such as
# hwloc's libudev, which run and env.sh find through LD_LIBRARY_PATH).
meson_built=()
for f in "$b"/tools/* "$b"/bench/* "$b"/examples/* "$b"/lib/libtopocoll.so.0; do
	[ -f "$f" ] && meson_built+=("$f")
done
direct_outside() {
	local f needed
	for f in "$@"; do
		needed=$(readelf -d "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' '|')
		env -u LD_LIBRARY_PATH ldd "$f" |
			awk -v f="$f" -v b="$b/" -v sys="$system_lib" -v needed="|$needed" '
				index(needed, "|" $1 "|") == 0 { next }
				/not found/ { print f ": " $0; next }
				$2 == "=>" && $3 ~ /^\// && index($3, b) != 1 && $1 !~ sys { print f ": " $1 " => " $3 }'
	done
}
bad=$(direct_outside "${meson_built[@]}")
if [ -z "$bad" ]; then ok "ldd: the meson-built programs find the bundle's libraries by rpath alone"
else not_ok "ldd: the meson-built programs find the bundle's libraries by rpath alone" "$bad"; fi

# ---- run --quick, into $OUT
t0=$SECONDS
out=$(OUT="$tmp/out" "$b/run" --quick --budget 200 2>&1); rc=$?
echo "# run --quick: $((SECONDS - t0)) s, exit status $rc"
if [ $rc -eq 0 ]; then ok "run --quick exits 0"; else not_ok "run --quick exits 0" "$(tail -30 <<<"$out")"; fi
j=$tmp/out/report.json
if [ -s "$j" ] && [ -s "$tmp/out/report.md" ] && [ ! -e "$b/out" ]; then
	ok "run writes report.json and report.md into \$OUT"
else
	not_ok "run writes report.json and report.md into \$OUT" "$(ls -la "$tmp/out" 2>&1)"
fi

# One JSON value: an object, braces and brackets balanced and never
# negative outside strings, nothing after the last brace.
wellformed() {
	awk '
		{ text = text $0 "\n" }
		END {
			depth = 0; ins = 0; esc = 0; closed = 0; bad = ""
			n = length(text)
			for (i = 1; i <= n; i++) {
				c = substr(text, i, 1)
				if (ins) {
					if (esc) esc = 0
					else if (c == "\\") esc = 1
					else if (c == "\"") ins = 0
					continue
				}
				if (closed && c !~ /[ \n\t]/) { bad = "text after the object"; break }
				if (c == "\"") ins = 1
				else if (c == "{" || c == "[") { if (depth == 0 && c == "[") { bad = "not an object"; break }; stack[++depth] = c }
				else if (c == "}" || c == "]") {
					if (depth == 0 || (c == "}" && stack[depth] != "{") || (c == "]" && stack[depth] != "[")) { bad = "unbalanced " c " at " i; break }
					if (--depth == 0) closed = 1
				} else if (depth == 0 && c !~ /[ \n\t]/) { bad = "text outside the object"; break }
			}
			if (!bad && (ins || depth || !closed)) bad = "unterminated"
			if (bad) { print bad; exit 1 }
		}' "$1"
}
check "report.json is one well-formed JSON object" wellformed "$j"
missing=
for key in '"machine": {' '"parts": [' '"peers": {' '"native": {' '"emulation": {' '"summary": {' \
	'"native_share_15pct": ' '"native_share_25pct": ' '"emulation_share_15pct": ' \
	'"peers_share_faster_than_openmp": ' '"by_team": [' '"by_p_ts": ['; do
	grep -qF "$key" "$j" || missing="$missing $key"
done
if [ -z "$missing" ]; then ok "report.json has every section"
else not_ok "report.json has every section" "missing:$missing"; fi
parts=$(grep -o '"name": "[a-z0-9-]*", "status": "[a-z0-9:]*"' "$j")
if grep -q '"peers"' <<<"$parts" && grep -q '"native-p2"' <<<"$parts" &&
	grep -q '"emulation-p2"' <<<"$parts" && ! grep -v '"status": "ok"' <<<"$parts" | grep -q .; then
	ok "every part ran and ended ok (peers, native-p2, emulation)"
else
	not_ok "every part ran and ended ok (peers, native-p2, emulation)" "$parts"
fi
# Each section measured something: a case of it is there with its figures.
check "native cases measured" grep -qE '\{"p": 2, "topology": "complete:2", "coll": "[a-z_]+", "bytes": [0-9]+, "algorithm": "[a-z_]+", "measured_ns": [0-9.eE+-]+' "$j"
check "emulation cases measured" grep -qE '\{"p": 2, "topology": "[a-z:0-9x]+", "case": "[a-z_]+", "ts_ns": 1000000, "modelled_us": [0-9.eE+-]+, "emulated_us": [0-9.eE+-]+' "$j"
check "the emulation's floor measured" grep -qE '"floor": \[\{"p": 2, "start_late_us": [0-9.]+, "wake_late_us": [0-9.]+, "start_cpus_began_us": [0-9.]+\}' "$j"
check "peers cases measured against OpenMP" grep -qE '\{"case": "[a-z]+", "p": 2, "bytes": [0-9]+, "ours_ns": [0-9.eE+-]+, "openmp_ns": [0-9.eE+-]+, "ratio": [0-9.eE+-]+' "$j"
check "report.md holds the summary table" grep -q '^| native fidelity' "$tmp/out/report.md"
check "the summary prints the shares" grep -qE '^native fidelity: [0-9]+ of [0-9]+ cases within 15%' <<<"$out"
# The native part kept its calibration: priced again from it by the bundle's
# replay_native, every case gets the prediction the run recorded.
replay=$("$b/bench/replay_native" "$tmp/out/calibration-p2.cal" "$tmp/out/native-p2.txt" 2>&1)
if grep -qE '^\{"cases": ([1-9][0-9]*), .*"unchanged": \1, "skipped": 0\}$' <<<"$replay"; then
	ok "replay_native prices the recorded native run as it was recorded"
else
	not_ok "replay_native prices the recorded native run as it was recorded" "$replay"
fi
replay=$("$b/bench/replay_native" "$tmp/out/native-p2.txt" "$tmp/out/native-p2.txt" 2>&1)
rc=$?
if [ $rc -eq 2 ] && grep -q "not a calibration" <<<"$replay"; then
	ok "replay_native refuses a file that is not a calibration: exit 2, says so"
else
	not_ok "replay_native refuses a file that is not a calibration: exit 2, says so" "rc=$rc $replay"
fi

echo "1..$n"
[ $nfail -eq 0 ]
