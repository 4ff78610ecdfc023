/* SPDX-License-Identifier: MIT */
/*
 * lib/core/wait.c - doorbells, parking, the asymmetric fence.  The protocol
 * and the spin/yield/block policy are described in lib/core/wait.h.
 */
#include "core/wait.h"
#include "fibre/runq.h"

#include <errno.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <urcu/futex.h>

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
	 * (here and in tc__park()): doorbells never leave the process, and
	 * the kernel then skips the shared-mapping lookup of the address
	 * (measured: about 10% less CPU per barrier of 64 ranks that all sleep,
	 * TC_WAIT_BLOCK on 2 CPUs). */
	if (atomic_exchange(&db->word, TC__DB_NOTIFIED) == TC__DB_ASLEEP) {
		if (db->task)
			tc__task_wake(db->task); /* we own the one wake-up (wait.h) */
		else
			futex_async((int32_t *)&db->word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL,
			            NULL, 0);
	}
}

void tc__yield(void)
{
	struct tc__task *self = tc__task_self();
	if (self)
		tc__task_yield(self);
	else
		sched_yield();
}

bool tc__park(struct tc__doorbell *db, uint64_t timeout_ns)
{
	int32_t expect = TC__DB_AWAKE;
	/* Seq_cst CAS: fails when a waker left NOTIFIED (its publication is
	 * then visible to the caller's next re-check); pairs with the exchange
	 * in tc__doorbell_ring(). */
	if (!atomic_compare_exchange_strong(&db->word, &expect, TC__DB_ASLEEP))
		return false;
	if (db->task) {
		/* A fibre: the CPU's next ready fibre runs until a ring (or the
		 * timeout, which then moves the word back to AWAKE) makes us
		 * ready again. */
		tc__task_block(db->task, &db->word, TC__DB_ASLEEP, TC__DB_AWAKE,
		               timeout_ns ? tc__now_ns() + timeout_ns : 0);
		return true;
	}
	struct timespec ts, *tsp = NULL;
	if (timeout_ns) {
		ts.tv_sec = (time_t)(timeout_ns / 1000000000u);
		ts.tv_nsec = (long)(timeout_ns % 1000000000u);
		tsp = &ts;
	}
	futex_async((int32_t *)&db->word, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, TC__DB_ASLEEP, tsp, NULL, 0);
	return true;
}
