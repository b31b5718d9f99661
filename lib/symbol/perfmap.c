/* perfmap.c — JIT symbol files (/tmp/perf-PID.map), read as perf 6.1 reads
 * them, and the name perf gives an anonymous executable mapping.
 *
 * A JIT (python3.12 -X perf, node --perf-basic-prof, Java agents) writes one
 * line per compiled function, "START SIZE name" in hex, to
 * /tmp/perf-PID.map. perf names the anonymous executable mappings of process
 * PID by that file (the map's addresses are the ips themselves) and reads it
 * line by line with its own loose rules; a line it reads differently from
 * the documented form still gives the symbol it gives, so that proff's rows
 * are perf's, and such lines are counted for one warning (sym_dso_problem).
 */
#include "symbol-int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* The documented form: hex digits, one space, hex digits, one space, a
 * name, and the newline. */
static bool line_is_strict(const char *line, size_t n, bool had_newline)
{
	if (!had_newline)
		return false;
	size_t i = 0;
	for (int field = 0; field < 2; field++) {
		size_t d = i;
		while (i < n && isxdigit((unsigned char)line[i]))
			i++;
		if (i == d || i >= n || line[i] != ' ')
			return false;
		i++;
	}
	return i < n && memchr(line + i, '\0', n - i) == NULL;
}

int sym_perfmap_line(char *line, size_t n, sym_perfmap_entry *out)
{
	if (n == 0)
		return 0;
	bool had_newline = line[n - 1] == '\n';
	/* perf drops the line's last byte, newline or not */
	line[--n] = '\0';
	out->strict = line_is_strict(line, n, had_newline);
	char *e;
	out->start = strtoull(line, &e, 16);
	size_t k = (size_t)(e - line) + 1;
	if (k + 2 >= n)
		return 0;
	out->size = strtoull(line + k, &e, 16);
	k = (size_t)(e - line) + 1;
	if (k + 2 >= n)
		return 0;
	out->name = line + k;
	out->name_len = strlen(line + k);
	return 1;
}

int sym_perfmap_parse(const char *buf, size_t len, sym_perfmap_fn fn, void *arg, sym_perfmap_stats *st)
{
	char *scratch = NULL;
	size_t cap = 0;
	int rc = 0;
	for (size_t at = 0; at < len && rc == 0;) {
		const char *nl = memchr(buf + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (buf + at)) + 1 : len - at;
		if (n + 1 > cap) {
			char *s = realloc(scratch, n + 1);
			if (!s) {
				rc = PROFF_ENOMEM;
				break;
			}
			scratch = s;
			cap = n + 1;
		}
		memcpy(scratch, buf + at, n);
		scratch[n] = '\0';
		at += n;
		sym_perfmap_entry ent;
		st->lines++;
		if (sym_perfmap_line(scratch, n, &ent)) {
			st->loose += !ent.strict;
			rc = fn(arg, &ent);
		} else {
			st->skipped++;
		}
	}
	free(scratch);
	return rc;
}

/* perf's is_anon_memory() and is_no_dso_memory(): mappings that have no
 * file of their own to read symbols from. */
static bool anon_name(const char *fn)
{
	return !strcmp(fn, "//anon") || !strncmp(fn, "/dev/zero", 9) || !strncmp(fn, "/anon_hugepage", 14);
}

static bool no_dso_name(const char *fn)
{
	return !strncmp(fn, "[stack", 6) || !strncmp(fn, "/SYSV", 5) || !strcmp(fn, "[heap]");
}

const char *sym_jit_map_name(const char *fn, uint32_t pid, uint32_t prot, uint32_t flags, char *buf, size_t len)
{
	bool anon = anon_name(fn) || (flags & MAP_HUGETLB);
	if (!(anon || no_dso_name(fn)) || !(prot & PROT_EXEC))
		return fn;
	snprintf(buf, len, "/tmp/perf-%u.map", pid);
	return buf;
}

bool sym_is_perf_map(const char *name, int *pid)
{
	int p = 0, n = 0;
	if (sscanf(name, "/tmp/perf-%d.map%n", &p, &n) != 1 || n == 0 || name[n] != '\0')
		return false;
	if (pid)
		*pid = p;
	return true;
}
