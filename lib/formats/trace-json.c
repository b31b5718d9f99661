/* trace-json.c — exact traces (proff record --instrument) written as the
 * timeline formats other tools open: Chrome's trace event JSON (as
 * `uftrace dump --chrome` writes it; chrome://tracing, Perfetto's UI and
 * speedscope read it) and speedscope's own evented format.
 *
 * Both take the trace's events as the reader delivers them: per thread, in
 * time order, balanced (an exit the trace lacks — longjmp, an exception,
 * the end of the run — is the reader's synthetic one). Times are the
 * recorded clock's, raw (no overhead compensation), from the start of each
 * process's session; functions are the trace's symbolized names.
 */
#include "fmt-int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "proff/trace.h"

/* s as the body of a JSON string */
static void json_str(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
}

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;
	return s ? s + 1 : path ? path : "?";
}

static uint64_t ticks_ns(uint64_t ticks, double tps)
{
	double ns = (double)ticks * 1e9 / tps;
	return ns <= 0 ? 0 : (uint64_t)(ns + 0.5);
}

/* The session (exe, pid) of a thread */
static void session_of(proff_trace *t, uint64_t id, proff_trace_session_info *out)
{
	size_t n = proff_trace_nsessions(t);
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		proff_trace_session_get(t, i, out);
		if (out->id == id)
			return;
	}
	memset(out, 0, sizeof(*out));
}

/* ---- Chrome ------------------------------------------------------------------------ */

typedef struct chrome_ctx {
	proff_trace *t;
	FILE *f;
	uint32_t pid, tid;
	double tps;
	bool first;
	uint8_t *named;              /* pids whose process_name was written (by session index) */
	uint64_t *pids; size_t npids, cap_pids;
} chrome_ctx;

static void chrome_sep(chrome_ctx *c)
{
	fputs(c->first ? "\n" : ",\n", c->f);
	c->first = false;
}

static int chrome_cb(void *arg, const proff_trace_thread_info *th, const proff_trace_event *ev)
{
	chrome_ctx *c = arg;
	if (!ev) {
		proff_trace_session_info si;
		session_of(c->t, th->session, &si);
		c->pid = th->pid;
		c->tid = th->tid;
		c->tps = th->ticks_per_sec > 0 ? th->ticks_per_sec : 1e9;
		bool seen = false;
		for (size_t i = 0; i < c->npids && !seen; i++)
			seen = c->pids[i] == th->session;
		if (!seen) {
			if (PF_GROW(c->pids, c->cap_pids, c->npids + 1) == 0)
				c->pids[c->npids++] = th->session;
			chrome_sep(c);
			fprintf(c->f, "{\"ts\":0,\"ph\":\"M\",\"pid\":%" PRIu32 ",\"name\":\"process_name\",\"args\":{\"name\":\"[%" PRIu32 "] ",
				c->pid, c->pid);
			json_str(c->f, base_name(si.exe));
			fputs("\"}}", c->f);
		}
		chrome_sep(c);
		fprintf(c->f, "{\"ts\":0,\"ph\":\"M\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"name\":\"thread_name\",\"args\":{\"name\":\"[%" PRIu32 "] ",
			c->pid, c->tid, c->tid);
		json_str(c->f, base_name(si.exe));
		fputs("\"}}", c->f);
		return 0;
	}
	uint64_t ns = ticks_ns(ev->ticks, c->tps);
	chrome_sep(c);
	fprintf(c->f, "{\"ts\":%" PRIu64 ".%03u,\"ph\":\"%c\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"name\":\"",
		ns / 1000, (unsigned)(ns % 1000), ev->kind == PROFF_TEV_ENTER ? 'B' : 'E', c->pid, c->tid);
	json_str(c->f, proff_trace_func_name(c->t, ev->func));
	fputs("\"}", c->f);
	return ferror(c->f) ? 1 : 0;
}

int pf_chrome_write(struct proff_trace *t, FILE *out, proff_error *err)
{
	chrome_ctx c = { .t = t, .f = out, .first = true };
	fputs("{\"traceEvents\":[", out);
	int rc = proff_trace_foreach(t, chrome_cb, &c, err);
	free(c.pids);
	if (rc < 0)
		return rc;
	fprintf(out, "\n], \"displayTimeUnit\": \"ns\", \"metadata\": {\n\"version\":\"proff " PROFF_VERSION "\"\n} }\n");
	if (fflush(out) != 0 || ferror(out))
		return proff_err_sys(err, PROFF_EIO, NULL, "cannot write the Chrome trace");
	return 0;
}

/* ---- speedscope ------------------------------------------------------------------- */

typedef struct ss_ctx {
	proff_trace *t;
	FILE *f;
	double tps;
	bool in_profile, first_event;
	uint64_t last_ns;
	int32_t *frame_of;           /* function -> frame index (-1: not used) */
	size_t nfuncs;
	uint32_t nframes;
	size_t nprofiles;
	bool oom;
} ss_ctx;

static void ss_end_profile(ss_ctx *c)
{
	if (!c->in_profile)
		return;
	fprintf(c->f, "\n], \"endValue\": %" PRIu64 "}", c->last_ns);
	c->in_profile = false;
}

static int ss_events_cb(void *arg, const proff_trace_thread_info *th, const proff_trace_event *ev)
{
	ss_ctx *c = arg;
	if (!ev) {
		ss_end_profile(c);
		proff_trace_session_info si;
		session_of(c->t, th->session, &si);
		c->tps = th->ticks_per_sec > 0 ? th->ticks_per_sec : 1e9;
		fputs(c->nprofiles++ ? ",\n" : "\n", c->f);
		fputs("{\"type\": \"evented\", \"name\": \"", c->f);
		json_str(c->f, base_name(si.exe));
		fprintf(c->f, " %" PRIu32 "/%" PRIu32 "\", \"unit\": \"nanoseconds\", \"startValue\": %" PRIu64 ", \"events\": [",
			th->pid, th->tid, ticks_ns(th->first_ticks, c->tps));
		c->in_profile = true;
		c->first_event = true;
		c->last_ns = ticks_ns(th->first_ticks, c->tps);
		return 0;
	}
	uint64_t ns = ticks_ns(ev->ticks, c->tps);
	if (ns < c->last_ns)
		ns = c->last_ns;
	c->last_ns = ns;
	fprintf(c->f, "%s{\"type\":\"%c\",\"frame\":%" PRId32 ",\"at\":%" PRIu64 "}", c->first_event ? "\n" : ",\n",
		ev->kind == PROFF_TEV_ENTER ? 'O' : 'C', c->frame_of[ev->func], ns);
	c->first_event = false;
	return ferror(c->f) ? 1 : 0;
}

/* functions are numbered as the reader meets them: the table grows */
static int ss_frames_cb(void *arg, const proff_trace_thread_info *th, const proff_trace_event *ev)
{
	ss_ctx *c = arg;
	if (!ev)
		return 0;
	if (ev->func >= c->nfuncs) {
		size_t n = (size_t)ev->func + 1 > 2 * c->nfuncs ? (size_t)ev->func + 1 : 2 * c->nfuncs;
		int32_t *v = pf_realloc_array(c->frame_of, n, sizeof(*v));
		if (!v) {
			c->oom = true;
			return 1;     /* stops the walk */
		}
		for (size_t i = c->nfuncs; i < n; i++)
			v[i] = -1;
		c->frame_of = v;
		c->nfuncs = n;
	}
	if (c->frame_of[ev->func] < 0)
		c->frame_of[ev->func] = (int32_t)c->nframes++;
	return 0;
}

int pf_speedscope_write(struct proff_trace *t, const char *name, FILE *out, proff_error *err)
{
	ss_ctx c = { .t = t, .f = out };
	/* the frames used, numbered in order of first use */
	int rc = proff_trace_foreach(t, ss_frames_cb, &c, err);
	if (rc < 0 || (c.oom && (rc = proff_err_set(err, PROFF_ENOMEM, name, PROFF_NO_OFFSET, "out of memory")))) {
		free(c.frame_of);
		return rc;
	}
	uint32_t *func_of = malloc((c.nframes ? c.nframes : 1) * sizeof(*func_of));
	if (!func_of) {
		free(c.frame_of);
		return proff_err_set(err, PROFF_ENOMEM, name, PROFF_NO_OFFSET, "out of memory");
	}
	for (size_t f = 0; f < c.nfuncs; f++)
		if (c.frame_of[f] >= 0)
			func_of[c.frame_of[f]] = (uint32_t)f;
	fputs("{\"$schema\": \"https://www.speedscope.app/file-format-schema.json\",\n\"shared\": {\"frames\": [", out);
	for (uint32_t i = 0; i < c.nframes; i++) {
		fputs(i ? ",\n{\"name\": \"" : "\n{\"name\": \"", out);
		json_str(out, proff_trace_func_name(t, func_of[i]));
		const char *dso = proff_trace_func_dso(t, func_of[i]);
		if (dso && *dso) {
			fputs("\", \"file\": \"", out);
			json_str(out, dso);
		}
		fputs("\"}", out);
	}
	free(func_of);
	fputs("\n]},\n\"profiles\": [", out);
	rc = proff_trace_foreach(t, ss_events_cb, &c, err);
	ss_end_profile(&c);
	free(c.frame_of);
	if (rc < 0)
		return rc;
	fputs("\n],\n\"name\": \"", out);
	json_str(out, base_name(name));
	fputs("\", \"activeProfileIndex\": 0, \"exporter\": \"proff " PROFF_VERSION "\"}\n", out);
	if (fflush(out) != 0 || ferror(out))
		return proff_err_sys(err, PROFF_EIO, NULL, "cannot write the speedscope file");
	return 0;
}
