/* SPDX-License-Identifier: MIT */
/*
 * mpi_info.c - info objects and the calls that take them.
 *
 * Keys set, replaced, deleted and listed in order; values read back by
 * MPI_Info_get (cut to valuelen), MPI_Info_get_string (cut to the buffer,
 * the full length returned, a buffer of 0) and MPI_Info_get_valuelen; a
 * key not set (flag 0, buffers untouched); a duplicate independent of its
 * original both ways; the longest key and value accepted, longer ones
 * refused; MPI_INFO_ENV and MPI_Info_create_env (the command and the
 * ranks started); every error class under MPI_ERRORS_RETURN.  A
 * communicator's hints: kept and returned by MPI_Comm_get_info, copied by
 * MPI_Comm_dup, replaced by MPI_Comm_dup_with_info's; MPI_Comm_idup and
 * MPI_Comm_idup_with_info completed by MPI_Wait, their communicators
 * used for a reduction and their attributes copied; an info object
 * accepted (and a freed one refused) by MPI_Comm_split_type,
 * MPI_Dist_graph_create_adjacent and MPI_Barrier_init.  Written against
 * MPI alone: but for what is marked TCMPI or MPI 4, it runs the same
 * under Open MPI 4.1.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#if MPI_VERSION >= 4
#define MPI4 1
#endif

static int eclass(int rc)
{
	int c = -1;
	MPI_Error_class(rc, &c);
	return c;
}

/* Whether info holds key with value want (NULL: holds no key). */
static int has(MPI_Info info, const char *key, const char *want)
{
	char v[MPI_MAX_INFO_VAL + 1];
	int flag = 0;
	MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag);
	return want ? flag && strcmp(v, want) == 0 : !flag;
}

static void objects(void)
{
	MPI_Info info, copy;
	char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
	int n = -1, flag = -1, len = -1;
	MPI_Info_create(&info);
	MPI_Info_get_nkeys(info, &n);
	CHECK(n == 0, "a new info object has %d keys", n);
	MPI_Info_set(info, "alpha", "1");
	MPI_Info_set(info, "beta", "two");
	MPI_Info_set(info, "gamma", "three 3");
	MPI_Info_set(info, "beta", "second value"); /* replaced in place */
	MPI_Info_get_nkeys(info, &n);
	CHECK(n == 3, "nkeys %d, want 3", n);
	const char *order[] = {"alpha", "beta", "gamma"};
	for (int i = 0; i < 3 && n == 3; i++) {
		MPI_Info_get_nthkey(info, i, key);
		CHECK(strcmp(key, order[i]) == 0, "key %d is \"%s\", want \"%s\"", i, key, order[i]);
	}
	CHECK(has(info, "beta", "second value"), "beta's value not replaced");
	MPI_Info_get_valuelen(info, "gamma", &len, &flag);
	CHECK(flag && len == 7, "valuelen of gamma: %d %d", flag, len);

	/* MPI_Info_get cuts to valuelen characters and a null. */
	memset(val, 'x', sizeof val);
	MPI_Info_get(info, "gamma", 3, val, &flag);
	CHECK(flag && strcmp(val, "thr") == 0 && val[4] == 'x', "cut value \"%s\"", val);
	/* A key not set: flag 0, buffers untouched. */
	memset(val, 'x', sizeof val);
	len = 99;
	MPI_Info_get(info, "delta", MPI_MAX_INFO_VAL, val, &flag);
	CHECK(!flag && val[0] == 'x', "delta found");
	MPI_Info_get_valuelen(info, "delta", &len, &flag);
	CHECK(!flag && len == 99, "delta's valuelen: %d %d", flag, len);
#ifdef MPI4
	/* MPI_Info_get_string: the length with its null, the value cut to
	 * the buffer. */
	int buflen = sizeof val;
	MPI_Info_get_string(info, "beta", &buflen, val, &flag);
	CHECK(flag && buflen == 13 && strcmp(val, "second value") == 0, "get_string: %d \"%s\"",
	      buflen, val);
	buflen = 4;
	memset(val, 'x', sizeof val);
	MPI_Info_get_string(info, "beta", &buflen, val, &flag);
	CHECK(flag && buflen == 13 && strcmp(val, "sec") == 0, "get_string cut: %d \"%s\"", buflen, val);
	buflen = 0;
	MPI_Info_get_string(info, "alpha", &buflen, NULL, &flag);
	CHECK(flag && buflen == 2, "get_string's length alone: %d", buflen);
	buflen = 5;
	MPI_Info_get_string(info, "delta", &buflen, val, &flag);
	CHECK(!flag && buflen == 5, "get_string of no key: %d %d", flag, buflen);
#endif

	/* A duplicate is independent both ways. */
	MPI_Info_dup(info, &copy);
	MPI_Info_get_nkeys(copy, &n);
	CHECK(n == 3 && has(copy, "alpha", "1") && has(copy, "gamma", "three 3"), "dup: %d keys", n);
	MPI_Info_get_nthkey(copy, 1, key);
	CHECK(strcmp(key, "beta") == 0, "dup's key 1 is %s", key);
	MPI_Info_set(copy, "alpha", "changed");
	MPI_Info_set(copy, "epsilon", "new");
	MPI_Info_delete(info, "gamma");
	CHECK(has(info, "alpha", "1") && has(info, "epsilon", NULL), "the original changed");
	CHECK(has(copy, "gamma", "three 3") && has(copy, "epsilon", "new"), "the copy changed");
	MPI_Info_get_nkeys(info, &n);
	CHECK(n == 2, "after a delete: %d keys", n);
	MPI_Info_get_nthkey(info, 1, key);
	CHECK(strcmp(key, "beta") == 0, "after a delete, key 1 is %s", key);
	MPI_Info_free(&copy);
	CHECK(copy == MPI_INFO_NULL, "a freed info is not MPI_INFO_NULL");

	/* The longest key and value; longer ones refused. */
	memset(key, 'k', sizeof key);
	key[MPI_MAX_INFO_KEY - 1] = 0;
	memset(val, 'v', sizeof val);
	val[MPI_MAX_INFO_VAL - 1] = 0;
	int rc = MPI_Info_set(info, key, val);
	CHECK(rc == MPI_SUCCESS, "the longest key and value: rc %d", rc);
	MPI_Info_get_valuelen(info, key, &len, &flag);
	CHECK(flag && len == MPI_MAX_INFO_VAL - 1, "the longest value's length %d", len);
	key[MPI_MAX_INFO_KEY - 1] = 'k';
	key[MPI_MAX_INFO_KEY] = 0;
	rc = MPI_Info_set(info, key, "x");
	CHECK(eclass(rc) == MPI_ERR_INFO_KEY, "too long a key: class %d", eclass(rc));
	val[MPI_MAX_INFO_VAL - 1] = 'v';
	val[MPI_MAX_INFO_VAL] = 0;
	rc = MPI_Info_set(info, "k", val);
	CHECK(eclass(rc) == MPI_ERR_INFO_VALUE, "too long a value: class %d", eclass(rc));
	rc = MPI_Info_delete(info, "no such key");
	CHECK(eclass(rc) == MPI_ERR_INFO_NOKEY, "delete of no key: class %d", eclass(rc));
#ifdef TCMPI
	rc = MPI_Info_set(info, "", "x");
	CHECK(eclass(rc) == MPI_ERR_INFO_KEY, "empty key: class %d", eclass(rc));
	rc = MPI_Info_get(info, NULL, 5, val, &flag);
	CHECK(eclass(rc) == MPI_ERR_INFO_KEY, "NULL key: class %d", eclass(rc));
	rc = MPI_Info_get(info, "alpha", -1, val, &flag);
	CHECK(eclass(rc) == MPI_ERR_ARG, "negative valuelen: class %d", eclass(rc));
	rc = MPI_Info_get_nthkey(info, 99, key);
	CHECK(eclass(rc) == MPI_ERR_ARG, "key 99: class %d", eclass(rc));
	MPI_Info gone = info;
	MPI_Info_free(&info);
	rc = MPI_Info_set(gone, "a", "b");
	CHECK(eclass(rc) == MPI_ERR_INFO, "a freed info: class %d", eclass(rc));
	rc = MPI_Info_get_nkeys(MPI_INFO_NULL, &n);
	CHECK(eclass(rc) == MPI_ERR_INFO, "MPI_INFO_NULL: class %d", eclass(rc));
	MPI_Info env = MPI_INFO_ENV;
	rc = MPI_Info_free(&env);
	CHECK(eclass(rc) == MPI_ERR_INFO, "freeing MPI_INFO_ENV: class %d", eclass(rc));
	rc = MPI_Info_set(MPI_INFO_ENV, "a", "b");
	CHECK(eclass(rc) == MPI_ERR_INFO, "changing MPI_INFO_ENV: class %d", eclass(rc));
	CHECK(MPI_Info_f2c(MPI_Info_c2f(gone)) == MPI_INFO_NULL, "a freed handle converts");
	MPI_Info_create(&info);
	CHECK(MPI_Info_f2c(MPI_Info_c2f(info)) == info, "a handle does not convert back");
#endif
	MPI_Info_free(&info);
}

static void environment(int argc, char **argv)
{
	int n = -1;
	MPI_Info_get_nkeys(MPI_INFO_ENV, &n);
	CHECK(n >= 0, "MPI_INFO_ENV: %d keys", n);
#ifdef TCMPI
	char v[32];
	snprintf(v, sizeof v, "%d", size);
	CHECK(has(MPI_INFO_ENV, "command", argv[0]), "MPI_INFO_ENV's command is not argv[0]");
	CHECK(has(MPI_INFO_ENV, "maxprocs", v), "MPI_INFO_ENV's maxprocs is not %d", size);
	/* The arguments joined by spaces; none: no key. */
	char args[256] = "";
	for (int i = 1; i < argc; i++)
		snprintf(args + strlen(args), sizeof args - strlen(args), "%s%s", i > 1 ? " " : "",
		         argv[i]);
	CHECK(has(MPI_INFO_ENV, "argv", argc > 1 ? args : NULL),
	      "MPI_INFO_ENV's argv is not the arguments");
#endif
#ifdef MPI4
	MPI_Info e;
	char *cargs[] = {"prog", "x", "y z", NULL};
	MPI_Info_create_env(3, cargs, &e);
	CHECK(has(e, "command", "prog") && has(e, "argv", "x y z"),
	      "MPI_Info_create_env: command or argv");
	MPI_Info_set(e, "mine", "1");
	CHECK(has(e, "mine", "1") && has(MPI_INFO_ENV, "mine", NULL), "MPI_Info_create_env's info");
	MPI_Info_free(&e);
#endif
	(void)argc, (void)argv;
}

/* A key copied by duplicates, to see that the nonblocking forms copy. */
static int idup_key, idup_val = 7;

static void hints(void)
{
	MPI_Comm d, d2, d3;
	MPI_Info info, used;
	MPI_Comm_dup(MPI_COMM_WORLD, &d);
	MPI_Info_create(&info);
	MPI_Info_set(info, "tcmpi_test_hint", "yes");
	MPI_Info_set(info, "mpi_assert_no_any_tag", "false");
	MPI_Comm_set_info(d, info);
	MPI_Info_free(&info);
	MPI_Comm_get_info(d, &used);
#ifdef TCMPI
	/* Hints the layer does not use are kept, as MPI allows. */
	CHECK(has(used, "tcmpi_test_hint", "yes") && has(used, "mpi_assert_no_any_tag", "false"),
	      "MPI_Comm_get_info lost a hint");
#endif
	MPI_Info_free(&used);
	MPI_Comm_dup(d, &d2);
	MPI_Comm_get_info(d2, &used);
#ifdef TCMPI
	CHECK(has(used, "tcmpi_test_hint", "yes"), "MPI_Comm_dup did not copy the hints");
#endif
	MPI_Info_free(&used);
	MPI_Info_create(&info);
	MPI_Info_set(info, "other_hint", "1");
	MPI_Comm_dup_with_info(d, info, &d3);
	MPI_Comm_get_info(d3, &used);
#ifdef TCMPI
	CHECK(has(used, "other_hint", "1") && has(used, "tcmpi_test_hint", NULL),
	      "MPI_Comm_dup_with_info: the hints are not info's alone");
#endif
	MPI_Info_free(&used);
	int cmp = -1;
	MPI_Comm_compare(d3, MPI_COMM_WORLD, &cmp);
	CHECK(cmp == MPI_CONGRUENT, "dup_with_info compares %d", cmp);
	MPI_Comm_free(&d3);
	MPI_Comm_free(&d2);

	/* The nonblocking duplicates: complete at the wait, usable, with
	 * the attributes copied. */
	MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &idup_key, NULL);
	MPI_Comm_set_attr(d, idup_key, &idup_val);
	MPI_Request req;
	MPI_Status st;
	MPI_Comm_idup(d, &d2, &req);
	st.MPI_SOURCE = st.MPI_TAG = 12345;
	MPI_Wait(&req, &st);
	CHECK(req == MPI_REQUEST_NULL, "MPI_Comm_idup's request not freed");
#ifdef TCMPI
	/* MPI leaves a completed collective's source and tag undefined; the
	 * layer gives every one MPI's empty status, also where it completed
	 * at the call. */
	CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
	      "MPI_Comm_idup's status: source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
	MPI_Ibarrier(MPI_COMM_SELF, &req);
	st.MPI_SOURCE = st.MPI_TAG = 12345;
	MPI_Wait(&req, &st);
	CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
	      "MPI_Ibarrier on MPI_COMM_SELF: status source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
#endif
	int one = 1, sum = 0, flag = 0;
	void *v = NULL;
	MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, d2);
	CHECK(sum == size, "allreduce on an idup: %d", sum);
	MPI_Comm_get_attr(d2, idup_key, &v, &flag);
	CHECK(flag && v == &idup_val, "MPI_Comm_idup did not copy the attribute");
	MPI_Comm_free(&d2);
#ifdef MPI4
	MPI_Comm_idup_with_info(d, info, &d2, &req);
	int done = 0;
	while (!done)
		MPI_Test(&req, &done, MPI_STATUS_IGNORE);
	sum = 0;
	MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, d2);
	CHECK(sum == size, "allreduce on an idup_with_info: %d", sum);
	MPI_Comm_get_attr(d2, idup_key, &v, &flag);
	CHECK(flag && v == &idup_val, "MPI_Comm_idup_with_info did not copy the attribute");
	MPI_Comm_get_info(d2, &used);
#ifdef TCMPI
	CHECK(has(used, "other_hint", "1"), "MPI_Comm_idup_with_info: hints not info's");
#endif
	MPI_Info_free(&used);
	MPI_Comm_free(&d2);
#endif
	MPI_Comm_free_keyval(&idup_key);
	MPI_Comm_free(&d);

	/* Calls with an info argument take an info object. */
	MPI_Comm s;
	int ssize = -1;
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, info, &s);
	MPI_Comm_size(s, &ssize);
	CHECK(ssize == size, "split_type with info: size %d", ssize);
	MPI_Comm_free(&s);
	int src = (rank + size - 1) % size, dst = (rank + 1) % size;
	MPI_Comm g;
	MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED, 1, &dst,
	                               MPI_UNWEIGHTED, info, 0, &g);
	int in = -1, out = -1, w = -1;
	MPI_Dist_graph_neighbors_count(g, &in, &out, &w);
	CHECK(in == 1 && out == 1, "graph with info: %d in, %d out", in, out);
	MPI_Comm_free(&g);
#ifdef MPI4
	MPI_Barrier_init(MPI_COMM_WORLD, info, &req);
	MPI_Start(&req);
	MPI_Wait(&req, MPI_STATUS_IGNORE);
	MPI_Request_free(&req);
#endif
#ifdef TCMPI
	MPI_Info gone = info;
	MPI_Info_free(&info);
	int rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, gone, &s);
	CHECK(eclass(rc) == MPI_ERR_INFO, "split_type with a freed info: class %d", eclass(rc));
	rc = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED, 1, &dst,
	                                    MPI_UNWEIGHTED, gone, 0, &g);
	CHECK(eclass(rc) == MPI_ERR_INFO, "graph with a freed info: class %d", eclass(rc));
	rc = MPI_Barrier_init(MPI_COMM_WORLD, gone, &req);
	CHECK(eclass(rc) == MPI_ERR_INFO, "MPI_Barrier_init with a freed info: class %d", eclass(rc));
	rc = MPI_Comm_dup_with_info(MPI_COMM_WORLD, gone, &d);
	CHECK(eclass(rc) == MPI_ERR_INFO, "dup_with_info with a freed info: class %d", eclass(rc));
	rc = MPI_Comm_set_info(MPI_COMM_WORLD, gone);
	CHECK(eclass(rc) == MPI_ERR_INFO, "set_info with a freed info: class %d", eclass(rc));
	rc = MPI_Comm_idup(MPI_COMM_WORLD, &d, NULL);
	CHECK(eclass(rc) == MPI_ERR_REQUEST, "idup without a request: class %d", eclass(rc));
#else
	MPI_Info_free(&info);
#endif
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	objects();
	environment(argc, argv);
	hints();
	MPI_Finalize();
	if (rank == 0 && !fails)
		printf("mpi_info: p = %d: ok\n", size);
	return fails != 0;
}
