/* SPDX-License-Identifier: MIT */
/*
 * mpi_globals.c - global and static variables, and the C library state a
 * program keeps per process (getopt, rand), stay per rank: each rank
 * writes its own values, the ranks meet, each must still see its own.
 * strtok's position is the rank's own across a call that lets the other
 * ranks run.  The argument strings are the rank's own: a rank writing into them (as
 * strtok on an option's value does) does not change another rank's.
 * Also sleep() (on fibres it must let the other ranks run).
 * Run as: mpi_globals -n 5 -v -x 3 extra
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int counter;
double table[4096];
static int hidden = 42;
const char *who;

static int bump(void)
{
	static int calls;
	return ++calls;
}

int main(int argc, char **argv)
{
	int rank, p, fails = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p);

	/* getopt: every rank parses the same arguments from the start. */
	int n = 0, verbose = 0, x = 0, c;
	while ((c = getopt(argc, argv, "n:vx:")) != -1)
		switch (c) {
		case 'n':
			n = atoi(optarg);
			break;
		case 'v':
			verbose = 1;
			break;
		case 'x':
			x = atoi(optarg);
			break;
		default:
			fails++;
		}
	if (n != 5 || !verbose || x != 3 || optind != argc - 1) {
		printf("rank %d: getopt n=%d v=%d x=%d optind=%d\n", rank, n, verbose, x, optind);
		fails++;
	}

	/* The operand "extra": each rank writes its own letter into it. */
	char *operand = argv[argc - 1];
	int operand_was_extra = !strcmp(operand, "extra");
	operand[0] = (char)('a' + rank % 26);

	counter = rank;
	hidden += rank;
	for (int i = 0; i < 4096; i++)
		table[i] = rank * 1000.0 + i;
	for (int i = 0; i <= rank; i++)
		bump();
	srand(7);
	int r1 = rand();
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank % 2)
		usleep(2000);
	MPI_Barrier(MPI_COMM_WORLD);
	if (counter != rank || hidden != 42 + rank || table[4095] != rank * 1000.0 + 4095 ||
	    bump() != rank + 2) {
		printf("rank %d: globals overwritten: counter %d hidden %d\n", rank, counter, hidden);
		fails++;
	}
	if (!operand_was_extra || operand[0] != 'a' + rank % 26 || strcmp(operand + 1, "xtra")) {
		printf("rank %d: argument strings shared: \"%s\"\n", rank, operand);
		fails++;
	}
	/* strtok: each rank starts on its own string, the ranks meet, each
	 * goes on in its own. */
	char line[32];
	snprintf(line, sizeof line, "r%d:mid:end%d", rank, rank);
	char *t1 = strtok(line, ":");
	MPI_Barrier(MPI_COMM_WORLD);
	char *t2 = strtok(NULL, ":");
	char *t3 = strtok(NULL, ":");
	char want3[16];
	snprintf(want3, sizeof want3, "end%d", rank);
	if (!t1 || t1 != line || !t2 || strcmp(t2, "mid") || !t3 || strcmp(t3, want3) ||
	    strtok(NULL, ":")) {
		printf("rank %d: strtok went on in another rank's string\n", rank);
		fails++;
	}
	/* rand: the same seed gives the same sequence on every rank. */
	int all_r1;
	MPI_Allreduce(&r1, &all_r1, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	srand(7);
	if (rand() != r1 || all_r1 != r1) {
		printf("rank %d: rand sequence differs\n", rank);
		fails++;
	}
	int total;
	MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_globals: p = %d: %s (%d failures)\n", p, total ? "FAILED" : "ok", total);
	MPI_Finalize();
	return total != 0;
}
