/* SPDX-License-Identifier: MIT */
/*
 * topocoll.h - the public interface of topocoll: includes every public
 * header, so that `#include <topocoll.h>` gives all of it (in C99 or later,
 * or C++).
 *
 *   topocoll/team.h       teams, tc_run / tc_attach, logical time, aborts,
 *                         the watchdog, statistics
 *   topocoll/p2p.h        point-to-point messages and requests
 *   topocoll/coll.h       datatypes, operators, collectives
 *   topocoll/topo.h       topologies
 *   topocoll/model.h      the communication model, logical time
 *   topocoll/cost.h       closed-form costs of the algorithms
 *   topocoll/trace.h      event traces
 *   topocoll/calibrate.h  the calibrated model
 *   topocoll/error.h      error codes, tc_strerror, tc_error_detail
 *   topocoll/export.h     TC_API, the mark of the exported functions
 *
 * A team is p virtual processors (ranks) joined by a topology; every directed
 * link of the topology is a lock-free single-producer/single-consumer channel.
 * Ranks are threads: either the library spawns and pins them (tc_run) or
 * threads the program already has attach to a rank each (tc_attach).
 *
 * Conventions (see also topocoll/error.h):
 *  - 0 is success, a negative TC_E* code is an error.
 *  - Buffers passed to a call are borrowed for that call and never kept,
 *    except the buffers of tc_isend/tc_irecv, borrowed until the request
 *    completes (tc_wait, tc_waitall or tc_test reporting done).
 *  - A struct tc_proc belongs to the thread running that rank: every call
 *    taking a proc must be made from that thread.  Calls on different procs
 *    run concurrently.  Team-level calls are thread-safe where stated.
 *  - Symbols: the library exports the functions declared here (TC_API)
 *    and nothing else.
 */
#ifndef TOPOCOLL_H
#define TOPOCOLL_H

#include "topocoll/calibrate.h"
#include "topocoll/coll.h"
#include "topocoll/cost.h"
#include "topocoll/error.h"
#include "topocoll/export.h"
#include "topocoll/model.h"
#include "topocoll/p2p.h"
#include "topocoll/team.h"
#include "topocoll/topo.h"
#include "topocoll/trace.h"

#define TC_VERSION_STRING "0.1.0"

#endif /* TOPOCOLL_H */
