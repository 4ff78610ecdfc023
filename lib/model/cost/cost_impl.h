/* SPDX-License-Identifier: MIT */
/*
 * lib/model/cost/cost_impl.h - what the closed forms of lib/model/cost/
 * share: argument checks and the cost of one neighbour message.
 *
 * Every neighbour message costs msg(1, b) = start(md) + b t_w, where
 * start(md) = t_s under store-and-forward and t_s + t_h under cut-through, so
 * the sums of neighbour messages are written in closed form with start(md);
 * routed messages go through tc_cost_p2p().  Pure functions: no state, no
 * allocation.
 */
#ifndef TC_MODEL_COST_IMPL_H
#define TC_MODEL_COST_IMPL_H

#include <math.h>

#include "topocoll/cost.h"

static inline int tc__cost_ok_m(double m)
{
	return m >= 0.0; /* false for NaN */
}

static inline int tc__cost_ok_args(const struct tc_model *md, long p, double m)
{
	return md != NULL && p >= 1 && tc__cost_ok_m(m);
}

static inline int tc__cost_is_ct(const struct tc_model *md)
{
	return md->switching == TC_SWITCH_CT;
}

/* Fixed part of one neighbour message. */
static inline double tc__cost_start(const struct tc_model *md)
{
	return md->ts_ns + (tc__cost_is_ct(md) ? md->th_ns : 0.0);
}

/* msg(1, b). */
static inline double tc__cost_nb(const struct tc_model *md, double b)
{
	return tc__cost_start(md) + b * md->tw_ns;
}

static inline int tc__cost_is_pow2(long p)
{
	return p >= 1 && (p & (p - 1)) == 0;
}

/* log2 p for p a power of two, -1 otherwise. */
static inline int tc__cost_log2_exact(long p)
{
	if (!tc__cost_is_pow2(p))
		return -1;
	int d = 0;
	while ((1L << d) < p)
		d++;
	return d;
}

static inline long tc__cost_lmin(long a, long b)
{
	return a < b ? a : b;
}

static inline long tc__cost_lmax(long a, long b)
{
	return a > b ? a : b;
}

static inline long tc__cost_mod_pos(long q, long p)
{
	long r = q % p;
	return r < 0 ? r + p : r;
}

/* Validates mesh/torus dims; returns the node count or -1. */
static inline long tc__cost_dims_nodes(int ndims, const int *dims)
{
	if (dims == NULL || ndims < 1 || ndims > TC_TOPO_MAX_DIMS)
		return -1;
	long n = 1;
	for (int i = 0; i < ndims; i++) {
		if (dims[i] < 1)
			return -1;
		n *= dims[i];
		if (n > TC_TOPO_MAX_NODES)
			return -1;
	}
	return n;
}

/* sum_i (z_i - 1) over the dims (validated by the caller). */
static inline long tc__cost_dims_steps(int ndims, const int *dims)
{
	long steps = 0;
	for (int i = 0; i < ndims; i++)
		steps += dims[i] - 1;
	return steps;
}

/* A chain of `hops` links crossed by `rounds` routed messages, each sender
 * busy until its message has left (CT) or arrived (SF): the recursive
 * doubling on a line (tc_cost_bcast_ring_rd()) and the multicast. */
static inline double tc__cost_rd_line(const struct tc_model *md, long rounds, long hops, double m)
{
	if (hops <= 0)
		return 0.0;
	if (tc__cost_is_ct(md))
		return (double)rounds * (md->ts_ns + m * md->tw_ns) + (double)hops * md->th_ns;
	return (double)hops * (md->ts_ns + m * md->tw_ns);
}

/* Rank 0 of p >= 2 neighbours takes p - 1 messages of m bytes in turn
 * through one port, then sends p - 1 back in turn: the first arrives at
 * msg(1, m), then one every t_s + m t_w, and likewise on the way back
 * (tc_cost_allreduce_linear(), tc_cost_barrier_linear()). */
static inline double tc__cost_gather_release(const struct tc_model *md, int p, double m)
{
	return 2.0 * tc_cost_p2p(md, 1, m) + 2.0 * (p - 2) * (md->ts_ns + m * md->tw_ns);
}

#endif /* TC_MODEL_COST_IMPL_H */
