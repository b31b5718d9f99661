/* instrument.c — proff's -finstrument-functions runtime (libproff-instrument).
 *
 * Implements __cyg_profile_func_enter/exit. Each thread appends compact
 * events (delta-encoded timestamp, function address and frame address as
 * varints, see include/proff/trace.h) to its own buffer without locks; a full
 * buffer is written to the trace file as one PTR_EVENTS record (O_APPEND, one
 * write()). Buffers are also written at thread exit, process exit, _exit,
 * exec, fork (the child becomes a new session) and on fatal signals.
 *
 * Loaded with LD_PRELOAD by `proff record --instrument`, or linked statically
 * (libproff-instrument.a). Environment:
 *   PROFF_OUTPUT   trace file (default proff.trace; made absolute at start)
 *   PROFF_BUFFER   per-thread buffer size in bytes (K/M suffix; default 1M)
 *   PROFF_CLOCK    "tsc", "monotonic" or "none" (default: tsc if invariant;
 *                  none records calls without timestamps)
 *   PROFF_APPEND   set: append to the file instead of truncating it (set by
 *                  the runtime itself for exec'd children, and by proff record)
 *   PROFF_CALIBRATION  a `proff calibrate -o FILE` file: its o_in/o_full are
 *                  stored in the session instead of the start-up estimate
 *                  (which is then not measured); a missing or invalid file
 *                  gives one line on stderr and the start-up estimate
 *
 * This file is never instrumented and never sanitized: it runs inside the
 * profiled program. It must not call instrumented code.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

#include "proff/trace.h"
/* the calibration file parser, shared with libproff's reader (header only) */
#include "../lib/calibrate/calfile-parse.h"

#define EXPORT __attribute__((visibility("default")))
#define LIKELY(x)   __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define BARRIER()   __asm__ __volatile__("" ::: "memory")
#define NOINSTR     __attribute__((no_instrument_function))

#define HDR_BYTES (sizeof(proff_trace_rec) + sizeof(proff_trace_events_hdr))

/* ---- per-thread state ------------------------------------------------------ */

enum { TS_UNINIT = 0, TS_INITIALIZING, TS_ACTIVE, TS_DEAD };

struct tbuf {
	/* hot: touched by every event */
	uint8_t *pos;           /* next free byte; the committed end of the record */
	uint8_t *limit;         /* pos >= limit -> slow path; NULL while inside a hook */
	uint64_t last_ts, last_fn, last_cfa;
	uint64_t hook_cfa;      /* frame of the hook in progress (valid while limit is NULL) */
	/* cold */
	uint32_t dropped;       /* events dropped since the record began (re-entered hooks) */
	uint8_t *buf;           /* record header at buf, events from buf + HDR_BYTES */
	size_t size;
	uint32_t tid, seq;
	int state;
	atomic_int lock;        /* owner flush vs. exit/exec/signal flush from elsewhere */
	struct tbuf *next;      /* registry */
};

static __thread struct tbuf T __attribute__((tls_model("initial-exec")));

/* ---- process state ------------------------------------------------------------ */

enum { PS_NONE = 0, PS_INITIALIZING, PS_READY, PS_FAILED };

static struct {
	atomic_int state;
	int fd;
	dev_t dev;              /* identity of the trace file behind fd */
	ino_t ino;
	int use_tsc;
	int no_clock;           /* PROFF_CLOCK=none: call counts and call tree only */
	uint64_t ticks_per_sec;
	uint64_t session, parent_session;
	uint32_t flags;
	uint64_t start_ts, start_mono, start_real;
	uint64_t o_in_x1024, o_full_x1024, calib_calls;
	int calfile;            /* overheads from $PROFF_CALIBRATION */
	size_t bufsize;
	pthread_key_t key;
	pthread_mutex_t reg_lock;
	struct tbuf *threads;
	atomic_int finished;
	pid_t pid;              /* to recognise a vfork child, which shares this memory */
	char path[4096];
} P = { .fd = -1, .reg_lock = PTHREAD_MUTEX_INITIALIZER };

static const int fatal_signals[] = { SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGTERM, SIGINT };

/* ---- clock ----------------------------------------------------------------------- */

static inline NOINSTR uint64_t mono_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline NOINSTR uint64_t now(void)
{
#if HAVE_TSC
	if (LIKELY(P.use_tsc))
		return __rdtsc();
#endif
	return mono_ns(CLOCK_MONOTONIC);
}

static NOINSTR int tsc_invariant(void)
{
#if HAVE_TSC
	int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	static char buf[16384];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *flags = strstr(buf, "\nflags");
	if (!flags)
		return 0;
	char *eol = strchr(flags + 1, '\n');
	if (eol)
		*eol = 0;
	return strstr(flags, " constant_tsc") && strstr(flags, " nonstop_tsc");
#else
	return 0;
#endif
}

/* TSC ticks per second against CLOCK_MONOTONIC over ~5 ms (or from the
 * parent process through PROFF_TSC_HZ). */
static NOINSTR uint64_t tsc_rate(void)
{
#if HAVE_TSC
	const char *e = getenv("PROFF_TSC_HZ");
	if (e) {
		uint64_t hz = strtoull(e, NULL, 10);
		if (hz > 1000000 && hz < 100000000000ull)
			return hz;
	}
	uint64_t m0 = mono_ns(CLOCK_MONOTONIC), t0 = __rdtsc(), m1, t1;
	do {
		m1 = mono_ns(CLOCK_MONOTONIC);
		t1 = __rdtsc();
	} while (m1 - m0 < 5000000);
	return (uint64_t)((double)(t1 - t0) * 1e9 / (double)(m1 - m0));
#else
	return 0;
#endif
}

/* ---- low-level output --------------------------------------------------------------- */

static NOINSTR int write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;
	while (n) {
		ssize_t w = write(fd, b, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The trace's fd, checked before each write: a program that closes every
 * descriptor (daemons) may have closed it, or reused its number for a file of
 * its own. Then the trace file is opened again. Async-signal-safe. */
static NOINSTR int trace_fd(void)
{
	struct stat st;
	int fd = P.fd;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && st.st_dev == P.dev && st.st_ino == P.ino)
		return fd;
	fd = open(P.path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int hi = fcntl(fd, F_DUPFD_CLOEXEC, 512);
	if (hi >= 0) {
		close(fd);
		fd = hi;
	}
	if (fstat(fd, &st) == 0) {
		P.dev = st.st_dev;
		P.ino = st.st_ino;
	}
	P.fd = fd;
	return fd;
}

static NOINSTR void rec_init(proff_trace_rec *r, int type, size_t size, uint32_t tid)
{
	r->magic = PROFF_TRACE_MAGIC;
	r->type = (uint16_t)type;
	r->version = PROFF_TRACE_VERSION;
	r->size = (uint32_t)size;
	r->tid = tid;
	r->session = P.session;
}

/* One record from a payload in up to three pieces, written with one write(). */
static NOINSTR void rec_write(int type, uint32_t tid, const void *a, size_t na,
			      const void *b, size_t nb, const void *c, size_t nc)
{
	int fd = trace_fd();
	if (fd < 0)
		return;
	size_t n = sizeof(proff_trace_rec) + na + nb + nc;
	uint8_t stackbuf[512], *buf = stackbuf;
	if (n > sizeof(stackbuf)) {
		buf = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (buf == MAP_FAILED)
			return;
	}
	rec_init((proff_trace_rec *)buf, type, n, tid);
	uint8_t *p = buf + sizeof(proff_trace_rec);
	if (na) memcpy(p, a, na), p += na;
	if (nb) memcpy(p, b, nb), p += nb;
	if (nc) memcpy(p, c, nc);
	write_all(fd, buf, n);
	if (buf != stackbuf)
		munmap(buf, n);
}

static NOINSTR uint32_t gettid_(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

/* Read a whole /proc file into an mmap'ed buffer (no malloc: callable after fork
 * and from exit paths). Returns the length; *out must be munmap'ed with *cap. */
static NOINSTR size_t read_proc(const char *path, uint8_t **out, size_t *cap)
{
	*out = NULL;
	*cap = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	size_t c = 1 << 16, n = 0;
	uint8_t *b = mmap(NULL, c, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b == MAP_FAILED) {
		close(fd);
		return 0;
	}
	for (;;) {
		if (n == c) {
			uint8_t *nb = mremap(b, c, c * 2, MREMAP_MAYMOVE);
			if (nb == MAP_FAILED)
				break;
			b = nb;
			c *= 2;
		}
		ssize_t r = read(fd, b + n, c - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*out = b;
	*cap = c;
	return n;
}

static NOINSTR void write_maps(void)
{
	uint8_t *b;
	size_t cap, n = read_proc("/proc/self/maps", &b, &cap);
	uint64_t ts = now();
	if (b) {
		rec_write(PTR_MAPS, 0, &ts, 8, b, n, NULL, 0);
		munmap(b, cap);
	}
}

/* PTR_MODULES: load bias, build-id and name of every loaded object. */
struct modbuf { uint8_t *b; size_t n, cap; };

static NOINSTR int mod_cb(struct dl_phdr_info *info, size_t sz, void *arg)
{
	struct modbuf *m = arg;
	const uint8_t *bid = NULL;
	size_t bidlen = 0;
	for (int i = 0; i < info->dlpi_phnum && !bid; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		const uint8_t *end = p + ph->p_memsz;
		while (p + 12 <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			size_t nsz = (nh->n_namesz + 3) & ~3u, dsz = (nh->n_descsz + 3) & ~3u;
			const uint8_t *desc = p + 12 + nsz;
			if (desc + dsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(p + 12, "GNU", 4) && nh->n_descsz <= 64) {
				bid = desc;
				bidlen = nh->n_descsz;
				break;
			}
			p = desc + dsz;
		}
	}
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	size_t nlen = strlen(name);
	if (nlen > 4000)
		nlen = 4000;
	size_t need = (sizeof(proff_trace_module) + bidlen + nlen + 7) & ~(size_t)7;
	if (m->n + need > m->cap)
		return 1;
	proff_trace_module *e = (proff_trace_module *)(m->b + m->n);
	memset(e, 0, need);
	e->base = info->dlpi_addr;
	e->build_id_len = (uint16_t)bidlen;
	e->name_len = (uint16_t)nlen;
	memcpy(m->b + m->n + sizeof(*e), bid, bidlen);
	memcpy(m->b + m->n + sizeof(*e) + bidlen, name, nlen);
	m->n += need;
	return 0;
}

static NOINSTR void write_modules(void)
{
	struct modbuf m = { .cap = 1 << 20 };
	m.b = mmap(NULL, m.cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m.b == MAP_FAILED)
		return;
	dl_iterate_phdr(mod_cb, &m);
	uint64_t ts = now();
	rec_write(PTR_MODULES, 0, &ts, 8, m.b, m.n, NULL, 0);
	munmap(m.b, m.cap);
}

static NOINSTR void write_session(void)
{
	char exe[4096];
	ssize_t el = readlink("/proc/self/exe", exe, sizeof(exe));
	if (el < 0)
		el = 0;
	uint8_t *cmd;
	size_t cap, cl = read_proc("/proc/self/cmdline", &cmd, &cap);
	if (cl > 8192)
		cl = 8192;
	proff_trace_session s = {
		.clock = P.use_tsc ? PROFF_CLOCK_TSC : P.no_clock ? PROFF_CLOCK_NONE : PROFF_CLOCK_MONOTONIC,
		.flags = P.flags,
		.ticks_per_sec = P.ticks_per_sec,
		.start_ts = P.start_ts,
		.start_realtime_ns = P.start_real,
		.start_mono_ns = P.start_mono,
		.o_in_x1024 = P.o_in_x1024,
		.o_full_x1024 = P.o_full_x1024,
		.calib_calls = P.calib_calls,
		.pid = (uint32_t)getpid(),
		.ppid = (uint32_t)getppid(),
		.parent_session = P.parent_session,
		.buffer_size = (uint32_t)P.bufsize,
		.exe_len = (uint32_t)el,
		.cmd_len = (uint32_t)cl,
	};
	rec_write(PTR_SESSION, 0, &s, sizeof(s), exe, (size_t)el, cmd, cl);
	if (cmd)
		munmap(cmd, cap);
}

static NOINSTR void write_thread_rec(struct tbuf *b, int kind)
{
	proff_trace_thread_rec r = { .kind = (uint32_t)kind, .ts = now() };
	prctl(PR_GET_NAME, r.name, 0, 0, 0);
	rec_write(PTR_THREAD, b->tid, &r, sizeof(r), NULL, 0, NULL, 0);
}

static NOINSTR void write_end(int reason, int code)
{
	proff_trace_end_rec r = { .reason = (uint32_t)reason, .code = code, .ts = now(),
				  .mono_ns = mono_ns(CLOCK_MONOTONIC) };
	rec_write(PTR_END, 0, &r, sizeof(r), NULL, 0, NULL, 0);
}

/* ---- buffers ------------------------------------------------------------------------ */

/* Start a new PTR_EVENTS record at the head of the buffer. */
static inline NOINSTR void chunk_begin(struct tbuf *b, uint64_t pause)
{
	proff_trace_events_hdr *h = (proff_trace_events_hdr *)(b->buf + sizeof(proff_trace_rec));
	h->base_ts = b->last_ts;
	h->base_fn = b->last_fn;
	h->base_cfa = b->last_cfa;
	h->pause_ticks = pause;
	h->seq = b->seq++;
	h->dropped = 0;
	b->dropped = 0;
	b->pos = b->buf + HDR_BYTES;
}

/* Write the events buffered so far as one record. Caller holds b->lock. */
static NOINSTR void chunk_write(struct tbuf *b, uint8_t *end)
{
	if (end <= b->buf + HDR_BYTES && !b->dropped)
		return;
	proff_trace_events_hdr *h = (proff_trace_events_hdr *)(b->buf + sizeof(proff_trace_rec));
	h->dropped = b->dropped;
	rec_init((proff_trace_rec *)b->buf, PTR_EVENTS, (size_t)(end - b->buf), b->tid);
	int fd = trace_fd();
	if (fd >= 0)
		write_all(fd, b->buf, (size_t)(end - b->buf));
}

static NOINSTR int lock_buf(struct tbuf *b, long spins)
{
	int z = 0;
	while (!atomic_compare_exchange_weak(&b->lock, &z, 1)) {
		z = 0;
		if (spins >= 0 && --spins < 0)
			return 0;
		sched_yield();
	}
	return 1;
}

static NOINSTR void unlock_buf(struct tbuf *b)
{
	atomic_store(&b->lock, 0);
}

/* Owner thread: write the full buffer and start a new record; the time spent
 * writing is recorded as the next record's pause. */
static NOINSTR void flush_own(struct tbuf *b)
{
	/* no signal handler runs meanwhile: one that left by siglongjmp would
	 * abandon the flush with the buffer's lock held (and the record
	 * perhaps written, perhaps not); two system calls per buffer */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	uint64_t t0 = now();
	lock_buf(b, -1);
	if (b->state == TS_ACTIVE) {
		chunk_write(b, b->pos);
		chunk_begin(b, P.no_clock ? 0 : now() - t0);
	}
	unlock_buf(b);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Any thread (exit, exec, fatal signal): write what b has committed. The
 * current thread's buffer restarts; another thread's buffer is retired (that
 * thread is about to disappear with the process). */
static NOINSTR void flush_any(struct tbuf *b, int in_signal)
{
	if (!lock_buf(b, in_signal ? 1000 : -1))
		return;
	if (b->state == TS_ACTIVE) {
		chunk_write(b, b->pos);
		if (b == &T) {
			chunk_begin(b, 0);
		} else {
			b->state = TS_DEAD;
		}
	}
	unlock_buf(b);
}

static NOINSTR void flush_all(int in_signal)
{
	if (!in_signal)
		pthread_mutex_lock(&P.reg_lock);
	for (struct tbuf *b = P.threads; b; b = b->next)
		flush_any(b, in_signal);
	if (!in_signal)
		pthread_mutex_unlock(&P.reg_lock);
}

static NOINSTR void thread_exit_cb(void *arg)
{
	struct tbuf *b = arg;
	if (b != &T || b->state != TS_ACTIVE)
		return;
	b->limit = NULL;
	lock_buf(b, -1);
	chunk_write(b, b->pos);
	b->state = TS_DEAD;
	b->pos = NULL;
	unlock_buf(b);
	write_thread_rec(b, PROFF_THREAD_END);
	pthread_mutex_lock(&P.reg_lock);
	for (struct tbuf **pp = &P.threads; *pp; pp = &(*pp)->next)
		if (*pp == b) {
			*pp = b->next;
			break;
		}
	pthread_mutex_unlock(&P.reg_lock);
	munmap(b->buf, b->size);
	b->buf = NULL;
}

static NOINSTR int thread_init(struct tbuf *b)
{
	b->state = TS_INITIALIZING;
	b->size = P.bufsize;
	/* populated now: page faults on the first pass through the buffer
	 * would otherwise land inside the calls being timed (uncompensated
	 * cost, ~5 ns per call over the first 1 MB; docs/instrument.md) */
	b->buf = mmap(NULL, b->size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_POPULATE, -1, 0);
	if (b->buf == MAP_FAILED) {
		b->buf = NULL;
		b->state = TS_DEAD;
		return -1;
	}
	b->tid = gettid_();
	b->seq = 0;
	b->last_ts = now();
	b->last_fn = 0;
	b->last_cfa = 0;
	atomic_store(&b->lock, 0);
	chunk_begin(b, 0);
	pthread_mutex_lock(&P.reg_lock);
	b->next = P.threads;
	P.threads = b;
	pthread_mutex_unlock(&P.reg_lock);
	pthread_setspecific(P.key, b);
	write_thread_rec(b, PROFF_THREAD_START);
	b->state = TS_ACTIVE;
	BARRIER();
	b->limit = b->buf + b->size - PROFF_TRACE_MAX_EVENT;
	return 0;
}

static void proc_init(void);

/* Slow path of the hooks: first event of a thread, full buffer, or a hook
 * re-entered from a signal handler that interrupted a hook (dropped). Returns
 * where to write, or NULL to drop the event. */
static NOINSTR __attribute__((noinline)) uint8_t *slow_path(struct tbuf *b)
{
	switch (b->state) {
	case TS_UNINIT:
		if (atomic_load(&P.state) != PS_READY) {
			proc_init();
			if (atomic_load(&P.state) != PS_READY || b->state != TS_UNINIT)
				return b->state == TS_ACTIVE && b->limit ? b->pos : NULL;
		}
		if (thread_init(b) < 0)
			return NULL;
		return b->pos;
	case TS_ACTIVE:
		if (b->limit == NULL) {
			b->dropped++;           /* re-entered from a signal handler: counted */
			return NULL;
		}
		/* a signal handler's hooks while the buffer is written are
		 * dropped (and counted), as inside a hook: flush_own holds the
		 * buffer's lock, which they would wait for forever */
		b->limit = NULL;
		BARRIER();
		flush_own(b);
		BARRIER();
		/* retired meanwhile by an exit/exec flush in another thread? */
		if (b->state != TS_ACTIVE)
			return NULL;
		b->limit = b->buf + b->size - PROFF_TRACE_MAX_EVENT;
		return b->pos < b->limit ? b->pos : NULL;
	default:
		return NULL;
	}
}

/* ---- the hooks ---------------------------------------------------------------------- */

static inline NOINSTR uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline NOINSTR uint64_t zigzag(uint64_t v)
{
	return (v << 1) ^ (uint64_t)((int64_t)v >> 63);
}

/* An address delta (format 2): functions and hook frames are 16-byte
 * aligned (x86-64 ABI stack alignment at a call; gcc and clang align
 * functions), so a delta that is a multiple of 16 is stored divided by 16,
 * low bit 0; any other delta whole, low bit 1. Branchless. */
static inline NOINSTR uint64_t zdelta16(uint64_t d)
{
	uint64_t q = zigzag((uint64_t)((int64_t)d >> 4)) << 1;
	uint64_t r = zigzag(d) << 1 | 1;
	return (d & 15) ? r : q;
}

/* Encode one event at p (enough room is guaranteed by limit). */
static inline __attribute__((always_inline)) NOINSTR
void encode(struct tbuf *b, uint8_t *p, uint8_t *lim, uint64_t fn, uint64_t cfa,
	    uint64_t is_exit, int clk)
{
	b->limit = NULL;                /* inside a hook: nested events are dropped */
	b->hook_cfa = cfa;
	BARRIER();
	uint64_t t;
#if HAVE_TSC
	if (clk == 1)
		t = __rdtsc();
	else
#endif
	if (clk == 2)
		t = b->last_ts;         /* no clock: counts and call tree only */
	else
		t = mono_ns(CLOCK_MONOTONIC);
	uint64_t d = t - b->last_ts;
	if (UNLIKELY((int64_t)d < 0)) { /* TSC read on another core, slightly behind */
		d = 0;
		t = b->last_ts;
	}
	p = put_varint(p, d << 1 | is_exit);
	p = put_varint(p, zdelta16(fn - b->last_fn));
	p = put_varint(p, zdelta16(cfa - b->last_cfa));
	b->last_ts = t;
	b->last_fn = fn;
	b->last_cfa = cfa;
	BARRIER();
	b->pos = p;
	b->limit = lim;
}

static NOINSTR __attribute__((noinline)) void record_slow(uint64_t fn, uint64_t cfa, uint64_t is_exit)
{
	struct tbuf *b = &T;
	uint8_t *p = b->pos;
	if (p >= b->limit) {
		if (b->limit)
			b->hook_cfa = cfa;      /* for a jump out of a handler that interrupts the slow path */
		p = slow_path(b);
	}
	if (p)
		encode(b, p, b->limit, fn, cfa, is_exit, P.use_tsc ? 1 : P.no_clock ? 2 : 0);
}

/* The fast path makes no call, so it needs no callee-saved registers. */
static inline __attribute__((always_inline)) NOINSTR
void record(uint64_t fn, uint64_t cfa, uint64_t is_exit)
{
	struct tbuf *b = &T;
	uint8_t *p = b->pos, *lim = b->limit;
	if (UNLIKELY(p >= lim || !P.use_tsc)) {
		record_slow(fn, cfa, is_exit);
		return;
	}
	encode(b, p, lim, fn, cfa, is_exit, 1);
}

EXPORT NOINSTR void __cyg_profile_func_enter(void *fn, void *site)
{
	record((uint64_t)fn, (uint64_t)__builtin_frame_address(0), 0);
}

EXPORT NOINSTR void __cyg_profile_func_exit(void *fn, void *site)
{
	record((uint64_t)fn, (uint64_t)__builtin_frame_address(0), 1);
}

/* ---- overhead calibration ---------------------------------------------------------- */

/* An "instrumented" function with an empty body: calls the hooks the way the
 * compiler's prologue/epilogue would, through the same (possibly PLT) entry
 * points. Like most compiled functions it has an argument that lives across
 * the hooks (saved in a callee-saved register), and it returns from its own
 * frame after the exit hook: with gcc -O2 its code is that of an instrumented
 * `unsigned f(unsigned x) { return x * K + 1; }`. (The former argument-less
 * version, whose exit hook was a tail call, left a call, a return and the
 * register saves out of o_full.) calib_plain is the same function without
 * hooks. */
static NOINSTR __attribute__((noinline)) unsigned calib_empty(unsigned x)
{
	__cyg_profile_func_enter((void *)calib_empty, __builtin_return_address(0));
	__asm__ __volatile__("");
	__cyg_profile_func_exit((void *)calib_empty, __builtin_return_address(0));
	return x * 2654435761u + 1;
}

static NOINSTR __attribute__((noinline)) unsigned calib_plain(unsigned x)
{
	return x * 2654435761u + 1;
}

static NOINSTR size_t get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t r = 0;
	for (int s = 0; p < end && s < 64; s += 7) {
		uint8_t c = *p++;
		r |= (uint64_t)(c & 0x7f) << s;
		if (!(c & 0x80)) {
			*v = r;
			*pp = p;
			return 1;
		}
	}
	return 0;
}

static NOINSTR void sort_doubles(double *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
			double x = v[j];
			v[j] = v[j - 1];
			v[j - 1] = x;
		}
}

/* TAU-style: o_in = time inside an empty function's own interval (from the
 * recorded exit deltas), o_full = whole per-call cost (loop of instrumented
 * calls minus the same loop of plain calls). Median over repeats, not the
 * minimum: the readers subtract them from mean times, and the per-call cost
 * varies over time (by up to 1.5x on a shared VM). */
static NOINSTR void calibrate_overhead(struct tbuf *b)
{
	enum { N = 1000, R = 9 };
	if (b->state != TS_ACTIVE || P.no_clock || b->size < HDR_BYTES + N * 2 * PROFF_TRACE_MAX_EVENT + 64)
		return;
	double best_in = -1, best_full = -1, ins[R], fulls[R];
	int nr = 0;
	for (int r = 0; r < R; r++) {
		chunk_begin(b, 0);
		uint8_t *start = b->pos;
		unsigned acc = 0;     /* each call depends on the previous one */
		uint64_t t0 = now();
		for (int i = 0; i < N; i++)
			acc = calib_empty(acc + (unsigned)i);
		uint64_t t1 = now();
		for (int i = 0; i < N; i++)
			acc = calib_plain(acc + (unsigned)i);
		uint64_t t2 = now();
		__asm__ __volatile__("" : : "r"(acc));
		/* decode: sum of exit deltas */
		const uint8_t *p = start, *end = b->pos;
		uint64_t sum_in = 0, v, fd, cd;
		int nexit = 0;
		while (p < end) {
			if (!get_varint(&p, end, &v) || !get_varint(&p, end, &fd) || !get_varint(&p, end, &cd))
				break;
			if (v & 1) {
				sum_in += v >> 1;
				nexit++;
			}
		}
		if (nexit != N)
			continue;              /* a flush or a signal interfered */
		double in = (double)sum_in / N;
		double full = ((double)(t1 - t0) - (double)(t2 - t1)) / N;
		ins[nr] = in;
		fulls[nr++] = full;
	}
	if (nr) {
		sort_doubles(ins, nr);
		sort_doubles(fulls, nr);
		best_in = ins[nr / 2];
		best_full = fulls[nr / 2];
	}
	chunk_begin(b, 0);
	b->seq = 0;
	chunk_begin(b, 0);
	if (best_in >= 0 && best_full > 0) {
		if (best_in > best_full)
			best_in = best_full;
		P.o_in_x1024 = (uint64_t)(best_in * 1024);
		P.o_full_x1024 = (uint64_t)(best_full * 1024);
		P.calib_calls = (uint64_t)N * R;
	}
}

/* ---- calibration file ($PROFF_CALIBRATION) --------------------------------------- */

/* One line on stderr about the calibration file, once per process tree
 * (exec'd images inherit PROFF_CALIBRATION_WARNED). */
static NOINSTR void calfile_warn(const char *path, const char *what, size_t off)
{
	if (getenv("PROFF_CALIBRATION_WARNED"))
		return;
	setenv("PROFF_CALIBRATION_WARNED", "1", 1);
	char msg[1400], at[48] = "";
	if (off != CALP_NO_OFFSET)
		snprintf(at, sizeof(at), " (at byte offset %zu)", off);
	int n = snprintf(msg, sizeof(msg), "proff-instrument: %s=%.600s: %s%s; using the start-up estimate\n",
			 CALP_ENV, path, what, at);
	if (n > 0)
		write_all(2, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
}

/* Read $PROFF_CALIBRATION (made absolute for exec'd images that may have
 * changed directory). Returns 1 and sets the overheads when the file is valid,
 * 0 when there is none or it is unusable (reported once). */
static NOINSTR int calfile_load(void)
{
	const char *env = getenv(CALP_ENV);
	if (!env || !*env)
		return 0;
	char path[4096];
	if (env[0] != '/') {
		char cwd[2048];
		if (getcwd(cwd, sizeof(cwd)))
			snprintf(path, sizeof(path), "%s/%.2000s", cwd, env);
		else
			snprintf(path, sizeof(path), "%s", env);
		setenv(CALP_ENV, path, 1);
	} else {
		snprintf(path, sizeof(path), "%s", env);
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		char what[300];
		snprintf(what, sizeof(what), "cannot open: %s", strerror(errno));
		calfile_warn(path, what, CALP_NO_OFFSET);
		return 0;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		calfile_warn(path, "not a regular file", CALP_NO_OFFSET);
		return 0;
	}
	size_t cap = CALP_FILE_MAX + 1, n = 0;
	char *buf = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		close(fd);
		calfile_warn(path, "out of memory", CALP_NO_OFFSET);
		return 0;
	}
	while (n < cap) {
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	calp_values v = { .cpu = -1 };
	char msg[600];
	size_t off;
	int rc = calp_parse(buf, n, &v, msg, sizeof(msg), &off);
	munmap(buf, cap);
	if (rc != CALP_OK) {
		calfile_warn(path, msg, off);
		return 0;
	}
	if (P.no_clock)
		return 0;               /* no timestamps: nothing to compensate */
	double tpns = (double)P.ticks_per_sec / 1e9;
	P.o_in_x1024 = (uint64_t)(v.o_in_ns * tpns * 1024 + 0.5);
	P.o_full_x1024 = (uint64_t)(v.o_full_ns * tpns * 1024 + 0.5);
	P.calib_calls = 0;
	return 1;
}

/* ---- process life cycle -------------------------------------------------------------- */

static NOINSTR void finish(int reason, int code, int in_signal)
{
	if (atomic_load(&P.state) != PS_READY)
		return;
	if (!in_signal && getpid() != P.pid)
		return;                 /* a vfork child: the buffers are the parent's */
	if (reason != PROFF_END_EXEC && atomic_exchange(&P.finished, 1))
		return;
	flush_all(in_signal);
	if (!in_signal && reason != PROFF_END_SIGNAL) {
		write_maps();
		write_modules();
	}
	write_end(reason, code);
}

static NOINSTR void fatal_handler(int sig)
{
	int saved = errno;
	finish(PROFF_END_SIGNAL, sig, 1);
	signal(sig, SIG_DFL);
	raise(sig);            /* blocked until we return: then the default action */
	errno = saved;
}

static NOINSTR void atfork_prepare(void)
{
	pthread_mutex_lock(&P.reg_lock);
}

static NOINSTR void atfork_parent(void)
{
	pthread_mutex_unlock(&P.reg_lock);
}

/* The child is a new session: its own id, records and a fresh buffer. Events
 * its parent had buffered stay with the parent. */
static NOINSTR void atfork_child(void)
{
	pthread_mutex_init(&P.reg_lock, NULL);
	if (atomic_load(&P.state) != PS_READY)
		return;
	struct tbuf *b = &T;
	P.parent_session = P.session;
	P.pid = getpid();
	P.session = ((uint64_t)P.pid << 32) ^ (now() & 0xffffffffu);
	P.flags = PROFF_SESS_F_FORKED | (P.calfile ? PROFF_SESS_F_CALFILE : 0);
	P.start_ts = now();
	P.start_mono = mono_ns(CLOCK_MONOTONIC);
	P.start_real = mono_ns(CLOCK_REALTIME);
	atomic_store(&P.finished, 0);
	P.threads = NULL;
	write_session();
	write_maps();
	write_modules();
	if (b->state == TS_ACTIVE) {
		atomic_store(&b->lock, 0);
		b->tid = gettid_();
		b->seq = 0;
		chunk_begin(b, 0);
		b->next = NULL;
		P.threads = b;
		write_thread_rec(b, PROFF_THREAD_START);
	}
}

static NOINSTR size_t parse_size(const char *s, size_t dflt)
{
	if (!s || !*s)
		return dflt;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end == 'k' || *end == 'K')
		v <<= 10;
	else if (*end == 'm' || *end == 'M')
		v <<= 20;
	else if (*end == 'g' || *end == 'G')
		v <<= 30;
	if (v < 65536)
		v = 65536;
	if (v > (1ull << 30))
		v = 1ull << 30;
	return (size_t)v;
}

static void rt_on_exit(int status, void *arg);
static void jump_resolve(void);

static NOINSTR void proc_init(void)
{
	int expect = PS_NONE;
	if (!atomic_compare_exchange_strong(&P.state, &expect, PS_INITIALIZING))
		return;                 /* done, failed, or in progress (recursion) */
	const char *out = getenv("PROFF_OUTPUT");
	if (!out || !*out)
		out = PROFF_TRACE_DEFAULT_FILE;
	if (out[0] != '/') {
		char cwd[2048];
		if (getcwd(cwd, sizeof(cwd)))
			snprintf(P.path, sizeof(P.path), "%s/%s", cwd, out);
		else
			snprintf(P.path, sizeof(P.path), "%s", out);
	} else {
		snprintf(P.path, sizeof(P.path), "%s", out);
	}
	const char *app = getenv("PROFF_APPEND");
	int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC;
	if (!app || !*app)
		flags |= O_TRUNC;
	P.fd = open(P.path, flags, 0644);
	if (P.fd < 0) {
		char msg[4200];
		int n = snprintf(msg, sizeof(msg), "proff-instrument: cannot open %s: %s\n",
				 P.path, strerror(errno));
		if (n > 0)
			write_all(2, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
		atomic_store(&P.state, PS_FAILED);
		return;
	}
	/* out of the way of programs that expect the lowest free descriptors */
	int hi = fcntl(P.fd, F_DUPFD_CLOEXEC, 512);
	if (hi >= 0) {
		close(P.fd);
		P.fd = hi;
	}
	struct stat st;
	if (fstat(P.fd, &st) == 0) {
		P.dev = st.st_dev;
		P.ino = st.st_ino;
	}
	/* exec'd children append to the same file */
	setenv("PROFF_OUTPUT", P.path, 1);
	setenv("PROFF_APPEND", "1", 1);

	const char *clk = getenv("PROFF_CLOCK");
	P.no_clock = clk && !strcmp(clk, "none");
	P.use_tsc = HAVE_TSC && !P.no_clock && !(clk && !strcmp(clk, "monotonic")) && tsc_invariant();
	P.ticks_per_sec = P.use_tsc ? tsc_rate() : 1000000000u;
	if (P.use_tsc && P.ticks_per_sec == 0) {
		P.use_tsc = 0;
		P.ticks_per_sec = 1000000000u;
	}
	if (P.use_tsc) {
		char hz[32];
		snprintf(hz, sizeof(hz), "%llu", (unsigned long long)P.ticks_per_sec);
		setenv("PROFF_TSC_HZ", hz, 1);
	}
	P.bufsize = parse_size(getenv("PROFF_BUFFER"), 1 << 20);
	P.pid = getpid();
	P.session = ((uint64_t)P.pid << 32) ^ (now() & 0xffffffffu);
	P.flags = getenv("PROFF_EXECED") ? PROFF_SESS_F_EXECED : 0;
	setenv("PROFF_EXECED", "1", 1);
	P.calfile = calfile_load();
	if (P.calfile)
		P.flags |= PROFF_SESS_F_CALFILE;
	P.start_ts = now();
	P.start_mono = mono_ns(CLOCK_MONOTONIC);
	P.start_real = mono_ns(CLOCK_REALTIME);

	pthread_key_create(&P.key, thread_exit_cb);
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
		struct sigaction sa, old;
		if (sigaction(fatal_signals[i], NULL, &old) == 0 && old.sa_handler != SIG_DFL)
			continue;       /* ignored or handled already: leave it alone */
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = fatal_handler;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_RESTART;
		sigaction(fatal_signals[i], &sa, NULL);
	}

	on_exit(rt_on_exit, NULL);
	jump_resolve();

	/* the calling thread: calibrate through the real hooks (unless the
	 * calibration file gave the overheads), then go */
	atomic_store(&P.state, PS_READY);
	struct tbuf *b = &T;
	if (b->state == TS_UNINIT)
		thread_init(b);
	if (!P.calfile)
		calibrate_overhead(b);
	write_session();
	write_maps();
	write_modules();
}

static NOINSTR __attribute__((constructor(101))) void rt_ctor(void)
{
	proc_init();
}

/* The end of a normal exit is whichever of these two runs last: the on_exit
 * handler (it knows the exit status) or the destructor. Preloaded, the
 * destructor runs first (from _dl_fini, registered after our handler);
 * linked statically, the handler runs first. */
static volatile int exit_status = -1, exit_seen, dtor_seen;

static NOINSTR void rt_on_exit(int status, void *arg)
{
	exit_status = status;
	exit_seen = 1;
	if (dtor_seen)
		finish(PROFF_END_EXIT, status, 0);
}

static NOINSTR __attribute__((destructor(101))) void rt_dtor(void)
{
	dtor_seen = 1;
	if (exit_seen)
		finish(PROFF_END_EXIT, exit_status, 0);
}

/* ---- interposed libc functions: flush before the process image goes away ---- */

#define REAL(name) \
	static __typeof__(name) *real_##name; \
	if (!real_##name) real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

EXPORT NOINSTR void _exit(int status)
{
	finish(PROFF_END__EXIT, status, 0);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

EXPORT NOINSTR void _Exit(int status)
{
	_exit(status);
}

static NOINSTR void before_exec(void)
{
	finish(PROFF_END_EXEC, 0, 0);
}

EXPORT NOINSTR int execve(const char *path, char *const argv[], char *const envp[])
{
	REAL(execve);
	before_exec();
	return real_execve(path, argv, envp);
}

EXPORT NOINSTR int execv(const char *path, char *const argv[])
{
	REAL(execv);
	before_exec();
	return real_execv(path, argv);
}

EXPORT NOINSTR int execvp(const char *file, char *const argv[])
{
	REAL(execvp);
	before_exec();
	return real_execvp(file, argv);
}

EXPORT NOINSTR int execvpe(const char *file, char *const argv[], char *const envp[])
{
	REAL(execvpe);
	before_exec();
	return real_execvpe(file, argv, envp);
}

EXPORT NOINSTR int fexecve(int fd, char *const argv[], char *const envp[])
{
	REAL(fexecve);
	before_exec();
	return real_fexecve(fd, argv, envp);
}

/* execl*: collect the variadic arguments, then the v-variants above. */
#define MAX_EXECL_ARGS 4096
#define COLLECT_ARGS(first, argv, ap, n) do { \
	argv[0] = (char *)(first); n = 1; \
	while (n < MAX_EXECL_ARGS && (argv[n] = va_arg(ap, char *)) != NULL) n++; \
	argv[n < MAX_EXECL_ARGS ? n : MAX_EXECL_ARGS - 1] = NULL; \
} while (0)

EXPORT NOINSTR int execl(const char *path, const char *arg, ...)
{
	char *argv[MAX_EXECL_ARGS];
	size_t n;
	va_list ap;
	va_start(ap, arg);
	COLLECT_ARGS(arg, argv, ap, n);
	va_end(ap);
	return execv(path, argv);
}

EXPORT NOINSTR int execlp(const char *file, const char *arg, ...)
{
	char *argv[MAX_EXECL_ARGS];
	size_t n;
	va_list ap;
	va_start(ap, arg);
	COLLECT_ARGS(arg, argv, ap, n);
	va_end(ap);
	return execvp(file, argv);
}

EXPORT NOINSTR int execle(const char *path, const char *arg, ...)
{
	char *argv[MAX_EXECL_ARGS];
	size_t n;
	va_list ap;
	va_start(ap, arg);
	COLLECT_ARGS(arg, argv, ap, n);
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	return execve(path, argv, envp);
}

/* dlopen: record the new mappings so the reader can name functions of
 * libraries loaded later. */
EXPORT NOINSTR void *dlopen(const char *file, int mode)
{
	REAL(dlopen);
	void *h = real_dlopen ? real_dlopen(file, mode) : NULL;
	if (h && atomic_load(&P.state) == PS_READY) {
		write_maps();
		write_modules();
	}
	return h;
}

/* ---- longjmp: a jump marker, so the reader knows which frames it abandoned ---- */

/* The frame address the hooks of the function that called setjmp have: the
 * stack pointer saved in the jmp_buf (glibc x86-64: __jmpbuf[6], mangled
 * with the thread's pointer guard at %fs:0x30, PTR_MANGLE: xor, then rotate
 * left by 17) is that function's stack pointer at its call of setjmp, which
 * is where it calls its hooks too (a fixed frame); a hook's frame address is
 * 16 below its caller's stack pointer (return address, saved frame pointer).
 * 0 when the value cannot be a stack pointer at a call (not 16-aligned, or
 * not above this frame): unknown, and the reader falls back to its
 * frame-address rule. */
static NOINSTR uint64_t jump_landing(const void *env)
{
#if defined(__x86_64__) && defined(__GLIBC__)
	uint64_t m, guard, sp;
	memcpy(&m, (const uint8_t *)env + 6 * sizeof(uint64_t), sizeof(m));
	__asm__("mov %%fs:0x30, %0" : "=r"(guard));
	__asm__("mov %%rsp, %0" : "=r"(sp));
	uint64_t v = ((m >> 17) | (m << 47)) ^ guard;
	return (v & 15) == 0 && v > sp ? v - 16 : 0;
#else
	(void)env;
	return 0;
#endif
}

/* Called by the program before the jump: a marker event (function address
 * 0, exit bit, landing frame). A hook this thread was in when a signal
 * handler interrupted it is abandoned when the jump lands above its frame
 * (siglongjmp out of the handler): its event is lost (counted as dropped)
 * and the thread's record starts over from what is committed, so that the
 * buffer, which that hook would otherwise hold forever, is usable again. */
static NOINSTR void before_jump(const void *env)
{
	if (atomic_load(&P.state) != PS_READY)
		return;
	struct tbuf *b = &T;
	uint64_t landing = jump_landing(env);
	if (b->state == TS_ACTIVE && b->limit == NULL && landing && landing > b->hook_cfa) {
		lock_buf(b, -1);
		if (b->state == TS_ACTIVE) {
			b->dropped++;
			chunk_write(b, b->pos);
			chunk_begin(b, 0);
			b->limit = b->buf + b->size - PROFF_TRACE_MAX_EVENT;
		}
		unlock_buf(b);
	}
	record(0, landing, 1);
}

/* The real functions, looked up at start-up (proc_init): a lookup at the
 * first jump would be timed inside the calls it leaves. */
enum { J_LONGJMP, J__LONGJMP, J_SIGLONGJMP, J_LONGJMP_CHK, J_COUNT };
static const char *const jump_names[J_COUNT] = { "longjmp", "_longjmp", "siglongjmp", "__longjmp_chk" };
typedef void (*jump_fn)(struct __jmp_buf_tag *, int);
static jump_fn jump_real[J_COUNT];

static NOINSTR void jump_resolve(void)
{
	for (int k = 0; k < J_COUNT; k++)
		if (!jump_real[k])
			jump_real[k] = (jump_fn)dlsym(RTLD_NEXT, jump_names[k]);
}

static NOINSTR __attribute__((noreturn)) void jump(int k, struct __jmp_buf_tag *env, int val)
{
	if (!jump_real[k])
		jump_resolve();
	before_jump(env);
	if (!jump_real[k])
		abort();                /* no libc longjmp: cannot happen with glibc */
	jump_real[k](env, val);
	__builtin_unreachable();
}

EXPORT NOINSTR void longjmp(jmp_buf env, int val)
{
	jump(J_LONGJMP, env, val);
}

EXPORT NOINSTR void _longjmp(jmp_buf env, int val)
{
	jump(J__LONGJMP, env, val);
}

EXPORT NOINSTR void siglongjmp(sigjmp_buf env, int val)
{
	jump(J_SIGLONGJMP, env, val);
}

/* _FORTIFY_SOURCE's longjmp */
void __longjmp_chk(jmp_buf env, int val) __attribute__((noreturn));
EXPORT NOINSTR void __longjmp_chk(jmp_buf env, int val)
{
	jump(J_LONGJMP_CHK, env, val);
}
