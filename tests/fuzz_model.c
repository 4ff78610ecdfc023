/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz_model.c - libFuzzer target for the model parameters: the tool's
 * model options (cli_model_opt: --ts --tw --th --tc --mu --ports --duplex
 * --switching --combining --packets, as an argument vector from the input,
 * one argument per line) and tc_model_check.  What the tool accepts the
 * library must take (tc_model_check 0) and predict: a broadcast and an
 * allreduce of a size from the input (1 B .. 4 GiB) on ring:5, hypercube:3 and torus:3x3
 * return 0, or TC_ELIMIT/TC_EOVERFLOW with times that large; never a
 * crash, an overflow (UBSan) or a negative time.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../tools/cli.h"
#include "fuzz_argv.h"
#include "topocoll.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	const uint64_t bytes = (uint64_t)1 << (data[0] % 33); /* 1 B .. 4 GiB (fuzz_call goes beyond 2^48) */
	char *argv[FUZZ_MAXARGS + 1], *buf;
	int argc = fuzz_argv(data + 1, size - 1, argv, &buf);
	if (!buf)
		return 0;
	struct cli_model m;
	cli_model_init(&m);
	int ok = 1;
	for (int i = 0; i < argc && ok; i++) {
		int r = cli_model_opt(argc, argv, &i, &m);
		ok = r == 1;
	}
	if (ok) {
		if (tc_model_check(&m.md))
			abort(); /* the tool accepted a model the library refuses */
		static const char *const specs[] = {"ring:5", "hypercube:3", "torus:3x3"};
		for (int k = 0; k < 3; k++) {
			struct tc_topo *t;
			if (tc_topo_parse(specs[k], &t))
				abort();
			static const enum tc_coll colls[] = {TC_COLL_BCAST, TC_COLL_ALLREDUCE};
			for (int c = 0; c < 2; c++) {
				struct tc_call call = {.coll = colls[c],
				                       .bytes = (size_t)bytes,
				                       .esize = 1,
				                       .packets = m.packets};
				struct tc_prediction pr;
				int err = tc_predict_call(t, &m.md, &call, &pr);
				if (err && err != TC_ELIMIT && err != TC_EOVERFLOW && err != TC_ENOTSUP)
					abort();
				if (!err && pr.modelled_ps < 0)
					abort();
			}
			tc_topo_destroy(t);
		}
	}
	free(buf);
	return 0;
}
