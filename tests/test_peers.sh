#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tests/test_peers.sh PEER_OURS TOPOCOLL - TAP: the topocoll peer of the
# peers benchmark names, for each collective case, an algorithm of that
# collective (the one AUTO chose), also when the ranks run as fibres, where
# the peer synchronises its chunks with tc_barrier; a variant that names
# its algorithm ("complete:4/shm_tree") ran that one.  A smoke run (budget
# 1 ms per case; 4 cases on 3 topologies, allreduce:8 also with shm_tree),
# and the written-inputs mode (-w) at p = 2: no timing is asserted.
set -u
P=${1:?usage: test_peers.sh peer_ours topocoll}
T=${2:?usage: test_peers.sh peer_ours topocoll}
n=0
nfail=0
if [ ! -x "$T" ]; then
	echo "ok 1 - peer algorithm names # SKIP $T not built"
	echo "1..1"
	exit 0
fi
for ex in fibres threads; do
	out=$(TC_EXEC=$ex "$P" -p 4 -b 1 -c allreduce:8,allreduce:8192,allgather:8,alltoall:8 2>&1)
	lines=$(printf '%s\n' "$out" | grep -c '^R ')
	n=$((n + 1))
	if [ "$lines" -eq 13 ]; then
		echo "ok $n - p = 4 on $ex: $lines result lines"
	else
		nfail=$((nfail + 1))
		echo "not ok $n - p = 4 on $ex: $lines result lines"
		printf '%s\n' "$out" | sed 's/^/# /'
	fi
	while read -r _ kind _ bytes variant _ _ _ note; do
		n=$((n + 1))
		topo=${variant%%/*}
		named=${variant#"$topo"}
		named=${named#/}
		if [ "${note#error:}" != "$note" ]; then
			echo "ok $n - $ex: $kind $bytes on $topo: $note # SKIP no algorithm there"
			continue
		fi
		# The note must be an algorithm of the collective that applies to
		# the topology: topocoll predict accepts it there.
		if [ "$note" != "-" ] && { [ -z "$named" ] || [ "$note" = "$named" ]; } &&
			"$T" predict --topo "$topo" --coll "$kind" --alg "$note" --bytes "$bytes" \
				>/dev/null 2>&1; then
			echo "ok $n - $ex: $kind $bytes on $topo names its algorithm ($note)"
		else
			nfail=$((nfail + 1))
			echo "not ok $n - $ex: $kind $bytes on $variant names '$note', not an algorithm of $kind there"
		fi
	done < <(printf '%s\n' "$out" | grep '^R ')
done
# -w (written inputs): every rank stores into its input before each call; the
# results are still those of the unchanged inputs, checked by the peer (an
# error note otherwise).
out=$("$P" -p 2 -b 1 -w -c bcast:65536,allreduce:524288,allgather:65536,alltoall:4096 2>&1)
n=$((n + 1))
if [ "$(printf '%s\n' "$out" | grep -c '^R ')" -eq 8 ] && ! printf '%s\n' "$out" | grep -q 'error:'; then
	echo "ok $n - written inputs (-w): 8 result lines, every result right"
else
	nfail=$((nfail + 1))
	echo "not ok $n - written inputs (-w)"
	printf '%s\n' "$out" | sed 's/^/# /'
fi
echo "1..$n"
[ "$nfail" -eq 0 ]
