# SPDX-License-Identifier: MIT
# bench/manycore_report.awk - the many-core report's aggregator (POSIX awk:
# mawk, gawk and busybox run it).  bench/manycore.sh calls it with
#   -v json=FILE -v md=FILE -v cpus= -v model= -v kernel= -v load= -v quick=
#   -v seconds= -v budget= -v date=
# and the files: status.txt (a line per part: name, status, seconds) first,
# then native-pP.txt (model_fidelity --native: its last line is a JSON
# object with a "cases" array), emulation-pP.txt (model_fidelity --p P --ts
# LIST: the table's rows, each level closed by a "# p=P: t_s = X ns" line)
# and peers.txt (the peers driver: a JSON line per case and peer).
# Writes report.json and report.md, prints the summary; exits 1 when a part
# failed (a timeout is not a failure: the report says which parts ran out).

function jval(s, key,   i, r) {
	i = index(s, "\"" key "\": ")
	if (!i)
		return ""
	r = substr(s, i + length(key) + 4)
	if (substr(r, 1, 1) == "\"") {
		r = substr(r, 2)
		return substr(r, 1, index(r, "\"") - 1)
	}
	if (match(r, /^[^,}\]]*/))
		return substr(r, 1, RLENGTH)
	return ""
}
function isnum(v) { return v ~ /^-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$/ }
function num(v) { return isnum(v) ? v : "null" }
function str(v) { gsub(/["\\]/, "_", v); return "\"" v "\"" }
function absv(x) { return x < 0 ? -x : x }
function pct(a, b) { return b > 0 ? sprintf("%.1f", 100 * a / b) : "null" }
function share(a, b) { return b > 0 ? sprintf("%.4f", a / b) : "null" }
function mdpct(a, b) { return b > 0 ? sprintf("%d (%.0f%%)", a, 100 * a / b) : "-" }
function ns(v) {
	if (!isnum(v))
		return "-"
	v += 0
	if (v >= 1e6) return sprintf("%.2f ms", v / 1e6)
	if (v >= 1e3) return sprintf("%.2f us", v / 1e3)
	return sprintf("%.0f ns", v)
}
function bytes_h(b) {
	b += 0
	if (b >= 1048576 && b % 1048576 == 0) return (b / 1048576) " MiB"
	if (b >= 1024 && b % 1024 == 0) return (b / 1024) " KiB"
	return b " B"
}
# Adds one emulated row (its t_s known) to the tables.
function emu_add(p, topo, kase, mod, emu, rel, ts,   k, a) {
	ne++
	e_p[ne] = p; e_topo[ne] = topo; e_case[ne] = kase; e_ts[ne] = ts
	e_mod[ne] = mod; e_emu[ne] = emu; e_rel[ne] = rel
	k = p SUBSEP ts
	if (!(k in et_n)) { et_keys[++net] = k; et_n[k] = 0; et_worst[k] = 0 }
	et_n[k]++
	if (!isnum(rel)) { et_worst[k] = "failed"; return }
	a = absv(rel)
	if (et_worst[k] != "failed" && a > et_worst[k]) et_worst[k] = a
	if (a <= 0.05) { et_5[k]++; e5++ }
	if (a <= 0.10) { et_10[k]++; e10++ }
	if (a <= 0.15) { et_15[k]++; e15++ }
	if (a <= 0.25) { et_25[k]++; e25++ }
}

BEGIN { nparts = 0; nn = 0; ne = 0; np = 0; net = 0; nnt = 0; failed = 0; native_failed = 0 }

FILENAME ~ /status\.txt$/ {
	nparts++
	part[nparts] = $1; pstat[nparts] = $2; psec[nparts] = $3
	if ($2 ~ /^failed/) failed = 1
	next
}

FILENAME ~ /native-p[0-9]+\.txt$/ && /^\{"cases": \[/ {
	s = $0
	i = index(s, "[")
	j = index(s, "], \"sweeps\"")
	body = substr(s, i + 1, j - i - 1)
	native_skipped += jval(substr(s, j), "skipped")
	gsub(/\}, \{/, "}\n{", body)
	m = split(body, objs, "\n")
	for (k = 1; k <= m; k++) {
		o = objs[k]
		if (o == "")
			continue
		nn++
		n_p[nn] = jval(o, "p"); n_topo[nn] = jval(o, "topology"); n_coll[nn] = jval(o, "coll")
		n_bytes[nn] = jval(o, "bytes"); n_alg[nn] = jval(o, "algorithm")
		n_meas[nn] = jval(o, "measured_ns"); n_pred[nn] = jval(o, "predicted_ns")
		n_rel[nn] = jval(o, "rel_err")
		n_frel[nn] = jval(o, "flat_rel_err"); n_flat[nn] = jval(o, "flat_predicted_ns")
		n_err[nn] = jval(o, "error")
		if (n_err[nn] != "") native_failed++
		key = n_p[nn] SUBSEP n_topo[nn]
		if (!(key in nt_n)) { nt_keys[++nnt] = key; nt_n[key] = 0; nt_worst[key] = 0 }
		nt_n[key]++
		if (isnum(n_rel[nn])) {
			a = absv(n_rel[nn])
			if (a > nt_worst[key]) nt_worst[key] = a
			if (a <= 0.15) { nt_15[key]++; n15++ }
			if (a <= 0.20) { nt_20[key]++; n20++ }
			if (a <= 0.25) { nt_25[key]++; n25++ }
		}
		# The prediction without the concurrency charges (the pair's model).
		if (isnum(n_frel[nn]) && absv(n_frel[nn]) <= 0.20) { nt_f20[key]++; nf20++ }
	}
	next
}

FILENAME ~ /emulation-p[0-9]+\.txt$/ {
	if ($0 ~ /^# p=[0-9]+: t_s = [0-9]+ ns/) {
		ts = $0
		sub(/^.*t_s = /, "", ts)
		sub(/ ns.*$/, "", ts)
		for (k = 1; k <= nbuf; k++) {
			split(buf[k], f, " ")
			emu_add(f[1], f[2], f[3], f[4], f[5], f[6], ts)
		}
		nbuf = 0
		next
	}
	# The floor's diagnostics (ring:p): "P ring:P start|wake MODEL EMULATED
	# (diagnostic: lateness X us)", once per p.
	if (($3 == "start" || $3 == "wake") && $0 ~ /diagnostic: lateness/) {
		late = $0
		sub(/^.*lateness /, "", late)
		sub(/ us.*$/, "", late)
		if (!($1 in fl_seen)) { fl_seen[$1] = 1; fl_p[++nfl] = $1 }
		fl_late[$1, $3] = late
		# start: "...; every CPU ran its first rank by B us after the epoch"
		if ($3 == "start" && $0 ~ /first rank by /) {
			began = $0
			sub(/^.*first rank by /, "", began)
			sub(/ us.*$/, "", began)
			fl_began[$1] = began
		}
		next
	}
	if ($0 !~ /^[0-9]+ +[a-z]/ || $0 ~ /diagnostic|skipped/)
		next
	if ($4 == "failed:") {
		buf[++nbuf] = $1 " " $2 " " $3 " - - failed"
		next
	}
	rel = $6
	sub(/%$/, "", rel)
	sub(/^\+/, "", rel)
	buf[++nbuf] = $1 " " $2 " " $3 " " $4 " " $5 " " (isnum(rel) ? rel / 100 : "failed")
	next
}

FILENAME ~ /peers\.txt$/ && /^\{"case": / && index($0, "\"peer\": \"openmp\"") {
	np++
	r_case[np] = jval($0, "case"); r_p[np] = jval($0, "p"); r_bytes[np] = jval($0, "bytes")
	r_ours[np] = jval($0, "ours_ns"); r_peer[np] = jval($0, "peer_ns")
	r_topo[np] = jval($0, "topology"); r_var[np] = jval($0, "peer_variant")
	r_ratio[np] = jval($0, "ratio")
	if (!isnum(r_ratio[np]) && isnum(r_ours[np]) && isnum(r_peer[np]) && r_peer[np] > 0)
		r_ratio[np] = sprintf("%.4f", r_ours[np] / r_peer[np])
	if (isnum(r_ratio[np])) {
		pmeas++
		if (r_ratio[np] < 1) pfast++
	}
	next
}

END {
	# ---- report.json
	printf "{\"machine\": {\"cpus\": %s, \"model\": %s, \"kernel\": %s, \"loadavg\": %s}", \
		num(cpus), str(model), str(kernel), str(load) > json
	printf ", \"date\": %s, \"quick\": %s, \"seconds\": %s, \"budget_s\": %s", str(date), \
		quick == 1 ? "true" : "false", num(seconds), num(budget) > json
	printf ", \"parts\": [" > json
	for (k = 1; k <= nparts; k++)
		printf "%s{\"name\": %s, \"status\": %s, \"seconds\": %s}", (k > 1 ? ", " : ""), \
			str(part[k]), str(pstat[k]), num(psec[k]) > json
	printf "]" > json

	printf ", \"peers\": {\"peer\": \"openmp\", \"cases\": [" > json
	for (k = 1; k <= np; k++)
		printf "%s{\"case\": %s, \"p\": %s, \"bytes\": %s, \"ours_ns\": %s, \"openmp_ns\": %s, " \
			"\"ratio\": %s, \"topology\": %s, \"openmp_variant\": %s}", (k > 1 ? ", " : ""), \
			str(r_case[k]), num(r_p[k]), num(r_bytes[k]), num(r_ours[k]), num(r_peer[k]), \
			num(r_ratio[k]), str(r_topo[k]), str(r_var[k]) > json
	printf "], \"measured\": %d, \"of\": %d, \"faster\": %d, \"share_faster\": %s}", \
		pmeas, np, pfast, share(pfast, pmeas) > json

	printf ", \"native\": {\"cases\": [" > json
	for (k = 1; k <= nn; k++)
		printf "%s{\"p\": %s, \"topology\": %s, \"coll\": %s, \"bytes\": %s, \"algorithm\": %s, " \
			"\"measured_ns\": %s, \"predicted_ns\": %s, \"rel_err\": %s, " \
			"\"flat_predicted_ns\": %s, \"flat_rel_err\": %s%s}", (k > 1 ? ", " : ""), \
			num(n_p[k]), str(n_topo[k]), str(n_coll[k]), num(n_bytes[k]), str(n_alg[k]), \
			num(n_meas[k]), num(n_pred[k]), num(n_rel[k]), num(n_flat[k]), num(n_frel[k]), \
			n_err[k] == "" ? "" : ", \"error\": " str(n_err[k]) > json
	printf "], \"by_team\": [" > json
	for (k = 1; k <= nnt; k++) {
		split(nt_keys[k], kk, SUBSEP)
		printf "%s{\"p\": %s, \"topology\": %s, \"of\": %d, \"within_15pct\": %d, " \
			"\"within_20pct\": %d, \"within_25pct\": %d, \"flat_within_20pct\": %d, " \
			"\"worst_rel_error\": %.4f}", (k > 1 ? ", " : ""), num(kk[1]), \
			str(kk[2]), nt_n[nt_keys[k]], nt_15[nt_keys[k]], nt_20[nt_keys[k]], nt_25[nt_keys[k]], \
			nt_f20[nt_keys[k]], nt_worst[nt_keys[k]] > json
	}
	printf "], \"of\": %d, \"skipped\": %d, \"failed\": %d, \"within_15pct\": %d, " \
		"\"within_25pct\": %d, \"share_15pct\": %s, \"share_25pct\": %s, \"within_20pct\": %d, " \
		"\"share_20pct\": %s, \"flat_within_20pct\": %d, \"flat_share_20pct\": %s}", nn, \
		native_skipped, native_failed, n15, n25, \
		share(n15, nn), share(n25, nn), n20, share(n20, nn), nf20, share(nf20, nn) > json

	printf ", \"emulation\": {\"cases\": [" > json
	for (k = 1; k <= ne; k++)
		printf "%s{\"p\": %s, \"topology\": %s, \"case\": %s, \"ts_ns\": %s, \"modelled_us\": %s, " \
			"\"emulated_us\": %s, \"rel_err\": %s}", (k > 1 ? ", " : ""), num(e_p[k]), \
			str(e_topo[k]), str(e_case[k]), num(e_ts[k]), num(e_mod[k]), num(e_emu[k]), \
			num(e_rel[k]) > json
	printf "], \"by_p_ts\": [" > json
	for (k = 1; k <= net; k++) {
		key = et_keys[k]
		split(key, kk, SUBSEP)
		printf "%s{\"p\": %s, \"ts_ns\": %s, \"of\": %d, \"within_5pct\": %d, \"within_10pct\": %d, " \
			"\"within_15pct\": %d, \"within_25pct\": %d, \"worst_rel_error\": %s}", \
			(k > 1 ? ", " : ""), num(kk[1]), num(kk[2]), et_n[key], et_5[key], et_10[key], \
			et_15[key], et_25[key], et_worst[key] == "failed" ? "null" : sprintf("%.4f", et_worst[key]) > json
	}
	printf "], \"floor\": [" > json
	for (k = 1; k <= nfl; k++)
		printf "%s{\"p\": %s, \"start_late_us\": %s, \"wake_late_us\": %s, \"start_cpus_began_us\": %s}", \
			(k > 1 ? ", " : ""), num(fl_p[k]), num(fl_late[fl_p[k], "start"]), \
			num(fl_late[fl_p[k], "wake"]), num(fl_began[fl_p[k]]) > json
	printf "], \"of\": %d, \"within_5pct\": %d, \"within_10pct\": %d, \"within_15pct\": %d, " \
		"\"within_25pct\": %d, \"share_15pct\": %s, \"share_25pct\": %s}", ne, e5, e10, e15, e25, \
		share(e15, ne), share(e25, ne) > json
	printf ", \"summary\": {\"native_share_15pct\": %s, \"native_share_25pct\": %s, " \
		"\"emulation_share_15pct\": %s, \"emulation_share_25pct\": %s, " \
		"\"peers_share_faster_than_openmp\": %s}}\n", share(n15, nn), share(n25, nn), \
		share(e15, ne), share(e25, ne), share(pfast, pmeas) > json
	close(json)

	# ---- report.md
	print "# topocoll many-core report" > md
	print "" > md
	printf "%s CPUs, %s, Linux %s, load %s; %s; %s s of a %s s budget%s.\n", cpus, \
		model == "" ? "unknown CPU" : model, kernel, load, date, seconds, budget, \
		quick == 1 ? " (--quick: a check that every part runs, not a measurement)" : "" > md
	print "" > md
	print "| part | cases | within 15% | within 25% | note |" > md
	print "|---|---:|---:|---:|---|" > md
	printf "| native fidelity (measured vs calibrated prediction) | %d | %s | %s | within 20%%: %s with the concurrency charges, %s without; %d failed (counted outside); %d skipped (buffers above 16 MiB) |\n", \
		nn, mdpct(n15, nn), mdpct(n25, nn), mdpct(n20, nn), mdpct(nf20, nn), native_failed, \
		native_skipped > md
	printf "| emulation fidelity (emulated vs modelled) | %d | %s | %s | within 5%%: %s, within 10%%: %s |\n", \
		ne, mdpct(e15, ne), mdpct(e25, ne), mdpct(e5, ne), mdpct(e10, ne) > md
	printf "| peers: ours faster than OpenMP | %d | | | %s faster (ratio < 1) |\n", pmeas, \
		mdpct(pfast, pmeas) > md
	print "" > md
	printf "Parts: " > md
	for (k = 1; k <= nparts; k++)
		printf "%s%s %s (%s s)", (k > 1 ? ", " : ""), part[k], pstat[k], psec[k] > md
	print "." > md

	print "\n## Peers against OpenMP (ratio = ours / OpenMP's best variant, < 1: ours faster)\n" > md
	print "| case | bytes | p | ours | OpenMP | ratio | ours on | OpenMP variant |" > md
	print "|---|---:|---:|---:|---:|---:|---|---|" > md
	for (k = 1; k <= np; k++)
		printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r_case[k], bytes_h(r_bytes[k]), \
			r_p[k], ns(r_ours[k]), ns(r_peer[k]), \
			isnum(r_ratio[k]) ? (r_ratio[k] >= 1 ? sprintf("**%.2f**", r_ratio[k]) : \
			sprintf("%.2f", r_ratio[k])) : "-", r_topo[k], r_var[k] > md

	print "\n## Native fidelity by team\n" > md
	print "| p | topology | cases | within 15% | within 20% | within 25% | worst | within 20% without the concurrency charges |" > md
	print "|---:|---|---:|---:|---:|---:|---:|---:|" > md
	for (k = 1; k <= nnt; k++) {
		key = nt_keys[k]
		split(key, kk, SUBSEP)
		printf "| %s | %s | %d | %s | %s | %s | %+.1f%% | %s |\n", kk[1], kk[2], nt_n[key], \
			mdpct(nt_15[key], nt_n[key]), mdpct(nt_20[key], nt_n[key]), \
			mdpct(nt_25[key], nt_n[key]), 100 * nt_worst[key], mdpct(nt_f20[key], nt_n[key]) > md
	}
	print "\n## Native cases (median per call of back-to-back calls)\n" > md
	print "| p | topology | collective | bytes | algorithm | measured | predicted | error | error without the concurrency charges |" > md
	print "|---:|---|---|---:|---|---:|---:|---:|---:|" > md
	for (k = 1; k <= nn; k++)
		printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", n_p[k], n_topo[k], n_coll[k], \
			bytes_h(n_bytes[k]), n_alg[k], ns(n_meas[k]), ns(n_pred[k]), \
			isnum(n_rel[k]) ? sprintf("%+.1f%%", 100 * n_rel[k]) : "failed: " n_err[k], \
			isnum(n_frel[k]) ? sprintf("%+.1f%%", 100 * n_frel[k]) : "-" > md

	print "\n## Emulation fidelity by p and t_s\n" > md
	print "| p | t_s | cases | within 5% | within 10% | within 15% | within 25% | worst |" > md
	print "|---:|---:|---:|---:|---:|---:|---:|---:|" > md
	for (k = 1; k <= net; k++) {
		key = et_keys[k]
		split(key, kk, SUBSEP)
		printf "| %s | %s | %d | %s | %s | %s | %s | %s |\n", kk[1], ns(kk[2]), et_n[key], \
			mdpct(et_5[key], et_n[key]), mdpct(et_10[key], et_n[key]), \
			mdpct(et_15[key], et_n[key]), mdpct(et_25[key], et_n[key]), \
			et_worst[key] == "failed" ? "a run failed" : sprintf("%+.1f%%", 100 * et_worst[key]) > md
	}
	if (nfl) {
		print "\n## The emulation's floor\n" > md
		print "On ring:p, how late the last rank returns: `start`, every rank returns at once (the run's start after its epoch); `wake`, every rank sleeps to one deadline, then returns. A case's error at a small t_s is about this much. `CPUs began`: by when every CPU had run its first rank at the start; the rest of `start` is the ranks returning at one moment.\n" > md
		print "| p | start (us late) | CPUs began (us) | wake (us late) |" > md
		print "|---:|---:|---:|---:|" > md
		for (k = 1; k <= nfl; k++)
			printf "| %s | %s | %s | %s |\n", fl_p[k], fl_late[fl_p[k], "start"], \
				(fl_p[k] in fl_began) ? fl_began[fl_p[k]] : "-", fl_late[fl_p[k], "wake"] > md
	}
	print "\n## Emulation cases\n" > md
	print "| p | topology | case | t_s | modelled (us) | emulated (us) | error |" > md
	print "|---:|---|---|---:|---:|---:|---:|" > md
	for (k = 1; k <= ne; k++)
		printf "| %s | %s | %s | %s | %s | %s | %s |\n", e_p[k], e_topo[k], e_case[k], ns(e_ts[k]), \
			e_mod[k], e_emu[k], isnum(e_rel[k]) ? sprintf("%+.1f%%", 100 * e_rel[k]) : "failed" > md
	close(md)

	# ---- the summary
	print "# summary"
	for (k = 1; k <= nparts; k++)
		printf "#   %-16s %-10s %s s\n", part[k], pstat[k], psec[k]
	printf "native fidelity: %d of %d cases within 15%% (%s%%), %d within 25%% (%s%%); %d failed, %d skipped\n", \
		n15, nn, pct(n15, nn), n25, pct(n25, nn), native_failed, native_skipped
	printf "native fidelity within 20%%: %d of %d (%s%%) with the concurrency charges, %d (%s%%) without\n", \
		n20, nn, pct(n20, nn), nf20, pct(nf20, nn)
	for (k = 1; k <= nnt; k++) {
		key = nt_keys[k]
		split(key, kk, SUBSEP)
		printf "  p=%-4s %-14s %d of %d within 15%%, %d within 20%% (%d without the concurrency charges), %d within 25%%, worst %+.1f%%\n", kk[1], \
			kk[2], nt_15[key], nt_n[key], nt_20[key], nt_f20[key], nt_25[key], 100 * nt_worst[key]
	}
	printf "emulation fidelity: %d of %d cases within 15%% (%s%%), %d within 25%% (%s%%)\n", \
		e15, ne, pct(e15, ne), e25, pct(e25, ne)
	for (k = 1; k <= net; k++) {
		key = et_keys[k]
		split(key, kk, SUBSEP)
		printf "  p=%-4s t_s %-9s %d of %d within 5%%, %d within 10%%, worst %s\n", kk[1], \
			ns(kk[2]), et_5[key], et_n[key], et_10[key], \
			et_worst[key] == "failed" ? "(a run failed)" : sprintf("%+.1f%%", 100 * et_worst[key])
	}
	for (k = 1; k <= nfl; k++)
		printf "  p=%-4s start %s us late (every CPU began by %s us), wake %s us late (ring:p, the emulation's floor)\n", \
			fl_p[k], fl_late[fl_p[k], "start"], (fl_p[k] in fl_began) ? fl_began[fl_p[k]] : "-", \
			fl_late[fl_p[k], "wake"]
	printf "peers: ours faster than OpenMP in %d of %d measured cases (%s%%)\n", pfast, pmeas, \
		pct(pfast, pmeas)
	for (k = 1; k <= np; k++)
		if (isnum(r_ratio[k]) && r_ratio[k] >= 1)
			printf "  behind: %s %s p=%s ratio %.2f\n", r_case[k], bytes_h(r_bytes[k]), r_p[k], \
				r_ratio[k]
	exit failed
}
