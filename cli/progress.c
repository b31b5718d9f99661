/* progress.c — the progress line of a long load, on stderr when it is a
 * terminal: "proff: reading FILE: 45% (120 of 260 MB, 210 MB/s)" (the sum of
 * the files when several are read at once), shown
 * once a load has taken PROGRESS_DELAY_MS (or $PROFF_PROGRESS_DELAY_MS; 0
 * shows it at once), redrawn a few times a second by a thread of its own,
 * erased when the load is done. The loader only stores where it is
 * (cli_progress_update, the pf_load_opts.progress callback). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"

#define PROGRESS_DELAY_MS 500
#define PROGRESS_TICK_MS 100

/* one file being read (pf_load_opts.progress_ctx) */
struct slot {
	cli_progress *p;
	_Atomic uint64_t done[3], total;    /* by part (pf_load_opts.progress) */
};

struct cli_progress {
	char what[200];
	struct slot *slots;
	size_t nslots;
	atomic_bool stop;
	bool shown;
	pthread_t th;
	bool running;
	pthread_mutex_t lock;                /* one writer of the line at a time */
	pthread_cond_t cond;
	struct timespec t0;
	long delay_ms;
};

static double since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void draw(cli_progress *p)
{
	uint64_t done = 0, total = 0;
	for (size_t i = 0; i < p->nslots; i++) {
		struct slot *sl = &p->slots[i];
		uint64_t t = atomic_load(&sl->total);
		uint64_t d0 = atomic_load(&sl->done[0]), d1 = atomic_load(&sl->done[1]), d2 = atomic_load(&sl->done[2]);
		/* a split read: two readers, each about half way for the whole */
		uint64_t d = d0 > (d1 + d2) / 2 ? d0 : (d1 + d2) / 2;
		done += t && d > t ? t : d;
		total += t;
	}
	double s = since(&p->t0), mb = (double)done / 1048576.0;
	char line[320];
	if (total)
		snprintf(line, sizeof(line), "proff: %s: %3.0f%% (%.0f of %.0f MB, %.0f MB/s)", p->what,
			 (double)done * 100.0 / (double)total, mb, (double)total / 1048576.0, s > 0 ? mb / s : 0.0);
	else
		snprintf(line, sizeof(line), "proff: %s ...", p->what);
	fprintf(stderr, "\r%s\033[K", line);
	fflush(stderr);
	p->shown = true;
}

static void *progress_main(void *arg)
{
	cli_progress *p = arg;
	pthread_mutex_lock(&p->lock);
	while (!atomic_load(&p->stop)) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += PROGRESS_TICK_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&p->cond, &p->lock, &until);
		if (!atomic_load(&p->stop) && since(&p->t0) * 1000.0 >= (double)p->delay_ms)
			draw(p);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

cli_progress *cli_progress_start(const char *what, bool quiet, size_t nslots)
{
	if (quiet || !isatty(STDERR_FILENO) || !nslots)
		return NULL;
	cli_progress *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->slots = calloc(nslots, sizeof(*p->slots));
	if (!p->slots) {
		free(p);
		return NULL;
	}
	p->nslots = nslots;
	for (size_t i = 0; i < nslots; i++)
		p->slots[i].p = p;
	snprintf(p->what, sizeof(p->what), "%s", what);
	const char *d = getenv("PROFF_PROGRESS_DELAY_MS");
	p->delay_ms = d && *d ? atol(d) : PROGRESS_DELAY_MS;
	clock_gettime(CLOCK_MONOTONIC, &p->t0);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	if (p->delay_ms <= 0)
		draw(p);
	p->running = pthread_create(&p->th, NULL, progress_main, p) == 0;
	return p;
}

void *cli_progress_slot(cli_progress *p, size_t i)
{
	return p && i < p->nslots ? &p->slots[i] : NULL;
}

void cli_progress_update(void *ctx, unsigned part, uint64_t done, uint64_t total)
{
	struct slot *sl = ctx;
	if (!sl || part > 2)
		return;
	atomic_store_explicit(&sl->done[part], done, memory_order_relaxed);
	atomic_store_explicit(&sl->total, total, memory_order_relaxed);
}

void cli_progress_done(cli_progress *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	atomic_store(&p->stop, true);
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	if (p->running)
		pthread_join(p->th, NULL);
	if (p->shown) {
		fputs("\r\033[K", stderr);   /* the line erased: the screen as before */
		fflush(stderr);
	}
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p->slots);
	free(p);
}
