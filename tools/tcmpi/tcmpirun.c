/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/tcmpirun.c - runs an MPI program built by tcmpicc with its
 * ranks as the threads or fibres of one topocoll team.
 *
 *   tcmpirun -np P [--topo SPEC] [--exec threads|fibres] [--mode
 *            native|emulated] [model options] [--report] [--stack BYTES]
 *            [--timeout MS] [--verbose] PROGRAM [ARGS...]
 *
 * The program is a shared object (tcmpicc links it so).  For each rank
 * the launcher writes a copy of it into a memfd and dlopens that copy:
 * every rank gets its own global and static variables, its own copy of
 * the MPI layer (libtcmpi.a, linked into the program) and of the C
 * library state the layer keeps per rank.  dlmopen is not used: glibc
 * stops at 15 namespaces.  Then tc_run() calls each copy's
 * tcmpi_rank_main() (launch.h) from the rank's thread or fibre.
 *
 * Exit status: the code of the first MPI_Abort or fatal MPI error, else
 * the first non-zero status of a rank in rank order, else 0; 2 for a
 * usage error, 1 when the program cannot be loaded or the team created.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "launch.h"

static const char usage_text[] =
        "usage: tcmpirun -np P [options] PROGRAM [ARGS...]\n"
        "Runs an MPI program built with tcmpicc, one private copy of it per rank,\n"
        "its ranks the threads or fibres of a topocoll team.\n"
        "options:\n"
        "  -np P, -n P       ranks\n"
        "  --topo SPEC       topology [complete:P]\n"
        "  --exec threads|fibres  how ranks run [fibres when P exceeds the CPUs]\n"
        "  --mode native|emulated  links at full speed, or at the model's pace [native]\n"
        "  --report          at the end, per collective: calls, measured and\n"
        "                    modelled time per call (stderr)\n"
        "  --stack BYTES     each rank's stack on fibres [256K]\n"
        "  --timeout MS      a wait longer than this aborts the run [none]\n"
        "  --verbose         the load time and memory of the copies (stderr)\n" CLI_MODEL_HELP;

struct run {
	void **entry; /* per rank: tcmpi_rank_main of its copy */
	int argc;
	char **argv;
	struct tcmpi_shared shared;
	struct tcmpi_stats *stats; /* p of them, or NULL */
	int *status;
};

static int rank_fn(struct tc_proc *proc, void *arg)
{
	struct run *run = arg;
	int r = tc_rank(proc);
	/* The rank's own argv, strings included: a program may write into
	 * its arguments (strtok on an option's value), as a process may. */
	size_t chars = 0;
	for (int i = 0; i < run->argc; i++)
		chars += strlen(run->argv[i]) + 1;
	char **argv = malloc(sizeof *argv * (size_t)(run->argc + 1) + chars);
	if (!argv) {
		run->status[r] = 1;
		return TC_ENOMEM;
	}
	char *s = (char *)(argv + run->argc + 1);
	for (int i = 0; i < run->argc; i++) {
		size_t n = strlen(run->argv[i]) + 1;
		argv[i] = memcpy(s, run->argv[i], n);
		s += n;
	}
	argv[run->argc] = NULL;
	struct tcmpi_launch l = {
	        .abi = TCMPI_LAUNCH_ABI,
	        .proc = proc,
	        .argc = run->argc,
	        .argv = argv,
	        .shared = &run->shared,
	        .stats = run->stats ? &run->stats[r] : NULL,
	};
	tcmpi_rank_main_fn fn;
	memcpy(&fn, &run->entry[r], sizeof fn);
	run->status[r] = fn(&l);
	free(argv);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of the process so far (user and system), seconds. */
static double cpu_s(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

/* Proportional set size of the process, kB (Pss: a page that n mappings
 * share counts 1/n in each; VmRSS counts it in each), or 0. */
static long pss_kb(void)
{
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	char line[256];
	long kb = 0;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "Pss: %ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* Resident memory of the process, kB (VmRSS), or 0. */
static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = 0;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* The read-only segments of a program (its code, constants, symbol and
 * relocation tables): the same bytes in every copy, which the loader
 * never writes (no text relocations), so that every copy can map the
 * first copy's pages of them.  Page-aligned ranges of the image and of
 * the load address; a page that is also part of a writable segment (in
 * memory or in the file) is left out. */
enum { MAX_SHARED = 8 };
struct ro_range {
	size_t off, vaddr, len;
	size_t poff, plen; /* the part of the copy's file to drop: no page a
	                      writable segment maps */
	int prot;
};

static int shared_ranges(const void *img, size_t n, struct ro_range *out)
{
	const Elf64_Ehdr *eh = img;
	if (n < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phoff + (size_t)eh->e_phnum * sizeof(Elf64_Phdr) > n)
		return 0;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)((const char *)img + eh->e_phoff);
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	/* Text relocations would make the copies' code differ. */
	for (int k = 0; k < eh->e_phnum; k++) {
		if (ph[k].p_type != PT_DYNAMIC || ph[k].p_offset + ph[k].p_filesz > n)
			continue;
		const Elf64_Dyn *d = (const Elf64_Dyn *)((const char *)img + ph[k].p_offset);
		for (size_t j = 0; j < ph[k].p_filesz / sizeof *d && d[j].d_tag != DT_NULL; j++)
			if (d[j].d_tag == DT_TEXTREL ||
			    (d[j].d_tag == DT_FLAGS && (d[j].d_un.d_val & DF_TEXTREL)))
				return 0;
	}
	int nr = 0;
	for (int k = 0; k < eh->e_phnum && nr < MAX_SHARED; k++) {
		const Elf64_Phdr *s = &ph[k];
		if (s->p_type != PT_LOAD || (s->p_flags & PF_W) || s->p_memsz != s->p_filesz ||
		    s->p_offset % pg != s->p_vaddr % pg || s->p_offset + s->p_filesz > n)
			continue;
		size_t v0 = s->p_vaddr / pg * pg, v1 = (s->p_vaddr + s->p_memsz + pg - 1) / pg * pg;
		size_t o0 = s->p_offset / pg * pg, o1 = o0 + (v1 - v0);
		size_t p0 = o0, p1 = o1;
		int clash = 0;
		for (int j = 0; j < eh->e_phnum; j++) {
			const Elf64_Phdr *w = &ph[j];
			if (w->p_type != PT_LOAD || !(w->p_flags & PF_W))
				continue;
			size_t wv0 = w->p_vaddr / pg * pg,
			       wv1 = (w->p_vaddr + w->p_memsz + pg - 1) / pg * pg;
			size_t wo0 = w->p_offset / pg * pg,
			       wo1 = (w->p_offset + w->p_filesz + pg - 1) / pg * pg;
			if (v0 < wv1 && wv0 < v1)
				clash = 1;
			/* A file page the writable segment maps too (the linker
			 * lets segments share a page of the file) stays. */
			if (wo0 < p1 && p1 <= wo1)
				p1 = wo0 > p0 ? wo0 : p0;
			if (wo0 <= p0 && p0 < wo1)
				p0 = wo1 < p1 ? wo1 : p1;
			if (p0 < wo0 && wo1 < p1)
				p1 = wo0; /* inside: keep the part before it */
		}
		if (clash)
			continue;
		out[nr++] = (struct ro_range){
		        .off = o0,
		        .vaddr = v0,
		        .len = v1 - v0,
		        .poff = p0,
		        .plen = p1 - p0,
		        .prot = ((s->p_flags & PF_R) ? PROT_READ : 0) |
		                ((s->p_flags & PF_X) ? PROT_EXEC : 0),
		};
	}
	return nr;
}

/* Loads p private copies of the program: each written into a memfd and
 * dlopened from there.  The memfds stay open until every copy is loaded:
 * the dynamic loader recognises an object by its path, and a closed fd's
 * number (so its /proc/self/fd path) would come back for the next copy,
 * which would then be the same object.  Once a copy is loaded, its
 * read-only segments are mapped again from the first copy's memfd and
 * their pages dropped from its own (shared_ranges): the copies share one
 * copy of the code and constants, each keeps its own data. */
static long memfd_kb; /* memory the copies' memfds hold after loading */

static int load_copies(const char *path, int p, void **entry, void **handles)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)p + 64) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > (rlim_t)p + 64
		                      ? (rlim_t)p + 64
		                      : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)p + 64)
			return cli_fail("tcmpirun: %d ranks need %d open files while loading; the "
			                "limit is %ld (ulimit -n)",
			                p, p + 64, (long)rl.rlim_cur);
	}
	int *fds = malloc(sizeof *fds * (size_t)p);
	if (!fds)
		return cli_fail("tcmpirun: out of memory");
	int nfds = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		if (fd >= 0)
			close(fd);
		return cli_fail("tcmpirun: cannot open %s: %s", path, strerror(errno));
	}
	size_t n = (size_t)st.st_size;
	void *img = n ? mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
	close(fd);
	if (img == MAP_FAILED)
		return cli_fail("tcmpirun: cannot read %s", path);
	/* Only the bytes the loader reads go into the copies: the ELF header
	 * and the segments, not the debug information and section headers
	 * after them (most of a program built with -g). */
	const Elf64_Ehdr *eh = img;
	if (n >= sizeof *eh && !memcmp(eh->e_ident, ELFMAG, SELFMAG) &&
	    eh->e_ident[EI_CLASS] == ELFCLASS64 &&
	    eh->e_phoff + (size_t)eh->e_phnum * sizeof(Elf64_Phdr) <= n) {
		size_t need = eh->e_phoff + (size_t)eh->e_phnum * sizeof(Elf64_Phdr);
		const Elf64_Phdr *ph = (const Elf64_Phdr *)((const char *)img + eh->e_phoff);
		for (int k = 0; k < eh->e_phnum; k++)
			if (ph[k].p_offset + ph[k].p_filesz > need)
				need = ph[k].p_offset + ph[k].p_filesz;
		if (need < n)
			n = need;
	}
	struct ro_range ro[MAX_SHARED];
	int nro = shared_ranges(img, n, ro);
	int rc = CLI_OK;
	for (int r = 0; r < p && rc == CLI_OK; r++) {
		char name[32], fdpath[64];
		snprintf(name, sizeof name, "tcmpi-rank%d", r);
		int m = memfd_create(name, MFD_CLOEXEC);
		if (m >= 0)
			fds[nfds++] = m;
		if (m < 0) {
			rc = cli_fail("tcmpirun: memfd_create: %s", strerror(errno));
			break;
		}
		size_t done = 0;
		while (done < n) {
			ssize_t w = write(m, (const char *)img + done, n - done);
			if (w <= 0)
				break;
			done += (size_t)w;
		}
		snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", m);
		handles[r] = done == n ? dlopen(fdpath, RTLD_NOW | RTLD_LOCAL) : NULL;
		if (!handles[r]) {
			const char *e = dlerror();
			rc = cli_fail("tcmpirun: cannot load copy %d of %s: %s%s", r, path,
			              e ? e : "short write",
			              e && strstr(e, "PIE") ? " (build it with tcmpicc)" : "");
			break;
		}
		void *sym = dlsym(handles[r], TCMPI_RANK_MAIN);
		if (!sym) {
			rc = cli_fail("tcmpirun: %s has no %s: build it with tcmpicc", path,
			              TCMPI_RANK_MAIN);
			break;
		}
		entry[r] = sym;
		struct link_map *lm = NULL;
		if (r > 0 && nro && dlinfo(handles[r], RTLD_DI_LINKMAP, &lm) == 0 && lm)
			for (int k = 0, e; k < nro; k = e) {
				/* Adjacent ranges in one call (each call that
				 * replaces mapped pages flushes the TLB), then
				 * each its own protection. */
				size_t len = ro[k].len;
				int prot = ro[k].prot;
				for (e = k + 1; e < nro && ro[e].vaddr == ro[k].vaddr + len &&
				                ro[e].off == ro[k].off + len;
				     e++) {
					len += ro[e].len;
					prot |= ro[e].prot;
				}
				char *at = (char *)lm->l_addr + ro[k].vaddr;
				if (mmap(at, len, prot, MAP_PRIVATE | MAP_FIXED, fds[0],
				         (off_t)ro[k].off) != at) {
					rc = cli_fail("tcmpirun: cannot map copy %d of %s: %s", r,
					              path, strerror(errno));
					break;
				}
				for (int j = k; j < e; j++)
					if (ro[j].prot != prot)
						mprotect(at + (ro[j].vaddr - ro[k].vaddr),
						         ro[j].len, ro[j].prot);
				for (int j = k; j < e; j++)
					if (ro[j].plen)
						(void)fallocate(m, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
						                (off_t)ro[j].poff, (off_t)ro[j].plen);
			}
	}
	for (int k = 0; k < nfds; k++) {
		struct stat ms;
		if (fstat(fds[k], &ms) == 0)
			memfd_kb += (long)ms.st_blocks / 2;
		close(fds[k]);
	}
	free(fds);
	munmap(img, (size_t)st.st_size);
	return rc;
}

static void report(const struct tcmpi_stats *s, int p)
{
	static const char *const names[] = {
#define TCMPI__COLL_NAME(name, mpi) mpi,
	        TCMPI_COLL_MAP(TCMPI__COLL_NAME)
#undef TCMPI__COLL_NAME
	};
	fprintf(stderr, "tcmpirun: report (per call: the slowest rank's mean; modelled: "
	                "topocoll's model of the collectives that ran)\n");
	fprintf(stderr, "%-26s %10s %16s %16s\n", "collective", "calls", "measured_us", "modelled_us");
	for (int c = 0; c < TCMPI_COLL_COUNT; c++) {
		uint64_t calls = 0;
		double wall = 0, model = 0;
		for (int r = 0; r < p; r++) {
			if (s[r].calls[c] > calls)
				calls = s[r].calls[c];
			if (s[r].calls[c] && s[r].wall_ns[c] / (double)s[r].calls[c] > wall)
				wall = s[r].wall_ns[c] / (double)s[r].calls[c];
			if (s[r].calls[c] && s[r].model_ns[c] / (double)s[r].calls[c] > model)
				model = s[r].model_ns[c] / (double)s[r].calls[c];
		}
		if (calls)
			fprintf(stderr, "%-26s %10llu %16.3f %16.3f\n", names[c],
			        (unsigned long long)calls, wall / 1e3, model / 1e3);
	}
}

int main(int argc, char **argv)
{
	long p = 0;
	const char *topo = NULL, *val;
	int exec = TC_EXEC_AUTO, mode = TC_MODE_NATIVE, want_report = 0, verbose = 0;
	uint64_t stack = 0, timeout = 0;
	struct cli_model model;
	cli_model_init(&model);
	cli_opt_last_wins = 1; /* --timeout 60000 ... --timeout 20000: the last */
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		int m;
		if (cli_is_help(argv[i])) {
			fputs(usage_text, stdout);
			return CLI_OK;
		} else if (!strcmp(argv[i], "-np") || !strcmp(argv[i], "-n")) {
			if (i + 1 >= argc)
				return cli_usage("tcmpirun: %s needs a number of ranks", argv[i]);
			if (cli_parse_long("-np", argv[++i], 1, TC_TOPO_MAX_NODES, &p))
				return CLI_USAGE;
		} else if ((m = cli_opt(argc, argv, &i, "--topo", &val)) != 0) {
			if (m != 1) /* no value, or given twice (printed) */
				return CLI_USAGE;
			topo = val;
		} else if ((m = cli_opt(argc, argv, &i, "--exec", &val)) != 0) {
			if (m != 1 || cli_choice("--exec", val, "threads", "fibres", &m))
				return CLI_USAGE;
			exec = m ? TC_EXEC_FIBRES : TC_EXEC_THREADS;
		} else if ((m = cli_opt(argc, argv, &i, "--mode", &val)) != 0) {
			if (m != 1 || cli_choice("--mode", val, "native", "emulated", &m))
				return CLI_USAGE;
			mode = m ? TC_MODE_EMULATED : TC_MODE_NATIVE;
		} else if ((m = cli_opt(argc, argv, &i, "--stack", &val)) != 0) {
			if (m != 1 || cli_parse_size("--stack", val, (uint64_t)1 << 32, &stack))
				return CLI_USAGE;
		} else if ((m = cli_opt(argc, argv, &i, "--timeout", &val)) != 0) {
			if (m != 1 || cli_parse_size("--timeout", val, UINT64_MAX, &timeout))
				return CLI_USAGE;
		} else if (!strcmp(argv[i], "--report")) {
			want_report = 1;
		} else if (!strcmp(argv[i], "--verbose")) {
			verbose = 1;
		} else if ((m = cli_model_opt(argc, argv, &i, &model)) != 0) {
			if (m != 1)
				return CLI_USAGE;
		} else {
			return cli_usage("tcmpirun: unknown option %s (tcmpirun --help)", argv[i]);
		}
	}
	if (i >= argc)
		return cli_usage("tcmpirun: no PROGRAM (tcmpirun --help)");
	if (p <= 0)
		return cli_usage("tcmpirun: -np P is required");

	char spec[64];
	if (!topo) {
		snprintf(spec, sizeof spec, "complete:%ld", p);
		topo = spec;
	}
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.p = (int)p;
	cfg.topology = topo;
	cfg.exec = (enum tc_exec)exec;
	cfg.mode = (enum tc_mode)mode;
	cfg.model = model.md;
	cfg.stack_bytes = (size_t)stack;
	cfg.timeout_ms = timeout;
	struct run run = {.argc = argc - i, .argv = argv + i};
	void **handles = calloc((size_t)p, sizeof *handles);
	run.entry = calloc((size_t)p, sizeof *run.entry);
	run.status = calloc((size_t)p, sizeof *run.status);
	run.stats = want_report ? calloc((size_t)p, sizeof *run.stats) : NULL;
	if (!handles || !run.entry || !run.status || (want_report && !run.stats))
		return cli_fail("tcmpirun: out of memory");
	/* The copies are loaded before the team starts its threads: the
	 * loader's mappings then change the address space of one thread,
	 * without interrupting other CPUs to flush their TLBs. */
	long rss0 = rss_kb();
	double t0 = now_s(), c0 = cpu_s();
	int rc = load_copies(argv[i], (int)p, run.entry, handles);
	double t1 = now_s(), c1 = cpu_s();
	long rss1 = rss_kb();
	if (rc != CLI_OK)
		return rc;
	struct tc_team *team = NULL;
	double tt0 = now_s();
	int err = tc_team_create(&cfg, &team);
	double tt1 = now_s();
	if (err)
		return cli_fail("tcmpirun: cannot create the team (%s): %s%s%s", topo,
		                tc_strerror(err), *tc_error_detail() ? ": " : "", tc_error_detail());
	struct tc_team_info info;
	tc_team_get_info(team, &info);
	if (verbose && rc == CLI_OK)
		fprintf(stderr,
		        "tcmpirun: loaded %ld copies of %s in %.1f ms (%.1f us per rank; CPU "
		        "%.1f us per rank); resident memory +%ld kB (%.1f kB per rank); team %s, "
		        "%zu kB, made in %.1f ms; %s; the memfds hold %ld kB (%.1f kB per rank)\n",
		        p, argv[i], (t1 - t0) * 1e3, (t1 - t0) * 1e6 / (double)p,
		        (c1 - c0) * 1e6 / (double)p, rss1 - rss0, (double)(rss1 - rss0) / (double)p,
		        topo, info.memory_bytes / 1024, (tt1 - tt0) * 1e3,
		        info.exec == TC_EXEC_FIBRES ? "fibres" : "threads", memfd_kb,
		        (double)memfd_kb / (double)p);
	if (rc == CLI_OK) {
		run.shared.team = team;
		run.shared.report = want_report;
		run.shared.fibres = info.exec == TC_EXEC_FIBRES;
		run.shared.wtime_origin = now_s();
		err = tc_run(team, rank_fn, &run);
		fflush(stdout);
		if (atomic_load(&run.shared.aborted)) {
			rc = atomic_load(&run.shared.abort_code);
		} else {
			for (long r = 0; r < p && !rc; r++)
				rc = run.status[r];
			if (!rc && err)
				rc = cli_fail("tcmpirun: %s", tc_strerror(err));
		}
		if (verbose)
			fprintf(stderr,
			        "tcmpirun: resident memory at the end %ld kB (VmRSS), %ld kB "
			        "(Pss)\n",
			        rss_kb(), pss_kb());
		if (want_report)
			report(run.stats, (int)p);
	}
	/* The copies stay loaded until the process ends: a rank's atexit
	 * handlers and destructors are not run (docs/mpi-programs.md). */
	tc_team_destroy(team);
	free(run.entry);
	free(run.status);
	free(run.stats);
	free(handles);
	return rc & 0xff ? rc & 0xff : (rc ? 1 : 0);
}
