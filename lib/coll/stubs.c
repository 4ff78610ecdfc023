/* SPDX-License-Identifier: MIT */
/* lib/coll/stubs.c - TEMPORARY weak placeholders while algorithm files are being
 * written: a missing generator answers TC_ENOTSUP and a missing formula NAN,
 * so nothing wrong is ever produced.  Removed once every algorithm exists. */
#include "coll/gen.h"

__attribute__((weak)) int generator(const struct tc__gen *g, struct tc__sched *s)
{
	(void)g;
	(void)s;
	return TC_ENOTSUP;
}

__attribute__((weak)) int tc__gen_bcast_hypercube(const struct tc__gen *g, struct tc__sched *s)
{
	(void)g;
	(void)s;
	return TC_ENOTSUP;
}

__attribute__((weak)) int tc__gen_bcast_binomial(const struct tc__gen *g, struct tc__sched *s)
{
	(void)g;
	(void)s;
	return TC_ENOTSUP;
}

__attribute__((weak)) int tc__gen_bcast_linear(const struct tc__gen *g, struct tc__sched *s)
{
	(void)g;
	(void)s;
	return TC_ENOTSUP;
}

__attribute__((weak)) int tc__gen_bcast_ring(const struct tc__gen *g, struct tc__sched *s)
{
	(void)g;
	(void)s;
	return TC_ENOTSUP;
}

__attribute__((weak)) int tc__gen_bcast_ring_pipelined(const struct tc__gen *g, struct tc__sched *s)
{
	(void)g;
	(void)s;
	return TC_ENOTSUP;
}

__attribute__((weak)) int tc__gen_bcast_ring_rd(const struct tc__gen *g, struct tc__sched *s)
{
	(void)g;
	(void)s;
	return TC_ENOTSUP;
}

__attribute__((weak)) int tc__gen_bcast_mesh(const struct tc__gen *g, struct tc__sched *s)
{
	(void)g;
	(void)s;
	return TC_ENOTSUP;
}

__attribute__((weak)) int tc__gen_bcast_dot_allport(const struct tc__gen *g, struct tc__sched *s)
{
	(void)g;
	(void)s;
	return TC_ENOTSUP;
}

__attribute__((weak)) int tc__gen_allreduce_hypercube(const struct tc__gen *g, struct tc__sched *s)
{
	(void)g;
	(void)s;
	return TC_ENOTSUP;
}

__attribute__((weak)) int tc__gen_allreduce_ring(const struct tc__gen *g, struct tc__sched *s)
{
	(void)g;
	(void)s;
	return TC_ENOTSUP;
}

__attribute__((weak)) int tc__gen_allreduce_reduce_bcast(const struct tc__gen *g, struct tc__sched *s)
{
	(void)g;
	(void)s;
	return TC_ENOTSUP;
}

__attribute__((weak)) int tc__gen_barrier_dissemination(const struct tc__gen *g, struct tc__sched *s)
{
	(void)g;
	(void)s;
	return TC_ENOTSUP;
}

__attribute__((weak)) int tc__gen_barrier_allreduce(const struct tc__gen *g, struct tc__sched *s)
{
	(void)g;
	(void)s;
	return TC_ENOTSUP;
}

__attribute__((weak)) double formula(const struct tc__gen *g)
{
	(void)g;
	return NAN;
}

__attribute__((weak)) double tc__f_bcast_hypercube(const struct tc__gen *g)
{
	(void)g;
	return NAN;
}

__attribute__((weak)) double tc__f_bcast_binomial(const struct tc__gen *g)
{
	(void)g;
	return NAN;
}

__attribute__((weak)) double tc__f_bcast_linear(const struct tc__gen *g)
{
	(void)g;
	return NAN;
}

__attribute__((weak)) double tc__f_bcast_ring(const struct tc__gen *g)
{
	(void)g;
	return NAN;
}

__attribute__((weak)) double tc__f_bcast_ring_pipelined(const struct tc__gen *g)
{
	(void)g;
	return NAN;
}

__attribute__((weak)) double tc__f_bcast_ring_rd(const struct tc__gen *g)
{
	(void)g;
	return NAN;
}

__attribute__((weak)) double tc__f_bcast_mesh(const struct tc__gen *g)
{
	(void)g;
	return NAN;
}

__attribute__((weak)) double tc__f_bcast_dot_allport(const struct tc__gen *g)
{
	(void)g;
	return NAN;
}

__attribute__((weak)) double tc__f_reduce_hypercube(const struct tc__gen *g)
{
	(void)g;
	return NAN;
}

__attribute__((weak)) double tc__f_reduce_binomial(const struct tc__gen *g)
{
	(void)g;
	return NAN;
}

__attribute__((weak)) double tc__f_reduce_linear(const struct tc__gen *g)
{
	(void)g;
	return NAN;
}

__attribute__((weak)) double tc__f_reduce_ring(const struct tc__gen *g)
{
	(void)g;
	return NAN;
}

__attribute__((weak)) double tc__f_reduce_ring_pipelined(const struct tc__gen *g)
{
	(void)g;
	return NAN;
}

__attribute__((weak)) double tc__f_reduce_ring_rd(const struct tc__gen *g)
{
	(void)g;
	return NAN;
}

__attribute__((weak)) double tc__f_reduce_mesh(const struct tc__gen *g)
{
	(void)g;
	return NAN;
}

__attribute__((weak)) double tc__f_reduce_dot_allport(const struct tc__gen *g)
{
	(void)g;
	return NAN;
}

__attribute__((weak)) double tc__f_allreduce_hypercube(const struct tc__gen *g)
{
	(void)g;
	return NAN;
}

__attribute__((weak)) double tc__f_allreduce_ring(const struct tc__gen *g)
{
	(void)g;
	return NAN;
}

__attribute__((weak)) double tc__f_allreduce_reduce_bcast(const struct tc__gen *g)
{
	(void)g;
	return NAN;
}

__attribute__((weak)) double tc__f_barrier_dissemination(const struct tc__gen *g)
{
	(void)g;
	return NAN;
}

__attribute__((weak)) double tc__f_barrier_allreduce(const struct tc__gen *g)
{
	(void)g;
	return NAN;
}
