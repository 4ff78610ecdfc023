/* SPDX-License-Identifier: MIT */
/*
 * lib/topo/topo.c - construction of a topology, its neighbour lists (CSR) and
 * the simple accessors of topocoll/topo.h.
 *
 * Neighbour lists are stored as compressed sparse rows: off[0..p] and adj[],
 * the neighbours of u being adj[off[u] .. off[u+1]), sorted ascending, without
 * duplicates or self-loops.  Memory is (p + 1) offsets plus one int per arc,
 * so only the complete graph is quadratic in p.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error_detail.h"
#include "topo/topo_internal.h"
#include "topocoll/error.h"

static const char *const tc__kind_names[] = {
        [TC_TOPO_COMPLETE] = "complete", [TC_TOPO_RING] = "ring",
        [TC_TOPO_CHAIN] = "chain",       [TC_TOPO_MESH] = "mesh",
        [TC_TOPO_TORUS] = "torus",       [TC_TOPO_HYPERCUBE] = "hypercube",
        [TC_TOPO_STAR] = "star",         [TC_TOPO_TREE] = "tree",
};

const char *tc_topo_kind_name(enum tc_topo_kind kind)
{
	if ((unsigned)kind >= sizeof tc__kind_names / sizeof tc__kind_names[0])
		return "unknown";
	return tc__kind_names[kind];
}

/* Sorts a short list in place and drops duplicates; returns the new length. */
static int tc__sort_unique(int *a, int n)
{
	for (int i = 1; i < n; i++) {
		int x = a[i], j = i;
		while (j > 0 && a[j - 1] > x) {
			a[j] = a[j - 1];
			j--;
		}
		a[j] = x;
	}
	int m = 0;
	for (int i = 0; i < n; i++)
		if (m == 0 || a[m - 1] != a[i])
			a[m++] = a[i];
	return m;
}

/* An upper bound on the degree of any node, used to size the scratch list. */
static int tc__degree_bound(const struct tc_topo *t)
{
	switch (t->kind) {
	case TC_TOPO_COMPLETE:
	case TC_TOPO_STAR:
		return t->p - 1;
	case TC_TOPO_TREE:
		return (t->arity < t->p - 1 ? t->arity : t->p - 1) + 1;
	case TC_TOPO_HYPERCUBE:
		return t->param;
	case TC_TOPO_RING:
	case TC_TOPO_CHAIN:
		return 2;
	case TC_TOPO_MESH:
	case TC_TOPO_TORUS:
		return 2 * t->ndims;
	}
	return 0;
}

/* Writes the neighbours of u, sorted and unique, into out (room for
 * tc__degree_bound() entries, which may exceed the degree); returns their
 * number. */
static int tc__gen_neighbors(const struct tc_topo *t, int u, int *out)
{
	const int p = t->p;
	int n = 0;

	switch (t->kind) {
	case TC_TOPO_COMPLETE:
		for (int v = 0; v < p; v++)
			if (v != u)
				out[n++] = v;
		return n;
	case TC_TOPO_STAR:
		if (u == 0) {
			for (int v = 1; v < p; v++)
				out[n++] = v;
		} else {
			out[n++] = 0;
		}
		return n;
	case TC_TOPO_TREE: {
		/* Parent (u-1)/K < u < children K*u+1 .. K*u+K: already sorted. */
		long long k = t->arity;
		if (u > 0)
			out[n++] = (int)((u - 1) / k);
		for (long long c = k * u + 1; c <= k * u + k && c < p; c++)
			out[n++] = (int)c;
		return n;
	}
	case TC_TOPO_HYPERCUBE:
		/* u - 2^k for the set bits, largest k first, then u + 2^k for the
		 * clear bits, smallest k first: ascending without sorting. */
		for (int k = t->param - 1; k >= 0; k--)
			if (u & (1 << k))
				out[n++] = u ^ (1 << k);
		for (int k = 0; k < t->param; k++)
			if (!(u & (1 << k)))
				out[n++] = u ^ (1 << k);
		return n;
	case TC_TOPO_CHAIN:
		if (u > 0)
			out[n++] = u - 1;
		if (u < p - 1)
			out[n++] = u + 1;
		return n;
	case TC_TOPO_RING:
		if (p > 1) {
			out[n++] = (u + p - 1) % p;
			out[n++] = (u + 1) % p;
		}
		return tc__sort_unique(out, n);
	case TC_TOPO_MESH:
	case TC_TOPO_TORUS:
		for (int i = 0; i < t->ndims; i++) {
			int d = t->dims[i], s = t->stride[i];
			int c = (u / s) % d;
			if (d == 1)
				continue;
			if (c > 0)
				out[n++] = u - s;
			else if (t->kind == TC_TOPO_TORUS)
				out[n++] = u + (d - 1) * s;
			if (c < d - 1)
				out[n++] = u + s;
			else if (t->kind == TC_TOPO_TORUS)
				out[n++] = u - (d - 1) * s;
		}
		return tc__sort_unique(out, n);
	}
	return 0;
}

/*
 * Builds off[] and adj[] in one pass, adj sized from the closed-form link
 * count of tc__topo_compute_props().  Every list goes through the scratch
 * list (a 2-node ring or a size-2 torus dimension yields a duplicate until
 * tc__sort_unique() drops it), and the copy is bounds-checked, so a wrong
 * closed form could only fail the creation, never overrun adj.
 */
static int tc__build_adjacency(struct tc_topo *t)
{
	const int p = t->p;
	const size_t arcs = (size_t)t->props.arcs;
	int bound = tc__degree_bound(t);
	int *scratch = malloc(sizeof(int) * (size_t)(bound > 0 ? bound : 1));
	int err = TC_ENOMEM;

	t->off = malloc(sizeof(size_t) * ((size_t)p + 1));
	t->adj = malloc(sizeof(int) * (arcs > 0 ? arcs : 1));
	if (!scratch || !t->off || !t->adj)
		goto out;
	t->off[0] = 0;
	for (int u = 0; u < p; u++) {
		size_t n = (size_t)tc__gen_neighbors(t, u, scratch);
		if (n > arcs - t->off[u]) {
			err = TC_EOVERFLOW; /* the closed form is wrong: a bug */
			goto out;
		}
		memcpy(t->adj + t->off[u], scratch, sizeof(int) * n);
		t->off[u + 1] = t->off[u] + n;
	}
	err = t->off[p] == arcs ? 0 : TC_EOVERFLOW;
out:
	free(scratch);
	return err;
}

/*
 * Validates kind and parameters and fills kind, p, ndims, dims, stride, param
 * and arity.  Returns 0 or TC_ETOPO.
 */
static int tc__topo_setup(struct tc_topo *t, enum tc_topo_kind kind, int ndims, const int *dims, int arity)
{
	t->kind = kind;
	switch (kind) {
	case TC_TOPO_MESH:
	case TC_TOPO_TORUS: {
		long long prod = 1;
		if (ndims < 1 || ndims > TC_TOPO_MAX_DIMS)
			return TC_ETOPO;
		for (int i = 0; i < ndims; i++) {
			if (dims[i] < 1 || dims[i] > TC_TOPO_MAX_NODES)
				return TC_ETOPO;
			prod *= dims[i];
			if (prod > TC_TOPO_MAX_NODES)
				return TC_ETOPO;
			t->dims[i] = dims[i];
		}
		t->ndims = ndims;
		t->p = (int)prod;
		t->param = t->p;
		for (int i = ndims - 1, s = 1; i >= 0; i--) {
			t->stride[i] = s;
			s *= dims[i];
		}
		return 0;
	}
	case TC_TOPO_HYPERCUBE:
		if (ndims != 1 || dims[0] < 0 || dims[0] > 30 || (1L << dims[0]) > TC_TOPO_MAX_NODES)
			return TC_ETOPO;
		t->param = dims[0];
		t->p = 1 << dims[0];
		return 0;
	case TC_TOPO_TREE:
		if (arity < 1)
			return TC_ETOPO;
		t->arity = arity;
		/* fall through */
	case TC_TOPO_COMPLETE:
	case TC_TOPO_RING:
	case TC_TOPO_CHAIN:
	case TC_TOPO_STAR:
		if (ndims != 1 || dims[0] < 1 || dims[0] > TC_TOPO_MAX_NODES)
			return TC_ETOPO;
		t->param = t->p = dims[0];
		if (kind == TC_TOPO_RING || kind == TC_TOPO_CHAIN) {
			t->ndims = 1;
			t->dims[0] = t->p;
			t->stride[0] = 1;
		}
		return 0;
	}
	return TC_ETOPO;
}

int tc_topo_create(enum tc_topo_kind kind, int ndims, const int *dims, int arity, struct tc_topo **out)
{
	tc__clear_detail();
	struct tc_topo *t;
	int err;

	if (!out || !dims)
		return TC_EINVAL;
	t = calloc(1, sizeof *t);
	if (!t)
		return TC_ENOMEM;
	err = tc__topo_setup(t, kind, ndims, dims, arity);
	if (err)
		goto fail;
	/* The complete graph is refused before anything quadratic is done. */
	if (kind == TC_TOPO_COMPLETE && (long)t->p * (t->p - 1) > TC__TOPO_MAX_ARCS) {
		err = TC_ENOMEM;
		goto fail;
	}
	err = tc__topo_compute_props(t);
	if (err)
		goto fail;
	err = tc__build_adjacency(t);
	if (err)
		goto fail;
	*out = t;
	return 0;
fail:
	tc_topo_destroy(t);
	return err;
}

void tc_topo_destroy(struct tc_topo *t)
{
	if (!t)
		return;
	free(t->off);
	free(t->adj);
	free(t->wt);
	free(t);
}

int tc_topo_spec(const struct tc_topo *t, char *buf, size_t len)
{
	tc__clear_detail();
	char tmp[160];
	int n;

	if (!t || (!buf && len > 0))
		return TC_EINVAL;
	n = snprintf(tmp, sizeof tmp, "%s:", tc_topo_kind_name(t->kind));
	switch (t->kind) {
	case TC_TOPO_MESH:
	case TC_TOPO_TORUS:
		for (int i = 0; i < t->ndims; i++)
			n += snprintf(tmp + n, sizeof tmp - (size_t)n, "%s%d", i ? "x" : "", t->dims[i]);
		break;
	case TC_TOPO_TREE:
		n += snprintf(tmp + n, sizeof tmp - (size_t)n, "%d:%d", t->arity, t->p);
		break;
	default:
		n += snprintf(tmp + n, sizeof tmp - (size_t)n, "%d", t->param);
		break;
	}
	if (len > 0)
		snprintf(buf, len, "%s", tmp);
	return n;
}

enum tc_topo_kind tc_topo_kind(const struct tc_topo *t)
{
	return t->kind;
}

int tc_topo_nodes(const struct tc_topo *t)
{
	tc__clear_detail();
	return t ? t->p : TC_EINVAL;
}

int tc_topo_dims(const struct tc_topo *t, int *dims)
{
	tc__clear_detail();
	if (!t)
		return TC_EINVAL;
	switch (t->kind) {
	case TC_TOPO_MESH:
	case TC_TOPO_TORUS:
	case TC_TOPO_RING:
	case TC_TOPO_CHAIN:
		if (dims)
			memcpy(dims, t->dims, sizeof(int) * (size_t)t->ndims);
		return t->ndims;
	case TC_TOPO_HYPERCUBE:
		if (dims)
			for (int i = 0; i < t->param; i++)
				dims[i] = 2;
		return t->param;
	default:
		return 0;
	}
}

int tc_topo_arity(const struct tc_topo *t)
{
	tc__clear_detail();
	if (!t)
		return TC_EINVAL;
	return t->kind == TC_TOPO_TREE ? t->arity : 0;
}

const struct tc_topo_props *tc_topo_props(const struct tc_topo *t)
{
	return t ? &t->props : NULL;
}

int tc_topo_neighbors(const struct tc_topo *t, int u, const int **nbrs)
{
	tc__clear_detail();
	if (!t)
		return TC_EINVAL;
	if (u < 0 || u >= t->p)
		return TC_ERANK;
	if (nbrs)
		*nbrs = t->adj + t->off[u];
	return (int)(t->off[u + 1] - t->off[u]);
}

int tc_topo_neighbor_index(const struct tc_topo *t, int u, int v)
{
	if (!t || u < 0 || u >= t->p || v < 0 || v >= t->p)
		return -1;
	const int *a = t->adj + t->off[u];
	int lo = 0, hi = (int)(t->off[u + 1] - t->off[u]);
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (a[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < (int)(t->off[u + 1] - t->off[u]) && a[lo] == v ? lo : -1;
}
