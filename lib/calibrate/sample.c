/* sample.c — the "sample" measurements of proff calibrate: what the sampling
 * recorder (proff record, lib/record) costs per sample.
 *
 * A CPU-bound loop (compiled at run time, frame pointers kept, a few frames
 * deep so -g has a callchain to walk) is run plain and under rec_run() in a
 * child process at 10 Hz (the recorder's fixed cost: start-up, /proc
 * synthesis, build-ids, few samples) and at each -F frequency with and without
 * callchains. CPU time (user + system) of the recorder and its workload:
 *
 *   recorder start-up  = CPU(10 Hz) - CPU(plain)                 (per run)
 *   F=N [-g]           = (CPU(F) - CPU(10 Hz)) / (samples(F) - samples(10 Hz))
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cal-int.h"
#include "proff/record.h"

static const char spin_src[] =
	"/* proff calibrate workload: a CPU-bound loop a few frames deep */\n"
	"#include <stdlib.h>\n"
	"static volatile unsigned long sink;\n"
	"__attribute__((noinline)) unsigned long spin(unsigned long n)\n"
	"{\n"
	"\tunsigned long x = 1;\n"
	"\tfor (unsigned long i = 0; i < n; i++)\n"
	"\t\tx = x * 6364136223846793005UL + 1442695040888963407UL;\n"
	"\treturn x;\n"
	"}\n"
	"__attribute__((noinline)) unsigned long d1(unsigned long n) { return spin(n) + 1; }\n"
	"__attribute__((noinline)) unsigned long d2(unsigned long n) { return d1(n) + 1; }\n"
	"__attribute__((noinline)) unsigned long d3(unsigned long n) { return d2(n) + 1; }\n"
	"__attribute__((noinline)) unsigned long d4(unsigned long n) { return d3(n) + 1; }\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\tsink = d4(argc > 1 ? strtoul(argv[1], NULL, 10) : 0);\n"
	"\treturn 0;\n"
	"}\n";

#define LOW_FREQ 10
#define MAX_VARIANTS 8

typedef struct sample_variant {
	uint64_t freq;
	bool callgraph;
	int row;
} sample_variant;

typedef struct sample_state {
	char *src, *bin, *data;
	char iters[24];
	int row_start;
	sample_variant v[MAX_VARIANTS];
	size_t nv;
	volatile uint64_t *shared;  /* samples written, from the recorder child */
} sample_state;

typedef struct rec_arg {
	sample_state *s;
	uint64_t freq;
	bool callgraph;
} rec_arg;

static int rec_child(void *p)
{
	rec_arg *a = p;
	char *argv[] = { a->s->bin, a->s->iters, NULL };
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
	*a->s->shared = st.samples;
	return st.have_status && st.status == 0 ? 0 : 3;
}

static int record(cal_ctx *c, sample_state *s, uint64_t freq, bool g, cal_sample *out, uint64_t *samples)
{
	rec_arg a = { s, freq, g };
	*s->shared = 0;
	int rc = cal_spawn(c, NULL, NULL, rec_child, &a, out);
	*samples = *s->shared;
	return rc;
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
	if (!s->src || !s->bin || !s->data)
		return -1;
	static const char *const fl[] = { "-fno-omit-frame-pointer", "-fno-optimize-sibling-calls", NULL };
	if (cal_write_file(c, "spin.c", spin_src) < 0 || cal_compile(c, "spin.c", "spin", fl) < 0) {
		cal_row_skip(c, s->row_start, "cannot compile the workload with '%s'", c->cc);
		for (size_t i = 0; i < s->nv; i++)
			cal_row_skip(c, s->v[i].row, "cannot compile the workload with '%s'", c->cc);
		return -1;
	}
	/* iterations for the target CPU time */
	double target = c->opts->quick ? 0.12e9 : 0.2e9;
	uint64_t probe = 20000000;
	snprintf(s->iters, sizeof(s->iters), "%llu", (unsigned long long)probe);
	char *argv[] = { s->bin, s->iters, NULL };
	cal_sample t;
	if (cal_spawn(c, argv, NULL, NULL, NULL, &t) < 0 || t.cpu_ns <= 0)
		return -1;
	double it = (double)probe * target / t.cpu_ns;
	snprintf(s->iters, sizeof(s->iters), "%llu", (unsigned long long)(it < 1e6 ? 1e6 : it));
	/* does the recorder work here at all? */
	uint64_t n;
	if (record(c, s, LOW_FREQ, false, &t, &n) < 0) {
		cal_row_skip(c, s->row_start, "the sampling recorder does not run here (perf_event_open)");
		for (size_t i = 0; i < s->nv; i++)
			cal_row_skip(c, s->v[i].row, "the sampling recorder does not run here (perf_event_open)");
		return -1;
	}
	return 0;
}

void cal_sample_run(cal_ctx *c, void *state, unsigned run)
{
	sample_state *s = state;
	(void)run;
	cal_sample plain, low, v[MAX_VARIANTS];
	uint64_t nlow = 0, nv[MAX_VARIANTS] = { 0 };
	char *argv[] = { s->bin, s->iters, NULL };
	bool ok = cal_spawn(c, argv, NULL, NULL, NULL, &plain) == 0 &&
		  record(c, s, LOW_FREQ, false, &low, &nlow) == 0 && !plain.migrated && !low.migrated;
	if (!ok) {
		cal_row_discard(c, s->row_start);
		for (size_t i = 0; i < s->nv; i++)
			cal_row_discard(c, s->v[i].row);
		return;
	}
	double cnt[CAL_MAX_COUNTERS];
	bool okc[CAL_MAX_COUNTERS];
	cal_cnt_delta(c, &low, &plain, 1, cnt, okc);
	cal_row_value(c, s->row_start, low.cpu_ns - plain.cpu_ns, cnt, okc);
	for (size_t i = 0; i < s->nv; i++) {
		if (record(c, s, s->v[i].freq, s->v[i].callgraph, &v[i], &nv[i]) < 0 || v[i].migrated ||
		    nv[i] <= nlow) {
			cal_row_discard(c, s->v[i].row);
			continue;
		}
		double d = (double)(nv[i] - nlow);
		c->res->rows[s->v[i].row].ops = nv[i];
		cal_cnt_delta(c, &v[i], &low, d, cnt, okc);
		cal_row_value(c, s->v[i].row, (v[i].cpu_ns - low.cpu_ns) / d, cnt, okc);
	}
}

void cal_sample_teardown(cal_ctx *c, void *state)
{
	sample_state *s = state;
	(void)c;
	if (!s)
		return;
	const char *files[] = { s->src, s->bin, s->data };
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
	free(s);
}
