/* SPDX-License-Identifier: MIT */
/*
 * mpi_probe.c - MPI_Probe and MPI_Iprobe: messages of sizes the receiver
 * does not know, from MPI_ANY_SOURCE, received into buffers sized by
 * MPI_Get_count on the probe's status; the order of probes equal to the
 * order of receives per source; MPI_Iprobe polling until a message comes;
 * MPI_PROC_NULL and MPI_COMM_SELF (a deadlock when nothing is queued); matched probes (MPI_Mprobe, MPI_Improbe,
 * MPI_Mrecv, MPI_Imrecv): every rank sends every other, each receiver holds
 * two probed messages at once while it and the others go on probing, and
 * each Mrecv gets exactly its probe's message; MPI_MESSAGE_NO_PROC,
 * MPI_MESSAGE_NULL, truncation, a message to oneself.  Exit status 0 when
 * all hold; each failure printed.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

enum { ROUNDS = 6 };

/* The length (in ints) of message k from rank s, and its element i. */
static int len_of(int s, int k)
{
	return (s * 37 + k * 101) % 300 + (k == 3 ? 2000 : 0); /* one single-copy size */
}
static int elem(int s, int k, int i)
{
	return s * 100000 + k * 1000 + i % 1000;
}

/* Every rank but 0 sends ROUNDS messages of varying sizes to rank 0, tag
 * k; rank 0 probes from any source with any tag, allocates what
 * Get_count says and receives with the status's source and tag. */
static void unknown_sizes(void)
{
	if (rank != 0) {
		for (int k = 0; k < ROUNDS; k++) {
			int n = len_of(rank, k);
			int *m = malloc(sizeof *m * (size_t)(n + 1));
			for (int i = 0; i < n; i++)
				m[i] = elem(rank, k, i);
			MPI_Send(m, n, MPI_INT, 0, k, MPI_COMM_WORLD);
			free(m);
		}
		return;
	}
	int *next = calloc((size_t)size, sizeof *next);
	for (int j = 0; j < (size - 1) * ROUNDS; j++) {
		MPI_Status st;
		int n = -1;
		MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
		MPI_Get_count(&st, MPI_INT, &n);
		int s = st.MPI_SOURCE;
		if (s < 1 || s >= size || n < 0) {
			CHECK(0, "probe: source %d count %d", s, n);
			break;
		}
		/* Per source in order: the probe finds each sender's next. */
		CHECK(st.MPI_TAG == next[s] && n == len_of(s, next[s]),
		      "probe from %d: tag %d count %d, want tag %d count %d", s, st.MPI_TAG, n,
		      next[s], len_of(s, next[s]));
		int *b = malloc(sizeof *b * (size_t)(n + 1));
		MPI_Status rs;
		MPI_Recv(b, n, MPI_INT, s, st.MPI_TAG, MPI_COMM_WORLD, &rs);
		int got = -1, bad = 0;
		MPI_Get_count(&rs, MPI_INT, &got);
		for (int i = 0; i < n; i++)
			bad += b[i] != elem(s, st.MPI_TAG, i);
		CHECK(rs.MPI_SOURCE == s && rs.MPI_TAG == st.MPI_TAG && got == n && !bad,
		      "receive after probe: source %d tag %d count %d, %d bad", rs.MPI_SOURCE,
		      rs.MPI_TAG, got, bad);
		free(b);
		next[s]++;
	}
	free(next);
}

/* The same with MPI_Iprobe polling, and the receive with the probe's own
 * wildcards: it takes the message the probe found, whatever came since. */
static void polled(void)
{
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	if (size < 2)
		return;
	/* Each rank sends its right neighbour ROUNDS messages and its
	 * left one ROUNDS more (on 2 ranks, the same rank twice over). */
	MPI_Request *q = malloc(sizeof *q * 2 * ROUNDS);
	int **m = malloc(sizeof *m * 2 * ROUNDS);
	for (int k = 0; k < 2 * ROUNDS; k++) {
		int n = len_of(rank, k % ROUNDS), to = k < ROUNDS ? right : left;
		m[k] = malloc(sizeof *m[k] * (size_t)(n + 1));
		for (int i = 0; i < n; i++)
			m[k][i] = elem(rank, k % ROUNDS, i);
		MPI_Isend(m[k], n, MPI_INT, to, k % ROUNDS, MPI_COMM_WORLD, &q[k]);
	}
	int next[2] = {0, 0};
	for (int j = 0; j < 2 * ROUNDS; j++) {
		MPI_Status st;
		int flag = 0, polls = 0, n = -1;
		while (!flag) {
			MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
			polls++;
		}
		MPI_Get_count(&st, MPI_INT, &n);
		int s = st.MPI_SOURCE;
		CHECK(s == left || s == right, "iprobe: source %d", s);
		int *b = malloc(sizeof *b * (size_t)(n + 1));
		MPI_Status rs;
		MPI_Recv(b, n, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rs);
		CHECK(rs.MPI_SOURCE == s && rs.MPI_TAG == st.MPI_TAG,
		      "the receive after iprobe took another message: %d/%d, probed %d/%d",
		      rs.MPI_SOURCE, rs.MPI_TAG, s, st.MPI_TAG);
		int bad = 0;
		for (int i = 0; i < n; i++)
			bad += b[i] != elem(s, st.MPI_TAG, i);
		CHECK(!bad && n == len_of(s, st.MPI_TAG), "data from %d tag %d: %d bad", s,
		      st.MPI_TAG, bad);
		if (size > 2) {
			int w = s == left ? 0 : 1;
			CHECK(st.MPI_TAG == next[w], "from %d: tag %d, want %d", s, st.MPI_TAG, next[w]);
			next[w]++;
		}
		free(b);
	}
	MPI_Waitall(2 * ROUNDS, q, MPI_STATUSES_IGNORE);
	for (int k = 0; k < 2 * ROUNDS; k++)
		free(m[k]);
	free(m);
	free(q);
}

/* A probe for one tag finds that tag's message behind others; MPI_Iprobe
 * says no while nothing is there. */
static void by_tag(void)
{
	if (size < 2 || rank > 1)
		return;
	int flag = 1;
	MPI_Status st;
	if (rank == 1) {
		int a[3] = {1, 2, 3}, b[5] = {5, 6, 7, 8, 9};
		MPI_Recv(NULL, 0, MPI_INT, 0, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* go */
		MPI_Send(a, 3, MPI_INT, 0, 11, MPI_COMM_WORLD);
		MPI_Send(b, 5, MPI_INT, 0, 12, MPI_COMM_WORLD);
		return;
	}
	MPI_Iprobe(1, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
	CHECK(!flag, "iprobe found a message before any was sent");
	MPI_Send(NULL, 0, MPI_INT, 1, 50, MPI_COMM_WORLD);
	int n = -1;
	MPI_Probe(1, 12, MPI_COMM_WORLD, &st);
	MPI_Get_count(&st, MPI_INT, &n);
	CHECK(st.MPI_TAG == 12 && n == 5, "probe tag 12: tag %d count %d", st.MPI_TAG, n);
	MPI_Probe(1, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
	MPI_Get_count(&st, MPI_INT, &n);
	CHECK(st.MPI_TAG == 11 && n == 3, "probe any tag: tag %d count %d", st.MPI_TAG, n);
	int b[5] = {0};
	MPI_Recv(b, 5, MPI_INT, 1, 12, MPI_COMM_WORLD, &st);
	CHECK(b[4] == 9 && st.MPI_TAG == 12, "tag 12: %d", b[4]);
	MPI_Recv(b, 5, MPI_INT, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
	CHECK(b[2] == 3 && st.MPI_TAG == 11, "tag 11: %d", b[2]);
}

static void proc_null_and_self(void)
{
	MPI_Status st;
	int flag = 0, n = -1;
	MPI_Probe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &st);
	MPI_Get_count(&st, MPI_INT, &n);
	CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && n == 0,
	      "probe MPI_PROC_NULL: %d %d %d", st.MPI_SOURCE, st.MPI_TAG, n);
	MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
	CHECK(flag && st.MPI_SOURCE == MPI_PROC_NULL, "iprobe MPI_PROC_NULL: flag %d", flag);
	flag = 1;
	MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
	CHECK(!flag, "iprobe on MPI_COMM_SELF found a message");
	/* Nothing queued on a communicator of one rank: a blocking probe
	 * fails as a deadlock. */
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	int rc = MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &st), cls = -1;
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_OTHER, "probe on MPI_COMM_SELF with nothing sent: error %d", rc);
	/* A message to oneself on MPI_COMM_SELF: found, then taken. */
	int v[2] = {rank, -rank}, back[2] = {0, 0};
	MPI_Send(v, 2, MPI_INT, 0, 4, MPI_COMM_SELF);
	MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &st);
	MPI_Get_count(&st, MPI_INT, &n);
	CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 4 && n == 2,
	      "probe on MPI_COMM_SELF: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, n);
	MPI_Message m = MPI_MESSAGE_NULL;
	MPI_Mprobe(0, 4, MPI_COMM_SELF, &m, &st);
	MPI_Mrecv(back, 2, MPI_INT, &m, &st);
	CHECK(back[0] == rank && back[1] == -rank, "Mrecv on MPI_COMM_SELF: %d %d", back[0], back[1]);
	MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
	CHECK(!flag, "iprobe on MPI_COMM_SELF found a message after the Mrecv");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	rc = MPI_Iprobe(size, 0, MPI_COMM_WORLD, &flag, &st);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_RANK, "iprobe of rank %d: error %d", size, rc);
	rc = MPI_Probe(MPI_ANY_SOURCE, -5, MPI_COMM_WORLD, &st);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_TAG, "probe of tag -5: error %d", rc);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* A matched probe's status: another rank's, its next tag in the order
 * sent (want[src], counted). */
static void check_order(const MPI_Status *st, int *want, const char *how)
{
	int s = st->MPI_SOURCE;
	int ok = s >= 0 && s < size && s != rank && st->MPI_TAG == want[s];
	CHECK(ok, "%s: source %d tag %d out of order", how, s, st->MPI_TAG);
	if (ok)
		want[s]++;
}

/* A received message of a matched probe checked against its status: its
 * size and contents. */
static void check_matched(const int *b, const MPI_Status *st, const char *how)
{
	int n = -1, s = st->MPI_SOURCE, k = st->MPI_TAG;
	MPI_Get_count(st, MPI_INT, &n);
	CHECK(s >= 0 && s < size && n == len_of(s, k), "%s: source %d tag %d count %d", how, s, k, n);
	if (s < 0 || s >= size || n != len_of(s, k))
		return;
	int bad = 0;
	for (int i = 0; i < n && !bad; i++)
		bad = b[i] != elem(s, k, i);
	CHECK(!bad, "%s: contents of message %d from %d", how, k, s);
}

static void matched(void)
{
	int nmsg = (size - 1) * ROUNDS;
	MPI_Request *sq = malloc(sizeof *sq * (size_t)(nmsg + 1));
	int **sb = malloc(sizeof *sb * (size_t)(nmsg + 1));
	int ns = 0;
	for (int k = 0; k < ROUNDS; k++)
		for (int j = 1; j < size; j++) {
			int d = (rank + j) % size, n = len_of(rank, k);
			sb[ns] = malloc(sizeof(int) * (size_t)n + 1);
			for (int i = 0; i < n; i++)
				sb[ns][i] = elem(rank, k, i);
			MPI_Isend(sb[ns], n, MPI_INT, d, k, MPI_COMM_WORLD, &sq[ns]);
			ns++;
		}
	int *want = calloc((size_t)size, sizeof(int));
	for (int got = 0; got < nmsg;) {
		MPI_Message m1, m2 = MPI_MESSAGE_NULL;
		MPI_Status s1, s2, s3;
		int flag = 0, n1 = 0, n2 = 0;
		MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &m1, &s1);
		CHECK(m1 != MPI_MESSAGE_NULL && m1 != MPI_MESSAGE_NO_PROC, "Mprobe gave no message");
		MPI_Get_count(&s1, MPI_INT, &n1);
		int *b1 = malloc(sizeof(int) * (size_t)n1 + 1), *b2 = NULL;
		check_order(&s1, want, "Mprobe");
		if (got + 1 < nmsg) {
			/* A second one from any source, while the first is held:
			 * never the first again. */
			while (!flag) {
				int f = 0;
				MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &f, &s3);
				MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m2, &s2);
			}
			check_order(&s2, want, "Improbe");
			MPI_Get_count(&s2, MPI_INT, &n2);
			b2 = malloc(sizeof(int) * (size_t)n2 + 1);
			/* The second first. */
			MPI_Status r2;
			MPI_Mrecv(b2, n2, MPI_INT, &m2, &r2);
			CHECK(m2 == MPI_MESSAGE_NULL, "Mrecv left the message handle set");
			CHECK(r2.MPI_SOURCE == s2.MPI_SOURCE && r2.MPI_TAG == s2.MPI_TAG,
			      "Mrecv status %d/%d, probe's %d/%d", r2.MPI_SOURCE, r2.MPI_TAG,
			      s2.MPI_SOURCE, s2.MPI_TAG);
			check_matched(b2, &r2, "Improbe+Mrecv");
			got++;
		}
		MPI_Request rq;
		MPI_Status r1;
		MPI_Imrecv(b1, n1, MPI_INT, &m1, &rq);
		MPI_Wait(&rq, &r1);
		CHECK(r1.MPI_SOURCE == s1.MPI_SOURCE && r1.MPI_TAG == s1.MPI_TAG,
		      "Imrecv status %d/%d, probe's %d/%d", r1.MPI_SOURCE, r1.MPI_TAG,
		      s1.MPI_SOURCE, s1.MPI_TAG);
		check_matched(b1, &r1, "Mprobe+Imrecv");
		got++;
		free(b1);
		free(b2);
	}
	MPI_Waitall(ns, sq, MPI_STATUSES_IGNORE);
	for (int i = 0; i < ns; i++)
		free(sb[i]);
	free(sb);
	free(sq);
	free(want);

	/* MPI_PROC_NULL, MPI_MESSAGE_NULL, nothing there, truncation, oneself. */
	MPI_Message m;
	MPI_Status st;
	int flag = 0, x = 5;
	MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &m, &st);
	CHECK(m == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL, "Mprobe MPI_PROC_NULL");
	MPI_Mrecv(&x, 1, MPI_INT, &m, &st);
	CHECK(m == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL &&
	              st.MPI_TAG == MPI_ANY_TAG && x == 5,
	      "Mrecv MPI_MESSAGE_NO_PROC");
	MPI_Improbe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &m, &st);
	CHECK(flag && m == MPI_MESSAGE_NO_PROC, "Improbe MPI_PROC_NULL");
	MPI_Request rq;
	MPI_Imrecv(&x, 1, MPI_INT, &m, &rq);
	MPI_Wait(&rq, &st);
	CHECK(st.MPI_SOURCE == MPI_PROC_NULL && x == 5, "Imrecv MPI_MESSAGE_NO_PROC");
	MPI_Improbe(MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &flag, &m, &st);
	CHECK(!flag && m == MPI_MESSAGE_NULL, "Improbe found a message of tag 77");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int rc = MPI_Mrecv(&x, 1, MPI_INT, &m, &st), cls = -1;
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_ARG, "Mrecv of MPI_MESSAGE_NULL: error %d", rc);
	int two[2] = {rank, -rank};
	MPI_Send(two, 2, MPI_INT, rank, 12, MPI_COMM_WORLD);
	MPI_Mprobe(rank, 12, MPI_COMM_WORLD, &m, &st);
	CHECK(st.MPI_SOURCE == rank && st.MPI_TAG == 12, "Mprobe of a message to oneself");
	rc = MPI_Mrecv(&x, 1, MPI_INT, &m, &st);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_TRUNCATE && m == MPI_MESSAGE_NULL, "Mrecv too small: error %d", rc);
	MPI_Send(two, 2, MPI_INT, rank, 13, MPI_COMM_WORLD);
	MPI_Mprobe(MPI_ANY_SOURCE, 13, MPI_COMM_WORLD, &m, &st);
	int back[2] = {0};
	MPI_Mrecv(back, 2, MPI_INT, &m, &st);
	CHECK(back[0] == rank && back[1] == -rank, "Mrecv of a message to oneself");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	unknown_sizes();
	MPI_Barrier(MPI_COMM_WORLD);
	polled();
	MPI_Barrier(MPI_COMM_WORLD);
	by_tag();
	MPI_Barrier(MPI_COMM_WORLD);
	proc_null_and_self();
	MPI_Barrier(MPI_COMM_WORLD);
	matched();
	int total = 0;
	MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0 && total == 0)
		printf("mpi_probe: p = %d: ok\n", size);
	MPI_Finalize();
	return total != 0;
}
