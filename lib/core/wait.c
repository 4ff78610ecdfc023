/* SPDX-License-Identifier: MIT */
/*
 * lib/core/wait.c - spin, yield, block; doorbells; the asymmetric fence.
 * The protocol is described in lib/core/wait.h.
 */
#include "core/wait.h"

#include <errno.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <urcu/futex.h>

#include "core/internal.h"

int tc__asym_fence;
static pthread_once_t tc__wait_once = PTHREAD_ONCE_INIT;

static long tc__membarrier(int cmd)
{
#ifdef __NR_membarrier
	return syscall(__NR_membarrier, cmd, 0, 0);
#else
	(void)cmd;
	errno = ENOSYS;
	return -1;
#endif
}

static void tc__wait_init_once(void)
{
	const char *off = getenv("TC_NO_MEMBARRIER");
	if (off && *off && *off != '0')
		return;
	long mask = tc__membarrier(MEMBARRIER_CMD_QUERY);
	if (mask < 0 || !(mask & MEMBARRIER_CMD_PRIVATE_EXPEDITED))
		return;
	if (tc__membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0)
		return;
	tc__asym_fence = 1;
}

void tc__wait_global_init(void)
{
	pthread_once(&tc__wait_once, tc__wait_init_once);
}

void tc__sleeper_fence(bool asym)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (asym && tc__membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0)
		abort(); /* registered at start-up: cannot fail but for a kernel bug */
}

uint64_t tc__now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void tc__doorbell_ring(struct tc__doorbell *db)
{
	/* Seq_cst exchange: leaves NOTIFIED for a sleeper that has not yet
	 * gone to sleep (its CAS AWAKE -> ASLEEP then fails), and tells us
	 * whether it sleeps.  Release half: the sleeper that reads NOTIFIED
	 * sees what we published before ringing.  Private futex operations
	 * (here and in tc__wait_for()): doorbells never leave the process, and
	 * the kernel then skips the shared-mapping lookup of the address
	 * (measured: about 10% less CPU per barrier of 64 ranks that all sleep,
	 * TC_WAIT_BLOCK on 2 CPUs). */
	if (atomic_exchange(&db->word, TC__DB_NOTIFIED) == TC__DB_ASLEEP)
		futex_async((int32_t *)&db->word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
}

/*
 * One wait that gives the CPU away, measured on these VMs with 32 ranks per
 * CPU (p = 64 on 2 CPUs, sched_yield waits): 2.2 us for the yield and the
 * switch alone, 2.6-3.1 us of CPU per context switch in a barrier once the
 * rank's own work (progress, the round's bookkeeping) is counted
 * (dissemination: 828 us of CPU and 270 switches per barrier; linear: 203 us
 * and 78).
 */
#define TC__SWITCH_NS 3000u

int tc__shared_cpus(const struct tc_team *team)
{
	return team->p > team->cpus && !team->emulate ? team->cpus : 0;
}

uint64_t tc__wait_level_ns(const struct tc_team *team)
{
	if (!tc__shared_cpus(team) || team->wait == TC_WAIT_SPIN)
		return 0;
	uint64_t per_cpu = ((uint64_t)team->p + (uint64_t)team->cpus - 1) / (uint64_t)team->cpus;
	return per_cpu * TC__SWITCH_NS;
}

/* How often the spin loop reads the clock. */
#define TC__SPIN_CLOCK_EVERY 64

int tc__wait_for(struct tc_proc *proc, tc__cond_fn cond, void *ctx)
{
	struct tc_team *team = proc->team;
	const enum tc_wait_policy pol = team->wait;
	uint64_t start = 0, now = 0;
	bool spinning = true;

	for (unsigned iter = 0;; iter++) {
		tc__progress(proc);
		if (cond(proc, ctx))
			return 0;
		/* Relaxed: a hint only; tc_team_abort() also rings the doorbell. */
		if (atomic_load_explicit(&team->aborted, memory_order_relaxed)) {
			tc__rndv_quiesce(proc); /* our buffers may be freed on return */
			return TC_EABORTED;
		}

		if (spinning && iter % TC__SPIN_CLOCK_EVERY) {
			if (iter > 4096) tc__cpu_relax();
			continue;
		}
		now = tc__now_ns();
		if (!start)
			start = now;
		uint64_t waited = now - start;
		if (team->timeout_ns && waited > team->timeout_ns) {
			tc_team_abort(team);
			tc__rndv_quiesce(proc);
			return TC_ETIMEDOUT;
		}
		spinning = pol == TC_WAIT_SPIN || waited < team->spin_ns ||
		           (proc->npending_rndv && now < proc->spin_until_ns);
		if (spinning) {
			tc__cpu_relax();
			continue;
		}
		if (pol == TC_WAIT_YIELD || waited < team->spin_ns + team->yield_ns) {
			sched_yield();
			continue;
		}

		/* Block.  Relaxed store: consumes a stale notification; the
		 * sleeper fence orders it before the re-check. */
		atomic_store_explicit(&proc->db.word, TC__DB_AWAKE, memory_order_relaxed);
		tc__set_hints(proc, true);
		tc__sleeper_fence(team->asym_fence); /* pairs with tc__waker_fence() in tc__notify() */
		/* cond() may post new requests (the executor forwards and sends
		 * as data arrives); their channels' hints were not raised above,
		 * so a post means: do not sleep, go round and raise them. */
		uint64_t posts = proc->nposts;
		tc__progress(proc);
		if (!cond(proc, ctx) && proc->nposts == posts &&
		    !atomic_load_explicit(&team->aborted, memory_order_relaxed)) {
			int32_t expect = TC__DB_AWAKE;
			/* Seq_cst CAS: fails when a waker left NOTIFIED (its
			 * publication is then visible to the re-check of the next
			 * iteration); pairs with the exchange in
			 * tc__doorbell_ring(). */
			if (atomic_compare_exchange_strong(&proc->db.word, &expect, TC__DB_ASLEEP)) {
				struct timespec ts, *tsp = NULL;
				if (team->timeout_ns) {
					uint64_t left = team->timeout_ns > waited ? team->timeout_ns - waited : 1;
					ts.tv_sec = (time_t)(left / 1000000000u);
					ts.tv_nsec = (long)(left % 1000000000u);
					tsp = &ts;
				}
				proc->stats.waits_blocked++;
				futex_async((int32_t *)&proc->db.word, FUTEX_WAIT | FUTEX_PRIVATE_FLAG,
				            TC__DB_ASLEEP, tsp, NULL, 0);
			}
		}
		tc__set_hints(proc, false);
	}
}
