/* SPDX-License-Identifier: MIT */
/*
 * topocoll/trace.h - per-rank event buffers of collective runs.
 *
 * With tc_team_config.trace_events = N > 0, every rank records up to N events
 * of the collectives it runs (further events are dropped and counted).  Each
 * event has a logical interval (the model's clock, ps) and a wall-clock
 * interval (ns since the run's epoch), so a trace can be drawn in either
 * time.  The tool's `topocoll trace` turns them into Chrome trace-event JSON.
 *
 * Thread-safety: a rank writes only its own buffer; read the buffers after
 * tc_run returned (or from the rank's own thread).
 */
#ifndef TOPOCOLL_TRACE_H
#define TOPOCOLL_TRACE_H

#include <stdint.h>

#include "topocoll/export.h"
#include "topocoll/model.h"

#ifdef __cplusplus
extern "C" {
#endif

enum tc_event_kind {
	TC_EV_SEND,    /* a transfer this rank sourced; peer = destination */
	TC_EV_RECV,    /* a transfer this rank received; peer = source */
	TC_EV_FORWARD, /* a routed transfer this rank passed on; peer = next hop */
	TC_EV_COMBINE, /* a reduction of received data into the result */
	TC_EV_WAIT,    /* the rank's wait for the round to complete */
};

struct tc_event {
	int kind;  /* enum tc_event_kind */
	int round; /* round of the collective */
	int xfer;  /* transfer index in the schedule (-1 for WAIT) */
	int peer;
	int src, dst; /* the transfer's end points (-1 for WAIT) */
	uint64_t bytes;
	uint64_t call;      /* which collective call of this rank (0, 1, ...) */
	tc_time_t lt0, lt1; /* logical interval, ps */
	uint64_t wt0, wt1;  /* wall interval, ns since the epoch */
};

struct tc_team;

/* The events rank `rank` recorded; returns their number (0 when tracing is
 * off) and sets *ev to the team-owned array, valid until the next run or
 * tc_team_destroy().  *dropped (may be NULL) gets how many did not fit. */
TC_API int tc_trace_events(const struct tc_team *team, int rank, const struct tc_event **ev,
                           uint64_t *dropped);

#ifdef __cplusplus
}
#endif
#endif /* TOPOCOLL_TRACE_H */
