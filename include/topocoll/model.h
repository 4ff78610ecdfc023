/* SPDX-License-Identifier: MIT */
/*
 * topocoll/model.h - communication model parameters ([Barnat-IB109], [KKA-I], [Goubault-ring]).
 *
 * Times are in nanoseconds as doubles at the API; the logical clock keeps
 * them as integer picoseconds (tc_time_t) so that sums are exact and every
 * run gives the same logical times.
 *
 * Thread-safety: plain data and pure functions; safe from any thread.
 */
#ifndef TOPOCOLL_MODEL_H
#define TOPOCOLL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "topocoll/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Logical time in picoseconds. */
typedef int64_t tc_time_t;
#define TC_PS_PER_NS 1000

enum tc_ports {
	TC_PORTS_ONE = 0, /* a node sends one and receives one message at a time */
	TC_PORTS_ALL = 1, /* every link of a node works independently */
};

enum tc_duplex {
	TC_DUPLEX_FULL = 0, /* both directions of a link at once */
	TC_DUPLEX_HALF = 1, /* one direction at a time */
};

enum tc_switching {
	TC_SWITCH_SF = 0, /* store-and-forward: l hops cost l (t_s + m t_w) */
	TC_SWITCH_CT = 1, /* cut-through / wormhole: t_s + m t_w + l t_h */
};

struct tc_model {
	double ts_ns; /* t_s, start-up per message, ns */
	double tw_ns; /* t_w, per byte, ns */
	double th_ns; /* t_h, per hop (t_d in [KKA-I]), ns */
	double tc_ns; /* t_c, per byte combined by a reduction, ns */
	size_t mu;    /* packet size in bytes (0: the runtime's default) */
	enum tc_ports ports;
	enum tc_duplex duplex;
	enum tc_switching switching;
	int combining; /* non-zero: a node may merge packets for different
	                        destinations */
};

/* The defaults: t_s = 1000 ns, t_w = 1 ns/B, t_h = 0, t_c = 0, mu = 0,
 * one-port, full-duplex, store-and-forward, combining. */
TC_API void tc_model_default(struct tc_model *m);

/* Whether m is a model the library takes (tc_team_create, tc_predict_call):
 * 0, or TC_EINVAL for a NULL m, a time that is negative, not finite or out
 * of range (t_s, t_h <= 10^12 ns; t_w, t_c <= 10^9 ns per byte), mu above
 * TC_MAX_MESSAGE, or ports, duplex or switching outside their enums.
 * Thread-safe. */
TC_API int tc_model_check(const struct tc_model *m);

#ifdef __cplusplus
}
#endif
#endif /* TOPOCOLL_MODEL_H */
