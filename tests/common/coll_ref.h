/* SPDX-License-Identifier: MIT */
/*
 * tests/common/coll_ref.h - the Collectives II test harness: deterministic
 * inputs, a sequential reference of every collective (written here, from
 * the definitions in topocoll/coll.h, not from the library), and a runner
 * that calls a collective on every rank of a team and checks each rank's
 * result bit for bit, and that nothing outside it was written.
 *
 * Inputs are chosen so that every order of combining gives the same bits
 * (integers wrap; doubles are multiples of 2^-10 below 2^20, so every
 * partial sum is exact), which makes bitwise checks valid for commutative
 * algorithms too.  CT_OP_AFFINE is a non-commutative operator (composition
 * of affine maps x -> a x + b mod 2^32 packed in a uint64).
 */
#ifndef TC_TESTS_COLL_REF_H
#define TC_TESTS_COLL_REF_H

#include <stddef.h>
#include <stdint.h>

#include "topocoll.h"

/* The operator of a case: a built-in one, or the affine user operator. */
#define CT_OP_AFFINE ((enum tc_op)(TC_OP_COUNT + 1))

struct ct_case {
	enum tc_coll coll;
	const char *alg; /* NULL: auto */
	size_t count;    /* elements per block */
	enum tc_dtype dt;
	enum tc_op op; /* reducing collectives: a TC_OP_* or CT_OP_AFFINE
	                            (with TC_UINT64) */
	int root;
	int in_place; /* TC_IN_PLACE where the collective allows it
	                            (at the root only for rooted ones) */
	int iters;    /* back-to-back calls (0: 1), each checked */
	uint64_t seed;
	int q;              /* shift */
	int shift_ring;     /* shift along the ring: 1 ring or complete graph
	                            (positions are ranks), 2 hypercube (position i
	                            is rank G(i)) */
	const int *members; /* multicast: the set as passed (any order) */
	int nmembers;
};

/* Element i of the send buffer of rank r (all its blocks, block b's element
 * j at i = b count + j) for case c, into out (dtype size bytes). */
void ct_input(const struct ct_case *c, int r, size_t i, void *out);

/* The expected receive buffer of rank r of p (ct_rbytes() bytes), computed
 * sequentially from ct_input().  Returns 0, or -1 when rank r gets nothing. */
int ct_expect(const struct ct_case *c, int p, int r, void *out);

/* Bytes of rank r's send and receive buffers (0: none). */
size_t ct_sbytes(const struct ct_case *c, int p, int r);
size_t ct_rbytes(const struct ct_case *c, int p, int r);

/* Calls the collective of c on proc with the given buffers (TC_IN_PLACE as
 * the case says); returns its error. */
int ct_call(struct tc_proc *proc, const struct ct_case *c, const void *sbuf, void *rbuf);

/*
 * Runs c on every rank of team (tc_run) and checks: every rank returns 0;
 * every receive buffer equals ct_expect() bit for bit, after every
 * iteration; guard bytes around every buffer and the send buffers are
 * untouched; ranks that get nothing have their receive buffer untouched.
 * Returns 0, or fills msg (the first failure) and returns -1.
 */
int ct_run(struct tc_team *team, const struct ct_case *c, char *msg, size_t len);

/* The default model with these parameters (t_c 0). */
struct tc_model ct_model(double ts, double tw, double th, enum tc_ports ports,
                         enum tc_duplex duplex, enum tc_switching sw);

/* A team on topology spec (model md or the default; timeout 60 s), or NULL
 * with msg filled. */
struct tc_team *ct_team(const char *spec, const struct tc_model *md, char *msg, size_t len);

/* The datatypes and operators of the test matrix for reducing collectives:
 * n entries of (dt, op); ordered ones (CT_OP_AFFINE) last. */
struct ct_combo {
	enum tc_dtype dt;
	enum tc_op op;
	const char *name;
};
extern const struct ct_combo ct_combos[];
extern const int ct_ncombos;
/* The datatypes for non-reducing collectives. */
extern const enum tc_dtype ct_dtypes[];
extern const int ct_ndtypes;

#endif
