/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/shift/shift.c - the shift's entry points (tc_shift, tc_ishift,
 * tc_shift_init): q taken mod p, then the path of every collective call
 * (tc__coll_x, lib/coll/coll.c).
 */
#include <stddef.h>

#include "base/error_detail.h"
#include "coll/coll_internal.h"
#include "core/internal.h"

static int tc__shift(struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count, enum tc_dtype dt,
                     int q, const struct tc_coll_opts *opts, const struct tc__xreq *xr)
{
	tc__clear_detail();
	if (!proc)
		return TC_EINVAL;
	const long p = proc->team->p;
	const struct tc__coll_extra x = {.q = (int)((((long)q % p) + p) % p),
	                                 .shift_ring = opts && opts->shift_ring};
	return tc__coll_x(proc, TC_COLL_SHIFT, sbuf, rbuf, count, dt, TC_OP_BOR, 0, opts, &x, xr);
}

int tc_shift(struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count, enum tc_dtype dt,
             int q, const struct tc_coll_opts *opts)
{
	return tc__shift(proc, sbuf, rbuf, count, dt, q, opts, NULL);
}

int tc_ishift(struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count, enum tc_dtype dt,
              int q, const struct tc_coll_opts *opts, tc_request *req)
{
	const struct tc__xreq xr = {req, 0, NULL};
	return tc__shift(proc, sbuf, rbuf, count, dt, q, opts, &xr);
}

int tc_shift_init(struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                  enum tc_dtype dt, int q, const struct tc_coll_opts *opts, tc_request *req)
{
	const struct tc__xreq xr = {req, 1, NULL};
	return tc__shift(proc, sbuf, rbuf, count, dt, q, opts, &xr);
}
