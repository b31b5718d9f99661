/* stats-oracle.c — a line-driven front of lib/stats for tests/oracle/stats.sh,
 * which compares its answers with scipy's and statsmodels'. One request per
 * input line, one answer line per request (numbers as %.17g, NaN as nan):
 *
 *   welch A B           status p ci_low ci_high t df delta
 *   mwu A B             status p ci_low ci_high U exact delta
 *   prop XA NA XB NB    status p ci_low ci_high z
 *   pois VA XA VB XB    status p ci_low ci_high z
 *   bh P                q...
 *   betainc a b x       I_x(a, b)
 *   tcdf t df | tsf2 t df | tq p df | normq p | nct t df ncp
 *   power d n alpha     power of the two-sample t-test
 *   runs delta sda sdb alpha power max
 *   minp test na nb     smallest p of the test (welch/mwu)
 *
 * A and B (and P) are comma-separated lists; mwu's CI is the exact
 * bootstrap's, at 95 %.
 * Build: cc -Iinclude tests/tools/stats-oracle.c BUILD/libproff.a -lm
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proff/stats.h"

static size_t parse_list(char *s, double *out, size_t max)
{
	size_t n = 0;
	for (char *tok = strtok(s, ","); tok && n < max; tok = strtok(NULL, ","))
		out[n++] = strtod(tok, NULL);
	return n;
}

static void put(double v)
{
	printf(" %.17g", v);
}

int main(void)
{
	static double a[100000], b[100000], q[100000];
	char *line = NULL;
	size_t cap = 0;
	stats_config cfg;
	stats_config_init(&cfg);
	cfg.test = STATS_MWU;
	stats_ctx *ctx = stats_ctx_new(&cfg);
	if (!ctx)
		return 1;
	while (getline(&line, &cap, stdin) > 0) {
		char cmd[32], s1[1 << 16], s2[1 << 16];
		double x, y, z, w, v;
		long m;
		stats_result r;
		if (sscanf(line, "%31s", cmd) != 1)
			continue;
		if (!strcmp(cmd, "welch") || !strcmp(cmd, "mwu")) {
			char *l1 = malloc(strlen(line)), *l2 = malloc(strlen(line));
			if (!l1 || !l2 || sscanf(line, "%*s %s %s", l1, l2) != 2)
				return 1;
			size_t na = parse_list(l1, a, 100000), nb = parse_list(l2, b, 100000);
			free(l1);
			free(l2);
			if (cmd[0] == 'w') {
				stats_welch(a, na, b, nb, 0.95, &r);
				printf("%d", r.status);
				put(r.p), put(r.ci_low), put(r.ci_high), put(r.stat), put(r.df), put(r.delta);
			} else {
				if (stats_mwu(ctx, a, na, b, nb, &r))
					return 1;
				printf("%d", r.status);
				put(r.p), put(r.ci_low), put(r.ci_high), put(r.stat), put(r.exact), put(r.delta);
			}
		} else if (!strcmp(cmd, "prop") && sscanf(line, "%*s %lf %lf %lf %lf", &x, &y, &z, &w) == 4) {
			stats_two_proportions(x, y, z, w, 0.95, &r);
			printf("%d", r.status);
			put(r.p), put(r.ci_low), put(r.ci_high), put(r.stat);
		} else if (!strcmp(cmd, "pois") && sscanf(line, "%*s %lf %lf %lf %lf", &x, &y, &z, &w) == 4) {
			stats_poisson_sums(x, y, z, w, 0.95, &r);
			printf("%d", r.status);
			put(r.p), put(r.ci_low), put(r.ci_high), put(r.stat);
		} else if (!strcmp(cmd, "bh") && sscanf(line, "%*s %s", s1) == 1) {
			size_t n = parse_list(s1, a, 100000);
			if (stats_bh(a, n, q) < 0)
				return 1;
			for (size_t i = 0; i < n; i++)
				printf("%s%.17g", i ? " " : "", q[i]);
		} else if (!strcmp(cmd, "betainc") && sscanf(line, "%*s %lf %lf %lf", &x, &y, &z) == 3) {
			printf("%.17g", stats_betainc(x, y, z));
		} else if (!strcmp(cmd, "tcdf") && sscanf(line, "%*s %lf %lf", &x, &y) == 2) {
			printf("%.17g", stats_t_cdf(x, y));
		} else if (!strcmp(cmd, "tsf2") && sscanf(line, "%*s %lf %lf", &x, &y) == 2) {
			printf("%.17g", stats_t_sf2(x, y));
		} else if (!strcmp(cmd, "tq") && sscanf(line, "%*s %lf %lf", &x, &y) == 2) {
			printf("%.17g", stats_t_quantile(x, y));
		} else if (!strcmp(cmd, "normq") && sscanf(line, "%*s %lf", &x) == 1) {
			printf("%.17g", stats_norm_quantile(x));
		} else if (!strcmp(cmd, "nct") && sscanf(line, "%*s %lf %lf %lf", &x, &y, &z) == 3) {
			printf("%.17g", stats_nct_cdf(x, y, z));
		} else if (!strcmp(cmd, "power") && sscanf(line, "%*s %lf %lf %lf", &x, &y, &z) == 3) {
			printf("%.17g", stats_t_power(x, y, z));
		} else if (!strcmp(cmd, "runs") && sscanf(line, "%*s %lf %lf %lf %lf %lf %ld", &x, &y, &z, &w, &v, &m) == 6) {
			printf("%ld", stats_runs_for_power(x, y, z, w, v, m));
		} else if (!strcmp(cmd, "minp") && sscanf(line, "%*s %s %lf %lf", s2, &x, &y) == 3) {
			stats_config c2 = cfg;
			c2.test = !strcmp(s2, "mwu") ? STATS_MWU : STATS_WELCH;
			printf("%.17g", stats_min_p(&c2, (size_t)x, (size_t)y));
		} else {
			printf("error: %s", line);
			return 1;
		}
		putchar('\n');
		fflush(stdout);
	}
	free(line);
	stats_ctx_free(ctx);
	return 0;
}
