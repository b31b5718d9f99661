/* calfile-parse.h — the parser of the calibration file (`proff calibrate -o
 * FILE`, format in docs/calibrate.md), shared by the reader in libproff
 * (lib/calibrate/calfile.c) and the instrumentation runtime
 * (runtime/instrument.c, which reads $PROFF_CALIBRATION at start-up and has
 * no dependency on libproff), so that both accept exactly the same files.
 *
 * Header-only (static functions), plain libc: no allocation, no output, no
 * proff_error. A problem comes back as a code, a message (without the file
 * name) and the byte offset of the offending line (CALP_NO_OFFSET if none).
 */
#ifndef PROFF_CALFILE_PARSE_H
#define PROFF_CALFILE_PARSE_H

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CALP_MAGIC "proff-calibration"
#define CALP_VERSION 1
#define CALP_FILE_MAX (64 * 1024)   /* bytes */
#define CALP_LINE_MAX 512           /* bytes per line, newline excluded: at most 511 */
#define CALP_NO_OFFSET ((size_t)-1)
#define CALP_ENV "PROFF_CALIBRATION"   /* = CAL_FILE_ENV of proff/calibrate.h */

enum calp_code {
	CALP_OK = 0,
	CALP_FORMAT,       /* not a valid calibration file */
	CALP_VERSION_NEW,  /* a version this parser does not read */
	CALP_TOO_BIG,      /* larger than CALP_FILE_MAX */
};

typedef struct calp_values {
	double o_in_ns, o_full_ns;  /* required */
	double call_ns, idle_ns, start_ns, tsc_hz;   /* 0: absent */
	double sample_ns, sample_cg_ns, sample_hz;   /* 0: absent */
	int cpu;                    /* -1: absent */
} calp_values;

enum { CALP_K_O_IN, CALP_K_O_FULL, CALP_K_CALL, CALP_K_IDLE, CALP_K_START, CALP_K_TSC, CALP_K_CPU,
       CALP_K_SAMPLE, CALP_K_SAMPLE_CG, CALP_K_SAMPLE_HZ, CALP_NKEYS };

static const struct calp_key {
	const char *name;
	int id;
	bool required;
	double max;                /* values are 0 <= v <= max (cpu: -1 <= v) */
} calp_keys[CALP_NKEYS] = {
	{ "o_in_ns",   CALP_K_O_IN,   true,  1e9 },
	{ "o_full_ns", CALP_K_O_FULL, true,  1e9 },
	{ "call_ns",   CALP_K_CALL,   false, 1e9 },
	{ "idle_ns",   CALP_K_IDLE,   false, 1e9 },
	{ "start_ns",  CALP_K_START,  false, 1e12 },
	{ "tsc_hz",    CALP_K_TSC,    false, 1e12 },
	{ "cpu",       CALP_K_CPU,    false, 1e6 },
	{ "sample_ns", CALP_K_SAMPLE, false, 1e9 },
	{ "sample_cg_ns", CALP_K_SAMPLE_CG, false, 1e9 },
	{ "sample_hz", CALP_K_SAMPLE_HZ, false, 1e9 },
};

__attribute__((format(printf, 5, 6), unused))
static int calp_fail(char *msg, size_t msglen, size_t *off, size_t at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, msglen, fmt, ap);
	va_end(ap);
	*off = at;
	return CALP_FORMAT;
}

/* Parse buf[0..len). Returns CALP_OK with *out filled, or a code with msg
 * (NUL terminated, msglen > 0) and *off set. */
__attribute__((unused))
static int calp_parse(const char *buf, size_t len, calp_values *out, char *msg, size_t msglen, size_t *off)
{
	calp_values cf = { .cpu = -1 };
	bool seen[CALP_NKEYS] = { false }, magic = false;
	size_t key_off[CALP_NKEYS] = { 0 };   /* where each key's line starts */
	msg[0] = 0;
	*off = CALP_NO_OFFSET;
	if (len > CALP_FILE_MAX) {
		calp_fail(msg, msglen, off, CALP_FILE_MAX, "calibration file larger than %d bytes", CALP_FILE_MAX);
		return CALP_TOO_BIG;
	}
	size_t pos = 0;
	while (pos < len) {
		size_t start = pos, end = pos;
		while (end < len && buf[end] != '\n')
			end++;
		pos = end < len ? end + 1 : end;
		if (end - start >= CALP_LINE_MAX)
			return calp_fail(msg, msglen, off, start, "not a valid calibration file: line too long");
		char line[CALP_LINE_MAX];
		memcpy(line, buf + start, end - start);
		line[end - start] = 0;
		if (memchr(line, 0, end - start))
			return calp_fail(msg, msglen, off, start, "not a valid calibration file: NUL byte in a line");
		char *p = line;
		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (!*p || *p == '#')
			continue;
		char key[64], val[128], extra[8];
		int nf = sscanf(p, "%63s %127s %7s", key, val, extra);
		bool extra_value = nf == 3 && extra[0] != '#';
		if (nf < 2)
			return calp_fail(msg, msglen, off, start, "not a valid calibration file: expected 'key value'");
		if (!magic) {
			if (strcmp(key, CALP_MAGIC))
				return calp_fail(msg, msglen, off, start,
						 "not a valid calibration file: first line is not '" CALP_MAGIC " N'");
			char *e;
			long v = strtol(val, &e, 10);
			if (*e || v < 1 || extra_value)
				return calp_fail(msg, msglen, off, start, "not a valid calibration file: bad version");
			if (v != CALP_VERSION) {
				calp_fail(msg, msglen, off, start, "calibration file version %ld (this proff reads %d)",
					  v, CALP_VERSION);
				return CALP_VERSION_NEW;
			}
			magic = true;
			continue;
		}
		const struct calp_key *k = NULL;
		for (size_t i = 0; i < CALP_NKEYS; i++)
			if (!strcmp(calp_keys[i].name, key))
				k = &calp_keys[i];
		if (!k)
			continue;          /* a newer proff's key */
		if (extra_value)
			return calp_fail(msg, msglen, off, start,
					 "not a valid calibration file: more than one value on a line");
		if (seen[k->id])
			return calp_fail(msg, msglen, off, start, "not a valid calibration file: %s given twice",
					 k->name);
		char *e;
		errno = 0;
		double v = strtod(val, &e);
		if (*e || errno || !isfinite(v) || v < (k->id == CALP_K_CPU ? -1 : 0) || v > k->max)
			return calp_fail(msg, msglen, off, start,
					 "not a valid calibration file: %s '%s' is not a number in 0..%g",
					 k->name, val, k->max);
		seen[k->id] = true;
		key_off[k->id] = start;
		switch (k->id) {
		case CALP_K_O_IN: cf.o_in_ns = v; break;
		case CALP_K_O_FULL: cf.o_full_ns = v; break;
		case CALP_K_CALL: cf.call_ns = v; break;
		case CALP_K_IDLE: cf.idle_ns = v; break;
		case CALP_K_START: cf.start_ns = v; break;
		case CALP_K_TSC: cf.tsc_hz = v; break;
		case CALP_K_CPU: cf.cpu = (int)v; break;
		case CALP_K_SAMPLE: cf.sample_ns = v; break;
		case CALP_K_SAMPLE_CG: cf.sample_cg_ns = v; break;
		case CALP_K_SAMPLE_HZ: cf.sample_hz = v; break;
		}
	}
	if (!magic)
		return calp_fail(msg, msglen, off, 0, "not a valid calibration file: no '" CALP_MAGIC " N' line");
	for (size_t i = 0; i < CALP_NKEYS; i++)
		if (calp_keys[i].required && !seen[calp_keys[i].id])
			return calp_fail(msg, msglen, off, len, "not a valid calibration file: no %s",
					 calp_keys[i].name);
	if (cf.o_in_ns > cf.o_full_ns)
		return calp_fail(msg, msglen, off, key_off[CALP_K_O_IN],
				 "not a valid calibration file: o_in_ns %.3f exceeds o_full_ns %.3f",
				 cf.o_in_ns, cf.o_full_ns);
	*out = cf;
	return CALP_OK;
}

#endif
