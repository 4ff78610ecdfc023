/* SPDX-License-Identifier: MIT */
/*
 * mpi_typeinfo.c - what a program asks of datatypes and statuses.
 * MPI_Type_get_envelope and MPI_Type_get_contents for every constructor:
 * each type's envelope and arguments as given, and each type made again
 * from them alone (recursively, through the types they return, which are
 * then freed) packing the same bytes with the same size and bounds, also
 * after the program freed the types it was made of; predefined types
 * named and without contents, short arrays refused.  The _x and _c query
 * forms, MPI_Type_match_size.  MPI_Get_elements (and _x) of messages that
 * end inside a datatype's element, MPI_Status_set_elements (and _x), and
 * MPI 4.1's status field accessors.  MPI_Pack_external and
 * MPI_Unpack_external byte for byte in "external32" (big-endian, the
 * standard's sizes, a padded struct's members alone), read back, other
 * representations and values too large refused; the _c forms.
 * MPI_Type_create_f90_integer, _real and _complex: sizes, one handle per
 * arguments, envelopes and contents, data through a struct of them.
 * Runs the same under Open MPI (the error classes, which MPI leaves to
 * the implementation, and what Open MPI 4.1 lacks or does otherwise are
 * checked under TCMPI alone).
 */
#include <limits.h>
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Whether t is predefined: named, or made by MPI_Type_create_f90_*
 * (which MPI calls predefined too: never freed). */
static int is_named(MPI_Datatype t)
{
	int ni, na, nd, comb;
	MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
	return comb == MPI_COMBINER_NAMED || comb == MPI_COMBINER_F90_INTEGER ||
	       comb == MPI_COMBINER_F90_REAL || comb == MPI_COMBINER_F90_COMPLEX;
}

/* A new type made from t's envelope and contents alone (the types they
 * name made so too), or t itself when predefined. */
static MPI_Datatype remake(MPI_Datatype t)
{
	int ni, na, nd, comb;
	if (is_named(t))
		return t;
	MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
	int *i = malloc(sizeof *i * (size_t)(ni + 1));
	MPI_Aint *a = malloc(sizeof *a * (size_t)(na + 1));
	MPI_Datatype *d = malloc(sizeof *d * (size_t)(nd + 1)),
	             *dd = malloc(sizeof *d * (size_t)(nd + 1));
	int rc = MPI_Type_get_contents(t, ni, na, nd, i, a, d);
	CHECK(rc == MPI_SUCCESS, "get_contents: rc %d", rc);
	for (int k = 0; k < nd; k++)
		dd[k] = remake(d[k]);
	MPI_Datatype r = MPI_DATATYPE_NULL;
	int n;
	switch (comb) {
	case MPI_COMBINER_DUP:
		MPI_Type_dup(dd[0], &r);
		break;
	case MPI_COMBINER_CONTIGUOUS:
		MPI_Type_contiguous(i[0], dd[0], &r);
		break;
	case MPI_COMBINER_VECTOR:
		MPI_Type_vector(i[0], i[1], i[2], dd[0], &r);
		break;
	case MPI_COMBINER_HVECTOR:
		MPI_Type_create_hvector(i[0], i[1], a[0], dd[0], &r);
		break;
	case MPI_COMBINER_INDEXED:
		MPI_Type_indexed(i[0], i + 1, i + 1 + i[0], dd[0], &r);
		break;
	case MPI_COMBINER_HINDEXED:
		MPI_Type_create_hindexed(i[0], i + 1, a, dd[0], &r);
		break;
	case MPI_COMBINER_INDEXED_BLOCK:
		MPI_Type_create_indexed_block(i[0], i[1], i + 2, dd[0], &r);
		break;
	case MPI_COMBINER_HINDEXED_BLOCK:
		MPI_Type_create_hindexed_block(i[0], i[1], a, dd[0], &r);
		break;
	case MPI_COMBINER_STRUCT:
		MPI_Type_create_struct(i[0], i + 1, a, dd, &r);
		break;
	case MPI_COMBINER_SUBARRAY:
		n = i[0];
		MPI_Type_create_subarray(n, i + 1, i + 1 + n, i + 1 + 2 * n, i[1 + 3 * n], dd[0], &r);
		break;
	case MPI_COMBINER_DARRAY:
		n = i[2];
		MPI_Type_create_darray(i[0], i[1], n, i + 3, i + 3 + n, i + 3 + 2 * n,
		                       i + 3 + 3 * n, i[3 + 4 * n], dd[0], &r);
		break;
	case MPI_COMBINER_RESIZED:
		MPI_Type_create_resized(dd[0], a[0], a[1], &r);
		break;
	default:
		CHECK(0, "unexpected combiner %d", comb);
	}
	for (int k = 0; k < nd; k++) {
		if (!is_named(d[k]))
			MPI_Type_free(&d[k]);
		if (!is_named(dd[k]))
			MPI_Type_free(&dd[k]);
	}
	free(i);
	free(a);
	free(d);
	free(dd);
	return r;
}

static unsigned char src[8192];

/* t made again from its contents: the same size, bounds and packed
 * bytes of two elements. */
static void same_again(MPI_Datatype t, const char *what)
{
	MPI_Datatype r = remake(t);
	MPI_Type_commit(&r);
	MPI_Type_commit(&t);
	int s1, s2, p1 = 0, p2 = 0;
	MPI_Aint lb1, ex1, lb2, ex2, tl1, te1, tl2, te2;
	MPI_Type_size(t, &s1);
	MPI_Type_size(r, &s2);
	MPI_Type_get_extent(t, &lb1, &ex1);
	MPI_Type_get_extent(r, &lb2, &ex2);
	MPI_Type_get_true_extent(t, &tl1, &te1);
	MPI_Type_get_true_extent(r, &tl2, &te2);
	CHECK(s1 == s2 && lb1 == lb2 && ex1 == ex2 && tl1 == tl2 && te1 == te2,
	      "%s made again: size %d/%d lb %ld/%ld extent %ld/%ld true %ld %ld/%ld %ld", what, s1, s2,
	      (long)lb1, (long)lb2, (long)ex1, (long)ex2, (long)tl1, (long)te1, (long)tl2, (long)te2);
	static unsigned char o1[8192], o2[8192];
	memset(o1, 0, sizeof o1);
	memset(o2, 1, sizeof o2);
	if (s1 == s2 && 2 * s1 <= (int)sizeof o1 && tl1 >= 0 && tl1 + ex1 + te1 <= (MPI_Aint)sizeof src) {
		MPI_Pack(src, 2, t, o1, sizeof o1, &p1, MPI_COMM_WORLD);
		MPI_Pack(src, 2, r, o2, sizeof o2, &p2, MPI_COMM_WORLD);
		CHECK(p1 == 2 * s1 && p2 == p1 && !memcmp(o1, o2, (size_t)p1),
		      "%s made again packs other bytes", what);
	}
	MPI_Type_free(&r);
}

/* t's envelope is (ni, na, nd, comb). */
static void envelope(MPI_Datatype t, int ni, int na, int nd, int comb, const char *what)
{
	int gi, ga, gd, gc;
	MPI_Type_get_envelope(t, &gi, &ga, &gd, &gc);
	CHECK(gi == ni && ga == na && gd == nd && gc == comb,
	      "%s envelope: %d %d %d combiner %d, want %d %d %d %d", what, gi, ga, gd, gc, ni, na,
	      nd, comb);
}

/* Each MPI_Type_get_contents below asks for the envelope's numbers
 * exactly: Open MPI 4.1 reads max_datatypes handles from the array. */
static void constructors(void)
{
	for (size_t k = 0; k < sizeof src; k++)
		src[k] = (unsigned char)(k * 37 + 11);
	MPI_Datatype t, v, s, in;
	MPI_Type_contiguous(3, MPI_INT, &t);
	envelope(t, 1, 0, 1, MPI_COMBINER_CONTIGUOUS, "contiguous");
	same_again(t, "contiguous");
	MPI_Type_free(&t);

	MPI_Type_vector(3, 2, 4, MPI_SHORT, &v);
	envelope(v, 3, 0, 1, MPI_COMBINER_VECTOR, "vector");
	int ints[16];
	MPI_Aint aints[8];
	MPI_Datatype types[4];
	MPI_Type_get_contents(v, 3, 0, 1, ints, aints, types);
	CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 4 && types[0] == MPI_SHORT,
	      "vector contents %d %d %d type %d", ints[0], ints[1], ints[2], types[0] == MPI_SHORT);
	same_again(v, "vector");

	MPI_Type_create_hvector(2, 3, 20, MPI_CHAR, &t);
	envelope(t, 2, 1, 1, MPI_COMBINER_HVECTOR, "hvector");
	MPI_Type_get_contents(t, 2, 1, 1, ints, aints, types);
	CHECK(ints[0] == 2 && ints[1] == 3 && aints[0] == 20 && types[0] == MPI_CHAR, "hvector contents");
	same_again(t, "hvector");
	MPI_Type_free(&t);

	MPI_Type_indexed(3, (int[]){1, 2, 3}, (int[]){0, 4, 9}, MPI_INT, &t);
	envelope(t, 7, 0, 1, MPI_COMBINER_INDEXED, "indexed");
	MPI_Type_get_contents(t, 7, 0, 1, ints, aints, types);
	CHECK(ints[0] == 3 && ints[1] == 1 && ints[3] == 3 && ints[4] == 0 && ints[6] == 9,
	      "indexed contents");
	same_again(t, "indexed");
	/* Resized: its bounds as addresses. */
	MPI_Type_create_resized(t, 4, 64, &s);
	envelope(s, 0, 2, 1, MPI_COMBINER_RESIZED, "resized");
	MPI_Type_get_contents(s, 0, 2, 1, ints, aints, types);
	CHECK(aints[0] == 4 && aints[1] == 64 && !is_named(types[0]), "resized contents");
	/* The type returned is a new one (TCMPI: a handle of its own), made
	 * as the one given. */
	envelope(types[0], 7, 0, 1, MPI_COMBINER_INDEXED, "resized's indexed");
#ifdef TCMPI
	CHECK(types[0] != t, "get_contents returned the handle given");
#endif
	MPI_Type_free(&types[0]);
	MPI_Type_free(&t);
	/* Its contents after its own parts are freed. */
	same_again(s, "resized of a freed indexed");
	MPI_Type_free(&s);

	MPI_Type_create_hindexed(2, (int[]){2, 1}, (MPI_Aint[]){0, 24}, MPI_DOUBLE, &t);
	envelope(t, 3, 2, 1, MPI_COMBINER_HINDEXED, "hindexed");
	same_again(t, "hindexed");
	MPI_Type_free(&t);

	MPI_Type_create_indexed_block(3, 2, (int[]){1, 5, 8}, MPI_FLOAT, &t);
	envelope(t, 5, 0, 1, MPI_COMBINER_INDEXED_BLOCK, "indexed_block");
	MPI_Type_get_contents(t, 5, 0, 1, ints, aints, types);
	CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 1 && ints[4] == 8, "indexed_block contents");
	same_again(t, "indexed_block");
	MPI_Type_free(&t);

	MPI_Type_create_hindexed_block(2, 3, (MPI_Aint[]){4, 40}, MPI_SHORT, &t);
	envelope(t, 2, 2, 1, MPI_COMBINER_HINDEXED_BLOCK, "hindexed_block");
	same_again(t, "hindexed_block");
	MPI_Type_free(&t);

	/* A struct of a predefined type, a pair type and a derived one. */
	MPI_Type_create_struct(3, (int[]){1, 2, 1}, (MPI_Aint[]){0, 8, 40},
	                       (MPI_Datatype[]){MPI_INT, MPI_DOUBLE_INT, v}, &s);
	envelope(s, 4, 3, 3, MPI_COMBINER_STRUCT, "struct");
	MPI_Type_get_contents(s, 4, 3, 3, ints, aints, types);
	CHECK(ints[0] == 3 && ints[1] == 1 && ints[2] == 2 && aints[1] == 8 && aints[2] == 40 &&
	              types[0] == MPI_INT && types[1] == MPI_DOUBLE_INT,
	      "struct contents");
	envelope(types[2], 3, 0, 1, MPI_COMBINER_VECTOR, "struct's vector");
	MPI_Type_free(&types[2]);
	MPI_Type_free(&v);
	same_again(s, "struct");
	MPI_Type_dup(s, &t);
	envelope(t, 0, 0, 1, MPI_COMBINER_DUP, "dup");
	MPI_Type_free(&s);
	same_again(t, "dup of a freed struct");
	MPI_Type_free(&t);

	/* Subarray and darray of a derived element. */
	MPI_Type_contiguous(2, MPI_INT, &in);
	MPI_Type_create_subarray(2, (int[]){5, 6}, (int[]){2, 3}, (int[]){1, 2}, MPI_ORDER_FORTRAN,
	                         in, &t);
	envelope(t, 8, 0, 1, MPI_COMBINER_SUBARRAY, "subarray");
	MPI_Type_get_contents(t, 8, 0, 1, ints, aints, types);
	CHECK(ints[0] == 2 && ints[1] == 5 && ints[2] == 6 && ints[3] == 2 && ints[4] == 3 &&
	              ints[5] == 1 && ints[6] == 2 && ints[7] == MPI_ORDER_FORTRAN,
	      "subarray contents");
	MPI_Type_free(&types[0]);
	same_again(t, "subarray");
	MPI_Type_free(&t);
	int g[2] = {6, 5}, dist[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK};
	int darg[2] = {2, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {0, 0};
	MPI_Dims_create(size, 2, ps);
	MPI_Type_create_darray(size, rank, 2, g, dist, darg, ps, MPI_ORDER_C, in, &t);
	envelope(t, 12, 0, 1, MPI_COMBINER_DARRAY, "darray");
	MPI_Type_get_contents(t, 12, 0, 1, ints, aints, types);
	CHECK(ints[0] == size && ints[1] == rank && ints[2] == 2 && ints[3] == 6 &&
	              ints[5] == MPI_DISTRIBUTE_CYCLIC && ints[7] == 2 &&
	              ints[8] == MPI_DISTRIBUTE_DFLT_DARG && ints[9] == ps[0] && ints[11] == MPI_ORDER_C,
	      "darray contents");
	MPI_Type_free(&types[0]);
	MPI_Type_free(&in);
	same_again(t, "darray");
	MPI_Type_free(&t);

	/* Predefined types: named, with no contents. */
	envelope(MPI_DOUBLE, 0, 0, 0, MPI_COMBINER_NAMED, "MPI_DOUBLE");
	envelope(MPI_2INT, 0, 0, 0, MPI_COMBINER_NAMED, "MPI_2INT");
	int rc = MPI_Type_get_contents(MPI_INT, 16, 8, 4, ints, aints, types);
	CHECK(rc != MPI_SUCCESS, "get_contents of MPI_INT succeeded");
#ifdef TCMPI
	CHECK(rc == MPI_ERR_TYPE, "get_contents of MPI_INT: rc %d", rc);
	MPI_Type_vector(2, 1, 2, MPI_INT, &t);
	rc = MPI_Type_get_contents(t, 2, 0, 1, ints, aints, types);
	CHECK(rc == MPI_ERR_ARG, "get_contents into 2 integers of 3: rc %d", rc);
	rc = MPI_Type_get_contents(t, 3, 0, 0, ints, aints, types);
	CHECK(rc == MPI_ERR_ARG, "get_contents into no datatypes: rc %d", rc);
	rc = MPI_Type_get_envelope(-4, ints, ints + 1, ints + 2, ints + 3);
	CHECK(rc == MPI_ERR_TYPE, "envelope of a bad type: rc %d", rc);
	MPI_Count ci, ca, cl, cd;
	int comb;
	rc = MPI_Type_get_envelope_c(t, &ci, &ca, &cl, &cd, &comb);
	CHECK(rc == MPI_SUCCESS && ci == 3 && ca == 0 && cl == 0 && cd == 1 && comb == MPI_COMBINER_VECTOR,
	      "envelope_c: %lld %lld %lld %lld %d", ci, ca, cl, cd, comb);
	MPI_Count lc[1];
	rc = MPI_Type_get_contents_c(t, 3, 0, 0, 1, ints, aints, lc, types);
	CHECK(rc == MPI_SUCCESS && ints[0] == 2 && ints[1] == 1 && ints[2] == 2 && types[0] == MPI_INT,
	      "contents_c: rc %d", rc);
	MPI_Type_free(&t);
#endif
}

/* The type of MPI_Type_create_f90_* of combiner comb and arguments (p, r)
 * (r alone for integers): size bytes, the same handle on a second call,
 * its envelope and contents those arguments. */
static MPI_Datatype f90(int comb, int p, int r, int size_want)
{
	MPI_Datatype t = MPI_DATATYPE_NULL, t2 = MPI_DATATYPE_NULL;
	int rc, n = comb == MPI_COMBINER_F90_INTEGER ? 1 : 2, sz = -1, ints[2] = {-9, -9};
	if (comb == MPI_COMBINER_F90_INTEGER) {
		rc = MPI_Type_create_f90_integer(r, &t);
		MPI_Type_create_f90_integer(r, &t2);
	} else if (comb == MPI_COMBINER_F90_REAL) {
		rc = MPI_Type_create_f90_real(p, r, &t);
		MPI_Type_create_f90_real(p, r, &t2);
	} else {
		rc = MPI_Type_create_f90_complex(p, r, &t);
		MPI_Type_create_f90_complex(p, r, &t2);
	}
	CHECK(rc == MPI_SUCCESS, "f90 %d (%d, %d): rc %d", comb, p, r, rc);
	if (rc != MPI_SUCCESS)
		return MPI_DATATYPE_NULL;
	MPI_Type_size(t, &sz);
	CHECK(sz == size_want && t == t2, "f90 %d (%d, %d): size %d, want %d; same handle %d", comb,
	      p, r, sz, size_want, t == t2);
	envelope(t, n, 0, 0, comb, "f90");
	MPI_Type_get_contents(t, n, 0, 0, ints, NULL, NULL);
	CHECK(n == 1 ? ints[0] == r : ints[0] == p && ints[1] == r, "f90 %d contents %d %d", comb,
	      ints[0], ints[1]);
	return t;
}

static void f90s(int p)
{
	f90(MPI_COMBINER_F90_INTEGER, 0, 2, 1);
	f90(MPI_COMBINER_F90_INTEGER, 0, 3, 2);
	f90(MPI_COMBINER_F90_INTEGER, 0, 9, 4);
	MPI_Datatype i8 = f90(MPI_COMBINER_F90_INTEGER, 0, 10, 8);
	f90(MPI_COMBINER_F90_REAL, 6, MPI_UNDEFINED, 4);
	f90(MPI_COMBINER_F90_REAL, 7, 10, 8);
	MPI_Datatype r8 = f90(MPI_COMBINER_F90_REAL, MPI_UNDEFINED, 300, 8);
	f90(MPI_COMBINER_F90_COMPLEX, 15, MPI_UNDEFINED, 16);
	f90(MPI_COMBINER_F90_COMPLEX, 3, 30, 8);
	/* Data through them, and a struct of them decoded. */
	struct {
		long long i;
		double d;
	} out = {rank * 1000000000000LL, rank + 0.25}, in = {0, 0};
	MPI_Datatype s;
	MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 8}, (MPI_Datatype[]){i8, r8}, &s);
	MPI_Type_commit(&s);
	int from = (rank + p - 1) % p;
	MPI_Sendrecv(&out, 1, s, (rank + 1) % p, 5, &in, 1, s, from, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	CHECK(in.i == from * 1000000000000LL && in.d == from + 0.25, "f90 struct received %lld %g",
	      in.i, in.d);
	int ints[3];
	MPI_Aint a[2];
	MPI_Datatype d[2] = {0, 0};
	MPI_Type_get_contents(s, 3, 2, 2, ints, a, d);
	CHECK(d[0] == i8 && d[1] == r8, "struct of f90 types: its types returned as themselves");
	same_again(s, "struct of f90 types");
	MPI_Type_free(&s);
#ifdef TCMPI
	MPI_Datatype t = i8;
	int rc = MPI_Type_free(&t);
	CHECK(rc == MPI_ERR_TYPE && t == i8, "free of an f90 type: rc %d", rc);
	rc = MPI_Type_create_f90_integer(19, &t);
	CHECK(rc == MPI_ERR_ARG, "f90 integer of range 10^19: rc %d", rc);
	rc = MPI_Type_create_f90_real(40, MPI_UNDEFINED, &t);
	CHECK(rc == MPI_ERR_ARG, "f90 real of 40 digits: rc %d", rc);
	rc = MPI_Type_create_f90_complex(MPI_UNDEFINED, MPI_UNDEFINED, &t);
	CHECK(rc == MPI_ERR_ARG, "f90 complex of no precision and no range: rc %d", rc);
#endif
}

/* The _x and _c queries, MPI_Type_match_size. */
static void queries(void)
{
	MPI_Datatype t;
	MPI_Type_create_hvector(3, 1, 12, MPI_INT, &t);
	MPI_Count lb, ext, tlb, text, sz;
	MPI_Type_get_extent_x(t, &lb, &ext);
	MPI_Type_get_true_extent_x(t, &tlb, &text);
	MPI_Type_size_x(t, &sz);
	CHECK(lb == 0 && ext == 28 && tlb == 0 && text == 28 && sz == 12,
	      "_x queries: %lld %lld %lld %lld %lld", lb, ext, tlb, text, sz);
#if MPI_VERSION >= 4
	MPI_Type_get_true_extent_c(t, &tlb, &text);
	CHECK(tlb == 0 && text == 28, "true_extent_c: %lld %lld", tlb, text);
#endif
	MPI_Type_free(&t);
	MPI_Datatype m;
	int s;
	MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &m);
	MPI_Type_size(m, &s);
	CHECK(s == 4, "match_size integer 4: size %d", s);
	MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 8, &m);
	MPI_Type_size(m, &s);
	CHECK(s == 8, "match_size integer 8: size %d", s);
	MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m);
	MPI_Type_size(m, &s);
	CHECK(s == 8, "match_size real 8: size %d", s);
	MPI_Type_match_size(MPI_TYPECLASS_REAL, 4, &m);
	MPI_Type_size(m, &s);
	CHECK(s == 4, "match_size real 4: size %d", s);
	MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &m);
	MPI_Type_size(m, &s);
	CHECK(s == 16, "match_size complex 16: size %d", s);
	int rc = MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &m);
	CHECK(rc != MPI_SUCCESS, "match_size real 3 succeeded");
	rc = MPI_Type_match_size(99, 4, &m);
	CHECK(rc != MPI_SUCCESS, "match_size of class 99 succeeded");
#ifdef TCMPI
	CHECK(rc == MPI_ERR_ARG, "match_size of class 99: rc %d", rc);
	CHECK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 2, &m) == MPI_SUCCESS && m == MPI_INT16_T,
	      "match_size integer 2: %d", (int)m);
#endif
}

struct is {
	int i;
	short s;
};

/* Elements of messages that end inside an element of the receive type. */
static void elements(int p)
{
	/* The receive type {int, short} (2 basic elements, 6 bytes); a
	 * message of int, short, int: one element and a third. */
	MPI_Datatype r, s3;
	MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 4},
	                       (MPI_Datatype[]){MPI_INT, MPI_SHORT}, &r);
	MPI_Type_commit(&r);
	MPI_Type_create_struct(3, (int[]){1, 1, 1}, (MPI_Aint[]){0, 4, 8},
	                       (MPI_Datatype[]){MPI_INT, MPI_SHORT, MPI_INT}, &s3);
	MPI_Type_commit(&s3);
	struct {
		int a;
		short b;
		int c;
	} out = {rank + 1, (short)(rank + 2), rank + 3};
	struct is in[2] = {{-1, -1}, {-1, -1}};
	int to = (rank + 1) % p, from = (rank + p - 1) % p, n = -5;
	MPI_Status st;
	MPI_Sendrecv(&out, 1, s3, to, 1, in, 2, r, from, 1, MPI_COMM_WORLD, &st);
	CHECK(in[0].i == from + 1 && in[0].s == from + 2, "{int, short} received %d %d", in[0].i,
	      in[0].s);
	/* The partial element is received too, as MPI says. */
	CHECK(in[1].i == from + 3, "{int, short} received %d as the third", in[1].i);
	MPI_Get_count(&st, r, &n);
	CHECK(n == MPI_UNDEFINED, "count of 1 1/2 elements: %d", n);
	MPI_Get_elements(&st, r, &n);
	CHECK(n == 3, "elements of int, short, int as {int, short}: %d", n);
	MPI_Count nx = -5;
	MPI_Get_elements_x(&st, r, &nx);
	CHECK(nx == 3, "elements_x: %lld", nx);
	MPI_Get_elements(&st, MPI_BYTE, &n);
	CHECK(n == 10, "elements as bytes: %d", n);
	/* 7 ints as contiguous(3, MPI_INT): 7 elements, no count. */
	MPI_Datatype c3;
	MPI_Type_contiguous(3, MPI_INT, &c3);
	MPI_Type_commit(&c3);
	int seven[7] = {1, 2, 3, 4, 5, 6, 7}, got[9];
	MPI_Sendrecv(seven, 7, MPI_INT, to, 2, got, 3, c3, from, 2, MPI_COMM_WORLD, &st);
	MPI_Get_count(&st, c3, &n);
	CHECK(n == MPI_UNDEFINED, "count of 7 ints as 3-int elements: %d", n);
	MPI_Get_elements(&st, c3, &n);
	CHECK(n == 7 && got[5] == 6, "elements of 7 ints as 3-int elements: %d", n);
	CHECK(got[6] == 7, "7 ints as 3-int elements: the seventh %d", got[6]);
	/* A status set to elements. */
	MPI_Status_set_elements(&st, r, 3);
	MPI_Get_elements(&st, r, &n);
	CHECK(n == 3, "set_elements 3, get %d", n);
	MPI_Get_count(&st, r, &n);
	CHECK(n == MPI_UNDEFINED, "set_elements 3, count %d", n);
	MPI_Get_count(&st, MPI_BYTE, &n);
	CHECK(n == 10, "set_elements 3 of {int, short}: %d bytes", n);
	MPI_Status_set_elements_x(&st, r, 4);
	MPI_Get_count(&st, r, &n);
	CHECK(n == 2, "set_elements_x 4, count %d", n);
	MPI_Get_elements(&st, MPI_SHORT, &n);
	CHECK(n == 6, "12 bytes as shorts: %d", n);
#ifdef TCMPI
	/* MPI defines MPI_2INT as two MPI_INTs (MPI_Type_contiguous): its
	 * basic elements are ints.  Open MPI 4.1 counts the pair as one and
	 * answers MPI_UNDEFINED. */
	MPI_Get_elements(&st, MPI_2INT, &n);
	CHECK(n == 3, "12 bytes as MPI_2INT: %d basic elements", n);
#endif
	/* A message of no bytes. */
	MPI_Sendrecv(seven, 0, MPI_INT, to, 3, got, 3, c3, from, 3, MPI_COMM_WORLD, &st);
	MPI_Get_elements(&st, c3, &n);
	CHECK(n == 0, "elements of an empty message: %d", n);
#ifdef TCMPI
	/* 5 bytes as {int, short}: the message ends inside the short. */
	MPI_Status_set_elements(&st, MPI_BYTE, 5);
	MPI_Get_elements(&st, r, &n);
	CHECK(n == MPI_UNDEFINED, "5 bytes as {int, short}: %d", n);
	int rc = MPI_Get_elements(MPI_STATUS_IGNORE, r, &n);
	CHECK(rc == MPI_ERR_ARG, "get_elements of MPI_STATUS_IGNORE: rc %d", rc);
	rc = MPI_Get_elements(&st, 999, &n);
	CHECK(rc == MPI_ERR_TYPE, "get_elements of a bad type: rc %d", rc);
	rc = MPI_Status_set_elements(&st, r, -1);
	CHECK(rc == MPI_ERR_COUNT, "set_elements -1: rc %d", rc);
#endif
	MPI_Type_free(&r);
	MPI_Type_free(&s3);
	MPI_Type_free(&c3);
}

#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
static void status_fields(void)
{
	MPI_Status st;
	int v = 0;
	MPI_Status_set_source(&st, 5);
	MPI_Status_set_tag(&st, 77);
	MPI_Status_set_error(&st, MPI_ERR_TAG);
	CHECK(st.MPI_SOURCE == 5 && st.MPI_TAG == 77 && st.MPI_ERROR == MPI_ERR_TAG,
	      "status set: %d %d %d", st.MPI_SOURCE, st.MPI_TAG, st.MPI_ERROR);
	MPI_Status_get_source(&st, &v);
	CHECK(v == 5, "get_source %d", v);
	MPI_Status_get_tag(&st, &v);
	CHECK(v == 77, "get_tag %d", v);
	MPI_Status_get_error(&st, &v);
	CHECK(v == MPI_ERR_TAG, "get_error %d", v);
	/* From a real receive. */
	int x = rank, y = -1, p = size;
	MPI_Sendrecv(&x, 1, MPI_INT, (rank + 1) % p, 9, &y, 1, MPI_INT, (rank + p - 1) % p, 9,
	             MPI_COMM_WORLD, &st);
	MPI_Status_get_source(&st, &v);
	CHECK(v == (rank + p - 1) % p && y == v, "received: get_source %d", v);
	MPI_Status_get_tag(&st, &v);
	CHECK(v == 9, "received: get_tag %d", v);
#ifdef TCMPI
	CHECK(MPI_Status_get_tag(MPI_STATUS_IGNORE, &v) == MPI_ERR_ARG, "get_tag of MPI_STATUS_IGNORE");
	CHECK(MPI_Status_set_source(NULL, 1) == MPI_ERR_ARG, "set_source of NULL");
	CHECK(MPI_Status_get_error(&st, NULL) == MPI_ERR_ARG, "get_error into NULL");
#endif
}
#endif

/* The bytes at b are those of want (n of them). */
static int bytes_are(const unsigned char *b, const unsigned char *want, int n)
{
	return !memcmp(b, want, (size_t)n);
}

struct cid {
	char c;
	int i;
	double d;
};

/* MPI_Pack_external to "external32": big-endian bytes in the standard's
 * sizes, read back by MPI_Unpack_external; the _c forms of MPI_Pack. */
static void external32(void)
{
	unsigned char buf[256];
	MPI_Aint pos = 0, sz;
	int iv[3] = {1, -2, 0x01020304}, ib[3] = {0, 0, 0};
	MPI_Pack_external("external32", iv, 3, MPI_INT, buf, sizeof buf, &pos);
	CHECK(pos == 12 &&
	              bytes_are(buf,
	                        (const unsigned char[]){0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe, 1, 2, 3, 4},
	                        12),
	      "external32 ints: position %ld", (long)pos);
	short sv = 0x1234;
	float fv = 1.5f;
	double dv = 1.0;
	MPI_Pack_external("external32", &sv, 1, MPI_SHORT, buf, sizeof buf, &pos);
	MPI_Pack_external("external32", &fv, 1, MPI_FLOAT, buf, sizeof buf, &pos);
	MPI_Pack_external("external32", &dv, 1, MPI_DOUBLE, buf, sizeof buf, &pos);
	CHECK(pos == 26 && bytes_are(buf + 12,
	                             (const unsigned char[]){0x12, 0x34, 0x3f, 0xc0, 0, 0, 0x3f,
	                                                     0xf0, 0, 0, 0, 0, 0, 0},
	                             14),
	      "external32 short, float, double: position %ld", (long)pos);
	MPI_Aint rpos = 0;
	short sb = 0;
	float fb = 0;
	double db = 0;
	MPI_Unpack_external("external32", buf, pos, &rpos, ib, 3, MPI_INT);
	MPI_Unpack_external("external32", buf, pos, &rpos, &sb, 1, MPI_SHORT);
	MPI_Unpack_external("external32", buf, pos, &rpos, &fb, 1, MPI_FLOAT);
	MPI_Unpack_external("external32", buf, pos, &rpos, &db, 1, MPI_DOUBLE);
	CHECK(rpos == pos && ib[0] == 1 && ib[1] == -2 && ib[2] == 0x01020304 && sb == sv &&
	              fb == fv && db == dv,
	      "external32 read back: position %ld", (long)rpos);

	/* A padded struct: its members alone, no padding. */
	MPI_Datatype st;
	MPI_Type_create_struct(3, (int[]){1, 1, 1},
	                       (MPI_Aint[]){offsetof(struct cid, c), offsetof(struct cid, i),
	                                    offsetof(struct cid, d)},
	                       (MPI_Datatype[]){MPI_CHAR, MPI_INT, MPI_DOUBLE}, &st);
	MPI_Type_commit(&st);
	MPI_Pack_external_size("external32", 2, st, &sz);
	CHECK(sz == 26, "external32 size of 2 {char, int, double}: %ld", (long)sz);
	struct cid cv[2] = {{'x', 258, -2.0}, {'y', -1, 0.5}}, cb[2];
	memset(cb, 0, sizeof cb);
	pos = 0;
	MPI_Pack_external("external32", cv, 2, st, buf, sizeof buf, &pos);
	CHECK(pos == 26 &&
	              bytes_are(buf,
	                        (const unsigned char[]){'x',  0,    0,    1,    2,    0xc0, 0,
	                                                0,    0,    0,    0,    0,    0,    'y',
	                                                0xff, 0xff, 0xff, 0xff, 0x3f, 0xe0, 0,
	                                                0,    0,    0,    0,    0},
	                        26),
	      "external32 of 2 {char, int, double}: position %ld", (long)pos);
	rpos = 0;
	MPI_Unpack_external("external32", buf, pos, &rpos, cb, 2, st);
	CHECK(rpos == 26 && cb[0].c == 'x' && cb[0].i == 258 && cb[0].d == -2.0 && cb[1].c == 'y' &&
	              cb[1].i == -1 && cb[1].d == 0.5,
	      "external32 {char, int, double} read back");
	/* A vector of ints: the elements it selects alone. */
	MPI_Datatype v;
	int m[6] = {10, 11, 12, 13, 14, 15}, mb[6] = {0, 0, 0, 0, 0, 0};
	MPI_Type_vector(3, 1, 2, MPI_INT, &v);
	MPI_Type_commit(&v);
	pos = 0;
	MPI_Pack_external("external32", m, 1, v, buf, sizeof buf, &pos);
	CHECK(pos == 12 && buf[3] == 10 && buf[7] == 12 && buf[11] == 14,
	      "external32 vector: position %ld", (long)pos);
	rpos = 0;
	MPI_Unpack_external("external32", buf, pos, &rpos, mb, 1, v);
	CHECK(mb[0] == 10 && mb[1] == 0 && mb[2] == 12 && mb[4] == 14 && mb[5] == 0,
	      "external32 vector read back");
	MPI_Type_free(&v);
#ifdef TCMPI
	/* The standard's sizes where they differ from this machine's
	 * (Open MPI 4.1 keeps MPI_LONG's 8 bytes). */
	long lv[2] = {-5, 70000}, lb[2] = {0, 0};
	long double ldv[2] = {1.0L, -1.0L / 3}, ldb[2] = {0, 0};
	int wv = 0x263a, wb = 0;
	MPI_Pack_external_size("external32", 2, MPI_LONG, &sz);
	CHECK(sz == 8, "external32 size of 2 longs: %ld", (long)sz);
	MPI_Pack_external_size("external32", 1, MPI_LONG_DOUBLE, &sz);
	CHECK(sz == 16, "external32 size of a long double: %ld", (long)sz);
	MPI_Pack_external_size("external32", 1, MPI_LONG_INT, &sz);
	CHECK(sz == 8, "external32 size of MPI_LONG_INT: %ld", (long)sz);
	pos = 0;
	MPI_Pack_external("external32", lv, 2, MPI_LONG, buf, sizeof buf, &pos);
	MPI_Pack_external("external32", ldv, 2, MPI_LONG_DOUBLE, buf, sizeof buf, &pos);
	MPI_Pack_external("external32", &wv, 1, MPI_WCHAR, buf, sizeof buf, &pos);
	CHECK(pos == 8 + 32 + 2 &&
	              bytes_are(buf, (const unsigned char[]){0xff, 0xff, 0xff, 0xfb, 0, 1, 0x11, 0x70}, 8) &&
	              bytes_are(buf + 8,
	                        (const unsigned char[]){0x3f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	                                                0, 0, 0},
	                        16) &&
	              bytes_are(buf + 24, (const unsigned char[]){0xbf, 0xfd, 0x55, 0x55}, 4) &&
	              bytes_are(buf + 40, (const unsigned char[]){0x26, 0x3a}, 2),
	      "external32 long, long double, wchar: position %ld", (long)pos);
	rpos = 0;
	MPI_Unpack_external("external32", buf, pos, &rpos, lb, 2, MPI_LONG);
	MPI_Unpack_external("external32", buf, pos, &rpos, ldb, 2, MPI_LONG_DOUBLE);
	MPI_Unpack_external("external32", buf, pos, &rpos, &wb, 1, MPI_WCHAR);
	CHECK(rpos == pos && lb[0] == -5 && lb[1] == 70000 && ldb[0] == 1.0L && ldb[1] == ldv[1] &&
	              wb == wv,
	      "external32 long, long double, wchar read back");
	/* Errors. */
	pos = 0;
	int rc = MPI_Pack_external("native", iv, 1, MPI_INT, buf, sizeof buf, &pos);
	CHECK(rc == MPI_ERR_ARG && pos == 0, "datarep native: rc %d", rc);
	rc = MPI_Unpack_external("internal", buf, 4, &pos, ib, 1, MPI_INT);
	CHECK(rc == MPI_ERR_ARG, "datarep internal: rc %d", rc);
	rc = MPI_Pack_external_size("external", 1, MPI_INT, &sz);
	CHECK(rc == MPI_ERR_ARG, "datarep external: rc %d", rc);
	rc = MPI_Pack_external("external32", iv, 3, MPI_INT, buf, 11, &pos);
	CHECK(rc == MPI_ERR_TRUNCATE && pos == 0, "12 bytes into 11: rc %d", rc);
	rc = MPI_Unpack_external("external32", buf, 11, &pos, ib, 3, MPI_INT);
	CHECK(rc == MPI_ERR_TRUNCATE, "12 bytes from 11: rc %d", rc);
	long big = 1L << 40;
	rc = MPI_Pack_external("external32", &big, 1, MPI_LONG, buf, sizeof buf, &pos);
	CHECK(rc == MPI_ERR_CONVERSION && pos == 0, "2^40 as an external32 long: rc %d", rc);
	rc = MPI_Pack_external("external32", iv, -1, MPI_INT, buf, sizeof buf, &pos);
	CHECK(rc == MPI_ERR_COUNT, "negative count: rc %d", rc);
	MPI_Type_contiguous(2, MPI_INT, &v);
	rc = MPI_Pack_external("external32", iv, 1, v, buf, sizeof buf, &pos);
	CHECK(rc == MPI_ERR_TYPE, "uncommitted type: rc %d", rc);
	/* MPI_Pack's and MPI_Unpack's own. */
	int ipos = 0, isz = 0;
	rc = MPI_Pack(iv, 1, v, buf, sizeof buf, &ipos, MPI_COMM_WORLD);
	CHECK(rc == MPI_ERR_TYPE && ipos == 0, "MPI_Pack of an uncommitted type: rc %d", rc);
	rc = MPI_Unpack(buf, sizeof buf, &ipos, ib, 1, v, MPI_COMM_WORLD);
	CHECK(rc == MPI_ERR_TYPE && ipos == 0, "MPI_Unpack of an uncommitted type: rc %d", rc);
	rc = MPI_Pack(iv, -1, MPI_INT, buf, sizeof buf, &ipos, MPI_COMM_WORLD);
	CHECK(rc == MPI_ERR_COUNT && ipos == 0, "MPI_Pack of -1 ints: rc %d", rc);
	rc = MPI_Pack_size(INT_MAX / 4, MPI_DOUBLE, MPI_COMM_WORLD, &isz);
	CHECK(rc == MPI_ERR_COUNT, "MPI_Pack_size over INT_MAX bytes: rc %d", rc);
	MPI_Type_free(&v);
#endif
#if MPI_VERSION >= 4
	/* The _c forms. */
	MPI_Count cpos = 0, csz = 0;
	MPI_Pack_size_c(2, st, MPI_COMM_WORLD, &csz);
	CHECK(csz >= 26, "Pack_size_c of 2 {char, int, double}: %lld", csz);
	MPI_Pack_c(cv, 2, st, buf, sizeof buf, &cpos, MPI_COMM_WORLD);
	memset(cb, 0, sizeof cb);
	MPI_Count cend = cpos;
	cpos = 0;
	MPI_Unpack_c(buf, cend, &cpos, cb, 2, st, MPI_COMM_WORLD);
	CHECK(cpos == cend && cb[1].i == -1 && cb[1].d == 0.5 && cb[0].c == 'x',
	      "Pack_c / Unpack_c round trip");
	cpos = 0;
	MPI_Pack_external_c("external32", cv, 2, st, buf, sizeof buf, &cpos);
	MPI_Pack_external_size_c("external32", 2, st, &csz);
	CHECK(cpos == 26 && csz == 26 && buf[13] == 'y', "Pack_external_c: %lld", cpos);
	memset(cb, 0, sizeof cb);
	cend = cpos;
	cpos = 0;
	MPI_Unpack_external_c("external32", buf, cend, &cpos, cb, 2, st);
	CHECK(cpos == 26 && cb[0].i == 258 && cb[1].d == 0.5, "Unpack_external_c");
#endif
	MPI_Type_free(&st);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

	constructors();
	queries();
	elements(size);
	external32();
	f90s(size);
#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
	status_fields();
#endif

	int total;
	MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Finalize();
	if (rank == 0 && !total)
		printf("mpi_typeinfo: p = %d: ok\n", size);
	return total != 0;
}
