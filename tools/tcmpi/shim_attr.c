/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_attr.c - attribute caching on communicators: keys
 * (MPI_Comm_create_keyval, MPI_Comm_free_keyval), values
 * (MPI_Comm_set_attr, get_attr, delete_attr), their copy and delete
 * callbacks, the deprecated forms (MPI_Keyval_create, Keyval_free,
 * Attr_put, Attr_get, Attr_delete) and the predefined attributes.
 *
 * A key (keyval) is an index into the table below: 1 .. 7 are MPI's
 * predefined keys (mpi.h), user keys start at FIRST_KEY.  A key lives while
 * the program holds it or a value of it is attached to a communicator:
 * MPI_Comm_free_keyval sets the program's handle to MPI_KEYVAL_INVALID
 * and the key goes when its last value is deleted, as MPI says.  A
 * communicator keeps its values in a list, the last set first, so that
 * deleting them all from the head deletes them in the reverse order of
 * setting (MPI_Finalize's deletion of MPI_COMM_SELF's, which libraries
 * use for their clean-up, relies on it); a value set over another moves
 * to the head, as it is set last.  Every call is local: attributes
 * communicate nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "shim.h"

#define FIRST_KEY 16

struct key {
	int used;
	int held;   /* the program still holds the handle (not freed) */
	int values; /* values of this key attached to communicators */
	MPI_Comm_copy_attr_function *copy;
	MPI_Comm_delete_attr_function *del;
	void *extra;
};

struct tcmpi__attr {
	struct tcmpi__attr *next;
	int key;
	void *val;
};

static struct key *keys;
static int nkeys;

/* The predefined attributes' values: MPI gives the program a pointer to
 * each, so they live as long as the layer. */
static int tag_ub = TC_TAG_MAX;  /* topocoll's tags are 0 .. TC_TAG_MAX */
static int host = MPI_PROC_NULL; /* no host process is named */
static int io = MPI_ANY_SOURCE;  /* every rank has the C library's I/O */
static int wtime_is_global = 1;  /* one process, one clock, one origin */
static int universe_size;        /* the ranks tcmpirun started */
static int appnum;               /* one program */

static struct key *key_of(int k)
{
	return k >= FIRST_KEY && k < nkeys && keys[k].used ? &keys[k] : NULL;
}

static int predefined(int k)
{
	return k >= MPI_TAG_UB && k <= MPI_APPNUM;
}

/* One value fewer of key k: the key goes with its last value once freed. */
static void key_unref(int k)
{
	struct key *y = &keys[k];
	if (--y->values == 0 && !y->held)
		*y = (struct key){0};
}

int tcmpi_comm_dup_fn(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
	(void)comm;
	(void)keyval;
	(void)extra;
	*(void **)out = in;
	*flag = 1;
	return MPI_SUCCESS;
}

static int keyval_create(MPI_Comm_copy_attr_function *copy, MPI_Comm_delete_attr_function *del,
                         int *keyval, void *extra, const char *fn)
{
	int rc = tcmpi__check_init(fn);
	if (rc)
		return rc;
	if (!keyval)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "NULL keyval");
	int k = FIRST_KEY;
	while (k < nkeys && keys[k].used)
		k++;
	if (k >= nkeys) {
		int n = nkeys ? 2 * nkeys : 2 * FIRST_KEY;
		struct key *g = realloc(keys, (size_t)n * sizeof *g);
		if (!g)
			return tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, fn, "out of memory for a key");
		memset(g + nkeys, 0, (size_t)(n - nkeys) * sizeof *g);
		keys = g;
		nkeys = n;
	}
	keys[k] = (struct key){.used = 1, .held = 1, .copy = copy, .del = del, .extra = extra};
	*keyval = k;
	return MPI_SUCCESS;
}

static int keyval_free(int *keyval, const char *fn)
{
	int rc = tcmpi__check_init(fn);
	if (rc)
		return rc;
	if (!keyval)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "NULL keyval");
	if (predefined(*keyval))
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_KEYVAL, fn,
		                    "key %d is predefined and cannot be freed", *keyval);
	struct key *y = key_of(*keyval);
	if (!y || !y->held)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_KEYVAL, fn, "invalid key %d", *keyval);
	y->held = 0;
	if (!y->values)
		*y = (struct key){0};
	*keyval = MPI_KEYVAL_INVALID;
	return MPI_SUCCESS;
}

/* The attribute of key k on c, and the link that points to it. */
static struct tcmpi__attr **attr_link(struct tcmpi__comm *c, int k)
{
	struct tcmpi__attr **l = &c->attrs;
	while (*l && (*l)->key != k)
		l = &(*l)->next;
	return l;
}

/* Calls the delete callback of value a on comm and, when it succeeds,
 * removes the value.  The callback may set or delete other
 * attributes of comm, so the value is looked for again after it. */
static int attr_delete(MPI_Comm comm, struct tcmpi__comm *c, struct tcmpi__attr *a, const char *fn)
{
	const int k = a->key;
	const struct key *y = &keys[k];
	if (y->del) {
		int rc = y->del(comm, k, a->val, y->extra);
		if (rc != MPI_SUCCESS)
			return tcmpi__error(comm, rc, fn,
			                    "the delete callback of key %d returned error %d", k, rc);
	}
	struct tcmpi__attr **l = attr_link(c, k);
	if (*l == a) {
		*l = a->next;
		free(a);
		key_unref(k);
	}
	return MPI_SUCCESS;
}

/* The prologue of a call on comm's attribute of key k: c and the key's
 * record, or the error. */
static int attr_args(MPI_Comm comm, int k, const char *fn, struct tcmpi__comm **c)
{
	int rc = tcmpi__comm_arg(comm, fn, c);
	if (rc)
		return rc;
	if (predefined(k))
		return tcmpi__error(comm, MPI_ERR_KEYVAL, fn,
		                    "key %d is predefined: its value cannot be set or deleted", k);
	const struct key *y = key_of(k);
	if (!y || !y->held)
		return tcmpi__error(comm, MPI_ERR_KEYVAL, fn, "invalid key %d", k);
	return MPI_SUCCESS;
}

static int set_attr(MPI_Comm comm, int k, void *val, const char *fn)
{
	struct tcmpi__comm *c;
	int rc = attr_args(comm, k, fn, &c);
	if (rc)
		return rc;
	struct tcmpi__attr *a = *attr_link(c, k);
	if (a) {
		/* The old value is deleted first: if its callback fails, it
		 * stays. */
		const struct key *y = &keys[k];
		if (y->del && (rc = y->del(comm, k, a->val, y->extra)) != MPI_SUCCESS)
			return tcmpi__error(comm, rc, fn,
			                    "the delete callback of key %d returned error %d", k, rc);
		struct tcmpi__attr **l = attr_link(c, k);
		if (*l == a)
			*l = a->next;
		else
			a = NULL; /* the callback deleted it */
	}
	if (!a) {
		if (!(a = malloc(sizeof *a)))
			return tcmpi__error(comm, MPI_ERR_NO_MEM, fn, "out of memory for an attribute");
		keys[k].values++;
	}
	a->key = k;
	a->val = val;
	a->next = c->attrs;
	c->attrs = a;
	return MPI_SUCCESS;
}

static int get_attr(MPI_Comm comm, int k, void *val, int *flag, const char *fn)
{
	struct tcmpi__comm *c;
	int rc = tcmpi__comm_arg(comm, fn, &c);
	if (rc)
		return rc;
	if (!val || !flag)
		return tcmpi__error(comm, MPI_ERR_ARG, fn, "NULL attribute_val or flag");
	*flag = 0;
	if (predefined(k)) {
		static int *const v[] = {
		        [MPI_TAG_UB] = &tag_ub,
		        [MPI_HOST] = &host,
		        [MPI_IO] = &io,
		        [MPI_WTIME_IS_GLOBAL] = &wtime_is_global,
		        [MPI_UNIVERSE_SIZE] = &universe_size,
		        [MPI_LASTUSEDCODE] = &tcmpi__lastusedcode,
		        [MPI_APPNUM] = &appnum,
		};
		universe_size = tc_size(tcmpi__self->proc);
		*(int **)val = v[k];
		*flag = 1;
		return MPI_SUCCESS;
	}
	const struct key *y = key_of(k);
	if (!y || !y->held)
		return tcmpi__error(comm, MPI_ERR_KEYVAL, fn, "invalid key %d", k);
	const struct tcmpi__attr *a = *attr_link(c, k);
	if (a) {
		*(void **)val = a->val;
		*flag = 1;
	}
	return MPI_SUCCESS;
}

static int delete_attr(MPI_Comm comm, int k, const char *fn)
{
	struct tcmpi__comm *c;
	int rc = attr_args(comm, k, fn, &c);
	if (rc)
		return rc;
	/* A key without a value on comm has nothing to delete (not an error
	 * in MPI). */
	struct tcmpi__attr *a = *attr_link(c, k);
	return a ? attr_delete(comm, c, a, fn) : MPI_SUCCESS;
}

int tcmpi__attrs_copy(MPI_Comm from, MPI_Comm to, const char *fn)
{
	struct tcmpi__comm *f = tcmpi__comm(from), *t = tcmpi__comm(to);
	struct tcmpi__attr **tail = &t->attrs;
	/* The copies keep the original's order, the last set first. */
	for (const struct tcmpi__attr *a = f->attrs; a; a = a->next) {
		const struct key *y = &keys[a->key];
		void *val = NULL;
		int flag = 0;
		if (!y->copy)
			continue;
		int rc = y->copy(from, a->key, y->extra, a->val, &val, &flag);
		if (rc != MPI_SUCCESS) {
			/* Those copied are deleted again; the first error is
			 * the callback's. */
			(void)tcmpi__attrs_delete(to, fn);
			return tcmpi__error(from, rc, fn, "the copy callback of key %d returned error %d",
			                    a->key, rc);
		}
		if (!flag)
			continue;
		struct tcmpi__attr *n = malloc(sizeof *n);
		if (!n) {
			(void)tcmpi__attrs_delete(to, fn);
			return tcmpi__error(from, MPI_ERR_NO_MEM, fn, "out of memory for an attribute");
		}
		*n = (struct tcmpi__attr){.key = a->key, .val = val};
		keys[a->key].values++;
		*tail = n;
		tail = &n->next;
	}
	return MPI_SUCCESS;
}

int tcmpi__attrs_delete(MPI_Comm comm, const char *fn)
{
	struct tcmpi__comm *c = tcmpi__comm(comm);
	while (c && c->attrs) {
		int rc = attr_delete(comm, c, c->attrs, fn);
		if (rc)
			return rc;
	}
	return MPI_SUCCESS;
}

int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                           MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                           void *extra_state)
{
	return keyval_create(comm_copy_attr_fn, comm_delete_attr_fn, comm_keyval, extra_state, __func__);
}

int MPI_Comm_free_keyval(int *comm_keyval)
{
	return keyval_free(comm_keyval, __func__);
}

int MPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
	return set_attr(comm, comm_keyval, attribute_val, __func__);
}

int MPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag)
{
	return get_attr(comm, comm_keyval, attribute_val, flag, __func__);
}

int MPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
	return delete_attr(comm, comm_keyval, __func__);
}

/* The deprecated forms: the same keys and values (MPI's C callbacks of
 * both kinds have one signature). */
int MPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                      void *extra_state)
{
	return keyval_create(copy_fn, delete_fn, keyval, extra_state, __func__);
}

int MPI_Keyval_free(int *keyval)
{
	return keyval_free(keyval, __func__);
}

int MPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
	return set_attr(comm, keyval, attribute_val, __func__);
}

int MPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
	return get_attr(comm, keyval, attribute_val, flag, __func__);
}

int MPI_Attr_delete(MPI_Comm comm, int keyval)
{
	return delete_attr(comm, keyval, __func__);
}
