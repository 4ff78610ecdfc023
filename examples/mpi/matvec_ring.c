/* SPDX-License-Identifier: MIT */
/*
 * examples/mpi/matvec_ring.c - examples/matvec_ring.c written in MPI: y = A x
 * on a ring of p ranks, the communication overlapped by the computation
 * ([Goubault-ring], slides 33-35).
 *
 * The same program as the tc_* version: A (n x n, n = p r) by blocks of r
 * rows, rank q holding rows q r .. q r + r - 1 and the q-th block of x; in
 * each of p steps every rank starts sending its block of x to the right
 * (MPI_Isend), starts receiving the next one from the left (MPI_Irecv),
 * multiplies its r x r block of A by the block it holds and then waits for
 * both (MPI_Waitall).  The same data (integer-valued, so y is exact whatever
 * the order of the sums), the same checks (y equals the sequential product
 * exactly) and the same checksum of y as the tc_* version prints.
 *
 * Times.  Built with tcmpicc and run by tcmpirun, each step's block product
 * is charged to the rank's logical clock (r^2 t_a, TCMPI_Compute_ns, as the
 * tc_* version's tc_clock_advance).  The modelled time printed is the
 * largest logical clock (TCMPI_Clock_ns) at the end of the product minus the
 * largest at its start.  For the first product of a run with --ta every
 * rank starts at clock 0, and it is exactly the tc_* version's on the same
 * ring:p, t_s, t_w and t_a ([Goubault-ring]'s p max(r^2 t_a, t_s + r t_w')).
 * Later products start from the unequal clocks that the earlier ones and
 * their reductions left, and without --ta rank 0 measures t_a on the
 * sequential product and broadcasts it (MPI_Bcast) before the product: then
 * the time may differ from a run of its own.  Under another MPI the program
 * runs unchanged and prints no modelled time (nan).  The measured time is
 * the slowest rank's MPI_Wtime around the product, the minimum over --reps
 * runs; the modelled time is the first run's.  The model (t_s, t_w), the
 * topology (ring:P, as the tc_* version's) and native or emulated are
 * tcmpirun's options.
 *
 * Run:   tcmpicc -O2 examples/mpi/matvec_ring.c -o matvec_ring.so
 *        tcmpirun -np 4 --topo ring:4 --ts 1000000 --tw 100 ./matvec_ring.so --ta 100 64 128
 * Options: --ta NS (t_a instead of the measured one), --reps R (default 3);
 * N... (default 64 128 256 512 1024), each a multiple of p.  Exit status 0
 * when every check passed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#ifdef TCMPI
static void charge(double ns)
{
	TCMPI_Compute_ns(ns);
}
static double clock_ns(void)
{
	return TCMPI_Clock_ns();
}
#else
static void charge(double ns)
{
	(void)ns;
}
static double clock_ns(void)
{
	return NAN;
}
#endif

/* y[0..r) += A[rows, c0 .. c0 + r) x[0..r), A row-major with n columns. */
static void block_mv(const double *a, int n, int r, int c0, const double *x, double *y)
{
	for (int i = 0; i < r; i++) {
		double s = y[i];
		for (int j = 0; j < r; j++)
			s += a[(size_t)i * n + c0 + j] * x[j];
		y[i] = s;
	}
}

/* The checksum the tc_* version prints: sum of y[i] (i mod 7 + 1). */
static double checksum(const double *y, int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += y[i] * (i % 7 + 1);
	return s;
}

/* The SPMD program of slide 34: rows are this rank's r rows of A, x its
 * block of x (r entries), y (r entries, zeroed) gets its block of y. */
static void matvec(const double *rows, int n, int r, const double *xq, double *y, double ta)
{
	int q, p;
	MPI_Comm_rank(MPI_COMM_WORLD, &q);
	MPI_Comm_size(MPI_COMM_WORLD, &p);
	int right = (q + 1) % p, left = (q + p - 1) % p;
	double *buf = malloc(2 * (size_t)r * sizeof *buf);
	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 1);
	double *x = buf, *next = buf + r;
	memcpy(x, xq, (size_t)r * sizeof *x);
	for (int step = 0; step < p; step++) {
		MPI_Request req[2];
		int nreq = 0;
		if (p > 1) {
			MPI_Isend(x, r, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &req[nreq++]);
			MPI_Irecv(next, r, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &req[nreq++]);
		}
		/* The block held at this step started on rank q - step. */
		int c0 = ((q - step) % p + p) % p * r;
		block_mv(rows, n, r, c0, x, y);
		charge((double)r * r * ta);
		if (nreq)
			MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
		double *t = x;
		x = next;
		next = t;
	}
	free(buf);
}

static void usage(void)
{
	fprintf(stderr, "usage: matvec_ring [--ta NS] [--reps R] N...\n");
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int q, p;
	MPI_Comm_rank(MPI_COMM_WORLD, &q);
	MPI_Comm_size(MPI_COMM_WORLD, &p);
	int reps = 3, nn = 0;
	double ta_opt = 0;
	int ns[64];
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "--ta") && v)
			ta_opt = atof(argv[++i]);
		else if (!strcmp(argv[i], "--reps") && v)
			reps = atoi(argv[++i]);
		else if (argv[i][0] != '-' && nn < 64)
			ns[nn++] = atoi(argv[i]);
		else {
			if (q == 0)
				usage();
			MPI_Finalize();
			return 2;
		}
	}
	if (nn == 0) {
		static const int dflt[] = {64, 128, 256, 512, 1024};
		for (nn = 0; nn < 5; nn++)
			ns[nn] = dflt[nn];
	}
	if (reps < 1) {
		if (q == 0)
			usage();
		MPI_Finalize();
		return 2;
	}
	if (q == 0) {
		printf("matvec_ring (MPI) on %d ranks\n", p);
		printf("%6s %5s %7s %12s %12s %12s %20s\n", "n", "r", "t_a", "modelled_ns",
		       "measured_ns", "seq_ns", "checksum");
	}
	int failed = 0;
	for (int k = 0; k < nn; k++) {
		int n = ns[k];
		if (n < p || n % p) {
			if (q == 0)
				fprintf(stderr,
				        "matvec_ring: n = %d is not a positive multiple of p = %d\n",
				        n, p);
			failed = 1;
			continue;
		}
		int r = n / p;
		/* Every rank makes the same data (the tc_* version's); each reads
		 * only its rows and its block of x. */
		double *a = malloc((size_t)n * n * sizeof *a), *x = malloc((size_t)n * sizeof *x);
		double *y = malloc((size_t)n * sizeof *y), *yref = malloc((size_t)n * sizeof *yref);
		if (!a || !x || !y || !yref) {
			fprintf(stderr, "matvec_ring: out of memory at n = %d\n", n);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		for (int i = 0; i < n; i++) {
			x[i] = (double)(i % 5 - 2);
			for (int j = 0; j < n; j++)
				a[(size_t)i * n + j] = (double)((i * 7 + j * 3) % 11 - 5);
		}
		/* The sequential product on rank 0: the reference and t_a. */
		double seq = INFINITY, ta = ta_opt;
		if (q == 0) {
			for (int rep = 0; rep < reps; rep++) {
				memset(yref, 0, (size_t)n * sizeof *yref);
				double t0 = MPI_Wtime();
				for (int i = 0; i < n; i += r)
					for (int c = 0; c < n; c += r)
						block_mv(a + (size_t)i * n, n, r, c, x + c, yref + i);
				double t = MPI_Wtime() - t0;
				seq = t < seq ? t : seq;
			}
			if (!(ta_opt > 0))
				ta = seq * 1e9 / ((double)n * n);
		}
		if (!(ta_opt > 0))
			MPI_Bcast(&ta, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		double best = INFINITY, modelled = NAN;
		for (int rep = 0; rep < reps; rep++) {
			memset(y, 0, (size_t)r * sizeof *y);
			double c0 = clock_ns(), t0 = MPI_Wtime();
			matvec(a + (size_t)q * r * n, n, r, x + (size_t)q * r, y, ta);
			double t[3] = {MPI_Wtime() - t0, clock_ns(), c0}, tmax[3];
			MPI_Reduce(t, tmax, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
			best = tmax[0] < best ? tmax[0] : best;
			if (rep == 0)
				modelled = tmax[1] - tmax[2];
		}
		/* y's blocks to rank 0 (rank q's is y[0..r)). */
		MPI_Gather(q == 0 ? MPI_IN_PLACE : y, r, MPI_DOUBLE, y, r, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		if (q == 0) {
			if (memcmp(y, yref, (size_t)n * sizeof *y) != 0) {
				fprintf(stderr,
				        "matvec_ring: n = %d: y differs from the sequential product\n",
				        n);
				failed = 1;
			}
			printf("%6d %5d %7.3f %12.0f %12.0f %12.0f %20.17g\n", n, r, ta, modelled,
			       best * 1e9, seq * 1e9, checksum(y, n));
		}
		free(a), free(x), free(y), free(yref);
	}
	MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (q == 0)
		printf("%s\n", failed ? "FAILED" : "ok: y = A x exactly");
	MPI_Finalize();
	return failed;
}
