/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_pack.c - packing datatypes into buffers of the
 * program's: MPI_Pack, MPI_Unpack and MPI_Pack_size (each _c) in this
 * machine's representation (the datatype's bytes in type-map order, as
 * the layer's messages carry them), and MPI_Pack_external,
 * MPI_Unpack_external and MPI_Pack_external_size in "external32".
 */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "shim.h"

/* The checks MPI_Pack and MPI_Unpack make of their datatype (t, committed,
 * of handle dt), position and count, reported on comm. */
static int pack_args(const struct tcmpi__dtype *t, MPI_Datatype dt, const int *position, int count,
                     MPI_Comm comm, const char *fn)
{
	if (!t)
		return tcmpi__error(comm, MPI_ERR_TYPE, fn, "invalid or uncommitted datatype %d", dt);
	if (!position)
		return tcmpi__error(comm, MPI_ERR_ARG, fn, "NULL position");
	if (count < 0)
		return tcmpi__error(comm, MPI_ERR_COUNT, fn, "negative count %d", count);
	return MPI_SUCCESS;
}

int MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
	const struct tcmpi__dtype *t = tcmpi__dt_any(datatype);
	if (!t)
		return tcmpi__error(comm, MPI_ERR_TYPE, __func__, "invalid datatype %d", datatype);
	if (!size)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL size");
	if (incount < 0)
		return tcmpi__error(comm, MPI_ERR_COUNT, __func__, "negative count %d", incount);
	const size_t n = (size_t)incount * t->size;
	if (n > INT_MAX)
		return tcmpi__error(comm, MPI_ERR_COUNT, __func__,
		                    "%d elements are %zu bytes, over INT_MAX (MPI_Pack_size_c)",
		                    incount, n);
	*size = (int)n;
	return MPI_SUCCESS;
}

int MPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
             int *position, MPI_Comm comm)
{
	const struct tcmpi__dtype *t = tcmpi__dt(datatype);
	int rc = pack_args(t, datatype, position, incount, comm, __func__);
	if (rc)
		return rc;
	size_t n = (size_t)incount * t->size;
	if (*position < 0 || (size_t)*position + n > (size_t)outsize)
		return tcmpi__error(comm, MPI_ERR_TRUNCATE, __func__, "%zu bytes do not fit", n);
	tcmpi__pack(inbuf, (size_t)incount, t, (char *)outbuf + *position);
	*position += (int)n;
	return MPI_SUCCESS;
}

int MPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
               MPI_Datatype datatype, MPI_Comm comm)
{
	const struct tcmpi__dtype *t = tcmpi__dt(datatype);
	int rc = pack_args(t, datatype, position, outcount, comm, __func__);
	if (rc)
		return rc;
	size_t n = (size_t)outcount * t->size;
	if (*position < 0 || (size_t)*position + n > (size_t)insize)
		return tcmpi__error(comm, MPI_ERR_TRUNCATE, __func__, "%zu bytes are not there", n);
	tcmpi__unpack((const char *)inbuf + *position, (size_t)outcount, t, outbuf);
	*position += (int)n;
	return MPI_SUCCESS;
}

int MPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size)
{
	const struct tcmpi__dtype *t = tcmpi__dt_any(datatype);
	if (!t || !size || incount < 0)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "invalid argument");
	if (t->size && (size_t)incount > (size_t)INT64_MAX / t->size)
		return tcmpi__error(comm, MPI_ERR_COUNT, __func__, "%lld elements overflow",
		                    (long long)incount);
	*size = incount * (MPI_Count)t->size;
	return MPI_SUCCESS;
}

int MPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf,
               MPI_Count outsize, MPI_Count *position, MPI_Comm comm)
{
	const struct tcmpi__dtype *t = tcmpi__dt(datatype);
	MPI_Count n;
	if (!t || !position || incount < 0)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "invalid argument");
	if (__builtin_mul_overflow(incount, (MPI_Count)t->size, &n) || *position < 0 ||
	    *position > outsize || n > outsize - *position)
		return tcmpi__error(comm, MPI_ERR_TRUNCATE, __func__, "%lld elements do not fit",
		                    (long long)incount);
	tcmpi__pack(inbuf, (size_t)incount, t, (char *)outbuf + *position);
	*position += n;
	return MPI_SUCCESS;
}

int MPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                 MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm)
{
	const struct tcmpi__dtype *t = tcmpi__dt(datatype);
	MPI_Count n;
	if (!t || !position || outcount < 0)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "invalid argument");
	if (__builtin_mul_overflow(outcount, (MPI_Count)t->size, &n) || *position < 0 ||
	    *position > insize || n > insize - *position)
		return tcmpi__error(comm, MPI_ERR_TRUNCATE, __func__, "%lld elements are not there",
		                    (long long)outcount);
	tcmpi__unpack((const char *)inbuf + *position, (size_t)outcount, t, outbuf);
	*position += n;
	return MPI_SUCCESS;
}

/* ---------------------------------------------------------------------
 * The external32 data representation (MPI_Pack_external): every basic
 * element in type-map order, big-endian, in the standard's sizes, which
 * differ from this machine's for MPI_LONG and MPI_UNSIGNED_LONG (4
 * bytes), MPI_WCHAR (2) and MPI_LONG_DOUBLE (16, IEEE binary128).  A value
 * that does not fit its external size fails with MPI_ERR_CONVERSION.
 */

/* How one component of a basic element converts. */
enum { X_RAW = 1, X_SWAP, X_LONG, X_ULONG, X_WCHAR, X_LDBL };
static const struct {
	unsigned char kind, size, ncomp; /* external bytes of one component */
} x32[TCMPI_DT_PREDEFINED] = {
        [MPI_CHAR] = {X_RAW, 1, 1},
        [MPI_SIGNED_CHAR] = {X_RAW, 1, 1},
        [MPI_UNSIGNED_CHAR] = {X_RAW, 1, 1},
        [MPI_BYTE] = {X_RAW, 1, 1},
        [MPI_PACKED] = {X_RAW, 1, 1},
        [MPI_C_BOOL] = {X_RAW, 1, 1},
        [MPI_INT8_T] = {X_RAW, 1, 1},
        [MPI_UINT8_T] = {X_RAW, 1, 1},
        [MPI_SHORT] = {X_SWAP, 2, 1},
        [MPI_UNSIGNED_SHORT] = {X_SWAP, 2, 1},
        [MPI_INT16_T] = {X_SWAP, 2, 1},
        [MPI_UINT16_T] = {X_SWAP, 2, 1},
        [MPI_INT] = {X_SWAP, 4, 1},
        [MPI_UNSIGNED] = {X_SWAP, 4, 1},
        [MPI_INT32_T] = {X_SWAP, 4, 1},
        [MPI_UINT32_T] = {X_SWAP, 4, 1},
        [MPI_FLOAT] = {X_SWAP, 4, 1},
        [MPI_LONG] = {X_LONG, 4, 1},
        [MPI_UNSIGNED_LONG] = {X_ULONG, 4, 1},
        [MPI_LONG_LONG_INT] = {X_SWAP, 8, 1},
        [MPI_UNSIGNED_LONG_LONG] = {X_SWAP, 8, 1},
        [MPI_INT64_T] = {X_SWAP, 8, 1},
        [MPI_UINT64_T] = {X_SWAP, 8, 1},
        [MPI_DOUBLE] = {X_SWAP, 8, 1},
        [MPI_AINT] = {X_SWAP, 8, 1},
        [MPI_OFFSET] = {X_SWAP, 8, 1},
        [MPI_COUNT] = {X_SWAP, 8, 1},
        [MPI_WCHAR] = {X_WCHAR, 2, 1},
        [MPI_LONG_DOUBLE] = {X_LDBL, 16, 1},
        [MPI_C_FLOAT_COMPLEX] = {X_SWAP, 4, 2},
        [MPI_C_DOUBLE_COMPLEX] = {X_SWAP, 8, 2},
        [MPI_C_LONG_DOUBLE_COMPLEX] = {X_LDBL, 16, 2},
};
_Static_assert(sizeof(short) == 2 && sizeof(int) == 4 && sizeof(long long) == 8 &&
                       sizeof(float) == 4 && sizeof(double) == 8 && sizeof(MPI_Aint) == 8 &&
                       sizeof(MPI_Offset) == 8 && sizeof(MPI_Count) == 8,
               "external32 converts these types by their sizes");

static void put_be(unsigned char *o, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		o[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
}

static uint64_t get_be(const unsigned char *in, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v = v << 8 | in[i];
	return v;
}

/* A native unsigned integer of n bytes at p. */
static uint64_t get_native(const void *p, int n)
{
	uint8_t a;
	uint16_t b;
	uint32_t c;
	uint64_t d;
	switch (n) {
	case 1:
		memcpy(&a, p, 1);
		return a;
	case 2:
		memcpy(&b, p, 2);
		return b;
	case 4:
		memcpy(&c, p, 4);
		return c;
	default:
		memcpy(&d, p, 8);
		return d;
	}
}

static void put_native(void *p, uint64_t v, int n)
{
	uint8_t a = (uint8_t)v;
	uint16_t b = (uint16_t)v;
	uint32_t c = (uint32_t)v;
	switch (n) {
	case 1:
		memcpy(p, &a, 1);
		break;
	case 2:
		memcpy(p, &b, 2);
		break;
	case 4:
		memcpy(p, &c, 4);
		break;
	default:
		memcpy(p, &v, 8);
	}
}

/* A long double as IEEE binary128 (hi, lo: the sign, the exponent and
 * the fraction's top 48 bits; its other 64) and back: the x87 format
 * shares the sign, the exponent and its bias, and carries its integer
 * bit explicitly. */
static int ldbl_to_quad(const void *p, uint64_t *hi, uint64_t *lo)
{
#if __LDBL_MANT_DIG__ == 64 && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t mant;
	uint16_t se;
	memcpy(&mant, p, 8);
	memcpy(&se, (const char *)p + 8, 2);
	uint64_t f63 = mant & 0x7fffffffffffffffULL;
	*hi = (uint64_t)se << 48 | f63 >> 15;
	*lo = (f63 & 0x7fff) << 49;
	return 0;
#elif __LDBL_MANT_DIG__ == 113 && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(lo, p, 8);
	memcpy(hi, (const char *)p + 8, 8);
	return 0;
#else
	(void)p;
	*hi = *lo = 0;
	return -1;
#endif
}

static int quad_to_ldbl(uint64_t hi, uint64_t lo, void *p)
{
#if __LDBL_MANT_DIG__ == 64 && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* The fraction's 49 lowest bits, which x87 has no room for, are
	 * dropped (rounded toward zero). */
	uint16_t se = (uint16_t)(hi >> 48);
	uint64_t f63 = (hi & 0xffffffffffffULL) << 15 | lo >> 49;
	uint64_t mant = f63 | (uint64_t)((se & 0x7fff) != 0) << 63;
	memset(p, 0, sizeof(long double));
	memcpy(p, &mant, 8);
	memcpy((char *)p + 8, &se, 2);
	return 0;
#elif __LDBL_MANT_DIG__ == 113 && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, &lo, 8);
	memcpy((char *)p + 8, &hi, 8);
	return 0;
#else
	(void)hi;
	(void)lo;
	(void)p;
	return -1;
#endif
}

/* Converts one component of kind k (native n bytes at nat, external x
 * bytes at ext) to external32 (out = 1) or back; -1 when its value does
 * not fit. */
static int x32_component(int k, int n, int x, void *nat, unsigned char *ext, int out)
{
	uint64_t v, hi, lo;
	int64_t sv;
	switch (k) {
	case X_RAW:
	case X_SWAP:
		if (out)
			put_be(ext, get_native(nat, n), n);
		else
			put_native(nat, get_be(ext, n), n);
		return 0;
	case X_LONG:
		if (out) {
			sv = (int64_t)get_native(nat, n);
			if (n > 4 && (sv < INT32_MIN || sv > INT32_MAX))
				return -1;
			put_be(ext, (uint64_t)sv, x);
		} else {
			sv = (int32_t)(uint32_t)get_be(ext, x);
			put_native(nat, (uint64_t)sv, n);
		}
		return 0;
	case X_ULONG:
	case X_WCHAR:
		if (out) {
			v = get_native(nat, n);
			if (v >> (8 * x))
				return -1;
			put_be(ext, v, x);
		} else {
			put_native(nat, get_be(ext, x), n);
		}
		return 0;
	case X_LDBL:
		if (out) {
			if (ldbl_to_quad(nat, &hi, &lo) != 0)
				return -1;
			put_be(ext, hi, 8);
			put_be(ext + 8, lo, 8);
			return 0;
		}
		return quad_to_ldbl(get_be(ext, 8), get_be(ext + 8, 8), nat);
	}
	return -1;
}

/* The external32 bytes of one element of t. */
static MPI_Count x32_size(const struct tcmpi__dtype *t)
{
	MPI_Count n = 0;
	for (int r = 0; r < t->ntmap; r++)
		n += (MPI_Count)t->tmap[r].n * x32[t->tmap[r].type].size * x32[t->tmap[r].type].ncomp;
	return n;
}

static int x32_datarep(const char *datarep, const char *fn)
{
	if (!datarep || strcmp(datarep, "external32") != 0)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn,
		                    "data representation \"%s\" is not \"external32\"",
		                    datarep ? datarep : "(NULL)");
	return MPI_SUCCESS;
}

/* Converts count elements of t at buf to external32 at ext (out = 1) or
 * back; the error of call fn where a value does not fit. */
static int x32_convert(void *buf, MPI_Count count, const struct tcmpi__dtype *t, unsigned char *ext,
                       int out, const char *fn)
{
	for (MPI_Count e = 0; e < count; e++) {
		uintptr_t base = (uintptr_t)buf + (uintptr_t)((MPI_Aint)e * t->extent);
		for (int r = 0; r < t->ntmap; r++) {
			MPI_Datatype ty = t->tmap[r].type;
			int k = x32[ty].kind, x = x32[ty].size, nc = x32[ty].ncomp;
			int n = (int)(tcmpi__dts[ty].size / (size_t)nc);
			for (size_t i = 0; i < t->tmap[r].n * (size_t)nc; i++) {
				void *nat = (void *)(base + (uintptr_t)t->tmap[r].off + i * (size_t)n);
				if (x32_component(k, n, x, nat, ext, out) != 0)
					return tcmpi__error(MPI_COMM_NULL, MPI_ERR_CONVERSION, fn,
					                    "a value of %s %s external32's %d bytes",
					                    tcmpi__dts[ty].name,
					                    out ? "does not fit in" : "cannot be read from",
					                    x);
				ext += x;
			}
		}
	}
	return MPI_SUCCESS;
}

/* MPI_Pack_external (out = 1: count elements of datatype at native into
 * ext, a buffer of size bytes, from *position on) and MPI_Unpack_external
 * (out = 0: from ext into native); *position moves past the bytes. */
static int external(const char *datarep, void *native, MPI_Count count, MPI_Datatype datatype,
                    unsigned char *ext, MPI_Count size, MPI_Count *position, int out, const char *fn)
{
	int rc = tcmpi__check_init(fn);
	if (rc == MPI_SUCCESS)
		rc = x32_datarep(datarep, fn);
	if (rc)
		return rc;
	const struct tcmpi__dtype *t = tcmpi__dt(datatype);
	if (!t)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_TYPE, fn,
		                    "datatype %d is not a committed datatype", datatype);
	if (count < 0)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_COUNT, fn, "negative count %lld",
		                    (long long)count);
	if (!position || *position < 0 || size < 0 || *position > size)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn,
		                    "NULL position, or position outside %s", out ? "outsize" : "insize");
	MPI_Count n;
	if (__builtin_mul_overflow(count, x32_size(t), &n) || n > size - *position)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_TRUNCATE, fn,
		                    "%lld elements of %lld external32 bytes each %s %lld bytes from %lld",
		                    (long long)count, (long long)x32_size(t),
		                    out ? "do not fit in" : "are not in", (long long)size,
		                    (long long)*position);
	if (n > 0 && (!native || !ext))
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_BUFFER, fn, "NULL buffer");
	rc = x32_convert(native, count, t, ext + *position, out, fn);
	if (rc == MPI_SUCCESS)
		*position += n;
	return rc;
}

static int pack_external(const char *datarep, const void *inbuf, MPI_Count incount, MPI_Datatype datatype,
                         void *outbuf, MPI_Count outsize, MPI_Count *position, const char *fn)
{
	return external(datarep, (void *)(uintptr_t)inbuf, incount, datatype, outbuf, outsize,
	                position, 1, fn);
}

static int unpack_external(const char *datarep, const void *inbuf, MPI_Count insize, MPI_Count *position,
                           void *outbuf, MPI_Count outcount, MPI_Datatype datatype, const char *fn)
{
	return external(datarep, outbuf, outcount, datatype, (unsigned char *)(uintptr_t)inbuf,
	                insize, position, 0, fn);
}

static int pack_external_size(const char *datarep, MPI_Count incount, MPI_Datatype datatype,
                              MPI_Count *size, const char *fn)
{
	int rc = tcmpi__check_init(fn);
	if (rc == MPI_SUCCESS)
		rc = x32_datarep(datarep, fn);
	if (rc)
		return rc;
	const struct tcmpi__dtype *t = tcmpi__dt_any(datatype);
	if (!t)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_TYPE, fn, "invalid datatype %d", datatype);
	if (incount < 0)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_COUNT, fn, "negative count %lld",
		                    (long long)incount);
	if (!size)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "NULL size");
	if (__builtin_mul_overflow(incount, x32_size(t), size))
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_COUNT, fn, "%lld elements overflow",
		                    (long long)incount);
	return MPI_SUCCESS;
}

int MPI_Pack_external(const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype,
                      void *outbuf, MPI_Aint outsize, MPI_Aint *position)
{
	MPI_Count pos = position ? *position : 0;
	int rc = pack_external(datarep, inbuf, incount, datatype, outbuf, outsize,
	                       position ? &pos : NULL, __func__);
	if (rc == MPI_SUCCESS)
		*position = (MPI_Aint)pos;
	return rc;
}

int MPI_Pack_external_c(const char datarep[], const void *inbuf, MPI_Count incount,
                        MPI_Datatype datatype, void *outbuf, MPI_Count outsize, MPI_Count *position)
{
	return pack_external(datarep, inbuf, incount, datatype, outbuf, outsize, position, __func__);
}

int MPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                        MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype datatype)
{
	MPI_Count pos = position ? *position : 0;
	int rc = unpack_external(datarep, inbuf, insize, position ? &pos : NULL, outbuf, outcount,
	                         datatype, __func__);
	if (rc == MPI_SUCCESS)
		*position = (MPI_Aint)pos;
	return rc;
}

int MPI_Unpack_external_c(const char datarep[], const void *inbuf, MPI_Count insize,
                          MPI_Count *position, void *outbuf, MPI_Count outcount, MPI_Datatype datatype)
{
	return unpack_external(datarep, inbuf, insize, position, outbuf, outcount, datatype, __func__);
}

int MPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint *size)
{
	MPI_Count n = 0;
	int rc = pack_external_size(datarep, incount, datatype, size ? &n : NULL, __func__);
	if (rc == MPI_SUCCESS)
		*size = (MPI_Aint)n;
	return rc;
}

int MPI_Pack_external_size_c(const char datarep[], MPI_Count incount, MPI_Datatype datatype,
                             MPI_Count *size)
{
	return pack_external_size(datarep, incount, datatype, size, __func__);
}
