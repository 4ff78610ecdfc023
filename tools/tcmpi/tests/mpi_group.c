/* SPDX-License-Identifier: MIT */
/*
 * mpi_group.c - groups and MPI_Comm_create: a communicator's group, its
 * size and the caller's rank; MPI_Group_incl, excl, range_incl and
 * range_excl; union, intersection and difference (in MPI's order; an empty
 * result is MPI_GROUP_EMPTY); MPI_Group_translate_ranks (MPI_PROC_NULL, a
 * non-member MPI_UNDEFINED); MPI_Group_compare; MPI_Comm_create of a
 * reversed group of the odd ranks, of the world and of a split, with a
 * collective on it and its group translated back; MPI_Comm_create_group
 * by the members alone, twice with one tag; the errors of bad
 * ranks, ranges and handles and of a group outside the communicator,
 * under MPI_ERRORS_RETURN; MPI_Group_free.  Exit status 0 when all hold;
 * each failure printed.  Written against MPI alone: but for the errors
 * under TCMPI, it runs the same under Open MPI.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

/* The world ranks of g's members, in order (n of them at most). */
static int members(MPI_Group g, MPI_Group world, int *out, int n)
{
	int gn, ranks[64];
	MPI_Group_size(g, &gn);
	if (gn > n || gn > 64)
		return -1;
	for (int i = 0; i < gn; i++)
		ranks[i] = i;
	MPI_Group_translate_ranks(g, gn, ranks, world, out);
	return gn;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	const int n = size <= 64 ? size : 64;
	int *ranks = malloc(64 * sizeof *ranks), *got = malloc(64 * sizeof *got);

	MPI_Group world, again;
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	int gs = -1, gr = -1, cmp = -1;
	MPI_Group_size(world, &gs);
	MPI_Group_rank(world, &gr);
	CHECK(gs == size && gr == rank, "world group: size %d rank %d", gs, gr);
	MPI_Comm_group(MPI_COMM_WORLD, &again);
	MPI_Group_compare(world, again, &cmp);
	CHECK(cmp == MPI_IDENT, "two groups of the world: %d, want MPI_IDENT", cmp);
	MPI_Group_free(&again);
	CHECK(again == MPI_GROUP_NULL, "a freed group is MPI_GROUP_NULL");

	if (size <= 64) {
		/* The world reversed: the same set in another order. */
		MPI_Group rev;
		for (int i = 0; i < n; i++)
			ranks[i] = n - 1 - i;
		MPI_Group_incl(world, n, ranks, &rev);
		MPI_Group_rank(rev, &gr);
		CHECK(gr == size - 1 - rank, "reversed: rank %d", gr);
		MPI_Group_compare(world, rev, &cmp);
		CHECK(cmp == (size > 1 ? MPI_SIMILAR : MPI_IDENT), "reversed: compare %d", cmp);
		ranks[0] = 0;
		ranks[1] = MPI_PROC_NULL;
		MPI_Group_translate_ranks(world, size > 1 ? 2 : 1, ranks, rev, got);
		CHECK(got[0] == size - 1 && (size == 1 || got[1] == MPI_PROC_NULL),
		      "translate to reversed: %d %d", got[0], got[1]);

		/* The odd ranks, four ways; the even ones. */
		MPI_Group odd, odd2, odd3, even;
		int k = 0;
		for (int i = 0; i < size; i += 2)
			ranks[k++] = i;
		MPI_Group_excl(world, k, ranks, &odd);
		MPI_Group_incl(world, k, ranks, &even);
		int tri[1][3] = {{1, size - 1 - (size % 2 == 1), 2}};
		MPI_Group_range_incl(world, size > 1 ? 1 : 0, tri, &odd2);
		int tre[1][3] = {{0, size - 1 - (size % 2 == 0), 2}};
		MPI_Group_range_excl(world, 1, tre, &odd3);
		int on = -1, on2 = -1, on3 = -1;
		MPI_Group_size(odd, &on);
		MPI_Group_size(odd2, &on2);
		MPI_Group_size(odd3, &on3);
		CHECK(on == size / 2 && on2 == on && on3 == on, "odd ranks: %d %d %d", on, on2, on3);
		MPI_Group_compare(odd, odd2, &cmp);
		CHECK(cmp == MPI_IDENT, "excl against range_incl: %d", cmp);
		MPI_Group_compare(odd, odd3, &cmp);
		CHECK(cmp == MPI_IDENT, "excl against range_excl: %d", cmp);
		if (on == 0)
			CHECK(odd == MPI_GROUP_EMPTY, "no odd rank: MPI_GROUP_EMPTY");
		MPI_Group_rank(odd, &gr);
		CHECK(gr == (rank % 2 ? rank / 2 : MPI_UNDEFINED), "odd: rank %d", gr);

		/* Set operations, in MPI's order. */
		MPI_Group u, in, diff, none;
		MPI_Group_union(odd, even, &u);
		int m = members(u, world, got, 64);
		for (int i = 0; i < m; i++)
			CHECK(got[i] == (i < on ? 2 * i + 1 : 2 * (i - on)), "union [%d] = %d", i,
			      got[i]);
		CHECK(m == size, "union of %d", m);
		MPI_Group_intersection(rev, odd, &in);
		m = members(in, world, got, 64);
		for (int i = 0; i < m; i++)
			CHECK(got[i] == 2 * (on - 1 - i) + 1, "intersection [%d] = %d", i, got[i]);
		CHECK(m == on, "intersection of %d", m);
		MPI_Group_difference(rev, odd, &diff);
		m = members(diff, world, got, 64);
		CHECK(m == size - on, "difference of %d", m);
		for (int i = 0; i < m; i++)
			CHECK(got[i] % 2 == 0 && (i == 0 || got[i] < got[i - 1]),
			      "difference [%d] = %d", i, got[i]);
		MPI_Group_intersection(odd, even, &none);
		CHECK(none == MPI_GROUP_EMPTY, "odd and even: MPI_GROUP_EMPTY");
		ranks[0] = 0;
		MPI_Group_translate_ranks(world, 1, ranks, odd, got);
		CHECK(got[0] == MPI_UNDEFINED, "rank 0 in the odd ones: %d", got[0]);

		/* A communicator of the odd ranks in reverse order. */
		MPI_Group rodd;
		MPI_Group_intersection(rev, odd, &rodd);
		MPI_Comm oc = MPI_COMM_WORLD;
		int rc = MPI_Comm_create(MPI_COMM_WORLD, rodd, &oc);
		CHECK(rc == MPI_SUCCESS, "MPI_Comm_create: %d", rc);
		if (rank % 2 == 0) {
			CHECK(oc == MPI_COMM_NULL, "an even rank's MPI_Comm_create: not MPI_COMM_NULL");
		} else {
			int cp = -1, cr = -1, sum = -1;
			MPI_Comm_size(oc, &cp);
			MPI_Comm_rank(oc, &cr);
			CHECK(cp == on && cr == on - 1 - rank / 2,
			      "odd communicator: size %d rank %d", cp, cr);
			MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, oc);
			CHECK(sum == on * on, "Allreduce on the odd ranks: %d, want %d", sum, on * on);
			MPI_Group og;
			MPI_Comm_group(oc, &og);
			MPI_Group_compare(og, rodd, &cmp);
			CHECK(cmp == MPI_IDENT, "the new communicator's group: %d", cmp);
			MPI_Group_free(&og);
			MPI_Comm_free(&oc);
		}

		/* MPI_Comm_create on a split: the halves, each made of its
		 * first half (a group of the world, in the half's order). */
		MPI_Comm half, part = MPI_COMM_WORLD;
		MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
		MPI_Group hg, first;
		MPI_Comm_group(half, &hg);
		int hn;
		MPI_Group_size(hg, &hn);
		int fr[1][3] = {{0, (hn - 1) / 2, 1}};
		MPI_Group_range_incl(hg, 1, fr, &first);
		rc = MPI_Comm_create(half, first, &part);
		CHECK(rc == MPI_SUCCESS, "MPI_Comm_create on a split: %d", rc);
		const int pos = rank / 2, in_first = pos <= (hn - 1) / 2;
		CHECK((part != MPI_COMM_NULL) == in_first, "a split's part: %s",
		      part == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
		if (part != MPI_COMM_NULL) {
			MPI_Group pg;
			MPI_Comm_group(part, &pg);
			m = members(pg, world, got, 64);
			for (int i = 0; i < m; i++)
				CHECK(got[i] == rank % 2 + 2 * i, "part [%d] = %d", i, got[i]);
			MPI_Group_free(&pg);
			MPI_Comm_free(&part);
		}

		/* MPI_Comm_create_group, called by the members alone: the odd
		 * ranks reversed and the even ones, each group twice with one
		 * tag (the second call makes a second communicator), while the
		 * other ranks make theirs; a reduction on each, whose ranks
		 * follow the group's order. */
		MPI_Group mine = rank % 2 ? rodd : even;
		MPI_Comm g1 = MPI_COMM_WORLD, g2 = MPI_COMM_WORLD;
		rc = MPI_Comm_create_group(MPI_COMM_WORLD, mine, 5, &g1);
		CHECK(rc == MPI_SUCCESS && g1 != MPI_COMM_NULL, "MPI_Comm_create_group: %d", rc);
		rc = MPI_Comm_create_group(MPI_COMM_WORLD, mine, 5, &g2);
		CHECK(rc == MPI_SUCCESS && g2 != MPI_COMM_NULL && g2 != g1,
		      "a second MPI_Comm_create_group: %d", rc);
		if (g1 != MPI_COMM_NULL && g2 != MPI_COMM_NULL) {
			int r1 = -1, r2 = -1, want = -1, s1 = -1, s2 = -1, twice = 2 * rank, ws = 0;
			MPI_Comm_rank(g1, &r1);
			MPI_Comm_rank(g2, &r2);
			MPI_Group_rank(mine, &want);
			CHECK(r1 == want && r2 == want,
			      "ranks in the groups' communicators: %d %d, want %d", r1, r2, want);
			MPI_Allreduce(&twice, &s2, 1, MPI_INT, MPI_SUM, g2);
			MPI_Allreduce(&rank, &s1, 1, MPI_INT, MPI_SUM, g1);
			m = members(mine, world, got, 64);
			for (int i = 0; i < m; i++)
				ws += got[i];
			CHECK(s1 == ws && s2 == 2 * ws,
			      "sums on the groups: %d and %d, want %d and %d", s1, s2, ws, 2 * ws);
			MPI_Group cg;
			MPI_Comm_group(g1, &cg);
			MPI_Group_compare(cg, mine, &cmp);
			CHECK(cmp == MPI_IDENT, "the group's communicator's group: %d", cmp);
			MPI_Group_free(&cg);
			MPI_Comm_free(&g2);
			MPI_Comm_free(&g1);
		}

		/* Errors, returned (those MPI leaves erroneous without asking
		 * for their detection under TCMPI alone: Open MPI 4.1 takes a
		 * rank named twice and a group outside the communicator, and
		 * calls a stride of 0 MPI_ERR_RANK). */
		MPI_Group bad = MPI_GROUP_NULL;
		int cls = -1;
#ifdef TCMPI
		ranks[0] = ranks[1] = 0;
		rc = MPI_Group_incl(world, size > 1 ? 2 : 1, ranks, &bad);
		MPI_Error_class(rc, &cls);
		CHECK(size == 1 ? rc == MPI_SUCCESS : cls == MPI_ERR_RANK,
		      "a rank named twice: class %d", cls);
		if (size == 1)
			MPI_Group_free(&bad);
		int zero[1][3] = {{0, 0, 0}};
		rc = MPI_Group_range_incl(world, 1, zero, &bad);
		MPI_Error_class(rc, &cls);
		CHECK(cls == MPI_ERR_ARG, "a stride of 0: class %d", cls);
		rc = MPI_Group_size(12345, &gs); /* an int here, a pointer in Open MPI */
		MPI_Error_class(rc, &cls);
		CHECK(cls == MPI_ERR_GROUP, "an invalid group: class %d", cls);
#endif
		ranks[0] = size;
		rc = MPI_Group_incl(world, 1, ranks, &bad);
		MPI_Error_class(rc, &cls);
		CHECK(cls == MPI_ERR_RANK, "rank %d of %d: class %d", size, size, cls);
		MPI_Group nul = MPI_GROUP_NULL;
		rc = MPI_Group_free(&nul);
		MPI_Error_class(rc, &cls);
		CHECK(cls == MPI_ERR_GROUP, "MPI_Group_free(MPI_GROUP_NULL): class %d", cls);
#ifdef TCMPI
		if (size > 1) {
			/* The world's group is not within a half. */
			MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
			MPI_Comm c2 = MPI_COMM_WORLD;
			rc = MPI_Comm_create(half, world, &c2);
			MPI_Error_class(rc, &cls);
			CHECK(cls == MPI_ERR_GROUP, "a group outside the communicator: class %d", cls);
			rc = MPI_Comm_create_group(half, world, 0, &c2);
			MPI_Error_class(rc, &cls);
			CHECK(cls == MPI_ERR_GROUP, "MPI_Comm_create_group outside: class %d", cls);
		}
		MPI_Comm c3 = MPI_COMM_WORLD;
		rc = MPI_Comm_create_group(MPI_COMM_WORLD, world, -1, &c3);
		MPI_Error_class(rc, &cls);
		CHECK(cls == MPI_ERR_TAG, "MPI_Comm_create_group with tag -1: class %d", cls);
#endif
		MPI_Comm_free(&half);
		MPI_Group groups[] = {rev, odd, odd2, odd3, even, u, in, diff, rodd, hg, first};
		for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++)
			if (groups[i] != MPI_GROUP_EMPTY)
				MPI_Group_free(&groups[i]);
	}
	MPI_Group_free(&world);

	int all = 0;
	MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_group: p = %d: %s\n", size, all ? "FAILED" : "ok");
	free(ranks);
	free(got);
	MPI_Finalize();
	return all != 0;
}
