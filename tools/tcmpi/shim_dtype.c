/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_dtype.c - MPI datatypes: the predefined ones and the
 * derived ones (contiguous, vector, hvector, indexed, hindexed, indexed
 * block, struct, resized, dup), flattened at construction into the runs of
 * bytes of one element (type-map order, adjacent runs merged).  Collectives
 * pack a non-contiguous buffer into one contiguous run before calling
 * topocoll and unpack after; a contiguous one is passed as it is.  Bounds
 * and extents are MPI's: an extent is padded to a multiple of the largest
 * alignment of the basic types in the type map (MPI's epsilon, so that a
 * struct type's extent is its C struct's size), but for explicit bounds
 * (MPI_Type_create_resized, in the type or in one it is made of), which
 * are kept as given and, where some elements have them, alone make the
 * bounds.  Each type also keeps the sizes and the types of its basic
 * elements in type-map order (for MPI_Get_elements and the external32
 * representation of MPI_Pack_external, shim_pack.c) and its constructor's
 * arguments (shim_typeinfo.c).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

struct tcmpi__dtype *tcmpi__dts;
int tcmpi__ndts;

struct pair_fi {
	float a;
	int b;
};
struct pair_di {
	double a;
	int b;
};
struct pair_li {
	long a;
	int b;
};
struct pair_ii {
	int a;
	int b;
};
struct pair_si {
	short a;
	int b;
};
struct pair_ldi {
	long double a;
	int b;
};

/* Predefined datatypes, by handle: name, bytes, topocoll datatype (-1:
 * reduced by the layer itself), and for the pair types the offset of the
 * int and the struct's size. */
static const struct {
	const char *name;
	size_t size;
	int tc;
	size_t pair_off, pair_extent;
} predef[TCMPI_DT_PREDEFINED] = {
#define INTDT(s, signed_)                              \
	((s) == 1   ? (signed_ ? TC_INT8 : TC_UINT8)   \
	 : (s) == 2 ? (signed_ ? TC_INT16 : TC_UINT16) \
	 : (s) == 4 ? (signed_ ? TC_INT32 : TC_UINT32) \
	            : (signed_ ? TC_INT64 : TC_UINT64))
        [MPI_CHAR] = {"MPI_CHAR", 1, TC_INT8, 0, 0},
        [MPI_SIGNED_CHAR] = {"MPI_SIGNED_CHAR", 1, TC_INT8, 0, 0},
        [MPI_UNSIGNED_CHAR] = {"MPI_UNSIGNED_CHAR", 1, TC_UINT8, 0, 0},
        [MPI_BYTE] = {"MPI_BYTE", 1, TC_UINT8, 0, 0},
        [MPI_SHORT] = {"MPI_SHORT", sizeof(short), INTDT(sizeof(short), 1), 0, 0},
        [MPI_UNSIGNED_SHORT] = {"MPI_UNSIGNED_SHORT", sizeof(short), INTDT(sizeof(short), 0), 0, 0},
        [MPI_INT] = {"MPI_INT", sizeof(int), INTDT(sizeof(int), 1), 0, 0},
        [MPI_UNSIGNED] = {"MPI_UNSIGNED", sizeof(int), INTDT(sizeof(int), 0), 0, 0},
        [MPI_LONG] = {"MPI_LONG", sizeof(long), INTDT(sizeof(long), 1), 0, 0},
        [MPI_UNSIGNED_LONG] = {"MPI_UNSIGNED_LONG", sizeof(long), INTDT(sizeof(long), 0), 0, 0},
        [MPI_LONG_LONG_INT] = {"MPI_LONG_LONG_INT", sizeof(long long), TC_INT64, 0, 0},
        [MPI_UNSIGNED_LONG_LONG] = {"MPI_UNSIGNED_LONG_LONG", sizeof(long long), TC_UINT64, 0, 0},
        [MPI_FLOAT] = {"MPI_FLOAT", sizeof(float), TC_FLOAT, 0, 0},
        [MPI_DOUBLE] = {"MPI_DOUBLE", sizeof(double), TC_DOUBLE, 0, 0},
        [MPI_LONG_DOUBLE] = {"MPI_LONG_DOUBLE", sizeof(long double), -1, 0, 0},
        [MPI_WCHAR] = {"MPI_WCHAR", 4, TC_INT32, 0, 0},
        [MPI_C_BOOL] = {"MPI_C_BOOL", sizeof(_Bool), -1, 0, 0},
        [MPI_INT8_T] = {"MPI_INT8_T", 1, TC_INT8, 0, 0},
        [MPI_INT16_T] = {"MPI_INT16_T", 2, TC_INT16, 0, 0},
        [MPI_INT32_T] = {"MPI_INT32_T", 4, TC_INT32, 0, 0},
        [MPI_INT64_T] = {"MPI_INT64_T", 8, TC_INT64, 0, 0},
        [MPI_UINT8_T] = {"MPI_UINT8_T", 1, TC_UINT8, 0, 0},
        [MPI_UINT16_T] = {"MPI_UINT16_T", 2, TC_UINT16, 0, 0},
        [MPI_UINT32_T] = {"MPI_UINT32_T", 4, TC_UINT32, 0, 0},
        [MPI_UINT64_T] = {"MPI_UINT64_T", 8, TC_UINT64, 0, 0},
        [MPI_AINT] = {"MPI_AINT", sizeof(MPI_Aint), INTDT(sizeof(MPI_Aint), 1), 0, 0},
        [MPI_OFFSET] = {"MPI_OFFSET", sizeof(MPI_Offset), TC_INT64, 0, 0},
        [MPI_COUNT] = {"MPI_COUNT", sizeof(MPI_Count), TC_INT64, 0, 0},
        [MPI_PACKED] = {"MPI_PACKED", 1, TC_UINT8, 0, 0},
        [MPI_C_FLOAT_COMPLEX] = {"MPI_C_FLOAT_COMPLEX", 2 * sizeof(float), -1, 0, 0},
        [MPI_C_DOUBLE_COMPLEX] = {"MPI_C_DOUBLE_COMPLEX", 2 * sizeof(double), -1, 0, 0},
        [MPI_C_LONG_DOUBLE_COMPLEX] = {"MPI_C_LONG_DOUBLE_COMPLEX", 2 * sizeof(long double), -1, 0, 0},
        [MPI_FLOAT_INT] = {"MPI_FLOAT_INT", sizeof(float), -1, offsetof(struct pair_fi, b),
                           sizeof(struct pair_fi)},
        [MPI_DOUBLE_INT] = {"MPI_DOUBLE_INT", sizeof(double), -1, offsetof(struct pair_di, b),
                            sizeof(struct pair_di)},
        [MPI_LONG_INT] = {"MPI_LONG_INT", sizeof(long), -1, offsetof(struct pair_li, b),
                          sizeof(struct pair_li)},
        [MPI_2INT] = {"MPI_2INT", sizeof(int), -1, offsetof(struct pair_ii, b), sizeof(struct pair_ii)},
        [MPI_SHORT_INT] = {"MPI_SHORT_INT", sizeof(short), -1, offsetof(struct pair_si, b),
                           sizeof(struct pair_si)},
        [MPI_LONG_DOUBLE_INT] = {"MPI_LONG_DOUBLE_INT", sizeof(long double), -1,
                                 offsetof(struct pair_ldi, b), sizeof(struct pair_ldi)},
#undef INTDT
};

/* The type of the first member of each pair type. */
static const MPI_Datatype pair_first[TCMPI_DT_PREDEFINED] = {
        [MPI_FLOAT_INT] = MPI_FLOAT, [MPI_DOUBLE_INT] = MPI_DOUBLE,
        [MPI_LONG_INT] = MPI_LONG,   [MPI_2INT] = MPI_INT,
        [MPI_SHORT_INT] = MPI_SHORT, [MPI_LONG_DOUBLE_INT] = MPI_LONG_DOUBLE,
};

/* The alignment of each predefined datatype's C type. */
static const unsigned char predef_align[TCMPI_DT_PREDEFINED] = {
        [MPI_CHAR] = _Alignof(char),
        [MPI_SIGNED_CHAR] = _Alignof(signed char),
        [MPI_UNSIGNED_CHAR] = _Alignof(unsigned char),
        [MPI_BYTE] = 1,
        [MPI_SHORT] = _Alignof(short),
        [MPI_UNSIGNED_SHORT] = _Alignof(unsigned short),
        [MPI_INT] = _Alignof(int),
        [MPI_UNSIGNED] = _Alignof(unsigned),
        [MPI_LONG] = _Alignof(long),
        [MPI_UNSIGNED_LONG] = _Alignof(unsigned long),
        [MPI_LONG_LONG_INT] = _Alignof(long long),
        [MPI_UNSIGNED_LONG_LONG] = _Alignof(unsigned long long),
        [MPI_FLOAT] = _Alignof(float),
        [MPI_DOUBLE] = _Alignof(double),
        [MPI_LONG_DOUBLE] = _Alignof(long double),
        [MPI_WCHAR] = _Alignof(int32_t),
        [MPI_C_BOOL] = _Alignof(_Bool),
        [MPI_INT8_T] = _Alignof(int8_t),
        [MPI_INT16_T] = _Alignof(int16_t),
        [MPI_INT32_T] = _Alignof(int32_t),
        [MPI_INT64_T] = _Alignof(int64_t),
        [MPI_UINT8_T] = _Alignof(uint8_t),
        [MPI_UINT16_T] = _Alignof(uint16_t),
        [MPI_UINT32_T] = _Alignof(uint32_t),
        [MPI_UINT64_T] = _Alignof(uint64_t),
        [MPI_AINT] = _Alignof(MPI_Aint),
        [MPI_OFFSET] = _Alignof(MPI_Offset),
        [MPI_COUNT] = _Alignof(MPI_Count),
        [MPI_PACKED] = 1,
        [MPI_C_FLOAT_COMPLEX] = _Alignof(float),
        [MPI_C_DOUBLE_COMPLEX] = _Alignof(double),
        [MPI_C_LONG_DOUBLE_COMPLEX] = _Alignof(long double),
        [MPI_FLOAT_INT] = _Alignof(struct pair_fi),
        [MPI_DOUBLE_INT] = _Alignof(struct pair_di),
        [MPI_LONG_INT] = _Alignof(struct pair_li),
        [MPI_2INT] = _Alignof(struct pair_ii),
        [MPI_SHORT_INT] = _Alignof(struct pair_si),
        [MPI_LONG_DOUBLE_INT] = _Alignof(struct pair_ldi),
};

/* What a datatype's bounds come from, by handle (as tcmpi__dts; kept here,
 * beside the table): the largest alignment of the basic types in its type
 * map, and whether the bounds are explicit (MPI_Type_create_resized made
 * it or a type it is made of), which MPI's lb_marker and ub_marker are. */
struct dt_bounds {
	MPI_Aint align;
	int explicit_bounds;
};
static struct dt_bounds *bounds;

static int grow(int need)
{
	if (need <= tcmpi__ndts)
		return 0;
	int n = tcmpi__ndts ? tcmpi__ndts * 2 : 64;
	while (n < need)
		n *= 2;
	struct dt_bounds *bd = realloc(bounds, sizeof *bd * (size_t)n);
	if (!bd)
		return -1;
	memset(bd + tcmpi__ndts, 0, sizeof *bd * (size_t)(n - tcmpi__ndts));
	bounds = bd;
	struct tcmpi__dtype *d = realloc(tcmpi__dts, sizeof *d * (size_t)n);
	if (!d)
		return -1;
	memset(d + tcmpi__ndts, 0, sizeof *d * (size_t)(n - tcmpi__ndts));
	tcmpi__dts = d;
	tcmpi__ndts = n;
	return 0;
}

static int add_block(struct tcmpi__dtype *t, MPI_Aint off, size_t len, int *cap)
{
	if (len == 0)
		return 0;
	if (t->nblocks > 0) {
		struct tcmpi__block *b = &t->blocks[t->nblocks - 1];
		if (b->off + (MPI_Aint)b->len == off) {
			b->len += len;
			return 0;
		}
	}
	if (t->nblocks == *cap) {
		int n = *cap ? *cap * 2 : 4;
		struct tcmpi__block *nb = realloc(t->blocks, sizeof *nb * (size_t)n);
		if (!nb)
			return -1;
		t->blocks = nb;
		*cap = n;
	}
	t->blocks[t->nblocks++] = (struct tcmpi__block){off, len};
	return 0;
}

/* Appends n basic elements of size bytes to t's, merged with the last
 * run when of the same size; -1 when out of memory. */
static int add_elems(struct tcmpi__dtype *t, size_t size, size_t n, int *cap)
{
	if (n == 0)
		return 0;
	if (t->nemap > 0 && t->emap[t->nemap - 1].size == size) {
		t->emap[t->nemap - 1].n += n;
		return 0;
	}
	if (t->nemap == *cap) {
		int c = *cap ? *cap * 2 : 2;
		struct tcmpi__erun *ne = realloc(t->emap, sizeof *ne * (size_t)c);
		if (!ne)
			return -1;
		t->emap = ne;
		*cap = c;
	}
	t->emap[t->nemap++] = (struct tcmpi__erun){size, n};
	return 0;
}

/* Appends n elements of predefined type type at off to t's type map,
 * merged with the last run when they continue it; -1 when out of
 * memory. */
static int add_typed(struct tcmpi__dtype *t, MPI_Datatype type, MPI_Aint off, size_t n, int *cap)
{
	if (n == 0)
		return 0;
	if (t->ntmap > 0) {
		struct tcmpi__trun *r = &t->tmap[t->ntmap - 1];
		if (r->type == type && r->off + (MPI_Aint)(r->n * predef[type].size) == off) {
			r->n += n;
			return 0;
		}
	}
	if (t->ntmap == *cap) {
		int c = *cap ? *cap * 2 : 2;
		struct tcmpi__trun *nt = realloc(t->tmap, sizeof *nt * (size_t)c);
		if (!nt)
			return -1;
		t->tmap = nt;
		*cap = c;
	}
	t->tmap[t->ntmap++] = (struct tcmpi__trun){off, type, n};
	return 0;
}

void tcmpi__dtype_setup(void)
{
	if (grow(TCMPI_DT_PREDEFINED) != 0)
		return;
	for (int i = 1; i < TCMPI_DT_PREDEFINED; i++) {
		struct tcmpi__dtype *t = &tcmpi__dts[i];
		int cap = 0, ecap = 0, tcap = 0;
		t->used = t->committed = 1;
		t->basic = i;
		t->combiner = MPI_COMBINER_NAMED;
		add_block(t, 0, predef[i].size, &cap);
		add_elems(t, predef[i].size, 1, &ecap);
		add_typed(t, predef[i].pair_off ? pair_first[i] : i, 0, 1, &tcap);
		t->size = predef[i].size;
		t->extent = (MPI_Aint)predef[i].size;
		if (predef[i].pair_off) {
			add_block(t, (MPI_Aint)predef[i].pair_off, sizeof(int), &cap);
			add_elems(t, sizeof(int), 1, &ecap);
			add_typed(t, MPI_INT, (MPI_Aint)predef[i].pair_off, 1, &tcap);
			t->size += sizeof(int);
			t->extent = (MPI_Aint)predef[i].pair_extent;
		}
		t->true_extent = t->nblocks ? t->blocks[t->nblocks - 1].off +
		                                      (MPI_Aint)t->blocks[t->nblocks - 1].len
		                            : 0;
		t->contig = t->nblocks == 1 && t->true_extent == t->extent;
		bounds[i] = (struct dt_bounds){predef_align[i], 0};
		snprintf(t->name, sizeof t->name, "%s", predef[i].name);
	}
}

static struct tcmpi__dtype *dt_any(MPI_Datatype dt)
{
	if (dt <= 0 || dt >= tcmpi__ndts || !tcmpi__dts[dt].used)
		return NULL;
	return &tcmpi__dts[dt];
}

struct tcmpi__dtype *tcmpi__dt_any(MPI_Datatype dt)
{
	return dt_any(dt);
}

int tcmpi__tc_dtype(MPI_Datatype dt)
{
	return dt > 0 && dt < TCMPI_DT_PREDEFINED ? predef[dt].tc : -1;
}

void tcmpi__pack(const void *buf, size_t count, const struct tcmpi__dtype *t, void *out)
{
	unsigned char *o = out;
	for (size_t e = 0; e < count; e++) {
		uintptr_t base = (uintptr_t)buf + (uintptr_t)((MPI_Aint)e * t->extent);
		for (int b = 0; b < t->nblocks; b++) {
			memcpy(o, (const void *)(base + (uintptr_t)t->blocks[b].off), t->blocks[b].len);
			o += t->blocks[b].len;
		}
	}
}

void tcmpi__unpack(const void *in, size_t count, const struct tcmpi__dtype *t, void *buf)
{
	const unsigned char *i = in;
	for (size_t e = 0; e < count; e++) {
		uintptr_t base = (uintptr_t)buf + (uintptr_t)((MPI_Aint)e * t->extent);
		for (int b = 0; b < t->nblocks; b++) {
			memcpy((void *)(base + (uintptr_t)t->blocks[b].off), i, t->blocks[b].len);
			i += t->blocks[b].len;
		}
	}
}

void tcmpi__unpack_bytes(const void *in, size_t bytes, const struct tcmpi__dtype *t, void *buf)
{
	if (t->size == 0)
		return;
	size_t whole = bytes / t->size, rest = bytes % t->size;
	tcmpi__unpack(in, whole, t, buf);
	const unsigned char *i = (const unsigned char *)in + whole * t->size;
	uintptr_t base = (uintptr_t)buf + (uintptr_t)((MPI_Aint)whole * t->extent);
	for (int b = 0; b < t->nblocks && rest > 0; b++) {
		size_t len = t->blocks[b].len < rest ? t->blocks[b].len : rest;
		memcpy((void *)(base + (uintptr_t)t->blocks[b].off), i, len);
		i += len;
		rest -= len;
	}
}

/* ---------------------------------------------------------------------
 * Constructors: n[k] elements of types[k] at byte displacement disp[k]
 * (stride: each element one extent of its type further), for k < count.
 */
static int build(int count, const size_t *n, const MPI_Aint *disp, const MPI_Datatype *types,
                 int combiner, MPI_Datatype *out, const char *fn)
{
	int rc = tcmpi__check_init(fn);
	if (rc)
		return rc;
	if (count < 0 || !out)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "negative count or NULL newtype");
	for (int k = 0; k < count; k++)
		if (!dt_any(types[k]))
			return tcmpi__error(MPI_COMM_NULL, MPI_ERR_TYPE, fn, "invalid datatype %d",
			                    types[k]);
	int h = 0;
	for (int i = TCMPI_DT_PREDEFINED; i < tcmpi__ndts && !h; i++)
		if (!tcmpi__dts[i].used)
			h = i;
	if (!h) {
		h = tcmpi__ndts > TCMPI_DT_PREDEFINED ? tcmpi__ndts : TCMPI_DT_PREDEFINED;
		if (grow(h + 1) != 0)
			return tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	struct tcmpi__dtype t = {.used = 1, .combiner = combiner};
	int cap = 0, ecap = 0, tcap = 0;
	/* The bounds: from the elements of explicit bounds alone if there are
	 * any (MPI's markers), else from all of them. */
	int first = 1, mfirst = 1;
	MPI_Aint lb = 0, ub = 0, mlb = 0, mub = 0, align = 0;
	t.basic = -1;
	for (int k = 0; k < count; k++) {
		const struct tcmpi__dtype *o = dt_any(types[k]);
		const struct dt_bounds *ob = &bounds[types[k]];
		for (size_t e = 0; e < n[k]; e++) {
			MPI_Aint at = disp[k] + (MPI_Aint)e * o->extent;
			int nomem = 0;
			for (int b = 0; b < o->nblocks; b++)
				nomem |= add_block(&t, at + o->blocks[b].off, o->blocks[b].len, &cap);
			/* A type of one size of basic elements takes all n[k]
			 * elements' at once. */
			for (int r = 0; r < o->nemap && (e == 0 || o->nemap > 1); r++)
				nomem |= add_elems(&t, o->emap[r].size,
				                   o->emap[r].n * (o->nemap == 1 ? n[k] : 1), &ecap);
			for (int r = 0; r < o->ntmap; r++)
				nomem |= add_typed(&t, o->tmap[r].type, at + o->tmap[r].off,
				                   o->tmap[r].n, &tcap);
			if (nomem) {
				free(t.blocks);
				free(t.emap);
				free(t.tmap);
				return tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, fn, "out of memory");
			}
			t.size += o->size;
			MPI_Aint elb = at + o->lb, eub = at + o->lb + o->extent;
			if (ob->explicit_bounds) {
				if (mfirst || elb < mlb)
					mlb = elb;
				if (mfirst || eub > mub)
					mub = eub;
				mfirst = 0;
			} else {
				if (first || elb < lb)
					lb = elb;
				if (first || eub > ub)
					ub = eub;
				first = 0;
			}
		}
		if (n[k]) {
			t.basic = t.basic == -1 || t.basic == o->basic ? o->basic : 0;
			if (ob->align > align)
				align = ob->align;
		}
	}
	if (t.basic == -1)
		t.basic = 0;
	if (!mfirst) {
		lb = mlb;
		ub = mub;
	} else if (align > 1 && (ub - lb) % align != 0) {
		/* MPI's epsilon: the least padding that makes the extent a
		 * multiple of the largest alignment of the type map's basic
		 * types, as a C compiler pads a struct for an array of them
		 * (every constructor's type map; not one of explicit bounds). */
		ub += align - (ub - lb) % align;
	}
	t.lb = lb;
	t.extent = ub - lb;
	MPI_Aint tlo = 0, thi = 0;
	for (int b = 0; b < t.nblocks; b++) {
		MPI_Aint lo = t.blocks[b].off, hi = lo + (MPI_Aint)t.blocks[b].len;
		if (b == 0 || lo < tlo)
			tlo = lo;
		if (b == 0 || hi > thi)
			thi = hi;
	}
	t.true_lb = tlo;
	t.true_extent = thi - tlo;
	t.contig = t.nblocks == 1 && t.blocks[0].off == 0 && t.lb == 0 &&
	           (MPI_Aint)t.blocks[0].len == t.extent;
	if (t.nblocks == 0)
		t.contig = 1;
	tcmpi__dts[h] = t;
	bounds[h] = (struct dt_bounds){align, !mfirst};
	*out = h;
	return MPI_SUCCESS;
}

int tcmpi__dtype_build(int count, const size_t *n, const MPI_Aint *disp, const MPI_Datatype *types,
                       int combiner, MPI_Datatype *out, const char *fn)
{
	return build(count, n, disp, types, combiner, out, fn);
}

void tcmpi__dtype_set_bounds(MPI_Datatype h, MPI_Aint lb, MPI_Aint extent)
{
	struct tcmpi__dtype *t = &tcmpi__dts[h];
	t->lb = lb;
	t->extent = extent;
	bounds[h].explicit_bounds = 1;
	t->contig = t->nblocks == 1 && t->blocks[0].off == 0 && lb == 0 &&
	            (MPI_Aint)t->blocks[0].len == extent;
	if (t->nblocks == 0)
		t->contig = 1;
}

int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	if (count < 0)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_COUNT, __func__, "negative count");
	size_t n = (size_t)count;
	MPI_Aint d = 0;
	int rc = build(1, &n, &d, &oldtype, MPI_COMBINER_CONTIGUOUS, newtype, __func__);
	if (rc == MPI_SUCCESS)
		rc = tcmpi__dtype_record(*newtype, MPI_COMBINER_CONTIGUOUS, 1, &count, 0, NULL, 1,
		                         &oldtype, __func__);
	return rc;
}

static int hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                   MPI_Datatype *newtype, int combiner, const char *fn)
{
	if (count < 0 || blocklength < 0)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_COUNT, fn, "negative count or blocklength");
	size_t *n = tcmpi__alloc(sizeof *n * (size_t)count);
	MPI_Aint *d = tcmpi__alloc(sizeof *d * (size_t)count);
	MPI_Datatype *t = tcmpi__alloc(sizeof *t * (size_t)count);
	int rc;
	if (!n || !d || !t) {
		rc = tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, fn, "out of memory");
	} else {
		for (int i = 0; i < count; i++) {
			n[i] = (size_t)blocklength;
			d[i] = (MPI_Aint)i * stride;
			t[i] = oldtype;
		}
		rc = build(count, n, d, t, combiner, newtype, fn);
	}
	free(n);
	free(d);
	free(t);
	return rc;
}

int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	const struct tcmpi__dtype *o = dt_any(oldtype);
	if (!o)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_TYPE, __func__, "invalid datatype %d", oldtype);
	int rc = hvector(count, blocklength, (MPI_Aint)stride * o->extent, oldtype, newtype,
	                 MPI_COMBINER_VECTOR, __func__);
	if (rc == MPI_SUCCESS)
		rc = tcmpi__dtype_record(*newtype, MPI_COMBINER_VECTOR, 3,
		                         (const int[]){count, blocklength, stride}, 0, NULL, 1,
		                         &oldtype, __func__);
	return rc;
}

int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                            MPI_Datatype *newtype)
{
	int rc = hvector(count, blocklength, stride, oldtype, newtype, MPI_COMBINER_HVECTOR, __func__);
	if (rc == MPI_SUCCESS)
		rc = tcmpi__dtype_record(*newtype, MPI_COMBINER_HVECTOR, 2,
		                         (const int[]){count, blocklength}, 1, &stride, 1, &oldtype,
		                         __func__);
	return rc;
}

/* Keeps the arguments of an indexed form (MPI_Type_get_contents' order:
 * count, the block lengths or the one, then the displacements in extents
 * or, in bytes, as addresses). */
static int record_indexed(MPI_Datatype h, int count, const int *bls, int bl_all, const void *displs,
                          int bytes, const MPI_Datatype *types, MPI_Datatype oldtype, int combiner,
                          const char *fn)
{
	size_t c = (size_t)count;
	int *ints = malloc(sizeof *ints * (2 * c + 2));
	if (!ints) {
		MPI_Type_free(&h);
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	int ni = 0;
	ints[ni++] = count;
	if (bls)
		for (int i = 0; i < count; i++)
			ints[ni++] = bls[i];
	else
		ints[ni++] = bl_all;
	if (!bytes)
		for (int i = 0; i < count; i++)
			ints[ni++] = ((const int *)displs)[i];
	int rc = tcmpi__dtype_record(h, combiner, ni, ints, bytes ? count : 0,
	                             bytes ? (const MPI_Aint *)displs : NULL, types ? count : 1,
	                             types ? types : &oldtype, fn);
	free(ints);
	return rc;
}

/* Indexed forms: displacements in extents of oldtype (scale) or bytes. */
static int indexed(int count, const int *bls, int bl_all, const void *displs, int bytes,
                   const MPI_Datatype *types, MPI_Datatype oldtype, MPI_Datatype *newtype,
                   int combiner, const char *fn)
{
	if (count < 0 || (count > 0 && (!displs || (!bls && bl_all < 0))))
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "negative count or NULL array");
	size_t *n = tcmpi__alloc(sizeof *n * (size_t)count);
	MPI_Aint *d = tcmpi__alloc(sizeof *d * (size_t)count);
	MPI_Datatype *t = tcmpi__alloc(sizeof *t * (size_t)count);
	int rc = MPI_SUCCESS;
	if (!n || !d || !t)
		rc = tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, fn, "out of memory");
	for (int i = 0; i < count && rc == MPI_SUCCESS; i++) {
		t[i] = types ? types[i] : oldtype;
		const struct tcmpi__dtype *o = dt_any(t[i]);
		int bl = bls ? bls[i] : bl_all;
		if (!o)
			rc = tcmpi__error(MPI_COMM_NULL, MPI_ERR_TYPE, fn, "invalid datatype %d", t[i]);
		else if (bl < 0)
			rc = tcmpi__error(MPI_COMM_NULL, MPI_ERR_COUNT, fn, "negative block length");
		else {
			n[i] = (size_t)bl;
			d[i] = bytes ? ((const MPI_Aint *)displs)[i]
			             : (MPI_Aint)((const int *)displs)[i] * o->extent;
		}
	}
	if (rc == MPI_SUCCESS)
		rc = build(count, n, d, t, combiner, newtype, fn);
	free(n);
	free(d);
	free(t);
	if (rc == MPI_SUCCESS)
		rc = record_indexed(*newtype, count, bls, bl_all, displs, bytes, types, oldtype,
		                    combiner, fn);
	return rc;
}

int MPI_Type_indexed(int count, const int array_of_blocklengths[],
                     const int array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	return indexed(count, array_of_blocklengths, -1, array_of_displacements, 0, NULL, oldtype,
	               newtype, MPI_COMBINER_INDEXED, __func__);
}

int MPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                             const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
	return indexed(count, array_of_blocklengths, -1, array_of_displacements, 1, NULL, oldtype,
	               newtype, MPI_COMBINER_HINDEXED, __func__);
}

int MPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                  MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	return indexed(count, NULL, blocklength, array_of_displacements, 0, NULL, oldtype, newtype,
	               MPI_COMBINER_INDEXED_BLOCK, __func__);
}

int MPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	return indexed(count, NULL, blocklength, array_of_displacements, 1, NULL, oldtype, newtype,
	               MPI_COMBINER_HINDEXED_BLOCK, __func__);
}

int MPI_Type_create_struct(int count, const int array_of_block_lengths[],
                           const MPI_Aint array_of_displacements[],
                           const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
	if (count > 0 && !array_of_types)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL array_of_types");
	return indexed(count, array_of_block_lengths, -1, array_of_displacements, 1, array_of_types,
	               MPI_DATATYPE_NULL, newtype, MPI_COMBINER_STRUCT, __func__);
}

int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype)
{
	size_t n = 1;
	MPI_Aint d = 0;
	int rc = build(1, &n, &d, &oldtype, MPI_COMBINER_RESIZED, newtype, __func__);
	if (rc == MPI_SUCCESS) {
		tcmpi__dtype_set_bounds(*newtype, lb, extent);
		rc = tcmpi__dtype_record(*newtype, MPI_COMBINER_RESIZED, 0, NULL, 2,
		                         (const MPI_Aint[]){lb, extent}, 1, &oldtype, __func__);
	}
	return rc;
}

int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	size_t n = 1;
	MPI_Aint d = 0;
	int rc = build(1, &n, &d, &oldtype, MPI_COMBINER_DUP, newtype, __func__);
	if (rc == MPI_SUCCESS) {
		const struct tcmpi__dtype *o = dt_any(oldtype);
		struct tcmpi__dtype *t = &tcmpi__dts[*newtype];
		t->lb = o->lb;
		t->extent = o->extent;
		t->contig = o->contig;
		t->committed = o->committed;
		bounds[*newtype] = bounds[oldtype];
		rc = tcmpi__dtype_record(*newtype, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, &oldtype,
		                         __func__);
	}
	return rc;
}

int MPI_Type_commit(MPI_Datatype *datatype)
{
	struct tcmpi__dtype *t = datatype ? dt_any(*datatype) : NULL;
	if (!t)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_TYPE, __func__, "invalid datatype");
	t->committed = 1;
	return MPI_SUCCESS;
}

struct tcmpi__dtype *tcmpi__dtype_hold(const struct tcmpi__dtype *t)
{
	struct tcmpi__dtype *h = malloc(sizeof *h);
	if (!h)
		return NULL;
	*h = *t;
	/* The copy moves data; it answers no query. */
	h->nemap = h->ntmap = 0;
	h->emap = NULL;
	h->tmap = NULL;
	h->args = NULL;
	h->blocks = malloc(sizeof *h->blocks * (size_t)(t->nblocks > 0 ? t->nblocks : 1));
	if (!h->blocks) {
		free(h);
		return NULL;
	}
	if (t->nblocks > 0)
		memcpy(h->blocks, t->blocks, sizeof *h->blocks * (size_t)t->nblocks);
	return h;
}

void tcmpi__dtype_drop(struct tcmpi__dtype *t)
{
	if (t) {
		free(t->blocks);
		free(t);
	}
}

int MPI_Type_free(MPI_Datatype *datatype)
{
	struct tcmpi__dtype *t = datatype ? dt_any(*datatype) : NULL;
	if (!t)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_TYPE, __func__, "invalid datatype");
	if (*datatype < TCMPI_DT_PREDEFINED || t->keep)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_TYPE, __func__,
		                    "%s is predefined and cannot be freed", t->name);
	free(t->blocks);
	free(t->emap);
	free(t->tmap);
	tcmpi__dtargs_drop(t->args);
	memset(t, 0, sizeof *t);
	*datatype = MPI_DATATYPE_NULL;
	return MPI_SUCCESS;
}

int MPI_Type_size(MPI_Datatype datatype, int *size)
{
	const struct tcmpi__dtype *t = dt_any(datatype);
	if (!t || !size)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_TYPE, __func__, "invalid datatype %d",
		                    datatype);
	*size = t->size > (size_t)INT32_MAX ? MPI_UNDEFINED : (int)t->size;
	return MPI_SUCCESS;
}

int MPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size)
{
	const struct tcmpi__dtype *t = dt_any(datatype);
	if (!t || !size)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_TYPE, __func__, "invalid datatype %d",
		                    datatype);
	*size = (MPI_Count)t->size;
	return MPI_SUCCESS;
}

int MPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
	return MPI_Type_size_c(datatype, size);
}

int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
	const struct tcmpi__dtype *t = dt_any(datatype);
	if (!t || !lb || !extent)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_TYPE, __func__, "invalid datatype %d",
		                    datatype);
	*lb = t->lb;
	*extent = t->extent;
	return MPI_SUCCESS;
}

int MPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
	MPI_Aint l = 0, e = 0;
	int rc = MPI_Type_get_extent(datatype, &l, &e);
	if (rc == MPI_SUCCESS && lb && extent) {
		*lb = l;
		*extent = e;
	}
	return rc;
}

int MPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
	return MPI_Type_get_extent_c(datatype, lb, extent);
}

int MPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
	const struct tcmpi__dtype *t = dt_any(datatype);
	if (!t || !true_lb || !true_extent)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_TYPE, __func__, "invalid datatype %d",
		                    datatype);
	*true_lb = t->true_lb;
	*true_extent = t->true_extent;
	return MPI_SUCCESS;
}

int MPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
	MPI_Aint l = 0, e = 0;
	int rc = MPI_Type_get_true_extent(datatype, &l, &e);
	if (rc == MPI_SUCCESS && true_lb && true_extent) {
		*true_lb = l;
		*true_extent = e;
	}
	return rc;
}

int MPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
	return MPI_Type_get_true_extent_c(datatype, true_lb, true_extent);
}

int MPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
	const struct tcmpi__dtype *t = dt_any(datatype);
	if (!t || !type_name || !resultlen)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_TYPE, __func__, "invalid datatype %d",
		                    datatype);
	*resultlen = snprintf(type_name, MPI_MAX_OBJECT_NAME, "%s", t->name);
	return MPI_SUCCESS;
}

int MPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
	struct tcmpi__dtype *t = dt_any(datatype);
	if (!t || !type_name)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_TYPE, __func__, "invalid datatype %d",
		                    datatype);
	snprintf(t->name, sizeof t->name, "%s", type_name);
	return MPI_SUCCESS;
}

int MPI_Get_address(const void *location, MPI_Aint *address)
{
	if (!address)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL address");
	*address = (MPI_Aint)(uintptr_t)location;
	return MPI_SUCCESS;
}

MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
	return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}

MPI_Aint MPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
	return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}

int MPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
	const struct tcmpi__dtype *t = dt_any(datatype);
	if (!t || !status || !count)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "invalid argument");
	if (t->size == 0)
		*count = 0;
	else if ((size_t)status->tcmpi_count % t->size)
		*count = MPI_UNDEFINED;
	else
		*count = (int)((size_t)status->tcmpi_count / t->size);
	return MPI_SUCCESS;
}
