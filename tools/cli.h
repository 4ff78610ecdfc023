/* SPDX-License-Identifier: MIT */
/*
 * tools/cli.h - what the files of the topocoll tool share: error reporting,
 * option and size parsing, the model flags, topology resolution, a small JSON
 * writer, running external programs (dot, gnuplot) and the run engine.
 *
 * Conventions of every subcommand: it returns the process exit status,
 * CLI_OK (0), CLI_FAIL (1, failure while running) or CLI_USAGE (2, bad
 * input); a non-zero status comes with exactly one line on stderr, printed
 * by cli_usage() or cli_fail().  Results go to stdout, progress to stderr.
 *
 * Not thread-safe: the tool is single-threaded except inside tc_run.
 */
#ifndef TC_TOOLS_CLI_H
#define TC_TOOLS_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "topocoll.h"
#include "topocoll/cost.h"

#define CLI_OK 0
#define CLI_FAIL 1
#define CLI_USAGE 2

#if defined(__GNUC__)
#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLI_PRINTF(a, b)
#endif

/* One line "topocoll: MESSAGE" on stderr; return CLI_USAGE / CLI_FAIL. */
int cli_usage(const char *fmt, ...) CLI_PRINTF(1, 2);
/* Non-zero: cli_usage and cli_fail print nothing (the processes of an MPI
 * job other than process 0, which speaks for them all). */
extern int cli_msg_quiet;
/* Whether a command line asks for --engine mpi (never with --help). */
int cli_wants_mpi(int argc, char **argv);
int cli_fail(const char *fmt, ...) CLI_PRINTF(1, 2);

/* ---- subcommands ------------------------------------------------------- */

struct cli_cmd {
	const char *name;
	int (*fn)(int argc, char **argv); /* argv[0] is the first option */
	const char *summary;
	const char *help;
};
/* The table of subcommands (topocoll.c), NULL-terminated. */
extern const struct cli_cmd cli_cmds[];

int cmd_predict(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_topo(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_steps(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
extern const char predict_help[], run_help[], topo_help[], sweep_help[], steps_help[], trace_help[],
        calibrate_help[];

/* ---- option parsing ---------------------------------------------------- */

/* Is argv[i] "--help" or "-h"? */
int cli_is_help(const char *arg);

/*
 * Matches argv[*i] against option `name` ("--ts"), written "--ts VALUE" or
 * "--ts=VALUE".  Returns 0 when it is another option, 1 with *val set (and *i
 * moved past the value), or CLI_USAGE (message printed) when the value is
 * missing, or when the option was given before (unless cli_opt_last_wins).
 */
int cli_opt(int argc, char **argv, int *i, const char *name, const char **val);
/* Non-zero: an option given twice takes its last value instead (tcmpirun,
 * whose callers give their defaults first and override them after). */
extern int cli_opt_last_wins;

/* Unknown option or stray argument of subcommand cmd: prints and returns
 * CLI_USAGE. */
int cli_unknown(const char *cmd, const char *arg);

/*
 * Sizes in bytes: digits with an optional binary suffix K, M, G, T (also
 * written Ki, Mi, Gi, Ti, with an optional B: 4K = 4Ki = 4KiB = 4096).
 * Rejects signs, fractions, garbage and values above `max`.  Returns 0 or
 * CLI_USAGE with one line naming `what` (e.g. "--bytes").
 */
int cli_parse_size(const char *what, const char *s, uint64_t max, uint64_t *out);
/* Writes a size the way cli_parse_size reads it when exact (4096 -> "4K"). */
const char *cli_size_str(uint64_t v, char *buf, size_t len);
/* A size for people: "64 B", "4 KiB", "1000 B", "16 MiB". */
const char *cli_bytes(uint64_t v, char *buf, size_t len);
/* Integer in [lo, hi]; 0 or CLI_USAGE. */
int cli_parse_long(const char *what, const char *s, long lo, long hi, long *out);
/* A node number of t, 0 .. p - 1; t NULL (not known yet): of any topology,
 * 0 .. TC_TOPO_MAX_NODES - 1.  0 or CLI_USAGE with the range. */
int cli_parse_node(const char *what, const char *s, const struct tc_topo *t, long *out);
/* v must be a (*out = 0) or b (*out = 1); else a usage error naming what. */
int cli_choice(const char *what, const char *v, const char *a, const char *b, int *out);
/* Finite double in [lo, hi]; 0 or CLI_USAGE. */
int cli_parse_double(const char *what, const char *s, double lo, double hi, double *out);

/* Splits a comma-separated list in place; returns the count (at most max) or
 * -1 when there are more, or an item is empty. */
int cli_split(char *s, char **items, int max);

/* ---- the communication model ------------------------------------------ */

struct cli_model {
	struct tc_model md;
	int packets; /* --packets R (0: r_opt) */
	int set_mu;
};
void cli_model_init(struct cli_model *m);
/*
 * Consumes a model option at argv[*i]: --ts --tw --th --tc --mu --ports
 * --duplex --switching --combining --packets.  Returns 0 (not a model option),
 * 1 (consumed) or CLI_USAGE.
 */
int cli_model_opt(int argc, char **argv, int *i, struct cli_model *m);
/* The model options, for help texts. */
#define CLI_MODEL_HELP                                                             \
	"model options (defaults in brackets):\n"                                  \
	"  --ts NS           start-up time per message, ns [1000]\n"               \
	"  --tw NS           transfer time per byte, ns [1]\n"                     \
	"  --th NS           time per hop (cut-through), ns [0]\n"                 \
	"  --tc NS           combine time per byte of a reduction, ns [0]\n"       \
	"  --mu BYTES        packet size mu [runtime default]\n"                   \
	"  --ports one|all   1-port or all-port nodes [one]\n"                     \
	"  --duplex full|half  links [full]\n"                                     \
	"  --switching sf|ct   store-and-forward or cut-through (wormhole) [sf]\n" \
	"  --combining on|off  nodes may merge packets [on]\n"                     \
	"  --packets R       ring_pipelined: number of packets [r_opt]\n"
/* --packets against a block of bytes of dt: at most its elements (1 for
 * none).  0 or CLI_USAGE (printed). */
int cli_packets_check(const struct cli_model *m, uint64_t bytes, enum tc_dtype dt);
/* Writes the model as a JSON object under key "model". */
struct cli_json;
void cli_model_json(struct cli_json *w, const struct cli_model *m);

/* ---- topologies, collectives, datatypes -------------------------------- */

/*
 * Resolves a topology: a full spec ("ring:16", "torus:4x4") or a family
 * ("ring", "hypercube", "mesh", "torus", "tree:K", ...) with p (p <= 0: not
 * given).  A family takes p: hypercube needs a power of two, mesh and torus
 * the most square a x b with a, b >= 2, tree:K is K-ary (tree alone:
 * binary).  A full spec with p > 0 must have p nodes.  On success *out is
 * owned by the caller (tc_topo_destroy).  Returns 0 or CLI_USAGE.
 */
int cli_topo(const char *spec, long p, struct tc_topo **out);
/* The canonical spec of t in a static buffer (overwritten by the next call). */
const char *cli_topo_name(const struct tc_topo *t);

/* Parses --coll; 0 or CLI_USAGE listing the collectives. */
int cli_coll(const char *s, enum tc_coll *out);
/* "bcast, reduce, ...": the registry's collectives (tc_coll_name over
 * TC_COLL_COUNT) whose flags include all of `flags` (0: every one). */
const char *cli_coll_list(unsigned flags, char *buf, size_t len);
/* Buffer sizes of a call with blocks of m bytes on p ranks, from the shape
 * flags: the bytes of rank r's send and receive buffers (0: none). */
uint64_t cli_send_bytes(enum tc_coll c, int p, int root, int r, uint64_t m);
uint64_t cli_recv_bytes(enum tc_coll c, int p, int root, int r, uint64_t m);
/* Whether rank r takes part with its buffer: always, except in a multicast,
 * where only the root and members[0 .. n) do. */
int cli_takes_part(enum tc_coll c, int root, const int *members, int n, int r);
/* Parses --members: a comma list of ranks and ranges (3,5-9), each in
 * [0, p); no duplicates; s NULL (no --members): every rank.  *out is
 * malloc'ed.  0, CLI_USAGE or CLI_FAIL (printed). */
int cli_parse_members(const char *s, int p, int **out, int *n);
/* The rank whose block rank r receives in a permutation collective (shift
 * by q, gray2binary, binary2gray); r itself for the others.  gray_ring: the
 * shift counts positions of the Gray-code ring (a hypercube's, shift_ring). */
int cli_perm_source(enum tc_coll c, int p, long q, int gray_ring, int r);

/*
 * Writes a help text, expanding what comes from the registries:
 * "@COLLS@" the collectives, "@ROOTED@" the rooted ones, "@REDUCING@" the
 * reducing ones (comma lists, wrapped to 79 columns under the column of the
 * placeholder), "@ALGS@" one line per collective with its algorithms
 * (tc_alg_name), indented like the placeholder.
 */
void cli_help_print(FILE *f, const char *text);
/*
 * The variable-count collectives (TC_CF_VCOUNT; cli_vcount.c).  Their counts,
 * v, are in elements, as struct tc_call takes them: p numbers (allgatherv,
 * gatherv, scatterv: rank i's block) or p * p (alltoallv, row-major: what i
 * sends to j); every buffer packed, blocks in rank order.
 */
/* Parses --counts: a comma list of exactly that many numbers, uniform:N (every
 * block N) or ramp (rank i's block i + 1; alltoallv: i to j, i + j + 1), each
 * at most TC_MAX_MESSAGE / es.  *out allocated.  0 or CLI_USAGE (printed). */
int cli_vcounts_parse(const char *s, enum tc_coll c, int p, size_t es, size_t **out);
/* Every block elems elements (allocated; NULL: out of memory). */
size_t *cli_vcounts_uniform(enum tc_coll c, int p, size_t elems);
/* call with v as its counts or matrix (a v-collective; else call as is). */
struct tc_call cli_vcall(struct tc_call call, const size_t *v);
/* Elements rank i sends to j, and their offset (elements) in i's send
 * buffer and in j's receive buffer; the buffers' sizes (elements). */
uint64_t cli_v_elems(enum tc_coll c, int p, int root, const size_t *v, int i, int j);
uint64_t cli_v_soff(enum tc_coll c, int p, int root, const size_t *v, int i, int j);
uint64_t cli_v_roff(enum tc_coll c, int p, int root, const size_t *v, int i, int j);
uint64_t cli_v_send_elems(enum tc_coll c, int p, int root, const size_t *v, int r);
uint64_t cli_v_recv_elems(enum tc_coll c, int p, int root, const size_t *v, int r);
/* The largest count. */
uint64_t cli_v_max_block(enum tc_coll c, int p, const size_t *v);
/* "1,2,3" (",..." when it does not fit), into buf. */
const char *cli_vcounts_str(enum tc_coll c, int p, const size_t *v, char *buf, size_t len);

/* "a, b, c": the registry's algorithms of coll, into buf. */
const char *cli_alg_list(enum tc_coll coll, char *buf, size_t len);
/* Index of alg in the registry of coll, or -1. */
int cli_alg_index(enum tc_coll coll, const char *alg);

int cli_dtype(const char *s, enum tc_dtype *out);
int cli_op(const char *s, enum tc_op *out);

/*
 * The one line for a tc_predict / tc_run error: algorithm unknown or not
 * applicable, root out of range, ...  Usage errors return CLI_USAGE, others
 * CLI_FAIL.
 */
int cli_coll_error(int err, enum tc_coll coll, const char *alg, const struct tc_topo *t, int root);
/* Why a tc_predict_call just made failed with err, in a few words for a row
 * of a table: over the simulator's limit, its schedule's size and the
 * limit (TC_ELIMIT), else tc_strerror(err).  Into buf. */
const char *cli_coll_reason(int err, char *buf, size_t len);

/* Lower bounds for topology t, --coll name of the bound, [KKA-I].  Returns 0
 * or a TC_E* code (TC_ENOTSUP for trees). */
int cli_lower_bound(const struct tc_topo *t, enum tc_lb_coll c, int root, double m,
                    const struct tc_model *md, struct tc_lower_bound *out);

/* ---- number formatting ------------------------------------------------- */

/* JSON number: "null" for NaN and infinities, integers without a fraction,
 * others with 15 significant digits.  buf of at least 32 bytes. */
const char *cli_num(double v, char *buf);
/* A time for people: "812 ns", "12.35 us", "3.402 ms", "1.250 s", "-". */
const char *cli_time(double ns, char *buf);

/* ---- a calibration kept as text (calibrate --save) ---------------------- */

struct tc_calibration;
/* Reads the calibration of path (--calibration of cmd): CLI_OK, or a usage
 * error (printed) naming the file and what was wrong: it cannot be read,
 * is no calibration (tc_error_detail()'s line), or is an emulated team's. */
int cli_calibration_read(const char *cmd, const char *path, struct tc_calibration *cal);
/* The pair model of a calibrated prediction for blocks of bytes: t_s, t_w
 * and t_c of the segment holding bytes (a segment fitted without start-up
 * takes the whole range's t_s, as the prediction counts a pipeline's
 * packets: docs/calibration.md), t_h 0 (the channels are one hop); md's
 * other fields kept.  CLI_OK, or a failure (printed) when no line fits. */
int cli_calibrated_model(const char *cmd, const struct tc_calibration *cal, uint64_t bytes,
                         struct tc_model *md);

/* ---- JSON writer ------------------------------------------------------- */

struct cli_json {
	FILE *f;
	int depth;
	int count[16]; /* members written at each depth */
	int nl_depth;  /* elements at this depth start on a new line (0: never) */
};
void cli_json_init(struct cli_json *w, FILE *f);
void cli_json_obj(struct cli_json *w, const char *key); /* key NULL in arrays */
void cli_json_arr(struct cli_json *w, const char *key);
void cli_json_end_obj(struct cli_json *w);
void cli_json_end_arr(struct cli_json *w);
void cli_json_num(struct cli_json *w, const char *key, double v);
void cli_json_int(struct cli_json *w, const char *key, long long v);
void cli_json_uint(struct cli_json *w, const char *key, unsigned long long v);
void cli_json_str(struct cli_json *w, const char *key, const char *s); /* NULL: null */
void cli_json_bool(struct cli_json *w, const char *key, int v);
void cli_json_null(struct cli_json *w, const char *key);
/* A JSON string literal with escapes. */
void cli_json_quote(FILE *f, const char *s);

/* ---- external programs ------------------------------------------------- */

/* Is an executable `prog` on $PATH? */
int cli_have_program(const char *prog);
/* Runs argv[0] (searched on $PATH) with `input` on its stdin; returns its
 * exit status, or -1 if it could not be started. */
int cli_pipe_to(char *const argv[], const char *input, size_t len);
/* Runs gnuplot on the script gp, which draws file from the data in dat:
 * CLI_OK, or CLI_FAIL (printed: gnuplot missing, with how to install it and
 * run it by hand, or its failure). */
int cli_gnuplot(const char *file, const char *gp, const char *dat);

/* ---- Graphviz pictures (cli_topo.c) ------------------------------------ */

/* What to draw over a topology; every member may be NULL. */
struct cli_dot {
	const char *title;
	char **node_label;            /* p labels (default: the rank) */
	const unsigned char *node_hl; /* p flags: drawn in red */
	char **arc_label;             /* per arc id (cli_arc_id): NULL for an idle
	                                 arc, else the label of what it carries
	                                 ("" for none); idle links are grey */
};
/* The id of arc u -> v (CSR order: node by node, neighbours ascending), or -1
 * when v is not a neighbour of u. */
long cli_arc_id(const struct tc_topo *t, int u, int v);
/* The topology in Graphviz dot, with a layout for its kind (circo for rings,
 * fixed grid positions for 2-D meshes and tori, ...). */
void cli_topo_dot(FILE *f, const struct tc_topo *t, const struct cli_dot *d);
/* Renders dot text into file with Graphviz (fmt "png" or "svg").  CLI_OK, or
 * CLI_FAIL with one line (also when Graphviz is not installed). */
int cli_render(const char *dot_text, size_t len, const char *fmt, const char *file);

/* ---- progress ---------------------------------------------------------- */

struct cli_progress {
	int tty; /* stderr is a terminal: one bar redrawn in place */
	int quiet;
	long total, done;
	long last_s; /* when the last plain line was written (s) */
};
void cli_progress_init(struct cli_progress *pg, long total, int quiet);
void cli_progress_step(struct cli_progress *pg, const char *what);
void cli_progress_end(struct cli_progress *pg);

/* ---- the run engine (cli_run_coll.c, cli_run.c) ------------------------ */

struct cli_run_args {
	enum tc_coll coll;
	const char *alg; /* NULL or "auto": the library's choice */
	uint64_t bytes;  /* per rank */
	enum tc_dtype dt;
	enum tc_op op;
	int root;
	long q;             /* shift */
	int shift_ring;     /* shift: q along the topology's ring */
	int gray_ring;      /* ... which is the Gray code (a hypercube) */
	const int *members; /* multicast (NULL: every rank) */
	int nmembers;
	int repeat; /* timed runs (median) */
	int warmup; /* untimed runs first */
	int packets;
	int emulated;          /* the team runs in TC_MODE_EMULATED */
	const size_t *vcounts; /* the v-collectives: their counts (cli_vcounts_parse;
	                          bytes is not used) */
	int calls;             /* timed calls back to back in each run; 0: native,
	                        batches of 1, 1, 2, 4, ... calls (a barrier of
	                        the tool between two) until their time reaches
	                        CLI_RUN_CALLS_BUDGET_NS or CLI_RUN_CALLS_MAX
	                        calls (warm-up runs: 1); emulated: 1 */
	int warmup_calls;      /* untimed calls at the start of each run; -1: one
	                        when a run has several timed calls */
	int in_place;          /* sbuf TC_IN_PLACE (cli_run_in_place says where) */
};

/* The automatic number of calls per timed run (calls 0): a budget, a cap. */
#define CLI_RUN_CALLS_BUDGET_NS 10e6
#define CLI_RUN_CALLS_MAX 1000

struct cli_run_result {
	int verified; /* every timed and warm-up run gave the reference */
	int runs;
	double measured_ns; /* median over the timed runs */
	double measured_min_ns, measured_max_ns;
	double modelled_ns;      /* tc_team_last_run makespan of the last run */
	double coll_modelled_ns; /* tc_last_coll modelled_ps (rank 0) */
	int rounds;              /* tc_last_coll */
	const char *algorithm;   /* tc_last_coll (static string of the registry) */
	struct tc_stats stats;   /* team totals of the last run over its calls */
	int mismatch_rank;       /* first rank with a wrong result, -1 if none */
	int barrier_early;       /* barrier: a rank left before all had entered */
	int alg_disagree;        /* ranks report different algorithms */
	uint64_t mismatch_elem;
	int calls;          /* timed calls per run (after the automatic choice) */
	int warmup_calls;   /* warm-up calls per run (the same) */
	double call_avg_ns; /* every timed call of every run: their time / their number */
	double call_min_ns, call_max_ns; /* the fastest and slowest call: from the
	                           first rank's entry to the last rank's exit */
	double run_modelled_ns;          /* the makespan of the last run (all its calls) */
	int processes; /* over MPI (cli_mpi_run_coll): the processes that ran their
	                  rank; 0 on threads */
};

/*
 * Runs the collective on an existing team: fills the inputs, runs
 * warmup + repeat times (one tc_run each), checks every result against a
 * sequential reference.  Returns 0 or the TC_E* code of the failed run.
 * Inputs must be valid: bytes a multiple of the datatype size.
 */
int cli_run_coll(struct tc_team *team, const struct cli_run_args *a, struct cli_run_result *r);
/*
 * One rank of cli_run_coll's case outside tc_run: the rank a process of a
 * team over MPI runs (tools/cli_mpi.c), with the same inputs and the same
 * reference.  cli_rank_run_new builds every rank's inputs and rank r's
 * expected result (NULL: out of memory); cli_rank_run_prep readies the
 * buffers before call k (poison: the receive buffer set to the complement
 * of its expected bytes, as before a run's first call); cli_rank_run_call
 * makes call k on proc (tc_last_coll tells what ran); cli_rank_run_check
 * gives the first wrong element of the receive buffer, -1 when it is
 * right.  A barrier is not checked for early leavers here.
 */
struct cli_rank_run;
struct cli_rank_run *cli_rank_run_new(const struct cli_run_args *a, int p, int r);
void cli_rank_run_prep(struct cli_rank_run *x, int poison);
int cli_rank_run_call(struct cli_rank_run *x, struct tc_proc *proc, int k);
long long cli_rank_run_check(const struct cli_rank_run *x);
void cli_rank_run_free(struct cli_rank_run *x);
/* Whether collective c takes TC_IN_PLACE as its send buffer in cli_run_coll
 * (allreduce, reduce, allgather, gather, scan, shift, gray2binary,
 * binary2gray); the list for messages into buf. */
int cli_run_in_place(enum tc_coll c);
const char *cli_run_in_place_list(char *buf, size_t len);
/*
 * nccl-tests' bandwidths of a call of c on p ranks with blocks of m bytes
 * taking t ns: algbw = S / t, busbw = algbw * factor, in GB/s (1e9 B/s), with
 * S and factor by collective (allreduce: m, 2(p-1)/p; allgather,
 * reduce_scatter, alltoall, gather, scatter: p m, (p-1)/p; bcast, reduce,
 * shift: m, 1).  Returns 0, or -1 (NAN written) for the others.
 */
int cli_busbw(enum tc_coll c, int p, uint64_t m, double t_ns, double *algbw, double *busbw,
              double *factor);
/* CLI_USAGE (message printed) when the buffers of a run would not fit in
 * half the memory, else 0. */
int cli_run_check_memory(int p, enum tc_coll coll, uint64_t bytes);
/* The same for a v-collective's counts v (elements of es bytes). */
int cli_run_check_memory_v(int p, enum tc_coll coll, int root, const size_t *v, size_t es);
/* The one line for a run whose result is wrong; returns CLI_FAIL. */
int cli_run_wrong(const char *cmd, const struct cli_run_result *rr);
/* The team statistics as the JSON member "stats". */
void cli_stats_json(struct cli_json *w, const struct tc_stats *s);
/* Is op defined for dt (bitwise and logical ops: integers only)? */
int cli_op_fits(enum tc_op op, enum tc_dtype dt);

#endif /* TC_TOOLS_CLI_H */
