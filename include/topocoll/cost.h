/* SPDX-License-Identifier: MIT */
/*
 * topocoll/cost.h - closed-form costs of the catalogue algorithms and the
 * lower bounds of [KKA-I].
 *
 * Every tc_cost_* function returns the time, in nanoseconds, that the source
 * cited beside it (by its key, e.g. [Barnat-IB109]: docs/references.md)
 * gives for one algorithm of the DESIGN.md catalogue, evaluated with the
 * parameters of a struct tc_model (topocoll/model.h).  They are pure
 * functions of their arguments: no global state, no allocation, safe to call
 * concurrently from any thread.  Pointers are borrowed for the call only.
 *
 * Notation (DESIGN.md): p nodes, m bytes per message (for allgather,
 * alltoall, scatter and gather: the block one node holds for one
 * destination), d = log2 p on a hypercube, t_s = md->ts_ns,
 * t_w = md->tw_ns, t_h = md->th_ns (t_d in [KKA-I]), t_c = md->tc_ns.
 *
 * One message over l links (DESIGN.md, "Communication model"):
 *
 *     msg(l, m) = l (t_s + m t_w)          store-and-forward (md->switching SF)
 *     msg(l, m) = t_s + m t_w + l t_h      cut-through / wormhole (CT)
 *
 * (tc_cost_p2p()).  [Barnat-IB109] and [Goubault-ring] write their formulas
 * with t_s + m t_w per neighbour message, i.e. msg(1, m) with t_h = 0; [KKA-I] charges a
 * neighbour message t_s + t_d + mu t_m under WH.  Every formula below is
 * written as a sum of msg() terms.  For the nearest-neighbour algorithms it
 * is the source's formula exactly under SF (or with t_h = 0), and under CT each
 * message also pays t_h once.  For the routed ones (ring_rd, chain_rd, ecube,
 * hypercube_ct, direct, multicast, linear/binomial with hops) the source's
 * formula is the CT one, and under SF every link of a route costs a full
 * t_s + m t_w.  Where an algorithm combines data (reductions, scans) each
 * combine of b bytes adds b t_c on the critical path.
 *
 * Domain errors (md NULL, p < 1, m < 0 or NaN, p not a power of two where
 * the algorithm needs one, bad dims) make a tc_cost_* function return NAN
 * (<math.h>) and a step helper return -1.  p = 1 always costs 0.
 * Non-integral m / r (e.g. m/r in the pipelined ring) is used as a real
 * number; the library never rounds byte counts here.
 */
#ifndef TOPOCOLL_COST_H
#define TOPOCOLL_COST_H

#include "topocoll/export.h"
#include "topocoll/model.h"
#include "topocoll/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Building blocks                                                           */
/* ------------------------------------------------------------------------ */

/* msg(hops, m) above: one message of m bytes over a route of hops links.
 * hops <= 0 costs 0 (nothing moves). */
TC_API double tc_cost_p2p(const struct tc_model *md, long hops, double m);

/* ceil(log2 x) for x >= 1 (0 for x = 1); -1 for x < 1. */
TC_API int tc_cost_log2_ceil(long x);

/*
 * Eccentricity of node root (the largest distance from root) in the
 * topology of the given kind and dims (conventions of tc_lower_bound()); for
 * root < 0 the radius (the smallest eccentricity over all nodes).  Mesh and
 * torus ranks are row-major, last dimension fastest (topocoll/topo.h).
 * Returns -1 for bad arguments or TC_TOPO_TREE.
 */
TC_API long tc_cost_eccentricity(enum tc_topo_kind kind, int ndims, const int *dims, int root);

/* ------------------------------------------------------------------------ */
/* One-to-all broadcast (bcast)                                              */
/* ------------------------------------------------------------------------ */

/*
 * linear: the root sends the p-1 messages one after the other ([Barnat-IB109],
 * "naive One-To-All": p-1 messages sent in turn; the source gives no formula).
 * A send is blocking: the root starts the next one when the previous routed
 * transfer has arrived, so
 *     T = sum_{k=0}^{p-2} msg(hops[k], m)
 * where hops[k] >= 1 is the route length to the k-th destination; hops NULL
 * means every destination is a neighbour (complete graph): (p-1) msg(1, m).
 */
TC_API double tc_cost_bcast_linear(const struct tc_model *md, int p, double m, const int *hops);
/* shm: the root's message to every other rank in one round on the complete
 * graph (every rank reads the root's buffer): all ports, one message time
 * msg(1, m); one port, the root's p - 1 sends back to back,
 * (p - 2)(t_s + m t_w) + msg(1, m); 0 for p = 1 (tc_cost_direct_round()'s
 * expression). */
TC_API double tc_cost_bcast_shm(const struct tc_model *md, int p, double m);

/* ring: forward along the ring ([Goubault-ring], slides 9-13): T = (p-1) msg(1, m),
 * i.e. (p-1)(t_s + m t_w) under SF. */
TC_API double tc_cost_bcast_ring(const struct tc_model *md, int p, double m);

/*
 * ring_pipelined: the message cut into r >= 1 packets of m/r bytes, sent
 * back to back along the ring ([Goubault-ring], slides 22-24):
 *     T = (p-2+r) msg(1, m/r) = (p-2+r)(t_s + (m/r) t_w)   (SF)
 * The source assumes r divides L; here m/r is real.  p = 2 gives r t_s + m t_w
 * (the formula holds for p >= 2); p = 1 costs 0.  NAN for r < 1.
 */
TC_API double tc_cost_bcast_ring_pipelined(const struct tc_model *md, int p, double m, long r);

/*
 * r_opt of [Goubault-ring], slide 25: the real minimiser of (p-2+r)(t_s + (m/r) t_w),
 *     r_opt = sqrt(m (p-2) t_w / t_s).
 * Under CT the per-packet start-up is t_s + t_h, so t_s is replaced by
 * t_s + t_h (identical when t_h = 0).  Returns +INFINITY when that start-up is
 * 0 and m (p-2) t_w > 0, 0 when m (p-2) t_w = 0, NAN on domain errors.
 */
TC_API double tc_cost_ring_r_opt_real(const struct tc_model *md, int p, double m);

/*
 * The integer packet count to use: the r in [1, r_max] that minimises
 * tc_cost_bcast_ring_pipelined(md, p, m, r), where r_max = max(1, floor(m))
 * (a packet carries at least one byte).  Rounding: the cost is convex in r,
 * so the integer minimiser is floor(r_opt) or ceil(r_opt) (clamped to
 * [1, r_max]); both are evaluated and the cheaper is returned, the smaller on
 * a tie.  Returns 1 for p <= 2 or m < 2, -1 on domain errors.
 */
TC_API long tc_cost_ring_r_opt(const struct tc_model *md, int p, double m);

/*
 * The optimal time of [Goubault-ring], slide 25 (the formula is lost from the source's
 * text; it is the value at the real r_opt):
 *     T_opt = (sqrt((p-2) t_s) + sqrt(m t_w))^2,
 * with t_s + t_h for t_s under CT.  Asymptotically m t_w, as the source says.
 * For p <= 2: the cost with r = 1.  The integer cost at tc_cost_ring_r_opt()
 * is never below this value.
 */
TC_API double tc_cost_bcast_ring_pipelined_opt(const struct tc_model *md, int p, double m);

/*
 * ring_rd: recursive doubling at distances p/2, p/4, ... on a ring, or on a
 * chain from an end node ([KKA-I], algorithm 1-DTORUSRECDOUBLOAB, formula (a);
 * [Barnat-IB109] "optimal distances p/2, p/4, ...").  Each phase halves every
 * segment, the holder keeping the smaller half, so a segment of n nodes sends
 * over floor(n/2) links; along the largest segments these distances add up to
 * exactly p-1 for every p, and there are ceil(log2 p) phases:
 *     CT: T = (t_s + m t_w) ceil(log2 p) + t_h (p-1)       ([KKA-I] (a))
 *     SF: T = (p-1)(t_s + m t_w)                            (each link a full hop)
 * Difference: the source's middle expression sum_i (t_s + ceil(z/2^i) t_d + ..)
 * over-counts the hops for p not a power of two (p = 5: 6 instead of 4); its
 * right-hand side, implemented here, is exact for the halving above.
 */
TC_API double tc_cost_bcast_ring_rd(const struct tc_model *md, int p, double m);

/*
 * Recursive doubling on a chain (1-D mesh) from root a, 0 <= a < p
 * ([KKA-I], formula (c); the figure with the exact splitting is lost).
 * Halving: the holder keeps a half of floor(n/2) nodes containing it and
 * sends to the nearest node of the other half (n odd with the holder in the
 * middle: it keeps the upper ceil(n/2) nodes and sends to its lower
 * neighbour); every node's data then arrives along a route that moves
 * monotonically away from the root, after at most ceil(log2 p) start-ups.
 *     CT: T = ceil(log2 p)(t_s + m t_w) + max(p-a-1, a) t_h     ([KKA-I] (c))
 * The source's CT formula adds the start-ups of the deepest chain to the route
 * latency of the farthest node: if a sender is busy for t_s + m t_w while the
 * route latency overlaps, every node has its data by then (approximate: it
 * is reached only when the farthest node is also served in the last phase).
 * A model where the sender waits for its route's latency pays more.
 *     SF: T = H (t_s + m t_w), H = the links crossed along the worst chain of
 * blocking transfers of this halving (a sender is busy until its message has
 * arrived; both halves continue afterwards), computed by recursion.  H = p-1
 * for a = 0 or p-1 (tc_cost_bcast_ring_rd()); H >= max(a, p-1-a) and
 * H >= ceil(log2 p); e.g. p = 3, a = 1: H = 2.  The source gives no SF formula.
 */
TC_API double tc_cost_bcast_chain_rd(const struct tc_model *md, int p, int root, double m);

/*
 * mesh: k-D mesh or torus, one dimension after another ([Barnat-IB109], "One-To-All
 * in a d-dimensional mesh": d log(p^{1/d}) sequential operations; 2 log sqrt(p)
 * on a sqrt(p) x sqrt(p) mesh).  Dimension i (size z_i) runs ring_rd on a
 * torus, chain_rd from the root's coordinate a_i on a mesh:
 *     T = sum_i T_ring_rd(z_i)            (kind TC_TOPO_TORUS)
 *     T = sum_i T_chain_rd(z_i, a_i)      (kind TC_TOPO_MESH)
 * With t_h = 0 under CT this is the source's count, sum_i ceil(log2 z_i)
 * operations of t_s + m t_w (tc_cost_bcast_mesh_steps()); under SF every link
 * of a route is a full message, so a torus costs sum_i (z_i - 1)(t_s + m t_w).
 * root is a rank (row-major, last dimension fastest); ignored on a torus.
 */
TC_API double tc_cost_bcast_mesh(const struct tc_model *md, enum tc_topo_kind kind, int ndims,
                                 const int *dims, int root, double m);

/* [Barnat-IB109]'s step count for mesh: sum_i ceil(log2 dims[i]) (2 log sqrt(p) on a
 * square 2-D mesh, d log p^{1/d} on a k-D cube-shaped one); -1 on bad dims. */
TC_API long tc_cost_bcast_mesh_steps(int ndims, const int *dims);

/* hypercube: binomial spanning tree from any root by XOR relabelling
 * ([Barnat-IB109], ONE-TO-ALL / GENERAL-ONE-TO-ALL): T = d msg(1, m) = d(t_s + m t_w).
 * p must be a power of two. */
TC_API double tc_cost_bcast_hypercube(const struct tc_model *md, int p, double m);

/*
 * binomial: the hypercube tree on any topology, routed ([KKA-I], GENRECDOUBL:
 * ceil(log p) rounds, optimal on EREW PRAM and U_p).  Round i's longest route
 * is hops[i] >= 1 links, i = 0 .. ceil(log2 p)-1 (hops NULL: every route is one
 * link, complete graph or hypercube):
 *     T = sum_i msg(hops[i], m).
 * Link contention between routes of one round is not modelled.
 */
TC_API double tc_cost_bcast_binomial(const struct tc_model *md, int p, double m, const int *hops);

/* [KKA-I]: ceil(log2 p) rounds. */
TC_API long tc_cost_bcast_binomial_steps(int p);

/*
 * dot_allport: all-port dimension-ordered trees ([KKA-I], DOTMESHALLPORTOAB;
 * the same controlled flooding is the all-port SBT on Q_n):
 *     T = (t_s + t_d + mu t_m) exc(s, G) = exc(root) msg(1, m).
 * kind: TC_TOPO_MESH, TC_TOPO_TORUS (the source: source in the middle), RING,
 * CHAIN, or TC_TOPO_HYPERCUBE with dims[0] = d (exc = d).  The message is one
 * packet (mu = m).  md->ports is not consulted: the algorithm is all-port.
 */
TC_API double tc_cost_bcast_dot_allport(const struct tc_model *md, enum tc_topo_kind kind,
                                        int ndims, const int *dims, int root, double m);

/* ------------------------------------------------------------------------ */
/* All-to-one reduce (reduce): the dual of each broadcast ([Barnat-IB109]), plus    */
/* m t_c for every combine on the critical path.                             */
/* ------------------------------------------------------------------------ */

/* linear: the root receives and combines the p-1 messages in turn:
 * sum_k (msg(hops[k], m) + m t_c). */
TC_API double tc_cost_reduce_linear(const struct tc_model *md, int p, double m, const int *hops);
/* ring: (p-1)(msg(1, m) + m t_c). */
TC_API double tc_cost_reduce_ring(const struct tc_model *md, int p, double m);
/* ring_pipelined: every pipeline stage receives and combines one packet:
 * (p-2+r)(msg(1, m/r) + (m/r) t_c). */
TC_API double tc_cost_reduce_ring_pipelined(const struct tc_model *md, int p, double m, long r);
/* As tc_cost_ring_r_opt() for the reduction: the real optimum is
 * sqrt(m (p-2)(t_w + t_c) / t_s) (t_s + t_h under CT); same rounding. */
TC_API long tc_cost_ring_r_opt_reduce(const struct tc_model *md, int p, double m);
/* ring_rd: tc_cost_bcast_ring_rd() + ceil(log2 p) m t_c. */
TC_API double tc_cost_reduce_ring_rd(const struct tc_model *md, int p, double m);
/* chain_rd: tc_cost_bcast_chain_rd() + ceil(log2 p) m t_c. */
TC_API double tc_cost_reduce_chain_rd(const struct tc_model *md, int p, int root, double m);
/* mesh: tc_cost_bcast_mesh() + tc_cost_bcast_mesh_steps() m t_c. */
TC_API double tc_cost_reduce_mesh(const struct tc_model *md, enum tc_topo_kind kind, int ndims,
                                  const int *dims, int root, double m);
/* hypercube: [Barnat-IB109] ALL-TO-ONE, d (msg(1, m) + m t_c). */
TC_API double tc_cost_reduce_hypercube(const struct tc_model *md, int p, double m);
/* binomial: sum_i (msg(hops[i], m) + m t_c). */
TC_API double tc_cost_reduce_binomial(const struct tc_model *md, int p, double m, const int *hops);
/*
 * dot_allport: exc(root)(msg(1, m) + m t_c).  Convention: one combine of m
 * bytes per step on the critical path; a node that receives k partial results
 * in the same all-port step and combines them one by one would pay k m t_c
 * (the sources give no reduction cost for all-port trees).
 */
TC_API double tc_cost_reduce_dot_allport(const struct tc_model *md, enum tc_topo_kind kind,
                                         int ndims, const int *dims, int root, double m);

/* ------------------------------------------------------------------------ */
/* Allreduce                                                                 */
/* ------------------------------------------------------------------------ */

/* reduce_bcast: binomial reduce then binomial broadcast ("twice the
 * broadcast", [Barnat-IB109]) over neighbour links (hypercube, complete graph):
 * 2 ceil(log2 p) msg(1, m) + ceil(log2 p) m t_c.  Any p. */
TC_API double tc_cost_allreduce_reduce_bcast(const struct tc_model *md, int p, double m);
/* hypercube: exchange and combine along each dimension ([Barnat-IB109]):
 * d (msg(1, m) + m t_c) = (t_s + m t_w) log p + m t_c log p. */
TC_API double tc_cost_allreduce_hypercube(const struct tc_model *md, int p, double m);
/*
 * hypercube with fold-in, any p (lib/coll/allreduce/allreduce_hypercube.c):
 * with n = 2^k the largest power of two <= p and D = ceil(log2 (p - n)), the
 * ranks r >= n first send their data to r - n, which combines it, the n
 * first ranks run the exchange above, and r - n sends the result back to r;
 * every transfer between neighbours, full duplex, msg = msg(1, m), C = m t_c:
 *     T = tc_cost_allreduce_hypercube()                        p = 2^d
 *     T = max((k+1)(msg + C), (k+2) msg + (k+1) C - (k - D) t_h) otherwise
 * (t_h only under cut-through: a sender is free t_h before its message
 * arrives, which the longest path of the butterfly gains k - D times; the
 * derivation is in the algorithm's file).  p = 1 costs 0.
 */
TC_API double tc_cost_allreduce_hypercube_fold(const struct tc_model *md, int p, double m);
/*
 * ring: reduce-scatter then allgather of blocks of m/p bytes (DESIGN.md; the
 * sources give no formula; composition of [Barnat-IB109]'s ring formulas):
 *     2 (p-1) msg(1, m/p) + (p-1)(m/p) t_c.
 * m/p is real; an implementation with unequal blocks pays ceil(m/p).
 */
TC_API double tc_cost_allreduce_ring(const struct tc_model *md, int p, double m);
/*
 * mesh: on a k-D mesh or torus, the mesh reduce-scatter then the mesh
 * allgather of blocks of m/p bytes (DESIGN.md catalogue; the composition of
 * [Barnat-IB109]'s mesh formulas, tc_cost_reduce_scatter_mesh() +
 * tc_cost_allgather_mesh() at m/p):
 *     2 t_s sum_i (z_i - 1) + 2 t_w (m/p)(p - 1) + (m/p)(p - 1) t_c
 * (4 t_s (sqrt(p) - 1) + 2 t_w m (p-1)/p + ... on a square 2-D torus).
 * m/p is real; an implementation with unequal blocks pays ceil(m/p).
 */
TC_API double tc_cost_allreduce_mesh(const struct tc_model *md, int ndims, const int *dims, double m);
/*
 * linear: every rank i > 0 sends its m bytes to rank 0, which combines them
 * in rank order and sends the result back to each (the naive all-to-one
 * then one-to-all of [Barnat-IB109]), every rank a neighbour of 0, one port: rank
 * 0's receives complete at msg(1, m), then one every L = t_s + m t_w; its
 * p - 1 combines add (p - 1) m t_c; its sends start L apart, the last
 * arriving msg(1, m) after it started:
 *     T = 2 msg(1, m) + 2 (p - 2) L + (p - 1) m t_c     (p >= 2; 0 for p = 1).
 * md->ports is not consulted (the formula is the one-port one).
 */
TC_API double tc_cost_allreduce_linear(const struct tc_model *md, int p, double m);
/* shm: every rank reduces one slice of count elements of esize bytes out
 * of every rank's buffer (round 0), then sends its slice to every other
 * rank (round 1); all ports, s = ceil(count / p) esize the largest slice:
 *     T = 2 msg(1, s) + (p - 1) s t_c      (p >= 2; 0 for p = 1)
 * (its p - 1 parts arrive at the slice's owner at once, which combines
 * them one after the other).  The all-port form only (one port: NAN). */
TC_API double tc_cost_allreduce_shm(const struct tc_model *md, int p, double count, double esize);
/* shm_flag: every rank reads every rank's whole vector of m bytes at once
 * and combines them one after the other; all ports:
 *     T = msg(1, m) + (p - 1) m t_c        (p >= 2; 0 for p = 1).
 * The all-port form only (one port: NAN). */
TC_API double tc_cost_allreduce_shm_flag(const struct tc_model *md, int p, double m);
/* shm_tree: the p ranks in q = ceil(p / f) groups of consecutive ranks, of
 * at most fanin = f ranks each and sizes differing by at most one (the
 * largest g = ceil(p / q)); every member's m bytes go to its group's leader
 * (its first rank), which reduces them; the leaders exchange their groups'
 * results and each reduces them in rank order; each leader sends the result
 * to its members.  All ports, full duplex:
 *     T = 3 msg(1, m) + (g - 1 + q - 1) m t_c      (q >= 2)
 *     T = 2 msg(1, m) + (p - 1) m t_c              (2 <= p <= f: one group)
 * and 0 for p = 1.  The all-port form only (one port: NAN); NAN for
 * fanin < 2. */
TC_API double tc_cost_allreduce_shm_tree(const struct tc_model *md, int p, double m, int fanin);

/* ------------------------------------------------------------------------ */
/* All-to-all broadcast (allgather)                                          */
/* ------------------------------------------------------------------------ */

/* ring: [Barnat-IB109], T = (t_s + t_w m)(p-1) = (p-1) msg(1, m). */
TC_API double tc_cost_allgather_ring(const struct tc_model *md, int p, double m);
/* chain: [Barnat-IB109], "full-duplex links: n-1 phases, half-duplex: 2(n-1)"
 * (md->duplex); every phase one block of m bytes per direction:
 * T = tc_cost_allgather_chain_steps() msg(1, m). */
TC_API double tc_cost_allgather_chain(const struct tc_model *md, int p, double m);
/* p-1 (full duplex) or 2(p-1) (half duplex); -1 for p < 1. */
TC_API long tc_cost_allgather_chain_steps(int p, enum tc_duplex duplex);
/*
 * mesh: one dimension after another ([Barnat-IB109], two phases on a 2-D mesh);
 * phase i is the ring algorithm along dimension i with blocks of
 * m prod_{j<i} z_j bytes:
 *     T = sum_i (z_i - 1) msg(1, m prod_{j<i} z_j)
 *       = t_s sum_i (z_i - 1) + t_w m (p - 1)                 (SF)
 * which is [Barnat-IB109]'s 2 t_s (sqrt(p) - 1) + t_w m (p - 1) on a square 2-D mesh.
 */
TC_API double tc_cost_allgather_mesh(const struct tc_model *md, int ndims, const int *dims, double m);
/* hypercube: doubling ([Barnat-IB109]): sum_{i=1}^{d} msg(1, 2^{i-1} m)
 * = t_s log p + t_w m (p - 1). */
TC_API double tc_cost_allgather_hypercube(const struct tc_model *md, int p, double m);
/*
 * linear: every rank i > 0 sends its block to rank 0, which then sends the
 * whole result of p m bytes to each ([Barnat-IB109]'s naive all-to-one then
 * one-to-all with concatenation), every rank a neighbour of 0, one port,
 * L_b = t_s + b t_w: rank 0's receives complete at msg(1, m), then one every
 * L_m; its sends start L_{pm} apart, the last arriving msg(1, p m) after it
 * started:
 *     T = msg(1, m) + (p - 2) L_m + msg(1, p m) + (p - 2) L_{pm}   (p >= 2)
 * 0 for p = 1.  md->ports is not consulted (the formula is the one-port one).
 */
TC_API double tc_cost_allgather_linear(const struct tc_model *md, int p, double m);
/* shm: every rank reads every other rank's block straight out of its
 * buffer, one round on the complete graph: tc_cost_direct_round() (all
 * ports msg(1, m); one port (p - 2)(t_s + m t_w) + msg(1, m)). */
TC_API double tc_cost_allgather_shm(const struct tc_model *md, int p, double m);

/* ------------------------------------------------------------------------ */
/* All-to-all reduce (reduce_scatter): as allgather ([Barnat-IB109], "dual"),     */
/* plus the m (p-1) bytes every node combines: + m (p-1) t_c.                */
/* ------------------------------------------------------------------------ */

TC_API double tc_cost_reduce_scatter_ring(const struct tc_model *md, int p, double m);
TC_API double tc_cost_reduce_scatter_mesh(const struct tc_model *md, int ndims, const int *dims,
                                          double m);
TC_API double tc_cost_reduce_scatter_hypercube(const struct tc_model *md, int p, double m);
/* direct: the direct round (tc_cost_direct_round()) in which every rank
 * sends each other rank its block of m bytes, plus the p - 1 blocks every
 * rank combines into its own: tc_cost_direct_round() + m (p - 1) t_c. */
TC_API double tc_cost_reduce_scatter_direct(const struct tc_model *md, int p, double m);
/* shm: every rank reduces its own block of m bytes straight out of every
 * rank's buffer, in rank order, one round on the complete graph; all ports
 * (its p - 1 parts arrive at once, combined one after the other):
 *     T = msg(1, m) + (p - 1) m t_c        (p >= 2; 0 for p = 1).
 * The all-port form only (one port: NAN). */
TC_API double tc_cost_reduce_scatter_shm(const struct tc_model *md, int p, double m);

/* ------------------------------------------------------------------------ */
/* Prefix sums (scan, exscan)                                                */
/* ------------------------------------------------------------------------ */

/*
 * hypercube: [Barnat-IB109], T = (t_s + t_w m) log p for the exchange; in every
 * step the node with the highest id combines the received message into both
 * its outgoing sum and its result (origin tracking), 2 m t_c per step:
 *     T = d (msg(1, m) + 2 m t_c).
 */
TC_API double tc_cost_scan_hypercube(const struct tc_model *md, int p, double m);
/* ring (a chain 0 -> p-1; no formula in the sources): every node receives the
 * prefix, combines it with its value, forwards it: (p-1)(msg(1, m) + m t_c). */
TC_API double tc_cost_scan_ring(const struct tc_model *md, int p, double m);
/* exscan hypercube: as scan, but the first value received into the empty
 * exclusive result is a copy: d msg(1, m) + (2d - 1) m t_c (0 for p = 1). */
TC_API double tc_cost_exscan_hypercube(const struct tc_model *md, int p, double m);
/* exscan ring: node p-1 does not combine: (p-1) msg(1, m) + (p-2) m t_c. */
TC_API double tc_cost_exscan_ring(const struct tc_model *md, int p, double m);

/* ------------------------------------------------------------------------ */
/* Scatter and gather (gather = the dual, same cost)                         */
/* ------------------------------------------------------------------------ */

/* linear: sum_k msg(hops[k], m), as tc_cost_bcast_linear(). */
TC_API double tc_cost_scatter_linear(const struct tc_model *md, int p, double m, const int *hops);
/* ring: pipelined personalised scatter ([Goubault-ring], slides 14-19):
 * (p-1) msg(1, m) = (p-1)(t_s + m t_w). */
TC_API double tc_cost_scatter_ring(const struct tc_model *md, int p, double m);
/* hypercube: halving ([Barnat-IB109]; [KKA-I] "3-step OAS in Q_3"):
 * sum_{i=1}^{d} msg(1, 2^{d-i} m) = t_s log p + t_w m (p - 1). */
TC_API double tc_cost_scatter_hypercube(const struct tc_model *md, int p, double m);
/*
 * tree_allport: all-port non-combining spanning trees D_0..D_{n-1} on Q_n
 * ([KKA-I], "optimal OAS tree", table for n = 6), the root feeding the n
 * subtrees in parallel, farthest packet first:
 *     T = ceil((p - 1)/n) msg(1, m),
 * assuming subtrees whose sizes differ by at most one (as the source's table);
 * this meets Lemma 1's bound rho_OAS(Q_n).  p = 2^n.
 */
TC_API double tc_cost_scatter_tree_allport(const struct tc_model *md, int p, double m);
/*
 * tree_allport_comb: the same trees under a combining model ([KKA-I],
 * Lemma 8's setting), one message per tree edge carrying the blocks of the
 * child's whole subtree, sent as soon as the parent has its own:
 *     T = max_{h=1..n} ( h msg(1, 0) + S_h m t_w ),
 * S_h = path_blocks[h-1], the largest number of blocks moved along a path
 * from the root to a node of depth h (the sum of the subtree sizes on it;
 * the generator's tc__f_ computes it from its trees).  Lemma 8's bound is
 * rho_OAB t_s + ceil((p-1)/n) m t_w (+ n t_h under WH), rho_OAB = n under
 * SF: the start-ups meet it under SF, the transfer term does not (S_n = 6,
 * 10, 19, 32 against ceil((p-1)/n) = 3, 4, 7, 11 for n = 3 .. 6: every
 * level forwards its subtree store-and-forward; the header of
 * scatter_tree_allport_comb.c).  p = 2^n; NAN without path_blocks (p > 1).
 */
TC_API double tc_cost_scatter_tree_allport_comb(const struct tc_model *md, int p, double m,
                                                const long *path_blocks);

/* shm: every rank reads its block straight out of the root's buffer, one
 * round on the complete graph: tc_cost_direct_round() (all ports msg(1, m);
 * one port, the root's p - 1 sends back to back, (p - 2)(t_s + m t_w) +
 * msg(1, m)).  gather shm (the root reads every rank's block) costs the
 * same: its p - 1 receives at once, or back to back under one port. */
TC_API double tc_cost_scatter_shm(const struct tc_model *md, int p, double m);

TC_API double tc_cost_gather_linear(const struct tc_model *md, int p, double m, const int *hops);
TC_API double tc_cost_gather_ring(const struct tc_model *md, int p, double m);
TC_API double tc_cost_gather_hypercube(const struct tc_model *md, int p, double m);
TC_API double tc_cost_gather_tree_allport(const struct tc_model *md, int p, double m);
TC_API double tc_cost_gather_tree_allport_comb(const struct tc_model *md, int p, double m,
                                               const long *path_blocks);
TC_API double tc_cost_gather_shm(const struct tc_model *md, int p, double m);

/* ------------------------------------------------------------------------ */
/* All-to-all personalised (alltoall)                                        */
/* ------------------------------------------------------------------------ */

/* ring: [Barnat-IB109], sum_{i=1}^{p-1} msg(1, m (p - i)) = (t_s + t_w m p/2)(p - 1). */
TC_API double tc_cost_alltoall_ring(const struct tc_model *md, int p, double m);
/* mesh: one phase per dimension, each the ring algorithm on z_i nodes with
 * blocks of m p / z_i bytes ([Barnat-IB109]):
 *     T = sum_i (z_i - 1) t_s + (t_w m p / 2) sum_i (z_i - 1)   (SF)
 * = (2 t_s + t_w m p)(sqrt(p) - 1) on a square 2-D mesh. */
TC_API double tc_cost_alltoall_mesh(const struct tc_model *md, int ndims, const int *dims, double m);
/* hypercube: dimension exchange ([Barnat-IB109]): d msg(1, m p / 2)
 * = (t_s + t_w m p/2) log p.  The local reshuffle the source mentions is not
 * costed. */
TC_API double tc_cost_alltoall_hypercube(const struct tc_model *md, int p, double m);
/*
 * ecube: pairwise exchange with partner id XOR i, i = 1 .. p-1, e-cube routed
 * ([Barnat-IB109], ALL-TO-ALL-PERSONAL): T = (t_s + t_w m)(p - 1).  The route
 * of step i has popcount(i) links and sum_i popcount(i) = d p / 2, so
 *     CT: T = (p - 1)(t_s + t_w m) + t_h d p / 2    (the source's, with t_h = 0)
 *     SF: T = (d p / 2)(t_s + t_w m)                 (every link a full hop)
 */
TC_API double tc_cost_alltoall_ecube(const struct tc_model *md, int p, double m);
/*
 * pairwise: in round k = 1 .. p - 1 every rank i sends its block of m bytes
 * for (i + k) mod p, every partner a neighbour (a complete graph), full
 * duplex, one send and one receive per rank and round:
 *     T = (p - 1) msg(1, m).
 * The e-cube exchange on a complete graph; the variable-count collectives
 * (allgatherv, gatherv, scatterv, alltoallv) with equal blocks.
 */
TC_API double tc_cost_alltoall_pairwise(const struct tc_model *md, int p, double m);
/*
 * direct (allgather, alltoall, reduce_scatter): one round in which every rank
 * sends m bytes to each of the p - 1 others, on a complete graph under full
 * duplex, each rank sending in the order r+1, r+2, ... so that every
 * receive finds its port free: all-port msg(1, m); one-port the p - 1 sends
 * back to back, (p - 2)(t_s + m t_w) + msg(1, m) (the source's (p - 1)(t_s +
 * t_w m), with one t_h).  p = 1 costs 0.  Without the combine time
 * (tc_cost_reduce_scatter_direct() adds it).
 */
TC_API double tc_cost_direct_round(const struct tc_model *md, int p, double m);
/* shm: every rank reads its block straight out of every other rank's
 * buffer, one round on the complete graph: tc_cost_direct_round(). */
TC_API double tc_cost_alltoall_shm(const struct tc_model *md, int p, double m);

/* ------------------------------------------------------------------------ */
/* Circular q-shift (shift)                                                  */
/* ------------------------------------------------------------------------ */

/* ring: [Barnat-IB109], shorter direction, one neighbour step at a time:
 * min(q', p - q') msg(1, m) with q' = q mod p (any sign of q). */
TC_API double tc_cost_shift_ring(const struct tc_model *md, int p, long q, double m);

/*
 * torus (2-D, rows x cols, rank = row * cols + col): [Barnat-IB109] gives
 * T = (t_s + t_w m) sqrt(p) ("the farthest shift in one dimension is
 * sqrt(p)/2").  Implemented as (floor(rows/2) + floor(cols/2)) msg(1, m),
 * the source's value when rows = cols is even.  Difference: [Gergel-shift]'s
 * algorithm (row shift, compensation, column shift) may need one more step
 * for the compensation; see tc_cost_shift_torus_q().
 */
TC_API double tc_cost_shift_torus(const struct tc_model *md, int rows, int cols, double m);
/*
 * Steps of [Gergel-shift]'s torus algorithm for a given q (q' = q mod p,
 * qr = q' mod cols, qc = q' / cols): the row shift by qr the shorter way
 * (min(qr, cols - qr) steps), one compensation step moving the blocks that
 * crossed the row boundary one row further if qr != 0, then the column shift
 * by qc the shorter way (min(qc, rows - qc)).  [Barnat-IB109]'s 4x4, q = 5 example:
 * 1 + 1 + 1 = 3 steps.  -1 on bad arguments.
 */
TC_API long tc_cost_shift_torus_steps(int rows, int cols, long q);
/* tc_cost_shift_torus_steps() msg(1, m). */
TC_API double tc_cost_shift_torus_q(const struct tc_model *md, int rows, int cols, long q, double m);

/*
 * hypercube_gray: SF over the binary-reflected Gray-code ring; q written as a
 * sum of powers of two, one stage per term; a stage of 2^i, i >= 1, crosses 2
 * links, a stage of 1 one link ([Barnat-IB109], [Gergel-shift]).  [Barnat-IB109]'s bound:
 *     T = (t_s + m t_w) 2 log p;   with backward shifts  T = (t_s + m t_w) log p
 * (at most log p / 2 signed terms).  Implemented as H hops and S stages,
 * H = 2d, S = d (forward) or H = d, S = ceil(d/2) (backward):
 *     SF: H (t_s + m t_w)     CT: S (t_s + m t_w) + H t_h.
 * backward: non-zero to allow terms of either sign.
 */
TC_API double tc_cost_shift_hypercube_gray(const struct tc_model *md, int p, double m, int backward);
/*
 * Links crossed, stage after stage, for a given q: forward, the binary digits
 * of q mod p (digit 0: 1 link, digit i >= 1: 2 links; at most 2d - 1,
 * [Gergel-shift]'s text); backward, the signed-digit representation of q modulo p
 * (digits -1, 0, 1 at positions 0 .. d-1) with the fewest links, by dynamic
 * programming over the carries.  -1 on bad arguments.
 */
TC_API long tc_cost_shift_hypercube_gray_hops(int p, long q, int backward);
/* The cost of the stages of tc_cost_shift_hypercube_gray_hops()' decomposition
 * (backward: the representation minimising this cost), each stage one routed
 * message of msg(1, m) or msg(2, m). */
TC_API double tc_cost_shift_hypercube_gray_q(const struct tc_model *md, int p, long q, double m,
                                             int backward);

/* gamma(q) of [Gergel-shift]: the largest j such that 2^j divides q; -1 for q = 0. */
TC_API int tc_cost_gamma(long q);
/*
 * hypercube_ct: every node sends straight to its destination, e-cube routed,
 * cut-through ([Gergel-shift], (3.21)): the longest route has d - gamma(q) links,
 *     T = t_s + t_w m + t_h (log p - gamma(q))   = msg(d - gamma(q), m) (CT).
 * Under SF the same routes cost (d - gamma(q))(t_s + t_w m).  q mod p = 0
 * costs 0.
 */
TC_API double tc_cost_shift_hypercube_ct(const struct tc_model *md, int p, long q, double m);

/* ------------------------------------------------------------------------ */
/* Gray-code permutations (gray2binary, binary2gray), [HJR-TR-20-92]                */
/* ------------------------------------------------------------------------ */
/*
 * [HJR-TR-20-92] writes tau for the start-up and t_c for the transfer time per
 * byte: here tau = md->ts_ns and the paper's t_c = md->tw_ns (NOT md->tc_ns,
 * the combine time).  n = log2 p is the cube dimension, K the bytes per node.
 * All steps are nearest-neighbour exchanges, msg(1, .) each.  For n <= 1 the
 * permutation is the identity and costs 0; NAN for n < 0 or K < 0.
 * The paper derives the binary-to-Gray algorithms of the same complexities;
 * the binary2gray functions return the same values.
 */
/* gb1: (n - 1)(tau + K t_c)          (1) */
TC_API double tc_cost_gray2binary_gb1(const struct tc_model *md, int n, double K);
/* gb2: (n + 1)(tau + (K/2) t_c)      (2) */
TC_API double tc_cost_gray2binary_gb2(const struct tc_model *md, int n, double K);
/* gb3: n (tau + (K/2) t_c)           (3), n >= 2 */
TC_API double tc_cost_gray2binary_gb3(const struct tc_model *md, int n, double K);
/* direct: every block straight to its destination over edge-disjoint
 * paths (section 3.5): tau + K t_c with circuit switching, i.e.
 * msg(n - 1, K) (longest route n - 1 links; SF: (n - 1)(tau + K t_c)). */
TC_API double tc_cost_gray2binary_direct(const struct tc_model *md, int n, double K);
/* Lemma 3: the SF one-port lower bound max((n-1) tau, (n-1)(K/2) t_c). */
TC_API double tc_cost_gray2binary_bound(const struct tc_model *md, int n, double K);

TC_API double tc_cost_binary2gray_gb1(const struct tc_model *md, int n, double K);
TC_API double tc_cost_binary2gray_gb2(const struct tc_model *md, int n, double K);
TC_API double tc_cost_binary2gray_gb3(const struct tc_model *md, int n, double K);
TC_API double tc_cost_binary2gray_direct(const struct tc_model *md, int n, double K);

/* ------------------------------------------------------------------------ */
/* Multicast and barrier                                                     */
/* ------------------------------------------------------------------------ */

/* [KKA-I]: recursive doubling on the dimension-ordered chain of the source
 * and the |M| = nmembers destinations: ceil(log2(|M| + 1)) steps
 * (the source's 2-D mesh example, 7 destinations: 3 steps).  -1 for nmembers < 0. */
TC_API long tc_cost_multicast_steps(long nmembers);
/*
 * The multicast along a critical chain of tc_cost_multicast_steps() routed
 * messages whose routes total path_hops links (>= steps under SF, >= 1 under
 * CT, where a sender is free before its message arrives; the caller knows the
 * destinations; Lemma 5's gamma = exc(s, G, M) is a lower bound for it):
 *     CT: steps (t_s + m t_w) + path_hops t_h      SF: path_hops (t_s + m t_w).
 * nmembers = 0 costs 0.
 */
TC_API double tc_cost_multicast(const struct tc_model *md, long nmembers, double m, long path_hops);

/* dissemination: ceil(log2 p) rounds (DESIGN.md "log p steps"). */
TC_API long tc_cost_barrier_dissemination_steps(int p);
/* Every round one message of m bytes to a neighbour (complete graph):
 * ceil(log2 p) msg(1, m). */
TC_API double tc_cost_barrier_dissemination(const struct tc_model *md, int p, double m);
/* allreduce: log p exchange steps for p a power of two ([Barnat-IB109] allreduce),
 * otherwise reduce then broadcast over the binomial tree, 2 ceil(log2 p). */
TC_API long tc_cost_barrier_allreduce_steps(int p);
/* tc_cost_allreduce_hypercube() for p a power of two, otherwise
 * tc_cost_allreduce_reduce_bcast(), with m-byte tokens.  The barrier of
 * lib/coll/barrier/barrier_allreduce.c runs the fold-in allreduce instead
 * for p not a power of two: tc_cost_allreduce_hypercube_fold() at m = 0. */
TC_API double tc_cost_barrier_allreduce(const struct tc_model *md, int p, double m);
/*
 * linear (gather then release, every rank a neighbour of rank 0): rank 0
 * takes p - 1 messages of m bytes, then sends p - 1 back,
 *     one port:  T = 2 msg(1, m) + 2 (p - 2)(t_s + m t_w)
 *                (tc_cost_allreduce_linear() without the combines)
 *     all ports: T = 2 msg(1, m)       (the p - 1 of each round at once)
 * for p >= 2; 0 for p = 1.
 */
TC_API double tc_cost_barrier_linear(const struct tc_model *md, int p, double m);
/* shm: every rank raises its flag and reads every other one, one round of
 * empty messages on the complete graph: tc_cost_direct_round() at m = 0
 * (all ports msg(1, 0); one port (p - 2) t_s + msg(1, 0)). */
TC_API double tc_cost_barrier_shm(const struct tc_model *md, int p);
/* shm_tree: tc_cost_allreduce_shm_tree() of empty messages: members to
 * their group's leader, the leaders among themselves, the leaders back to
 * their members; all ports, full duplex: 3 msg(1, 0) when p > fanin,
 * 2 msg(1, 0) for 2 <= p <= fanin, 0 for p = 1.  NAN under one port and
 * for fanin < 2. */
TC_API double tc_cost_barrier_shm_tree(const struct tc_model *md, int p, int fanin);

/* ------------------------------------------------------------------------ */
/* Lower bounds ([KKA-I], lemmas 1, 2, 4, 5, 7, 8)                          */
/* ------------------------------------------------------------------------ */

enum tc_lb_coll {
	TC_LB_OAB, /* one-to-all broadcast */
	TC_LB_AAB, /* all-to-all broadcast (allgather) */
	TC_LB_OAS, /* one-to-all scatter */
	TC_LB_AAS, /* all-to-all scatter (alltoall) */
};

struct tc_lower_bound {
	long steps;     /* rho: steps (SF: a step is a set of concurrent hops between
	                   neighbours; WH: a set of link-disjoint paths) */
	long long work; /* eta: communication work, packet-hops (SF) or
	                   packet-edges (WH) */
	long long path; /* gamma: lower bound on the links of the longest chain of
	                   routes, charged t_h each under CT */
	double time_ns; /* tau: time lower bound */
};

/*
 * Graph quantities the bounds use, for kind + dims (conventions of
 * tc_lower_bound()) and root (< 0: no particular root).
 */
struct tc_lb_graph {
	long nodes;      /* N */
	long long links; /* undirected links */
	int min_degree;  /* delta */
	int max_degree;  /* Delta */
	int root_degree; /* degree of root (Delta when root < 0) */
	long diameter;
	long exc;            /* exc(root, G); the radius when root < 0 */
	long long dist_root; /* sum_v dist(root, v); its minimum over roots when
	                         root < 0 */
	long long dist_all;  /* sum_{u, v} dist(u, v) */
};

/* Fills *out.  0, TC_EINVAL (null pointer), TC_ETOPO (bad ndims or dims, more
 * than TC_TOPO_MAX_NODES nodes), TC_EROOT (root >= N), TC_ENOTSUP
 * (TC_TOPO_TREE: its arity is not part of the arguments). */
TC_API int tc_lb_graph_metrics(enum tc_topo_kind kind, int ndims, const int *dims, int root,
                               struct tc_lb_graph *out);

/*
 * Lower bounds for collective c on the topology kind + dims under the model
 * md (ports, duplex, switching, combining).  Topology arguments: ring, chain,
 * complete, star: ndims = 1, dims[0] = p; hypercube: ndims = 1, dims[0] = d;
 * mesh, torus: ndims in 1 .. TC_TOPO_MAX_DIMS and the sizes.  m is the packet
 * (block) size in bytes.
 *
 * Let N nodes; the ports a node may use in one step are 1 under
 * TC_PORTS_ONE, else its degree, hence three values: d_grow = 1 or Delta (how
 * fast the informed set can grow), d_root = 1 or the root's degree (what the
 * root can inject; Delta with no root), d_recv = 1 or delta (what every node
 * can receive); exc = exc(root) (the radius with no root, so the bound holds
 * for every root); WH = md->switching == TC_SWITCH_CT.  Time: every step costs at
 * least t_s + m t_w, and under WH the longest chain of routes pays gamma t_h
 * (under SF the model charges hops as full messages, so no t_h term).
 *
 * OAB, Lemma 2 (SF) and Lemma 4 (WH), "d-port network":
 *   eta = N - 1; gamma = exc;
 *   rho = max(exc, ceil(log_{d_grow+1} N)) (SF; the source writes
 *         log_{d+1} |V| without the ceiling, steps are integers)
 *   rho = ceil(log_{d_grow+1} N) (WH);
 *   tau = rho (t_s + m t_w) + [WH] gamma t_h.
 * OAS, non-combining (md->combining == 0), Lemma 7:
 *   rho = ceil((N-1)/d_root), and under SF at least exc;
 *   gamma = max(exc, ceil((N-1)/d_root)); tau = rho (t_s + m t_w) + [WH] gamma t_h.
 * OAS, combining, Lemma 8:
 *   rho = rho_OAB; gamma = exc;
 *   tau = rho t_s + ceil((N-1)/d_root) m t_w + [WH] gamma t_h.
 * OAS work (both): eta = sum_v dist(root, v) (Lemma 1, item 3, generalised:
 *   every personalised packet crosses at least its distance).
 * AAB and AAS (Lemma 1 for the all-port SF non-combining Q_n; its counting
 * arguments are applied to every G here): with C the packet-hops one step can
 * carry -- under WH the directed links (the links under half duplex), under
 * SF also at most N packets per step with one port --
 *   AAB: eta = N (N - 1)                 AAS: eta = sum_{u,v} dist(u, v)
 *   non-combining: rho = max(ceil((N-1)/d_recv), ceil(eta / C), [SF] diam),
 *                  tau = rho (t_s + m t_w) + [WH] diam t_h;
 *   combining:     rho = max(ceil(log_{d_grow+1} N), [SF] diam),
 *                  tau = rho t_s + max(ceil((N-1)/d_recv), eta / C) m t_w
 *                        + [WH] diam t_h;
 *   gamma = diam.
 * Lemma 1's values come out exactly for Q_n, all-port, SF, non-combining:
 *   rho: n, ceil((2^n-1)/n), ceil((2^n-1)/n), 2^{n-1};
 *   eta: 2^n - 1, 2^n (2^n - 1), n 2^{n-1}, n 2^{2n-1}.
 * N = 1 gives all zeros.
 *
 * Like the lemmas, the bounds assume that a message of m bytes travels as one
 * packet (the source's mu = m): an algorithm that cuts it into r packets
 * (tc_cost_bcast_ring_pipelined()) can beat the m t_w terms.
 *
 * tc_lower_bound() takes no root (the bound for the best root, valid for
 * every root); tc_lower_bound_root() uses exc(root) and the root's degree for
 * OAB and OAS (root is ignored for AAB and AAS).
 * Returns 0, or TC_EINVAL (null pointer, m < 0), TC_ETOPO (bad dims),
 * TC_EROOT, TC_ENOTSUP (TC_TOPO_TREE, unknown c).
 */
TC_API int tc_lower_bound(enum tc_lb_coll c, enum tc_topo_kind kind, int ndims, const int *dims,
                          double m, const struct tc_model *md, struct tc_lower_bound *out);
TC_API int tc_lower_bound_root(enum tc_lb_coll c, enum tc_topo_kind kind, int ndims,
                               const int *dims, int root, double m, const struct tc_model *md,
                               struct tc_lower_bound *out);

/*
 * A lower bound that holds for every algorithm, however it cuts the data
 * into messages (the lemmas above assume each message travels whole, which
 * a pipelined or reduce-scatter algorithm beats), under the logical clock
 * of lib/model/clock.h.  Let r = 1 (TC_PORTS_ONE) or the largest degree
 * Delta (all-port), r_root = 1 or the root's degree, E the distance the
 * data must cross: exc(root) for OAB and OAS (the radius when root < 0),
 * the diameter for AAB and AAS.  Then
 *     tau = max( ceil(log_{r'+1} N) t_s,                     (r' = 1 or Delta)
 *                E t_s + (m / r) t_w          (SF)
 *                t_s + (m / r) t_w + E t_h    (CT),
 *                t_s + (V / r) t_w )
 * with V the bytes a port must carry: m (OAB), (N - 1) m over r_root for
 * OAS (the root sends or receives every block), (N - 1) m for AAB and AAS
 * (every node receives p - 1 blocks, or, reducing, sends its data for
 * p - 1 blocks).  The reductions and scans (OAB without a root) need the
 * data of the farthest node, the radius at least away.  steps: the larger
 * of the two step counts (the log one, and E under SF); path: E; work: 0.
 * Same arguments and errors as tc_lower_bound_root(); root < 0: no root.
 */
TC_API int tc_lower_bound_any(enum tc_lb_coll c, enum tc_topo_kind kind, int ndims, const int *dims,
                              int root, double m, const struct tc_model *md, struct tc_lower_bound *out);

/*
 * Multicast from s to |M| = nmembers destinations in a d-port WH network,
 * Lemma 5 ([KKA-I]): eta = |M|, rho = ceil(log_{d+1}(|M| + 1)),
 * gamma = exc_m = exc(s, G, M) (the caller's: the farthest destination),
 * tau = rho (t_s + m t_w) + gamma t_h.  ports >= 1.  0, TC_EINVAL.
 */
TC_API int tc_lower_bound_multicast(long nmembers, int ports, long exc_m, double m,
                                    const struct tc_model *md, struct tc_lower_bound *out);

#ifdef __cplusplus
}
#endif
#endif /* TOPOCOLL_COST_H */
