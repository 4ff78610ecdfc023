/* SPDX-License-Identifier: MIT */
/*
 * mpi_icoll.c - nonblocking (MPI_I...) and persistent (..._init,
 * MPI_Start, MPI_Startall) collectives of the MPI layer, each result
 * checked, on MPI_COMM_WORLD, a split communicator and MPI_COMM_SELF; a
 * nonblocking call overlapping point-to-point messages; the variable-count
 * forms (MPI_Igatherv, MPI_Iscatterv, MPI_Iallgatherv, MPI_Ialltoallv,
 * MPI_Ialltoallw and their _init), contiguous and strided, several
 * outstanding and persistent ones restarted, each against the blocking
 * call's result; MPI_Ireduce_scatter, MPI_Reduce_scatter_init and the
 * block forms (variable and equal counts, in place, restarted) against
 * the blocking MPI_Reduce_scatter and MPI_Reduce_scatter_block.
 * Exit status 0 when all hold; each failure printed.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static void run(MPI_Comm comm, const char *name)
{
	int p, r;
	MPI_Comm_size(comm, &p);
	MPI_Comm_rank(comm, &r);
	MPI_Request q[8];
	int n = 0;

	/* Several calls outstanding at once, completed in reverse order. */
	long s = r + 1, sum = -1, mx = -1, sc = -1;
	double b = r == 0 ? 2.5 : 0.0;
	int *ga = malloc(sizeof(int) * (size_t)p * 2), *aa = malloc(sizeof(int) * (size_t)p * 2);
	int *ts = malloc(sizeof(int) * (size_t)p), *tr = malloc(sizeof(int) * (size_t)p);
	int pair[2] = {r, 7 * r};
	for (int i = 0; i < p; i++)
		ts[i] = 100 * r + i;
	MPI_Iallreduce(&s, &sum, 1, MPI_LONG, MPI_SUM, comm, &q[n++]);
	MPI_Ibcast(&b, 1, MPI_DOUBLE, 0, comm, &q[n++]);
	MPI_Ireduce(&s, &mx, 1, MPI_LONG, MPI_MAX, p - 1, comm, &q[n++]);
	MPI_Iscan(&s, &sc, 1, MPI_LONG, MPI_SUM, comm, &q[n++]);
	MPI_Iallgather(pair, 2, MPI_INT, aa, 2, MPI_INT, comm, &q[n++]);
	MPI_Igather(pair, 2, MPI_INT, ga, 2, MPI_INT, 0, comm, &q[n++]);
	MPI_Ialltoall(ts, 1, MPI_INT, tr, 1, MPI_INT, comm, &q[n++]);
	MPI_Ibarrier(comm, &q[n++]);
	for (int i = n - 1; i >= 0; i--)
		MPI_Wait(&q[i], MPI_STATUS_IGNORE);
	CHECK(sum == (long)p * (p + 1) / 2, "%s Iallreduce %ld", name, sum);
	CHECK(b == 2.5, "%s Ibcast %g", name, b);
	CHECK(r != p - 1 || mx == p, "%s Ireduce %ld", name, mx);
	CHECK(sc == (long)(r + 1) * (r + 2) / 2, "%s Iscan %ld", name, sc);
	for (int i = 0; i < p; i++) {
		CHECK(aa[2 * i] == i && aa[2 * i + 1] == 7 * i, "%s Iallgather [%d]", name, i);
		CHECK(r != 0 || (ga[2 * i] == i && ga[2 * i + 1] == 7 * i), "%s Igather [%d]", name, i);
		CHECK(tr[i] == 100 * i + r, "%s Ialltoall [%d] = %d", name, i, tr[i]);
	}

	/* Persistent: the same requests started three times, the buffers'
	 * contents at each start used. */
	int x = 0, y = -1, blk = -1, all[64];
	int *sbuf = malloc(sizeof(int) * (size_t)p);
	MPI_Request pq[3];
	MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &pq[0]);
	MPI_Scatter_init(sbuf, 1, MPI_INT, &blk, 1, MPI_INT, 0, comm, MPI_INFO_NULL, &pq[1]);
	MPI_Barrier_init(comm, MPI_INFO_NULL, &pq[2]);
	for (int it = 0; it < 3; it++) {
		x = r * it;
		for (int i = 0; i < p; i++)
			sbuf[i] = 10 * it + i;
		MPI_Startall(3, pq);
		int flag = 0;
		while (!flag)
			MPI_Testall(3, pq, &flag, MPI_STATUSES_IGNORE);
		CHECK(pq[0] != MPI_REQUEST_NULL, "%s persistent request freed by completion", name);
		CHECK(y == it * p * (p - 1) / 2, "%s Allreduce_init start %d: %d", name, it, y);
		CHECK(blk == 10 * it + r, "%s Scatter_init start %d: %d", name, it, blk);
	}
	if (p <= 64) {
		MPI_Request g;
		MPI_Allgather_init(&r, 1, MPI_INT, all, 1, MPI_INT, comm, MPI_INFO_NULL, &g);
		MPI_Start(&g);
		MPI_Wait(&g, MPI_STATUS_IGNORE);
		for (int i = 0; i < p; i++)
			CHECK(all[i] == i, "%s Allgather_init [%d] = %d", name, i, all[i]);
		MPI_Request_free(&g);
		CHECK(g == MPI_REQUEST_NULL, "%s Request_free", name);
	}
	for (int i = 0; i < 3; i++)
		MPI_Request_free(&pq[i]);
	free(sbuf);
	free(ga);
	free(aa);
	free(ts);
	free(tr);
}

/* ---------------------------------------------------------------------
 * The variable-count forms against the blocking ones.  Block counts are
 * 0, 1 or 2 ints, placed in reverse rank order with a gap of one int
 * after each, so that displacements matter and gaps must stay untouched.
 */
enum vkind {
	K_GATHERV,
	K_SCATTERV,
	K_ALLGATHERV,
	K_ALLTOALLV,
	K_ALLTOALLW,
	K_ALLGATHERV_STRIDED,
	K_GATHERV_STRIDED,
	NKINDS
};
static const char *const kname[NKINDS] = {"gatherv",
                                          "scatterv",
                                          "allgatherv",
                                          "alltoallv",
                                          "alltoallw",
                                          "allgatherv strided send",
                                          "gatherv strided receive"};

/* An int with the extent of two: every other int of a buffer. */
static MPI_Datatype strided;

struct vcase {
	int kind, p, r, root;
	int *scnt, *sdsp, *rcnt, *rdsp; /* p entries each */
	int scount, rcount;
	MPI_Datatype *sts, *rts; /* the w form's */
	int *sb, *rb, *ref;      /* len ints each */
	int len;
};

/* The ints rank i sends rank j, for counts of variant ci. */
static int vcnt(int i, int j, int ci)
{
	return (i + 2 * j + ci) % 3;
}

static int vval(int i, int j, int k, int it)
{
	return 100000 * it + 1000 * i + 10 * j + k;
}

/* Displacements of p blocks of cnt[i] * scale ints in reverse order, each
 * followed by a gap of one int; the ints they span. */
static int rev_displs(int p, const int *cnt, int scale, int *dsp)
{
	int off = 0;
	for (int i = p - 1; i >= 0; i--) {
		dsp[i] = off;
		off += cnt[i] * scale + 1;
	}
	return off;
}

static void vsetup(struct vcase *c, int kind, MPI_Comm comm, int ci)
{
	memset(c, 0, sizeof *c);
	c->kind = kind;
	MPI_Comm_size(comm, &c->p);
	MPI_Comm_rank(comm, &c->r);
	int p = c->p, r = c->r;
	c->root = kind == K_SCATTERV ? 0 : p - 1;
	size_t n = (size_t)p;
	c->scnt = calloc(n, sizeof(int));
	c->sdsp = calloc(n, sizeof(int));
	c->rcnt = calloc(n, sizeof(int));
	c->rdsp = calloc(n, sizeof(int));
	c->sts = calloc(n, sizeof(MPI_Datatype));
	c->rts = calloc(n, sizeof(MPI_Datatype));
	c->len = 8 * p + 8;
	c->sb = malloc(sizeof(int) * (size_t)c->len);
	c->rb = malloc(sizeof(int) * (size_t)c->len);
	c->ref = malloc(sizeof(int) * (size_t)c->len);
	for (int i = 0; i < p; i++) {
		switch (kind) {
		case K_SCATTERV:
			c->scnt[i] = vcnt(0, i, ci);
			break;
		case K_ALLTOALLV:
		case K_ALLTOALLW:
			c->scnt[i] = vcnt(r, i, ci);
			c->rcnt[i] = vcnt(i, r, ci);
			break;
		default:
			c->rcnt[i] = vcnt(i, 0, ci);
		}
		c->sts[i] = i % 2 ? strided : MPI_INT;
		c->rts[i] = MPI_INT;
	}
	c->scount = vcnt(r, 0, ci);
	c->rcount = vcnt(0, r, ci);
	rev_displs(p, c->scnt, kind == K_ALLTOALLW ? 2 : 1, c->sdsp);
	rev_displs(p, c->rcnt, 1, c->rdsp);
	if (kind == K_ALLTOALLW)
		for (int i = 0; i < p; i++) {
			c->sdsp[i] *= (int)sizeof(int);
			c->rdsp[i] *= (int)sizeof(int);
		}
	if (kind == K_GATHERV_STRIDED)
		rev_displs(p, c->rcnt, 1, c->rdsp); /* in extents of strided */
}

static void vfree(struct vcase *c)
{
	free(c->scnt);
	free(c->sdsp);
	free(c->rcnt);
	free(c->rdsp);
	free(c->sts);
	free(c->rts);
	free(c->sb);
	free(c->rb);
	free(c->ref);
}

/* The send buffer for values of round it; the receive buffers cleared. */
static void vfill(struct vcase *c, int it)
{
	for (int i = 0; i < c->len; i++) {
		c->sb[i] = -3;
		c->rb[i] = c->ref[i] = -7;
	}
	int r = c->r;
	switch (c->kind) {
	case K_SCATTERV:
		for (int j = 0; j < c->p; j++)
			for (int k = 0; k < c->scnt[j]; k++)
				c->sb[c->sdsp[j] + k] = vval(r, j, k, it);
		break;
	case K_ALLTOALLV:
	case K_ALLTOALLW:
		for (int j = 0; j < c->p; j++) {
			int w = c->kind == K_ALLTOALLW;
			int at = w ? c->sdsp[j] / (int)sizeof(int) : c->sdsp[j];
			int step = w && j % 2 ? 2 : 1;
			for (int k = 0; k < c->scnt[j]; k++)
				c->sb[at + step * k] = vval(r, j, k, it);
		}
		break;
	case K_ALLGATHERV_STRIDED:
		for (int k = 0; k < c->scount; k++)
			c->sb[2 * k] = vval(r, 0, k, it);
		break;
	default:
		for (int k = 0; k < c->scount; k++)
			c->sb[k] = vval(r, 0, k, it);
	}
}

/* The nonblocking (persistent: _init) form into c->rb. */
static int vstart(struct vcase *c, MPI_Comm comm, int persistent, MPI_Request *q)
{
	const MPI_Info in = MPI_INFO_NULL;
	switch (c->kind) {
	case K_GATHERV:
		return persistent ? MPI_Gatherv_init(c->sb, c->scount, MPI_INT, c->rb, c->rcnt,
		                                     c->rdsp, MPI_INT, c->root, comm, in, q)
		                  : MPI_Igatherv(c->sb, c->scount, MPI_INT, c->rb, c->rcnt, c->rdsp,
		                                 MPI_INT, c->root, comm, q);
	case K_GATHERV_STRIDED:
		return persistent ? MPI_Gatherv_init(c->sb, c->scount, MPI_INT, c->rb, c->rcnt,
		                                     c->rdsp, strided, c->root, comm, in, q)
		                  : MPI_Igatherv(c->sb, c->scount, MPI_INT, c->rb, c->rcnt, c->rdsp,
		                                 strided, c->root, comm, q);
	case K_SCATTERV:
		return persistent ? MPI_Scatterv_init(c->sb, c->scnt, c->sdsp, MPI_INT, c->rb,
		                                      c->rcount, MPI_INT, c->root, comm, in, q)
		                  : MPI_Iscatterv(c->sb, c->scnt, c->sdsp, MPI_INT, c->rb,
		                                  c->rcount, MPI_INT, c->root, comm, q);
	case K_ALLGATHERV:
		return persistent ? MPI_Allgatherv_init(c->sb, c->scount, MPI_INT, c->rb, c->rcnt,
		                                        c->rdsp, MPI_INT, comm, in, q)
		                  : MPI_Iallgatherv(c->sb, c->scount, MPI_INT, c->rb, c->rcnt,
		                                    c->rdsp, MPI_INT, comm, q);
	case K_ALLGATHERV_STRIDED:
		return persistent ? MPI_Allgatherv_init(c->sb, c->scount, strided, c->rb, c->rcnt,
		                                        c->rdsp, MPI_INT, comm, in, q)
		                  : MPI_Iallgatherv(c->sb, c->scount, strided, c->rb, c->rcnt,
		                                    c->rdsp, MPI_INT, comm, q);
	case K_ALLTOALLV:
		return persistent ? MPI_Alltoallv_init(c->sb, c->scnt, c->sdsp, MPI_INT, c->rb,
		                                       c->rcnt, c->rdsp, MPI_INT, comm, in, q)
		                  : MPI_Ialltoallv(c->sb, c->scnt, c->sdsp, MPI_INT, c->rb, c->rcnt,
		                                   c->rdsp, MPI_INT, comm, q);
	case K_ALLTOALLW:
		return persistent ? MPI_Alltoallw_init(c->sb, c->scnt, c->sdsp, c->sts, c->rb,
		                                       c->rcnt, c->rdsp, c->rts, comm, in, q)
		                  : MPI_Ialltoallw(c->sb, c->scnt, c->sdsp, c->sts, c->rb, c->rcnt,
		                                   c->rdsp, c->rts, comm, q);
	}
	return MPI_ERR_ARG;
}

/* The blocking form into c->ref. */
static int vblocking(struct vcase *c, MPI_Comm comm)
{
	switch (c->kind) {
	case K_GATHERV:
	case K_GATHERV_STRIDED:
		return MPI_Gatherv(c->sb, c->scount, MPI_INT, c->ref, c->rcnt, c->rdsp,
		                   c->kind == K_GATHERV ? MPI_INT : strided, c->root, comm);
	case K_SCATTERV:
		return MPI_Scatterv(c->sb, c->scnt, c->sdsp, MPI_INT, c->ref, c->rcount, MPI_INT,
		                    c->root, comm);
	case K_ALLGATHERV:
	case K_ALLGATHERV_STRIDED:
		return MPI_Allgatherv(c->sb, c->scount, c->kind == K_ALLGATHERV ? MPI_INT : strided,
		                      c->ref, c->rcnt, c->rdsp, MPI_INT, comm);
	case K_ALLTOALLV:
		return MPI_Alltoallv(c->sb, c->scnt, c->sdsp, MPI_INT, c->ref, c->rcnt, c->rdsp,
		                     MPI_INT, comm);
	case K_ALLTOALLW:
		return MPI_Alltoallw(c->sb, c->scnt, c->sdsp, c->sts, c->ref, c->rcnt, c->rdsp,
		                     c->rts, comm);
	}
	return MPI_ERR_ARG;
}

/* c->rb against the blocking call's result, and a block of it against the
 * values sent (so that both cannot be wrong alike). */
static void vcheck(struct vcase *c, const char *name, const char *how, int it)
{
	int bad = -1;
	for (int i = 0; i < c->len && bad < 0; i++)
		if (c->rb[i] != c->ref[i])
			bad = i;
	CHECK(bad < 0, "%s %s %s round %d: [%d] = %d, blocking %d", name, how, kname[c->kind], it,
	      bad, bad < 0 ? 0 : c->rb[bad], bad < 0 ? 0 : c->ref[bad]);
	int from = c->p - 1, want = -1, got = -1;
	switch (c->kind) {
	case K_ALLGATHERV:
		if (c->rcnt[from] > 0)
			got = c->rb[c->rdsp[from]], want = vval(from, 0, 0, it);
		break;
	case K_ALLTOALLV:
		if (c->rcnt[from] > 0)
			got = c->rb[c->rdsp[from]], want = vval(from, c->r, 0, it);
		break;
	case K_SCATTERV:
		if (c->rcount > 0)
			got = c->rb[0], want = vval(0, c->r, 0, it);
		break;
	}
	CHECK(got == want, "%s %s %s round %d: %d, sent %d", name, how, kname[c->kind], it, got, want);
}

static void vcalls(MPI_Comm comm, const char *name)
{
	struct vcase c[NKINDS];
	MPI_Request q[NKINDS];
	/* Nonblocking: all kinds outstanding at once, completed in reverse
	 * order (Wait) or in any order (Waitany), for two sets of counts. */
	for (int ci = 0; ci < 2; ci++) {
		for (int k = 0; k < NKINDS; k++) {
			vsetup(&c[k], k, comm, ci);
			vfill(&c[k], ci);
			int rc = vstart(&c[k], comm, 0, &q[k]);
			CHECK(rc == MPI_SUCCESS, "%s I%s: error %d", name, kname[k], rc);
		}
		if (ci == 0) {
			for (int k = NKINDS - 1; k >= 0; k--)
				MPI_Wait(&q[k], MPI_STATUS_IGNORE);
		} else {
			for (int left = NKINDS; left > 0; left--) {
				int idx = -1;
				MPI_Waitany(NKINDS, q, &idx, MPI_STATUS_IGNORE);
				CHECK(idx >= 0 && idx < NKINDS, "%s Waitany index %d", name, idx);
			}
		}
		for (int k = 0; k < NKINDS; k++) {
			CHECK(q[k] == MPI_REQUEST_NULL, "%s I%s request not freed", name, kname[k]);
			vblocking(&c[k], comm);
			vcheck(&c[k], name, "nonblocking", ci);
			vfree(&c[k]);
		}
	}
	/* Persistent: made once, started three times with new data, all
	 * outstanding at once. */
	for (int k = 0; k < NKINDS; k++) {
		vsetup(&c[k], k, comm, 1);
		int rc = vstart(&c[k], comm, 1, &q[k]);
		CHECK(rc == MPI_SUCCESS, "%s %s_init: error %d", name, kname[k], rc);
	}
	for (int it = 0; it < 3; it++) {
		for (int k = 0; k < NKINDS; k++)
			vfill(&c[k], it);
		MPI_Startall(NKINDS, q);
		MPI_Waitall(NKINDS, q, MPI_STATUSES_IGNORE);
		for (int k = 0; k < NKINDS; k++) {
			CHECK(q[k] != MPI_REQUEST_NULL, "%s %s_init freed by completion", name,
			      kname[k]);
			vblocking(&c[k], comm);
			vcheck(&c[k], name, "persistent", it);
		}
	}
	for (int k = 0; k < NKINDS; k++) {
		MPI_Request_free(&q[k]);
		vfree(&c[k]);
	}
}

/* ---------------------------------------------------------------------
 * Reduce-scatter, nonblocking and persistent, against the blocking calls:
 * counts i % 3 (0, 1, 2: unequal from p = 2 on) and 2 for every rank
 * (equal), ints summed and doubles maxed, in place and not. */
static void rs_fill(int *si, double *sd, int n, int r, int it)
{
	for (int k = 0; k < n; k++) {
		si[k] = 100 * r + k + it;
		sd[k] = (double)((r * 7 + k * 3 + it) % 11);
	}
}

static void rscalls(MPI_Comm comm, const char *name)
{
	int p, r;
	MPI_Comm_size(comm, &p);
	MPI_Comm_rank(comm, &r);
	int *cnt = malloc(sizeof(int) * (size_t)p), *eq = malloc(sizeof(int) * (size_t)p);
	int n = 0, before = 0;
	for (int i = 0; i < p; i++) {
		cnt[i] = i % 3;
		eq[i] = 2;
		if (i < r)
			before += cnt[i];
		n += cnt[i];
	}
	int ne = 2 * p, mine = cnt[r];
	int *si = malloc(sizeof(int) * (size_t)(ne + 1)), *ip = malloc(sizeof(int) * (size_t)(ne + 1));
	double *sd = malloc(sizeof(double) * (size_t)(ne + 1));
	int oi[3], ri[3], ob[2], rb[2];
	double od[3], rd[3];
	for (int it = 0; it < 2; it++) {
		/* Several outstanding, completed in reverse order. */
		MPI_Request q[4];
		rs_fill(si, sd, ne, r, it);
		for (int k = 0; k < 3; k++)
			oi[k] = ri[k] = ob[k % 2] = rb[k % 2] = -7, od[k] = rd[k] = -7.0;
		MPI_Ireduce_scatter(si, oi, cnt, MPI_INT, MPI_SUM, comm, &q[0]);
		MPI_Ireduce_scatter(sd, od, cnt, MPI_DOUBLE, MPI_MAX, comm, &q[1]);
		MPI_Ireduce_scatter_block(si, ob, 2, MPI_INT, MPI_SUM, comm, &q[2]);
		memcpy(ip, si, sizeof(int) * (size_t)ne);
		MPI_Ireduce_scatter(MPI_IN_PLACE, ip, eq, MPI_INT, MPI_SUM, comm, &q[3]);
		for (int i = 3; i >= 0; i--)
			MPI_Wait(&q[i], MPI_STATUS_IGNORE);
		MPI_Reduce_scatter(si, ri, cnt, MPI_INT, MPI_SUM, comm);
		MPI_Reduce_scatter(sd, rd, cnt, MPI_DOUBLE, MPI_MAX, comm);
		MPI_Reduce_scatter_block(si, rb, 2, MPI_INT, MPI_SUM, comm);
		for (int k = 0; k < mine; k++) {
			int want = 100 * p * (p - 1) / 2 + p * (before + k + it);
			CHECK(oi[k] == ri[k] && ri[k] == want,
			      "%s Ireduce_scatter [%d] = %d, blocking %d, want %d", name, k, oi[k],
			      ri[k], want);
			CHECK(od[k] == rd[k], "%s Ireduce_scatter MAX [%d] = %g, blocking %g", name,
			      k, od[k], rd[k]);
		}
		CHECK(mine == 2 || oi[mine] == -7, "%s Ireduce_scatter wrote past its part", name);
		for (int k = 0; k < 2; k++) {
			CHECK(ob[k] == rb[k], "%s Ireduce_scatter_block [%d] = %d, blocking %d",
			      name, k, ob[k], rb[k]);
			CHECK(ip[k] == rb[k], "%s Ireduce_scatter in place [%d] = %d, blocking %d",
			      name, k, ip[k], rb[k]);
		}
	}
	/* Persistent, started three times with new data each time. */
	MPI_Request pq[2];
	int rc = MPI_Reduce_scatter_init(si, oi, cnt, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &pq[0]);
	CHECK(rc == MPI_SUCCESS, "%s Reduce_scatter_init: error %d", name, rc);
	rc = MPI_Reduce_scatter_block_init(si, ob, 2, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &pq[1]);
	CHECK(rc == MPI_SUCCESS, "%s Reduce_scatter_block_init: error %d", name, rc);
	for (int it = 0; it < 3; it++) {
		rs_fill(si, sd, ne, r, 10 + it);
		MPI_Startall(2, pq);
		MPI_Waitall(2, pq, MPI_STATUSES_IGNORE);
		MPI_Reduce_scatter(si, ri, cnt, MPI_INT, MPI_SUM, comm);
		MPI_Reduce_scatter_block(si, rb, 2, MPI_INT, MPI_SUM, comm);
		for (int k = 0; k < mine; k++)
			CHECK(oi[k] == ri[k], "%s Reduce_scatter_init start %d [%d] = %d, blocking %d",
			      name, it, k, oi[k], ri[k]);
		for (int k = 0; k < 2; k++)
			CHECK(ob[k] == rb[k],
			      "%s Reduce_scatter_block_init start %d [%d] = %d, blocking %d", name,
			      it, k, ob[k], rb[k]);
	}
	MPI_Request_free(&pq[0]);
	MPI_Request_free(&pq[1]);
	free(cnt);
	free(eq);
	free(si);
	free(ip);
	free(sd);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	run(MPI_COMM_WORLD, "world");
	run(MPI_COMM_SELF, "self");
	MPI_Comm half;
	MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, &half);
	run(half, "half");
	MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &strided);
	MPI_Type_commit(&strided);
	vcalls(MPI_COMM_WORLD, "world");
	vcalls(MPI_COMM_SELF, "self");
	vcalls(half, "half");
	MPI_Type_free(&strided);
	rscalls(MPI_COMM_WORLD, "world");
	rscalls(MPI_COMM_SELF, "self");
	rscalls(half, "half");

	/* A nonblocking allreduce while the ranks exchange messages. */
	if (size > 1) {
		int v = rank, t = -1, got = -1;
		MPI_Request q;
		MPI_Iallreduce(&v, &t, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &q);
		MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT,
		             (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Wait(&q, MPI_STATUS_IGNORE);
		CHECK(t == size - 1 && got == (rank + size - 1) % size, "overlap: %d %d", t, got);
	}

	/* Bad counts are an error of the call; a reduction the layer makes
	 * itself has no nonblocking form. */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int one = 0, out = 0, cls = -1;
	int *cnts = calloc((size_t)size, sizeof(int));
	MPI_Request q;
	cnts[size - 1] = -1;
	int rc = MPI_Ireduce_scatter(&one, &out, cnts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_COUNT, "Ireduce_scatter negative count: error %d", rc);
	free(cnts);
	/* A reduction the layer makes itself has no nonblocking form. */
	struct {
		double v;
		int i;
	} mi = {1.0, rank}, mo;
	rc = MPI_Iallreduce(&mi, &mo, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD, &q);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION, "Iallreduce MINLOC: error %d", rc);

	MPI_Comm_free(&half);
	int total = 0;
	MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0 && total == 0)
		printf("mpi_icoll: p = %d: ok\n", size);
	MPI_Finalize();
	return total != 0;
}
