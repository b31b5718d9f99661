/* sample.c — the "sample" measurements of proff calibrate: what the sampling
 * recorder (proff record, lib/record) costs per sample.
 *
 * The workload (compiled at run time, frame pointers kept, a few frames deep
 * so -g has a callchain to walk) spins for a fixed busy time reading the
 * clock continuously: every gap between two reads longer than 10 loop
 * iterations (at least 400 ns) is time the workload did not run. A gap in
 * which the thread's context-switch count did not change (and shorter than
 * 200 us) is an interrupt — the sampling interrupts among them; the others
 * are preemptions (the recorder draining its buffers, other tasks) and do not
 * count as busy time. It is run under rec_run() in a child process at 10 Hz
 * (L, three times per repetition, interleaved with the others: L F.. L F.. L;
 * the medians of the three are the baseline) and at each -F frequency with
 * and without callchains (F):
 *
 *   kernel    = (irq_F/busy_F - irq_L/busy_L) * busy_F / (n_F - n_L)
 *   recorder  = (self_F - self_L) / (n_F - n_L)
 *   F=N [-g]  = kernel + recorder                                 (per sample)
 *   recorder start-up = self_L                                    (per run)
 * The row's note gives the medians of the two parts.
 *
 * irq = interrupt time seen by the workload, busy = its busy time, n =
 * samples written, self = the recorder's own CPU time (getrusage in the
 * recorder after rec_run, without the workload). Both parts are measured
 * directly instead of as the difference of two whole-run CPU times, where the
 * workload's own run-to-run variation (a few ms on a busy machine) drowned
 * the 3 ms that 500 samples cost. docs/calibrate.md explains it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cal-int.h"
#include "proff/record.h"

static const char spin_src[] =
	"/* proff calibrate workload: a busy loop a few frames deep that reads the clock\n"
	" * continuously and adds up the gaps in which it did not run (interrupts, such\n"
	" * as the sampling interrupts, and preemptions, told apart by the thread's\n"
	" * context-switch count). argv: busy time in ns, output file. Writes\n"
	" * \"busy_ns irq_ns irq_gaps other_ns other_gaps\" in ns. */\n"
	"#include <stdint.h>\n"
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#include <sys/resource.h>\n"
	"#include <time.h>\n"
	"#if defined(__x86_64__) || defined(__i386__)\n"
	"#include <x86intrin.h>\n"
	"#define TICKS() __rdtsc()\n"
	"#else\n"
	"#define TICKS() mono()\n"
	"#endif\n"
	"#define GAP_MIN_NS 400.0      /* at least; and 10 x the fastest iteration */\n"
	"#define GAP_MAX_NS 200000.0   /* longer: not an interrupt (host steal) */\n"
	"\n"
	"static uint64_t mono(void)\n"
	"{\n"
	"\tstruct timespec t;\n"
	"\tclock_gettime(CLOCK_MONOTONIC, &t);\n"
	"\treturn (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;\n"
	"}\n"
	"\n"
	"static long switches(void)\n"
	"{\n"
	"\tstruct rusage ru;\n"
	"\tgetrusage(RUSAGE_SELF, &ru);\n"
	"\treturn ru.ru_nvcsw + ru.ru_nivcsw;\n"
	"}\n"
	"\n"
	"static double ns_per_tick;\n"
	"static double res[5];\n"
	"\n"
	"__attribute__((noinline)) void spin(double busy_ns)\n"
	"{\n"
	"\tuint64_t gmin = (uint64_t)(GAP_MIN_NS / ns_per_tick), gmax = (uint64_t)(GAP_MAX_NS / ns_per_tick);\n"
	"\tuint64_t it = ~0ull, p0 = TICKS();\n"
	"\tfor (int i = 0; i < 1000; i++) {\n"
	"\t\tuint64_t t = TICKS();\n"
	"\t\tif (t - p0 < it)\n"
	"\t\t\tit = t - p0;\n"
	"\t\tp0 = t;\n"
	"\t}\n"
	"\tif (gmin < 10 * it)\n"
	"\t\tgmin = 10 * it;\n"
	"\tuint64_t lim = (uint64_t)(busy_ns / ns_per_tick), busy = 0, irq = 0, other = 0;\n"
	"\tlong nirq = 0, nother = 0, sw = switches();\n"
	"\tuint64_t prev = TICKS();\n"
	"\twhile (busy < lim) {\n"
	"\t\tuint64_t t = TICKS(), d = t - prev;\n"
	"\t\tif (d < gmin) {\n"
	"\t\t\tbusy += d;\n"
	"\t\t\tprev = t;\n"
	"\t\t\tcontinue;\n"
	"\t\t}\n"
	"\t\tlong s = switches();\n"
	"\t\tif (s == sw && d <= gmax) {\n"
	"\t\t\tirq += d;\n"
	"\t\t\tbusy += d;\n"
	"\t\t\tnirq++;\n"
	"\t\t} else {\n"
	"\t\t\tother += d;\n"
	"\t\t\tnother++;\n"
	"\t\t}\n"
	"\t\tsw = s;\n"
	"\t\tprev = TICKS();         /* the getrusage call is in no count */\n"
	"\t}\n"
	"\tres[0] = (double)busy * ns_per_tick;\n"
	"\tres[1] = (double)irq * ns_per_tick;\n"
	"\tres[2] = (double)nirq;\n"
	"\tres[3] = (double)other * ns_per_tick;\n"
	"\tres[4] = (double)nother;\n"
	"}\n"
	"__attribute__((noinline)) void d1(double n) { spin(n); __asm__ __volatile__(\"\"); }\n"
	"__attribute__((noinline)) void d2(double n) { d1(n); __asm__ __volatile__(\"\"); }\n"
	"__attribute__((noinline)) void d3(double n) { d2(n); __asm__ __volatile__(\"\"); }\n"
	"__attribute__((noinline)) void d4(double n) { d3(n); __asm__ __volatile__(\"\"); }\n"
	"\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\tif (argc < 3)\n"
	"\t\treturn 2;\n"
	"\tuint64_t m0 = mono(), t0 = TICKS(), m1, t1;\n"
	"\tdo {\n"
	"\t\tm1 = mono();\n"
	"\t\tt1 = TICKS();\n"
	"\t} while (m1 - m0 < 1000000);\n"
	"\tns_per_tick = (double)(m1 - m0) / (double)(t1 - t0);\n"
	"\td4(strtod(argv[1], NULL));\n"
	"\tFILE *f = fopen(argv[2], \"w\");\n"
	"\tif (!f)\n"
	"\t\treturn 1;\n"
	"\tfprintf(f, \"%.0f %.0f %.0f %.0f %.0f\\n\", res[0], res[1], res[2], res[3], res[4]);\n"
	"\treturn fclose(f) != 0;\n"
	"}\n";

#define LOW_FREQ 10
#define MAX_VARIANTS 8

typedef struct sample_variant {
	uint64_t freq;
	bool callgraph;
	int row;
} sample_variant;

/* What the recorder child hands back (shared memory). */
typedef struct rec_shared {
	uint64_t samples;           /* SAMPLE records written */
	double self_ns;             /* the recorder's own CPU time (not the workload's) */
} rec_shared;

typedef struct sample_state {
	char *src, *bin, *data, *res;
	char busy[24];              /* the workload's busy time, ns */
	int row_start;
	sample_variant v[MAX_VARIANTS];
	size_t nv;
	volatile rec_shared *shared;
	double kern[MAX_VARIANTS][CAL_MAX_RUNS], recd[MAX_VARIANTS][CAL_MAX_RUNS];  /* the two parts */
	size_t nparts[MAX_VARIANTS];
} sample_state;

/* One recording: samples, the recorder's own CPU time and what the workload
 * saw: busy time, time in short interruptions (interrupts) and their number. */
typedef struct rec_result {
	cal_sample cpu;             /* CPU time and counters of recorder + workload */
	uint64_t samples;
	double self_ns;
	double busy_ns, irq_ns, irq_n;
} rec_result;

typedef struct rec_arg {
	sample_state *s;
	uint64_t freq;
	bool callgraph;
} rec_arg;

static double ru_ns(const struct rusage *ru)
{
	return ((double)ru->ru_utime.tv_sec + (double)ru->ru_stime.tv_sec) * 1e9 +
	       ((double)ru->ru_utime.tv_usec + (double)ru->ru_stime.tv_usec) * 1e3;
}

static int rec_child(void *p)
{
	rec_arg *a = p;
	char *argv[] = { a->s->bin, a->s->busy, a->s->res, NULL };
	rec_opts o;
	memset(&o, 0, sizeof(o));
	o.output = a->s->data;
	o.freq = a->freq;
	o.callgraph = a->callgraph;
	o.argv = argv;
	o.no_buildid_cache = true;
	rec_stats st;
	memset(&st, 0, sizeof(st));
	proff_error err = { 0 };
	if (rec_run(&o, &st, &err) < 0)
		return 2;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);   /* the recorder alone; the workload is a child */
	a->s->shared->samples = st.samples;
	a->s->shared->self_ns = ru_ns(&ru);
	return st.have_status && st.status == 0 ? 0 : 3;
}

/* The workload's report: busy_ns irq_ns irq_gaps other_ns other_gaps. */
static int read_res(sample_state *s, rec_result *r)
{
	FILE *f = fopen(s->res, "r");
	if (!f)
		return -1;
	double other, nother;
	int n = fscanf(f, "%lf %lf %lf %lf %lf", &r->busy_ns, &r->irq_ns, &r->irq_n, &other, &nother);
	fclose(f);
	unlink(s->res);
	return n == 5 && r->busy_ns > 0 ? 0 : -1;
}

static int record(cal_ctx *c, sample_state *s, uint64_t freq, bool g, rec_result *r)
{
	rec_arg a = { s, freq, g };
	memset(r, 0, sizeof(*r));
	s->shared->samples = 0;
	s->shared->self_ns = 0;
	unlink(s->res);
	int rc = cal_spawn(c, NULL, NULL, rec_child, &a, &r->cpu);
	r->samples = s->shared->samples;
	r->self_ns = s->shared->self_ns;
	if (rc < 0 || r->cpu.migrated || read_res(s, r) < 0)
		return -1;
	return 0;
}

int cal_sample_setup(cal_ctx *c, void **state)
{
	sample_state *s = calloc(1, sizeof(*s));
	if (!s)
		return -1;
	*state = s;
	s->row_start = cal_add_row(c, "sample", "recorder start-up", "run", 1);
	for (size_t i = 0; i < sizeof(c->opts->freqs) / sizeof(c->opts->freqs[0]) && c->opts->freqs[i]; i++) {
		for (int g = 0; g < 2 && s->nv < MAX_VARIANTS; g++) {
			char name[48];
			snprintf(name, sizeof(name), "F=%llu%s", (unsigned long long)c->opts->freqs[i], g ? " -g" : "");
			s->v[s->nv].freq = c->opts->freqs[i];
			s->v[s->nv].callgraph = g;
			s->v[s->nv].row = cal_add_row(c, "sample", name, "sample", 0);
			s->nv++;
		}
	}
	void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	s->shared = m;
	s->src = cal_path(c, "spin.c");
	s->bin = cal_path(c, "spin");
	s->data = cal_path(c, "spin.data");
	s->res = cal_path(c, "spin.res");
	if (!s->src || !s->bin || !s->data || !s->res)
		return -1;
	static const char *const fl[] = { "-fno-omit-frame-pointer", "-fno-optimize-sibling-calls", NULL };
	if (cal_write_file(c, "spin.c", spin_src) < 0 || cal_compile(c, "spin.c", "spin", fl) < 0) {
		cal_row_skip(c, s->row_start, "cannot compile the workload with '%s'", c->cc);
		for (size_t i = 0; i < s->nv; i++)
			cal_row_skip(c, s->v[i].row, "cannot compile the workload with '%s'", c->cc);
		return -1;
	}
	snprintf(s->busy, sizeof(s->busy), "%.0f", c->opts->quick ? 0.12e9 : 0.2e9);
	char *argv[] = { s->bin, s->busy, s->res, NULL };
	cal_sample t;
	rec_result r;
	if (cal_spawn(c, argv, NULL, NULL, NULL, &t) < 0 || read_res(s, &r) < 0)
		return -1;
	/* does the recorder work here at all? */
	if (record(c, s, LOW_FREQ, false, &r) < 0) {
		cal_row_skip(c, s->row_start, "the sampling recorder does not run here (perf_event_open)");
		for (size_t i = 0; i < s->nv; i++)
			cal_row_skip(c, s->v[i].row, "the sampling recorder does not run here (perf_event_open)");
		return -1;
	}
	return 0;
}

/* Cost per sample at F against the 10 Hz baseline L (see the file's head):
 *   kernel   = (irq_F/busy_F - irq_L/busy_L) * busy_F / (n_F - n_L)
 *   recorder = (self_F - self_L) / (n_F - n_L)                          */
static double per_sample(const rec_result *f, const rec_result *l, double *kernel, double *recorder)
{
	double dn = (double)f->samples - (double)l->samples;
	*kernel = (f->irq_ns / f->busy_ns - l->irq_ns / l->busy_ns) * f->busy_ns / dn;
	*recorder = (f->self_ns - l->self_ns) / dn;
	return *kernel + *recorder;
}

static double med3(double a, double b, double c)
{
	return a > b ? (b > c ? b : a > c ? c : a) : (a > c ? a : b > c ? c : b);
}

/* The baseline of a repetition: the three 10 Hz runs' medians of interrupt
 * rate, recorder CPU and samples (one disturbed run does not move it); the
 * counters are those of the run with the median interrupt rate. */
static void baseline(const rec_result l[3], rec_result *b)
{
	double r[3];
	for (int i = 0; i < 3; i++)
		r[i] = l[i].irq_ns / l[i].busy_ns;
	double m = med3(r[0], r[1], r[2]);
	int mi = r[0] == m ? 0 : r[1] == m ? 1 : 2;
	*b = l[mi];
	b->self_ns = med3(l[0].self_ns, l[1].self_ns, l[2].self_ns);
	b->samples = (uint64_t)med3((double)l[0].samples, (double)l[1].samples, (double)l[2].samples);
}

/* One repetition: plain, then the 10 Hz baseline three times, interleaved
 * with the variants (L F.. L F.. L), so that a drift of the machine's load
 * during the repetition, or one disturbed baseline run, cancels out. */
void cal_sample_run(cal_ctx *c, void *state, unsigned run)
{
	sample_state *s = state;
	(void)run;
	cal_sample plain;
	rec_result low[3], v[MAX_VARIANTS], base;
	bool vok[MAX_VARIANTS];
	char *argv[] = { s->bin, s->busy, s->res, NULL };
	bool ok = cal_spawn(c, argv, NULL, NULL, NULL, &plain) == 0 && !plain.migrated &&
		  record(c, s, LOW_FREQ, false, &low[0]) == 0;
	unlink(s->res);
	size_t half = (s->nv + 1) / 2;
	for (size_t i = 0; ok && i < s->nv; i++) {
		vok[i] = record(c, s, s->v[i].freq, s->v[i].callgraph, &v[i]) == 0;
		if (i + 1 == half)
			ok = record(c, s, LOW_FREQ, false, &low[1]) == 0;
	}
	ok = ok && record(c, s, LOW_FREQ, false, &low[2]) == 0;
	if (!ok) {
		cal_row_discard(c, s->row_start);
		for (size_t i = 0; i < s->nv; i++)
			cal_row_discard(c, s->v[i].row);
		return;
	}
	baseline(low, &base);
	double cnt[CAL_MAX_COUNTERS];
	bool okc[CAL_MAX_COUNTERS];
	/* start-up: the recorder's own CPU time at 10 Hz (a handful of samples);
	 * counters can only count the whole tree: recorded minus plain */
	cal_cnt_delta(c, &base.cpu, &plain, 1, cnt, okc);
	cal_row_value(c, s->row_start, base.self_ns, cnt, okc);
	for (size_t i = 0; i < s->nv; i++) {
		if (!vok[i] || v[i].samples <= base.samples) {
			cal_row_discard(c, s->v[i].row);
			continue;
		}
		double d = (double)(v[i].samples - base.samples), k, r;
		c->res->rows[s->v[i].row].ops = v[i].samples;
		cal_cnt_delta(c, &v[i].cpu, &base.cpu, d, cnt, okc);
		cal_row_value(c, s->v[i].row, per_sample(&v[i], &base, &k, &r), cnt, okc);
		if (s->nparts[i] < CAL_MAX_RUNS) {
			s->kern[i][s->nparts[i]] = k;
			s->recd[i][s->nparts[i]++] = r;
		}
	}
}

void cal_sample_teardown(cal_ctx *c, void *state)
{
	sample_state *s = state;
	if (!s)
		return;
	for (size_t i = 0; i < s->nv; i++) {
		cal_summary k, r;
		if (!s->nparts[i] || cal_summarize(s->kern[i], s->nparts[i], &k) < 0 ||
		    cal_summarize(s->recd[i], s->nparts[i], &r) < 0)
			continue;
		snprintf(c->res->rows[s->v[i].row].note, sizeof(c->res->rows[0].note),
			 "medians: kernel %.0f ns (interrupts seen by the workload) + recorder %.0f ns (its own CPU)",
			 k.median, r.median);
	}
	const char *files[] = { s->src, s->bin, s->data, s->res };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (files[i])
			unlink(files[i]);
	if (s->data) {
		char old[4200];
		snprintf(old, sizeof(old), "%s.old", s->data);
		unlink(old);
	}
	if (s->shared)
		munmap((void *)s->shared, 4096);
	free(s->src);
	free(s->bin);
	free(s->data);
	free(s->res);
	free(s);
}
