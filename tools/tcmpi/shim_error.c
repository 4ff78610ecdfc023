/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_error.c - errors: how the layer reports them
 * (tcmpi__error: the message kept for MPI_Error_string, then the
 * communicator's error handler), the error handlers (predefined and the
 * program's own), and the error classes, codes and strings a program adds.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

/* "MPI_Name: message" of the last error reported. */
static char last_error[MPI_MAX_ERROR_STRING];

static MPI_Errhandler errh_of(MPI_Comm comm)
{
	struct tcmpi__comm *c = tcmpi__comm(comm);
	return c ? c->errh : tcmpi__commv[MPI_COMM_WORLD]->errh;
}

/* User error handlers (MPI_Comm_create_errhandler): handles FIRST_ERRH..
 * index a table; a handler lives while referenced: by the handle the
 * program was given, by each communicator it is set on, by each handle
 * MPI_Comm_get_errhandler returned (MPI_Errhandler_free drops one). */
#define FIRST_ERRH 4
struct errh {
	int refs;
	MPI_Comm_errhandler_function *fn;
};
static struct errh *errhs;
static int nerrhs;

static struct errh *errh_user(MPI_Errhandler h)
{
	return h >= FIRST_ERRH && h < nerrhs && errhs[h].refs > 0 ? &errhs[h] : NULL;
}

static int errh_valid(MPI_Errhandler h)
{
	return h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_RETURN || h == MPI_ERRORS_ABORT ||
	       errh_user(h);
}

void tcmpi__errh_hold(MPI_Errhandler h)
{
	struct errh *e = errh_user(h);
	if (e)
		e->refs++;
}

void tcmpi__errh_drop(MPI_Errhandler h)
{
	struct errh *e = errh_user(h);
	if (e && --e->refs == 0)
		e->fn = NULL;
}

int tcmpi__error(MPI_Comm comm, int code, const char *fn, const char *fmt, ...)
{
	int n = snprintf(last_error, sizeof last_error, "%s: ", fn);
	va_list ap;
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof last_error)
		vsnprintf(last_error + n, sizeof last_error - (size_t)n, fmt, ap);
	va_end(ap);
	const MPI_Errhandler h = errh_of(comm);
	if (h == MPI_ERRORS_RETURN)
		return code;
	const struct errh *e = errh_user(h);
	if (e) {
		/* The handler gets the communicator of the error (MPI_COMM_WORLD
		 * for one of no communicator, whose handler applies). */
		MPI_Comm hc = tcmpi__comm(comm) ? comm : MPI_COMM_WORLD;
		int hcode = code;
		e->fn(&hc, &hcode);
		return code;
	}
	int rank = tcmpi__self ? tc_rank(tcmpi__self->proc) : -1;
	/* A rank failing only because another one aborted the run says nothing
	 * more: the first failure has been reported. */
	if (!(tcmpi__self && atomic_load(&tcmpi__self->shared->aborted)))
		fprintf(stderr, "tcmpi: rank %d: %s (MPI error class %d); aborting the run\n", rank,
		        last_error, code);
	tcmpi__end_rank(code ? code : 1, 1);
}

int tcmpi__tc_error(MPI_Comm comm, int err, const char *fn)
{
	int code;
	switch (err) {
	case TC_EROOT:
		code = MPI_ERR_ROOT;
		break;
	case TC_ERANK:
	case TC_ENOTNEIGHBOR:
	case TC_ESELF:
		code = MPI_ERR_RANK;
		break;
	case TC_ENULLBUF:
		code = MPI_ERR_BUFFER;
		break;
	case TC_EOVERFLOW:
		code = MPI_ERR_COUNT;
		break;
	case TC_ETRUNCATE:
		code = MPI_ERR_TRUNCATE;
		break;
	case TC_ENOMEM:
		code = MPI_ERR_NO_MEM;
		break;
	case TC_ENOTSUP:
		code = MPI_ERR_UNSUPPORTED_OPERATION;
		break;
	case TC_EABORTED:
		code = MPI_ERR_PROC_ABORTED;
		break;
	case TC_EINVAL:
		code = MPI_ERR_ARG;
		break;
	default:
		code = MPI_ERR_OTHER;
		break;
	}
	const char *d = tc_error_detail();
	return tcmpi__error(comm, code, fn, "%s%s%s", tc_strerror(err), d && *d ? ": " : "", d ? d : "");
}

int tcmpi__check_init_fail(const char *fn)
{
	if (!tcmpi__self)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_OTHER, fn,
		                    "the program was not started by tcmpirun");
	if (!tcmpi__initialized || tcmpi__finalized)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_OTHER, fn, "called %s MPI_Init",
		                    tcmpi__finalized ? "after MPI_Finalize" : "before");
	return MPI_SUCCESS;
}

int tcmpi__unsupported(const char *fn)
{
	return tcmpi__error(MPI_COMM_NULL, MPI_ERR_UNSUPPORTED_OPERATION, fn,
	                    "not supported by topocoll's MPI layer (docs/mpi-programs.md)");
}

/* Error classes and codes the program adds (MPI_Add_error_class,
 * MPI_Add_error_code): values FIRST_UCODE .. tcmpi__lastusedcode, each
 * with its class (a class is its own) and its string (NULL: none). */
#define FIRST_UCODE (MPI_ERR_LASTCODE + 1)
struct ucode {
	int used;
	int cls;
	char *str;
};
static struct ucode *ucodes; /* by value - FIRST_UCODE */
static int nucodes;
int tcmpi__lastusedcode = MPI_ERR_LASTCODE;

static struct ucode *ucode_of(int code)
{
	return code >= FIRST_UCODE && code - FIRST_UCODE < nucodes && ucodes[code - FIRST_UCODE].used
	               ? &ucodes[code - FIRST_UCODE]
	               : NULL;
}

/* A new value above every one in use, of class cls (-1: itself). */
static int ucode_add(int cls, int *out, const char *fn)
{
	const int v = tcmpi__lastusedcode + 1, i = v - FIRST_UCODE;
	if (i >= nucodes) {
		int n = nucodes ? 2 * nucodes : 16;
		struct ucode *g = realloc(ucodes, (size_t)n * sizeof *g);
		if (!g)
			return tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, fn, "out of memory");
		memset(g + nucodes, 0, (size_t)(n - nucodes) * sizeof *g);
		ucodes = g;
		nucodes = n;
	}
	ucodes[i] = (struct ucode){.used = 1, .cls = cls < 0 ? v : cls};
	tcmpi__lastusedcode = v;
	*out = v;
	return MPI_SUCCESS;
}

/* Removes value code: MPI_LASTUSEDCODE falls to the largest left. */
static void ucode_remove(int code)
{
	struct ucode *u = ucode_of(code);
	free(u->str);
	*u = (struct ucode){0};
	while (tcmpi__lastusedcode > MPI_ERR_LASTCODE && !ucode_of(tcmpi__lastusedcode))
		tcmpi__lastusedcode--;
}

int MPI_Add_error_class(int *errorclass)
{
	int rc = tcmpi__check_init(__func__);
	if (rc)
		return rc;
	if (!errorclass)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL errorclass");
	return ucode_add(-1, errorclass, __func__);
}

int MPI_Add_error_code(int errorclass, int *errorcode)
{
	int rc = tcmpi__check_init(__func__);
	if (rc)
		return rc;
	if (!errorcode)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL errorcode");
	const struct ucode *u = ucode_of(errorclass);
	if (!(errorclass >= 0 && errorclass < MPI_ERR_LASTCODE) && !(u && u->cls == errorclass))
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__,
		                    "%d is not an error class", errorclass);
	return ucode_add(errorclass, errorcode, __func__);
}

int MPI_Add_error_string(int errorcode, const char *string)
{
	int rc = tcmpi__check_init(__func__);
	if (rc)
		return rc;
	struct ucode *u = ucode_of(errorcode);
	if (!u)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__,
		                    "%d is not an error code or class added by the program", errorcode);
	if (!string || strlen(string) >= MPI_MAX_ERROR_STRING)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__,
		                    "%s string: at most MPI_MAX_ERROR_STRING - 1 (%d) characters",
		                    string ? "too long a" : "NULL", MPI_MAX_ERROR_STRING - 1);
	char *copy = strdup(string);
	if (!copy)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, __func__, "out of memory");
	free(u->str);
	u->str = copy;
	return MPI_SUCCESS;
}

/* The MPI 4.1 removals: only values the program added; a class only when
 * no code of it is left. */
static int ucode_arg(int code, int want_class, const char *fn)
{
	int rc = tcmpi__check_init(fn);
	if (rc)
		return rc;
	const struct ucode *u = ucode_of(code);
	if (!u || (want_class >= 0 && (u->cls == code) != want_class))
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn,
		                    "%d is not an error %s added by the program", code,
		                    want_class < 0 ? "code or class"
		                    : want_class   ? "class"
		                                   : "code");
	return MPI_SUCCESS;
}

int MPI_Remove_error_class(int errorclass)
{
	int rc = ucode_arg(errorclass, 1, __func__);
	if (rc)
		return rc;
	for (int i = 0; i < nucodes; i++)
		if (ucodes[i].used && ucodes[i].cls == errorclass && i + FIRST_UCODE != errorclass)
			return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__,
			                    "error class %d still has error code %d", errorclass,
			                    i + FIRST_UCODE);
	ucode_remove(errorclass);
	return MPI_SUCCESS;
}

int MPI_Remove_error_code(int errorcode)
{
	int rc = ucode_arg(errorcode, 0, __func__);
	if (rc)
		return rc;
	ucode_remove(errorcode);
	return MPI_SUCCESS;
}

int MPI_Remove_error_string(int errorcode)
{
	int rc = ucode_arg(errorcode, -1, __func__);
	if (rc)
		return rc;
	struct ucode *u = ucode_of(errorcode);
	free(u->str);
	u->str = NULL;
	return MPI_SUCCESS;
}

int MPI_Error_class(int errorcode, int *errorclass)
{
	const struct ucode *u = ucode_of(errorcode);
	if (!errorclass || ((errorcode < 0 || errorcode > MPI_ERR_LASTCODE) && !u))
		return MPI_ERR_ARG;
	*errorclass = u ? u->cls : errorcode;
	return MPI_SUCCESS;
}

int MPI_Error_string(int errorcode, char *string, int *resultlen)
{
	static const char *const names[] = {
	        [MPI_SUCCESS] = "no error",
	        [MPI_ERR_BUFFER] = "invalid buffer",
	        [MPI_ERR_COUNT] = "invalid count",
	        [MPI_ERR_TYPE] = "invalid datatype",
	        [MPI_ERR_TAG] = "invalid tag",
	        [MPI_ERR_COMM] = "invalid communicator",
	        [MPI_ERR_RANK] = "invalid rank",
	        [MPI_ERR_REQUEST] = "invalid request",
	        [MPI_ERR_ROOT] = "invalid root",
	        [MPI_ERR_GROUP] = "invalid group",
	        [MPI_ERR_OP] = "invalid operator",
	        [MPI_ERR_TOPOLOGY] = "invalid topology",
	        [MPI_ERR_DIMS] = "invalid dimensions",
	        [MPI_ERR_ARG] = "invalid argument",
	        [MPI_ERR_UNKNOWN] = "unknown error",
	        [MPI_ERR_TRUNCATE] = "message truncated",
	        [MPI_ERR_OTHER] = "other error",
	        [MPI_ERR_INTERN] = "internal error",
	        [MPI_ERR_IN_STATUS] = "error code in status",
	        [MPI_ERR_PENDING] = "pending request",
	        [MPI_ERR_INFO_KEY] = "invalid info key",
	        [MPI_ERR_INFO_NOKEY] = "info key not defined",
	        [MPI_ERR_INFO_VALUE] = "invalid info value",
	        [MPI_ERR_INFO] = "invalid info object",
	        [MPI_ERR_KEYVAL] = "invalid attribute key",
	        [MPI_ERR_NO_MEM] = "out of memory",
	        [MPI_ERR_UNSUPPORTED_OPERATION] = "unsupported operation",
	        [MPI_ERR_PROC_ABORTED] = "the run was aborted by another rank",
	        [MPI_ERR_ERRHANDLER] = "invalid error handler",
	};
	if (!string || !resultlen)
		return MPI_ERR_ARG;
	const struct ucode *u = ucode_of(errorcode);
	if (u) {
		/* A string the program added, else none (as MPI says). */
		snprintf(string, MPI_MAX_ERROR_STRING, "%s", u->str ? u->str : "");
		*resultlen = (int)strlen(string);
		return MPI_SUCCESS;
	}
	const char *s = errorcode >= 0 && errorcode < (int)(sizeof names / sizeof names[0]) &&
	                                names[errorcode]
	                        ? names[errorcode]
	                        : "unknown error";
	/* With the message of the last error raised here. */
	if (last_error[0] && errorcode != MPI_SUCCESS)
		snprintf(string, MPI_MAX_ERROR_STRING, "%s (last: %.400s)", s, last_error);
	else
		snprintf(string, MPI_MAX_ERROR_STRING, "%s", s);
	*resultlen = (int)strlen(string);
	return MPI_SUCCESS;
}

int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function *function, MPI_Errhandler *errhandler)
{
	int rc = tcmpi__check_init(__func__);
	if (rc)
		return rc;
	if (!function || !errhandler)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL %s",
		                    function ? "errhandler" : "function");
	int h = FIRST_ERRH;
	while (h < nerrhs && errhs[h].refs > 0)
		h++;
	if (h >= nerrhs) {
		int n = nerrhs ? 2 * nerrhs : 4 * FIRST_ERRH;
		struct errh *g = realloc(errhs, (size_t)n * sizeof *g);
		if (!g)
			return tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, __func__,
			                    "out of memory for an error handler");
		memset(g + nerrhs, 0, (size_t)(n - nerrhs) * sizeof *g);
		errhs = g;
		nerrhs = n;
	}
	errhs[h] = (struct errh){.refs = 1, .fn = function};
	*errhandler = h;
	return MPI_SUCCESS;
}

int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
	struct tcmpi__comm *c = tcmpi__comm(comm);
	if (!c)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_COMM, __func__,
		                    "invalid communicator %d", comm);
	if (!errh_valid(errhandler))
		return tcmpi__error(comm, MPI_ERR_ERRHANDLER, __func__, "invalid error handler %d",
		                    errhandler);
	tcmpi__errh_hold(errhandler);
	tcmpi__errh_drop(c->errh);
	c->errh = errhandler;
	return MPI_SUCCESS;
}

/* The handle returned is one more reference to a user handler, which the
 * program frees with MPI_Errhandler_free, as MPI says. */
int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
	struct tcmpi__comm *c = tcmpi__comm(comm);
	if (!c)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_COMM, __func__,
		                    "invalid communicator %d", comm);
	if (!errhandler)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL errhandler");
	tcmpi__errh_hold(c->errh);
	*errhandler = c->errh;
	return MPI_SUCCESS;
}

int MPI_Errhandler_free(MPI_Errhandler *errhandler)
{
	if (!errhandler)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL errhandler");
	if (!errh_valid(*errhandler))
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ERRHANDLER, __func__,
		                    "invalid error handler %d", *errhandler);
	tcmpi__errh_drop(*errhandler);
	*errhandler = MPI_ERRHANDLER_NULL;
	return MPI_SUCCESS;
}

/* Raises errorcode on comm: its handler runs as for an error of the
 * layer's; MPI_SUCCESS when the handler returns. */
int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
	struct tcmpi__comm *c;
	int rc = tcmpi__comm_arg(comm, __func__, &c);
	if (rc)
		return rc;
	(void)tcmpi__error(comm, errorcode, __func__, "error code %d raised by the program", errorcode);
	return MPI_SUCCESS;
}

MPI_Fint MPI_Errhandler_c2f(MPI_Errhandler errhandler)
{
	return (MPI_Fint)errhandler;
}

MPI_Errhandler MPI_Errhandler_f2c(MPI_Fint errhandler)
{
	return errh_valid((MPI_Errhandler)errhandler) ? (MPI_Errhandler)errhandler : MPI_ERRHANDLER_NULL;
}
