/* SPDX-License-Identifier: MIT */
/*
 * lib/mpi/team.c - a team over the processes of an MPI communicator
 * (topocoll/mpi.h): creation, agreement on the configuration and the
 * emulation's epoch, destruction.
 *
 * Each process holds an ordinary team of p ranks (the topology, the model,
 * the schedule cache and its own rank's proc) and runs only its own rank;
 * the team's engine_run hook sends the collectives' schedules to
 * lib/mpi/exec.c instead of the channels, and its p2p_engine the
 * point-to-point calls to lib/mpi/p2p.c.  AUTO prices the model only
 * (team->cpus = p: no pricing of shared CPUs, which would depend on each
 * process's affinity), so every process makes the same choice.
 */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error_detail.h"
#include "mpi/engine.h"
#include "sched/nbc.h"

/* FNV-1a over bytes: the configuration every process must agree on. */
static uint64_t tc__mpi_hash(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

static uint64_t tc__mpi_cfg_hash(const struct tc_team_config *c, const struct tc_mpi_opts *o)
{
	uint64_t h = 1469598103934665603ull;
	const char *topo = c->topology ? c->topology : "complete";
	h = tc__mpi_hash(h, topo, strlen(topo));
	h = tc__mpi_hash(h, &c->p, sizeof c->p);
	const struct tc_model *md = &c->model;
	double v[] = {md->ts_ns, md->tw_ns, md->th_ns, md->tc_ns};
	h = tc__mpi_hash(h, v, sizeof v);
	int e[] = {(int)md->ports, (int)md->duplex,      (int)md->switching, md->combining,
	           (int)c->mode,   c->no_mismatch_check, (int)o->route};
	h = tc__mpi_hash(h, e, sizeof e);
	uint64_t w[] = {(uint64_t)md->mu, c->timeout_ms, (uint64_t)c->packet_bytes};
	return tc__mpi_hash(h, w, sizeof w);
}

/* Every process's err (0 or a TC_E*) and configuration hash: returns 0
 * when every err is 0 and every hash equal, else this process's own err,
 * or TC_EINVAL for a process whose own step went well. */
static int tc__mpi_agree(MPI_Comm comm, int err, uint64_t h)
{
	uint64_t v[3] = {err ? 1u : 0u, h, ~h}, mx[3];
	if (MPI_Allreduce(v, mx, 3, MPI_UINT64_T, MPI_MAX, comm) != MPI_SUCCESS)
		return err ? err : TC_ESYS;
	if (err)
		return err;
	if (mx[0]) {
		tc__set_detail("tc_team_create_mpi: another process failed to create its team");
		return TC_EINVAL;
	}
	if (mx[1] != h || mx[2] != ~h) {
		tc__set_detail("tc_team_create_mpi: the processes were given different "
		               "configurations (topology, p, model, mode, timeout or route)");
		return TC_EINVAL;
	}
	return TC_OK;
}

/* The emulation's epoch: after a barrier, the latest of the processes'
 * clocks plus 1 ms where they all share one host (one CLOCK_MONOTONIC),
 * else each process's own clock plus 1 ms (clocks of different hosts are
 * not comparable: the barrier's skew is the error then). */
static int tc__mpi_epoch(MPI_Comm comm, int size, uint64_t *epoch, int *local)
{
	MPI_Comm node;
	int nsize = 0;
	if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
		return TC_ESYS;
	MPI_Comm_size(node, &nsize);
	MPI_Comm_free(&node);
	*local = nsize;
	int one = nsize == size, all = 0;
	if (MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS ||
	    MPI_Barrier(comm) != MPI_SUCCESS)
		return TC_ESYS;
	uint64_t now = tc__now_ns(), mx = now;
	if (all && MPI_Allreduce(&now, &mx, 1, MPI_UINT64_T, MPI_MAX, comm) != MPI_SUCCESS)
		return TC_ESYS;
	*epoch = mx + 1000000u;
	return TC_OK;
}

/* The engines of teams destroyed with messages possibly on their way
 * (tc_team_destroy_mpi): their communicators, and the buffers that MPI
 * may still write (staging, scratch) or read (the send slots of retired
 * point-to-point requests), kept until the process ends. */
static pthread_mutex_t tc__mpi_kept_mu = PTHREAD_MUTEX_INITIALIZER;
static struct tc__mpi *tc__mpi_kept;

/* keep: m's communicators and the buffers MPI may still use are kept
 * (tc__mpi_kept), the rest freed. */
static void tc__mpi_free(struct tc__mpi *m, bool keep)
{
	if (!m)
		return;
	/* The aborts this process sent: small (eager) sends, complete
	 * without their receiver; given up to 100 ms before they are
	 * cancelled, so that a team destroyed in the middle of a call still
	 * tells the others. */
	const uint64_t t0 = tc__now_ns();
	for (int i = 0; i < m->nabort; i++) {
		int done = 0;
		MPI_Test(&m->abort_req[i], &done, MPI_STATUS_IGNORE);
		while (!done && tc__now_ns() - t0 < 100000000u) {
			sched_yield();
			MPI_Test(&m->abort_req[i], &done, MPI_STATUS_IGNORE);
		}
		if (!done) {
			MPI_Cancel(&m->abort_req[i]);
			MPI_Request_free(&m->abort_req[i]);
		}
	}
	tc__mpi_p2p_free(m, keep);
	tc__mpi_exec_free(m);
	free(m->req);
	free(m->idx);
	free(m->route);
	m->req = NULL;
	m->idx = NULL;
	m->route = NULL;
	if (keep) {
		/* A receive MPI could not cancel may still write the staging
		 * or the scratch, a retired send read its slot. */
		pthread_mutex_lock(&tc__mpi_kept_mu);
		m->kept_next = tc__mpi_kept;
		tc__mpi_kept = m;
		pthread_mutex_unlock(&tc__mpi_kept_mu);
		return;
	}
	if (m->comm != MPI_COMM_NULL)
		MPI_Comm_free(&m->comm);
	if (m->pcomm != MPI_COMM_NULL)
		MPI_Comm_free(&m->pcomm);
	if (m->dcomm != MPI_COMM_NULL)
		MPI_Comm_free(&m->dcomm);
	free(m->stage);
	free(m->tmp);
	free(m);
}

int tc_team_create_mpi(MPI_Comm comm, const struct tc_team_config *cfg, const struct tc_mpi_opts *opts,
                       struct tc_team **team_out, struct tc_proc **proc_out)
{
	tc__clear_detail();
	int init = 0, fin = 0;
	if (team_out)
		*team_out = NULL; /* on every error: tc_team_destroy_mpi(*team_out) is a no-op */
	if (proc_out)
		*proc_out = NULL;
	if (!team_out || !proc_out)
		return TC_EINVAL;
	MPI_Initialized(&init);
	MPI_Finalized(&fin);
	if (!init || fin) {
		tc__set_detail("tc_team_create_mpi: MPI is %s", fin ? "finalized"
		                                                    : "not initialised "
		                                                      "(MPI_Init first)");
		return TC_EINVAL;
	}
	if (comm == MPI_COMM_NULL) {
		tc__set_detail("tc_team_create_mpi: comm is MPI_COMM_NULL");
		return TC_EINVAL;
	}
	int size = 0, rank = 0;
	MPI_Comm_size(comm, &size);
	MPI_Comm_rank(comm, &rank);
	struct tc_mpi_opts o = {0};
	if (opts)
		o = *opts;
	struct tc_team_config c;
	if (cfg)
		c = *cfg;
	else
		tc_team_config_default(&c);
	const uint64_t h = tc__mpi_cfg_hash(&c, &o);
	int err = TC_OK;
	struct tc_team *team = NULL;
	struct tc__mpi *m = NULL;
	if ((unsigned)o.route > TC_MPI_DIRECT) {
		tc__set_detail("tc_team_create_mpi: route %d is neither TC_MPI_FORWARD nor "
		               "TC_MPI_DIRECT",
		               (int)o.route);
		err = TC_EINVAL;
	} else if (c.p && c.p != size) {
		tc__set_detail("tc_team_create_mpi: p = %d, but the communicator has %d processes "
		               "(give p = 0 or %d)",
		               c.p, size, size);
		err = TC_EINVAL;
	}
	if (!err) {
		c.p = size;
		c.run_unattached = 0;
		err = tc_team_create(&c, &team);
	}
	if (!err && tc_topo_nodes(team->topo) != size) {
		tc__set_detail("tc_team_create_mpi: the topology has %d nodes, the communicator "
		               "%d processes",
		               tc_topo_nodes(team->topo), size);
		err = TC_EINVAL;
	}
	if (!err && !(m = calloc(1, sizeof *m)))
		err = TC_ENOMEM;
	if (m) {
		m->comm = m->pcomm = m->dcomm = MPI_COMM_NULL;
		m->dseq = calloc((size_t)size, sizeof *m->dseq);
		if (!m->dseq)
			err = TC_ENOMEM;
		m->route = malloc(((size_t)tc_topo_props(team->topo)->diameter + 2) * sizeof(int));
		if (!m->route)
			err = TC_ENOMEM;
	}
	err = tc__mpi_agree(comm, err, h);
	/* Three duplicates: the collectives', the point-to-point headers'
	 * and the split point-to-point messages' data (lib/mpi/p2p.c), so
	 * that no message of one is ever matched by a receive of another. */
	if (!err && (MPI_Comm_dup(comm, &m->comm) != MPI_SUCCESS ||
	             MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN) != MPI_SUCCESS ||
	             MPI_Comm_dup(m->comm, &m->pcomm) != MPI_SUCCESS ||
	             MPI_Comm_dup(m->comm, &m->dcomm) != MPI_SUCCESS)) {
		tc__set_detail("tc_team_create_mpi: duplicating the communicator failed");
		err = TC_ESYS;
	}
	if (!err) {
		int *ub = NULL, flag = 0;
		MPI_Comm_get_attr(m->pcomm, MPI_TAG_UB, &ub, &flag);
		m->tag_ub = flag && ub ? *ub : 32767;
	}
	uint64_t epoch = 0;
	int local = size;
	if (!err)
		err = tc__mpi_epoch(m->comm, size, &epoch, &local);
	if (err) {
		tc__mpi_free(m, false);
		if (team)
			tc_team_destroy(team);
		return err;
	}
	m->rank = rank;
	m->size = size;
	m->forward = o.route == TC_MPI_FORWARD;
	/* The packet of the channels' cut-through (lib/sched/plan.c). */
	if (team->mps.ct)
		m->packet = team->model.mu ? team->model.mu : team->packet_bytes;
	m->probe_ms = 10;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	m->spin_ns = cpus > 0 && local <= cpus ? 50000u : 0;
	if (gethostname(m->host, sizeof m->host - 1))
		snprintf(m->host, sizeof m->host, "?");
	team->cpus = team->p; /* AUTO prices the model only: the same everywhere */
	team->epoch_ns = epoch;
	team->engine = m;
	team->engine_run = tc__mpi_run;
	team->engine_nbc = &tc__mpi_nbc;
	team->p2p_engine = &tc__mpi_p2p;
	*team_out = team;
	*proc_out = &team->procs[rank];
	return TC_OK;
}

void tc_team_destroy_mpi(struct tc_team *team)
{
	if (!team)
		return;
	struct tc__mpi *m = team->engine;
	/* Collective calls started and not complete: the running one is
	 * failed here (its MPI requests dropped, the other processes told,
	 * as when a call fails) before its staging and communicator go; the
	 * operations are released with the team. */
	if (m)
		tc__creq_abandon(&team->procs[m->rank], TC_EABORTED);
	/* Messages of this team may still be on their way when a call
	 * failed or was abandoned, or point-to-point requests or messages
	 * were left: its communicators are then kept, so that an MPI that
	 * gives a freed communicator's context to a later one (MPICH does)
	 * never delivers them to a later team, and so are the buffers MPI
	 * may still use (a receive Open MPI could not cancel went on writing
	 * the staging).  Relaxed: only this thread uses the team. */
	const bool keep = m && (atomic_load_explicit(&team->aborted, memory_order_relaxed) ||
	                        m->live || m->held || m->orphans);
	tc__mpi_free(m, keep);
	team->engine = NULL;
	team->engine_run = NULL;
	team->engine_nbc = NULL;
	team->p2p_engine = NULL;
	tc_team_destroy(team);
}

uint64_t tc_mpi_forwarded_msgs(const struct tc_team *team)
{
	const struct tc__mpi *m = team ? team->engine : NULL;
	return m ? m->fwd_msgs : 0;
}

uint64_t tc_mpi_epoch_ns(const struct tc_team *team)
{
	return team ? team->epoch_ns : 0;
}

int tc_mpi_launched(void)
{
	static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE",
	                                   "PMI_SIZE",
	                                   "PMI_RANK",
	                                   "PMIX_RANK",
	                                   "MPI_LOCALNRANKS",
	                                   "HYDRA_CONTROL_FD"};
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
		if (getenv(vars[i]))
			return 1;
	return 0;
}
