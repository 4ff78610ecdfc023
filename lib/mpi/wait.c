/* SPDX-License-Identifier: MIT */
/*
 * lib/mpi/wait.c - the waits of a call over MPI (lib/mpi/exec.c runs its
 * rounds, lib/mpi/nbc.c its nonblocking form): polling the round's
 * requests, checking each message that arrives against the call (its
 * size, its header), sending forwarded transfers on, the probe for
 * another call's message, the timeout's report, and the abort that tells
 * every other process of a failed call.
 */
#include "mpi/engine.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error_detail.h"
#include "sched/sched.h"

void tc__mpi_abort(struct tc_team *team, int code)
{
	struct tc__mpi *m = team->engine;
	/* Relaxed: only this thread uses a team over MPI. */
	atomic_store_explicit(&team->aborted, 1, memory_order_relaxed);
	if (m->sent || m->told)
		return;
	m->sent = 1;
	m->abort_buf = code;
	for (int r = 0; r < m->size; r++) {
		if (r == m->rank)
			continue;
		MPI_Request q;
		if (MPI_Isend(&m->abort_buf, 1, MPI_INT, r, TC__MPI_TAG_ABORT, m->comm, &q) ==
		    MPI_SUCCESS) {
			if (m->nabort < (int)(sizeof m->abort_req / sizeof m->abort_req[0]))
				m->abort_req[m->nabort++] = q;
			else
				MPI_Request_free(&q);
		}
	}
}

/* A look, while waiting: an abort from another process, or a message of
 * another call from a process whose message this one still waits for (its
 * message of this round would have been taken first, MPI matching in
 * order: the peer made another call).  Returns 0 or the error. */
int tc__mpi_take_abort(struct tc__mpi *m)
{
	int flag = 0;
	MPI_Status st;
	MPI_Iprobe(MPI_ANY_SOURCE, TC__MPI_TAG_ABORT, m->comm, &flag, &st);
	if (!flag)
		return 0;
	int code = TC_EABORTED;
	MPI_Recv(&code, 1, MPI_INT, st.MPI_SOURCE, TC__MPI_TAG_ABORT, m->comm, MPI_STATUS_IGNORE);
	m->told = 1;
	tc__set_detail("process %d failed its call (%s): this call is abandoned", st.MPI_SOURCE,
	               tc_strerror(code));
	return code ? code : TC_EABORTED;
}

/* Whether a message from process src with tag `tag` is one that this call
 * (plan pl, number seq) still receives from src: a transfer of a round
 * after the current one (its items from `cur` on), or of this round not
 * yet complete. */
static int tc__mpi_expected(const struct tc__mplan *pl, const struct tc__mitem *it, int n,
                            uint64_t seq, int src, int tag)
{
	const int cur = (int)(it - pl->it);
	for (int j = cur; j < pl->nit; j++) {
		const struct tc__mitem *y = &pl->it[j];
		if (y->kind != TC__MIT_SEND && y->from == src && (j >= cur + n || y->open) &&
		    tc__mpi_tag(seq, y->xi) == tag)
			return 1;
	}
	return 0;
}

int tc__mpi_probe(struct tc__mpi *m, const struct tc__mplan *pl, struct tc__mitem *it, int n, uint64_t seq)
{
	int flag = 0;
	MPI_Status st;
	int code = tc__mpi_take_abort(m);
	if (code)
		return code == TC_EMISMATCH ? TC_EMISMATCH : TC_EABORTED;
	for (int i = 0; i < n; i++) {
		if (!it[i].open)
			continue;
		MPI_Iprobe(it[i].from, MPI_ANY_TAG, m->comm, &flag, &st);
		if (!flag || st.MPI_TAG == TC__MPI_TAG_ABORT)
			continue;
		/* A later transfer of this call from the same process: it
		 * matches in order behind the one still arriving (a large
		 * message that needs its sender's progress, the sender off
		 * its CPU), not another call. */
		if (tc__mpi_expected(pl, it, n, seq, it[i].from, st.MPI_TAG))
			continue;
		/* The probe's progress may have just completed our receive
		 * (MPI_Testsome has not said so yet); and a message matched
		 * but still arriving may complete later: only the same sight
		 * at two probes in a row, our receive still open, counts. */
		int done = 1;
		for (int k = 0; k < it[i].npk && done; k++)
			MPI_Request_get_status(m->req[it[i].rq + k], &done, MPI_STATUS_IGNORE);
		if (done)
			continue;
		if (!it[i].suspect) {
			it[i].suspect = 1;
			continue;
		}
		tc__set_detail("process %d sent a message of another collective call "
		               "(tag %d) while this one waits for its transfer %d",
		               it[i].from, st.MPI_TAG, it[i].xi);
		return TC_EMISMATCH;
	}
	return TC_OK;
}

int tc__mpi_check(const struct tc__mitem *it, const MPI_Status *st, const unsigned char *stage,
                  size_t want, int hdr, uint64_t sig, uint64_t seq)
{
	int cnt = -1;
	MPI_Get_count(st, MPI_BYTE, &cnt);
	if (cnt < 0 || (size_t)cnt != want) {
		tc__set_detail("transfer %d from process %d: %d bytes where %zu were expected "
		               "(another collective call, or other sizes)",
		               it->xi, it->from, cnt, want);
		return TC_EMISMATCH;
	}
	if (!hdr)
		return TC_OK; /* a packet after the first: data alone */
	struct tc__mpi_hdr h;
	memcpy(&h, stage + it->soff, sizeof h);
	if (h.sig != sig || h.seq != seq) {
		tc__set_detail("transfer %d from process %d belongs to another collective "
		               "call (call %llu, signature %016llx; this one: %llu, %016llx)",
		               it->xi, it->from, (unsigned long long)h.seq, (unsigned long long)h.sig,
		               (unsigned long long)seq, (unsigned long long)sig);
		return TC_EMISMATCH;
	}
	return TC_OK;
}

void tc__mpi_report(struct tc_proc *proc, const struct tc__mitem *it, int n, int r,
                    const struct tc__exec_io *io, uint64_t waited_ns)
{
	struct tc__mpi *m = proc->team->engine;
	char who[256];
	size_t k = 0;
	who[0] = '\0';
	for (int i = 0; i < n && k < sizeof who - 16; i++)
		if (it[i].open)
			k += (size_t)snprintf(who + k, sizeof who - k, "%s%d", k ? ", " : "", it[i].from);
	tc__set_detail("%s (%s) round %d: process %d on %s waited %llu ms for process(es) %s",
	               io->call ? io->call : "collective", io->alg ? io->alg : "-", r, m->rank,
	               m->host, (unsigned long long)(waited_ns / 1000000u), k ? who : "(sends)");
	if (proc->team->wd_fn)
		proc->team->wd_fn(proc->team->wd_arg, tc_error_detail());
	else
		fprintf(stderr, "topocoll: timeout: %s\n", tc_error_detail());
}

int tc__mpi_left(struct tc_proc *proc, const struct tc__mitem *it, int n, int lo, int hi, int *pending)
{
	const struct tc__mpi *m = proc->team->engine;
	int rleft = 0;
	for (int i = 0; i < n; i++)
		rleft += it[i].kind != TC__MIT_SEND && it[i].open;
	*pending = 0;
	for (int q = lo; q < hi; q++)
		*pending += m->req[q] != MPI_REQUEST_NULL;
	return rleft;
}

int tc__mpi_poll(struct tc_proc *proc, struct tc__mplan *pl, int lo, int hi, uint64_t sig,
                 uint64_t seq, int *rleft, int *pending, int *progress)
{
	struct tc__mpi *m = proc->team->engine;
	const struct tc__sched *s = pl->s;
	MPI_Status *st = (MPI_Status *)(void *)(m->idx + m->req_cap);
	{
		/* One MPI_Testsome per poll (one progress call).  A failed
		 * request (truncation: a mismatched call) is in its status;
		 * MPICH raises it on MPI_COMM_WORLD's handler rather than the
		 * team communicator's (docs/mpi.md). */
		int out = 0, rc;
		if (hi - lo == 1) {
			/* One request: MPI_Test, with its result as
			 * MPI_Testsome gives it. */
			rc = MPI_Test(&m->req[lo], &out, &st[0]);
			m->idx[0] = 0;
			if (rc != MPI_SUCCESS) {
				out = 1;
				st[0].MPI_ERROR = rc;
				rc = MPI_ERR_IN_STATUS;
			}
		} else {
			rc = MPI_Testsome(hi - lo, m->req + lo, &out, m->idx, st);
			if (out == MPI_UNDEFINED)
				out = 0;
		}
		if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
			tc__set_detail("MPI_Testsome failed (MPI error %d)", rc);
			return TC_ESYS;
		}
		for (int k = 0; k < out; k++) {
			const int q = lo + m->idx[k];
			struct tc__mitem *x = &pl->it[pl->rqi[q]];
			(*pending)--;
			if (rc != MPI_SUCCESS && st[k].MPI_ERROR != MPI_SUCCESS) {
				int cls = 0;
				MPI_Error_class(st[k].MPI_ERROR, &cls);
				tc__set_detail("transfer %d from process %d: %s", x->xi, x->from,
				               cls == MPI_ERR_TRUNCATE ? "longer than expected (another "
				                                         "collective call, or other sizes)"
				                                       : "MPI failed");
				return cls == MPI_ERR_TRUNCATE ? TC_EMISMATCH : TC_ESYS;
			}
			const int pk = q - x->rq;
			if (x->kind == TC__MIT_SEND || pk >= x->npk)
				continue; /* a send */
			const uint64_t bytes = s->x[x->xi].bytes;
			size_t off, len;
			tc__mpi_packet(x, bytes, pk, &off, &len);
			int err = tc__mpi_check(x, &st[k], m->stage, len, pk == 0, sig, seq);
			if (err)
				return err;
			if (pk == 0) {
				struct tc__mpi_hdr h;
				memcpy(&h, m->stage + x->soff, sizeof h);
				x->arrival = h.arrival;
			}
			if (--x->left == 0) {
				x->open = 0;
				(*rleft)--;
			}
		}
		/* Forwards: what arrived, unchanged, packet by packet in order
		 * (the next process's receives match them in that order), once
		 * every packet this poll completed has been checked. */
		for (int k = 0; k < out; k++) {
			const int q = lo + m->idx[k];
			struct tc__mitem *x = &pl->it[pl->rqi[q]];
			if (x->kind != TC__MIT_FWD)
				continue;
			const uint64_t bytes = s->x[x->xi].bytes;
			while (x->fwd < x->npk && m->req[x->rq + x->fwd] == MPI_REQUEST_NULL) {
				size_t off, len;
				tc__mpi_packet(x, bytes, x->fwd, &off, &len);
				if (MPI_Isend(m->stage + x->soff + off, (int)len, MPI_BYTE, x->to,
				              tc__mpi_tag(seq, x->xi), m->comm,
				              &m->req[x->rq + x->npk + x->fwd]) != MPI_SUCCESS)
					return TC_ESYS;
				(*pending)++;
				m->fwd_msgs++;
				if (x->fwd++ == 0)
					proc->stats.forwarded++;
			}
		}
		*progress = out;
	}
	return TC_OK;
}

/* Waits until the receives of round r (items it[0 .. n)) have completed,
 * and with all set until every request in [lo, hi) has, testing them all;
 * forwards as their messages arrive. */
int tc__mpi_wait(struct tc_proc *proc, struct tc__mplan *pl, struct tc__mitem *it, int n, int lo,
                 int hi, int all, int r, const struct tc__exec_io *io, uint64_t sig, uint64_t seq)
{
	struct tc__mpi *m = proc->team->engine;
	const uint64_t timeout = proc->team->timeout_cfg_ns;
	const uint64_t probe_ns = (uint64_t)m->probe_ms * 1000000u;
	uint64_t t0 = 0, last = 0, next_probe = 0;
	int idle = 0, spin = m->spin_ns > 0 && !proc->team->emulate;
	int pending = 0;
	int rleft = tc__mpi_left(proc, it, n, lo, hi, &pending);
	while (rleft > 0 || (all && pending > 0)) {
		int out = 0;
		int err = tc__mpi_poll(proc, pl, lo, hi, sig, seq, &rleft, &pending, &out);
		if (err)
			return err;
		if (out) {
			idle = 0;
			last = 0;
			spin = m->spin_ns > 0 && !proc->team->emulate;
			continue;
		}
		if (++idle < 64)
			continue;
		/* Idle: the clock every 64 polls.  Where this host has a CPU
		 * for each of its processes, spin for spin_ns since the last
		 * progress (as MPI's own waits do); past that, or where the
		 * processes share CPUs, yield to the others after each poll,
		 * or in emulated mode sleep 20 us, so that a process whose
		 * model time has come is not kept off its CPU by spinning
		 * ones. */
		if (!spin) {
			if (proc->team->emulate)
				nanosleep(&(struct timespec){.tv_nsec = 20000}, NULL);
			else
				sched_yield();
		}
		if (idle % 64)
			continue;
		uint64_t now = tc__now_ns();
		if (!t0)
			t0 = now;
		if (!last)
			last = now, next_probe = now + probe_ns;
		spin = !proc->team->emulate && now - last < m->spin_ns;
		if (now >= next_probe) {
			next_probe = now + probe_ns;
			int err = tc__mpi_probe(m, pl, it, n, seq);
			if (err)
				return err;
		}
		if (timeout && now - t0 > timeout) {
			tc__mpi_report(proc, it, n, r, io, now - t0);
			return TC_ETIMEDOUT;
		}
	}
	return TC_OK;
}
