/* perl.c — the few Perl behaviours dprofpp's output depends on: number
 * stringification ("%.15g", zero printed as "0"), numification of strings
 * (leading decimal number, "-0.000" is 0), Perl regexes approximated by
 * POSIX extended regexes, and the format (write) engine's ^-field chopping.
 */
#include "proff/dprof.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void dprof_perl_num(char *buf, size_t len, double v)
{
	if (v == 0 || v != v) {
		snprintf(buf, len, "%s", v == 0 ? "0" : "NaN");
		return;
	}
	if (isinf(v)) {
		snprintf(buf, len, "%s", v > 0 ? "Inf" : "-Inf");
		return;
	}
	snprintf(buf, len, "%.15g", v);
}

double dprof_perl_numify(const char *s)
{
	if (!s)
		return 0;
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\f' || *s == '\v')
		s++;
	const char *p = s;
	if (*p == '+' || *p == '-')
		p++;
	/* only decimal numbers: "0x10" numifies to 0 in Perl */
	if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1]))) {
		if (!strncasecmp(p, "inf", 3) || !strncasecmp(p, "nan", 3))
			return strtod(s, NULL);
		return 0;
	}
	char buf[400];
	size_t n = 0;
	const char *q = s;
	if (*q == '+' || *q == '-')
		buf[n++] = *q++;
	while (isdigit((unsigned char)*q) && n < sizeof(buf) - 40)
		buf[n++] = *q++;
	if (*q == '.') {
		buf[n++] = *q++;
		while (isdigit((unsigned char)*q) && n < sizeof(buf) - 30)
			buf[n++] = *q++;
	}
	if ((*q == 'e' || *q == 'E') &&
	    (isdigit((unsigned char)q[1]) || ((q[1] == '+' || q[1] == '-') && isdigit((unsigned char)q[2])))) {
		buf[n++] = *q++;
		if (*q == '+' || *q == '-')
			buf[n++] = *q++;
		while (isdigit((unsigned char)*q) && n < sizeof(buf) - 2)
			buf[n++] = *q++;
	}
	buf[n] = '\0';
	double v = strtod(buf, NULL);
	return v == 0 ? 0.0 : v;
}

/* Translate the common Perl regex escapes to POSIX ERE. */
int dprof_regcomp(regex_t *preg, const char *re, char *errbuf, size_t errlen)
{
	size_t n = strlen(re);
	if (n > 4096) {
		snprintf(errbuf, errlen, "regular expression too long");
		return -1;
	}
	char *out = malloc(n * 8 + 1);
	if (!out) {
		snprintf(errbuf, errlen, "out of memory");
		return -1;
	}
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		char c = re[i];
		if (c == '\\' && i + 1 < n) {
			char d = re[++i];
			const char *rep = NULL;
			switch (d) {
			case 'd': rep = "[0-9]"; break;
			case 'D': rep = "[^0-9]"; break;
			case 'w': rep = "[[:alnum:]_]"; break;
			case 'W': rep = "[^[:alnum:]_]"; break;
			case 's': rep = "[[:space:]]"; break;
			case 'S': rep = "[^[:space:]]"; break;
			case 'A': rep = "^"; break;
			case 'z': case 'Z': rep = "$"; break;
			case 't': rep = "\t"; break;
			case 'n': rep = "\n"; break;
			default: break;
			}
			if (rep) {
				memcpy(out + o, rep, strlen(rep));
				o += strlen(rep);
			} else {
				out[o++] = '\\';
				out[o++] = d;
			}
		} else if (c == '(' && i + 2 < n && re[i + 1] == '?' && re[i + 2] == ':') {
			out[o++] = '(';
			i += 2;
		} else {
			out[o++] = c;
		}
	}
	out[o] = '\0';
	int rc = regcomp(preg, out, REG_EXTENDED | REG_NOSUB);
	free(out);
	if (rc) {
		regerror(rc, preg, errbuf, errlen);
		return -1;
	}
	return 0;
}
