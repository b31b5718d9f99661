/* time-spec.c — perf's --time strings (percentages of the recording's span,
 * "a%-b%" or "N%/M", or absolute "start,stop" seconds with ':' between the
 * files' ranges) into time ranges the loader keeps the samples of.
 */
#include "proff/profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_abs_time(const char *s, size_t n, uint64_t *out)
{
	/* "sec.usec" (perf prints sample times as seconds with 6 decimals) */
	char buf[64];
	if (n == 0) {
		*out = 0;
		return 0;
	}
	if (n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	char *end;
	unsigned long long sec = strtoull(buf, &end, 10);
	uint64_t ns = 0;
	if (*end == '.') {
		const char *f = end + 1;
		int digits = 0;
		while (*f >= '0' && *f <= '9' && digits < 9) {
			ns = ns * 10 + (uint64_t)(*f - '0');
			f++;
			digits++;
		}
		while (digits++ < 9)
			ns *= 10;
		while (*f >= '0' && *f <= '9')
			f++;
		end = (char *)f;
	}
	if (*end)
		return -1;
	*out = sec * 1000000000ULL + ns;
	return 0;
}

int pf_parse_time_spec(const char *spec, size_t file_idx, size_t nfiles,
		       uint64_t first, uint64_t last,
		       pf_time_range **ranges, size_t *nranges, proff_error *err)
{
	*ranges = NULL;
	*nranges = 0;
	if (!spec || !*spec)
		return 0;
	bool percent = strchr(spec, '%') != NULL;
	size_t cap = 0;
	pf_time_range *r = NULL;
	if (percent) {
		/* comma separated items: "a%-b%" or "N%/M" */
		const char *p = spec;
		while (*p) {
			const char *c = strchr(p, ',');
			size_t n = c ? (size_t)(c - p) : strlen(p);
			char item[64];
			if (n >= sizeof(item))
				goto bad;
			memcpy(item, p, n);
			item[n] = '\0';
			double a, b;
			int m;
			uint64_t span = last > first ? last - first : 0;
			pf_time_range tr;
			if (sscanf(item, "%lf%%/%d", &a, &m) == 2 && strchr(item, '/')) {
				if (a <= 0 || a > 100 || m < 1 || (double)m * a > 100.0 + 1e-9)
					goto bad;
				tr.start = first + (uint64_t)((double)span * a * (m - 1) / 100.0);
				tr.end = first + (uint64_t)((double)span * a * m / 100.0);
			} else if (sscanf(item, "%lf%%-%lf%%", &a, &b) == 2) {
				if (a < 0 || b > 100 || a > b)
					goto bad;
				tr.start = first + (uint64_t)((double)span * a / 100.0);
				tr.end = first + (uint64_t)((double)span * b / 100.0);
			} else {
				goto bad;
			}
			if (PF_GROW(r, cap, *nranges + 1) < 0) {
				free(r);
				return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
			}
			r[(*nranges)++] = tr;
			if (!c)
				break;
			p = c + 1;
		}
		*ranges = r;
		return 0;
	}
	/* absolute: "start,stop" with ':' separating per-file ranges */
	const char *p = spec;
	for (size_t i = 0; i < file_idx; i++) {
		const char *c = strchr(p, ':');
		if (!c) {
			/* fewer ranges than files: this file gets nothing kept? perf applies
			 * only the given ranges; files without one are not filtered */
			(void)nfiles;
			return 0;
		}
		p = c + 1;
	}
	const char *colon = strchr(p, ':');
	size_t n = colon ? (size_t)(colon - p) : strlen(p);
	const char *comma = memchr(p, ',', n);
	if (!comma)
		goto bad;
	pf_time_range tr;
	if (parse_abs_time(p, (size_t)(comma - p), &tr.start) < 0 ||
	    parse_abs_time(comma + 1, n - (size_t)(comma + 1 - p), &tr.end) < 0)
		goto bad;
	r = malloc(sizeof(*r));
	if (!r)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	r[0] = tr;
	*ranges = r;
	*nranges = 1;
	return 0;
bad:
	free(r);
	*ranges = NULL;
	*nranges = 0;
	return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET, "invalid time string '%s'", spec);
}
