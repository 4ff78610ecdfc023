/* SPDX-License-Identifier: MIT */
/*
 * mpi_dtype.c - derived datatypes: sizes, extents and names, and data
 * moved through collectives and messages with vector, indexed, struct and
 * resized types (packed and unpacked by the layer); extents padded to the
 * alignment of the types in them as MPI defines (a struct type's extent is
 * its C struct's size), but for types of explicit bounds (resized).  Runs
 * the same under Open MPI.
 */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

struct particle {
	double x[3];
	char tag;
	int id;
};

/* Structs whose size has padding at the end, as MPI pads their types. */
struct dc {
	double d;
	char c;
};
struct cdc {
	char a;
	double d;
	char b;
};
struct ic {
	int i;
	char c;
};
struct sc {
	short s;
	char c;
};

/* The struct type of count members of types ty at displacements dsp, one
 * element each; its lb, extent and size. */
static MPI_Datatype struct_type(int count, const MPI_Aint *dsp, const MPI_Datatype *ty,
                                MPI_Aint *lb, MPI_Aint *ext, int *sz)
{
	int bl[4] = {1, 1, 1, 1};
	MPI_Datatype t;
	MPI_Type_create_struct(count, bl, dsp, ty, &t);
	MPI_Type_commit(&t);
	MPI_Type_get_extent(t, lb, ext);
	MPI_Type_size(t, sz);
	return t;
}

/* Extents with MPI's alignment padding (its epsilon), and data moved by a
 * padded struct type with count > 1. */
static void padding(void)
{
	MPI_Aint lb, ext;
	int sz;
	MPI_Datatype dc = struct_type(2, (MPI_Aint[]){offsetof(struct dc, d), offsetof(struct dc, c)},
	                              (MPI_Datatype[]){MPI_DOUBLE, MPI_CHAR}, &lb, &ext, &sz);
	CHECK(lb == 0 && ext == (MPI_Aint)sizeof(struct dc) && sz == 9,
	      "struct {double, char}: lb %ld extent %ld size %d, want 0 %zu 9", (long)lb, (long)ext,
	      sz, sizeof(struct dc));
	MPI_Datatype t = struct_type(3,
	                             (MPI_Aint[]){offsetof(struct cdc, a), offsetof(struct cdc, d),
	                                          offsetof(struct cdc, b)},
	                             (MPI_Datatype[]){MPI_CHAR, MPI_DOUBLE, MPI_CHAR}, &lb, &ext, &sz);
	CHECK(lb == 0 && ext == (MPI_Aint)sizeof(struct cdc) && sz == 10,
	      "struct {char, double, char}: extent %ld size %d, want %zu", (long)ext, sz,
	      sizeof(struct cdc));
	MPI_Type_free(&t);
	t = struct_type(2, (MPI_Aint[]){offsetof(struct ic, i), offsetof(struct ic, c)},
	                (MPI_Datatype[]){MPI_INT, MPI_CHAR}, &lb, &ext, &sz);
	CHECK(ext == (MPI_Aint)sizeof(struct ic) && sz == (int)sizeof(int) + 1,
	      "struct {int, char}: extent %ld, want %zu", (long)ext, sizeof(struct ic));
	MPI_Type_free(&t);
	t = struct_type(2, (MPI_Aint[]){offsetof(struct sc, s), offsetof(struct sc, c)},
	                (MPI_Datatype[]){MPI_SHORT, MPI_CHAR}, &lb, &ext, &sz);
	CHECK(ext == (MPI_Aint)sizeof(struct sc), "struct {short, char}: extent %ld, want %zu",
	      (long)ext, sizeof(struct sc));
	MPI_Type_free(&t);
	/* A member's padding counts where the type is used: the pair type
	 * {double, int} and a char after its 12 bytes of data. */
	t = struct_type(2, (MPI_Aint[]){0, 12}, (MPI_Datatype[]){MPI_DOUBLE_INT, MPI_CHAR}, &lb,
	                &ext, &sz);
	CHECK(ext == 16 && sz == 13, "struct {double_int, char at 12}: extent %ld size %d",
	      (long)ext, sz);
	MPI_Type_free(&t);
	/* Every constructor's type map is padded (MPI defines the extent of
	 * any type map so), not a struct's alone: two ints 3 bytes apart. */
	MPI_Type_create_hvector(2, 1, 3, MPI_INT, &t);
	MPI_Type_get_extent(t, &lb, &ext);
	MPI_Aint al = (MPI_Aint) _Alignof(int), want = (3 + (MPI_Aint)sizeof(int) + al - 1) / al * al;
	CHECK(lb == 0 && ext == want, "hvector of ints 3 bytes apart: extent %ld, want %ld",
	      (long)ext, (long)want);
	MPI_Type_free(&t);
	/* Explicit bounds are kept as given, in the types made of them too. */
	MPI_Datatype r, c;
	MPI_Type_create_resized(dc, 0, 9, &r);
	MPI_Type_contiguous(2, r, &c);
	MPI_Type_get_extent(r, &lb, &ext);
	CHECK(lb == 0 && ext == 9, "resized to 9: lb %ld extent %ld", (long)lb, (long)ext);
	MPI_Type_get_extent(c, &lb, &ext);
	CHECK(lb == 0 && ext == 18, "contiguous 2 of resized to 9: lb %ld extent %ld", (long)lb,
	      (long)ext);
	MPI_Type_free(&c);
	MPI_Type_dup(r, &c);
	MPI_Type_get_extent(c, &lb, &ext);
	CHECK(lb == 0 && ext == 9, "dup of resized to 9: lb %ld extent %ld", (long)lb, (long)ext);
	MPI_Type_free(&c);
	MPI_Type_free(&r);
	/* Where some members have explicit bounds, they alone make the
	 * type's: an int resized to 2 bytes at 8 and a double at 0. */
	MPI_Type_create_resized(MPI_INT, 0, 2, &r);
	t = struct_type(2, (MPI_Aint[]){8, 0}, (MPI_Datatype[]){r, MPI_DOUBLE}, &lb, &ext, &sz);
	CHECK(lb == 8 && ext == 2, "struct {resized int at 8, double}: lb %ld extent %ld", (long)lb,
	      (long)ext);
	MPI_Type_free(&t);
	MPI_Type_free(&r);
	/* An array of the C struct moved by the struct type itself. */
	struct dc a[3];
	memset(a, 0x55, sizeof a);
	for (int i = 0; i < 3; i++) {
		a[i].d = rank == 0 ? 1.5 * (i + 1) : -1;
		a[i].c = rank == 0 ? (char)('a' + i) : '?';
	}
	MPI_Bcast(a, 3, dc, 0, MPI_COMM_WORLD);
	for (int i = 0; i < 3; i++)
		CHECK(a[i].d == 1.5 * (i + 1) && a[i].c == 'a' + i,
		      "bcast of struct {double, char} [%d]: %g %c", i, a[i].d, a[i].c);
	MPI_Type_free(&dc);
}

int main(int argc, char **argv)
{
	int p;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p);

	/* A column of a 4x5 matrix of doubles. */
	MPI_Datatype col;
	MPI_Type_vector(4, 1, 5, MPI_DOUBLE, &col);
	MPI_Type_commit(&col);
	int sz;
	MPI_Aint lb, ext;
	MPI_Type_size(col, &sz);
	MPI_Type_get_extent(col, &lb, &ext);
	CHECK(sz == 32 && lb == 0 && ext == (MPI_Aint)(16 * sizeof(double)),
	      "vector size %d extent %ld", sz, (long)ext);
	double m[4][5];
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 5; j++)
			m[i][j] = rank == 0 ? 10 * i + j : -1;
	MPI_Bcast(&m[0][2], 1, col, 0, MPI_COMM_WORLD);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 5; j++)
			CHECK(m[i][j] == (rank == 0 || j == 2 ? 10 * i + j : -1),
			      "bcast column [%d][%d] = %g", i, j, m[i][j]);
	/* Every rank's column 1 gathered as rows of contiguous doubles. */
	double rows[64][4];
	for (int i = 0; i < 4; i++)
		m[i][1] = 100 * rank + i;
	if (p <= 64) {
		MPI_Allgather(&m[0][1], 1, col, rows, 4, MPI_DOUBLE, MPI_COMM_WORLD);
		for (int k = 0; k < p; k++)
			for (int i = 0; i < 4; i++)
				CHECK(rows[k][i] == 100 * k + i, "allgather vector->contig");
	}

	/* A struct with padding. */
	MPI_Datatype pt;
	int bl[3] = {3, 1, 1};
	MPI_Aint dsp[3] = {offsetof(struct particle, x), offsetof(struct particle, tag),
	                   offsetof(struct particle, id)};
	MPI_Datatype ty[3] = {MPI_DOUBLE, MPI_CHAR, MPI_INT};
	MPI_Type_create_struct(3, bl, dsp, ty, &pt);
	MPI_Datatype pt2;
	MPI_Type_create_resized(pt, 0, sizeof(struct particle), &pt2);
	MPI_Type_commit(&pt2);
	MPI_Type_size(pt2, &sz);
	MPI_Type_get_extent(pt2, &lb, &ext);
	CHECK(sz == 3 * 8 + 1 + 4 && ext == (MPI_Aint)sizeof(struct particle),
	      "struct size %d extent %ld", sz, (long)ext);
	MPI_Type_set_name(pt2, "particle");
	char name[MPI_MAX_OBJECT_NAME];
	int len;
	MPI_Type_get_name(pt2, name, &len);
	CHECK(!strcmp(name, "particle"), "name %s", name);
	MPI_Type_get_name(MPI_DOUBLE, name, &len);
	CHECK(!strcmp(name, "MPI_DOUBLE"), "name %s", name);
	struct particle mine[2], all[128];
	memset(mine, 0x55, sizeof mine);
	for (int k = 0; k < 2; k++) {
		mine[k].x[0] = rank;
		mine[k].x[1] = k;
		mine[k].x[2] = -rank;
		mine[k].tag = (char)('a' + k);
		mine[k].id = 2 * rank + k;
	}
	if (p <= 64) {
		memset(all, 0, sizeof all);
		MPI_Allgather(mine, 2, pt2, all, 2, pt2, MPI_COMM_WORLD);
		for (int i = 0; i < 2 * p; i++)
			CHECK(all[i].x[0] == i / 2 && all[i].x[1] == i % 2 && all[i].x[2] == -(i / 2) &&
			              all[i].tag == 'a' + i % 2 && all[i].id == i,
			      "struct allgather [%d]", i);
	}

	/* Indexed: elements 0, 3-4, 7-9 of a row. */
	int ibl[3] = {1, 2, 3}, idsp[3] = {0, 3, 7};
	MPI_Datatype idx;
	MPI_Type_indexed(3, ibl, idsp, MPI_INT, &idx);
	MPI_Type_commit(&idx);
	int row[10], got[6];
	for (int i = 0; i < 10; i++)
		row[i] = rank * 10 + i;
	if (p > 1) {
		int to = (rank + 1) % p, from = (rank + p - 1) % p;
		MPI_Status st;
		MPI_Sendrecv(row, 1, idx, to, 7, got, 6, MPI_INT, from, 7, MPI_COMM_WORLD, &st);
		int want[6] = {0, 3, 4, 7, 8, 9}, cnt;
		for (int i = 0; i < 6; i++)
			CHECK(got[i] == from * 10 + want[i], "indexed sendrecv [%d] = %d", i, got[i]);
		MPI_Get_count(&st, MPI_INT, &cnt);
		CHECK(cnt == 6 && st.MPI_SOURCE == from, "status count %d source %d", cnt, st.MPI_SOURCE);
	}
	/* MPI_Pack / MPI_Unpack round trip. */
	char buf[256];
	int pos = 0;
	MPI_Pack(row, 1, idx, buf, sizeof buf, &pos, MPI_COMM_WORLD);
	CHECK(pos == 24, "pack position %d", pos);
	int back[10] = {0};
	pos = 0;
	MPI_Unpack(buf, sizeof buf, &pos, back, 1, idx, MPI_COMM_WORLD);
	CHECK(back[3] == row[3] && back[9] == row[9] && back[1] == 0, "unpack");

	padding();

	MPI_Type_free(&col);
	MPI_Type_free(&pt);
	MPI_Type_free(&pt2);
	MPI_Type_free(&idx);
	int total;
	MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_dtype: p = %d: %s (%d failures)\n", p, total ? "FAILED" : "ok", total);
	MPI_Finalize();
	return total != 0;
}
