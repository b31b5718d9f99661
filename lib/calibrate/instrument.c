/* instrument.c — the "instrument" measurements of proff calibrate: what the
 * -finstrument-functions runtime costs per call.
 *
 * A tiny workload (N calls of an empty function from a loop) is compiled at
 * run time twice, with and without -finstrument-functions, and each
 * repetition runs it five ways: plain (N), hooks idle (N and 0: glibc's empty
 * __cyg_profile_func_* ), and with libproff-instrument.so preloaded (N and 0).
 *
 *   idle hooks       = (idle(N) - plain(N)) / N
 *   runtime start-up = proff(0) - idle(0)              (per run)
 *   proff per call   = (proff(N) - idle(N) - start-up) / N
 *   hooks total      = idle hooks + proff per call
 *   o_in             = recorded duration of the empty function (TAU's null timer)
 *   o_full           = recorded duration of one loop iteration - plain call
 *                      (TAU: (loop - o_in) / N; here the median iteration)
 *   o_out            = o_full - o_in
 * CPU time (user + system) of the child from wait4.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cal-int.h"
#include "proff/trace.h"

extern char **environ;

static const char calls_src[] =
	"/* proff calibrate workload: N calls of an empty function */\n"
	"#include <stdlib.h>\n"
	"__attribute__((noinline)) void pf_cal_null(void) { __asm__ __volatile__(\"\"); }\n"
	"__attribute__((noinline)) void pf_cal_loop(long n)\n"
	"{\n"
	"\tfor (long i = 0; i < n; i++)\n"
	"\t\tpf_cal_null();\n"
	"}\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\tpf_cal_loop(argc > 1 ? atol(argv[1]) : 0);\n"
	"\treturn 0;\n"
	"}\n";

enum { R_IDLE, R_CALL, R_TOTAL, R_START, R_OIN, R_OFULL, R_OOUT, NR };

typedef struct instr_state {
	int row[NR];
	uint64_t n;
	char nstr[24];
	char *plain, *inst, *trace, *src;
	char **env;                /* environment with the runtime preloaded */
	size_t nenv;
} instr_state;

static int env_add(instr_state *s, const char *k, const char *v)
{
	char *e = malloc(strlen(k) + strlen(v) + 2);
	if (!e)
		return -1;
	sprintf(e, "%s=%s", k, v);
	s->env[s->nenv++] = e;
	return 0;
}

static int build_env(instr_state *s, const char *runtime)
{
	size_t n = 0;
	while (environ[n])
		n++;
	s->env = calloc(n + 8, sizeof(char *));
	if (!s->env)
		return -1;
	static const char *const drop[] = { "LD_PRELOAD=", "PROFF_OUTPUT=", "PROFF_APPEND=",
					    "PROFF_EXECED=", "PROFF_TSC_HZ=" };
	for (size_t i = 0; i < n; i++) {
		bool skip = false;
		for (size_t k = 0; k < sizeof(drop) / sizeof(drop[0]); k++)
			if (!strncmp(environ[i], drop[k], strlen(drop[k])))
				skip = true;
		if (!skip && !(s->env[s->nenv++] = strdup(environ[i])))
			return -1;
	}
	const char *old = getenv("LD_PRELOAD");
	char *pre = malloc(strlen(runtime) + (old ? strlen(old) : 0) + 2);
	if (!pre)
		return -1;
	sprintf(pre, "%s%s%s", runtime, old && *old ? ":" : "", old && *old ? old : "");
	int rc = env_add(s, "LD_PRELOAD", pre);
	free(pre);
	if (rc < 0 || env_add(s, "PROFF_OUTPUT", s->trace) < 0 || env_add(s, "PROFF_APPEND", "1") < 0)
		return -1;
	return 0;
}

int cal_instrument_setup(cal_ctx *c, void **state)
{
	instr_state *s = calloc(1, sizeof(*s));
	if (!s)
		return -1;
	*state = s;
	s->n = c->opts->quick ? 1000000 : 3000000;
	snprintf(s->nstr, sizeof(s->nstr), "%llu", (unsigned long long)s->n);
	static const char *const names[NR] = { "idle hooks", "proff per call", "hooks total",
					       "runtime start-up", "o_in", "o_full", "o_out" };
	for (int i = 0; i < NR; i++)
		s->row[i] = cal_add_row(c, "instrument", names[i], i == R_START ? "run" : "call",
					i == R_START ? 1 : s->n);
	for (int i = R_OIN; i <= R_OOUT; i++)
		cal_row_no_counters(c, s->row[i]);
	if (!c->opts->runtime) {
		for (int i = 0; i < NR; i++)
			cal_row_skip(c, s->row[i], "libproff-instrument.so not found");
		return -1;
	}
	s->src = cal_path(c, "calls.c");
	s->plain = cal_path(c, "calls-plain");
	s->inst = cal_path(c, "calls-inst");
	s->trace = cal_path(c, "calls.trace");
	if (!s->src || !s->plain || !s->inst || !s->trace || build_env(s, c->opts->runtime) < 0)
		return -1;
	static const char *const fl_inst[] = { "-finstrument-functions", NULL };
	if (cal_write_file(c, "calls.c", calls_src) < 0 ||
	    cal_compile(c, "calls.c", "calls-plain", NULL) < 0 ||
	    cal_compile(c, "calls.c", "calls-inst", fl_inst) < 0) {
		for (int i = 0; i < NR; i++)
			cal_row_skip(c, s->row[i], "cannot compile the workload with '%s'", c->cc);
		return -1;
	}
	return 0;
}

static int run_proff(cal_ctx *c, instr_state *s, const char *n, cal_sample *out)
{
	int fd = open(s->trace, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	close(fd);
	char *argv[] = { s->inst, (char *)n, NULL };
	return cal_spawn(c, argv, s->env, NULL, NULL, out);
}

/* o_in and o_full from the trace just written, TAU's way but robust against
 * preemption (the trace has wall-clock timestamps and the machine may be
 * busy): o_in = median recorded duration of the empty function, o_full =
 * median interval between two consecutive entries of it (one loop iteration
 * with its hooks) minus the plain call's cost. Medians from histograms of
 * clock ticks. */
#define HBINS 65536

typedef struct tau_ctx {
	proff_trace *t;
	uint32_t null_fn;          /* function ids appear while decoding */
	double tps;
	uint64_t enter, last_enter;
	bool in, have_last;
	uint32_t *h_in, *h_it;     /* HBINS + 1 (overflow) */
	uint64_t n_in, n_it;
} tau_ctx;

static int tau_event(void *arg, const proff_trace_thread_info *th, const proff_trace_event *ev)
{
	tau_ctx *x = arg;
	if (!ev) {
		x->tps = th->ticks_per_sec;
		x->in = x->have_last = false;
		return 0;
	}
	if (x->null_fn == UINT32_MAX) {
		const char *n = proff_trace_func_name(x->t, ev->func);
		if (n && !strcmp(n, "pf_cal_null"))
			x->null_fn = ev->func;
	}
	if (ev->func != x->null_fn || ev->synthetic)
		return 0;
	if (ev->kind == PROFF_TEV_ENTER) {
		if (x->have_last) {
			uint64_t d = ev->ticks - x->last_enter;
			x->h_it[d < HBINS ? d : HBINS]++;
			x->n_it++;
		}
		x->last_enter = x->enter = ev->ticks;
		x->have_last = x->in = true;
	} else if (x->in) {
		uint64_t d = ev->ticks - x->enter;
		x->h_in[d < HBINS ? d : HBINS]++;
		x->n_in++;
		x->in = false;
	}
	return 0;
}

static double hist_median(const uint32_t *h, uint64_t n)
{
	uint64_t half = (n + 1) / 2, acc = 0;
	for (size_t i = 0; i <= HBINS; i++) {
		acc += h[i];
		if (acc >= half)
			return (double)i;
	}
	return (double)HBINS;
}

static int trace_overheads(instr_state *s, double plain_call_ns, double *o_in, double *o_full)
{
	proff_trace *t;
	proff_error err = { 0 };
	if (proff_trace_open(s->trace, &t, &err) < 0)
		return -1;
	int rc = -1;
	tau_ctx x = { .t = t, .null_fn = UINT32_MAX };
	if (proff_trace_symbolize(t, NULL, &err) < 0)
		goto out;
	x.h_in = calloc(HBINS + 1, sizeof(uint32_t));
	x.h_it = calloc(HBINS + 1, sizeof(uint32_t));
	if (!x.h_in || !x.h_it || proff_trace_foreach(t, tau_event, &x, &err) < 0)
		goto out;
	if (x.n_in + 1 < s->n || x.n_it + 2 < s->n || x.tps <= 0)
		goto out;
	*o_in = hist_median(x.h_in, x.n_in) * 1e9 / x.tps;
	*o_full = hist_median(x.h_it, x.n_it) * 1e9 / x.tps - plain_call_ns;
	rc = 0;
out:
	free(x.h_in);
	free(x.h_it);
	proff_trace_close(t);
	return rc;
}

void cal_instrument_run(cal_ctx *c, void *state, unsigned run)
{
	instr_state *s = state;
	(void)run;
	cal_sample plain, idle, idle0, proff, proff0;
	char *a_plain[] = { s->plain, s->nstr, NULL };
	char *a_idle[] = { s->inst, s->nstr, NULL };
	char *a_idle0[] = { s->inst, (char *)"0", NULL };
	bool ok = cal_spawn(c, a_plain, NULL, NULL, NULL, &plain) == 0 &&
		  cal_spawn(c, a_idle, NULL, NULL, NULL, &idle) == 0 &&
		  cal_spawn(c, a_idle0, NULL, NULL, NULL, &idle0) == 0 &&
		  run_proff(c, s, "0", &proff0) == 0 &&
		  run_proff(c, s, s->nstr, &proff) == 0;
	double plain_call = cal_empty_call_ns();
	double o_in = 0, o_full = 0;
	if (ok)
		ok = trace_overheads(s, plain_call, &o_in, &o_full) == 0;
	if (!ok || plain.migrated || idle.migrated || idle0.migrated || proff.migrated || proff0.migrated) {
		for (int i = 0; i < NR; i++)
			cal_row_discard(c, s->row[i]);
		return;
	}
	double n = (double)s->n, cnt[CAL_MAX_COUNTERS], fix[CAL_MAX_COUNTERS];
	bool okc[CAL_MAX_COUNTERS], okf[CAL_MAX_COUNTERS];
	double start = proff0.cpu_ns - idle0.cpu_ns;
	cal_cnt_delta(c, &proff0, &idle0, 1, fix, okf);
	cal_row_value(c, s->row[R_START], start, fix, okf);

	cal_cnt_delta(c, &idle, &plain, n, cnt, okc);
	double idle_ns = (idle.cpu_ns - plain.cpu_ns) / n;
	cal_row_value(c, s->row[R_IDLE], idle_ns, cnt, okc);

	cal_cnt_delta(c, &proff, &idle, n, cnt, okc);
	for (size_t i = 0; i < c->res->ncounters; i++) {
		cnt[i] -= fix[i] / n;
		okc[i] = okc[i] && okf[i];
	}
	double call_ns = (proff.cpu_ns - idle.cpu_ns - start) / n;
	cal_row_value(c, s->row[R_CALL], call_ns, cnt, okc);

	cal_cnt_delta(c, &proff, &plain, n, cnt, okc);
	for (size_t i = 0; i < c->res->ncounters; i++) {
		cnt[i] -= fix[i] / n;
		okc[i] = okc[i] && okf[i];
	}
	cal_row_value(c, s->row[R_TOTAL], idle_ns + call_ns, cnt, okc);

	cal_row_value(c, s->row[R_OIN], o_in, NULL, NULL);
	cal_row_value(c, s->row[R_OFULL], o_full, NULL, NULL);
	cal_row_value(c, s->row[R_OOUT], o_full - o_in, NULL, NULL);
}

void cal_instrument_teardown(cal_ctx *c, void *state)
{
	instr_state *s = state;
	(void)c;
	if (!s)
		return;
	const char *files[] = { s->src, s->plain, s->inst, s->trace };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (files[i])
			unlink(files[i]);
	free(s->src);
	free(s->plain);
	free(s->inst);
	free(s->trace);
	for (size_t i = 0; i < s->nenv; i++)
		free(s->env[i]);
	free(s->env);
	free(s);
}
