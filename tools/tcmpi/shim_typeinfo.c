/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_typeinfo.c - what a program can ask of a datatype and
 * a status: the constructor call that made a datatype
 * (MPI_Type_get_envelope, MPI_Type_get_contents), a predefined type of a
 * class and size (MPI_Type_match_size), the basic elements a status
 * counts (MPI_Get_elements, MPI_Status_set_elements), the fields of a
 * status (MPI_Status_get_source ... set_error), and Fortran 90's
 * parameterised types (MPI_Type_create_f90_integer, _real, _complex).
 *
 * Every derived type keeps its constructor's arguments as given
 * (struct tcmpi__dtargs), and those of the derived types it was made of,
 * shared and counted, so that MPI_Type_free of a type leaves the types
 * made of it able to answer.  MPI_Type_get_contents returns a derived
 * type it was made of as a new handle, made again by the same constructor
 * calls (so that its envelope is the original's, as a program decoding a
 * type expects), which the caller frees; a predefined one, and one of
 * MPI_Type_create_f90_integer, _real or _complex (predefined too), as
 * itself.
 */
#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

int tcmpi__dtype_record(MPI_Datatype h, int combiner, int ni, const int *ints, int na,
                        const MPI_Aint *aints, int nd, const MPI_Datatype *types, const char *fn)
{
	/* One allocation: the struct, then the pointers and addresses
	 * (aligned as the struct), then the integers and handles. */
	size_t sz = sizeof(struct tcmpi__dtargs) + sizeof(struct tcmpi__dtargs *) * (size_t)nd +
	            sizeof(MPI_Aint) * (size_t)na + sizeof(int) * (size_t)ni +
	            sizeof(MPI_Datatype) * (size_t)nd;
	struct tcmpi__dtargs *a = malloc(sz);
	if (!a) {
		MPI_Type_free(&h);
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	a->refs = 1;
	a->combiner = combiner;
	a->ni = ni;
	a->na = na;
	a->nd = nd;
	a->args = (struct tcmpi__dtargs **)(a + 1);
	a->aints = (MPI_Aint *)(a->args + nd);
	a->ints = (int *)(a->aints + na);
	a->types = (MPI_Datatype *)(a->ints + ni);
	if (ni)
		memcpy(a->ints, ints, sizeof *ints * (size_t)ni);
	if (na)
		memcpy(a->aints, aints, sizeof *aints * (size_t)na);
	for (int k = 0; k < nd; k++) {
		const struct tcmpi__dtype *o = tcmpi__dt_any(types[k]);
		a->types[k] = types[k];
		/* A predefined type, and one of MPI_Type_create_f90_*, is
		 * kept by its handle, which stays valid. */
		a->args[k] = types[k] < TCMPI_DT_PREDEFINED || o->keep ? NULL : o->args;
		if (a->args[k]) {
			a->types[k] = MPI_DATATYPE_NULL;
			a->args[k]->refs++;
		}
	}
	tcmpi__dts[h].args = a;
	return MPI_SUCCESS;
}

void tcmpi__dtargs_drop(struct tcmpi__dtargs *a)
{
	if (!a || --a->refs > 0)
		return;
	for (int k = 0; k < a->nd; k++)
		tcmpi__dtargs_drop(a->args[k]);
	free(a);
}

/* A new type made as a was (its derived types made again first, freed
 * after): *out, or the error of the constructor that failed. */
static int remake(const struct tcmpi__dtargs *a, MPI_Datatype *out)
{
	MPI_Datatype one, *tv = &one;
	if (a->nd > 1 && !(tv = malloc(sizeof *tv * (size_t)a->nd)))
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Type_get_contents",
		                    "out of memory");
	int rc = MPI_SUCCESS, made = 0;
	for (; made < a->nd && rc == MPI_SUCCESS; made++)
		if (a->args[made])
			rc = remake(a->args[made], &tv[made]);
		else
			tv[made] = a->types[made];
	if (rc != MPI_SUCCESS)
		made--;
	const int *i = a->ints;
	const MPI_Aint *ad = a->aints;
	int nd;
	if (rc == MPI_SUCCESS) {
		switch (a->combiner) {
		case MPI_COMBINER_DUP:
			rc = MPI_Type_dup(tv[0], out);
			break;
		case MPI_COMBINER_CONTIGUOUS:
			rc = MPI_Type_contiguous(i[0], tv[0], out);
			break;
		case MPI_COMBINER_VECTOR:
			rc = MPI_Type_vector(i[0], i[1], i[2], tv[0], out);
			break;
		case MPI_COMBINER_HVECTOR:
			rc = MPI_Type_create_hvector(i[0], i[1], ad[0], tv[0], out);
			break;
		case MPI_COMBINER_INDEXED:
			rc = MPI_Type_indexed(i[0], i + 1, i + 1 + i[0], tv[0], out);
			break;
		case MPI_COMBINER_HINDEXED:
			rc = MPI_Type_create_hindexed(i[0], i + 1, ad, tv[0], out);
			break;
		case MPI_COMBINER_INDEXED_BLOCK:
			rc = MPI_Type_create_indexed_block(i[0], i[1], i + 2, tv[0], out);
			break;
		case MPI_COMBINER_HINDEXED_BLOCK:
			rc = MPI_Type_create_hindexed_block(i[0], i[1], ad, tv[0], out);
			break;
		case MPI_COMBINER_STRUCT:
			rc = MPI_Type_create_struct(i[0], i + 1, ad, tv, out);
			break;
		case MPI_COMBINER_SUBARRAY:
			nd = i[0];
			rc = MPI_Type_create_subarray(nd, i + 1, i + 1 + nd, i + 1 + 2 * nd,
			                              i[1 + 3 * nd], tv[0], out);
			break;
		case MPI_COMBINER_DARRAY:
			nd = i[2];
			rc = MPI_Type_create_darray(i[0], i[1], nd, i + 3, i + 3 + nd, i + 3 + 2 * nd,
			                            i + 3 + 3 * nd, i[3 + 4 * nd], tv[0], out);
			break;
		case MPI_COMBINER_RESIZED:
			rc = MPI_Type_create_resized(tv[0], ad[0], ad[1], out);
			break;
		default:
			rc = tcmpi__error(MPI_COMM_NULL, MPI_ERR_INTERN, "MPI_Type_get_contents",
			                  "combiner %d cannot be made again", a->combiner);
		}
	}
	for (int k = 0; k < made; k++)
		if (a->args[k])
			MPI_Type_free(&tv[k]);
	if (tv != &one)
		free(tv);
	return rc;
}

/* The datatype of a handle in use, or the error of call fn. */
static int type_arg(MPI_Datatype dt, const char *fn, const struct tcmpi__dtype **t)
{
	int rc = tcmpi__check_init(fn);
	if (rc)
		return rc;
	*t = tcmpi__dt_any(dt);
	if (!*t)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_TYPE, fn, "invalid datatype %d", dt);
	return MPI_SUCCESS;
}

int MPI_Type_get_envelope(MPI_Datatype type, int *num_integers, int *num_addresses,
                          int *num_datatypes, int *combiner)
{
	const struct tcmpi__dtype *t;
	int rc = type_arg(type, __func__, &t);
	if (rc)
		return rc;
	if (!num_integers || !num_addresses || !num_datatypes || !combiner)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL argument");
	const struct tcmpi__dtargs *a = t->args;
	*num_integers = a ? a->ni : 0;
	*num_addresses = a ? a->na : 0;
	*num_datatypes = a ? a->nd : 0;
	*combiner = a ? a->combiner : MPI_COMBINER_NAMED;
	return MPI_SUCCESS;
}

int MPI_Type_get_envelope_c(MPI_Datatype type, MPI_Count *num_integers, MPI_Count *num_addresses,
                            MPI_Count *num_large_counts, MPI_Count *num_datatypes, int *combiner)
{
	int ni = 0, na = 0, nd = 0;
	if (!num_large_counts)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL num_large_counts");
	int rc = MPI_Type_get_envelope(type, &ni, &na, &nd, combiner);
	if (rc)
		return rc;
	if (!num_integers || !num_addresses || !num_datatypes)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL argument");
	/* No constructor of the layer takes large counts. */
	*num_integers = ni;
	*num_addresses = na;
	*num_large_counts = 0;
	*num_datatypes = nd;
	return MPI_SUCCESS;
}

static int contents(MPI_Datatype type, MPI_Count max_integers, MPI_Count max_addresses,
                    MPI_Count max_datatypes, int *ints, MPI_Aint *aints, MPI_Datatype *types,
                    const char *fn)
{
	const struct tcmpi__dtype *t;
	int rc = type_arg(type, fn, &t);
	if (rc)
		return rc;
	const struct tcmpi__dtargs *a = t->args;
	if (!a)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_TYPE, fn,
		                    "%s is predefined (MPI_COMBINER_NAMED): it has no contents",
		                    t->name);
	if (max_integers < a->ni || max_addresses < a->na || max_datatypes < a->nd)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn,
		                    "the arrays hold %lld integers, %lld addresses and %lld datatypes; "
		                    "the type has %d, %d and %d (MPI_Type_get_envelope)",
		                    (long long)max_integers, (long long)max_addresses,
		                    (long long)max_datatypes, a->ni, a->na, a->nd);
	if ((a->ni && !ints) || (a->na && !aints) || (a->nd && !types))
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "NULL array");
	int k = 0;
	for (; k < a->nd && rc == MPI_SUCCESS; k++) {
		if (a->args[k]) {
			rc = remake(a->args[k], &types[k]);
			if (rc == MPI_SUCCESS)
				tcmpi__dts[types[k]].committed = 1;
		} else {
			types[k] = a->types[k];
		}
	}
	if (rc != MPI_SUCCESS) {
		/* Nothing is returned: the types made so far are freed. */
		for (int j = 0; j < k - 1; j++)
			if (a->args[j])
				MPI_Type_free(&types[j]);
		return rc;
	}
	if (a->ni)
		memcpy(ints, a->ints, sizeof *ints * (size_t)a->ni);
	if (a->na)
		memcpy(aints, a->aints, sizeof *aints * (size_t)a->na);
	return MPI_SUCCESS;
}

int MPI_Type_get_contents(MPI_Datatype mtype, int max_integers, int max_addresses,
                          int max_datatypes, int array_of_integers[], MPI_Aint array_of_addresses[],
                          MPI_Datatype array_of_datatypes[])
{
	return contents(mtype, max_integers, max_addresses, max_datatypes, array_of_integers,
	                array_of_addresses, array_of_datatypes, __func__);
}

int MPI_Type_get_contents_c(MPI_Datatype mtype, MPI_Count max_integers, MPI_Count max_addresses,
                            MPI_Count max_large_counts, MPI_Count max_datatypes,
                            int array_of_integers[], MPI_Aint array_of_addresses[],
                            MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[])
{
	(void)array_of_large_counts; /* no constructor of the layer takes large counts */
	if (max_large_counts < 0)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "negative max_large_counts");
	return contents(mtype, max_integers, max_addresses, max_datatypes, array_of_integers,
	                array_of_addresses, array_of_datatypes, __func__);
}

int MPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
	int rc = tcmpi__check_init(__func__);
	if (rc)
		return rc;
	if (!datatype)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL datatype");
	/* The C types of each class, smallest first (the layer has no
	 * Fortran types). */
	static const MPI_Datatype ints[] = {MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T};
	static const MPI_Datatype reals[] = {MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE};
	static const MPI_Datatype cplx[] = {MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
	                                    MPI_C_LONG_DOUBLE_COMPLEX};
	const MPI_Datatype *v;
	int n;
	switch (typeclass) {
	case MPI_TYPECLASS_INTEGER:
		v = ints;
		n = 4;
		break;
	case MPI_TYPECLASS_REAL:
		v = reals;
		n = 3;
		break;
	case MPI_TYPECLASS_COMPLEX:
		v = cplx;
		n = 3;
		break;
	default:
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__,
		                    "typeclass %d is not MPI_TYPECLASS_INTEGER, REAL or COMPLEX",
		                    typeclass);
	}
	for (int k = 0; k < n; k++)
		if (tcmpi__dts[v[k]].size == (size_t)size && size > 0) {
			*datatype = v[k];
			return MPI_SUCCESS;
		}
	return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__,
	                    "no type of class %d has %d bytes", typeclass, size);
}

/* ---------------------------------------------------------------------
 * Fortran 90's parameterised types: the C type of the least range (and
 * precision) that covers the request, as SELECTED_INT_KIND and
 * SELECTED_REAL_KIND choose, as a predefined type of the F90 combiner with
 * the arguments given (MPI_Type_get_contents), never freed, one handle
 * per combiner and arguments.
 */
static struct f90 {
	int combiner, p, r;
	MPI_Datatype h;
} * f90s;
static int nf90;

static int f90_type(int combiner, int p, int r, MPI_Datatype base, MPI_Datatype *out, const char *fn)
{
	for (int k = 0; k < nf90; k++)
		if (f90s[k].combiner == combiner && f90s[k].p == p && f90s[k].r == r) {
			*out = f90s[k].h;
			return MPI_SUCCESS;
		}
	struct f90 *nv = realloc(f90s, sizeof *nv * (size_t)(nf90 + 1));
	if (!nv)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, fn, "out of memory");
	f90s = nv;
	size_t n = 1;
	MPI_Aint d = 0;
	MPI_Datatype h;
	int rc = tcmpi__dtype_build(1, &n, &d, &base, combiner, &h, fn);
	if (rc == MPI_SUCCESS)
		rc = tcmpi__dtype_record(h, combiner, combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2,
		                         combiner == MPI_COMBINER_F90_INTEGER ? (const int[]){r}
		                                                              : (const int[]){p, r},
		                         0, NULL, 0, NULL, fn);
	if (rc)
		return rc;
	struct tcmpi__dtype *t = &tcmpi__dts[h];
	t->committed = t->keep = 1;
	if (combiner == MPI_COMBINER_F90_INTEGER)
		snprintf(t->name, sizeof t->name, "MPI_Type_create_f90_integer(%d)", r);
	else
		snprintf(t->name, sizeof t->name, "MPI_Type_create_f90_%s(%d, %d)",
		         combiner == MPI_COMBINER_F90_REAL ? "real" : "complex", p, r);
	f90s[nf90++] = (struct f90){combiner, p, r, h};
	*out = h;
	return MPI_SUCCESS;
}

int MPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
	int rc = tcmpi__check_init(__func__);
	if (rc)
		return rc;
	if (!newtype)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL newtype");
	/* Each type's decimal range (Fortran's RANGE). */
	static const struct {
		int range;
		MPI_Datatype t;
	} v[] = {{2, MPI_INT8_T}, {4, MPI_INT16_T}, {9, MPI_INT32_T}, {18, MPI_INT64_T}};
	for (int k = 0; k < 4; k++)
		if (r <= v[k].range)
			return f90_type(MPI_COMBINER_F90_INTEGER, 0, r, v[k].t, newtype, __func__);
	return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__,
	                    "no integer type has a range of 10^%d (at most 10^18)", r);
}

/* The real type (cplx: its complex type) of precision p and range r
 * (either MPI_UNDEFINED). */
static int f90_real(int p, int r, int cplx, MPI_Datatype *newtype, const char *fn)
{
	int rc = tcmpi__check_init(fn);
	if (rc)
		return rc;
	if (!newtype)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "NULL newtype");
	if (p == MPI_UNDEFINED && r == MPI_UNDEFINED)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn,
		                    "precision and range both MPI_UNDEFINED");
	/* Each type's decimal precision and range (Fortran's PRECISION and
	 * RANGE). */
	static const struct {
		int prec, range;
		MPI_Datatype t, c;
	} v[] = {
	        {FLT_DIG, -FLT_MIN_10_EXP, MPI_FLOAT, MPI_C_FLOAT_COMPLEX},
	        {DBL_DIG, -DBL_MIN_10_EXP, MPI_DOUBLE, MPI_C_DOUBLE_COMPLEX},
	        {LDBL_DIG, -LDBL_MIN_10_EXP, MPI_LONG_DOUBLE, MPI_C_LONG_DOUBLE_COMPLEX},
	};
	for (int k = 0; k < 3; k++)
		if ((p == MPI_UNDEFINED || p <= v[k].prec) && (r == MPI_UNDEFINED || r <= v[k].range))
			return f90_type(cplx ? MPI_COMBINER_F90_COMPLEX : MPI_COMBINER_F90_REAL, p,
			                r, cplx ? v[k].c : v[k].t, newtype, fn);
	return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn,
	                    "no %s type has a precision of %d digits and a range of 10^%d",
	                    cplx ? "complex" : "real", p, r);
}

int MPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
	return f90_real(p, r, 0, newtype, __func__);
}

int MPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
	return f90_real(p, r, 1, newtype, __func__);
}

/* ---------------------------------------------------------------------
 * Statuses.  A status counts bytes (tcmpi_count); the elements of a
 * datatype are counted from its basic elements' sizes (emap).
 */

/* The status of a call, not NULL nor MPI_STATUS_IGNORE, or the error of
 * call fn. */
static int status_arg(const MPI_Status *st, const char *fn)
{
	int rc = tcmpi__check_init(fn);
	if (rc)
		return rc;
	if (!st || st == MPI_STATUS_IGNORE)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "%s status",
		                    st ? "MPI_STATUS_IGNORE as" : "NULL");
	return MPI_SUCCESS;
}

/* The basic elements of t in the status's bytes, or MPI_UNDEFINED where
 * the bytes end inside one. */
static MPI_Count elements(const struct tcmpi__dtype *t, MPI_Count bytes)
{
	if (t->size == 0 || bytes <= 0)
		return 0;
	MPI_Count per = 0;
	for (int r = 0; r < t->nemap; r++)
		per += (MPI_Count)t->emap[r].n;
	MPI_Count n = bytes / (MPI_Count)t->size * per, rem = bytes % (MPI_Count)t->size;
	for (int r = 0; r < t->nemap && rem > 0; r++) {
		MPI_Count run = (MPI_Count)(t->emap[r].size * t->emap[r].n);
		if (rem >= run) {
			n += (MPI_Count)t->emap[r].n;
			rem -= run;
		} else {
			n += rem / (MPI_Count)t->emap[r].size;
			rem %= (MPI_Count)t->emap[r].size;
			break;
		}
	}
	return rem ? MPI_UNDEFINED : n;
}

static int get_elements(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count, const char *fn)
{
	const struct tcmpi__dtype *t;
	int rc = status_arg(status, fn);
	if (rc == MPI_SUCCESS)
		rc = type_arg(datatype, fn, &t);
	if (rc)
		return rc;
	if (!count)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "NULL count");
	*count = elements(t, status->tcmpi_count);
	return MPI_SUCCESS;
}

int MPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
	MPI_Count n = 0;
	if (!count)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL count");
	int rc = get_elements(status, datatype, &n, __func__);
	if (rc == MPI_SUCCESS)
		*count = n > INT_MAX ? MPI_UNDEFINED : (int)n;
	return rc;
}

int MPI_Get_elements_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
	return get_elements(status, datatype, count, __func__);
}

int MPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
	return get_elements(status, datatype, count, __func__);
}

/* Sets the status's bytes to those of count basic elements of datatype. */
static int set_elements(MPI_Status *status, MPI_Datatype datatype, MPI_Count count, const char *fn)
{
	const struct tcmpi__dtype *t;
	int rc = status_arg(status, fn);
	if (rc == MPI_SUCCESS)
		rc = type_arg(datatype, fn, &t);
	if (rc)
		return rc;
	if (count < 0)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_COUNT, fn, "negative count %lld",
		                    (long long)count);
	MPI_Count per = 0;
	for (int r = 0; r < t->nemap; r++)
		per += (MPI_Count)t->emap[r].n;
	if (per == 0) {
		if (count != 0)
			return tcmpi__error(MPI_COMM_NULL, MPI_ERR_COUNT, fn,
			                    "%lld elements of a type of none", (long long)count);
		status->tcmpi_count = 0;
		return MPI_SUCCESS;
	}
	MPI_Count bytes, rem = count % per;
	if (__builtin_mul_overflow(count / per, (MPI_Count)t->size, &bytes))
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_COUNT, fn, "%lld elements overflow",
		                    (long long)count);
	for (int r = 0; r < t->nemap && rem > 0; r++) {
		MPI_Count k = rem < (MPI_Count)t->emap[r].n ? rem : (MPI_Count)t->emap[r].n;
		bytes += k * (MPI_Count)t->emap[r].size;
		rem -= k;
	}
	status->tcmpi_count = bytes;
	return MPI_SUCCESS;
}

int MPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
	return set_elements(status, datatype, count, __func__);
}

int MPI_Status_set_elements_c(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
	return set_elements(status, datatype, count, __func__);
}

int MPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
	return set_elements(status, datatype, count, __func__);
}

/* The fields of a status (MPI 4.1). */

int MPI_Status_get_source(const MPI_Status *status, int *source)
{
	int rc = status_arg(status, __func__);
	if (rc)
		return rc;
	if (!source)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL source");
	*source = status->MPI_SOURCE;
	return MPI_SUCCESS;
}

int MPI_Status_set_source(MPI_Status *status, int source)
{
	int rc = status_arg(status, __func__);
	if (rc)
		return rc;
	status->MPI_SOURCE = source;
	return MPI_SUCCESS;
}

int MPI_Status_get_tag(const MPI_Status *status, int *tag)
{
	int rc = status_arg(status, __func__);
	if (rc)
		return rc;
	if (!tag)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL tag");
	*tag = status->MPI_TAG;
	return MPI_SUCCESS;
}

int MPI_Status_set_tag(MPI_Status *status, int tag)
{
	int rc = status_arg(status, __func__);
	if (rc)
		return rc;
	status->MPI_TAG = tag;
	return MPI_SUCCESS;
}

int MPI_Status_get_error(const MPI_Status *status, int *error)
{
	int rc = status_arg(status, __func__);
	if (rc)
		return rc;
	if (!error)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL error");
	*error = status->MPI_ERROR;
	return MPI_SUCCESS;
}

int MPI_Status_set_error(MPI_Status *status, int error)
{
	int rc = status_arg(status, __func__);
	if (rc)
		return rc;
	status->MPI_ERROR = error;
	return MPI_SUCCESS;
}
