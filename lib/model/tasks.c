/* tasks.c — perf report --tasks and --mmaps: the file's threads as a tree
 * of who forked whom (pid, tid, ppid, last comm; with --mmaps each one's
 * process maps at the end of the file), read through the process model
 * (machine.c) as the loaders read it, and printed as perf 6.1 prints it
 * (builtin-report.c's tasks_print): the threads in perf's table order
 * (tid % 256, then tid), each chain linked up to its root, children in the
 * order they were linked. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "machine.h"
#include "proff/profile.h"

typedef struct tasks_read {
	pf_machine *m;
} tasks_read;

static int tasks_cb(void *ctx, const pd_event *ev)
{
	pf_machine *m = ((tasks_read *)ctx)->m;
	if (ev->type == PD_SAMPLE)      /* perf makes the thread of a sample it has not met */
		return pf_machine_thread(m, ev->u.sample.pid, ev->u.sample.tid, true) ? 0 : 1;
	return pf_machine_event(m, ev) < 0 ? 1 : 0;     /* 1: out of memory */
}

typedef struct task {
	uint32_t thread;            /* index in the machine's threads */
	uint32_t first, last;       /* children (indexes in tasks[]), PF_NONE: none */
	uint32_t next;              /* next sibling */
	bool listed;                /* in its parent's children or the roots */
} task;

static int cmp_tasks(const void *a, const void *b, void *ctx)
{
	const pf_mthread *th = ctx;
	int32_t x = (int32_t)th[((const task *)a)->thread].tid, y = (int32_t)th[((const task *)b)->thread].tid;
	uint32_t bx = (uint32_t)x % 256, by = (uint32_t)y % 256;   /* perf's THREADS__TABLE_SIZE buckets */
	if (bx != by)
		return bx < by ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void add_child(task *t, uint32_t *first, uint32_t *last, uint32_t c)
{
	t[c].listed = true;
	t[c].next = PF_NONE;
	if (*first == PF_NONE)
		*first = c;
	else
		t[*last].next = c;
	*last = c;
}

/* perf's map__fprintf_task: under the comm, each map of the thread's process */
static void print_maps(const pf_machine *m, const pf_mgroup *g, int indent, FILE *out)
{
	for (size_t i = 0; i < g->maps.n; i++) {
		const pf_range *x = &g->maps.v[i];
		const pf_dso *d = &(*m->dsos)[x->dso];
		fprintf(out, "%*s  %" PRIx64 "-%" PRIx64 " %c%c%c%c %08" PRIx64 " %" PRIu64 " %s\n",
			indent, "", x->start, x->end,
			x->attr & PROT_READ ? 'r' : '-', x->attr & PROT_WRITE ? 'w' : '-',
			x->attr & PROT_EXEC ? 'x' : '-', x->attr & PF_MAP_SHARED ? 's' : 'p',
			x->pgoff, d->ino, pf_strtab_get(m->strs, d->long_name));
	}
}

int pf_tasks_print(pd_reader *r, bool mmaps, FILE *out, proff_error *err)
{
	pf_strtab strs;
	pf_dso *dsos = NULL;
	size_t nr_dsos = 0, cap_dsos = 0;
	pf_machine m;
	task *t = NULL;
	uint32_t *idx = NULL, *stack = NULL;      /* idx: the stack's levels */
	int rc = 0;
	if (pf_strtab_init(&strs) < 0)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	pf_machine_init(&m, &strs, &dsos, &nr_dsos, &cap_dsos);
	/* perf registers the idle task before reading */
	if (pf_machine_start(&m, r, NULL) < 0 || !pf_machine_thread(&m, 0, 0, true)) {
		rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		goto out;
	}
	tasks_read c = { &m };
	rc = pd_process(r, true, tasks_cb, &c, err);
	if (rc > 0)
		rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	if (rc)
		goto out;
	/* the threads perf's table holds: the last of each tid */
	size_t n = 0;
	t = malloc((m.nthreads + 1) * sizeof(*t));
	idx = malloc((m.nthreads + 1) * sizeof(*idx));
	stack = malloc((m.nthreads + 1) * sizeof(*stack));
	if (!t || !idx || !stack) {
		rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < m.nthreads; i++) {
		uint64_t v;
		if (pf_map64_get(&m.tid2thread, m.threads[i].tid, &v) && v == i)
			t[n++] = (task){ (uint32_t)i, PF_NONE, PF_NONE, PF_NONE, false };
	}
	qsort_r(t, n, sizeof(*t), cmp_tasks, m.threads);
	uint32_t *of_thread = calloc(m.nthreads + 1, sizeof(uint32_t));
	if (!of_thread) {
		rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++)      /* machine thread -> task */
		of_thread[t[i].thread] = (uint32_t)i;
	/* perf's tasks_list: each unlisted task joins its parent's children,
	 * up the chain to a root (ppid -1), which joins the roots */
	uint32_t rfirst = PF_NONE, rlast = PF_NONE;
	for (size_t i = 0; i < n && !rc; i++) {
		uint32_t k = (uint32_t)i;
		while (!t[k].listed) {
			const pf_mthread *th = &m.threads[t[k].thread];
			if (th->ppid == (uint32_t)-1) {
				add_child(t, &rfirst, &rlast, k);
				break;
			}
			uint64_t v;
			if (!pf_map64_get(&m.tid2thread, th->ppid, &v)) {
				rc = proff_err_set(err, PROFF_EFORMAT, NULL, PROFF_NO_OFFSET,
						   "thread %d: its parent %d is not in the file",
						   (int)th->tid, (int)th->ppid);
				break;
			}
			uint32_t p = of_thread[v];
			add_child(t, &t[p].first, &t[p].last, k);
			k = p;
		}
	}
	free(of_thread);
	if (rc)
		goto out;
	fprintf(out, "# %8s %8s %8s  %s\n", "pid", "tid", "ppid", "comm");
	/* depth-first, children in their order (task__print_level) */
	size_t sp = 0;
	uint32_t *lvl = idx;
	for (uint32_t k = rfirst; k != PF_NONE; k = t[k].next) {
		stack[sp] = k;
		lvl[sp++] = 0;
		while (sp) {
			uint32_t x = stack[--sp], level = lvl[sp];
			const pf_mthread *th = &m.threads[t[x].thread];
			int indent = fprintf(out, "  %8d %8d %8d |%*s", (int)th->pid, (int)th->tid, (int)th->ppid,
					     (int)level, "");
			fprintf(out, "%s\n", pf_strtab_get(&strs, th->comm));
			if (mmaps && th->mg < m.nmgs)
				print_maps(&m, &m.mgs[th->mg], indent, out);
			/* push the children last first, so the first pops first */
			size_t base = sp;
			for (uint32_t ch = t[x].first; ch != PF_NONE; ch = t[ch].next) {
				stack[sp] = ch;
				lvl[sp++] = level + 1;
			}
			for (size_t a = base, b = sp; b > a + 1; a++, b--) {
				uint32_t s = stack[a], l = lvl[a];
				stack[a] = stack[b - 1];
				lvl[a] = lvl[b - 1];
				stack[b - 1] = s;
				lvl[b - 1] = l;
			}
		}
	}
out:
	free(stack);
	free(idx);
	free(t);
	pf_machine_free(&m);
	free(dsos);
	pf_strtab_free(&strs);
	return rc;
}
