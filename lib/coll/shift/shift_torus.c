/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/shift/shift_torus.c - circular q-shift on a 2-D torus: row shift,
 * compensation, column shift ([Gergel-shift] (3.19); [Barnat-IB109]'s 2-D case).
 *
 * Ranks are numbered row by row (rank = row cols + col).  With q' = q mod p,
 * qr = q' mod cols and qc = q' / cols, rank (R, C)'s block goes to
 * (R + qc, C + qr) when C + qr < cols and to (R + qc + 1, C + qr - cols)
 * otherwise.  So:
 *   1. every row shifts by qr, the shorter way round the row
 *      (min(qr, cols - qr) steps, every block one link per step);
 *   2. compensation (qr != 0, rows > 1): the blocks that crossed the row
 *      boundary, now in columns 0 .. qr-1, move one row further (one step);
 *   3. every column shifts by qc, the shorter way (min(qc, rows - qc)).
 *
 * Cost: tc_cost_shift_torus_q() (include/topocoll/cost.h): min(qr, cols - qr)
 * row steps, a compensation step where qr != 0 and rows > 1, and
 * min(qc, rows - qc) column steps, each one neighbour message.  The ranks of
 * columns >= qr idle in the compensation step, but the makespan is the chain
 * through a compensated block, so the clock counts every step.  [Barnat-IB109]'s
 * bound tc_cost_shift_torus() (sqrt(p) steps) is its worst case up to the
 * compensation step.  Exact under full duplex (each step a rank sends one block
 * and receives one); half duplex, NAN unless all-port and no dimension of 2
 * (where the two ranks of a line share one link).
 * Checker: a block compensated one row further and then shifted backwards
 * along its column (qc > rows / 2), or round a column of 2 (compensation and
 * a column shift of 1 cancel), comes back to a rank it visited: NODUP
 * violations that the source's algorithm has (combining the compensation into
 * the column shift would avoid them, but is not the algorithm the formula
 * prices).  Never NOHO: a block leaves its column when it is compensated.
 * Restrictions: 2-D torus only (TC_ENOTSUP for other kinds and for 1-D or
 * k-D tori, k > 2); any rows and cols, any q.
 * Buffers: as shift_ring.c (shift_walk.h): IN read by the first move of a
 * block, receives alternate between TC__BUF_TMP and OUT, the last in OUT.
 * Memory: m bytes of TC__BUF_TMP when a rank receives twice or more.
 *
 * Trace, torus 3x4 (p = 12), q = 5: qr = 1, qc = 1.
 *   step 0 (rows):   (R, C) -> (R, C + 1) for all 12 ranks
 *   step 1 (comp.):  (R, 0) -> (R + 1, 0): 0 -> 4, 4 -> 8, 8 -> 0
 *   step 2 (cols):   (R, C) -> (R + 1, C) for all 12 ranks
 *   e.g. rank 3's block: 3 -> 0 -> 4 -> 8 = 3 + 5.
 */
#include "shift_walk.h"

/* One step: every block held by a rank whose column is below cmax moves by
 * dir along grid dimension dim (1: along its row, 0: along its column). */
static int step(struct tc__shift_walk *w, struct tc__sched *s, const struct tc__grid *gr, int dim,
                int dir, int cmax, int first)
{
	int err = tc__shift_walk_round(w, s, first);
	const int n = gr->dims[dim];
	for (int v = 0; v < w->p && !err; v++) {
		if (tc__grid_coord(gr, v, 1) >= cmax)
			continue;
		int c = tc__grid_coord(gr, v, dim);
		err = tc__shift_walk_move(w, s, v, tc__grid_set(gr, v, dim, ((c + dir) % n + n) % n));
	}
	tc__shift_walk_end(w);
	return err;
}

int tc__gen_shift_torus(const struct tc__gen *g, struct tc__sched *s)
{
	struct tc__grid gr;
	if (tc_topo_kind(g->t) != TC_TOPO_TORUS || tc__grid_of(g->t, &gr) != 2 || g->shift_ring)
		return TC_ENOTSUP;
	const int p = g->p, rows = gr.dims[0], cols = gr.dims[1];
	const int qr = g->q % cols, qc = g->q / cols;
	if (g->q == 0)
		return tc__shift_local(g, s);
	const int kr = qr <= cols - qr ? qr : cols - qr, dr = qr <= cols - qr ? 1 : -1;
	const int comp = qr != 0 && rows > 1;
	const int kc = qc <= rows - qc ? qc : rows - qc, dc = qc <= rows - qc ? 1 : -1;
	struct tc__shift_walk w;
	int err = tc__shift_walk_init(&w, p, g->bytes);
	for (int v = 0; v < p && !err; v++)
		w.left[v] = kr + kc + (comp && tc__grid_coord(&gr, v, 1) < qr);
	if (!err)
		err = tc__shift_walk_start(&w, s);
	int first = 1;
	for (int i = 0; i < kr && !err; i++, first = 0)
		err = step(&w, s, &gr, 1, dr, cols, first);
	if (comp && !err) {
		err = step(&w, s, &gr, 0, 1, qr, first);
		first = 0;
	}
	for (int i = 0; i < kc && !err; i++, first = 0)
		err = step(&w, s, &gr, 0, dc, cols, first);
	tc__shift_walk_free(&w);
	return err;
}

double tc__f_shift_torus(const struct tc__gen *g)
{
	const struct tc_model *md = g->md;
	struct tc__grid gr;
	if (tc__grid_of(g->t, &gr) != 2)
		return NAN;
	if (g->p > 1 && md->duplex != TC_DUPLEX_FULL &&
	    !(md->ports == TC_PORTS_ALL && gr.dims[0] != 2 && gr.dims[1] != 2))
		return NAN;
	return tc_cost_shift_torus_q(md, gr.dims[0], gr.dims[1], g->q, (double)g->bytes);
}
