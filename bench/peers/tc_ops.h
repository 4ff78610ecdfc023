/* SPDX-License-Identifier: MIT */
/*
 * bench/peers/tc_ops.h - n operations of a peers case through topocoll's
 * API, shared by the two peers that run topocoll: on a team of threads or
 * fibres (ours.c) and on a team over MPI processes (mpi.c with
 * PEERS_OURS_MPI).  Include after peers.h and topocoll.h.
 */
#ifndef PEERS_TC_OPS_H
#define PEERS_TC_OPS_H

/* Case c's operation n times on proc (rank me) with the collective options
 * opts (NULL: AUTO): 0 or the first error. */
static int pr_tc_ops(struct tc_proc *proc, int me, const struct pr_case *c, long n, void *buf,
                     const void *in, void *out, void *rbuf, const struct tc_coll_opts *opts)
{
	int err = 0;
	size_t count = c->bytes / sizeof(double);
	for (long i = 0; i < n && !err; i++) {
		if (pr_write_inputs)
			pr_write_input(c, tc_size(proc), me, buf, (double *)(uintptr_t)in);
		switch (c->kind) {
		case PR_BARRIER:
			err = tc_barrier(proc, opts);
			break;
		case PR_BCAST:
			err = tc_bcast(proc, buf, c->bytes, TC_BYTE, 0, opts);
			break;
		case PR_ALLREDUCE:
			err = tc_allreduce(proc, in, out, count, TC_DOUBLE, TC_OP_SUM, opts);
			break;
		case PR_ALLGATHER:
			err = tc_allgather(proc, buf, rbuf, c->bytes, TC_BYTE, opts);
			break;
		case PR_ALLTOALL:
			err = tc_alltoall(proc, buf, rbuf, c->bytes, TC_BYTE, opts);
			break;
		case PR_LATENCY:
		case PR_BANDWIDTH:
			if (me == 0) {
				err = tc_send(proc, 1, buf, c->bytes);
				if (!err)
					err = tc_recv(proc, 1, buf, c->bytes, NULL);
			} else if (me == 1) {
				err = tc_recv(proc, 0, buf, c->bytes, NULL);
				if (!err)
					err = tc_send(proc, 0, buf, c->bytes);
			}
			break;
		}
	}
	return err;
}

#endif /* PEERS_TC_OPS_H */
