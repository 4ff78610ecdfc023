/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_info.c - info objects (MPI_Info_*), MPI_INFO_ENV and
 * the hints of communicators (MPI_Comm_set_info, MPI_Comm_get_info).
 *
 * An info object is a list of (key, value) strings in the order their
 * keys were first set; setting a key again replaces its value in place.
 * Keys are 1 .. MPI_MAX_INFO_KEY - 1 characters and values at most
 * MPI_MAX_INFO_VAL - 1, so that each fits a buffer of the constant's size
 * with its terminating null.  Handles: MPI_INFO_NULL (0), MPI_INFO_ENV
 * (1, made at its first use, read-only), then the objects the program
 * makes, indexing a table.  The calls are local and, as MPI 4 allows, may
 * be made before MPI_Init and after MPI_Finalize.
 *
 * The layer uses no hint: a communicator keeps those it is given and
 * returns them (MPI_Comm_get_info), as MPI allows.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

struct kv {
	char *key, *val;
};

struct info {
	int used;
	int n, cap;
	struct kv *kv;
};

static struct info *infos;
static int ninfos;

static int env_make(struct info *e);

/* The info object of a handle (MPI_INFO_ENV made at its first use), or
 * NULL. */
static struct info *info_of(MPI_Info h)
{
	if (h == MPI_INFO_ENV && (ninfos <= MPI_INFO_ENV || !infos[MPI_INFO_ENV].used)) {
		if (ninfos <= MPI_INFO_ENV) {
			struct info *g = calloc(8, sizeof *g);
			if (!g)
				return NULL;
			infos = g;
			ninfos = 8;
		}
		if (env_make(&infos[MPI_INFO_ENV]))
			return NULL;
	}
	return h > MPI_INFO_NULL && h < ninfos && infos[h].used ? &infos[h] : NULL;
}

static void info_clear(struct info *o)
{
	for (int i = 0; i < o->n; i++) {
		free(o->kv[i].key);
		free(o->kv[i].val);
	}
	free(o->kv);
	*o = (struct info){0};
}

static int info_find(const struct info *o, const char *key)
{
	for (int i = 0; i < o->n; i++)
		if (strcmp(o->kv[i].key, key) == 0)
			return i;
	return -1;
}

/* Sets key to val in o: 0, or -1 when out of memory (o unchanged). */
static int info_put(struct info *o, const char *key, const char *val)
{
	char *v = strdup(val);
	if (!v)
		return -1;
	const int i = info_find(o, key);
	if (i >= 0) {
		free(o->kv[i].val);
		o->kv[i].val = v;
		return 0;
	}
	if (o->n == o->cap) {
		const int cap = o->cap ? 2 * o->cap : 8;
		struct kv *g = realloc(o->kv, (size_t)cap * sizeof *g);
		if (!g) {
			free(v);
			return -1;
		}
		o->kv = g;
		o->cap = cap;
	}
	char *k = strdup(key);
	if (!k) {
		free(v);
		return -1;
	}
	o->kv[o->n++] = (struct kv){k, v};
	return 0;
}

/* A new empty info object: its handle, or MPI_INFO_NULL when out of
 * memory. */
static MPI_Info info_new(void)
{
	(void)info_of(MPI_INFO_ENV); /* makes the table */
	if (ninfos <= MPI_INFO_ENV)
		return MPI_INFO_NULL;
	int h = MPI_INFO_ENV + 1;
	while (h < ninfos && infos[h].used)
		h++;
	if (h >= ninfos) {
		int n = 2 * ninfos;
		struct info *g = realloc(infos, (size_t)n * sizeof *g);
		if (!g)
			return MPI_INFO_NULL;
		memset(g + ninfos, 0, (size_t)(n - ninfos) * sizeof *g);
		infos = g;
		ninfos = n;
	}
	infos[h] = (struct info){.used = 1};
	return h;
}

/* MPI's reserved keys that describe the run: the command and its
 * arguments (argv, else the rank's), the ranks started, the host, the
 * working directory, the thread level provided. */
static int env_fill(struct info *e, int argc, char **argv)
{
	if ((argc <= 0 || !argv) && tcmpi__self) {
		argc = tcmpi__self->argc;
		argv = tcmpi__self->argv;
	}
	char buf[MPI_MAX_INFO_VAL];
	int rc = 0;
	if (argc > 0 && argv && argv[0]) {
		rc |= info_put(e, "command", argv[0]);
		size_t len = 0;
		buf[0] = '\0';
		for (int i = 1; i < argc && argv[i]; i++) {
			int w = snprintf(buf + len, sizeof buf - len, "%s%s", i > 1 ? " " : "", argv[i]);
			if (w < 0 || (size_t)w >= sizeof buf - len)
				break; /* the arguments that fit in a value */
			len += (size_t)w;
		}
		if (argc > 1)
			rc |= info_put(e, "argv", buf);
	}
	if (tcmpi__self) {
		snprintf(buf, sizeof buf, "%d", tc_size(tcmpi__self->proc));
		rc |= info_put(e, "maxprocs", buf);
	}
	if (gethostname(buf, sizeof buf) == 0) {
		buf[sizeof buf - 1] = '\0';
		rc |= info_put(e, "host", buf);
	}
	if (getcwd(buf, sizeof buf))
		rc |= info_put(e, "wdir", buf);
	rc |= info_put(e, "thread_level", "MPI_THREAD_SERIALIZED");
	return rc;
}

static int env_make(struct info *e)
{
	*e = (struct info){.used = 1};
	if (env_fill(e, 0, NULL)) {
		info_clear(e);
		return -1;
	}
	return 0;
}

/* The checks of an info argument and of a key: the object, or NULL with
 * *rc the error. */
static struct info *info_arg(MPI_Info h, const char *fn, int *rc)
{
	*rc = MPI_SUCCESS;
	struct info *o = info_of(h);
	if (!o)
		*rc = tcmpi__error(MPI_COMM_NULL, MPI_ERR_INFO, fn, "invalid info object %d", (int)h);
	return o;
}

static int key_arg(const char *key, const char *fn)
{
	if (!key || !*key || strlen(key) >= MPI_MAX_INFO_KEY)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_INFO_KEY, fn,
		                    "%s key: a key is 1 .. MPI_MAX_INFO_KEY - 1 (%d) characters",
		                    !key    ? "NULL"
		                    : !*key ? "empty"
		                            : "too long a",
		                    MPI_MAX_INFO_KEY - 1);
	return MPI_SUCCESS;
}

static int writable(MPI_Info h, const char *fn)
{
	if (h == MPI_INFO_ENV)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_INFO, fn,
		                    "MPI_INFO_ENV is predefined and cannot be changed or freed");
	return MPI_SUCCESS;
}

int MPI_Info_create(MPI_Info *info)
{
	if (!info)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL info");
	MPI_Info h = info_new();
	if (h == MPI_INFO_NULL)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, __func__,
		                    "out of memory for an info object");
	*info = h;
	return MPI_SUCCESS;
}

int MPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
	int rc = MPI_Info_create(info);
	if (rc)
		return rc;
	if (env_fill(&infos[*info], argc, argv)) {
		info_clear(&infos[*info]);
		*info = MPI_INFO_NULL;
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, __func__, "out of memory");
	}
	return MPI_SUCCESS;
}

int MPI_Info_set(MPI_Info info, const char *key, const char *value)
{
	int rc;
	struct info *o = info_arg(info, __func__, &rc);
	if (!o)
		return rc;
	if ((rc = writable(info, __func__)) || (rc = key_arg(key, __func__)))
		return rc;
	if (!value || strlen(value) >= MPI_MAX_INFO_VAL)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_INFO_VALUE, __func__,
		                    "%s value of key \"%s\": a value is at most MPI_MAX_INFO_VAL - 1 "
		                    "(%d) characters",
		                    value ? "too long a" : "NULL", key, MPI_MAX_INFO_VAL - 1);
	if (info_put(o, key, value))
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, __func__, "out of memory");
	return MPI_SUCCESS;
}

int MPI_Info_delete(MPI_Info info, const char *key)
{
	int rc;
	struct info *o = info_arg(info, __func__, &rc);
	if (!o)
		return rc;
	if ((rc = writable(info, __func__)) || (rc = key_arg(key, __func__)))
		return rc;
	int i = info_find(o, key);
	if (i < 0)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_INFO_NOKEY, __func__,
		                    "key \"%s\" is not set", key);
	free(o->kv[i].key);
	free(o->kv[i].val);
	memmove(&o->kv[i], &o->kv[i + 1], (size_t)(o->n - i - 1) * sizeof o->kv[0]);
	o->n--;
	return MPI_SUCCESS;
}

/* The value of key in info: its index, -1 when not set (*flag 0), or the
 * error in *rc. */
static int lookup(MPI_Info info, const char *key, int *flag, const struct info **o, int *rc,
                  const char *fn)
{
	if (!(*o = info_arg(info, fn, rc)))
		return -1;
	if ((*rc = key_arg(key, fn)))
		return -1;
	if (!flag) {
		*rc = tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "NULL flag");
		return -1;
	}
	const int i = info_find(*o, key);
	*flag = i >= 0;
	return i;
}

/* Deprecated in MPI 4.1 (MPI_Info_get_string): copies at most valuelen
 * characters and a null, so value holds valuelen + 1. */
int MPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
	const struct info *o;
	int rc;
	const int i = lookup(info, key, flag, &o, &rc, __func__);
	if (rc)
		return rc;
	if (valuelen < 0 || !value)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "%s",
		                    value ? "negative valuelen" : "NULL value");
	if (i >= 0) {
		size_t n = strlen(o->kv[i].val);
		if (n > (size_t)valuelen)
			n = (size_t)valuelen;
		memcpy(value, o->kv[i].val, n);
		value[n] = '\0';
	}
	return MPI_SUCCESS;
}

/* *buflen in: the bytes value holds (0: value may be NULL); out: the
 * value's length with its null.  The value is cut to fit. */
int MPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
	const struct info *o;
	int rc;
	const int i = lookup(info, key, flag, &o, &rc, __func__);
	if (rc)
		return rc;
	if (!buflen || *buflen < 0 || (*buflen > 0 && !value))
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "%s",
		                    !buflen       ? "NULL buflen"
		                    : *buflen < 0 ? "negative buflen"
		                                  : "NULL value");
	if (i >= 0) {
		const size_t len = strlen(o->kv[i].val);
		if (*buflen > 0) {
			size_t n = len < (size_t)*buflen - 1 ? len : (size_t)*buflen - 1;
			memcpy(value, o->kv[i].val, n);
			value[n] = '\0';
		}
		*buflen = (int)len + 1;
	}
	return MPI_SUCCESS;
}

int MPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
	const struct info *o;
	int rc;
	const int i = lookup(info, key, flag, &o, &rc, __func__);
	if (rc)
		return rc;
	if (!valuelen)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL valuelen");
	if (i >= 0)
		*valuelen = (int)strlen(o->kv[i].val);
	return MPI_SUCCESS;
}

int MPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
	int rc;
	const struct info *o = info_arg(info, __func__, &rc);
	if (!o)
		return rc;
	if (!nkeys)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL nkeys");
	*nkeys = o->n;
	return MPI_SUCCESS;
}

int MPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
	int rc;
	const struct info *o = info_arg(info, __func__, &rc);
	if (!o)
		return rc;
	if (n < 0 || n >= o->n || !key)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__,
		                    key ? "key %d of an info object of %d keys" : "NULL key", n, o->n);
	snprintf(key, MPI_MAX_INFO_KEY, "%s", o->kv[n].key);
	return MPI_SUCCESS;
}

int MPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
	int rc;
	if (!info_arg(info, __func__, &rc))
		return rc;
	if (!newinfo)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL newinfo");
	return tcmpi__info_merge(MPI_COMM_NULL, MPI_INFO_NULL, info, newinfo, __func__);
}

int MPI_Info_free(MPI_Info *info)
{
	if (!info)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL info");
	int rc;
	if (!info_arg(*info, __func__, &rc))
		return rc;
	if ((rc = writable(*info, __func__)))
		return rc;
	tcmpi__info_drop(info);
	return MPI_SUCCESS;
}

int tcmpi__info_arg(MPI_Comm comm, MPI_Info info, const char *fn)
{
	if (info == MPI_INFO_NULL || info_of(info))
		return MPI_SUCCESS;
	return tcmpi__error(comm, MPI_ERR_INFO, fn, "invalid info object %d", (int)info);
}

int tcmpi__info_merge(MPI_Comm comm, MPI_Info to, MPI_Info from, MPI_Info *out, const char *fn)
{
	MPI_Info h = info_new();
	if (h == MPI_INFO_NULL)
		return tcmpi__error(comm, MPI_ERR_NO_MEM, fn, "out of memory for an info object");
	/* The table may have moved: the sources are looked up after. */
	const MPI_Info src[2] = {to, from};
	for (int s = 0; s < 2; s++) {
		const struct info *o = src[s] == MPI_INFO_NULL ? NULL : info_of(src[s]);
		for (int i = 0; o && i < o->n; i++)
			if (info_put(&infos[h], o->kv[i].key, o->kv[i].val)) {
				tcmpi__info_drop(&h);
				return tcmpi__error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
			}
	}
	*out = h;
	return MPI_SUCCESS;
}

void tcmpi__info_drop(MPI_Info *info)
{
	if (*info > MPI_INFO_ENV && *info < ninfos)
		info_clear(&infos[*info]);
	*info = MPI_INFO_NULL;
}

/* The communicator's hints are updated by info's: hints set before and not
 * named again stay. */
int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
	struct tcmpi__comm *c;
	int rc = tcmpi__comm_arg(comm, __func__, &c);
	if (rc)
		return rc;
	if (info == MPI_INFO_NULL)
		return tcmpi__error(comm, MPI_ERR_INFO, __func__, "MPI_INFO_NULL is no info object");
	if ((rc = tcmpi__info_arg(comm, info, __func__)))
		return rc;
	MPI_Info h;
	if ((rc = tcmpi__info_merge(comm, c->hints, info, &h, __func__)))
		return rc;
	tcmpi__info_drop(&c->hints);
	c->hints = h;
	return MPI_SUCCESS;
}

/* A new info object of the communicator's hints, which the program
 * frees. */
int MPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
	struct tcmpi__comm *c;
	int rc = tcmpi__comm_arg(comm, __func__, &c);
	if (rc)
		return rc;
	if (!info_used)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL info_used");
	return tcmpi__info_merge(comm, MPI_INFO_NULL, c->hints, info_used, __func__);
}

MPI_Fint MPI_Info_c2f(MPI_Info info)
{
	return (MPI_Fint)info;
}

/* An invalid Fortran handle converts to the null handle. */
MPI_Info MPI_Info_f2c(MPI_Fint info)
{
	return info_of((MPI_Info)info) ? (MPI_Info)info : MPI_INFO_NULL;
}
