/* record.c — rec_run(): the sampling session.
 *
 * One perf_event_open fd per (event, CPU, target task) — with inherit, the
 * task's threads and children are followed by the kernel — and one ring
 * buffer per CPU: the first fd of a CPU is mmap'd, every other fd of that CPU
 * is redirected into it (PERF_EVENT_IOC_SET_OUTPUT). The poll loop copies
 * whole records from the ring buffers to the writer, then a FINISHED_ROUND,
 * as perf does; LOST records from the kernel are kept and counted.
 * SIGINT/SIGTERM are blocked outside ppoll(), so a stop request is never
 * missed and always ends in a complete file.
 */
#include "rec-int.h"
#include "workload.h"
#include "proff/perfdata.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct ring {
	int fd;
	int cpu;
	uint8_t *base;
	size_t mmap_len;
	uint8_t *data;
	uint64_t size;
};

struct evfd {
	int fd;
	int ev;           /* event index */
	int cpu;
	uint64_t id;
};

struct session {
	rec_state s;
	const rec_opts *o;
	rec_event ev[16];
	size_t nr_ev;
	struct perf_event_attr attr[16];
	uint64_t *ids[16];
	size_t nr_ids[16];
	int *cpus;
	size_t nr_cpus;
	pid_t *targets;       /* -1 for system-wide */
	size_t nr_targets;
	struct evfd *fds;
	size_t nr_fds, cap_fds;
	struct ring *rings;   /* one per CPU (index as cpus[]) */
	uint8_t *tmp;         /* a record wrapped around the buffer end */
	struct rec_workload wl;
	bool have_wl;
	bool no_format_lost;  /* kernel < 6.0: no PERF_FORMAT_LOST */
};

static void notice(const rec_opts *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void notice(const rec_opts *o, const char *fmt, ...)
{
	if (!o->notice)
		return;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	o->notice(o->notice_ctx, buf);
}

int rec_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int v = INT32_MIN;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = INT32_MIN;
		fclose(f);
	}
	return v;
}

static int online_cpus(int **out, size_t *n)
{
	char buf[1024];
	int fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	ssize_t l = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	int *v = NULL;
	size_t cnt = 0, cap = 0;
	if (l > 0) {
		buf[l] = 0;
		char *p = buf;
		while (*p && *p != '\n') {
			char *end;
			long a = strtol(p, &end, 10), b = a;
			if (end == p)
				break;
			p = end;
			if (*p == '-') {
				b = strtol(p + 1, &end, 10);
				p = end;
			}
			for (long c = a; c <= b && c < 4096; c++) {
				if (PF_GROW(v, cap, cnt + 1))
					return -1;
				v[cnt++] = (int)c;
			}
			if (*p == ',')
				p++;
		}
	}
	if (!cnt) {
		long nc = sysconf(_SC_NPROCESSORS_ONLN);
		for (long c = 0; c < (nc > 0 ? nc : 1); c++) {
			if (PF_GROW(v, cap, cnt + 1))
				return -1;
			v[cnt++] = (int)c;
		}
	}
	*out = v;
	*n = cnt;
	return 0;
}

static int add_target(struct session *x, pid_t t)
{
	size_t cap = x->nr_targets;   /* grown one by one: few targets */
	pid_t *p = pf_realloc_array(x->targets, cap + 1, sizeof(pid_t));
	if (!p)
		return -1;
	x->targets = p;
	x->targets[x->nr_targets++] = t;
	return 0;
}

static int add_process_threads(struct session *x, pid_t pid, proff_error *err)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return proff_err_set(err, PROFF_ENOENT, NULL, PROFF_NO_OFFSET,
				     "no such process: %d", (int)pid);
	struct dirent *de;
	while ((de = readdir(d)))
		if (isdigit((unsigned char)de->d_name[0]) && add_target(x, (pid_t)atoi(de->d_name))) {
			closedir(d);
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		}
	closedir(d);
	return 0;
}

/* The user registers perf samples for DWARF unwinding on x86-64
 * (PERF_REGS_MASK: every general register, ip, sp, flags; not the segment
 * registers ds, es, fs, gs). */
#define REC_X86_64_REGS_USER 0xff0fffULL

static void build_attr(struct session *x, size_t i)
{
	const rec_opts *o = x->o;
	struct perf_event_attr *a = &x->attr[i];
	memset(a, 0, sizeof(*a));
	a->size = PDW_ATTR_SIZE;
	a->type = x->ev[i].type;
	a->config = x->ev[i].config;
	a->exclude_kernel = x->ev[i].exclude_kernel;
	a->exclude_hv = x->ev[i].exclude_kernel;
	a->exclude_user = x->ev[i].exclude_user;
	if (o->period) {
		a->sample_period = o->period;
	} else {
		a->freq = 1;
		a->sample_freq = o->freq ? o->freq : 4000;
	}
	uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
	if (o->callgraph)
		st |= PERF_SAMPLE_CALLCHAIN;
	if (o->sample_cpu || o->system_wide)
		st |= PERF_SAMPLE_CPU;
	if (x->nr_ev > 1)
		st |= PERF_SAMPLE_IDENTIFIER;
	if (o->branch_stack) {
		st |= PERF_SAMPLE_BRANCH_STACK;
		a->branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
	}
	if (o->callgraph && o->dwarf_stack) {
		/* what perf record --call-graph dwarf asks: the kernel's
		 * callchain, the user registers and a copy of the user stack
		 * (unwound when the file is read), and the sample's data
		 * address with data mappings (perf turns address sampling on
		 * for dwarf mode) */
		st |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC;
		a->sample_regs_user = REC_X86_64_REGS_USER;
		a->sample_stack_user = o->dwarf_stack;
		a->exclude_callchain_user = 1;
	}
	if (o->callgraph && o->lbr) {
		/* the user frames from the CPU's LBR call stack */
		st |= PERF_SAMPLE_BRANCH_STACK;
		a->branch_sample_type = PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_CALL_STACK |
					PERF_SAMPLE_BRANCH_NO_CYCLES | PERF_SAMPLE_BRANCH_NO_FLAGS |
					PERF_SAMPLE_BRANCH_HW_INDEX;
		a->exclude_callchain_user = 1;
	}
	a->sample_type = st;
	a->read_format = PERF_FORMAT_ID | (x->no_format_lost ? 0 : PERF_FORMAT_LOST);
	a->disabled = 1;
	a->inherit = !o->no_inherit && !o->system_wide;
	a->enable_on_exec = x->have_wl && !o->system_wide;
	a->sample_id_all = 1;
	a->exclude_guest = 1;
	if (i == 0) {     /* side-band records on the first event only */
		a->mmap = 1;
		a->mmap2 = 1;
		a->comm = 1;
		a->comm_exec = 1;
		a->task = 1;
		a->mmap_data = o->callgraph && o->dwarf_stack;
	}
}

static size_t id_hdr_size(uint64_t st)
{
	size_t n = 0;
	if (st & PERF_SAMPLE_TID) n += 8;
	if (st & PERF_SAMPLE_TIME) n += 8;
	if (st & PERF_SAMPLE_ID) n += 8;
	if (st & PERF_SAMPLE_STREAM_ID) n += 8;
	if (st & PERF_SAMPLE_CPU) n += 8;
	if (st & PERF_SAMPLE_IDENTIFIER) n += 8;
	return n;
}

static int sys_perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int perm_error(struct session *x, int e, proff_error *err)
{
	int p = rec_paranoid();
	char pv[32];
	if (p == INT32_MIN)
		snprintf(pv, sizeof(pv), "unknown");
	else
		snprintf(pv, sizeof(pv), "%d", p);
	errno = e;
	return proff_err_set(err, PROFF_EPERM, NULL, PROFF_NO_OFFSET,
			     "no permission to open event '%s' (%s): kernel.perf_event_paranoid is %s; "
			     "run as root, give CAP_PERFMON, or lower it: 'sysctl -w kernel.perf_event_paranoid=%d'%s",
			     x->ev[0].name, strerror(e), pv, x->o->system_wide ? 0 : 1,
			     x->o->system_wide ? " (-a needs 0 or less)" :
			     " (2 allows user-space-only profiling: -e cpu-clock:u)");
}

/* Open event i on (target, cpu), applying perf's fallbacks on the first try. */
static int open_one(struct session *x, size_t i, pid_t t, int cpu, bool first, proff_error *err)
{
	for (int attempt = 0; attempt < 4; attempt++) {
		int fd = sys_perf_event_open(&x->attr[i], t, cpu);
		if (fd >= 0)
			return fd;
		int e = errno;
		if (first && x->ev[i].hardware && (e == ENOENT || e == ENODEV || e == ENXIO ||
						   (e == EOPNOTSUPP && !x->o->branch_stack && !x->o->lbr))) {
			rec_event fb = x->ev[i];
			notice(x->o, "the '%s' event is not supported here (%s), falling back to 'cpu-clock'",
			       x->ev[i].name, strerror(e));
			fb.type = PERF_TYPE_SOFTWARE;
			fb.config = PERF_COUNT_SW_CPU_CLOCK;
			fb.hardware = false;
			snprintf(fb.name, sizeof(fb.name), "cpu-clock%s",
				 fb.exclude_kernel ? ":u" : fb.exclude_user ? ":k" : "");
			x->ev[i] = fb;
			build_attr(x, i);
			continue;
		}
		if (first && e == EINVAL && (x->attr[i].read_format & PERF_FORMAT_LOST)) {
			x->no_format_lost = true;    /* older kernel: lost counts come from LOST records only */
			build_attr(x, i);
			continue;
		}
		if (first && (e == EACCES || e == EPERM) && !x->attr[i].exclude_kernel && !x->o->system_wide &&
		    rec_paranoid() >= 2 && geteuid() != 0) {
			notice(x->o, "kernel.perf_event_paranoid is %d: recording user space only ('%s:u')",
			       rec_paranoid(), x->ev[i].name);
			x->ev[i].exclude_kernel = true;
			size_t l = strlen(x->ev[i].name);
			if (!strchr(x->ev[i].name, ':') && l + 2 < sizeof(x->ev[i].name))
				memcpy(x->ev[i].name + l, ":u", 3);
			build_attr(x, i);
			continue;
		}
		if (e == EACCES || e == EPERM)
			return perm_error(x, e, err);
		if (e == ESRCH)
			return proff_err_set(err, PROFF_ENOENT, NULL, PROFF_NO_OFFSET,
					     "no such process or thread: %d", (int)t);
		if (x->o->callgraph && x->o->lbr && (e == EOPNOTSUPP || e == ENOENT || e == EINVAL))
			return proff_err_set(err, PROFF_ENOTSUP, NULL, PROFF_NO_OFFSET,
					     "--call-graph lbr is not available for '%s' on this machine (%s): "
					     "it needs a CPU with LBR call stacks (Intel Haswell or later) and a "
					     "hardware event such as cycles; use --call-graph dwarf or fp",
					     x->ev[i].name, strerror(e));
		if (x->o->branch_stack && (e == EOPNOTSUPP || e == ENOENT || e == EINVAL))
			return proff_err_set(err, PROFF_ENOTSUP, NULL, PROFF_NO_OFFSET,
					     "branch stack sampling (-b) is not available for '%s' on this machine "
					     "(%s): it needs a CPU with LBR/BRBE and a hardware event",
					     x->ev[i].name, strerror(e));
		if (e == EMFILE)
			return proff_err_set(err, PROFF_EIO, NULL, PROFF_NO_OFFSET,
					     "too many open files for %zu events x %zu CPUs x %zu threads (ulimit -n)",
					     x->nr_ev, x->nr_cpus, x->nr_targets);
		if (e == EINVAL && x->attr[i].freq)
			return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
					     "cannot open event '%s' at %llu Hz: %s (see kernel.perf_event_max_sample_rate)",
					     x->ev[i].name, (unsigned long long)x->attr[i].sample_freq, strerror(e));
		errno = e;
		return proff_err_sys(err, e == ENOENT || e == EOPNOTSUPP ? PROFF_ENOTSUP : PROFF_EIO, NULL,
				     "cannot open event '%s' (type %u, config %#llx) on CPU %d",
				     x->ev[i].name, x->attr[i].type, (unsigned long long)x->attr[i].config, cpu);
	}
	return proff_err_set(err, PROFF_EINTERNAL, NULL, PROFF_NO_OFFSET, "event fallback loop");
}

static int open_events(struct session *x, unsigned pages, proff_error *err)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t mlen = ((size_t)pages + 1) * (size_t)pg;
	x->rings = pf_calloc(x->nr_cpus, sizeof(*x->rings));
	if (!x->rings)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	for (size_t c = 0; c < x->nr_cpus; c++)
		x->rings[c].fd = -1;
	for (size_t i = 0; i < x->nr_ev; i++) {
		x->ids[i] = pf_calloc(x->nr_cpus * x->nr_targets, sizeof(uint64_t));
		if (!x->ids[i])
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		bool first = true;
		for (size_t t = 0; t < x->nr_targets; t++) {
			for (size_t c = 0; c < x->nr_cpus; c++) {
				int fd = open_one(x, i, x->targets[t], x->cpus[c], first, err);
				if (fd < 0) {
					/* a thread of -p that exited meanwhile is not an error */
					if (err && err->code == PROFF_ENOENT && !x->have_wl && x->nr_targets > 1 &&
					    !x->o->system_wide)
						break;
					return fd;
				}
				first = false;
				if (PF_GROW(x->fds, x->cap_fds, x->nr_fds + 1)) {
					close(fd);
					return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
				}
				uint64_t id = 0;
				if (ioctl(fd, PERF_EVENT_IOC_ID, &id) == 0)
					x->ids[i][x->nr_ids[i]++] = id;
				x->fds[x->nr_fds++] = (struct evfd){ fd, (int)i, x->cpus[c], id };
				struct ring *r = &x->rings[c];
				if (r->fd < 0) {
					void *m = mmap(NULL, mlen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
					if (m == MAP_FAILED) {
						int e = errno;
						errno = e;
						return proff_err_sys(err, e == EPERM ? PROFF_EPERM : PROFF_EIO, NULL,
								     "cannot map a %zu KiB ring buffer on CPU %d (try a smaller -m; "
								     "see kernel.perf_event_mlock_kb)", mlen / 1024, x->cpus[c]);
					}
					r->fd = fd;
					r->cpu = x->cpus[c];
					r->base = m;
					r->mmap_len = mlen;
					r->data = (uint8_t *)m + pg;
					r->size = (uint64_t)pages * (uint64_t)pg;
				} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd)) {
					return proff_err_sys(err, PROFF_EIO, NULL, "cannot redirect event output on CPU %d",
							     x->cpus[c]);
				}
			}
		}
		if (!x->nr_ids[i])
			return proff_err_set(err, PROFF_ENOENT, NULL, PROFF_NO_OFFSET,
					     "no thread left to record");
	}
	return 0;
}

/* Copy everything available in one ring buffer to the file. Returns bytes read. */
static int64_t read_ring(struct session *x, struct ring *r, proff_error *err)
{
	struct perf_event_mmap_page *pg = (void *)r->base;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail;
	uint64_t start = tail;
	uint64_t mask = r->size - 1;
	const uint8_t *run = NULL;
	size_t run_len = 0;
	int rc = 0;
	while (tail < head && !rc) {
		uint64_t off = tail & mask;
		struct perf_event_header h;
		memcpy(&h, r->data + off, sizeof(h));   /* 8-aligned: never wraps */
		if (h.size < sizeof(h) || h.size > head - tail) {
			tail = head;   /* corrupt: skip what is there */
			break;
		}
		if (off + h.size <= r->size) {
			const uint8_t *p = r->data + off;
			if (run && run + run_len != p) {
				rc = pdw_write(x->s.w, run, run_len, err);
				run = NULL;
				run_len = 0;
			}
			rec_scan(&x->s, p, h.size);
			if (!run)
				run = p;
			run_len += h.size;
		} else {
			if (run) {
				rc = pdw_write(x->s.w, run, run_len, err);
				run = NULL;
				run_len = 0;
			}
			size_t first = (size_t)(r->size - off);
			memcpy(x->tmp, r->data + off, first);
			memcpy(x->tmp + first, r->data, h.size - first);
			if (!rc)
				rc = rec_emit(&x->s, x->tmp, h.size, err);
		}
		tail += h.size;
	}
	if (run && !rc)
		rc = pdw_write(x->s.w, run, run_len, err);
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	return rc ? rc : (int64_t)(tail - start);
}

static int read_all(struct session *x, proff_error *err)
{
	int64_t total = 0;
	for (size_t c = 0; c < x->nr_cpus; c++) {
		if (!x->rings[c].base)
			continue;
		int64_t n = read_ring(x, &x->rings[c], err);
		if (n < 0)
			return (int)n;
		total += n;
	}
	if (total)
		return pdw_finished_round(x->s.w, err);
	return 0;
}

/* PERF_RECORD_LOST_SAMPLES per fd whose kernel-side lost count (PERF_FORMAT_LOST)
 * is non-zero, as perf record writes at the end: perf report's "Total Lost Samples". */
static int write_lost_samples(struct session *x, rec_stats *st, proff_error *err)
{
	if (x->no_format_lost)
		return 0;
	for (size_t i = 0; i < x->nr_fds; i++) {
		uint64_t v[3];
		if (read(x->fds[i].fd, v, sizeof(v)) != (ssize_t)sizeof(v) || !v[2])
			continue;
		uint8_t rec[64];
		memset(rec, 0, sizeof(rec));
		uint32_t type = PERF_RECORD_LOST_SAMPLES;
		memcpy(rec, &type, 4);
		memcpy(rec + 8, &v[2], 8);
		size_t n = 16;
		uint64_t stype = x->attr[0].sample_type;
		if (stype & PERF_SAMPLE_TID) n += 8;
		if (stype & PERF_SAMPLE_TIME) n += 8;
		if (stype & PERF_SAMPLE_ID) { memcpy(rec + n, &x->fds[i].id, 8); n += 8; }
		if (stype & PERF_SAMPLE_STREAM_ID) n += 8;
		if (stype & PERF_SAMPLE_CPU) { uint32_t c = (uint32_t)x->fds[i].cpu; memcpy(rec + n, &c, 4); n += 8; }
		if (stype & PERF_SAMPLE_IDENTIFIER) { memcpy(rec + n, &x->fds[i].id, 8); n += 8; }
		uint16_t sz = (uint16_t)n;
		memcpy(rec + 6, &sz, 2);
		st->lost_samples += v[2];
		int rc = pdw_write(x->s.w, rec, n, err);
		if (rc)
			return rc;
	}
	return 0;
}

static void ioctl_all(struct session *x, unsigned long req)
{
	for (size_t i = 0; i < x->nr_fds; i++)
		ioctl(x->fds[i].fd, req, 0);
}

static void session_free(struct session *x)
{
	for (size_t i = 0; i < x->nr_fds; i++)
		close(x->fds[i].fd);
	if (x->rings)
		for (size_t c = 0; c < x->nr_cpus; c++)
			if (x->rings[c].base)
				munmap(x->rings[c].base, x->rings[c].mmap_len);
	for (size_t i = 0; i < 16; i++)
		free(x->ids[i]);
	free(x->rings);
	free(x->fds);
	free(x->cpus);
	free(x->targets);
	free(x->tmp);
	rec_state_free(&x->s);
}

static int backup_output(const char *path, proff_error *err)
{
	struct stat sb;
	if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0) {
		char old[4096];
		if (snprintf(old, sizeof(old), "%s.old", path) >= (int)sizeof(old))
			return proff_err_set(err, PROFF_EUSAGE, path, PROFF_NO_OFFSET, "output path too long");
		if (rename(path, old))
			return proff_err_sys(err, PROFF_EIO, path, "cannot rename to %s", old);
	}
	return 0;
}

static void reap(struct session *x, rec_stats *st, bool block)
{
	if (!x->have_wl || x->wl.pid <= 0)
		return;
	int status;
	pid_t r;
	do
		r = waitpid(x->wl.pid, &status, block ? 0 : WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == x->wl.pid) {
		st->have_status = true;
		st->status = status;
		x->wl.pid = -1;
	}
}

int rec_run(const rec_opts *o, rec_stats *st, proff_error *err)
{
#if !defined(__x86_64__)
	if (o->callgraph && o->dwarf_stack)
		return proff_err_set(err, PROFF_ENOTSUP, NULL, PROFF_NO_OFFSET,
				     "--call-graph dwarf: proff records the user registers of x86-64 only");
#endif
	struct session *x = pf_calloc(1, sizeof(*x));
	if (!x)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	memset(st, 0, sizeof(*st));
	x->o = o;
	x->wl.pid = -1;
	x->wl.go_fd = x->wl.err_fd = x->wl.pidfd = -1;
	int rc = 0;
	sigset_t block, orig;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &orig);

	if (rec_state_init(&x->s)) {
		rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		goto out;
	}
	x->s.o = o;
	x->s.st = st;
	x->tmp = malloc(65536);
	if (!x->tmp) {
		rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		goto out;
	}
	if (o->nr_events) {
		x->nr_ev = o->nr_events > 16 ? 16 : o->nr_events;
		memcpy(x->ev, o->events, x->nr_ev * sizeof(rec_event));
	} else {
		rec_parse_event("cpu-clock", &x->ev[0], NULL);
		x->nr_ev = 1;
	}
	/* a dwarf sample carries its stack copy (8 KB by default): 512 KB
	 * (perf's default) holds some 60 of them, which a loaded host filled
	 * before the reader ran (lost samples); 2 MB per CPU unless -m says */
	unsigned pages = o->mmap_pages ? o->mmap_pages : o->callgraph && o->dwarf_stack ? 512 : 128;
	if (pages & (pages - 1)) {
		rc = proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
				   "-m %u: the number of ring buffer pages must be a power of two", pages);
		goto out;
	}
	if (online_cpus(&x->cpus, &x->nr_cpus)) {
		rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		goto out;
	}
	bool have_argv = o->argv && o->argv[0];
	/* targets */
	if (o->system_wide) {
		if (add_target(x, -1)) {
			rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
			goto out;
		}
	} else if (o->nr_pids || o->nr_tids) {
		for (size_t i = 0; i < o->nr_pids && !rc; i++)
			rc = add_process_threads(x, o->pids[i], err);
		for (size_t i = 0; i < o->nr_tids && !rc; i++)
			if (add_target(x, o->tids[i]))
				rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		if (rc)
			goto out;
	} else if (!have_argv) {
		rc = proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
				   "nothing to record: give a command, -p PID, -t TID or -a");
		goto out;
	}
	if (have_argv) {
		rc = rec_workload_prepare(o->argv, &x->wl, err);
		if (rc)
			goto out;
		x->have_wl = true;
		if (!o->system_wide && !o->nr_pids && !o->nr_tids && add_target(x, x->wl.pid)) {
			rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
			goto out;
		}
	}
	for (size_t i = 0; i < x->nr_ev; i++)
		build_attr(x, i);
	rc = open_events(x, pages, err);
	if (rc)
		goto out;
	x->s.sample_type = x->attr[0].sample_type;
	x->s.id_hdr_size = id_hdr_size(x->s.sample_type);

	/* the file */
	const char *out = o->output && *o->output ? o->output : "perf.data";
	if (!strcmp(out, "-")) {
		rc = proff_err_set(err, PROFF_ENOTSUP, NULL, PROFF_NO_OFFSET,
				   "pipe output (-o -) is not supported by proff record; give a file name");
		goto out;
	}
	rc = backup_output(out, err);
	if (rc)
		goto out;
	pdw_opts wo = { .compress_level = o->compress_level,
			.comp_mmap_len = x->rings[0].mmap_len ? x->rings[0].mmap_len : 528384 };
	rc = pdw_create(out, &wo, &x->s.w, err);
	if (rc)
		goto out;
	for (size_t i = 0; i < x->nr_ev && !rc; i++)
		rc = pdw_add_attr(x->s.w, &x->attr[i], x->ev[i].name, x->ids[i], x->nr_ids[i], err);
	if (!rc)
		rc = pdw_start_data(x->s.w, err);
	if (!rc)
		rc = rec_synth_kernel(&x->s, err);
	if (!rc) {
		if (o->system_wide) {
			rc = rec_synth_all(&x->s, err);
		} else if (o->nr_pids || o->nr_tids) {
			for (size_t i = 0; i < o->nr_pids && !rc; i++)
				rc = rec_synth_process(&x->s, (uint32_t)o->pids[i], err);
			for (size_t i = 0; i < o->nr_tids && !rc; i++) {
				char path[64], buf[512];
				long tgid = o->tids[i];
				snprintf(path, sizeof(path), "/proc/%d/status", (int)o->tids[i]);
				FILE *f = fopen(path, "re");
				if (f) {
					while (fgets(buf, sizeof(buf), f))
						if (!strncmp(buf, "Tgid:", 5))
							tgid = atol(buf + 5);
					fclose(f);
				}
				rc = rec_synth_process(&x->s, (uint32_t)tgid, err);
			}
		}
	}
	if (!rc && x->have_wl && !o->system_wide) {
		const char *b = strrchr(o->argv[0], '/');
		rc = rec_synth_comm(&x->s, (uint32_t)x->wl.pid, (uint32_t)x->wl.pid, b ? b + 1 : o->argv[0], err);
	}
	if (!rc)
		rc = pdw_finished_round(x->s.w, err);
	if (rc)
		goto finish;

	/* go */
	if (!x->have_wl || o->system_wide)
		ioctl_all(x, PERF_EVENT_IOC_ENABLE);
	if (x->have_wl) {
		int e;
		if (rec_workload_start(&x->wl, &e)) {
			st->exec_errno = e;
			reap(x, st, true);
			errno = e;
			rc = proff_err_sys(err, PROFF_ENOENT, NULL, "cannot run '%s'", o->argv[0]);
			goto finish;
		}
		st->workload_started = true;
	}

	/* poll loop */
	size_t npfd = x->nr_fds + 1;
	struct pollfd *pfd = pf_calloc(npfd, sizeof(*pfd));
	if (!pfd) {
		rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		goto finish;
	}
	for (size_t i = 0; i < x->nr_fds; i++)
		pfd[i] = (struct pollfd){ x->fds[i].fd, POLLIN, 0 };
	pfd[x->nr_fds] = (struct pollfd){ x->have_wl ? x->wl.pidfd : -1, POLLIN, 0 };
	size_t nhup = 0;
	bool done = false;
	bool wl_poll = x->have_wl && x->wl.pidfd < 0;
	while (!done && !(o->stop && *o->stop)) {
		struct timespec ts = { 0, 100 * 1000 * 1000 }, *tsp = wl_poll ? &ts : NULL;
		int n = ppoll(pfd, npfd, tsp, &orig);
		if (n < 0 && errno != EINTR) {
			rc = proff_err_sys(err, PROFF_EIO, NULL, "poll");
			break;
		}
		if (n > 0)
			st->wakeups++;
		rc = read_all(x, err);
		if (rc)
			break;
		if (x->have_wl) {
			if ((n > 0 && pfd[x->nr_fds].revents) || wl_poll)
				reap(x, st, false);
			if (st->have_status)
				done = true;
		}
		if (n > 0) {
			for (size_t i = 0; i < x->nr_fds; i++) {
				if (pfd[i].revents & (POLLHUP | POLLERR)) {
					pfd[i].fd = -1;
					nhup++;
				}
			}
			if (!x->have_wl && !o->system_wide && nhup == x->nr_fds)
				done = true;   /* every attached task is gone */
		}
	}
	free(pfd);
	if (x->have_wl && !st->have_status) {
		/* stopped by a signal: end the workload as perf does */
		kill(x->wl.pid, SIGTERM);
		st->killed_by_us = true;
		for (int i = 0; i < 40 && !st->have_status; i++) {
			reap(x, st, false);
			if (!st->have_status)
				usleep(25000);
		}
		if (!st->have_status) {
			kill(x->wl.pid, SIGKILL);
			reap(x, st, true);
		}
	}
	ioctl_all(x, PERF_EVENT_IOC_DISABLE);
	if (!rc)
		rc = read_all(x, err);
	if (!rc)
		rc = write_lost_samples(x, st, err);

finish:
	if (x->s.w) {
		proff_error e2;
		proff_err_clear(&e2);
		int frc = rec_set_features(&x->s, rc ? &e2 : err);
		if (!rc && frc)
			rc = frc;
		if (!o->no_buildid && !st->write_errno) {
			pdw_stats ws;
			pdw_get_stats(x->s.w, &ws);
			if (!ws.write_errno && rec_build_ids(&x->s, &e2) && e2.code)
				notice(o, "build-id cache: %s%s%s", e2.file, e2.file[0] ? ": " : "", e2.msg);
		}
		pdw_stats ws;
		int crc = pdw_close(x->s.w, &ws, rc ? &e2 : err);
		x->s.w = NULL;
		if (!rc && crc)
			rc = crc;
		st->data_size = ws.data_size;
		st->raw_size = ws.raw_size;
		st->file_size = ws.file_size;
		st->write_errno = ws.write_errno;
	}
out:
	if (x->have_wl && x->wl.pid > 0 && !st->workload_started) {
		rec_workload_abort(&x->wl);
	} else if (x->have_wl) {
		if (x->wl.pid > 0)
			reap(x, st, true);
		if (x->wl.pidfd >= 0)
			close(x->wl.pidfd);
	}
	session_free(x);
	free(x);
	sigprocmask(SIG_SETMASK, &orig, NULL);
	return rc;
}
