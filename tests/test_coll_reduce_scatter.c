/* SPDX-License-Identifier: MIT */
/*
 * All-to-all reduction (reduce_scatter): every algorithm of the registry on
 * every topology it applies to, p in the matrix, several sizes, datatypes
 * and (commutative) operators, in place and not, against the sequential
 * reference of tests/common/coll_ref; the registry's restrictions against
 * the generators; modelled times against [Barnat-IB109]'s closed forms (the
 * allgather's plus m (p - 1) t_c) computed here, formula_ns, lower bounds,
 * AUTO; argument errors.
 */
#define COLL TC_COLL_REDUCE_SCATTER
#define SUITE reduce_scatter
#define IS_REDUCING 1
/* The same suite as the allgather's, its dual (the #if IS_REDUCING parts). */
#include "test_coll_allgather.c"
