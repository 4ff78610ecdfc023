/* SPDX-License-Identifier: MIT */
/*
 * examples/mpi/lu_ring.c - examples/lu_ring.c written in MPI: LU
 * factorisation on a ring with cyclic column allocation and a pipelined
 * pivot broadcast, with and without look-ahead ([Goubault-ring], slides
 * 36-53).
 *
 * The same program as the tc_* version: A = L U without pivoting (A
 * diagonally dominant, the same data), column j on rank j mod p; at step k
 * the owner of column k computes its multipliers (prep) and sends them to
 * the right, every other rank receives them from the left (MPI_Recv) and
 * passes them on unless its right neighbour is the owner; then each rank
 * updates its columns j > k.  The three variants: blocking (MPI_Send),
 * overlap (MPI_Isend, slide 49's order) and lookahead (MPI_Isend, the owner
 * of column k + 1 updates it, preps it and sends it before its other
 * columns).  The factors are gathered on rank 0 (MPI_Gatherv) and checked
 * against a sequential LU (within 1e-12 relative; normally identical), and
 * the same checksum of them as the tc_* version's is printed.
 *
 * Times.  Built with tcmpicc and run by tcmpirun, the computation is charged
 * to the rank's logical clock as in the tc_* version (t_a per division or
 * multiply-add, one charge per stretch between two communication calls,
 * TCMPI_Compute_ns).  The modelled time printed is the largest logical
 * clock (TCMPI_Clock_ns) at the end of the factorisation minus the largest
 * at its start: for the first factorisation of a run with --ta (every rank
 * at clock 0) exactly the tc_* version's on the same ring:p, t_s, t_w and
 * t_a.  Later ones (more N or variants in one run) start from the unequal
 * clocks that the earlier ones and the gathers left, and without --ta rank
 * 0 measures t_a on the sequential LU and broadcasts it first: then the
 * time may differ from a run of its own (give one N and one --variant to
 * compare).  Under another MPI the program runs unchanged and prints no
 * modelled time (nan).  The measured time is the slowest rank's MPI_Wtime
 * around the factorisation, the minimum over --reps runs; the modelled time
 * is the first run's.
 *
 * Run:   tcmpicc -O2 examples/mpi/lu_ring.c -o lu_ring.so
 *        tcmpirun -np 4 --topo ring:4 --ts 100000 --tw 10 ./lu_ring.so --ta 1000 64
 * Options: --ta NS, --reps R (default 3), --variant blocking|overlap|lookahead
 * (default all three), N... (default 64 128 256).  Exit status 0 when every
 * check passed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#ifdef TCMPI
static double clock_ns(void)
{
	return TCMPI_Clock_ns();
}
#else
static double clock_ns(void)
{
	return NAN;
}
#endif

enum variant { V_BLOCKING, V_OVERLAP, V_LOOKAHEAD, V_COUNT };
static const char *const variant_name[V_COUNT] = {"blocking", "overlap", "lookahead"};

struct lu {
	int n, q, p;
	enum variant variant;
	double ta_ns;
};

/* prep(k) on column k (n entries): the multipliers below the diagonal. */
static void prep(double *colk, int n, int k)
{
	double d = colk[k];
	for (int i = k + 1; i < n; i++)
		colk[i] /= d;
}

/* update(k, j): column j minus its pivot-row entry times the multipliers. */
static void update(double *colj, const double *mult, int n, int k)
{
	double akj = colj[k];
	for (int i = k + 1; i < n; i++)
		colj[i] -= mult[i - k - 1] * akj;
}

static void lu_seq(double *a, int n)
{
	for (int k = 0; k < n - 1; k++) {
		prep(a + (size_t)k * n, n, k);
		for (int j = k + 1; j < n; j++)
			update(a + (size_t)j * n, a + (size_t)k * n + k + 1, n, k);
	}
}

/* The computation done since the last communication call, charged to the
 * logical clock in one piece (as the tc_* version's tc_clock_advance). */
static void charge(const struct lu *m, long *ops)
{
	long c = *ops;
	*ops = 0;
#ifdef TCMPI
	if (c > 0)
		TCMPI_Compute_ns((double)c * m->ta_ns);
#else
	(void)m;
	(void)c;
#endif
}

static void update_from(const struct lu *m, double *col, int nloc, int from, const double *mult,
                        int k, long *ops)
{
	int n = m->n;
	for (int l = from; l < nloc; l++) {
		update(col + (size_t)l * n, mult, n, k);
		*ops += n - k - 1;
	}
}

/* Sends len doubles of buf to dst: MPI_Send (blocking) or MPI_Isend (*busy
 * set: req is waited for before buf is reused). */
static void send_pivot(const struct lu *m, int dst, const double *buf, int len, MPI_Request *req,
                       int *busy)
{
	if (m->variant == V_BLOCKING) {
		MPI_Send(buf, len, MPI_DOUBLE, dst, 0, MPI_COMM_WORLD);
	} else {
		MPI_Isend(buf, len, MPI_DOUBLE, dst, 0, MPI_COMM_WORLD, req);
		*busy = 1;
	}
}

static void finish(MPI_Request *req, int *busy)
{
	if (*busy)
		MPI_Wait(req, MPI_STATUS_IGNORE);
	*busy = 0;
}

/* The SPMD program of slide 49 (slide 52's look-ahead when asked) on the
 * rank's nloc columns col (column-major, q, q + p, ...). */
static void lu_ring(const struct lu *m, double *col, int nloc, double *rbuf0, double *rbuf1)
{
	int q = m->q, p = m->p, n = m->n;
	int right = (q + 1) % p, left = (q + p - 1) % p;
	double *rbuf[2] = {rbuf0, rbuf1};
	MPI_Request own, fwd[2];
	int own_busy = 0, fwd_busy[2] = {0, 0};
	long ops = 0;
	int next = 0; /* first local column not yet factored */
	for (int k = 0; k < n - 1; k++) {
		int owner = k % p;
		const double *mult;
		int ahead = m->variant == V_LOOKAHEAD && p > 1;
		if (q == owner) {
			double *ck = col + (size_t)next * n;
			if (!ahead || k == 0) {
				prep(ck, n, k);
				ops += n - k - 1;
				charge(m, &ops);
				finish(&own, &own_busy);
				if (p > 1)
					send_pivot(m, right, ck + k + 1, n - k - 1, &own, &own_busy);
			}
			mult = ck + k + 1;
			next++;
		} else {
			int b = k % 2;
			charge(m, &ops);
			finish(&fwd[b], &fwd_busy[b]); /* pivot k - 2's forward */
			MPI_Recv(rbuf[b], n - k - 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD,
			         MPI_STATUS_IGNORE);
			if (right != owner)
				send_pivot(m, right, rbuf[b], n - k - 1, &fwd[b], &fwd_busy[b]);
			mult = rbuf[b];
		}
		if (ahead && q == (k + 1) % p && k + 1 < n - 1) {
			double *c1 = col + (size_t)next * n;
			update(c1, mult, n, k);
			prep(c1, n, k + 1);
			ops += (n - k - 1) + (n - k - 2);
			charge(m, &ops);
			finish(&own, &own_busy);
			send_pivot(m, right, c1 + k + 2, n - k - 2, &own, &own_busy);
			update_from(m, col, nloc, next + 1, mult, k, &ops);
		} else {
			update_from(m, col, nloc, next, mult, k, &ops);
		}
	}
	charge(m, &ops);
	finish(&own, &own_busy);
	for (int b = 0; b < 2; b++)
		finish(&fwd[b], &fwd_busy[b]);
}

static double max_rel_diff(const double *x, const double *y, size_t len)
{
	double d = 0, s = 0;
	for (size_t i = 0; i < len; i++) {
		d = fmax(d, fabs(x[i] - y[i]));
		s = fmax(s, fabs(y[i]));
	}
	return s > 0 ? d / s : d;
}

static double residual(const double *a, const double *f, int n)
{
	double d = 0, s = 0;
	for (int j = 0; j < n; j++)
		for (int i = 0; i < n; i++) {
			double v = 0;
			int kmax = i < j ? i : j;
			for (int k = 0; k <= kmax; k++) {
				double l = k == i ? 1.0 : f[(size_t)k * n + i];
				v += l * f[(size_t)j * n + k];
			}
			d = fmax(d, fabs(a[(size_t)j * n + i] - v));
			s = fmax(s, fabs(a[(size_t)j * n + i]));
		}
	return d / s;
}

/* The checksum the tc_* version prints: sum of f[k] (k mod 7 + 1), f
 * column-major. */
static double checksum(const double *f, size_t len)
{
	double s = 0;
	for (size_t k = 0; k < len; k++)
		s += f[k] * (double)(k % 7 + 1);
	return s;
}

static void usage(void)
{
	fprintf(stderr, "usage: lu_ring [--ta NS] [--reps R] "
	                "[--variant blocking|overlap|lookahead] N...\n");
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int q, p;
	MPI_Comm_rank(MPI_COMM_WORLD, &q);
	MPI_Comm_size(MPI_COMM_WORLD, &p);
	int reps = 3, nn = 0, only = -1, bad = 0;
	double ta_opt = 0;
	int ns[64];
	for (int i = 1; i < argc && !bad; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "--ta") && v) {
			ta_opt = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--reps") && v) {
			reps = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--variant") && v) {
			i++;
			for (int w = 0; w < V_COUNT; w++)
				if (!strcmp(argv[i], variant_name[w]))
					only = w;
			bad = only < 0;
		} else if (argv[i][0] != '-' && nn < 64) {
			ns[nn++] = atoi(argv[i]);
		} else {
			bad = 1;
		}
	}
	if (bad || reps < 1) {
		if (q == 0)
			usage();
		MPI_Finalize();
		return 2;
	}
	if (nn == 0) {
		static const int dflt[] = {64, 128, 256};
		for (nn = 0; nn < 3; nn++)
			ns[nn] = dflt[nn];
	}
	if (q == 0)
		printf("lu_ring (MPI) on %d ranks; times in us\n", p);
	int failed = 0;
	for (int t = 0; t < nn; t++) {
		int n = ns[t];
		if (n < 2) {
			if (q == 0)
				fprintf(stderr, "lu_ring: n = %d: need n >= 2\n", n);
			failed = 1;
			continue;
		}
		size_t len = (size_t)n * n;
		int nloc = q < n ? (n - q + p - 1) / p : 0;
		double *a = malloc(len * sizeof *a), *f = malloc(len * sizeof *f);
		double *fref = malloc(len * sizeof *fref);
		double *col = malloc(((size_t)nloc * n + 2 * (size_t)n) * sizeof *col);
		int *counts = malloc((size_t)p * sizeof *counts);
		int *displs = malloc((size_t)p * sizeof *displs);
		if (!a || !f || !fref || !col || !counts || !displs) {
			fprintf(stderr, "lu_ring: out of memory at n = %d\n", n);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		/* The tc_* version's matrix, made by every rank. */
		unsigned s = 12345u + (unsigned)n;
		for (int j = 0; j < n; j++)
			for (int i = 0; i < n; i++) {
				s = s * 1664525u + 1013904223u;
				a[(size_t)j * n + i] = (double)(s >> 8) / (double)(1u << 24) * 2 -
				                       1 + (i == j ? n : 0);
			}
		double seq = INFINITY, ta = ta_opt, res = 0;
		double ops = 0;
		for (int k = 0; k < n - 1; k++)
			ops += (double)(n - k - 1) * (n - k);
		if (q == 0) {
			for (int rep = 0; rep < reps; rep++) {
				memcpy(fref, a, len * sizeof *a);
				double t0 = MPI_Wtime();
				lu_seq(fref, n);
				double dt = MPI_Wtime() - t0;
				seq = dt < seq ? dt : seq;
			}
			if (!(ta_opt > 0))
				ta = seq * 1e9 / ops;
			res = residual(a, fref, n);
			printf("n = %d: t_a = %.3f ns, sequential %.1f, residual %.2e\n", n, ta,
			       seq * 1e6, res);
			printf("  %-10s %10s %10s %20s\n", "variant", "modelled", "measured", "checksum");
			if (!(res < 1e-12)) {
				fprintf(stderr, "lu_ring: n = %d: residual %g too large\n", n, res);
				failed = 1;
			}
		}
		if (!(ta_opt > 0))
			MPI_Bcast(&ta, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		for (int r = 0; r < p; r++) {
			counts[r] = (r < n ? (n - r + p - 1) / p : 0) * n;
			displs[r] = r ? displs[r - 1] + counts[r - 1] : 0;
		}
		for (int v = 0; v < V_COUNT; v++) {
			if (only >= 0 && v != only)
				continue;
			struct lu m = {.n = n, .q = q, .p = p, .variant = (enum variant)v, .ta_ns = ta};
			double best = INFINITY, modelled = NAN;
			for (int rep = 0; rep < reps; rep++) {
				for (int l = 0; l < nloc; l++)
					memcpy(col + (size_t)l * n, a + (size_t)(q + l * p) * n,
					       (size_t)n * sizeof *col);
				double c0 = clock_ns(), t0 = MPI_Wtime();
				lu_ring(&m, col, nloc, col + (size_t)nloc * n,
				        col + (size_t)nloc * n + n);
				double tt[3] = {MPI_Wtime() - t0, clock_ns(), c0}, tmax[3];
				MPI_Reduce(tt, tmax, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
				best = tmax[0] < best ? tmax[0] : best;
				if (rep == 0)
					modelled = tmax[1] - tmax[2];
			}
			/* The factors on rank 0: rank r's l-th column is column r + l p. */
			double *gath = q == 0 ? malloc(len * sizeof *gath) : NULL;
			if (q == 0 && !gath)
				MPI_Abort(MPI_COMM_WORLD, 1);
			MPI_Gatherv(col, nloc * n, MPI_DOUBLE, gath, counts, displs, MPI_DOUBLE, 0,
			            MPI_COMM_WORLD);
			if (q == 0) {
				for (int r = 0; r < p; r++)
					for (int l = 0; l < counts[r] / n; l++)
						memcpy(f + (size_t)(r + l * p) * n,
						       gath + displs[r] + (size_t)l * n,
						       (size_t)n * sizeof *f);
				free(gath);
				double d = max_rel_diff(f, fref, len);
				if (d > 1e-12) {
					fprintf(stderr,
					        "lu_ring: n = %d (%s): factors differ from the "
					        "sequential LU by %g\n",
					        n, variant_name[v], d);
					failed = 1;
				}
				printf("  %-10s %10.1f %10.1f %20.17g\n", variant_name[v],
				       modelled / 1e3, best * 1e6, checksum(f, len));
			}
		}
		free(a), free(f), free(fref), free(col), free(counts), free(displs);
	}
	MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (q == 0)
		printf("%s\n", failed ? "FAILED"
		                      : "ok: every run's factors = the sequential LU's, "
		                        "residual < 1e-12");
	MPI_Finalize();
	return failed;
}
