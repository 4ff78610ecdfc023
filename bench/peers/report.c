/* SPDX-License-Identifier: MIT */
/*
 * bench/peers/report.c - the peers benchmark's report (bench/peers/driver.c
 * collects the figures): the table of every case against each peer, ours
 * over MPI beside MPI's own, the goals, the table in Markdown, every
 * variant's figures, and one JSON line per case and peer.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

/* ---- report --------------------------------------------------------------- */

static const char *human(double ns, char *buf)
{
	if (!isfinite(ns))
		snprintf(buf, 16, "-");
	else if (ns < 1e3)
		snprintf(buf, 16, "%.0fns", ns);
	else if (ns < 1e4)
		snprintf(buf, 16, "%.2fus", ns / 1e3);
	else if (ns < 1e6)
		snprintf(buf, 16, "%.1fus", ns / 1e3);
	else if (ns < 1e7)
		snprintf(buf, 16, "%.2fms", ns / 1e6);
	else if (ns < 1e9)
		snprintf(buf, 16, "%.1fms", ns / 1e6);
	else
		snprintf(buf, 16, "%.2fs", ns / 1e9);
	return buf;
}

static const char *size_str(size_t b, char *buf, size_t cap)
{
	if (b >= ((size_t)1 << 20) && b % ((size_t)1 << 20) == 0)
		snprintf(buf, cap, "%zuMiB", b >> 20);
	else if (b >= 1024 && b % 1024 == 0)
		snprintf(buf, cap, "%zuKiB", b >> 10);
	else
		snprintf(buf, cap, "%zuB", b);
	return buf;
}

/* The best variant of impl for a case: lowest median wall time. */
struct best {
	int ok;
	double wall, cpu;
	int n;
	const struct rec *r;
	const char *err; /* when !ok: why */
};

static struct best best_of(int impl, enum pr_kind kind, int p, size_t bytes, const char *only)
{
	struct best b = {0, NAN, NAN, 0, NULL, NULL};
	for (int i = 0; i < nrecs; i++) {
		const struct rec *r = &recs[i];
		if (r->impl != impl || r->kind != kind || r->p != p || r->bytes != bytes)
			continue;
		if (only && strcmp(r->variant, only))
			continue;
		if (!r->n) {
			if (!b.ok && !b.err)
				b.err = r->note;
			continue;
		}
		double w = median(r->wall, r->n);
		if (!b.ok || w < b.wall) {
			b.ok = 1;
			b.wall = w;
			b.cpu = median(r->cpu, r->n);
			b.n = r->n;
			b.r = r;
		}
	}
	return b;
}

/* Ours on complete:p for case c, the topology of the machine's own
 * algorithms. */
static struct best ours_complete(const struct pr_case *c, int p)
{
	char cname[32];
	snprintf(cname, sizeof cname, "complete:%d", p);
	return best_of(IMPL_OURS, c->kind, p, c->bytes, cname);
}

/* Why ours has no figure for a case: its error without the "error:" prefix
 * (TC_ENOTSUP: no algorithm yet for that collective). */
static const char *ours_missing(const struct best *o)
{
	if (!o->err)
		return available[IMPL_OURS] ? "not measured" : "not built";
	return strncmp(o->err, "error:", 6) ? o->err : o->err + 6;
}

static void json_str(const char *key, const char *v)
{
	printf(", \"%s\": \"", key);
	for (; *v; v++)
		putchar(*v == '"' || *v == '\\' ? '_' : *v);
	putchar('"');
}

static void json_num(const char *key, double v)
{
	if (isfinite(v))
		printf(", \"%s\": %.1f", key, v);
	else
		printf(", \"%s\": null", key);
}

static const char *peer_missing(int impl, int g, const struct best *b)
{
	if (!available[impl])
		return why_missing[impl];
	if (skipped[impl][g] == 1)
		return "timeout";
	if (b->err)
		return b->err;
	if (impl == IMPL_OPENMP)
		return "n/a (no point-to-point)";
	return "not measured";
}

void report(void)
{
	char b1[32], b2[16], b3[16], b4[16];
	printf("\n%-9s %3s %6s | %8s %8s %-12s %-13s %8s |", "case", "p", "size", "ours", "cpu",
	       "topology", "algorithm", "complete");
	for (int i = 1; i < NPEER; i++)
		printf(" %-8s %8s %7s |", impl_name[i], "cpu", "ratio");
	printf("\n");
	for (struct case_it it = {0}; next_case(&it);) {
		const int g = it.g, p = it.p;
		const struct pr_case *c = it.c;
		struct best o = best_of(IMPL_OURS, c->kind, p, c->bytes, NULL);
		struct best oc = ours_complete(c, p);
		printf("%-9s %3d %6s | %8s %8s %-12s %-13s %8s |", pr_kind_name[c->kind], p,
		       size_str(c->bytes, b1, sizeof b1), o.ok ? human(o.wall, b2) : "n/a",
		       human(o.cpu, b3), o.ok ? o.r->variant : ours_missing(&o),
		       o.ok ? o.r->note : "", human(oc.wall, b4));
		for (int i = 1; i < NPEER; i++) {
			struct best b = best_of(i, c->kind, p, c->bytes, NULL);
			if (!b.ok) {
				const char *why = peer_missing(i, g, &b);
				printf(" %-26.26s |", why);
				continue;
			}
			if (o.ok)
				printf(" %8s %8s %6.3gx |", human(b.wall, b1), human(b.cpu, b2),
				       o.wall / b.wall);
			else
				printf(" %8s %8s %7s |", human(b.wall, b1), human(b.cpu, b2), "-");
		}
		printf("\n");
	}
	printf("(time per operation, median of the repetitions; latency and bandwidth: per one-way "
	       "message of a ping-pong; cpu: CPU time of all ranks per operation; ratio = "
	       "ours/peer, < 1 is ours faster; complete: ours on complete:p; size: allgather "
	       "the block of each rank, alltoall the block of each rank for each rank; ours n/a: "
	       "the error, TC_ENOTSUP when no algorithm exists yet)\n");
	printf("repetitions (");
	for (int i = 0; i < NIMPL; i++)
		printf("%s%s", i ? ", " : "", impl_name[i]);
	printf(") per p:");
	for (int g = 0; g < NGROUP; g++) {
		if (!want_p[g])
			continue;
		printf(" p=%d:", group_p[g]);
		for (int i = 0; i < NIMPL; i++)
			printf("%s%d", i ? "," : "", done_reps[i][g]);
	}
	printf("\n");
	for (int g = 0; g < NGROUP; g++)
		for (int i = 1; i < NIMPL; i++)
			if (skipped[i][g] == 1)
				printf("note: %s at p=%d timed out and was skipped from then on\n",
				       impl_name[i], group_p[g]);
}

/* One goal: ours <= factor * peer. */
static void goal(const char *what, enum pr_kind kind, int p, size_t bytes, int peer, double factor,
                 int strict)
{
	struct pr_case c = {kind, bytes};
	int g = group_of(p);
	if (g < 0 || !selected(g, &c))
		return; /* not asked for (--case, --p) */
	struct best o = best_of(IMPL_OURS, kind, p, bytes, NULL);
	struct best b = best_of(peer, kind, p, bytes, NULL);
	char b1[16], b2[16];
	if (!o.ok || !b.ok) {
		printf("  %-52s ours %-8s %-7s %-8s: not measured\n", what,
		       o.ok ? human(o.wall, b1) : "n/a", impl_name[peer],
		       b.ok ? human(b.wall, b2) : "n/a");
		return;
	}
	int met = strict ? o.wall < factor * b.wall : o.wall <= factor * b.wall;
	printf("  %-52s ours %-8s %-7s %-8s ratio %6.3g: %s\n", what, human(o.wall, b1),
	       impl_name[peer], human(b.wall, b2), o.wall / b.wall, met ? "met" : "NOT MET");
}

void goals(void)
{
	/* The goals are all on barrier and allreduce: none when --case or --p
	 * leaves them out. */
	struct pr_case ar = {PR_ALLREDUCE, 8}, big = {PR_ALLREDUCE, (size_t)8 << 20},
	               ba = {PR_BARRIER, 0};
	int any = 0;
	for (int g = 0; g < NGROUP; g++)
		any |= selected(g, &ar) || selected(g, &ba) || (g == 0 && selected(g, &big));
	if (!any)
		return;
	printf("\ngoals (ours is the best topology of each case):\n");
	goal("p=2 allreduce 1 double <= 0.5x Open MPI", PR_ALLREDUCE, 2, 8, IMPL_OPENMPI, 0.5, 0);
	goal("p=2 allreduce 1 double <= OpenMP", PR_ALLREDUCE, 2, 8, IMPL_OPENMP, 1, 0);
	goal("p=2 allreduce 1 Mi doubles <= OpenMP", PR_ALLREDUCE, 2, (size_t)8 << 20, IMPL_OPENMP, 1, 0);
	goal("p=2 barrier <= OpenMP", PR_BARRIER, 2, 0, IMPL_OPENMP, 1, 0);
	for (int g = 1; g < NGROUP; g++)
		for (int i = 1; i < NPEER; i++) {
			char what[96];
			snprintf(what, sizeof what, "p=%d allreduce 1 double < %s", group_p[g],
			         impl_name[i]);
			goal(what, PR_ALLREDUCE, group_p[g], 8, i, 1, 1);
			snprintf(what, sizeof what, "p=%d barrier < %s", group_p[g], impl_name[i]);
			goal(what, PR_BARRIER, group_p[g], 0, i, 1, 1);
		}
}

static const char *ratio_str(double r, char *buf, size_t cap)
{
	snprintf(buf, cap, r >= 0.01 ? "%.2f" : "%.2g", r);
	return buf;
}

/* The table again in Markdown, for the README: wall / CPU time per
 * operation, the design or topology that gave the best time, ours/peer. */
void markdown(void)
{
	char b1[32], b2[16], b3[16], b4[16];
	printf("\n| case | p | size | topocoll: wall / CPU (topology, algorithm) | OpenMP | ratio | "
	       "Open MPI | ratio | MPICH | ratio |\n|---|---:|---:|---|---:|---:|---:|---:|---:|---:|\n");
	for (struct case_it it = {0}; next_case(&it);) {
		const int p = it.p;
		const struct pr_case *c = it.c;
		struct best o = best_of(IMPL_OURS, c->kind, p, c->bytes, NULL);
		printf("| %s | %d | %s | ", pr_kind_name[c->kind], p, size_str(c->bytes, b1, sizeof b1));
		if (o.ok)
			printf("%s / %s (%s%s%s) |", human(o.wall, b2), human(o.cpu, b3),
			       o.r->variant, strcmp(o.r->note, "-") ? ", " : "",
			       strcmp(o.r->note, "-") ? o.r->note : "");
		else
			printf("n/a (%s) |", ours_missing(&o));
		for (int i = 1; i < NPEER; i++) {
			struct best b = best_of(i, c->kind, p, c->bytes, NULL);
			if (!b.ok) {
				printf(" - | |");
				continue;
			}
			int named = strcmp(b.r->variant, "mpi") && strcmp(b.r->variant, "omp");
			printf(" %s / %s%s%s%s |", human(b.wall, b2), human(b.cpu, b3),
			       named ? " (" : "", named ? b.r->variant : "", named ? ")" : "");
			if (o.ok)
				printf(" %s |", ratio_str(o.wall / b.wall, b4, sizeof b4));
			else
				printf(" |");
		}
		printf("\n");
	}
}

/* Every variant's medians: what the best-of columns were chosen from. */
void variants(void)
{
	char b1[32], b2[16], b3[16];
	printf("\nevery variant (median wall, cpu; runs):\n");
	for (struct case_it it = {0}; next_case(&it);) {
		const int p = it.p;
		const struct pr_case *c = it.c;
		printf("  %-9s p=%-2d %-6s", pr_kind_name[c->kind], p, size_str(c->bytes, b1, sizeof b1));
		for (int i = 0; i < NIMPL; i++)
			for (int k = 0; k < nrecs; k++) {
				const struct rec *r = &recs[k];
				if (r->impl != i || r->kind != c->kind || r->p != p || r->bytes != c->bytes)
					continue;
				if (r->n)
					printf(" | %s %s %s %s (%d)", impl_name[i], r->variant,
					       human(median(r->wall, r->n), b2),
					       human(median(r->cpu, r->n), b3), r->n);
				else
					printf(" | %s %s %s", impl_name[i], r->variant, r->note);
			}
		printf("\n");
	}
}

/* Ours over each MPI against that MPI's own collectives: the same
 * launcher and placement, the same cases; nothing when neither was run. */
void ours_mpi_report(void)
{
	const int mine[2] = {IMPL_OURS_OPENMPI, IMPL_OURS_MPICH}, own[2] = {IMPL_OPENMPI, IMPL_MPICH};
	if (!available[IMPL_OURS_OPENMPI] && !available[IMPL_OURS_MPICH]) {
		printf("\nours over MPI: not run (%s; %s)\n", why_missing[IMPL_OURS_OPENMPI],
		       why_missing[IMPL_OURS_MPICH]);
		return;
	}
	char b1[32], b2[16], b3[16];
	printf("\nours over MPI against MPI's own (the same launcher and placement; ours: a team "
	       "over the processes, complete:p, auto):\n");
	printf("%-9s %3s %6s |", "case", "p", "size");
	for (int m = 0; m < 2; m++)
		printf(" %-12s %-13s %8s %7s |", impl_name[mine[m]], "algorithm", impl_name[own[m]],
		       "ratio");
	printf("\n");
	for (struct case_it it = {0}; next_case(&it);) {
		const int g = it.g, p = it.p;
		const struct pr_case *c = it.c;
		printf("%-9s %3d %6s |", pr_kind_name[c->kind], p, size_str(c->bytes, b1, sizeof b1));
		for (int m = 0; m < 2; m++) {
			struct best o = best_of(mine[m], c->kind, p, c->bytes, NULL);
			struct best b = best_of(own[m], c->kind, p, c->bytes, NULL);
			if (!o.ok) {
				printf(" %-12.12s %-13s %8s %7s |", peer_missing(mine[m], g, &o),
				       "", b.ok ? human(b.wall, b3) : "-", "-");
				continue;
			}
			printf(" %-12s %-13s %8s ", human(o.wall, b2), o.r->note,
			       b.ok ? human(b.wall, b3) : "-");
			if (b.ok)
				printf("%6.3gx |", o.wall / b.wall);
			else
				printf("%7s |", "-");
		}
		printf("\n");
	}
	printf("(time per operation, median of the repetitions; ratio = ours over MPI / MPI's "
	       "own, < 1 is ours faster)\n");
}

void json_lines(void)
{
	printf("\n");
	for (struct case_it it = {0}; next_case(&it);) {
		const int g = it.g, p = it.p;
		const struct pr_case *c = it.c;
		struct best o = best_of(IMPL_OURS, c->kind, p, c->bytes, NULL);
		struct best oc = ours_complete(c, p);
		for (int i = 1; i < NPEER; i++) {
			struct best b = best_of(i, c->kind, p, c->bytes, NULL);
			if (i == IMPL_OPENMP && pr_is_p2p(c))
				continue; /* OpenMP has no point-to-point */
			printf("{\"case\": \"%s\", \"p\": %d, \"bytes\": %zu",
			       pr_kind_name[c->kind], p, c->bytes);
			json_num("ours_ns", o.ok ? o.wall : NAN);
			json_num("ours_cpu_ns", o.ok ? o.cpu : NAN);
			if (o.ok) {
				json_str("topology", o.r->variant);
				json_str("algorithm", o.r->note);
			} else {
				json_str("ours_error", o.err ? o.err : "not measured");
				json_str("ours_unavailable", ours_missing(&o));
			}
			json_num("ours_complete_ns", oc.ok ? oc.wall : NAN);
			json_str("peer", impl_name[i]);
			json_num("peer_ns", b.ok ? b.wall : NAN);
			json_num("peer_cpu_ns", b.ok ? b.cpu : NAN);
			if (b.ok)
				json_str("peer_variant", b.r->variant);
			else
				json_str("peer_error", peer_missing(i, g, &b));
			if (o.ok && b.ok)
				printf(", \"ratio\": %.4f", o.wall / b.wall);
			else
				printf(", \"ratio\": null");
			printf(", \"reps\": [%d, %d]}\n", o.ok ? o.n : 0, b.ok ? b.n : 0);
		}
	}
}

/* One JSON line per case and MPI that ours ran over. */
void json_lines_ours_mpi(void)
{
	const int mine[2] = {IMPL_OURS_OPENMPI, IMPL_OURS_MPICH}, own[2] = {IMPL_OPENMPI, IMPL_MPICH};
	for (struct case_it it = {0}; next_case(&it);) {
		const int g = it.g, p = it.p;
		const struct pr_case *c = it.c;
		for (int m = 0; m < 2; m++) {
			if (!available[mine[m]])
				continue;
			struct best o = best_of(mine[m], c->kind, p, c->bytes, NULL);
			struct best b = best_of(own[m], c->kind, p, c->bytes, NULL);
			printf("{\"case\": \"%s\", \"p\": %d, \"bytes\": %zu",
			       pr_kind_name[c->kind], p, c->bytes);
			json_str("ours_over", impl_name[own[m]]);
			json_num("ours_mpi_ns", o.ok ? o.wall : NAN);
			json_num("ours_mpi_cpu_ns", o.ok ? o.cpu : NAN);
			json_str("algorithm", o.ok ? o.r->note : peer_missing(mine[m], g, &o));
			json_num("mpi_ns", b.ok ? b.wall : NAN);
			if (o.ok && b.ok)
				printf(", \"ratio\": %.4f", o.wall / b.wall);
			else
				printf(", \"ratio\": null");
			printf(", \"reps\": [%d, %d]}\n", o.ok ? o.n : 0, b.ok ? b.n : 0);
		}
	}
}
