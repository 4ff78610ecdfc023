/* SPDX-License-Identifier: MIT */
/*
 * tests/test_errors_api.c - the README's error table ("Errors"), row by row,
 * on running teams: every bad input of a collective or point-to-point call
 * that every rank makes alike returns the row's code on every rank, writes
 * nothing (the buffers keep their fill), and leaves the team working (an
 * allreduce after each row gives the right sum).  Rows are a table: a
 * failure names its row.  The inputs only some ranks get wrong (a NULL
 * buffer on one rank, TC_IN_PLACE off the root) are tested apart: the rank
 * returns its code at once and nothing moves, so a retry with good
 * arguments completes everywhere, and a rank that gives up aborts the
 * others (TC_EABORTED, no hang).  Team creation, the model, the predictor
 * and NULL handles are in tests/test_error.c.
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "topocoll.h"
#include "topocoll/calibrate.h"
#include "coll_check.h"

#define NB 64           /* int32 elements of each buffer */
#define FILL 0x5a5a5a5a /* what the buffers hold before a row */

struct bufs {
	int me, p;
	int32_t s[NB], r[NB];
	double d[NB];
	struct failure *f;
	const char *row;
};

/* What a row's call must write on success (rows that are accepted). */
typedef void (*row_check)(struct bufs *b);

struct row {
	const char *name;
	int (*call)(struct tc_proc *proc, struct bufs *b);
	int code;        /* on every rank (but the root where code_root says) */
	row_check check; /* code 0: the result to verify; NULL: none */
	int code_root;   /* non-zero: rank 0's code */
};

#define ROW(name, expr)                                             \
	static int row_##name(struct tc_proc *proc, struct bufs *b) \
	{                                                           \
		const int me = b->me, p = b->p;                     \
		(void)me;                                           \
		(void)p;                                            \
		(void)proc;                                         \
		return (expr);                                      \
	}

static const struct tc_coll_opts o_badalg = {.alg = "no_such_algorithm"};
static const struct tc_coll_opts o_hc = {.alg = "hypercube"};
static const struct tc_coll_opts o_negpk = {.packets = -1};
static void nc_fn(const void *in, void *inout, size_t n, enum tc_dtype dt, void *ctx)
{
	(void)dt;
	(void)ctx;
	for (size_t i = 0; i < n; i++)
		((int32_t *)inout)[i] += ((const int32_t *)in)[i];
}
static const struct tc_user_op nc_op = {.fn = nc_fn, .commutative = 0};
static const struct tc_coll_opts o_nc_hc = {.alg = "hypercube", .user_op = &nc_op};
static const struct tc_user_op nofn_op = {.fn = NULL};
static const struct tc_coll_opts o_nofn = {.user_op = &nofn_op};

#define I32 TC_INT32
#define BADDT ((enum tc_dtype)TC_DTYPE_COUNT)
#define NEGDT ((enum tc_dtype) - 1)
#define SUM TC_OP_SUM
#define IP TC_IN_PLACE
/* count * 4 wraps size_t; count * 4 just above TC_MAX_MESSAGE. */
#define WRAP ((SIZE_MAX / 4) + 2)
#define BIG ((TC_MAX_MESSAGE / 4) + 1)

/* ---- rows: bad root ---------------------------------------------------------- */
ROW(bcast_root_p, tc_bcast(proc, b->r, 4, I32, p, NULL))
ROW(bcast_root_neg, tc_bcast(proc, b->r, 4, I32, -1, NULL))
ROW(reduce_root_p, tc_reduce(proc, b->s, b->r, 4, I32, SUM, p, NULL))
ROW(scatter_root_p, tc_scatter(proc, b->s, b->r, 4, I32, p, NULL))
ROW(gather_root_neg, tc_gather(proc, b->s, b->r, 4, I32, -1, NULL))
ROW(multicast_root_p, tc_multicast(proc, b->r, 4, I32, p, NULL, 0, NULL))
ROW(gatherv_root_p, tc_gatherv(proc, b->s, 1, b->r, NULL, NULL, I32, p, NULL))
/* ---- unknown datatype, operator ------------------------------------------------ */
ROW(allreduce_dtype_count, tc_allreduce(proc, b->s, b->r, 4, BADDT, SUM, NULL))
ROW(bcast_dtype_neg, tc_bcast(proc, b->r, 4, NEGDT, 0, NULL))
ROW(allgather_dtype_count, tc_allgather(proc, b->s, b->r, 1, BADDT, NULL))
ROW(allgatherv_dtype_count, tc_allgatherv(proc, b->s, 1, b->r, NULL, NULL, BADDT, NULL))
ROW(allreduce_op_count, tc_allreduce(proc, b->s, b->r, 4, I32, TC_OP_COUNT, NULL))
ROW(allreduce_op_neg, tc_allreduce(proc, b->s, b->r, 4, I32, (enum tc_op) - 1, NULL))
ROW(allreduce_bxor_double, tc_allreduce(proc, b->d, b->d + 8, 4, TC_DOUBLE, TC_OP_BXOR, NULL))
ROW(reduce_land_float, tc_reduce(proc, b->s, b->r, 4, TC_FLOAT, TC_OP_LAND, 0, NULL))
ROW(scan_band_double, tc_scan(proc, b->d, b->d + 8, 4, TC_DOUBLE, TC_OP_BAND, NULL))
ROW(allreduce_user_no_op, tc_allreduce(proc, b->s, b->r, 4, I32, TC_OP_USER, NULL))
ROW(allreduce_user_no_fn, tc_allreduce(proc, b->s, b->r, 4, I32, TC_OP_USER, &o_nofn))
ROW(allreduce_noncommutative_unordered, tc_allreduce(proc, b->s, b->r, 4, I32, TC_OP_USER, &o_nc_hc))
/* ---- NULL buffers with count > 0 (and count 0 needs none) ----------------------- */
ROW(allreduce_null_sbuf, tc_allreduce(proc, NULL, b->r, 4, I32, SUM, NULL))
ROW(allreduce_null_rbuf, tc_allreduce(proc, b->s, NULL, 4, I32, SUM, NULL))
ROW(allreduce_in_place_null, tc_allreduce(proc, IP, NULL, 4, I32, SUM, NULL))
ROW(bcast_null, tc_bcast(proc, NULL, 4, I32, 0, NULL))
ROW(allgather_null_rbuf, tc_allgather(proc, b->s, NULL, 1, I32, NULL))
ROW(alltoall_null_sbuf, tc_alltoall(proc, NULL, b->r, 1, I32, NULL))
ROW(shift_null_rbuf, tc_shift(proc, b->s, NULL, 4, I32, 1, NULL))
ROW(multicast_null_root_buf, tc_multicast(proc, NULL, 4, I32, 0, NULL, 0, NULL))
ROW(allgatherv_null_rbuf, tc_allgatherv(proc, b->s, 1, NULL, (size_t[8]){1, 1, 1, 1, 1, 1, 1, 1},
                                        (size_t[8]){0, 1, 2, 3, 4, 5, 6, 7}, I32, NULL))
ROW(allreduce_count0_null, tc_allreduce(proc, NULL, NULL, 0, I32, SUM, NULL))
ROW(bcast_count0_null, tc_bcast(proc, NULL, 0, I32, 0, NULL))
/* ---- count overflow ----------------------------------------------------------- */
ROW(allreduce_count_wraps, tc_allreduce(proc, b->s, b->r, WRAP, I32, SUM, NULL))
ROW(allreduce_count_max, tc_allreduce(proc, b->s, b->r, SIZE_MAX, I32, SUM, NULL))
ROW(bcast_over_max_message, tc_bcast(proc, b->r, BIG, I32, 0, NULL))
ROW(allgather_p_blocks_over, tc_allgather(proc, b->s, b->r, BIG / 2, I32, NULL))
ROW(alltoall_p_blocks_over, tc_alltoall(proc, b->s, b->r, BIG / 2, I32, NULL))
ROW(multicast_count_wraps, tc_multicast(proc, b->r, WRAP, I32, 0, NULL, 0, NULL))
ROW(allgatherv_count_over,
    tc_allgatherv(proc, b->s, BIG, b->r, (size_t[8]){BIG, BIG, BIG, BIG, BIG, BIG, BIG, BIG},
                  (size_t[8]){0}, I32, NULL))
/* ---- aliasing without TC_IN_PLACE, partial overlap, TC_IN_PLACE misuse ------------ */
ROW(allreduce_alias, tc_allreduce(proc, b->r, b->r, 4, I32, SUM, NULL))
ROW(allreduce_overlap, tc_allreduce(proc, b->r, b->r + 2, 4, I32, SUM, NULL))
ROW(scan_alias, tc_scan(proc, b->r, b->r, 4, I32, SUM, NULL))
ROW(shift_alias, tc_shift(proc, b->r, b->r, 4, I32, 1, NULL))
ROW(reduce_alias, tc_reduce(proc, b->r, b->r, 4, I32, SUM, 0, NULL))
ROW(allgather_alias, tc_allgather(proc, b->r, b->r, 1, I32, NULL))
ROW(allgather_overlap, tc_allgather(proc, b->r + 1, b->r, 1, I32, NULL))
ROW(alltoall_alias, tc_alltoall(proc, b->r, b->r, 1, I32, NULL))
ROW(alltoall_overlap, tc_alltoall(proc, b->r + p - 1, b->r, 1, I32, NULL))
ROW(reduce_scatter_overlap, tc_reduce_scatter(proc, b->r, b->r + 1, 1, I32, SUM, NULL))
ROW(bcast_buf_in_place, tc_bcast(proc, (void *)IP, 4, I32, 0, NULL))
ROW(allreduce_rbuf_in_place, tc_allreduce(proc, b->s, (void *)IP, 4, I32, SUM, NULL))
ROW(multicast_buf_in_place, tc_multicast(proc, (void *)IP, 4, I32, 0, NULL, 0, NULL))
ROW(allgatherv_in_place, tc_allgatherv(proc, IP, 1, b->r, (size_t[8]){1, 1, 1, 1, 1, 1, 1, 1},
                                       (size_t[8]){0, 1, 2, 3, 4, 5, 6, 7}, I32, NULL))
/* ---- algorithm, options, topology restrictions ---------------------------------- */
ROW(allreduce_unknown_alg, tc_allreduce(proc, b->s, b->r, 4, I32, SUM, &o_badalg))
ROW(barrier_unknown_alg, tc_barrier(proc, &o_badalg))
ROW(allgatherv_unknown_alg, tc_allgatherv(proc, b->s, 1, b->r, (size_t[8]){1, 1, 1, 1, 1, 1, 1, 1},
                                          (size_t[8]){0, 1, 2, 3, 4, 5, 6, 7}, I32, &o_badalg))
ROW(allreduce_negative_packets, tc_allreduce(proc, b->s, b->r, 4, I32, SUM, &o_negpk))
ROW(bcast_alg_not_for_topology, tc_bcast(proc, b->r, 4, I32, 0, &o_hc))
ROW(gray2binary_p_not_pow2, tc_gray2binary(proc, b->s, b->r, 4, I32, NULL))
/* ---- multicast member sets and v-call arrays (agreed) ---------------------------- */
ROW(multicast_member_p, tc_multicast(proc, b->r, 4, I32, 0, (int[]){1, p}, 2, NULL))
ROW(multicast_member_dup, tc_multicast(proc, b->r, 4, I32, 0, (int[]){1, 1}, 2, NULL))
ROW(multicast_members_null, tc_multicast(proc, b->r, 4, I32, 0, NULL, 2, NULL))
ROW(multicast_nmembers_neg, tc_multicast(proc, b->r, 4, I32, 0, NULL, -1, NULL))
ROW(allgatherv_counts_null, tc_allgatherv(proc, b->s, 1, b->r, NULL, NULL, I32, NULL))
ROW(alltoallv_in_place, tc_alltoallv(proc, IP, NULL, NULL, b->r, NULL, NULL, I32, NULL))
/* ---- NULL proc ---------------------------------------------------------------- */
ROW(allreduce_null_proc, tc_allreduce(NULL, b->s, b->r, 4, I32, SUM, NULL))
ROW(multicast_null_proc, tc_multicast(NULL, b->r, 4, I32, 0, NULL, 0, NULL))
ROW(shift_null_proc, tc_shift(NULL, b->s, b->r, 4, I32, 1, NULL))
ROW(allgatherv_null_proc, tc_allgatherv(NULL, b->s, 1, b->r, NULL, NULL, I32, NULL))
ROW(send_null_proc, tc_send(NULL, 1, b->s, 4))
ROW(wait_null_proc, tc_wait(NULL, NULL, NULL))
/* ---- point to point on a sparse topology (ring: me + 2 is no neighbour) ---------- */
ROW(send_rank_p, tc_send(proc, p, b->s, 4))
ROW(send_rank_neg, tc_send(proc, -1, b->s, 4))
ROW(recv_rank_p, tc_recv(proc, p, b->r, 4, NULL))
ROW(send_self_negative_tag, tc_send_tag(proc, me, -3, b->s, 4))
ROW(send_negative_tag, tc_send_tag(proc, (me + 2) % p, -3, b->s, 4))
ROW(send_any_tag, tc_send_tag(proc, (me + 1) % p, TC_ANY_TAG, b->s, 4))
ROW(recv_negative_tag, tc_recv_tag(proc, (me + 2) % p, -3, b->r, 4, NULL))
ROW(send_any_source, tc_send(proc, TC_ANY_SOURCE, b->s, 4))
ROW(send_null_buf, tc_send(proc, (me + 1) % p, NULL, 4))
ROW(recv_null_buf, tc_recv(proc, (me + 1) % p, NULL, 4, NULL))
ROW(send_over_max_message, tc_send(proc, (me + 1) % p, b->s, TC_MAX_MESSAGE + 1))
ROW(isend_null_request, tc_isend(proc, (me + 1) % p, b->s, 4, NULL))
ROW(sendrecv_alias, tc_sendrecv(proc, (me + 1) % p, b->r, 16, (me + p - 1) % p, b->r, 16, NULL))
ROW(sendrecv_overlap, tc_sendrecv(proc, (me + 1) % p, b->r, 16, (me + p - 1) % p, b->r + 2, 16, NULL))

/* Truncation: a message larger than the receive buffer is refused whole
 * (nothing written, it stays queued, its size reported) and a larger buffer
 * takes it. */
static int row_recv_truncate(struct tc_proc *proc, struct bufs *b)
{
	const int p = b->p, right = (b->me + 1) % p, left = (b->me + p - 1) % p;
	int32_t msg[8], got[8];
	for (int i = 0; i < 8; i++)
		msg[i] = b->me * 100 + i;
	tc_request rq;
	int err = tc_isend(proc, right, msg, sizeof msg, &rq);
	if (err)
		return err;
	size_t size = 0;
	int code = tc_recv(proc, left, b->r, 4 * sizeof(int32_t), &size);
	if (size != sizeof msg)
		FAIL(b->f, "%s: rank %d: size %zu reported, not %zu", b->row, b->me, size, sizeof msg);
	err = tc_recv(proc, left, got, sizeof got, &size);
	if (err || size != sizeof msg || got[7] != left * 100 + 7)
		FAIL(b->f, "%s: rank %d: the message after the truncation: %s", b->row, b->me,
		     tc_err_name(err));
	err = tc_wait(proc, &rq, NULL);
	if (err)
		FAIL(b->f, "%s: rank %d: the send: %s", b->row, b->me, tc_err_name(err));
	return code;
}

/* A peer that is not a neighbour (me + 2 on the ring): no error, the
 * message is routed (TC_ENOTNEIGHBOR is not returned). */
static int row_send_not_neighbour(struct tc_proc *proc, struct bufs *b)
{
	const int p = b->p, to = (b->me + 2) % p, from = (b->me + p - 2) % p;
	tc_request rq;
	int err = tc_isend(proc, to, b->s, 4 * sizeof(int32_t), &rq);
	if (err)
		return err;
	int code = tc_recv(proc, from, b->r, 4 * sizeof(int32_t), NULL);
	err = tc_wait(proc, &rq, NULL);
	return code ? code : err;
}

/* The accepted rows' results (sbuf is rbuf, or they overlap: taken as in
 * place; the input of rank r is FILL + r here). */
static void sum_check(struct bufs *b, int off, int inclusive_ranks)
{
	uint32_t sum = 0; /* the library's sum wraps (two's complement) */
	for (int r = 0; r < inclusive_ranks; r++)
		sum += (uint32_t)(FILL + r);
	int32_t want = (int32_t)sum;
	for (int i = 0; i < 4; i++)
		if (b->r[off + i] != want)
			FAIL(b->f, "%s: rank %d: element %d is %d, not %d", b->row, b->me, i,
			     b->r[off + i], want);
}
static void check_allreduce_alias(struct bufs *b)
{
	sum_check(b, 0, b->p);
}
static void check_allreduce_overlap(struct bufs *b)
{
	sum_check(b, 2, b->p);
}
static void check_scan_alias(struct bufs *b)
{
	sum_check(b, 0, b->me + 1);
}
/* Every element of the result is the input of the rank d places before. */
static void from_rank_before(struct bufs *b, int d)
{
	const int32_t want = FILL + (b->me + b->p - d) % b->p;
	for (int i = 0; i < 4; i++)
		if (b->r[i] != want)
			FAIL(b->f, "%s: rank %d: element %d is %d, not %d", b->row, b->me, i,
			     b->r[i], want);
}
static void check_shift_alias(struct bufs *b)
{
	from_rank_before(b, 1);
}
static void check_reduce_alias(struct bufs *b)
{
	if (b->me == 0)
		sum_check(b, 0, b->p);
}
static void check_send_not_neighbour(struct bufs *b)
{
	from_rank_before(b, 2);
}

#define R(name, code)                            \
	{                                        \
#name, row_##name, code, NULL, 0 \
	}
#define RC(name, check)                        \
	{                                      \
#name, row_##name, 0, check, 0 \
	}
#define R0(name, code, root_code)                        \
	{                                                \
#name, row_##name, code, NULL, root_code \
	}
static const struct row rows[] = {
        R(bcast_root_p, TC_EROOT),
        R(bcast_root_neg, TC_EROOT),
        R(reduce_root_p, TC_EROOT),
        R(scatter_root_p, TC_EROOT),
        R(gather_root_neg, TC_EROOT),
        R(multicast_root_p, TC_EROOT),
        R(gatherv_root_p, TC_EROOT),
        R(allreduce_dtype_count, TC_EINVAL),
        R(bcast_dtype_neg, TC_EINVAL),
        R(allgather_dtype_count, TC_EINVAL),
        R(allgatherv_dtype_count, TC_EINVAL),
        R(allreduce_op_count, TC_EINVAL),
        R(allreduce_op_neg, TC_EINVAL),
        R(allreduce_bxor_double, TC_ENOTSUP),
        R(reduce_land_float, TC_ENOTSUP),
        R(scan_band_double, TC_ENOTSUP),
        R(allreduce_user_no_op, TC_EINVAL),
        R(allreduce_user_no_fn, TC_EINVAL),
        R(allreduce_noncommutative_unordered, TC_ENOTSUP),
        R(allreduce_null_sbuf, TC_ENULLBUF),
        R(allreduce_null_rbuf, TC_ENULLBUF),
        R(allreduce_in_place_null, TC_ENULLBUF),
        R(bcast_null, TC_ENULLBUF),
        R(allgather_null_rbuf, TC_ENULLBUF),
        R(alltoall_null_sbuf, TC_ENULLBUF),
        R(shift_null_rbuf, TC_ENULLBUF),
        /* Only the root uses the buffer: TC_ENULLBUF there, agreed as TC_EMISMATCH. */
        R0(multicast_null_root_buf, TC_EMISMATCH, TC_ENULLBUF),
        R(allgatherv_null_rbuf, TC_ENULLBUF),
        R(allreduce_count0_null, 0),
        R(bcast_count0_null, 0),
        R(allreduce_count_wraps, TC_EOVERFLOW),
        R(allreduce_count_max, TC_EOVERFLOW),
        R(bcast_over_max_message, TC_EOVERFLOW),
        R(allgather_p_blocks_over, TC_EOVERFLOW),
        R(alltoall_p_blocks_over, TC_EOVERFLOW),
        R(multicast_count_wraps, TC_EOVERFLOW),
        R(allgatherv_count_over, TC_EOVERFLOW),
        RC(allreduce_alias, check_allreduce_alias),
        RC(allreduce_overlap, check_allreduce_overlap),
        RC(scan_alias, check_scan_alias),
        RC(shift_alias, check_shift_alias),
        RC(reduce_alias, check_reduce_alias),
        R(allgather_alias, TC_EINVAL),
        R(allgather_overlap, TC_EINVAL),
        R(alltoall_alias, TC_EINVAL),
        R(alltoall_overlap, TC_EINVAL),
        R(reduce_scatter_overlap, TC_EINVAL),
        R(bcast_buf_in_place, TC_EINVAL),
        R(allreduce_rbuf_in_place, TC_EINVAL),
        R(multicast_buf_in_place, TC_EINVAL),
        R(allgatherv_in_place, TC_EINVAL),
        R(allreduce_unknown_alg, TC_EALG),
        R(barrier_unknown_alg, TC_EALG),
        R(allgatherv_unknown_alg, TC_EALG),
        R(allreduce_negative_packets, TC_EINVAL),
        R(bcast_alg_not_for_topology, TC_ENOTSUP),
        R(gray2binary_p_not_pow2, TC_ENOTSUP),
        R(multicast_member_p, TC_ERANK),
        R(multicast_member_dup, TC_EINVAL),
        R(multicast_members_null, TC_EINVAL),
        R(multicast_nmembers_neg, TC_EINVAL),
        R(allgatherv_counts_null, TC_EINVAL),
        R(alltoallv_in_place, TC_EINVAL),
        R(allreduce_null_proc, TC_EINVAL),
        R(multicast_null_proc, TC_EINVAL),
        R(shift_null_proc, TC_EINVAL),
        R(allgatherv_null_proc, TC_EINVAL),
        R(send_null_proc, TC_EINVAL),
        R(wait_null_proc, TC_EINVAL),
        R(send_rank_p, TC_ERANK),
        R(send_rank_neg, TC_ERANK),
        R(recv_rank_p, TC_ERANK),
        R(send_self_negative_tag, TC_EINVAL),
        R(send_negative_tag, TC_EINVAL),
        R(send_any_tag, TC_EINVAL),
        R(recv_negative_tag, TC_EINVAL),
        R(send_any_source, TC_ERANK),
        R(send_null_buf, TC_ENULLBUF),
        R(recv_null_buf, TC_ENULLBUF),
        R(send_over_max_message, TC_EOVERFLOW),
        R(isend_null_request, TC_EINVAL),
        R(sendrecv_alias, TC_EINVAL),
        R(sendrecv_overlap, TC_EINVAL),
        R(recv_truncate, TC_ETRUNCATE),
        RC(send_not_neighbour, check_send_not_neighbour),
};
#define NROWS ((int)(sizeof rows / sizeof rows[0]))

struct table_arg {
	struct failure f;
	int only; /* -1: every row */
};

static void fill(struct bufs *b)
{
	for (int i = 0; i < NB; i++) {
		b->s[i] = b->r[i] = FILL + b->me;
		b->d[i] = 0.5;
	}
}

static int table_fn(struct tc_proc *proc, void *argp)
{
	struct table_arg *a = argp;
	struct bufs *b = calloc(1, sizeof *b);
	if (!b)
		return TC_ENOMEM;
	b->me = tc_rank(proc);
	b->p = tc_size(proc);
	b->f = &a->f;
	for (int k = 0; k < NROWS; k++) {
		const struct row *rw = &rows[k];
		b->row = rw->name;
		fill(b);
		int err = rw->call(proc, b);
		const int want = b->me == 0 && rw->code_root ? rw->code_root : rw->code;
		if (err != want)
			FAIL(&a->f, "%s: rank %d: %s, not %s", rw->name, b->me, tc_err_name(err),
			     tc_err_name(want));
		if (rw->check) {
			rw->check(b);
		} else if (rw->code) {
			for (int i = 0; i < NB; i++)
				if (b->s[i] != FILL + b->me || b->r[i] != FILL + b->me || b->d[i] != 0.5) {
					FAIL(&a->f, "%s: rank %d: element %d written", rw->name,
					     b->me, i);
					break;
				}
		}
		/* The team still works. */
		int32_t x = b->me, y = -1;
		err = tc_allreduce(proc, &x, &y, 1, I32, SUM, NULL);
		if (err || y != b->p * (b->p - 1) / 2) {
			FAIL(&a->f, "%s: rank %d: the allreduce after it: %s, %d", rw->name, b->me,
			     tc_err_name(err), y);
			break;
		}
	}
	free(b);
	return 0;
}

static void run_table(const char *spec)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.timeout_ms = 60000; /* a row that hangs fails, it does not wait forever */
	struct tc_team *team = NULL;
	cr_assert_eq(tc_team_create(&cfg, &team), 0);
	struct table_arg a = {.only = -1};
	int err = tc_run(team, table_fn, &a);
	cr_assert_eq(atomic_load(&a.f.n), 0, "%s: %s", spec, a.f.msg);
	cr_assert_eq(err, 0, "%s: %s", spec, tc_err_name(err));
	tc_team_destroy(team);
}

/* Rings of p = 5 and 6 (sparse: me + 2 is no neighbour; not powers of two:
 * hypercube and gray2binary do not apply; p <= 8, the v-rows' arrays). */
Test(errors_api, table_on_ring_6, .timeout = 120)
{
	run_table("ring:6");
}

Test(errors_api, table_on_ring_5, .timeout = 120)
{
	run_table("ring:5");
}

/* ---- inputs only some ranks get wrong -------------------------------------------- */

struct one_arg {
	struct failure f;
	int give_up; /* the failing rank returns its error instead of retrying */
	int mode;    /* 0: NULL rbuf on rank 2; 1: TC_IN_PLACE on every rank of a reduce */
	atomic_int codes[8];
};

static int one_fn(struct tc_proc *proc, void *argp)
{
	struct one_arg *a = argp;
	const int me = tc_rank(proc), p = tc_size(proc);
	int32_t x[4], y[4] = {-1, -1, -1, -1};
	for (int i = 0; i < 4; i++)
		x[i] = me + i;
	int err;
	if (a->mode == 0) {
		err = tc_allreduce(proc, x, me == 2 ? NULL : y, 4, I32, SUM, NULL);
		if (me == 2 && err != TC_ENULLBUF)
			FAIL(&a->f, "rank 2: %s, not TC_ENULLBUF", tc_err_name(err));
		if (me == 2 && a->give_up)
			return err;
		if (me == 2) /* the retry is the call the others are in */
			err = tc_allreduce(proc, x, y, 4, I32, SUM, NULL);
	} else {
		/* MPI's mistake: TC_IN_PLACE on every rank of a reduce (only the root
		 * may): the non-roots fail at once, the root waits for them. */
		for (int i = 0; i < 4; i++)
			y[i] = x[i];
		err = tc_reduce(proc, IP, y, 4, I32, SUM, 0, NULL);
		if (me && err != TC_EINVAL)
			FAIL(&a->f, "rank %d: %s, not TC_EINVAL", me, tc_err_name(err));
		if (me && a->give_up)
			return err;
		if (me)
			err = tc_reduce(proc, x, NULL, 4, I32, SUM, 0, NULL);
	}
	atomic_store(&a->codes[me], err);
	if (a->give_up)
		return 0;
	if (err)
		FAIL(&a->f, "rank %d: the call after the retry: %s", me, tc_err_name(err));
	if (!err && (a->mode == 0 || me == 0))
		for (int i = 0; i < 4; i++)
			if (y[i] != p * (p - 1) / 2 + p * i)
				FAIL(&a->f, "rank %d: element %d is %d", me, i, y[i]);
	return 0;
}

static void run_one(int mode, int give_up)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "ring:5";
	cfg.timeout_ms = 60000;
	struct tc_team *team = NULL;
	cr_assert_eq(tc_team_create(&cfg, &team), 0);
	struct one_arg a = {.give_up = give_up, .mode = mode};
	int err = tc_run(team, one_fn, &a);
	cr_assert_eq(atomic_load(&a.f.n), 0, "mode %d: %s", mode, a.f.msg);
	if (give_up) {
		/* The ranks that waited for it were aborted, none hung. */
		cr_assert_eq(err, mode == 0 ? TC_ENULLBUF : TC_EINVAL);
		for (int r = 0; r < 5; r++)
			if (mode == 0 ? r != 2 : r == 0)
				cr_assert_eq(atomic_load(&a.codes[r]), TC_EABORTED, "rank %d", r);
	} else {
		cr_assert_eq(err, 0);
	}
	/* And the team runs again. */
	struct one_arg b = {.mode = mode};
	cr_assert_eq(tc_run(team, one_fn, &b), 0);
	cr_assert_eq(atomic_load(&b.f.n), 0, "mode %d, again: %s", mode, b.f.msg);
	tc_team_destroy(team);
}

Test(errors_api, one_rank_null_buffer_then_retry, .timeout = 60)
{
	run_one(0, 0);
}

Test(errors_api, one_rank_null_buffer_gives_up, .timeout = 60)
{
	run_one(0, 1);
}

Test(errors_api, in_place_off_the_root_then_retry, .timeout = 60)
{
	run_one(1, 0);
}

Test(errors_api, in_place_off_the_root_gives_up, .timeout = 60)
{
	run_one(1, 1);
}

/* Scatter's root in place (rbuf TC_IN_PLACE) with sbuf NULL and count > 0:
 * TC_ENULLBUF there at once, in each form (a request not started), the
 * others waiting in their scatter; the root's retry with its buffer
 * completes the call everywhere. */
struct scat_arg {
	struct failure f;
};

static int scat_null_fn(struct tc_proc *proc, void *argp)
{
	struct scat_arg *a = argp;
	const int me = tc_rank(proc), p = tc_size(proc);
	const char *alg = p == 4 ? "shm" : NULL; /* complete:4: the machine's own */
	const struct tc_coll_opts o = {.alg = alg};
	int32_t all[4 * 8], mine[4] = {-1, -1, -1, -1};
	for (int i = 0; i < 4 * p; i++)
		all[i] = 1000 + i;
	int err;
	if (me == 0) {
		tc_request r;
		err = tc_scatter(proc, NULL, (void *)IP, 4, I32, 0, &o);
		if (err != TC_ENULLBUF)
			FAIL(&a->f, "blocking: %s, not TC_ENULLBUF", tc_err_name(err));
		err = tc_iscatter(proc, NULL, (void *)IP, 4, I32, 0, &o, &r);
		if (err != TC_ENULLBUF || tc_wait(proc, &r, NULL) != TC_EINVAL)
			FAIL(&a->f, "nonblocking: %s, not TC_ENULLBUF", tc_err_name(err));
		err = tc_scatter_init(proc, NULL, (void *)IP, 4, I32, 0, &o, &r);
		if (err != TC_ENULLBUF)
			FAIL(&a->f, "persistent: %s, not TC_ENULLBUF", tc_err_name(err));
		err = tc_scatter(proc, all, (void *)IP, 4, I32, 0, &o);
		for (int i = 0; i < 4; i++)
			mine[i] = all[i];
	} else {
		err = tc_scatter(proc, NULL, mine, 4, I32, 0, &o);
	}
	if (err)
		FAIL(&a->f, "rank %d: the scatter after the retry: %s", me, tc_err_name(err));
	for (int i = 0; i < 4; i++)
		if (mine[i] != 1000 + 4 * me + i)
			FAIL(&a->f, "rank %d: element %d is %d", me, i, mine[i]);
	return 0;
}

Test(errors_api, scatter_in_place_null_sbuf_at_the_root, .timeout = 60)
{
	static const char *const specs[] = {"ring:5", "complete:4", "complete:1"};
	for (int s = 0; s < 3; s++) {
		struct tc_team_config cfg;
		tc_team_config_default(&cfg);
		cfg.topology = specs[s];
		cfg.timeout_ms = 60000;
		struct tc_team *team = NULL;
		cr_assert_eq(tc_team_create(&cfg, &team), 0);
		struct scat_arg a = {0};
		int err = tc_run(team, scat_null_fn, &a);
		cr_assert_eq(atomic_load(&a.f.n), 0, "%s: %s", specs[s], a.f.msg);
		cr_assert_eq(err, 0, "%s: %s", specs[s], tc_strerror(err));
		tc_team_destroy(team);
	}
}

/* ---- ranks, threads, handles ----------------------------------------------------- */

Test(errors_api, attach_and_run_conflicts, .timeout = 30)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "ring:3";
	struct tc_team *team = NULL;
	cr_assert_eq(tc_team_create(&cfg, &team), 0);
	struct tc_proc *a = NULL, *b = NULL;
	cr_assert_eq(tc_attach(team, 3, &a), TC_ERANK);
	cr_assert_eq(tc_attach(team, -1, &a), TC_ERANK);
	cr_assert_eq(tc_attach(NULL, 0, &a), TC_EINVAL);
	cr_assert_eq(tc_attach(team, 0, NULL), TC_EINVAL);
	cr_assert_eq(tc_attach(team, 0, &a), 0);
	/* A second thread (or the same one) taking an attached rank: detected. */
	cr_assert_eq(tc_attach(team, 0, &b), TC_EBUSY);
	/* tc_run while a rank is attached: detected. */
	cr_assert_eq(tc_run(team, table_fn, NULL), TC_EBUSY);
	cr_assert_eq(tc_run(NULL, table_fn, NULL), TC_EINVAL);
	cr_assert_eq(tc_run(team, NULL, NULL), TC_EINVAL);
	cr_assert_eq(tc_detach(NULL), TC_EINVAL);
	cr_assert_eq(tc_detach(a), 0);
	tc_team_destroy(team);
	tc_team_destroy(NULL); /* a no-op */
}

/* ---- what the refusals say (tc_error_detail) ------------------------------------ */

static int band_double_fn(struct tc_proc *proc, void *arg)
{
	double x[2] = {1, 2}, y[2];
	int *ok = arg;
	int err = tc_allreduce(proc, x, y, 2, TC_DOUBLE, TC_OP_BAND, NULL);
	/* The same code on every rank, and the detail names the datatype. */
	if (err == TC_ENOTSUP && strstr(tc_error_detail(), "band needs an integer datatype") &&
	    strstr(tc_error_detail(), "double"))
		atomic_fetch_add((atomic_int *)ok, 1);
	return 0;
}

/* Runs fn on a team over spec (fibres when fibres), every rank adding 1
 * to the counter it gets when all it checked held: every rank must. */
static void every_rank_ok(const char *spec, int fibres, tc_spmd_fn fn)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	if (fibres)
		cfg.exec = TC_EXEC_FIBRES;
	struct tc_team *team = NULL;
	cr_assert_eq(tc_team_create(&cfg, &team), 0);
	atomic_int ok = 0;
	cr_assert_eq(tc_run(team, fn, &ok), 0);
	cr_assert_eq(atomic_load(&ok), tc_team_size(team), "%d of %d ranks", atomic_load(&ok),
	             tc_team_size(team));
	tc_team_destroy(team);
}

Test(errors_api, band_on_double_names_the_datatype, .timeout = 30)
{
	double a = 1, b = 2;
	cr_assert_eq(tc_reduce_local(&a, &b, 1, TC_DOUBLE, TC_OP_BAND, NULL), TC_ENOTSUP);
	cr_assert(strstr(tc_error_detail(), "integer datatype (double is floating point)"), "%s",
	          tc_error_detail());
	every_rank_ok("ring:3", 0, band_double_fn);
}

/* A non-commutative operator with a named algorithm that does not combine
 * in rank order: TC_ENOTSUP on every rank, the detail naming the
 * restriction and the algorithms that keep the order there; again when the
 * call is made a second time (the refusal kept by the schedule cache). */
static int noncomm_fn(struct tc_proc *proc, void *arg)
{
	int32_t x[4] = {1, 2, 3, 4}, y[4];
	static const struct tc_coll_opts ring = {.alg = "ring", .user_op = &nc_op};
	static const struct tc_coll_opts binomial = {.alg = "binomial", .user_op = &nc_op};
	int good = 0;
	for (int k = 0; k < 2; k++) {
		good += tc_allreduce(proc, x, y, 4, I32, TC_OP_USER, &ring) == TC_ENOTSUP &&
		        strstr(tc_error_detail(), "'ring' of allreduce does not combine in rank order") &&
		        strstr(tc_error_detail(), "algorithms that do on ring:3: ") &&
		        strstr(tc_error_detail(), "linear");
		good += tc_reduce(proc, x, y, 4, I32, TC_OP_USER, 0, &binomial) == TC_ENOTSUP &&
		        strstr(tc_error_detail(), "'binomial' of reduce does not combine") &&
		        strstr(tc_error_detail(), "linear");
	}
	if (good == 4)
		atomic_fetch_add((atomic_int *)arg, 1);
	return 0;
}

Test(errors_api, noncommutative_refusal_names_the_restriction, .timeout = 30)
{
	every_rank_ok("ring:3", 0, noncomm_fn);
}

/* On fibres each rank's detail is its own: the ranks of one CPU, run in
 * turn while each lets the others run (tc_yield), each make a refusal of
 * their own words, and each finds its own words afterwards, not those of
 * the rank that ran last. */
static int own_detail_fn(struct tc_proc *proc, void *arg)
{
	const int me = tc_rank(proc), peer = (me + 1) % tc_size(proc);
	char buf[8] = {0}, want[32];
	int good = 0;
	snprintf(want, sizeof want, "send tag %d:", -100 - me);
	for (int k = 0; k < 3; k++) {
		good += tc_send_tag(proc, peer, -100 - me, buf, sizeof buf) == TC_EINVAL;
		for (int i = 0; i < 8; i++)
			tc_yield(proc);
		good += strstr(tc_error_detail(), want) != NULL;
	}
	if (good == 6)
		atomic_fetch_add((atomic_int *)arg, 1);
	return 0;
}

Test(errors_api, detail_is_the_ranks_own_on_fibres, .timeout = 30)
{
	every_rank_ok("ring:16", 1, own_detail_fn);
}

/* After a call that fails, tc_error_detail() is that call's words or "":
 * never those of an earlier call (every call that can fail clears it as it
 * starts).  Each pair: a refusal that says why, then one that has nothing
 * to say, on a rank (point-to-point, a request, a collective: the same on
 * every rank) and off a team (the local calls, the predictor, the
 * calibration). */
static int fresh_detail_fn(struct tc_proc *proc, void *arg)
{
	atomic_int *bad = arg;
	const int peer = (tc_rank(proc) + 1) % tc_size(proc);
	char buf[8] = {0};
	double x[2] = {1, 2}, y[2];
	tc_request never;
	memset(&never, 0, sizeof never); /* never started */
	int said = tc_send_tag(proc, peer, -5, buf, sizeof buf) == TC_EINVAL && *tc_error_detail();
	int quiet = tc_send(proc, peer, NULL, sizeof buf) == TC_ENULLBUF && !*tc_error_detail();
	said += tc_wait(proc, &never, NULL) == TC_EINVAL && *tc_error_detail();
	quiet += tc_wait(proc, NULL, NULL) == TC_EINVAL && !*tc_error_detail();
	said += tc_allreduce(proc, x, y, 2, TC_DOUBLE, TC_OP_BAND, NULL) == TC_ENOTSUP &&
	        *tc_error_detail();
	quiet += tc_allreduce(proc, x, y, 2, (enum tc_dtype)99, TC_OP_SUM, NULL) == TC_EINVAL &&
	         !*tc_error_detail();
	if (said != 3 || quiet != 3)
		atomic_fetch_add(bad, 1);
	return 0;
}

Test(errors_api, detail_is_the_failed_calls_own, .timeout = 30)
{
	double a = 1, b = 2;
	cr_assert_eq(tc_reduce_local(&a, &b, 1, TC_DOUBLE, TC_OP_BAND, NULL), TC_ENOTSUP);
	cr_assert(*tc_error_detail());
	cr_assert_eq(tc_reduce_local(&a, &b, 1, (enum tc_dtype)99, TC_OP_SUM, NULL), TC_EINVAL);
	cr_assert_str_eq(tc_error_detail(), "");

	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "ring:3";
	cfg.stack_bytes = 1; /* below PTHREAD_STACK_MIN: named */
	struct tc_team *team = NULL;
	cr_assert_eq(tc_team_create(&cfg, &team), TC_EINVAL);
	cr_assert(*tc_error_detail());
	struct tc_topo *t = NULL;
	cr_assert_eq(tc_topo_parse(NULL, &t), TC_EINVAL);
	cr_assert_str_eq(tc_error_detail(), "");

	cr_assert_eq(tc_topo_parse("mesh:3x5", &t), 0);
	struct tc_model md;
	tc_model_default(&md);
	cr_assert_eq(tc_alg_applies(t, &md, TC_COLL_ALLREDUCE, "ring"), TC_ENOTSUP);
	cr_assert(*tc_error_detail());
	int path[4];
	cr_assert_eq(tc_topo_route(t, 0, 99, path, 4), TC_ERANK);
	cr_assert_str_eq(tc_error_detail(), "");
	tc_topo_destroy(t);

	struct tc_calibration c;
	memset(&c, 0, sizeof c);
	c.npoints = -1;
	cr_assert_eq(tc_calibration_model(&c, 8, &md, NULL), TC_EINVAL);
	cr_assert(strstr(tc_error_detail(), "npoints -1"), "%s", tc_error_detail());
	cr_assert_eq(tc_calibration_read(NULL, &c), TC_EINVAL);
	cr_assert_str_eq(tc_error_detail(), "");

	cfg.stack_bytes = 0;
	cr_assert_eq(tc_team_create(&cfg, &team), 0);
	atomic_int bad = 0;
	cr_assert_eq(tc_run(team, fresh_detail_fn, &bad), 0);
	cr_assert_eq(atomic_load(&bad), 0, "%d ranks read an earlier call's detail", atomic_load(&bad));
	tc_team_destroy(team);
}

Test(errors_api, inapplicable_algorithm_names_the_restriction)
{
	struct tc_topo *t = NULL;
	struct tc_model md;
	tc_model_default(&md);
	cr_assert_eq(tc_topo_parse("mesh:3x5", &t), 0);
	cr_assert_eq(tc_alg_applies(t, &md, TC_COLL_ALLREDUCE, "ring"), TC_ENOTSUP);
	const char *d = tc_error_detail();
	cr_assert(strstr(d, "algorithm 'ring' of allreduce does not apply to mesh:3x5"), "%s", d);
	cr_assert(strstr(d, "even side"), "%s", d);
	cr_assert(strstr(d, "algorithms that apply: hypercube, mesh, reduce_bcast, linear"), "%s", d);
	tc_topo_destroy(t);
	cr_assert_eq(tc_topo_parse("complete:4", &t), 0);
	cr_assert_eq(tc_alg_applies(t, &md, TC_COLL_BCAST, "ring_rd"), TC_ENOTSUP);
	cr_assert(strstr(tc_error_detail(), "it runs on ring, chain (not complete)"), "%s",
	          tc_error_detail());
	cr_assert_eq(tc_alg_applies(t, &md, TC_COLL_BCAST, "hypercube"), 0);
	tc_topo_destroy(t);
	cr_assert_eq(tc_topo_parse("ring:4", &t), 0);
	cr_assert_eq(tc_alg_applies(t, &md, TC_COLL_BCAST, "dot_allport"), TC_ENOTSUP);
	cr_assert(strstr(tc_error_detail(), "all-port"), "%s", tc_error_detail());
	tc_topo_destroy(t);
}

/* ---- every rank returns the same code, run after run ---------------------------- */

/* Each rank returns the code of the same bad call from its SPMD function:
 * the first to fail aborts the team, and the others must still return the
 * call's own code (its checks come before the abort's), not
 * TC_EABORTED, however the ranks are scheduled. */
struct same_arg {
	int which;
	_Atomic int rc[8];
};

static const struct tc_coll_opts o_ring_rd = {.alg = "ring_rd"};

static int same_fn(struct tc_proc *proc, void *argp)
{
	struct same_arg *a = argp;
	int32_t buf[4] = {0}, out[4];
	int err;
	switch (a->which) {
	case 0: /* an algorithm that does not apply to the topology */
		err = tc_bcast(proc, buf, 4, I32, 0, &o_ring_rd);
		break;
	case 1: /* another: a hypercube's broadcast on a ring of 5 */
		err = tc_bcast(proc, buf, 4, I32, 0, &o_hc);
		break;
	default: /* an unknown name */
		err = tc_allreduce(proc, buf, out, 4, I32, SUM, &o_badalg);
		break;
	}
	atomic_store(&a->rc[tc_rank(proc)], err);
	return err;
}

static void same_code_every_run(const char *spec, enum tc_exec exec, int which, int want)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.exec = exec;
	cfg.timeout_ms = 60000;
	struct tc_team *team = NULL;
	cr_assert_eq(tc_team_create(&cfg, &team), 0);
	const int p = tc_team_size(team);
	for (int run = 0; run < 50; run++) {
		struct same_arg a = {.which = which};
		int err = tc_run(team, same_fn, &a);
		cr_assert_eq(err, want, "%s run %d: tc_run %s", spec, run, tc_err_name(err));
		for (int r = 0; r < p; r++)
			cr_assert_eq(atomic_load(&a.rc[r]), want, "%s run %d: rank %d: %s, not %s", spec,
			             run, r, tc_err_name(atomic_load(&a.rc[r])), tc_err_name(want));
	}
	tc_team_destroy(team);
}

Test(errors_api, same_code_on_every_rank_threads, .timeout = 120)
{
	same_code_every_run("complete:4", TC_EXEC_THREADS, 0, TC_ENOTSUP);
	same_code_every_run("ring:5", TC_EXEC_THREADS, 1, TC_ENOTSUP);
	same_code_every_run("complete:4", TC_EXEC_THREADS, 2, TC_EALG);
}

Test(errors_api, same_code_on_every_rank_fibres, .timeout = 120)
{
	same_code_every_run("complete:4", TC_EXEC_FIBRES, 0, TC_ENOTSUP);
	same_code_every_run("ring:5", TC_EXEC_FIBRES, 1, TC_ENOTSUP);
}
