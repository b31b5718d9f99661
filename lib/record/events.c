/* events.c — event name table for proff record (-e): name -> (type, config),
 * with the :u / :k modifiers and raw rNNN events, as perf spells them. */
#include "proff/record.h"

#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ev_def {
	const char *name;
	uint32_t type;
	uint64_t config;
};

/* each event once (its name, type and config); the table and the list of
 * names are both made from it at compile time */
#define EVENTS(X) \
	X("cpu-clock",               PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK) \
	X("task-clock",              PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK) \
	X("page-faults",             PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS) \
	X("faults",                  PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS) \
	X("context-switches",        PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES) \
	X("cs",                      PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES) \
	X("cpu-migrations",          PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS) \
	X("migrations",              PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS) \
	X("minor-faults",            PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN) \
	X("major-faults",            PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ) \
	X("alignment-faults",        PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS) \
	X("emulation-faults",        PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS) \
	X("dummy",                   PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY) \
	X("cycles",                  PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES) \
	X("cpu-cycles",              PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES) \
	X("instructions",            PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS) \
	X("cache-references",        PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES) \
	X("cache-misses",            PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES) \
	X("branch-instructions",     PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS) \
	X("branches",                PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS) \
	X("branch-misses",           PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES) \
	X("bus-cycles",              PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES) \
	X("stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND) \
	X("stalled-cycles-backend",  PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND) \
	X("ref-cycles",              PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES)
#define EV_ROW(name, ...) { name, __VA_ARGS__ },
#define EV_NAME(name, ...) name,
static const struct ev_def ev_table[] = { EVENTS(EV_ROW) };
static const char *const ev_names[] = { EVENTS(EV_NAME) NULL };

#define NR_EV (sizeof(ev_table) / sizeof(ev_table[0]))

const char *const *rec_event_names(void)
{
	return ev_names;
}

int rec_parse_event(const char *spec, rec_event *ev, proff_error *err)
{
	memset(ev, 0, sizeof(*ev));
	char base[96];
	const char *colon = strchr(spec, ':');
	size_t bl = colon ? (size_t)(colon - spec) : strlen(spec);
	if (bl == 0 || bl >= sizeof(base))
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET, "bad event '%s'", spec);
	memcpy(base, spec, bl);
	base[bl] = 0;
	bool found = false;
	for (size_t i = 0; i < NR_EV; i++) {
		if (!strcmp(ev_table[i].name, base)) {
			ev->type = ev_table[i].type;
			ev->config = ev_table[i].config;
			found = true;
			break;
		}
	}
	if (!found && base[0] == 'r' && base[1]) {
		char *end;
		unsigned long long v = strtoull(base + 1, &end, 16);
		if (!*end) {
			ev->type = PERF_TYPE_RAW;
			ev->config = v;
			found = true;
		}
	}
	if (!found) {
		char list[1024] = "";
		size_t n = 0;
		for (size_t i = 0; i < NR_EV && n < sizeof(list) - 40; i++)
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "", ev_table[i].name);
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
				     "unknown event '%s' (known: %s, rNNNN)", spec, list);
	}
	ev->hardware = ev->type == PERF_TYPE_HARDWARE || ev->type == PERF_TYPE_RAW;
	if (colon) {
		bool u = false, k = false;
		for (const char *m = colon + 1; *m; m++) {
			if (*m == 'u')
				u = true;
			else if (*m == 'k')
				k = true;
			else if (*m == 'p' || *m == 'P' || *m == 'H' || *m == 'G')
				continue;   /* precise / host / guest: accepted, ignored */
			else
				return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
						     "bad modifier '%c' in event '%s'", *m, spec);
		}
		if (u && !k)
			ev->exclude_kernel = true;
		if (k && !u)
			ev->exclude_user = true;
	}
	snprintf(ev->name, sizeof(ev->name), "%s", spec);
	return 0;
}
