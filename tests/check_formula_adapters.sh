#!/bin/sh
# SPDX-License-Identifier: MIT
# Every registry formula adapter (a tc__f_* function of lib/coll) only tests
# whether the closed form applies and calls one closed form of
# include/topocoll/cost.h (lib/model/cost/), so its body stays short: this
# fails, naming each one, when a body has more than MAX lines.
# Usage: check_formula_adapters.sh LIB_COLL_DIR [MAX]
dir=${1:?usage: check_formula_adapters.sh LIB_COLL_DIR [MAX]}
max=${2:-8}
files=$(find "$dir" -name '*.c' | sort)
[ -n "$files" ] || { echo "no C files under $dir" >&2; exit 1; }
# shellcheck disable=SC2086
awk -v max="$max" '
	# a definition: starts at column 0, names tc__f_..., is not a prototype
	/^[a-z].*[^a-z0-9_]tc__f_[a-z0-9_]+\(/ && !/;[ \t]*$/ {
		name = $0; sub(/\(.*/, "", name); sub(/.*[^a-z0-9_]/, "", name)
		fn = name; where = FILENAME ":" FNR; inbody = 0; n = 0; seen++
		next
	}
	fn != "" && !inbody && /^\{/ { inbody = 1; next }
	fn != "" && inbody && /^\}/ {
		if (n > max) {
			printf "%s: %s has %d lines (at most %d)\n", where, fn, n, max
			bad++
		}
		fn = ""; inbody = 0
		next
	}
	fn != "" && inbody { n++ }
	END {
		if (seen == 0) { print "no tc__f_ function found"; exit 1 }
		printf "%d tc__f_ functions, %d longer than %d lines\n", seen, bad, max
		exit bad ? 1 : 0
	}' $files
