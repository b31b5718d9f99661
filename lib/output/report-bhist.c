/* report-bhist.c — the text of a --branch-history callchain node, as perf
 * report prints it: the frame's symbol and source line, then its branch
 * statistics — for a branch's target its types and how often it was
 * predicted and aborted (when not always / ever), for a branch's source
 * the average cycles and the loop iterations perf removed before it, for
 * a callchain entry "(calltrace)". */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "report-int.h"

/* perf's callchain srcline of a location: the row's srcline, but a
 * "sym+off" of a symbol without line information loses the symbol */
static const char *node_srcline(const pf_profile *p, const pf_loc *l)
{
	const char *s = pf_str(p, l->srcline);
	const char *name = pf_str(p, p->syms[l->sym].name);
	size_t n = strlen(name);
	if (!strncmp(s, name, n) && s[n] == '+')
		return s + n;
	return s;
}

static size_t put(char *buf, size_t len, size_t at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* fmt's text appended at buf + at (cut to len); the new end */
static size_t put(char *buf, size_t len, size_t at, const char *fmt, ...)
{
	if (at >= len)
		return at;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + at, len - at, fmt, ap);
	va_end(ap);
	if (n < 0)
		return at;
	return at + (size_t)n < len ? at + (size_t)n : len - 1;
}

/* perf's counts: " (x:1 y:2)", each part only when it says something */
static size_t bh_counts(const hist_bh_node *s, char *buf, size_t len, size_t at)
{
	int parts = 0;
	if (!s->branch_count)
		return put(buf, len, at, " (calltrace)");
	if (s->to) {
		if (s->types & 0xffff) {
			/* perf's branch_type_str: conditional ones by direction,
			 * the other types by name, then the boundaries crossed */
			static const char *const names[16] = {
				"N/A", "COND", "UNCOND", "IND", "CALL", "IND_CALL", "RET", "SYSCALL", "SYSRET",
				"COND_CALL", "COND_RET", "ERET", "IRQ", "SERROR", "NO_TX", "EXTEND_ABI",
			};
			at = put(buf, len, at, " (");
			if (s->types & HIST_BH_COND_FWD)
				at = put(buf, len, at, "%sCOND_FWD", parts++ ? " " : "");
			if (s->types & HIST_BH_COND_BWD)
				at = put(buf, len, at, "%sCOND_BWD", parts++ ? " " : "");
			for (unsigned t = 0; t < 16; t++)
				if (t != 1 && (s->types & (1u << t)))
					at = put(buf, len, at, "%s%s", parts++ ? " " : "", names[t]);
			if (s->types & HIST_BH_CROSS_4K)
				at = put(buf, len, at, "%sCROSS_4K", parts++ ? " " : "");
			if (s->types & HIST_BH_CROSS_2M)
				at = put(buf, len, at, "%sCROSS_2M", parts++ ? " " : "");
			parts = 1;
		}
		if (s->predicted < s->branch_count)
			at = put(buf, len, at, "%spredicted:%.1f%%", parts++ ? " " : " (",
				 (double)s->predicted * 100 / (double)s->branch_count);
		if (s->abort)
			at = put(buf, len, at, "%sabort:%.1f%%", parts++ ? " " : " (",
				 (double)s->abort * 100 / (double)s->branch_count);
	} else {
		uint64_t cycles = s->cycles / s->branch_count;
		if (cycles)
			at = put(buf, len, at, "%scycles:%" PRIu64, parts++ ? " " : " (", cycles);
		if (s->iter && s->from_count && s->iter / s->from_count) {
			at = put(buf, len, at, "%siter:%" PRIu64, parts++ ? " " : " (", s->iter / s->from_count);
			at = put(buf, len, at, " avg_cycles:%" PRIu64, s->iter_cycles / s->iter);
		}
	}
	if (parts)
		at = put(buf, len, at, ")");
	return at;
}

const char *report_bh_frame_name(const hist *h, uint32_t n, bool counts, char *buf, size_t len)
{
	const pf_profile *p = h->prof;
	const pf_loc *l = &p->locs[h->cc_nodes[n].loc];
	size_t at;
	if (l->sym == PF_NONE)
		at = put(buf, len, 0, "%#" PRIx64, l->ip);
	else if (l->dso != PF_NONE && l->srcline != PF_NONE)
		at = put(buf, len, 0, "%s %s", pf_str(p, p->syms[l->sym].name), node_srcline(p, l));
	else
		at = put(buf, len, 0, "%s", pf_str(p, p->syms[l->sym].name));
	if (counts)
		bh_counts(&h->bh_nodes[n], buf, len, at);
	return buf;
}
