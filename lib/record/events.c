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

static const struct ev_def ev_table[] = {
	{ "cpu-clock",               PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock",              PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults",             PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults",                  PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches",        PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs",                      PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations",          PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations",              PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "minor-faults",            PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults",            PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "alignment-faults",        PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults",        PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
	{ "dummy",                   PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY },
	{ "cycles",                  PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles",              PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions",            PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references",        PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses",            PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branch-instructions",     PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branches",                PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses",           PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles",              PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend",  PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles",              PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
};

#define NR_EV (sizeof(ev_table) / sizeof(ev_table[0]))

const char *rec_event_name(size_t i)
{
	return i < NR_EV ? ev_table[i].name : NULL;
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
